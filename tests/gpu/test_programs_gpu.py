"""On a CUDA device: the GPU backend against the interpreter, on the random-program
generator (at least 300 programs) and every corpus module, the results read
back from the device. Skips where there is no GPU (tests/backends/gpu runs the
same programs in the host emulation there)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.hlo.corpus_cases import CASES
from tests.hlo.test_corpus import FILES, IDS
from xlapy.backends import get_backend
from xlapy.backends.gpu import driver
from xlapy.errors import CompileError
from xlapy.fuzz.compare import mismatch
from xlapy.fuzz.hlo_programs import arguments, random_program
from xlapy.hlo import parse

pytestmark = pytest.mark.skipif(not driver.available(),
                                reason="needs an NVIDIA GPU and its driver")


def _against_interpreter(module, args):
    try:
        executable = get_backend("gpu").compile(module)
    except CompileError as e:
        assert "the GPU backend cannot compile" in str(e), str(e)
        pytest.skip(f"refused: {str(e)[:160]}")
    expected = get_backend("interpreter").compile(module).execute(*args)
    got = [np.asarray(v) if not isinstance(v, tuple) else tuple(np.asarray(x) for x in v)
           for v in executable.execute(*args)]
    problem = mismatch(expected, got)
    assert problem is None, problem


@pytest.mark.parametrize("seed", range(320))
def test_random_program_on_the_device(seed):
    module = parse(random_program(seed))
    _against_interpreter(module, arguments(module, seed))


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_corpus_module_on_the_device(path):
    module = parse(path.read_text())
    for case in CASES[path.name]:
        if case.check is None:
            _against_interpreter(module, list(case.inputs))
