"""xnp shape manipulation against NumPy, eagerly and under jit (the two agreeing):
reshape and transposes, joining and splitting, tile / repeat, pad, flips and
rolls, diagonals, insert / delete, differences."""

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




def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 50, shape).astype(dtype)
    return (rng.standard_normal(shape) * 10).round(1).astype(dtype)


DTYPES = [np.float32, np.int32, np.bool_, np.uint8, np.float64, BF16]
SHAPES = [(6,), (2, 3), (2, 3, 4)]


# -- reshape and transposes -----------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_reshape_ravel_transpose(shape, dtype):
    x = sample(shape, dtype)
    check(lambda a: xnp.reshape(a, (-1,)), (x,), x.reshape(-1))
    check(lambda a: xnp.reshape(a, (2, -1)), (x,), x.reshape(2, -1))
    check(lambda a: a.reshape(x.size // 2, 2), (x,), x.reshape(x.size // 2, 2))
    check(lambda a: xnp.reshape(a, (2, -1), order="F"), (x,), x.reshape((2, -1), order="F"))
    check(lambda a: xnp.ravel(a, order="F"), (x,), x.ravel(order="F"))
    check(lambda a: a.ravel(), (x,), x.ravel())
    check(xnp.transpose, (x,), x.T)
    check(lambda a: a.T, (x,), x.T)
    axes = tuple(np.random.default_rng(1).permutation(x.ndim))
    check(lambda a: xnp.transpose(a, axes), (x,), np.transpose(x, axes))


def test_reshape_errors():
    x = as_array(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="one unknown"):
        xnp.reshape(x, (-1, -1))
    with pytest.raises(ValueError, match="cannot reshape"):
        xnp.reshape(x, (4, -1))
    with pytest.raises(ValueError, match="cannot reshape"):
        xnp.reshape(x, (5,))


@pytest.mark.parametrize("source,destination", [(0, -1), (-1, 0), ((0, 1), (-1, -2)),
                                                ([2, 0], [0, 1])])
def test_moveaxis(source, destination):
    x = sample((2, 3, 4), np.float32)
    check(lambda a: xnp.moveaxis(a, source, destination), (x,),
          np.moveaxis(x, source, destination))


def test_swapaxes_matrix_transpose_permute_dims():
    x = sample((2, 3, 4), np.int32)
    check(lambda a: xnp.swapaxes(a, 0, -1), (x,), np.swapaxes(x, 0, -1))
    check(xnp.matrix_transpose, (x,), np.matrix_transpose(x))
    check(lambda a: a.mT, (x,), np.swapaxes(x, -1, -2))
    check(lambda a: xnp.permute_dims(a, (1, 0, 2)), (x,), np.transpose(x, (1, 0, 2)))
    with pytest.raises(ValueError):
        xnp.matrix_transpose(as_array(np.zeros(3)))


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
def test_squeeze_and_expand_dims(axis):
    x = sample((1, 3, 1), np.float32)
    check(lambda a: xnp.squeeze(a, axis), (x,), np.squeeze(x, axis))
    if axis is not None:
        check(lambda a: xnp.expand_dims(a, axis), (x,), np.expand_dims(x, axis))
    with pytest.raises(ValueError, match="size not equal to one"):
        xnp.squeeze(as_array(x), 1)


# -- joining ----------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_concatenate_promotes(axis):
    a, b = sample((2, 3), np.float32), sample((2, 3), np.int32, seed=1)
    check(lambda x, y: xnp.concatenate([x, y], axis=axis), (a, b),
          np.concatenate([a, b], axis=axis).astype(np.float32))
    check(lambda x, y: xnp.concat((x, y), axis=axis), (a, b),
          np.concatenate([a, b], axis=axis).astype(np.float32))
    check(lambda x, y: xnp.concatenate([x, y], axis=axis, dtype=np.int32), (a, b),
          np.concatenate([a.astype(np.int32), b], axis=axis))


def test_concatenate_of_an_array_joins_its_rows():
    a = sample((3, 2), np.float16)
    check(lambda x: xnp.concatenate(x), (a,), np.concatenate(a))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack(axis):
    a, b, c = (sample((2, 3), np.int32, seed=s) for s in range(3))
    check(lambda x, y, z: xnp.stack([x, y, z], axis), (a, b, c), np.stack([a, b, c], axis))
    with pytest.raises(ValueError, match="same shape"):
        xnp.stack([as_array(a), as_array(np.zeros((3, 2)))])


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 2)], ids=str)
def test_hstack_vstack_dstack_column_stack(shape):
    a, b = sample(shape, np.float32), sample(shape, np.float32, seed=1)
    check(lambda x, y: xnp.hstack([x, y]), (a, b), np.hstack([a, b]))
    check(lambda x, y: xnp.vstack([x, y]), (a, b), np.vstack([a, b]))
    check(lambda x, y: xnp.dstack([x, y]), (a, b), np.dstack([a, b]))
    if len(shape) <= 2:
        check(lambda x, y: xnp.column_stack([x, y]), (a, b), np.column_stack([a, b]))


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_append(axis):
    a, b = sample((2, 3), np.float32), sample((2, 3), np.float32, seed=1)
    check(lambda x, y: xnp.append(x, y, axis=axis), (a, b), np.append(a, b, axis=axis))


# -- splitting --------------------------------------------------------------------------------
@pytest.mark.parametrize("sections", [1, 2, 3, [1, 4], [2, 2, 5], [7, 10], np.array([3])])
def test_split_and_array_split(sections):
    x = sample((6, 2), np.int32)
    check(lambda a: xnp.array_split(a, sections), (x,), np.array_split(x, sections))
    check(lambda a: xnp.split(a, sections), (x,), np.split(x, sections))
    check(lambda a: xnp.array_split(a.T, sections, axis=1), (x,),
          np.array_split(x.T, sections, axis=1))


def test_split_uneven_and_helpers():
    x = sample((4, 6, 2), np.float32)
    check(lambda a: xnp.array_split(a, 4, axis=1), (x,), np.array_split(x, 4, axis=1))
    with pytest.raises(ValueError, match="equal division"):
        xnp.split(as_array(x), 4, axis=1)
    check(lambda a: xnp.hsplit(a, 3), (x,), np.hsplit(x, 3))
    check(lambda a: xnp.vsplit(a, 2), (x,), np.vsplit(x, 2))
    check(lambda a: xnp.dsplit(a, [1]), (x,), np.dsplit(x, [1]))
    check(lambda a: xnp.hsplit(a[0, :, 0], 2), (x,), np.hsplit(x[0, :, 0], 2))


# -- tiling and repeating -----------------------------------------------------------------
@pytest.mark.parametrize("reps", [2, (2, 1), (1, 3), (2, 1, 2), (0, 2)], ids=str)
@pytest.mark.parametrize("shape", [(3,), (2, 3)], ids=str)
def test_tile(shape, reps):
    x = sample(shape, np.int32)
    check(lambda a: xnp.tile(a, reps), (x,), np.tile(x, reps))


@pytest.mark.parametrize("repeats,axis", [(2, None), (3, 0), (2, 1), ([1, 0, 2], 1),
                                          (np.array([2, 1]), 0), (0, 0)])
def test_repeat_static(repeats, axis):
    x = sample((2, 3), np.float32)
    check(lambda a: xnp.repeat(a, repeats, axis=axis), (x,), np.repeat(x, repeats, axis=axis))


def test_repeat_traced_needs_total_repeat_length():
    x = np.array([1, 2, 3], np.int32)
    counts = np.array([2, 0, 1], np.int32)
    check(lambda a, r: xnp.repeat(a, r, total_repeat_length=3), (x, counts),
          np.array([1, 1, 3], np.int32))
    check(lambda a, r: xnp.repeat(a, r, total_repeat_length=5), (x, counts),
          np.array([1, 1, 3, 3, 3], np.int32))   # padded with the last element, as JAX
    check(lambda a, r: xnp.repeat(a, r, total_repeat_length=2), (x, np.array([1, 1, 1])),
          np.array([1, 2], np.int32))           # cut
    check(lambda a: xnp.repeat(a, 2, total_repeat_length=6), (x,), np.repeat(x, 2))

    def f(a, r):
        return xnp.repeat(a, r)  # the line the error must name

    with pytest.raises(CompileError) as info:
        xlapy.jit(f)(x, counts)
    assert "total_repeat_length" in str(info.value)
    assert f"{__file__}:{f.__code__.co_firstlineno + 1}" in str(info.value)


# -- padding ----------------------------------------------------------------------------------
PAD_WIDTHS = [1, (1, 2), ((0, 1), (2, 0)), ((3, 4), (5, 1))]


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap",
                                  "maximum", "minimum", "mean", "empty"])
@pytest.mark.parametrize("pad_width", PAD_WIDTHS, ids=str)
def test_pad_modes(mode, pad_width):
    x = sample((3, 2), np.float32)
    expected = np.pad(x, pad_width, mode=mode)
    if mode == "empty":
        expected = np.pad(x, pad_width)
    check(lambda a: xnp.pad(a, pad_width, mode=mode), (x,), expected)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_, BF16], ids=str)
def test_pad_dtypes_and_constants(dtype):
    x = sample((2, 3), dtype)
    check(lambda a: xnp.pad(a, 2), (x,), np.pad(x, 2))
    check(lambda a: xnp.pad(a, ((1, 0), (0, 2)), constant_values=1), (x,),
          np.pad(x, ((1, 0), (0, 2)), constant_values=1))
    if dtype != np.bool_:
        check(lambda a: xnp.pad(a, 1, "reflect"), (x,), np.pad(x, 1, "reflect"))
        check(lambda a: xnp.pad(a, ((1, 2), (3, 1)), constant_values=((5, 6), (7, 8))), (x,),
              np.pad(x, ((1, 2), (3, 1)), constant_values=((5, 6), (7, 8))))


def test_pad_stat_length_and_errors():
    x = sample((5, 4), np.float32)
    check(lambda a: xnp.pad(a, 2, "maximum", stat_length=2), (x,),
          np.pad(x, 2, "maximum", stat_length=2))
    ints = sample((5,), np.int32)
    check(lambda a: xnp.pad(a, 2, "mean"), (ints,), np.pad(ints, 2, "mean"))
    with pytest.raises(ValueError, match="negative"):
        xnp.pad(as_array(x), -1)
    with pytest.raises(NotImplementedError):
        xnp.pad(as_array(x), 1, "linear_ramp")


# -- flips, rolls, rotations ----------------------------------------------------------------
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
def test_flip(axis):
    x = sample((2, 3, 4), np.int32)
    check(lambda a: xnp.flip(a, axis), (x,), np.flip(x, axis))
    check(xnp.fliplr, (x,), np.fliplr(x))
    check(xnp.flipud, (x,), np.flipud(x))


@pytest.mark.parametrize("shift,axis", [(1, None), (-2, None), (7, 0), (2, 1), ((1, 2), (0, 1)),
                                        (3, (0, 1)), (0, 1), (-5, -1)])
def test_roll_static(shift, axis):
    x = sample((3, 4), np.float32)
    check(lambda a: xnp.roll(a, shift, axis), (x,), np.roll(x, shift, axis))


@pytest.mark.parametrize("shift", [0, 1, 5, -3, -9])
def test_roll_traced_shift(shift):
    x = sample((3, 4), np.float32)
    check(lambda a, s: xnp.roll(a, s, 1), (x, np.int32(shift)), np.roll(x, shift, 1))
    check(lambda a, s: xnp.roll(a, s), (x, np.int32(shift)), np.roll(x, shift))


@pytest.mark.parametrize("k", [0, 1, 2, 3, -1, 5])
@pytest.mark.parametrize("axes", [(0, 1), (1, 0), (0, 2), (-1, 1)])
def test_rot90(k, axes):
    x = sample((2, 3, 4), np.int32)
    check(lambda a: xnp.rot90(a, k, axes), (x,), np.rot90(x, k, axes))


def test_atleast():
    for shape in [(), (3,), (2, 3), (2, 3, 4)]:
        x = sample(shape, np.float32)
        check(xnp.atleast_1d, (x,), np.atleast_1d(x))
        check(xnp.atleast_2d, (x,), np.atleast_2d(x))
        check(xnp.atleast_3d, (x,), np.atleast_3d(x))
    a, b = sample((), np.int32), sample((2,), np.int32)
    check(lambda x, y: xnp.atleast_2d(x, y), (a, b), np.atleast_2d(a, b))


# -- diagonals --------------------------------------------------------------------------------
@pytest.mark.parametrize("offset", [0, 1, -1, 2, -3, 5])
@pytest.mark.parametrize("axes", [(0, 1), (1, 0), (0, 2), (-1, -2)])
def test_diagonal_and_trace(offset, axes):
    x = sample((3, 4, 5), np.int32)
    check(lambda a: xnp.diagonal(a, offset, *axes), (x,), np.diagonal(x, offset, *axes))
    check(lambda a: xnp.trace(a, offset, *axes), (x,),
          np.trace(x, offset, *axes).astype(np.int32))


def test_trace_dtypes():
    x = sample((3, 3), np.int8)
    check(xnp.trace, (x,), np.int32(np.trace(x)))
    f = sample((3, 3), np.float16)
    check(xnp.trace, (f,), np.trace(f))


# -- insert, delete, copy ---------------------------------------------------------------------
@pytest.mark.parametrize("obj,values,axis", [
    (1, 9, None), (-1, [7, 8], None), ([0, 2, 2], [5, 6, 7], None), (slice(0, 3), 0, 1),
    (1, [[1], [2]], 1), ([1], [[1], [2]], 1), (2, 5.5, 0), ([2, 0], 1, 1), ([1], [7, 8], None),
    (np.array([], int), 3, 0)])
def test_insert(obj, values, axis):
    x = sample((2, 3), np.int32)
    check(lambda a: xnp.insert(a, obj, values, axis), (x,), np.insert(x, obj, values, axis))


@pytest.mark.parametrize("obj,axis", [(1, None), (-1, 0), ([0, 2], 1), (slice(None, None, 2), 1),
                                      ([], 0), (np.array([1, 1]), 1)])
def test_delete(obj, axis):
    x = sample((2, 3), np.float32)
    check(lambda a: xnp.delete(a, obj, axis), (x,), np.delete(x, obj, axis))


def test_copy():
    x = sample((2, 3), np.float32)
    check(xnp.copy, (x,), x)
    original = as_array(x)
    duplicate = xnp.copy(original)
    assert duplicate is not original and np.shares_memory(np.asarray(duplicate), x) is False


# -- differences ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint8, np.bool_], ids=str)
@pytest.mark.parametrize("n,axis", [(1, -1), (2, 0), (0, 1), (3, 1)])
def test_diff(dtype, n, axis):
    x = sample((4, 5), dtype)
    check(lambda a: xnp.diff(a, n, axis), (x,), np.diff(x, n, axis))


def test_diff_prepend_append_and_ediff1d():
    x = sample((3, 4), np.float32)
    check(lambda a: xnp.diff(a, axis=1, prepend=0.0, append=a[:, :1]), (x,),
          np.diff(x, axis=1, prepend=0.0, append=x[:, :1]).astype(np.float32))  # 0.0 is weak
    v = sample((5,), np.int32)
    check(xnp.ediff1d, (v,), np.ediff1d(v))
    check(lambda a: xnp.ediff1d(a, to_end=[99, 98], to_begin=-1), (v,),
          np.ediff1d(v, to_end=[99, 98], to_begin=-1))


# -- hypothesis: random shapes and axes -----------------------------------------------------
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_fuzz_moveaxis_flip_roll(shape, data):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    ndim = len(shape)
    src = data.draw(st.integers(-ndim, ndim - 1))
    dst = data.draw(st.integers(-ndim, ndim - 1))
    shift = data.draw(st.integers(-6, 6))
    got = xnp.roll(xnp.flip(xnp.moveaxis(as_array(x), src, dst), dst), shift, src)
    want = np.roll(np.flip(np.moveaxis(x, src, dst), dst), shift, src)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_shape_ndim_size_unstack_resize():
    x = sample((2, 3), np.float32)
    assert xnp.shape(x) == (2, 3) and xnp.ndim(as_array(x)) == 2
    assert xnp.size(x) == 6 and xnp.size(x, -1) == 3
    check(lambda a: xnp.unstack(a, axis=1), (x,), [x[:, i] for i in range(3)])
    check(lambda a: xnp.resize(a, (4, 4)), (x,), np.resize(x, (4, 4)))
    check(lambda a: xnp.resize(a, 4), (x,), np.resize(x, 4))
