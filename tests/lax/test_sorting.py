"""lax.sort (single, variadic, num_keys), sort_key_val and top_k: against
NumPy's stable sorts, eagerly and under jit, with JAX's float order (NaNs
last, -0.0 equal to 0.0)."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import xlapy
from tests.frontend_util import both
from xlapy import lax
from xlapy.hlo.opcode import Opcode
from xlapy.lax import sorting

BF16 = np.dtype(ml_dtypes.bfloat16)




def assert_same(actual, expected):
    """Equal dtype, shape and values, NaN in the same places and the same sign bits."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    if expected.dtype == BF16:  # NumPy's NaN-aware comparison does not know bfloat16
        actual, expected = actual.astype(np.float32), expected.astype(np.float32)
    np.testing.assert_array_equal(actual, expected)
    if expected.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(actual.astype(np.float32)),
                                      np.signbit(expected.astype(np.float32)))


def check(fn, args, expected):
    expected = expected if isinstance(expected, (tuple, list)) else [expected]
    eager, jitted = both(fn, *args)
    assert len(eager) == len(jitted) == len(expected)
    for e, j, want in zip(eager, jitted, expected):
        assert_same(e, want)
        assert_same(j, want)


def stable_order(x, axis=-1):
    """NumPy's stable argsort with every NaN last (and -NaN counted as NaN)."""
    return np.argsort(x, axis=axis, kind="stable")


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -4, 5, shape).astype(dtype)
    values = rng.choice(np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, -np.nan, 3.0]),
                        shape)
    return (values + rng.integers(0, 2, shape) * rng.standard_normal(shape)).astype(dtype)


# -- sort ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, BF16, np.int32,
                                   np.uint8, np.int8, np.bool_])
@pytest.mark.parametrize("shape,dimension", [((17,), -1), ((4, 9), 1), ((6, 5), 0),
                                             ((2, 3, 4), 1)])
def test_sort_matches_stable_numpy(dtype, shape, dimension):
    x = sample(shape, dtype, seed=len(shape))
    order = stable_order(x.astype(np.float32) if dtype == BF16 else x, dimension)
    check(lambda x: lax.sort(x, dimension), [x], np.take_along_axis(x, order, dimension))


def test_sort_zero_signs_are_stable_and_nans_last():
    x = np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -1.0, -np.inf, np.inf, 0.0, -0.0],
                 np.float32)
    want = np.array([-np.inf, -1.0, 0.0, -0.0, 0.0, -0.0, 1.0, np.inf, np.nan, np.nan],
                    np.float32)
    # JAX's sort keeps the NaNs' own bits; only their position is fixed
    eager, jitted = both(lambda x: lax.sort(x), x)
    for got in (eager[0], jitted[0]):
        np.testing.assert_array_equal(np.signbit(got[:8]), np.signbit(want[:8]))
        np.testing.assert_array_equal(got, want)


def test_eager_sort_runs_the_sort_that_jit_emits(monkeypatch):
    # No extra key operand eagerly: the comparator canonicalises floats itself.
    bound = []
    original = sorting.bind

    def record(opcode, operands, *args, **kwargs):
        bound.append((opcode, len(operands)))
        return original(opcode, operands, *args, **kwargs)

    monkeypatch.setattr(sorting, "bind", record)
    x = sample((3, 20000), np.float32, seed=9)
    eager = lax.sort(x)
    # (tracing the comparator the first time binds its compares too)
    assert [b for b in bound if b[0] is not Opcode.COMPARE] == [(Opcode.SORT, 1)]
    assert_same(eager, np.take_along_axis(x, stable_order(x), -1))
    assert_same(xlapy.jit(lax.sort)(x), eager)


def test_argsort_via_sort_key_val():
    x = sample((5, 12), np.float32, seed=3)
    index = np.broadcast_to(np.arange(12, dtype=np.int32), x.shape).copy()
    order = stable_order(x, 1).astype(np.int32)
    check(lambda x, i: lax.sort_key_val(x, i, 1), [x, index],
          [np.take_along_axis(x, order, 1), order])


@pytest.mark.parametrize("num_keys", [1, 2, 3])
def test_variadic_sort_num_keys(num_keys):
    rng = np.random.default_rng(4)
    a = rng.integers(0, 3, 30).astype(np.int32)
    b = rng.choice(np.array([1.0, -1.0, np.nan, 0.0, -0.0], np.float32), 30)
    c = rng.integers(0, 2, 30).astype(np.uint8)
    d = np.arange(30, dtype=np.int32)
    keys = [a, b, c][:num_keys]
    # np.lexsort sorts by the last key first and is stable; NaNs go last as in JAX
    order = np.lexsort([np.where(k == 0, 0, k) for k in reversed(keys)])
    check(lambda a, b, c, d: lax.sort([a, b, c, d], num_keys=num_keys), [a, b, c, d],
          [a[order], b[order], c[order], d[order]])


def test_sort_complex_lexicographic():
    x = np.array([1 + 1j, 1 - 1j, -2 + 5j, 0 + 0j, 1 + 0j, -2 - 5j, 0 - 0j], np.complex64)
    check(lambda x: lax.sort(x), [x], np.sort(x, kind="stable"))


def test_sort_hlo_is_stable_total_order():
    text = xlapy.jit(lambda x: lax.sort(x)).lower(np.zeros(4, np.float32)).as_text()
    assert "is_stable=true" in text and "type=TOTALORDER" in text
    module = xlapy.hlo.parse(text)
    assert any(c.name.startswith("region_compare_lt") for c in module.computations)


def test_unstable_sort_is_accepted():
    x = np.array([3, 1, 2], np.int32)
    check(lambda x: lax.sort(x, is_stable=False), [x], np.array([1, 2, 3], np.int32))


def test_sort_errors():
    with pytest.raises(ValueError, match="num_keys"):
        lax.sort(np.zeros(3), num_keys=2)
    with pytest.raises(ValueError, match="num_keys"):
        lax.sort([np.zeros(3), np.zeros(3)], num_keys=3)
    with pytest.raises(ValueError, match="one shape"):
        lax.sort([np.zeros(3), np.zeros(4)])
    with pytest.raises(ValueError, match="out of bounds"):
        lax.sort(np.zeros((2, 3)), 2)
    with pytest.raises(TypeError, match="at least one"):
        lax.sort([])


# -- top_k --------------------------------------------------------------------------------

def ref_top_k(x, k, axis=-1):
    """The k largest, NaN largest, ties by lower index (a stable sort of -x)."""
    moved = np.moveaxis(x, axis, -1)
    wide = moved.astype(np.float64)
    nan = np.isnan(wide)
    order = np.lexsort((np.where(nan, 0, -wide), ~nan), axis=-1)[..., :k]  # NaNs first
    values = np.take_along_axis(moved, order, -1)
    return np.moveaxis(values, -1, axis), np.moveaxis(order.astype(np.int32), -1, axis)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.float16])
@pytest.mark.parametrize("shape,k,axis", [((10,), 3, -1), ((4, 7), 7, 1), ((5, 3), 2, 0),
                                          ((3, 6), 0, -1)])
def test_top_k(dtype, shape, k, axis):
    x = sample(shape, dtype, seed=6)
    x = np.where(np.isnan(x), np.nan, x).astype(dtype) if x.dtype.kind == "f" else x
    check(lambda x: lax.top_k(x, k, axis=axis), [x], list(ref_top_k(x, k, axis)))


def test_top_k_hlo_and_errors():
    text = xlapy.jit(lambda x: lax.top_k(x, 2)).lower(np.zeros((3, 5), np.float32)).as_text()
    assert "topk(" in text and "k=2" in text and "largest=true" in text
    xlapy.hlo.parse(text)
    with pytest.raises(ValueError, match="nonnegative"):
        lax.top_k(np.zeros(3), -1)
    with pytest.raises(ValueError, match="larger"):
        lax.top_k(np.zeros(3), 4)
    with pytest.raises(TypeError, match="complex"):
        lax.top_k(np.zeros(3, np.complex64), 1)


# -- hypothesis ---------------------------------------------------------------------------

@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=2, max_side=8),
                  elements=st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan])),
       st.booleans())
def test_sort_fuzz(x, last_axis):
    axis = -1 if last_axis else 0
    order = stable_order(x, axis)
    index = np.indices(x.shape)[axis].astype(np.int32)
    check(lambda x, i: lax.sort((x, i), axis), [x, index],
          [np.take_along_axis(x, order, axis), order.astype(np.int32)])
