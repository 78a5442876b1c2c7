"""A module too big for the machine raises MemoryError naming the buffer and its
size, before anything is allocated: never an OOM kill (Linux overcommits, so a
too-big np.empty succeeds and the process dies when the kernel touches it) and
never a crash. The address-space cases run in a child process under a modest
RLIMIT_AS; a kernel whose malloc'd scratch fails reports MemoryError too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xlapy
from xlapy.backends.cpu import host_memory
from xlapy.hlo import parse

ROOT = Path(__file__).resolve().parents[3]
HUGE = 1 << 19
"""f32[HUGE, HUGE] is 1 TiB: more than any machine the tests run on."""


def _temps_module(n: int) -> str:
    """A temporary f32[n, n] (a fusion feeding a dot), output f32[n]."""
    return f"""
HloModule big_temps
ENTRY main {{
  v = f32[{n}] parameter(0)
  b = f32[{n},{n}] broadcast(v), dimensions={{1}}
  e = f32[{n},{n}] exponential(b)
  ROOT d = f32[{n}] dot(e, v), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}}
"""


def _outputs_module(n: int) -> str:
    return f"""
HloModule big_outputs
ENTRY main {{
  v = f32[{n}] parameter(0)
  ROOT b = f32[{n},{n}] broadcast(v), dimensions={{1}}
}}
"""


def test_available_memory_is_known_and_small_requests_are_not_checked():
    available = host_memory.available_bytes()
    assert available is not None and available > 0
    host_memory.require(host_memory.CHECK_FROM - 1, "anything")   # never checked
    with pytest.raises(MemoryError, match=r"the test buffer: 1\.00TiB \(1099511627776 bytes\) "
                       r"needed, but only .* available"):
        host_memory.require(1 << 40, "the test buffer")


def test_temporaries_beyond_memory_raise_at_the_first_execution():
    executable = xlapy.compile(parse(_temps_module(HUGE)), backend="cpu")  # compiling is fine
    temp = executable.assignment.temp_allocation
    v = np.ones(HUGE, np.float32)
    for _ in range(2):   # and again: nothing half-made is kept
        with pytest.raises(MemoryError) as error:
            executable.execute(v)
        message = str(error.value)
        assert f"allocation {temp.index}: 1.00TiB" in message and "temporaries" in message
        assert "1099511627776 bytes" in message and "available" in message


def test_outputs_beyond_memory_raise():
    executable = xlapy.compile(parse(_outputs_module(HUGE)), backend="cpu")
    with pytest.raises(MemoryError, match=r"big_outputs: output allocation 1: 1\.00TiB "
                       r"\(1099511627776 bytes\) needed, but only .* available"):
        executable.execute(np.ones(HUGE, np.float32))


# -- in a child process under RLIMIT_AS ---------------------------------------------------------
def _limit_address_space(extra: int) -> None:
    import resource

    used = host_memory._fields("/proc/self/status")["VmSize"]
    resource.setrlimit(resource.RLIMIT_AS, (used + extra, resource.RLIM_INFINITY))


def _unlimit() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def child_temps(checked: bool) -> None:
    """1 GiB of temporaries with 256 MiB of address space to spare: MemoryError from
    the check (or, with the check off, from the allocation itself), then the same
    executable runs a smaller call once the limit is lifted."""
    n = 1 << 14
    executable = xlapy.compile(parse(_temps_module(n)), backend="cpu")
    if not checked:
        host_memory.CHECK_FROM = 1 << 62
    _limit_address_space(256 << 20)
    try:
        executable.execute(np.ones(n, np.float32))
    except MemoryError as e:
        print("MemoryError:", e)
    else:
        print("no error")
    _unlimit()


def child_scratch() -> None:
    """A dot whose epilogue converts to f16 computes the product in malloc'd scratch
    (64 MiB here); with room for the 32 MiB output only, that malloc fails."""
    f = xlapy.jit(lambda x, w: (x @ w).astype(np.float16), backend="cpu")
    x, w = np.ones((4096, 16), np.float32), np.ones((16, 4096), np.float32)
    executable = f.lower(x, w).compile().executable
    _limit_address_space((32 + 16) << 20)
    try:
        executable.execute(x, w)
        print("no error")
    except MemoryError as e:
        print("MemoryError:", e)
    _unlimit()
    out = executable.execute(x, w)[0]
    print("after:", float(out[0, 0]), float(out[-1, -1]))


def _run_child(call: str) -> str:
    code = f"from tests.backends.cpu.test_memory_limits import *; {call}"
    environment = {"XLAPY_FLAGS": "--xla_cpu_parallelism=1 --xlapy_cpu_cache_dir=off",
                   "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, timeout=120, env=environment)
    assert result.returncode == 0, f"exit status {result.returncode}\n{result.stderr}"
    return result.stdout


@pytest.mark.parametrize("checked", [True, False], ids=["checked", "allocation fails"])
def test_temporaries_beyond_the_address_space_limit(checked):
    out = _run_child(f"child_temps({checked})")
    assert "MemoryError: big_temps: the temporaries (allocation 2: 1.00GiB)" in out, out
    assert ("needed, but only" if checked else "could not be allocated") in out, out


def test_a_kernel_whose_scratch_malloc_fails_raises_memory_error():
    out = _run_child("child_scratch()")
    assert "MemoryError: jit__lambda_: a kernel could not allocate its scratch memory" in out, out
    assert "after: 16.0 16.0" in out, out


def test_the_scratch_report_names_the_size_when_the_code_passes_it():
    """OUT_OF_MEMORY is -1 (size unknown); generated code may pass -1 - size instead."""
    executable = xlapy.compile(parse(_outputs_module(4)), backend="cpu")
    for number, text in ((-1, "scratch memory$"), (-1 - (3 << 20), r"scratch memory \(3\.00MiB\)")):
        executable._run_fallback(number, 1234)
        with pytest.raises(MemoryError, match=f"big_outputs: a kernel could not allocate its {text}"):
            executable._raise(1234)
    assert executable._errors == {}
