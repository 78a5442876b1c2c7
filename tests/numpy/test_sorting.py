"""xnp sorting, searching and counting against NumPy, eagerly and under jit (the
two agreeing): sorts, searchsorted / digitize, the nonzero family and unique
with their must-compile errors, bincount / histogram, cumulative ops,
select / piecewise."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xlapy
import xlapy.numpy as xnp
from tests.frontend_util import check
from xlapy.core.trace import as_array
from xlapy.errors import CompileError

BF16 = np.dtype(ml_dtypes.bfloat16)




def sample(shape, dtype, seed=0, low=0, high=6):
    """Small values, so that ties and repeats are common."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind == "c":
        return (rng.integers(low, high, shape) + 1j * rng.integers(low, high, shape)).astype(
            dtype)
    return rng.integers(low, high, shape).astype(dtype)


def i32(x):
    return np.asarray(x).astype(np.int32)


def stable_descending_argsort(x, axis):
    """Descending order, ties in their original order (Python's sort is stable with
    reverse=True)."""
    if axis is None:
        x, axis = x.ravel(), 0
    return np.apply_along_axis(
        lambda lane: np.array(sorted(range(lane.size), key=lambda i: lane[i], reverse=True)),
        axis, x)


DTYPES = [np.float32, np.int32, np.uint8, np.bool_, np.float64, BF16, np.int8]


# -- sorting ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape,axis", [((7,), -1), ((3, 5), 0), ((3, 5), 1), ((2, 3, 4), None)],
                         ids=str)
def test_sort_argsort(shape, axis, dtype):
    x = sample(shape, dtype)
    check(lambda a: xnp.sort(a, axis), (x,), np.sort(x, axis, kind="stable"))
    check(lambda a: xnp.argsort(a, axis), (x,), i32(np.argsort(x, axis, kind="stable")))
    check(lambda a: xnp.sort(a, axis, descending=True), (x,),
          np.flip(np.sort(x, axis), axis))
    check(lambda a: xnp.argsort(a, axis, descending=True), (x,),
          i32(stable_descending_argsort(x, axis)))


def test_sort_nans_and_zeros():
    x = np.array([1.0, np.nan, -0.0, 2.0, 0.0, -np.inf, np.nan], np.float32)
    check(xnp.sort, (x,), np.sort(x))
    check(xnp.argsort, (x,), i32(np.argsort(x, kind="stable")))
    assert np.signbit(np.asarray(xnp.sort(as_array(x)))[1])  # -0.0 stays before 0.0
    c = np.array([1 + 2j, 1 + 1j, 0 + 5j], np.complex64)
    check(xnp.sort, (c,), np.sort(c))


def test_array_sort_methods():
    x = sample((3, 4), np.float32)
    check(lambda a: a.sort(), (x,), np.sort(x))
    check(lambda a: a.argsort(0), (x,), i32(np.argsort(x, 0, kind="stable")))


def test_lexsort():
    k1, k2, k3 = (sample((9,), np.int32, seed=s, high=3) for s in range(3))
    check(lambda a, b, c: xnp.lexsort((a, b, c)), (k1, k2, k3), i32(np.lexsort((k1, k2, k3))))
    keys = sample((2, 4, 5), np.float32, high=3)
    check(lambda k: xnp.lexsort(k, axis=0), (keys,), i32(np.lexsort(keys, axis=0)))


@pytest.mark.parametrize("kth", [0, 3, -1])
def test_partition(kth):
    x = sample((4, 7), np.float32, high=20)
    for axis in (0, 1):
        k = kth % x.shape[axis]
        got = np.asarray(xnp.partition(as_array(x), kth, axis))
        kth_value = np.take(np.sort(x, axis), [k], axis)
        np.testing.assert_array_equal(np.take(got, [k], axis), kth_value)
        assert np.all(np.take(got, range(k), axis) <= kth_value)
        assert np.all(np.take(got, range(k, x.shape[axis]), axis) >= kth_value)
        index = np.asarray(xlapy.jit(lambda a, ax=axis: xnp.argpartition(a, kth, ax))(x))
        np.testing.assert_array_equal(np.take_along_axis(x, index, axis), got)


# -- searching --------------------------------------------------------------------------------
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("method", ["scan", "compare_all"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8], ids=str)
def test_searchsorted(side, method, dtype):
    a = np.sort(sample((11,), dtype, high=8))
    v = sample((3, 4), dtype, seed=1, high=10)
    check(lambda x, y: xnp.searchsorted(x, y, side=side, method=method), (a, v),
          i32(np.searchsorted(a, v, side=side)))


def test_searchsorted_edges():
    a = np.array([1.0, 2.0, 2.0, np.nan], np.float32)
    v = np.array([np.nan, 2.0, 5.0, -np.inf], np.float32)
    for side in ("left", "right"):
        check(lambda x, y, s=side: xnp.searchsorted(x, y, side=s), (a, v),
              i32(np.searchsorted(a, v, side=side)))
    check(lambda x: xnp.searchsorted(x, 1.5), (a,), np.int32(1))
    empty = np.zeros(0, np.float32)
    check(lambda x, y: xnp.searchsorted(x, y), (empty, v), np.zeros(4, np.int32))
    unsorted = np.array([3, 1, 2], np.int32)
    sorter = np.argsort(unsorted).astype(np.int32)
    check(lambda x, s: xnp.searchsorted(x, np.array([2, 3], np.int32), sorter=s),
          (unsorted, sorter), i32(np.searchsorted(unsorted, [2, 3], sorter=sorter)))


@given(st.lists(st.integers(-5, 5), min_size=1, max_size=12),
       st.lists(st.integers(-7, 7), min_size=1, max_size=5), st.booleans())
def test_fuzz_searchsorted(a, v, right):
    a, v = np.sort(np.array(a, np.int32)), np.array(v, np.int32)
    side = "right" if right else "left"
    got = xnp.searchsorted(as_array(a), as_array(v), side=side)
    np.testing.assert_array_equal(np.asarray(got), np.searchsorted(a, v, side=side))


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("bins", [[0.0, 1.0, 2.5, 4.0], [4.0, 2.5, 1.0, 0.0], [1.0]])
def test_digitize(bins, right):
    x = np.array([-1.0, 0.0, 1.0, 2.0, 2.5, 3.0, 4.0, 5.0], np.float32)
    bins = np.array(bins, np.float32)
    check(lambda a, b: xnp.digitize(a, b, right=right), (x, bins),
          i32(np.digitize(x, bins, right=right)))


# -- nonzero family ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.complex64], ids=str)
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 2), (0,)], ids=str)
def test_nonzero_eager_and_with_size(shape, dtype):
    x = sample(shape, dtype, high=2)
    expected = [i32(i) for i in np.nonzero(x)]
    got = xnp.nonzero(as_array(x))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(np.asarray(g), e)
        assert g.dtype == np.int32
    size = x.size
    padded = [np.concatenate([e, np.zeros(size - e.size, np.int32)]) for e in expected]
    check(lambda a: xnp.nonzero(a, size=size), (x,), padded)
    filled = [np.concatenate([e, np.full(size - e.size, -1, np.int32)]) for e in expected]
    check(lambda a: xnp.nonzero(a, size=size, fill_value=-1), (x,), filled)
    cut = [e[:2] for e in expected]
    if expected[0].size >= 2:
        check(lambda a: xnp.nonzero(a, size=2), (x,), cut)


def test_nonzero_fill_per_dimension_and_where():
    x = np.array([[0, 1], [1, 1]], np.int32)
    check(lambda a: xnp.nonzero(a, size=4, fill_value=(-1, -2)), (x,),
          [np.array([0, 1, 1, -1], np.int32), np.array([1, 0, 1, -2], np.int32)])
    check(lambda a: xnp.where(a, size=3), (x,),
          [np.array([0, 1, 1], np.int32), np.array([1, 0, 1], np.int32)])
    check(lambda a: a.at[xnp.nonzero(a > 0, size=2)].set(7), (x,), np.array([[0, 7], [7, 1]],
                                                                           np.int32))


def test_flatnonzero_and_argwhere():
    x = sample((3, 4), np.int32, high=2)
    np.testing.assert_array_equal(np.asarray(xnp.flatnonzero(as_array(x))), np.flatnonzero(x))
    np.testing.assert_array_equal(np.asarray(xnp.argwhere(as_array(x))), np.argwhere(x))
    n = int(np.count_nonzero(x))
    check(lambda a: xnp.flatnonzero(a, size=n), (x,), i32(np.flatnonzero(x)))
    check(lambda a: xnp.argwhere(a, size=n + 2, fill_value=9), (x,),
          np.concatenate([i32(np.argwhere(x)), np.full((2, 2), 9, np.int32)]))
    assert xnp.argwhere(as_array(np.int32(3))).shape == (1, 0)
    assert xnp.argwhere(as_array(np.int32(0))).shape == (0, 0)


@pytest.mark.parametrize("name,call", [
    ("xnp.nonzero", lambda a: xnp.nonzero(a)),
    ("xnp.flatnonzero", lambda a: xnp.flatnonzero(a)),
    ("xnp.argwhere", lambda a: xnp.argwhere(a)),
    ("xnp.nonzero", lambda a: xnp.where(a)),
    ("xnp.unique", lambda a: xnp.unique(a)),
])
def test_data_dependent_shapes_need_size_under_jit(name, call):
    x = np.array([0, 3, 3, 1], np.int32)

    def f(a):
        return call(a)  # the user's line is in the lambda above; this frame is in the test

    with pytest.raises(CompileError) as info:
        xlapy.jit(f)(x)
    message = str(info.value)
    assert name in message and "pass size=" in message and "depends on the values" in message
    assert __file__ in message


def test_unique_error_names_the_users_line():
    def f(a):
        return xnp.unique(a)  # this line

    with pytest.raises(CompileError) as info:
        xlapy.jit(f)(np.array([1, 2], np.int32))
    assert str(info.value).startswith("xnp.unique cannot be compiled: its output shape depends "
                                      "on the values of its input; pass size= to fix the output "
                                      "size")
    assert f"{__file__}:{f.__code__.co_firstlineno + 1}" in str(info.value)


# -- unique -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.uint8], ids=str)
@pytest.mark.parametrize("shape", [(9,), (3, 4), (1,)], ids=str)
def test_unique_eager_matches_numpy(shape, dtype):
    x = sample(shape, dtype, high=4)
    got = xnp.unique(as_array(x), return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)
    assert got[0].dtype == x.dtype and all(g.dtype == np.int32 for g in got[1:])
    np.testing.assert_array_equal(np.asarray(xnp.unique(as_array(x))), np.unique(x))


def test_unique_with_size_under_jit():
    x = np.array([3, 1, 3], np.int32)
    check(lambda a: xnp.unique(a, size=4), (x,), np.array([1, 3, 1, 1], np.int32))
    check(lambda a: xnp.unique(a, size=4, fill_value=0), (x,), np.array([1, 3, 0, 0], np.int32))
    check(lambda a: xnp.unique(a, size=1), (x,), np.array([1], np.int32))
    check(lambda a: xnp.unique(a, return_index=True, return_inverse=True, return_counts=True,
                               size=4), (x,),
          [np.array([1, 3, 1, 1], np.int32), np.array([1, 0, 1, 1], np.int32),
           np.array([1, 0, 1], np.int32), np.array([1, 2, 0, 0], np.int32)])


def test_unique_nans_and_axis():
    x = np.array([1.0, np.nan, 2.0, np.nan, 1.0], np.float32)
    np.testing.assert_array_equal(np.asarray(xnp.unique(as_array(x))), [1, 2, np.nan])
    np.testing.assert_array_equal(np.asarray(xnp.unique(as_array(x), equal_nan=False)),
                                  [1, 2, np.nan, np.nan])
    rows = np.array([[1, 2], [1, 2], [0, 5]], np.int32)
    got = xnp.unique(as_array(rows), axis=0, return_counts=True, return_inverse=True)
    want = np.unique(rows, axis=0, return_counts=True, return_inverse=True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), w)
    check(lambda a: xnp.unique(a, axis=1, size=2), (rows,), np.unique(rows, axis=1))


@given(st.lists(st.integers(-3, 3), min_size=1, max_size=15))
def test_fuzz_unique(values):
    x = np.array(values, np.int32)
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    size = want[0].size + 2
    got = xlapy.jit(lambda a: xnp.unique(a, return_index=True, return_inverse=True,
                                         return_counts=True, size=size))(x)
    np.testing.assert_array_equal(np.asarray(got[0])[:-2], want[0])
    np.testing.assert_array_equal(np.asarray(got[1])[:-2], want[1])
    np.testing.assert_array_equal(np.asarray(got[2]), want[2])
    np.testing.assert_array_equal(np.asarray(got[3]), np.concatenate([want[3], [0, 0]]))


# -- counting ---------------------------------------------------------------------------------
def test_bincount():
    x = np.array([0, 1, 1, 3, 1], np.int32)
    np.testing.assert_array_equal(np.asarray(xnp.bincount(as_array(x))), np.bincount(x))
    check(lambda a: xnp.bincount(a, length=6), (x,), i32(np.bincount(x, minlength=6)))
    check(lambda a: xnp.bincount(a, length=3), (x,), np.array([1, 3, 0], np.int32))
    w = np.array([0.5, 1.0, 1.0, 2.0, 0.25], np.float32)
    check(lambda a, b: xnp.bincount(a, b, length=4), (x, w), np.bincount(x, w).astype(np.float32))
    check(lambda a: xnp.bincount(a, length=4), (np.array([0, -1, 5], np.int32),),
          np.array([2, 0, 0, 0], np.int32))   # negatives count as 0, values past length drop
    assert xnp.bincount(as_array(x), minlength=7).shape == (7,)

    def f(a):
        return xnp.bincount(a)  # this line

    with pytest.raises(CompileError) as info:
        xlapy.jit(f)(x)
    assert "pass length=" in str(info.value)
    assert f"{__file__}:{f.__code__.co_firstlineno + 1}" in str(info.value)


@pytest.mark.parametrize("bins,range_", [(3, None), (5, (0.0, 4.0)), ([0.0, 1.0, 2.5, 3.0], None)])
def test_histogram(bins, range_):
    x = np.array([1.0, 2.0, 2.0, 3.0, 0.5, 2.75], np.float32)
    counts, edges = np.histogram(x, bins=bins, range=range_)
    check(lambda a: xnp.histogram(a, bins=bins, range=range_), (x,),
          [counts.astype(np.float32), edges.astype(np.float32)], rtol=1e-6)
    density, _ = np.histogram(x, bins=bins, range=range_, density=True)
    check(lambda a: xnp.histogram(a, bins=bins, range=range_, density=True)[0], (x,),
          density.astype(np.float32), rtol=1e-5)


# -- cumulative -------------------------------------------------------------------------------
CUMULATIVE_DTYPES = {np.bool_: np.int32, np.int8: np.int8, np.uint8: np.uint8,
                     np.int32: np.int32, np.float32: np.float32, np.float16: np.float16}


@pytest.mark.parametrize("dtype", list(CUMULATIVE_DTYPES), ids=str)
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumsum_cumprod(dtype, axis):
    x = sample((3, 4), dtype, high=3)
    out = CUMULATIVE_DTYPES[dtype]
    check(lambda a: xnp.cumsum(a, axis), (x,), np.cumsum(x, axis).astype(out))
    check(lambda a: xnp.cumprod(a, axis), (x,), np.cumprod(x, axis).astype(out))
    check(lambda a: xnp.cumsum(a, axis, dtype=np.float32), (x,),
          np.cumsum(x, axis, dtype=np.float32))
    check(lambda a: a.cumsum(axis), (x,), np.cumsum(x, axis).astype(out))


@pytest.mark.parametrize("dtype,out", [(np.bool_, np.int32), (np.int8, np.int32),
                                       (np.uint8, np.uint32), (np.float32, np.float32)],
                         ids=str)
def test_cumulative_sum_prod(dtype, out):
    x = sample((3, 4), dtype, high=3)
    check(lambda a: xnp.cumulative_sum(a, axis=1), (x,),
          np.cumulative_sum(x, axis=1).astype(out))
    check(lambda a: xnp.cumulative_sum(a, axis=0, include_initial=True), (x,),
          np.cumulative_sum(x, axis=0, include_initial=True).astype(out))
    check(lambda a: xnp.cumulative_prod(a[0], include_initial=True), (x,),
          np.cumulative_prod(x[0], include_initial=True).astype(out))
    with pytest.raises(ValueError, match="axis"):
        xnp.cumulative_sum(as_array(x))


def test_nancumsum_nancumprod():
    x = np.array([[1.0, np.nan, 2.0], [np.nan, 3.0, 0.5]], np.float32)
    check(lambda a: xnp.nancumsum(a, 1), (x,), np.nancumsum(x, 1))
    check(lambda a: xnp.nancumprod(a), (x,), np.nancumprod(x))


# -- choosing ---------------------------------------------------------------------------------
def test_select():
    x = np.arange(-3, 4, dtype=np.int32)
    check(lambda a: xnp.select([a < -1, a > 1], [a * 10, a.astype(np.float32)], default=-7),
          (x,), np.select([x < -1, x > 1], [x * 10, x.astype(np.float32)], -7)
          .astype(np.float32))
    check(lambda a: xnp.select([a < 0, a < 2], [a, -a]), (x,), np.select([x < 0, x < 2], [x, -x]))
    with pytest.raises(ValueError, match="same length"):
        xnp.select([as_array(x) > 0], [])


def test_piecewise():
    x = np.linspace(-2.0, 2.0, 9, dtype=np.float32)
    check(lambda a: xnp.piecewise(a, [a < 0, a >= 0], [lambda v: -v, lambda v: v * 2]), (x,),
          np.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * 2]))
    check(lambda a: xnp.piecewise(a, [a < -1, a > 1], [0.5, lambda v: v ** 2, 7.0]), (x,),
          np.piecewise(x, [x < -1, x > 1], [0.5, lambda v: v ** 2, 7.0]))
    check(lambda a: xnp.piecewise(a, a > 0, [1.0]), (x,), np.piecewise(x, x > 0, [1.0]))


def test_compress_and_extract():
    x = sample((3, 4), np.int32, high=9)
    c = np.array([1, 0, 1, 1], np.int32)
    for axis in (1, None):
        want = np.compress(c, x, axis=axis)
        np.testing.assert_array_equal(np.asarray(xnp.compress(as_array(c), as_array(x),
                                                              axis=axis)), want)
    check(lambda k, a: xnp.compress(k, a, axis=1, size=4, fill_value=-1), (c, x),
          np.concatenate([np.compress(c, x, axis=1), np.full((3, 1), -1, np.int32)], axis=1))
    mask = x % 3 == 0
    np.testing.assert_array_equal(np.asarray(xnp.extract(as_array(mask), as_array(x))),
                                  np.extract(mask, x))
    n = int(mask.sum())
    check(lambda m, a: xnp.extract(m, a, size=n), (mask, x), np.extract(mask, x))
    with pytest.raises(CompileError, match="xnp.compress"):
        xlapy.jit(lambda k, a: xnp.compress(k, a, axis=1))(c, x)


@pytest.mark.parametrize("method", ["auto", "compare_all", "sort"])
@pytest.mark.parametrize("invert", [False, True])
def test_isin(method, invert):
    x = sample((3, 4), np.int32, high=9)
    test = np.array([[1, 5], [8, 8]], np.int32)
    check(lambda a, t: xnp.isin(a, t, invert=invert, method=method), (x, test),
          np.isin(x, test, invert=invert))
    f = np.array([0.5, np.nan, 2.0], np.float32)
    check(lambda a: xnp.isin(a, [2, 7], method=method), (f,), np.isin(f, [2, 7]))
