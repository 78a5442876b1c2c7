"""xnp reductions against NumPy, eagerly and under jit: axes (None, ints,
tuples, negative), keepdims, dtype=, where=, initial=, ddof; jax.numpy's
result dtypes; NaN forms; order statistics; hypothesis on shapes and axes."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import xlapy
import xlapy.numpy as xnp
from tests.numpy.math_util import BF16, check, sample

F32, F64, F16, I32, I8, U8, B = (np.dtype(t) for t in (np.float32, np.float64, np.float16,
                                                       np.int32, np.int8, np.uint8, np.bool_))
C64, U32 = np.dtype(np.complex64), np.dtype(np.uint32)
AXES = [None, 0, -1, (0, 2), (-1, -3), ()]


def _with(np_fn, **kwargs):
    return lambda a: np_fn(a, **kwargs)


# -- sums, products, extrema, truth -------------------------------------------------------
# name, dtype -> expected result dtype (jnp's rules)
SUM_DTYPES = {F32: F32, F64: F64, F16: F16, BF16: BF16, I32: I32, I8: I32, U8: U32, B: I32,
              C64: C64}


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("name", ["sum", "prod"])
def test_sum_prod(name, axis, keepdims):
    for dtype, result in SUM_DTYPES.items():
        x = sample((2, 3, 4), dtype, -2, 2)
        if name == "prod" and dtype.kind == "f":
            x = (np.abs(x.astype(np.float32)) * 0.5 + 0.6).astype(dtype)
        kwargs = dict(axis=axis, keepdims=keepdims)
        check(lambda a, k=kwargs: getattr(xnp, name)(a, **k),
              lambda a, k=kwargs: getattr(np, name)(a.astype(np.float64) if a.dtype == F16
                                                    else a, **k), x, dtype=result, scale=4)


def test_sum_options():
    x = sample((3, 4), I8, -100, 100)
    check(lambda a: xnp.sum(a, dtype=np.int8), lambda a: np.sum(a, dtype=np.int8), x, dtype=I8)
    check(lambda a: xnp.sum(a, promote_integers=False), lambda a: np.sum(a, dtype=np.int8), x,
          dtype=I8)
    check(lambda a: xnp.sum(a, axis=1, dtype=np.float32),
          lambda a: np.sum(a, axis=1, dtype=np.float32), x, dtype=F32)
    f = sample((3, 4), F32)
    check(lambda a: xnp.sum(a, axis=0, initial=10.0), lambda a: np.sum(a, axis=0, initial=10.0), f)
    check(lambda a: xnp.prod(a, axis=1, initial=2), lambda a: np.prod(a, axis=1, initial=2), f)
    check(lambda a: a.sum(axis=1, keepdims=True), lambda a: a.sum(axis=1, keepdims=True), f)
    weak = xnp.sum(xnp.asarray(2.0))
    assert weak.dtype == F32 and not weak.weak_type


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "all", "any", "mean"])
def test_where_masks(name):
    x = sample((3, 4), F32, -2, 2)
    mask = sample((3, 4), B, seed=3)
    row_mask = np.array([True, False, True, True])
    extra = {"initial": -5.0 if name == "max" else 5.0} if name in ("max", "min") else {}
    for m in (mask, row_mask):
        check(lambda a, w: getattr(xnp, name)(a, axis=1, where=w, **extra),
              lambda a, w: getattr(np, name)(a, axis=1, where=w, **extra), x, m)
        check(lambda a, w: getattr(xnp, name)(a, where=w, keepdims=True, **extra),
              lambda a, w: getattr(np, name)(a, where=w, keepdims=True, **extra), x, m)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
def test_extrema_and_truth(axis, keepdims):
    for dtype in (F32, F64, BF16, I32, U8, I8, B):
        x = sample((2, 3, 4), dtype, -9, 9)
        for name in ("max", "min", "amax", "amin", "ptp", "all", "any", "count_nonzero"):
            if name == "ptp" and dtype == B:
                continue
            count = np.int64 if dtype == F64 else I32   # float64 data runs with x64
            expected = B if name in ("all", "any") else count if name == "count_nonzero" else dtype
            check(lambda a, n=name: getattr(xnp, n)(a, axis=axis, keepdims=keepdims),
                  _with(getattr(np, name), axis=axis, keepdims=keepdims), x, dtype=expected)


def test_extrema_nan_and_errors():
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]], np.float32)
    for name in ("max", "min", "ptp"):
        check(lambda a, n=name: getattr(xnp, n)(a, axis=1), _with(getattr(np, name), axis=1), x)
    check(lambda a: xnp.max(a, axis=0, initial=4.5), _with(np.max, axis=0, initial=4.5), x)
    with pytest.raises(ValueError, match="zero-size"):
        xnp.max(np.ones((0, 3)), axis=0)
    with pytest.raises(ValueError, match="initial"):
        xnp.min(x, where=x > 2)
    np.testing.assert_array_equal(xnp.max(np.ones((0, 3)), axis=0, initial=-1), [-1, -1, -1])
    np.testing.assert_array_equal(xnp.sum(np.ones((0, 3)), axis=0), [0, 0, 0])
    with pytest.raises(ValueError, match="out of bounds"):
        xnp.sum(x, axis=2)


@pytest.mark.parametrize("axis", [None, 0, 1], ids=str)
def test_complex_extrema_are_lexicographic(axis):
    z = np.array([[1 + 2j, 3 - 1j, 3 + 0.5j], [0j, -1j, 3 + 2j]], np.complex64)
    for name in ("max", "min", "ptp"):
        check(lambda a, n=name: getattr(xnp, n)(a, axis=axis), _with(getattr(np, name), axis=axis),
              z, dtype=C64)
    mask = np.array([True, False, True])
    check(lambda a: xnp.max(a, axis=axis, where=mask, initial=-1j),
          _with(np.max, axis=axis, where=mask, initial=-1j), z)


def test_truth_of_nan_and_complex():
    x = np.array([np.nan, 0.0, -0.0], np.float32)
    check(xnp.any, np.any, x, dtype=B)
    check(xnp.all, np.all, x[:1], dtype=B)
    z = np.array([0j, 1j], np.complex64)
    check(lambda a: xnp.any(a, keepdims=True), lambda a: np.any(a, keepdims=True), z)


# -- moments ------------------------------------------------------------------------------
MEAN_DTYPES = {F32: F32, F64: F64, F16: F16, BF16: BF16, I32: F32, U8: F32, B: F32, C64: C64}


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
def test_mean(axis, keepdims):
    for dtype, result in MEAN_DTYPES.items():
        x = sample((2, 3, 4), dtype, -5, 5)
        check(lambda a: xnp.mean(a, axis=axis, keepdims=keepdims),
              _with(np.mean, axis=axis, keepdims=keepdims, dtype=np.float64 if dtype.kind in "fiub"
                    or dtype == BF16 else None), x, dtype=result)


def _wide(a):
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


VAR_DTYPES = {F32: F32, F64: F64, F16: F16, BF16: BF16, I32: F32, U8: F32, C64: F32}


@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("axis", [None, 1, (0, 2), -1], ids=str)
def test_var_std(axis, ddof):
    for dtype, result in VAR_DTYPES.items():
        x = sample((2, 3, 4), dtype, -5, 5, seed=4)
        for name in ("var", "std"):
            check(lambda a, n=name: getattr(xnp, n)(a, axis=axis, ddof=ddof),
                  lambda a, n=name: getattr(np, n)(_wide(a), axis=axis, ddof=ddof), x,
                  dtype=result, scale=4)


def test_moment_options():
    x = sample((3, 5), F32, seed=5)
    mask = sample((3, 5), B, seed=6)
    mask[:, 0] = True
    for name in ("mean", "var", "std"):
        check(lambda a, w, n=name: getattr(xnp, n)(a, axis=1, where=w),
              lambda a, w, n=name: getattr(np, n)(a, axis=1, where=w), x, mask)
    check(lambda a: xnp.var(a, axis=0, correction=1), lambda a: np.var(a, axis=0, ddof=1), x)
    check(lambda a: xnp.std(a, keepdims=True, dtype=np.float64),
          lambda a: np.std(a, keepdims=True, dtype=np.float64), x, dtype=F64)
    check(lambda a: xnp.mean(a, dtype=np.float16), lambda a: np.mean(a), x, dtype=F16)
    check(lambda a: xnp.var(a, axis=1, ddof=7), lambda a: np.full(3, np.inf), x)
    check(lambda a: a.mean(axis=0), lambda a: a.mean(axis=0), x)
    with pytest.raises(ValueError, match="ddof"):
        xnp.var(x, ddof=1, correction=1)
    assert np.isnan(float(xnp.mean(np.ones((0,), np.float32))))


def test_average():
    x = sample((3, 4), F32, seed=7)
    w = sample((3, 4), F32, 0.1, 2, seed=8)
    check(xnp.average, np.average, x)
    check(lambda a: xnp.average(a, axis=1), lambda a: np.average(a, axis=1), x)
    check(lambda a, b: xnp.average(a, weights=b), lambda a, b: np.average(a, weights=b), x, w)
    check(lambda a, b: xnp.average(a, axis=0, weights=b),
          lambda a, b: np.average(a, axis=0, weights=b), x, w[:, 0].copy())
    check(lambda a, b: xnp.average(a, axis=1, weights=b, returned=True),
          lambda a, b: np.average(a, axis=1, weights=b, returned=True), x, w)
    check(lambda a: xnp.average(a, axis=(0, 1), returned=True, keepdims=True),
          lambda a: np.average(a, axis=(0, 1), returned=True, keepdims=True), x)
    with pytest.raises(ValueError, match="axis"):
        xnp.average(x, weights=w[0])
    assert xnp.average(np.arange(4, dtype=np.int32)).dtype == F32


# -- NaN-ignoring forms -------------------------------------------------------------------
def _with_nans(dtype, seed=9):
    x = sample((3, 4, 2), dtype, -5, 5, seed=seed)
    x[0, 1, :] = np.nan
    x[1, :, 0] = np.nan
    x[2, 2, 1] = np.nan
    return x


NAN_FUNCS = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
             "nanargmax", "nanargmin"]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's reference warns on all-NaN slices
@pytest.mark.parametrize("axis", [None, 0, 1, -1], ids=str)
@pytest.mark.parametrize("name", NAN_FUNCS)
def test_nan_reductions(name, axis):
    for dtype in (F32, F64):
        x = _with_nans(dtype)
        if name.startswith("nanarg"):
            index = np.int64 if dtype == F64 else I32   # float64 data runs with x64
            if axis is None:
                check(getattr(xnp, name), getattr(np, name), x, dtype=index)
            x = sample((3, 4, 2), dtype, seed=15)  # scattered NaNs: NumPy raises for
            x[0, 1, 0] = x[2, 3, 1] = x[1, 0, 1] = np.nan  # all-NaN slices (xnp gives -1)
            check(lambda a, n=name: getattr(xnp, n)(a, axis=axis),
                  _with(getattr(np, name), axis=axis), x, dtype=index)
            continue
        check(lambda a, n=name: getattr(xnp, n)(a, axis=axis),
              _with(getattr(np, name), axis=axis), x, dtype=dtype, scale=4)
    ints = sample((3, 4), I32)
    fn = getattr(xnp, name)
    check(lambda a: fn(a, axis=0), _with(getattr(np, name), axis=0), ints)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's reference warns on all-NaN slices
def test_nan_reductions_options_and_all_nan_slices():
    x = _with_nans(F32)
    check(lambda a: xnp.nanmean(a, axis=(0, 2), keepdims=True),
          _with(np.nanmean, axis=(0, 2), keepdims=True), x)
    check(lambda a: xnp.nanvar(a, axis=2, ddof=1), _with(np.nanvar, axis=2, ddof=1), x)
    check(lambda a: xnp.nansum(a, axis=1, initial=1.0), _with(np.nansum, axis=1, initial=1.0), x)
    check(lambda a: xnp.nanmax(a, axis=0, keepdims=True),
          _with(np.nanmax, axis=0, keepdims=True), x)
    all_nan = np.full((2, 3), np.nan, np.float32)
    assert np.isnan(np.asarray(xnp.nanmax(all_nan, axis=1))).all()
    assert np.isnan(np.asarray(xnp.nanmean(all_nan, axis=1))).all()
    np.testing.assert_array_equal(xnp.nanargmin(all_nan, axis=1), [-1, -1])


# -- arg-extrema --------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [None, 0, 1, -1], ids=str)
def test_argmax_argmin(axis):
    for dtype in (F32, I32, U8, B, BF16):
        x = sample((3, 4, 2), dtype, -3, 3, seed=10)  # small range: ties pick the first
        for name in ("argmax", "argmin"):
            check(lambda a, n=name: getattr(xnp, n)(a, axis=axis),
                  _with(getattr(np, name), axis=axis), x, dtype=I32)
            check(lambda a, n=name: getattr(xnp, n)(a, axis=axis, keepdims=True),
                  _with(getattr(np, name), axis=axis, keepdims=True), x, dtype=I32)
    x = np.array([[1.0, np.nan, 5.0], [2.0, 3.0, np.nan]], np.float32)
    check(lambda a: (xnp.argmax(a, axis=1), xnp.argmin(a, axis=1)),
          lambda a: (np.argmax(a, axis=1), np.argmin(a, axis=1)), x)
    with pytest.raises(ValueError, match="empty"):
        xnp.argmax(np.ones((0, 2)), axis=0)


# -- order statistics ---------------------------------------------------------------------
METHODS = ["linear", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("method", METHODS)
def test_quantile_methods(method):
    x = sample((4, 7, 3), F32, seed=11)
    for q in (0.5, [0.0, 0.25, 0.5, 1.0], [[0.1], [0.9]]):  # lists: float32, as in JAX
        for axis in (None, 1, (0, 2)):
            kwargs = dict(axis=axis, method=method)
            check(lambda a, k=kwargs, qs=q: xnp.quantile(a, qs, **k),
                  lambda a, k=kwargs, qs=q: np.quantile(a, qs, **k), x, dtype=F32)
    check(lambda a: xnp.percentile(a, [10, 50, 90], axis=-1, method=method, keepdims=True),
          lambda a: np.percentile(a, [10, 50, 90], axis=-1, method=method, keepdims=True), x)


def test_quantile_with_traced_q_and_dtypes():
    x = sample((5, 6), F64, seed=12)
    check(lambda a, q: xnp.quantile(a, q, axis=0), lambda a, q: np.quantile(a, q, axis=0),
          x, np.array([0.3, 0.7]), dtype=F64)
    ints = sample((9,), I32, -50, 50)
    check(lambda a: xnp.quantile(a, 0.4), lambda a: np.quantile(a, 0.4), ints, dtype=F32)
    check(xnp.median, np.median, sample((2, 5), F16, seed=13), dtype=F16)
    with pytest.raises(ValueError, match="quantiles"):
        xnp.quantile(x, 1.5)
    with pytest.raises(ValueError, match="method"):
        xnp.quantile(x, 0.5, method="cubic")


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)], ids=str)
def test_median(axis):
    for shape in [(4, 6), (5, 3)]:
        x = sample(shape, F32, seed=14)
        check(lambda a: xnp.median(a, axis=axis), _with(np.median, axis=axis), x)
        check(lambda a: xnp.median(a, axis=axis, keepdims=True),
              _with(np.median, axis=axis, keepdims=True), x)
    x = sample((3, 4), F32)
    x[1, 2] = np.nan
    check(lambda a: xnp.median(a, axis=1), _with(np.median, axis=1), x)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's reference warns on all-NaN slices
def test_nan_order_statistics():
    x = _with_nans(F32)
    check(lambda a: xnp.nanmedian(a, axis=1), _with(np.nanmedian, axis=1), x)
    check(lambda a: xnp.nanquantile(a, [0.2, 0.8], axis=2),
          _with(np.nanquantile, q=[0.2, 0.8], axis=2), x)
    check(lambda a: xnp.nanpercentile(a, 75, axis=(0, 1)),
          _with(np.nanpercentile, q=75, axis=(0, 1)), x)


# -- hypothesis: shapes and axes ----------------------------------------------------------
@st.composite
def _shape_and_axes(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4))
    ndim = len(shape)
    axes = draw(st.one_of(st.none(), st.lists(st.integers(0, max(ndim - 1, 0)), unique=True,
                                              max_size=ndim)))
    if axes is not None and ndim:
        axes = tuple(a - ndim if draw(st.booleans()) else a for a in axes)
    elif axes is not None:
        axes = ()
    return shape, axes, draw(st.booleans())


@given(_shape_and_axes(), st.sampled_from(["sum", "max", "mean", "var", "any", "min"]))
def test_reduction_axes_hypothesis(case, name):
    shape, axes, keepdims = case
    x = sample(shape, F32, seed=len(shape))
    got = getattr(xnp, name)(x, axis=axes, keepdims=keepdims)
    want = getattr(np, name)(x, axis=axes, keepdims=keepdims)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


@given(_shape_and_axes())
def test_reduction_axes_under_jit_hypothesis(case):
    shape, axes, keepdims = case
    x = sample(shape, I32, -9, 9, seed=1)
    check(lambda a: (xnp.sum(a, axis=axes, keepdims=keepdims),
                     xnp.min(a, axis=axes, keepdims=keepdims)),
          lambda a: (np.sum(a, axis=axes, keepdims=keepdims),
                     np.min(a, axis=axes, keepdims=keepdims)), x)


def test_reductions_compile_once_per_signature():
    f = xlapy.jit(lambda a: xnp.mean(a, axis=0) + xnp.std(a))
    for _ in range(3):
        f(np.ones((2, 3), np.float32))
    f(np.ones((4, 3), np.float32))
    assert f.compile_count == 2
