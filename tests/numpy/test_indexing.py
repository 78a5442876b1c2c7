"""xnp indexing: `x[idx]`, `x.at[idx]` updates, take / take_along_axis / put and
friends, against NumPy, eagerly and under jit; a hypothesis fuzz of NumPy index
mixes; JAX's out-of-bounds rules; the compile error of traced boolean masks."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xlapy
import xlapy.numpy as xnp
from tests.frontend_util import check
from xlapy.core.trace import as_array
from xlapy.errors import CompileError


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 50, shape).astype(dtype)
    return (rng.standard_normal(shape) * 10).round(2).astype(dtype)


DTYPES = [np.float32, np.int32, np.uint8, np.bool_, np.float64, np.complex64]


# -- basic indexing -------------------------------------------------------------------------
BASIC = [
    1, -1, (0, 2), (-1, -4), slice(None), slice(1, None), slice(None, None, -1),
    slice(2, 0, -1), slice(None, None, 2), slice(-3, None, 3), slice(5, 1, -2),
    (Ellipsis, 1), (1, Ellipsis), (None, 0), (slice(None), None, 1, None), Ellipsis, (),
    (slice(1, 2), slice(None, None, -2), 3), (None, Ellipsis, None), slice(10, 20),
    (0, 1, 2), (slice(0, 0),),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index", BASIC, ids=repr)
def test_basic_indexing(index, dtype):
    x = sample((3, 4, 5), dtype)
    check(lambda a: a[index], (x,), x[index])


@pytest.mark.parametrize("index", [
    [0, 2], np.array([[0, 1], [2, 2]]), ([0, 2], [1, 3]), (slice(None), [3, 0, 3]),
    (0, slice(None), [1, 2]), (slice(None), 0, [1, 2]), ([0], None, [1]),
    ([0], Ellipsis, [1]), (np.array([[0], [2]]), slice(1, 3), np.array([0, 4])),
    (slice(None, None, -1), [-1, 1]), ([1, -3], slice(None, None, 2), 2),
    (None, [1], slice(None), [[4], [0]]), True, False, (True, 0), ([0, 1], True, [1]),
    np.array([1, 0, 1], bool), (slice(None), np.array([1, 0, 0, 1], bool)),
    np.ones((3, 4), bool), (np.array([0, 2]), np.array([1, 0, 0, 1], bool)),
], ids=repr)
def test_advanced_indexing(index):
    x = sample((3, 4, 5), np.float32)
    check(lambda a: a[index], (x,), x[index])


def test_traced_index_arrays():
    x = sample((4, 5), np.int32)
    i, j = np.array([3, -1, 0]), np.array([[4], [-5]])
    check(lambda a, i, j: a[i, j], (x, i, j), x[i, j])
    check(lambda a, i: a[:, i], (x, i), x[:, i])
    check(lambda a, i: a[i, ::-2], (x, i), x[i, ::-2])
    check(lambda a, i: a[i.astype(np.uint8) % 4], (x, i), x[i % 4])


def test_traced_scalar_index():
    x = sample((4, 5), np.float32)
    for k in (2, -1, -4):
        check(lambda a, k: a[k], (x, np.int32(k)), x[k])
        check(lambda a, k: a[1:, k, None], (x, np.int32(k)), x[1:, k, None])


def test_list_of_scalar_arrays_index():
    x = sample((4,), np.float32)
    check(lambda a: a[[as_array(np.int32(1)), 2]], (x,), x[[1, 2]])


# -- out of bounds: JAX's rules ------------------------------------------------------------
def test_out_of_bounds_reads_clamp():
    x = np.arange(10.0, dtype=np.float32)
    idx = np.array([11, -1, -11, -12])
    check(lambda a, i: a[i], (x, idx), np.array([9, 9, 0, 0], np.float32))
    check(lambda a: a[11], (x,), np.float32(9))
    check(lambda a: a[-11], (x,), np.float32(0))
    check(lambda a, k: a[k], (x, np.int32(-11)), np.float32(0))


def test_fill_mode_and_fill_value():
    x = np.arange(10.0, dtype=np.float32)
    idx = np.array([11, -1, -11, 3])
    want = np.array([np.nan, 9, np.nan, 3], np.float32)
    check(lambda a, i: a.at[i].get(mode="fill"), (x, idx), want)
    check(lambda a, i: a.at[i].get(mode="fill", fill_value=-1.0), (x, idx),
          np.array([-1, 9, -1, 3], np.float32))
    check(lambda a: a.at[11].get(mode="fill"), (x,), np.float32(np.nan))
    ints = np.arange(5, dtype=np.int32)
    check(lambda a, i: a.at[i].get(mode="fill"), (ints, np.array([7, 1])),
          np.array([np.iinfo(np.int32).min, 1], np.int32))
    check(lambda a, i: a.at[i].get(mode="clip"), (ints, np.array([7, -9])),
          np.array([4, 0], np.int32))


def test_out_of_bounds_updates_are_dropped():
    x = np.arange(5.0, dtype=np.float32)
    check(lambda a: a.at[11].set(9.0), (x,), x)
    check(lambda a: a.at[-6].set(9.0), (x,), x)
    check(lambda a, i: a.at[i].add(1.0), (x, np.array([7, -7, 2])),
          np.array([0, 1, 3, 3, 4], np.float32))
    check(lambda a: a.at[11].set(9.0, mode="clip"), (x,), np.array([0, 1, 2, 3, 9], np.float32))
    check(lambda a: a.at[3:9].set(1.0), (x,), np.array([0, 1, 2, 1, 1], np.float32))


# -- .at updates ----------------------------------------------------------------------------
UPDATE_INDICES = [
    1, (slice(None), 2), (Ellipsis, slice(None, None, -2)), ([0, 2, 0], slice(1, 3)),
    (np.array([[1], [2]]), np.array([0, 3, 3])), (slice(None), None, [1, 1, 0]),
    np.array([True, False, True]), (), (slice(None, None, -1), slice(None), [0, 4]),
]


@pytest.mark.parametrize("index", UPDATE_INDICES, ids=repr)
def test_at_set_add_multiply(index):
    x = sample((3, 4, 5), np.float32)
    view = x[index]
    v = sample(np.shape(view), np.float32, seed=1)
    expected = x.copy()
    expected[index] = v
    check(lambda a, b: a.at[index].set(b), (x, v), expected)
    expected = x.copy()
    np.add.at(expected, index, v)
    check(lambda a, b: a.at[index].add(b), (x, v), expected)
    expected = x.copy()
    np.multiply.at(expected, index, v)
    check(lambda a, b: a.at[index].multiply(b), (x, v), expected)
    check(lambda a, b: a.at[index].mul(b), (x, v), expected)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.uint8])
def test_at_min_max_subtract_with_duplicates(dtype):
    x = sample((6,), dtype)
    idx = np.array([1, 4, 1, 1, 5])
    v = sample((5,), dtype, seed=3)
    for name, ufunc in (("min", np.minimum), ("max", np.maximum), ("subtract", np.subtract)):
        expected = x.copy()
        ufunc.at(expected, idx, v)
        check(lambda a, i, b, name=name: getattr(a.at[i], name)(b), (x, idx, v), expected)


def test_at_divide_power_apply():
    x = np.arange(1.0, 6.0, dtype=np.float32)
    check(lambda a: a.at[1].divide(2.0), (x,), np.array([1, 1, 3, 4, 5], np.float32))
    check(lambda a: a.at[2].power(2.0), (x,), np.array([1, 2, 9, 4, 5], np.float32))
    ints = np.arange(5, dtype=np.int32)
    check(lambda a: a.at[1].divide(2), (ints,), np.array([0, 0.5, 2, 3, 4], np.float32))
    check(lambda a, i: a.at[i].apply(lambda v: v * 2), (ints, np.array([1, 1, 3])),
          np.array([0, 4, 2, 6, 4], np.int32))


def test_at_keeps_dtype_and_weak_type():
    ints = np.arange(5, dtype=np.int32)
    check(lambda a: a.at[1].add(0.6), (ints,), ints)            # computed in float, cast back
    check(lambda a: a.at[2].min(-1.5), (ints,), np.array([0, 1, -1, 3, 4], np.int32))
    f16 = np.ones(3, np.float16)
    check(lambda a: a.at[0].set(7), (f16,), np.array([7, 1, 1], np.float16))
    weak = xnp.asarray(as_array(2.0).at[()].set(3))
    assert weak.weak_type and float(weak) == 3.0


def test_at_get_equals_getitem():
    x = sample((3, 4), np.int32)
    check(lambda a: a.at[1:, [0, 3]].get(), (x,), x[1:, [0, 3]])


# -- NumPy-index fuzz ---------------------------------------------------------------------
@st.composite
def numpy_indices(draw):
    """(shape, index) with a random mix of ints, slices, None, Ellipsis, integer arrays
    (mutually broadcastable) and boolean masks."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    entries, dim = [], 0
    ellipsis_at = draw(st.one_of(st.none(), st.integers(0, len(shape))))
    while dim < len(shape):
        if ellipsis_at is not None and len(entries) == ellipsis_at:
            entries.append(Ellipsis)
            dim = len(shape) - draw(st.integers(0, len(shape) - dim))
            ellipsis_at = None
            continue
        n = shape[dim]
        kind = draw(st.sampled_from(["int", "slice", "none", "array", "mask", "stop"]))
        if kind == "stop":
            break
        if kind == "none":
            entries.append(None)
            continue
        if kind == "int":
            entries.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            bound = st.one_of(st.none(), st.integers(-n - 2, n + 2))
            step = draw(st.one_of(st.none(), st.sampled_from([1, 2, 3, -1, -2])))
            entries.append(slice(draw(bound), draw(bound), step))
        elif kind == "array":
            sub = tuple(draw(st.sampled_from([1, b])) for b in batch[len(batch) - draw(
                st.integers(0, len(batch))):])
            values = draw(st.lists(st.integers(-n, n - 1), min_size=int(np.prod(sub)),
                                   max_size=int(np.prod(sub))))
            entries.append(np.array(values, np.int32).reshape(sub))
        else:
            entries.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))))
        dim += 1
    return shape, tuple(entries)


@given(numpy_indices())
def test_fuzz_getitem_matches_numpy(case):
    shape, index = case
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    try:
        expected = x[index]
    except IndexError:
        return  # masks whose True counts do not broadcast with the other arrays
    got = xnp.asarray(as_array(x))[index]
    np.testing.assert_array_equal(np.asarray(got), expected)
    assert got.shape == expected.shape
    arrays = [i for i, e in enumerate(index) if isinstance(e, np.ndarray) and e.dtype != bool]

    def traced(a, *traced_arrays):
        entries = list(index)
        for i, t in zip(arrays, traced_arrays):
            entries[i] = t
        return a[tuple(entries)]

    jitted = xlapy.jit(traced)(x, *[index[i] for i in arrays])
    np.testing.assert_array_equal(np.asarray(jitted), expected)


@given(numpy_indices(), st.booleans())
def test_fuzz_at_updates_match_numpy(case, add):
    shape, index = case
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    try:
        view_shape = x[index].shape
    except IndexError:
        return
    v = np.arange(100, 100 + int(np.prod(view_shape)), dtype=np.int32).reshape(view_shape)
    expected = x.copy()
    if add:
        np.add.at(expected, index, v)
    else:
        expected[index] = v
    got = xnp.asarray(as_array(x)).at[index]
    got = got.add(v) if add else got.set(v)
    np.testing.assert_array_equal(np.asarray(got), expected)


# -- boolean masks: must-compile --------------------------------------------------------------
def test_traced_boolean_mask_is_a_compile_error():
    x = np.arange(6.0, dtype=np.float32)

    def f(a):
        return a[a > 2]  # the line the error must name

    np.testing.assert_array_equal(np.asarray(f(as_array(x))), x[x > 2])
    line = f.__code__.co_firstlineno + 1
    with pytest.raises(CompileError) as info:
        xlapy.jit(f)(x)
    message = str(info.value)
    assert "boolean mask" in message and "depends on the values" in message
    assert f"{__file__}:{line}" in message


def test_concrete_mask_under_jit_is_fine():
    x = sample((3, 4), np.float32)
    mask = np.array([True, False, True])
    check(lambda a: a[mask], (x,), x[mask])


def test_bad_indices():
    x = as_array(np.zeros((2, 3)))
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., ...]
    with pytest.raises(IndexError, match="integer or boolean"):
        x[np.array([0.5])]
    with pytest.raises(IndexError, match="does not match"):
        x[np.array([True, False, True])]
    with pytest.raises(ValueError, match="step cannot be zero"):
        x[::0]
    with pytest.raises(IndexError):
        x["a"]


# -- take and friends ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_take(dtype):
    x = sample((3, 4), dtype)
    idx = np.array([[0, 2], [-1, 1]])
    check(lambda a, i: xnp.take(a, i), (x, idx), np.take(x, idx))
    check(lambda a, i: xnp.take(a, i, axis=1), (x, idx), np.take(x, idx, axis=1))
    check(lambda a, i: xnp.take(a, i, axis=0, mode="clip"), (x, np.array([5, 0, -1])),
          np.take(x, [5, 0, -1], axis=0, mode="clip"))  # -1 clips to 0, as NumPy
    check(lambda a, i: xnp.take(a, i, axis=-1, mode="wrap"), (x, np.array([5, -6])),
          np.take(x, [5, -6], axis=-1, mode="wrap"))


def test_take_fills_out_of_bounds():
    x = np.arange(10.0, dtype=np.float32)
    check(lambda a, i: xnp.take(a, i), (x, np.array([11, -12, 3, -1])),
          np.array([np.nan, np.nan, 3, 9], np.float32))
    ints = np.arange(10, dtype=np.int32)
    check(lambda a, i: xnp.take(a, i, fill_value=-5), (ints, np.array([11, 2])),
          np.array([-5, 2], np.int32))


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_take_along_axis(axis):
    x = sample((3, 4), np.float32)
    idx = np.argsort(x, axis=axis) if axis is not None else np.argsort(x, axis=None)[:5]
    check(lambda a, i: xnp.take_along_axis(a, i, axis=axis), (x, idx),
          np.take_along_axis(x, idx, axis=axis))


def test_take_along_axis_broadcasts():
    x = sample((3, 4), np.int32)
    idx = np.array([[1], [3], [0]])
    check(lambda a, i: xnp.take_along_axis(a, i, axis=1), (x, idx),
          np.take_along_axis(x, idx, axis=1))


def test_put_along_axis_and_put():
    x = sample((3, 4), np.float32)
    idx = np.array([[1], [3], [0]])
    expected = x.copy()
    np.put_along_axis(expected, idx, 9.0, axis=1)
    check(lambda a, i: xnp.put_along_axis(a, i, 9.0, axis=1, inplace=False), (x, idx), expected)
    expected = x.copy()
    np.put(expected, [0, 5, -1], [7.0, 8.0])
    check(lambda a: xnp.put(a, np.array([0, 5, -1]), np.array([7.0, 8.0], np.float32),
                            inplace=False), (x,), expected)
    with pytest.raises(ValueError, match="inplace=False"):
        xnp.put(as_array(x), 0, 1.0)


def test_unravel_and_ravel_multi_index():
    idx = np.array([0, 5, 11, 7], np.int32)
    want = np.unravel_index(idx, (3, 4))
    check(lambda i: xnp.unravel_index(i, (3, 4)), (idx,),
          [w.astype(np.int32) for w in want])
    rows, cols = np.array([0, 2, 1], np.int32), np.array([3, 0, 2], np.int32)
    check(lambda r, c: xnp.ravel_multi_index((r, c), (3, 4)), (rows, cols),
          np.ravel_multi_index((rows, cols), (3, 4)).astype(np.int32))
    check(lambda r, c: xnp.ravel_multi_index((r, c), (3, 4), mode="clip"),
          (rows + 2, cols), np.ravel_multi_index((rows + 2, cols), (3, 4), mode="clip")
          .astype(np.int32))


def test_index_hlo_is_one_gather_and_one_scatter():
    f = xlapy.jit(lambda a, i: a[i, 1:3])
    text = f.lower(np.zeros((4, 5), np.float32), np.array([0, 2])).as_text()
    assert text.count(" gather(") == 1
    g = xlapy.jit(lambda a, i: a.at[i].add(1.0))
    text = g.lower(np.zeros((4, 5), np.float32), np.array([0, 2])).as_text()
    assert text.count(" scatter(") == 1
    h = xlapy.jit(lambda a: a[1:, ::-1, None])
    text = h.lower(np.zeros((4, 5), np.float32)).as_text()
    assert "gather" not in text and "slice(" in text and "reverse(" in text
