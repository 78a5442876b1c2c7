"""Running a frontend function eagerly and under jit, for tests that check
both modes agree."""

from __future__ import annotations

import contextlib

import numpy as np

import xlapy
from xlapy import config
from xlapy.core.trace import Array, as_array

_WIDE = {np.dtype(t) for t in (np.int64, np.uint64, np.float64, np.complex128)}


def _is_wide(value) -> bool:
    if isinstance(value, (np.ndarray, np.generic, Array)):
        return np.dtype(value.dtype) in _WIDE
    if isinstance(value, (list, tuple)):
        return any(_is_wide(v) for v in value)
    if isinstance(value, (np.dtype, str)) or (isinstance(value, type)
                                              and issubclass(value, np.generic)):
        return np.dtype(value) in _WIDE
    return False


def x64_for(*values):
    """x64 mode for a check whose data or dtype is 64-bit (float64 data is
    float64 only with x64, as in JAX); the current mode otherwise."""
    if any(_is_wide(v) for v in values):
        return config.enable_x64(True)
    return contextlib.nullcontext()


def _as_list(out) -> list[np.ndarray]:
    return [np.asarray(o) for o in (out if isinstance(out, (tuple, list)) else [out])]


def both(fn, *args) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """fn's results eagerly and under jit, as lists of NumPy arrays (with x64
    when an argument is 64-bit data)."""
    with x64_for(*args):
        return _as_list(fn(*args)), _as_list(xlapy.jit(fn)(*args))


def both_arrays(fn, *args) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Like `both`, but the eager call gets xlapy arrays (not NumPy's)."""
    with x64_for(*args):
        return _as_list(fn(*[as_array(a) for a in args])), _as_list(xlapy.jit(fn)(*args))


def check(fn, args, expected, rtol: float = 0.0) -> None:
    """fn(*args) equals `expected` (values, shape and dtype) eagerly (on xlapy
    arrays) and under jit; exactly unless `rtol` is given."""
    expected = expected if isinstance(expected, (tuple, list)) else [expected]
    eager, jitted = both_arrays(fn, *args)
    assert len(eager) == len(expected) == len(jitted)
    for e, j, want in zip(eager, jitted, expected):
        want = np.asarray(want)
        for got in (e, j):
            assert got.dtype == want.dtype, (got.dtype, want.dtype)
            assert got.shape == want.shape, (got.shape, want.shape)
            if rtol:
                np.testing.assert_allclose(got, want, rtol=rtol)
            else:
                np.testing.assert_array_equal(got, want)
