"""Numerics bisection (`xlapy run-hlo --bisect --minimize`) against a lowering
broken on purpose (`--xlapy_test_miscompile`): on the seeds' MNIST step and
the encoder layer it names the first instruction of the broken opcode, the
fused kernel holding it and its operands; the minimized module it writes
still fails with the broken lowering and passes without it."""

from __future__ import annotations

import re

import numpy as np
import pytest

import xlapy
from xlapy import models
from xlapy.cli import main
from xlapy.flags import flags_set
from xlapy.hlo import parse
from xlapy.models import lib


def _mnist_step_text() -> str:
    rng = np.random.default_rng(0)
    x, labels = models.data.clusters(rng, 16)
    params = models.softmax_regression.init(rng)
    step = xlapy.jit(models.softmax_regression.train_step)
    return step.lower(params, (x / 4, lib.one_hot(labels, 10))).as_text()


def _encoder_text() -> str:
    rng = np.random.default_rng(1)
    enc = models.encoder.init(rng, d_model=16, heads=2, ff=32)
    x = rng.standard_normal((2, 4, 16)).astype(np.float32)
    return xlapy.jit(models.encoder.apply).lower(enc, x).as_text()


def _run(*argv) -> int:
    return main(["run-hlo", *argv, "--backend", "cpu", "--compare", "interpreter",
                 "--abs-error-bound", "1e-4", "--rel-error-bound", "1e-3"])


@pytest.mark.parametrize("program, broken", [(_mnist_step_text, "exponential"),
                                             (_encoder_text, "exponential"),
                                             (_encoder_text, "divide")])
def test_bisect_finds_the_broken_lowering_and_minimize_keeps_it(tmp_path, capsys, program,
                                                                broken):
    path = tmp_path / "step.hlo"
    path.write_text(program())
    with flags_set(f"--xlapy_test_miscompile={broken}"):
        assert _run(str(path), "--bisect", "--minimize", "--out", str(tmp_path)) == 1
    out = capsys.readouterr().out
    first = re.search(r"first mismatch in schedule order: instruction (\d+) of (\d+)\n\s+(.*)",
                      out)
    assert first, out
    culprit = first.group(3)
    assert f" {broken}(" in culprit, out                   # the broken opcode, found
    module = parse(path.read_text()).entry_computation
    earlier = [i for i in module.instructions[:int(first.group(1)) - 1]
               if i.opcode.value == broken]
    assert not earlier                                      # and the first one of it
    assert "compiled into: " in out and "operand " in out
    reduced = tmp_path / "step.minimized.hlo"
    inputs = tmp_path / "step.minimized.inputs.npz"
    size = len(parse(reduced.read_text()).entry_computation.instructions)
    assert size < len(module.instructions) // 4, reduced.read_text()
    with flags_set(f"--xlapy_test_miscompile={broken}"):
        assert _run(str(reduced), "--inputs", str(inputs)) == 1    # still fails
    assert _run(str(reduced), "--inputs", str(inputs)) == 0        # the lowering's fault


def test_no_bisection_when_the_backends_agree(tmp_path, capsys):
    path = tmp_path / "step.hlo"
    path.write_text(_mnist_step_text())
    assert _run(str(path), "--bisect") == 0
    assert "first mismatch" not in capsys.readouterr().out
