"""lax structural primitives (reshape, transpose, rev, squeeze, expand_dims,
collapse, broadcast, concatenate, pad, full, slice...) and rng_bit_generator:
against NumPy, eagerly and under jit, and their errors."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xlapy
from xlapy import config, lax
from xlapy.core.errors import ConcretizationError
from xlapy.core.pytree import tree_leaves
from xlapy.hlo import parse
from xlapy.hlo.opcode import Opcode

DTYPES = [np.float32, np.int32, np.bool_, np.float16, ml_dtypes.bfloat16, np.complex64,
          np.uint8, np.int64]


def both(fn, *args):
    """fn eagerly and under jit; asserts they agree (values, dtypes, weak types)
    and returns the eager result."""
    eager = fn(*args)
    jitted = xlapy.jit(fn)(*args)
    for e, j in zip(tree_leaves(eager), tree_leaves(jitted), strict=True):
        assert e.dtype == j.dtype and e.shape == j.shape
        assert e.weak_type == j.weak_type
        np.testing.assert_array_equal(np.asarray(e), np.asarray(j))
    return eager


def opcodes(fn, *args):
    module = xlapy.jit(fn).lower(*args).module
    return [i.opcode for i in module.entry_computation.instructions
            if i.opcode not in (Opcode.PARAMETER, Opcode.CONSTANT)]


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.integers(-50, 50, size=shape)
    if np.dtype(dtype) == np.bool_:
        return values > 0
    if np.dtype(dtype).kind == "u":
        values = np.abs(values)
    if np.dtype(dtype).kind == "c":
        return (values + 1j * rng.integers(-5, 5, size=shape)).astype(dtype)
    return values.astype(dtype)


def check(fn, *args, expected):
    out = both(fn, *args)
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected)


# -- reshape and friends -----------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,new", [((2, 3, 4), (6, 4)), ((12,), (3, 1, 4)), ((1,), ()),
                                       ((0, 3), (3, 0))])
def test_reshape(dtype, shape, new):
    x = sample(shape, dtype)
    check(lambda x: lax.reshape(x, new), x, expected=np.reshape(x, new))


def test_reshape_with_dimensions_transposes_first():
    x = sample((2, 3, 4), np.float32)
    check(lambda x: lax.reshape(x, (4, 6), (2, 0, 1)), x,
          expected=np.transpose(x, (2, 0, 1)).reshape(4, 6))


def test_reshape_to_same_shape_emits_nothing():
    x = sample((2, 3), np.float32)
    assert opcodes(lambda x: lax.reshape(x, (2, 3)), x) == []
    assert opcodes(lambda x: lax.reshape(x, (3, 2)), x) == [Opcode.RESHAPE]


def test_reshape_errors():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(TypeError, match=r"lax\.reshape: total size must be unchanged"):
        lax.reshape(x, (4, 2))
    with pytest.raises(TypeError, match="takes no -1"):
        lax.reshape(x, (-1, 2))
    with pytest.raises(TypeError, match="test_structural.py"):  # points at the caller
        xlapy.jit(lambda x: lax.reshape(x, (5,)))(x)


def test_traced_shape_is_a_concretization_error():
    f = xlapy.jit(lambda x, n: lax.reshape(x, (n, 3)))
    with pytest.raises(ConcretizationError, match="new_sizes must be a static integer"):
        f(np.zeros((2, 3), np.float32), 2)


@pytest.mark.parametrize("dtype", DTYPES[:4])
@pytest.mark.parametrize("perm", [(1, 0, 2), (2, 0, 1), (0, 1, 2)])
def test_transpose(dtype, perm):
    x = sample((2, 3, 4), dtype)
    check(lambda x: lax.transpose(x, perm), x, expected=np.transpose(x, perm))


def test_transpose_rejects_a_non_permutation():
    with pytest.raises(TypeError, match="not a permutation"):
        lax.transpose(np.zeros((2, 3)), (0, 0))


@pytest.mark.parametrize("dtype", DTYPES[:4])
@pytest.mark.parametrize("dims", [(0,), (1, 2), (), (-1,)])
def test_rev(dtype, dims):
    x = sample((2, 3, 4), dtype)
    check(lambda x: lax.rev(x, dims), x, expected=np.flip(x, dims) if dims else x)


def test_rev_rejects_repeated_dimensions():
    with pytest.raises(TypeError, match="repeated axis"):
        lax.rev(np.zeros((2, 3)), (0, -2))


@pytest.mark.parametrize("dims", [(0,), (0, 2), (-1,), ()])
def test_squeeze(dims):
    x = sample((1, 3, 1), np.int32)
    check(lambda x: lax.squeeze(x, dims), x, expected=np.squeeze(x, dims) if dims else x)


def test_squeeze_rejects_a_dimension_larger_than_one():
    with pytest.raises(TypeError, match="cannot squeeze dimension 1 of size 3"):
        lax.squeeze(np.zeros((1, 3)), (1,))


@pytest.mark.parametrize("dims", [(0,), (1, 3), (-1,), (0, -1)])
def test_expand_dims(dims):
    x = sample((2, 3), np.float32)
    check(lambda x: lax.expand_dims(x, dims), x, expected=np.expand_dims(x, dims))


def test_expand_dims_rejects_repeats():
    with pytest.raises(TypeError, match="repeated axis"):
        lax.expand_dims(np.zeros(3), (0, -3))


@pytest.mark.parametrize("start,stop,new", [(0, 2, (6, 4, 5)), (1, None, (2, 60)),
                                            (-2, None, (2, 3, 20)), (1, 1, (2, 1, 3, 4, 5))])
def test_collapse(start, stop, new):
    x = sample((2, 3, 4, 5), np.float32)
    check(lambda x: lax.collapse(x, start, stop), x, expected=x.reshape(new))


def test_broadcast_adds_leading_dimensions():
    x = sample((3,), np.int32)
    check(lambda x: lax.broadcast(x, (2, 4)), x, expected=np.broadcast_to(x, (2, 4, 3)))


# -- concatenate and pad -----------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_concatenate(dtype, dim):
    xs = [sample((2, 3), dtype, i) for i in range(3)]
    xs[1] = sample((2, 3)[:dim % 2] + (1,) + (2, 3)[dim % 2 + 1:], dtype, 1)
    check(lambda *xs: lax.concatenate(xs, dim), *xs, expected=np.concatenate(xs, dim))


def test_concatenate_of_one_array_is_that_array():
    x = sample((2,), np.float32)
    assert opcodes(lambda x: lax.concatenate([x], 0), x) == []


def test_concatenate_errors():
    with pytest.raises(TypeError, match="one dtype"):
        lax.concatenate([np.zeros(2, np.float32), np.zeros(2, np.int32)], 0)
    with pytest.raises(TypeError, match="does not match operand 0"):
        lax.concatenate([np.zeros((2, 3)), np.zeros((3, 3))], 1)
    with pytest.raises(TypeError, match="non-empty"):
        lax.concatenate([], 0)


def pad_reference(x, value, config):
    """NumPy reference for lax.pad: interior padding, then low/high (negative crops)."""
    out = x
    for axis, (lo, hi, interior) in enumerate(config):
        n = out.shape[axis]
        size = n + max(n - 1, 0) * interior
        shape = list(out.shape)
        shape[axis] = size
        dilated = np.full(shape, value, dtype=x.dtype)
        index = [slice(None)] * out.ndim
        index[axis] = slice(None, None, interior + 1)
        dilated[tuple(index)] = out
        widths = [(0, 0)] * out.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        padded = np.pad(dilated, widths, constant_values=value)
        index[axis] = slice(max(-lo, 0), padded.shape[axis] - max(-hi, 0))
        out = padded[tuple(index)]
    return out


PAD = st.tuples(st.integers(-2, 3), st.integers(-2, 3), st.integers(0, 2))
PAD_FN = xlapy.jit(lambda x, v, config: lax.pad(x, v, config), static_argnums=(2,))


@given(st.tuples(PAD, PAD))
def test_pad_matches_reference(config):
    x = sample((3, 4), np.float32)
    expected = pad_reference(x, np.float32(-7), config)
    if any(d < 0 for d in expected.shape) or expected.shape != tuple(
            lo + hi + n + max(n - 1, 0) * i for (lo, hi, i), n in zip(config, x.shape)):
        return  # crops beyond the data: not a valid lax.pad
    eager = lax.pad(x, np.float32(-7), config)
    np.testing.assert_array_equal(np.asarray(eager), expected)
    np.testing.assert_array_equal(np.asarray(PAD_FN(x, np.float32(-7), config)), expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pad_dtypes_with_weak_padding_value(dtype):
    x = sample((2, 3), dtype)
    config = [(1, 0, 1), (0, 2, 0)]
    value = True if np.dtype(dtype) == np.bool_ else 3
    expected = pad_reference(x, np.asarray(value).astype(dtype), config)
    check(lambda x: lax.pad(x, value, config), x, expected=expected)


def test_pad_errors():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(TypeError, match="padding_value has dtype int32"):
        lax.pad(x, np.int32(0), [(0, 0, 0)] * 2)
    with pytest.raises(TypeError, match="one \\(low, high, interior\\) triple"):
        lax.pad(x, 0.0, [(0, 0, 0)])
    with pytest.raises(TypeError, match="must be non-negative"):
        lax.pad(x, 0.0, [(0, 0, -1), (0, 0, 0)])
    with pytest.raises(TypeError, match="negative size"):
        lax.pad(x, 0.0, [(-2, -1, 0), (0, 0, 0)])


# -- full --------------------------------------------------------------------------------
def test_full_dtypes_and_weak_types():
    assert both(lambda: lax.full((2, 3), 1.5)).weak_type
    out = both(lambda: lax.full((2,), 1.5, np.int32))
    assert out.dtype == np.int32 and not out.weak_type
    np.testing.assert_array_equal(np.asarray(out), [1, 1])
    out = both(lambda: lax.full((), np.uint8(7)))
    assert out.dtype == np.uint8 and out.shape == () and not out.weak_type


def test_full_with_a_traced_fill_value():
    check(lambda v: lax.full((2, 2), v), np.float32(3),
          expected=np.full((2, 2), 3, np.float32))


def test_full_rejects_an_array_fill_value():
    with pytest.raises(TypeError, match="fill_value must be a scalar"):
        lax.full((2,), np.zeros(2))


def test_full_like_follows_x():
    x = sample((2, 3), np.int32)
    check(lambda x: lax.full_like(x, 7), x, expected=np.full((2, 3), 7, np.int32))
    check(lambda x: lax.full_like(x, 7, np.float16, (4,)), x,
          expected=np.full((4,), 7, np.float16))
    check(lambda x: lax.zeros_like_array(x), x, expected=np.zeros((2, 3), np.int32))
    assert lax.full_like(2.0, 1).weak_type and not lax.full_like(x, 1).weak_type


# -- static slicing ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES[:4])
@pytest.mark.parametrize("start,limit,strides", [((0, 1), (3, 4), None), ((1, 0), (3, 4), (2, 3)),
                                                 ((2, 2), (2, 4), (1, 1))])
def test_slice(dtype, start, limit, strides):
    x = sample((3, 4), dtype)
    steps = strides or (1, 1)
    expected = x[start[0]:limit[0]:steps[0], start[1]:limit[1]:steps[1]]
    check(lambda x: lax.slice(x, start, limit, strides), x, expected=expected)


def test_slice_errors():
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(TypeError, match="dimension 1: need 0 <= start"):
        lax.slice(x, (0, 3), (3, 2))
    with pytest.raises(TypeError, match="stride 0 of dimension 0"):
        lax.slice(x, (0, 0), (3, 4), (0, 1))
    with pytest.raises(TypeError, match="one entry per dimension"):
        lax.slice(x, (0,), (3,))


@pytest.mark.parametrize("start,limit,stride,axis", [(1, 3, 1, 0), (None, None, 2, 1),
                                                     (-3, -1, 1, 1), (0, None, 3, -1)])
def test_slice_in_dim(start, limit, stride, axis):
    x = sample((3, 5), np.int32)
    index = [slice(None)] * 2
    index[axis] = slice(start, limit, stride)
    check(lambda x: lax.slice_in_dim(x, start, limit, stride, axis), x, expected=x[tuple(index)])


@pytest.mark.parametrize("index,axis,keepdims", [(1, 0, True), (-1, 1, False), (0, -1, True)])
def test_index_in_dim(index, axis, keepdims):
    x = sample((3, 5), np.float32)
    expected = np.take(x, [index], axis) if keepdims else np.take(x, index, axis)
    check(lambda x: lax.index_in_dim(x, index, axis, keepdims), x, expected=expected)


def test_index_in_dim_out_of_bounds():
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        lax.index_in_dim(np.zeros((3, 2)), 3)


def test_index_in_dim_with_a_traced_index_is_dynamic():
    x = sample((4, 2), np.float32)
    out = xlapy.jit(lambda x, i: lax.index_in_dim(x, i, keepdims=False))(x, np.int32(2))
    np.testing.assert_array_equal(np.asarray(out), x[2])


def test_lowered_text_parses_back():
    x = sample((2, 3), np.float32)

    def f(x):
        y = lax.pad(lax.rev(lax.transpose(x, (1, 0)), (0,)), 0.0, [(1, -1, 1), (0, 1, 0)])
        return lax.concatenate([lax.slice(y, (0, 0), (4, 2), (2, 1)), lax.full((2, 2), 1.0)], 1)

    lowered = xlapy.jit(f).lower(x)
    parsed = parse(lowered.as_text())
    ops = [i.opcode for i in parsed.entry_computation.instructions]
    assert ops == [i.opcode for i in lowered.module.entry_computation.instructions]
    assert Opcode.PAD in ops and Opcode.CONCATENATE in ops


# -- rng_bit_generator -------------------------------------------------------------------
KEY = np.array([0, 42, 0, 7], np.uint32)


def test_rng_bit_generator_matches_xla_bits():
    # Values from jax 0.10.2 on CPU: lax.rng_bit_generator(KEY, (2, 3)).
    key, bits = both(lambda k: lax.rng_bit_generator(k, (2, 3)), KEY)
    np.testing.assert_array_equal(np.asarray(key), [0, 42, 2, 7])
    np.testing.assert_array_equal(np.asarray(bits), [[4107053721, 1083478763, 2351569131],
                                                     [3932273839, 982302633, 2356433821]])
    key, bits = both(lambda k: lax.rng_bit_generator(k, (2, 3), np.uint8,
                                                     lax.RandomAlgorithm.RNG_THREE_FRY), KEY)
    np.testing.assert_array_equal(np.asarray(key), [0, 42, 3, 7])
    np.testing.assert_array_equal(np.asarray(bits), [[47, 207, 34], [159, 200, 129]])


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
@pytest.mark.parametrize("algorithm", list(lax.RandomAlgorithm))
def test_rng_bit_generator_shapes_and_dtypes(dtype, algorithm):
    key, bits = both(lambda k: lax.rng_bit_generator(k, (3, 2), dtype, algorithm), KEY)
    assert key.dtype == np.uint32 and key.shape == (4,)
    assert bits.dtype == dtype and bits.shape == (3, 2) and not bits.weak_type


def test_rng_bit_generator_takes_a_u64_state():
    state = KEY.view(np.uint64)
    with config.enable_x64(True):   # a uint64 array is uint32 without x64
        key64, bits64 = both(lambda k: lax.rng_bit_generator(k, (5,)), state)
    key32, bits32 = lax.rng_bit_generator(KEY, (5,))
    np.testing.assert_array_equal(np.asarray(key64).view(np.uint32), np.asarray(key32))
    np.testing.assert_array_equal(np.asarray(bits64), np.asarray(bits32))


def test_rng_bit_generator_errors():
    with pytest.raises(TypeError, match="unsupported dtype int32"):
        lax.rng_bit_generator(KEY, (2,), np.int32)
    with pytest.raises(TypeError, match="uint32\\[4\\] or uint64\\[2\\]"):
        lax.rng_bit_generator(KEY[:2], (2,))


def test_rng_bit_generator_against_jax():
    jax = pytest.importorskip("jax")
    for algorithm in lax.RandomAlgorithm:
        for shape, dtype in [((7,), np.uint32), ((2, 5), np.uint8), ((3, 3), np.uint16)]:
            ours = lax.rng_bit_generator(KEY, shape, dtype, algorithm)
            theirs = jax.lax.rng_bit_generator(KEY, shape, dtype,
                                               jax.lax.RandomAlgorithm(int(algorithm)))
            for a, b in zip(ours, theirs):
                np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
