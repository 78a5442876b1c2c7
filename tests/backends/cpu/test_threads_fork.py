"""Compiled functions under Python threads and after fork.

Eight threads call jitted functions at once, compiling them on first use: each
its own function and one shared by all (so one executable is re-entered while
another thread is inside it), small ones on the per-call fast path and big
ones whose kernels split over the worker pool (elementwise loops, GEMM, a big
reduction). Every result is checked against NumPy. A process that has used
the pool forks; the child compiles and runs new and old functions and exits
cleanly, and so does its own child; the scenario runs in a subprocess, so a
deadlock fails the test instead of hanging it.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import xlapy
import xlapy.numpy as xnp
from xlapy.backends.cpu import executable as cpu_executable
from xlapy.errors import ExecutionError
from xlapy.hlo import parse

ROOT = Path(__file__).resolve().parents[3]
THREADS = 8
ROUNDS = 30
REENTRANT_ROUNDS = 15


def small(x):
    return x * 2.0 + 1.0


def softmax_rows(x):
    e = xnp.exp(x - xnp.max(x, axis=1, keepdims=True))
    return e / xnp.sum(e, axis=1, keepdims=True)


def big_elementwise(x):
    return xnp.tanh(x) * 0.5 + xnp.exp(-x * x)


def gemm_and_reduce(a, b):
    c = a @ b
    return c, xnp.sum(xnp.abs(c))


def two_layers(a, b):
    h = xnp.tanh(a @ b)           # a temporary
    return h @ b.T, xnp.sum(xnp.abs(h))


def _numpy(name, args):
    if name == "small":
        return [args[0] * 2 + 1]
    if name == "softmax_rows":
        e = np.exp(args[0] - args[0].max(axis=1, keepdims=True))
        return [e / e.sum(axis=1, keepdims=True)]
    if name == "big_elementwise":
        x = args[0]
        return [np.tanh(x) * 0.5 + np.exp(-x * x)]
    c = args[0] @ args[1]
    return [c, np.abs(c).sum()]


FUNCTIONS = {"small": small, "softmax_rows": softmax_rows, "big_elementwise": big_elementwise,
             "gemm_and_reduce": gemm_and_reduce}


def _arguments(name, rng):
    if name == "small":
        return [rng.standard_normal(16).astype(np.float32)]
    if name == "softmax_rows":
        return [rng.standard_normal((64, 33)).astype(np.float32)]
    if name == "big_elementwise":
        return [rng.standard_normal(1 << 17).astype(np.float32)]
    return [rng.standard_normal((192, 160)).astype(np.float32),
            rng.standard_normal((160, 224)).astype(np.float32)]


def _check(name, jitted, args):
    got = jitted(*args)
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, _numpy(name, args)):
        np.testing.assert_allclose(np.asarray(g), e, rtol=2e-5, atol=2e-5 * max(1, abs(e).max()))


def test_eight_threads_call_different_and_the_same_functions_at_once():
    own = {name: xlapy.jit(fn, backend="cpu") for name, fn in FUNCTIONS.items()}
    shared = xlapy.jit(big_elementwise, backend="cpu")
    start = threading.Barrier(THREADS)
    failures = []

    def work(number):
        rng = np.random.default_rng(number)
        name = list(FUNCTIONS)[number % len(FUNCTIONS)]
        try:
            start.wait()
            for k in range(ROUNDS):
                _check(name, own[name], _arguments(name, rng))
                if k % 3 == 0:
                    _check("big_elementwise", shared, _arguments("big_elementwise", rng))
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            failures.append(f"thread {number} ({name}): {type(e).__name__}: {e}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(240)
    assert not any(t.is_alive() for t in threads), "a thread is stuck"
    assert failures == []
    # functions shared by threads compiled once per signature, or once per racing thread
    assert 1 <= shared.compile_count <= THREADS


def test_one_executable_re_entered_by_threads():
    """While one call holds the executable (its lock, here held by the test), calls
    from other threads run at the same time on a table and temporaries of their
    own, with results still right."""
    f = xlapy.jit(two_layers, backend="cpu")
    args = _arguments("gemm_and_reduce", np.random.default_rng(0))
    executable = f.lower(*args).compile().executable
    executable.execute(*args)
    assert executable._temps, "the test wants a module with temporaries"
    entered = []
    original = executable._reentrant

    def counting(call_args):
        entered.append(1)
        return original(call_args)

    executable._reentrant = counting
    barrier = threading.Barrier(THREADS)
    failures = []

    def work(number):
        local = np.random.default_rng(number)
        try:
            barrier.wait()
            for _ in range(REENTRANT_ROUNDS):
                a, b = _arguments("gemm_and_reduce", local)
                out, total = executable.execute(a, b)
                h = np.tanh(a @ b)
                np.testing.assert_allclose(out, h @ b.T, rtol=1e-4, atol=1e-3)
                np.testing.assert_allclose(total, np.abs(h).sum(), rtol=1e-4)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            failures.append(f"thread {number}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
    with executable._lock:
        for t in threads:
            t.start()
        for t in threads:
            t.join(240)
    assert failures == []
    assert len(entered) == THREADS * REENTRANT_ROUNDS


NESTED = """
HloModule nested
ENTRY main {
  x = c64[16] parameter(0)
  e = c64[16] exponential(x)
  f = c64[16] fft(e), fft_type=FFT, fft_length={16}
  g = c64[16] fft(x), fft_type=IFFT, fft_length={16}
  ROOT r = (c64[16], c64[16], c64[16]) tuple(f, g, e)
}
"""
"""fft runs through the interpreter fallback: Python, called back during the call."""


def test_an_executable_re_entered_from_inside_its_own_call(monkeypatch):
    """A call's first fallback fails; its second runs the same executable again (the
    lock is the outer call's: the inner one gets its own table and temporaries). The
    inner call must finish right and not take the outer call's error; the outer call
    then raises its own."""
    module = parse(NESTED)
    executable = xlapy.compile(module, backend="cpu")
    assert [i.opcode.value for i in executable.fallbacks] == ["fft", "fft"]
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal(16).astype(np.complex64) * 0.1 for _ in range(2))
    original, calls, inner = cpu_executable.run_fallback, [], []

    def nested(exe, instruction, table_address):
        calls.append(table_address)
        if len(calls) == 1:
            raise RuntimeError("outer failure")
        if len(calls) == 2:
            inner.append(exe.execute(y))      # re-entered from the same thread
        original(exe, instruction, table_address)

    monkeypatch.setattr(cpu_executable, "run_fallback", nested)
    with pytest.raises(ExecutionError, match="outer failure"):
        executable.execute(x)
    monkeypatch.undo()
    assert len(calls) == 4 and calls[0] == calls[1] and calls[0] not in calls[2:]
    expected = xlapy.execute(module, [y], backend="interpreter")
    for e, g in zip(expected, inner[0]):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    assert executable._errors == {}
    for e, g in zip(xlapy.execute(module, [x], backend="interpreter"), executable.execute(x)):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


# -- fork ---------------------------------------------------------------------------------------
FORK_SCENARIO = """
import os, sys, threading
import numpy as np
import pytest
import xlapy
from tests.backends.cpu.test_threads_fork import FUNCTIONS, _arguments, _check

rng = np.random.default_rng(0)
old = {name: xlapy.jit(FUNCTIONS[name], backend="cpu")
       for name in ("big_elementwise", "gemm_and_reduce")}
for name, f in old.items():       # the pool's workers are running now
    for _ in range(3):
        _check(name, f, _arguments(name, rng))
busy = threading.Thread(target=lambda: [_check("big_elementwise", old["big_elementwise"],
                                               _arguments("big_elementwise", rng))
                                        for _ in range(20)])
busy.start()                      # and another thread is inside a call when we fork
pid = os.fork()
if pid == 0:
    try:
        child_rng = np.random.default_rng(1)
        new = {name: xlapy.jit(FUNCTIONS[name], backend="cpu")
               for name in ("softmax_rows", "small")}
        for _ in range(5):
            for name, f in (*old.items(), *new.items()):
                _check(name, f, _arguments(name, child_rng))
        grandchild = os.fork()    # and its own child, from a pool the child set up
        if grandchild == 0:
            for name, f in (*old.items(), *new.items()):
                _check(name, f, _arguments(name, child_rng))
            os._exit(0)
        _, status = os.waitpid(grandchild, 0)
        code = os.waitstatus_to_exitcode(status)
    except BaseException as e:
        print("child:", type(e).__name__, e, flush=True)
        code = 1
    os._exit(code)
busy.join()
for name, f in old.items():
    _check(name, f, _arguments(name, rng))
_, status = os.waitpid(pid, 0)
print("child status", os.waitstatus_to_exitcode(status), flush=True)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def test_a_forked_child_compiles_and_runs_and_exits():
    result = subprocess.run([sys.executable, "-c", FORK_SCENARIO], cwd=ROOT,
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    assert "child status 0" in result.stdout
