"""Shared checks for the xnp creation, math and reduction tests: run a
function eagerly and under jit, compare the two, and compare both with a
NumPy reference within a per-dtype tolerance."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import xlapy
from tests.frontend_util import x64_for
from xlapy.core.trace import as_array

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16), BF16]
INTS = [np.dtype(np.int32), np.dtype(np.uint8), np.dtype(np.int8)]

# rtol per dtype for comparisons with NumPy (transcendentals included).
_RTOL = {"float16": 4e-3, "bfloat16": 2e-2, "float32": 2e-5, "float64": 1e-12,
         "complex64": 2e-5, "complex128": 1e-12}


def tolerance(dtype) -> float:
    return _RTOL.get(np.dtype(dtype).name, 0.0)


def sample(shape, dtype, low=-5.0, high=5.0, seed=0) -> np.ndarray:
    """Random data of `dtype` in [low, high) (ints rounded, bools random)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(int(np.floor(low)), info.min), min(int(np.ceil(high)), info.max)
        return rng.integers(lo, hi + 1, shape).astype(dtype)
    if dtype.kind == "c":
        parts = rng.uniform(low, high, (2, *np.atleast_1d(np.empty(shape)).shape))
        return (parts[0] + 1j * parts[1]).reshape(shape).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)


def _as_list(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def both(fn, *args) -> tuple[list, list]:
    """fn's results eagerly and under jit (args passed dynamically; with x64
    when an argument is 64-bit data)."""
    with x64_for(*args):
        eager = _as_list(fn(*[as_array(a) for a in args]))
        jitted = _as_list(xlapy.jit(fn)(*args))
    return eager, jitted


def assert_close(got, want, dtype, scale: float = 1.0) -> None:
    """`got` equals `want` within `dtype`'s tolerance (exact for ints/bools;
    NaNs equal NaNs)."""
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    rtol = tolerance(dtype) * scale
    if rtol == 0:
        np.testing.assert_array_equal(got, want)
        return
    wide = np.complex128 if got.dtype.kind == "c" or want.dtype.kind == "c" else np.float64
    np.testing.assert_allclose(got.astype(wide), want.astype(wide), rtol=rtol,
                               atol=rtol, equal_nan=True)


def check(fn, np_fn, *args, dtype=None, scale: float = 1.0, jit: bool = True):
    """fn(*args) eagerly and under jit: the same dtype, values agreeing with
    each other and with np_fn on the arguments (NumPy's result cast to ours).
    `dtype` is the expected result dtype, when given. 64-bit data or an
    expected 64-bit dtype runs with x64, where float64 is float64."""
    with x64_for(*args, *([] if dtype is None else [dtype])):
        if jit:
            eager, jitted = both(fn, *args)
        else:
            eager = _as_list(fn(*[as_array(a) for a in args]))
            jitted = eager
    np_args = [np.asarray(a).astype(np.float32) if np.asarray(a).dtype == BF16 else a
               for a in args]
    with np.errstate(all="ignore"):
        expected = _as_list(np_fn(*np_args))
    assert len(eager) == len(expected)
    for e, j, want in zip(eager, jitted, expected):
        e_dtype = np.dtype(e.dtype)
        assert e_dtype == np.dtype(j.dtype), (e.dtype, j.dtype)
        if dtype is not None:
            assert e_dtype == np.dtype(dtype), (e_dtype, dtype)
        assert_close(j, np.asarray(e), e_dtype, 0.25)  # eager and jit: nearly bit-equal
        reference = np.asarray(want)
        if reference.dtype != e_dtype and not (reference.dtype.kind == "c"
                                               and e_dtype.kind != "c"):
            with np.errstate(all="ignore"):
                reference = reference.astype(e_dtype)
        assert_close(e, reference, e_dtype, scale)
    return eager[0] if len(eager) == 1 else eager
