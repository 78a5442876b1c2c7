"""CpuExecutable's call paths: the small-call fast path agrees with the general one."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy


def _executable(fn, *args):
    jitted = xlapy.jit(fn, backend="cpu")
    jitted(*args)
    return jitted, next(iter(jitted._cache.values())).executable


@pytest.mark.parametrize("make", [
    lambda x: x,                                   # plain
    lambda x: np.ascontiguousarray(x)[::-1][::-1],   # a view
    lambda x: x[::2],                              # strided: copied in
    lambda x: _read_only(x),                       # read-only: copied in
], ids=["plain", "view", "strided", "read-only"])
def test_small_calls_take_the_fast_path_and_agree_with_the_general_one(make):
    x = np.arange(16, dtype=np.float32)
    jitted, executable = _executable(lambda a, b: a * 2 + b, make(x), make(x))
    assert executable._small
    arg = make(x)
    fast = executable.run([arg, arg])
    general = executable._run([arg, arg], executable._table, executable._table_address,
                              executable._arenas)
    np.testing.assert_array_equal(fast[0], general[0])
    np.testing.assert_array_equal(np.asarray(jitted(arg, arg)), arg * 3)


def test_empty_results_on_the_fast_path():
    jitted, executable = _executable(lambda a: a * 2, np.ones((0, 3), np.float32))
    out = jitted(np.ones((0, 3), np.float32))
    assert np.asarray(out).shape == (0, 3)


def test_large_outputs_keep_the_general_path():
    _, executable = _executable(lambda a: a * 2, np.ones(1 << 20, np.float32))
    assert not executable._small


def _read_only(x):
    y = x.copy()
    y.flags.writeable = False
    return y
