"""Interpreter data-movement rules against NumPy and hand-computed values, for
every dtype: constant, iota, tuple, get-tuple-element, copy, copy-start/done,
domain, add-dependency, bitcast (with physical layouts), broadcast, reshape,
transpose, reverse, slice, concatenate, pad, get-dimension-size."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hlo.evaluator.util import run_op, shape_of
from xlapy.hlo.attributes import PaddingConfig, PaddingDimension, SliceRange
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.evaluator.evaluator import Evaluator
from xlapy.hlo.evaluator.rules import TOKEN
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

ALL_TYPES = ["pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
             "f16", "bf16", "f32", "f64", "c64", "c128"]


def sample(type_name: str, dims, seed: int = 0) -> np.ndarray:
    """Random values of an HLO type, spanning its range; floats start with the
    values a careless copy would change (NaN, -0.0, inf)."""
    rng = np.random.default_rng(seed)
    dtype = PrimitiveType.from_text(type_name).numpy
    count = int(np.prod(dims, dtype=np.int64))
    if type_name == "pred":
        flat = rng.random(count) < 0.5
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        flat = rng.integers(info.min, info.max, count, dtype=dtype, endpoint=True)
    else:
        real = (rng.standard_normal(count) * 10).astype(np.float32)
        real[:3] = [np.nan, -0.0, np.inf][:count]
        flat = real.astype(dtype)
        if dtype.kind == "c":
            flat = flat + 1j * rng.standard_normal(count).astype(dtype)
    return np.asarray(flat, dtype=dtype).reshape(dims)


def assert_same(actual, expected) -> None:
    """Same dtype, dims and bits (so NaN and -0.0 compare as themselves)."""
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.tobytes() == expected.tobytes(), (actual, expected)


def array_shape(type_name: str, dims, layout=None) -> Shape:
    return Shape.array(type_name, dims, layout)


def evaluate(opcode: Opcode, shape: Shape, operand_shapes=(), operand_values=(), **kwargs):
    """Evaluate one instruction whose operands have exactly `operand_shapes`
    (layouts included), which run_op cannot express."""
    params = [HloInstruction(Opcode.PARAMETER, s, name=f"p{i}", parameter_number=i)
              for i, s in enumerate(operand_shapes)]
    instruction = HloInstruction(opcode, shape, params, name="result", **kwargs)
    return Evaluator().evaluate(instruction, list(operand_values))


# -- constant, iota, tuples, copies --------------------------------------------------
@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_constant_returns_a_copy_of_the_literal(type_name):
    literal = sample(type_name, (2, 3))
    original = literal.copy()
    shape = shape_of(literal)
    value = evaluate(Opcode.CONSTANT, shape, literal=literal)
    assert_same(value, original)
    value[...] = value[0, 0]  # mutating the result leaves the module's literal alone
    assert_same(literal, original)


def test_constant_scalar_and_tuple():
    scalar = np.array(2.5, np.float32)
    assert_same(evaluate(Opcode.CONSTANT, Shape.scalar("f32"), literal=scalar), scalar)
    literal = (np.array([1, 2], np.int32), np.array(True))
    value = evaluate(Opcode.CONSTANT, shape_of(literal), literal=literal)
    assert isinstance(value, tuple)
    assert_same(value[0], literal[0])
    assert_same(value[1], literal[1])
    assert value[0] is not literal[0]


@pytest.mark.parametrize("type_name", ALL_TYPES)
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_iota_every_type_and_dimension(type_name, dim):
    dims = (3, 4, 5)
    value = run_op(Opcode.IOTA, array_shape(type_name, dims), iota_dimension=dim)
    counter = np.indices(dims)[dim]
    dtype = PrimitiveType.from_text(type_name).numpy
    expected = counter != 0 if type_name == "pred" else counter.astype(dtype)
    assert_same(value, expected)


def test_iota_matches_xla_example():
    value = run_op(Opcode.IOTA, array_shape("s32", (4, 8)), iota_dimension=0)
    assert_same(value, np.repeat(np.arange(4, dtype=np.int32)[:, None], 8, axis=1))
    value = run_op(Opcode.IOTA, array_shape("s32", (4, 8)), iota_dimension=1)
    assert_same(value, np.tile(np.arange(8, dtype=np.int32), (4, 1)))


def test_iota_converts_like_convert():
    # u8 wraps modulo 256; bf16 rounds 257 -> 256 and 259 -> 260 (ties to even).
    wrapped = run_op(Opcode.IOTA, array_shape("u8", (300,)), iota_dimension=0)
    assert wrapped[255] == 255 and wrapped[256] == 0 and wrapped[299] == 43
    rounded = run_op(Opcode.IOTA, array_shape("bf16", (300,)), iota_dimension=0)
    assert rounded.dtype == ml_dtypes.bfloat16
    assert [float(rounded[i]) for i in (255, 256, 257, 258, 259)] == [255, 256, 256, 258, 260]
    scalar = run_op(Opcode.IOTA, array_shape("f32", (0, 3)), iota_dimension=1)
    assert scalar.shape == (0, 3)


@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_tuple_and_get_tuple_element(type_name):
    a, b = sample(type_name, (2,)), sample("s32", (3,), seed=1)
    shape = Shape.tuple([shape_of(a), shape_of(b)])
    packed = run_op(Opcode.TUPLE, shape, a, b)
    assert isinstance(packed, tuple)
    assert_same(packed[0], a)
    assert_same(packed[1], b)
    assert_same(run_op(Opcode.GET_TUPLE_ELEMENT, shape_of(a), (a, b), index=0), a)
    assert_same(run_op(Opcode.GET_TUPLE_ELEMENT, shape_of(b), (a, b), index=1), b)


def test_get_tuple_element_of_nested_tuple():
    inner = (np.array([1.0], np.float32), np.array(7, np.int64))
    value = run_op(Opcode.GET_TUPLE_ELEMENT, shape_of(inner), (np.array(True), inner), index=1)
    assert isinstance(value, tuple)
    assert_same(value[1], inner[1])


@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_copy_is_equal_but_distinct(type_name):
    x = sample(type_name, (3, 2))
    value = run_op(Opcode.COPY, shape_of(x), x)
    assert_same(value, x)
    assert not np.shares_memory(value, x)


def test_copy_of_a_tuple_copies_each_element():
    x = (np.arange(3, dtype=np.int32), np.ones(2, np.float64))
    value = run_op(Opcode.COPY, shape_of(x), x)
    assert_same(value[0], x[0])
    assert_same(value[1], x[1])
    assert not np.shares_memory(value[0], x[0])


@pytest.mark.parametrize("type_name", ["pred", "s8", "bf16", "c128"])
def test_copy_start_and_copy_done(type_name):
    x = sample(type_name, (4,))
    start_shape = Shape.tuple([shape_of(x), shape_of(x), Shape.scalar("u32")])
    started = run_op(Opcode.COPY_START, start_shape, x)
    assert_same(started[0], x)
    assert_same(started[1], x)
    assert_same(started[2], np.uint32(0))
    assert_same(run_op(Opcode.COPY_DONE, shape_of(x), started), x)


@pytest.mark.parametrize("type_name", ["pred", "u16", "f16", "c64"])
def test_domain_and_add_dependency_pass_the_operand_through(type_name):
    x = sample(type_name, (2, 2))
    assert_same(run_op(Opcode.DOMAIN, shape_of(x), x), x)
    shape = shape_of(x)
    value = evaluate(Opcode.ADD_DEPENDENCY, shape, [shape, Shape.token()], [x, TOKEN])
    assert_same(value, x)


# -- bitcast --------------------------------------------------------------------------
def physical_order(value: np.ndarray, minor_to_major) -> np.ndarray:
    """Reference: the buffer of `value` stored under a layout, by explicit strides."""
    strides = [0] * value.ndim
    step = 1
    for dim in minor_to_major:
        strides[dim] = step
        step *= value.shape[dim]
    buffer = np.empty(value.size, value.dtype)
    for index in np.ndindex(*value.shape):
        buffer[sum(i * s for i, s in zip(index, strides))] = value[index]
    return buffer


@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_bitcast_with_default_layouts_is_a_reshape(type_name):
    x = sample(type_name, (2, 3, 4))
    value = run_op(Opcode.BITCAST, array_shape(type_name, (6, 4), (1, 0)), x)
    assert_same(value, x.reshape(6, 4))


@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_bitcast_column_major_to_row_major_is_a_transpose(type_name):
    # f32[2,3]{0,1} and f32[3,2]{1,0} hold the same buffer: the classic transpose bitcast.
    x = sample(type_name, (2, 3))
    operand = array_shape(type_name, (2, 3), (0, 1))
    value = evaluate(Opcode.BITCAST, array_shape(type_name, (3, 2), (1, 0)), [operand], [x])
    assert_same(value, x.T)
    flat = evaluate(Opcode.BITCAST, array_shape(type_name, (6,), (0,)), [operand], [x])
    assert_same(flat, x.ravel(order="F"))


def test_bitcast_between_non_default_layouts():
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    operand = array_shape("s32", (2, 3, 4), (1, 2, 0))  # dim 1 fastest, then 2, then 0
    result = array_shape("s32", (4, 6), (0, 1))        # column-major [4,6]
    value = evaluate(Opcode.BITCAST, result, [operand], [x])
    assert_same(physical_order(value, (0, 1)), physical_order(x, (1, 2, 0)))
    # hand-computed: the buffer starts x[0,0,0], x[0,1,0], x[0,2,0], x[0,0,1], ...
    assert list(physical_order(x, (1, 2, 0))[:4]) == [0, 4, 8, 1]
    assert value[0, 0] == 0 and value[1, 0] == 4 and value[2, 0] == 8 and value[3, 0] == 1


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_bitcast_preserves_the_physical_buffer(data):
    dims = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    operand_layout = tuple(data.draw(st.permutations(range(len(dims)))))
    x = np.arange(int(np.prod(dims)), dtype=np.int16).reshape(dims)
    buffer = physical_order(x, operand_layout)
    result_dims = tuple(data.draw(st.permutations(dims)))
    result_layout = tuple(data.draw(st.permutations(range(len(result_dims)))))
    value = evaluate(Opcode.BITCAST, array_shape("s16", result_dims, result_layout),
                     [array_shape("s16", dims, operand_layout)], [x])
    assert_same(physical_order(value, result_layout), buffer)


def test_bitcast_may_change_the_element_type_of_equal_width():
    x = np.array([[1.0, -2.0], [np.inf, -0.0]], np.float32)
    value = run_op(Opcode.BITCAST, array_shape("s32", (4,)), x)
    assert_same(value, x.reshape(4).view(np.int32))
    z = np.array([1 + 2j, 3 - 4j, -0.0j], np.complex64)
    assert_same(run_op(Opcode.BITCAST, array_shape("f64", (3,)), z), z.view(np.float64))


# -- broadcast, reshape, transpose, reverse -------------------------------------------
@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_broadcast_maps_operand_dims_into_result_dims(type_name):
    v = sample(type_name, (3,))
    rows = run_op(Opcode.BROADCAST, array_shape(type_name, (2, 3)), v, dimensions=(1,))
    assert_same(rows, np.stack([v, v]))
    cols = run_op(Opcode.BROADCAST, array_shape(type_name, (3, 2)), v, dimensions=(0,))
    assert_same(cols, np.stack([v, v], axis=1))
    s = sample(type_name, ())
    filled = run_op(Opcode.BROADCAST, array_shape(type_name, (2, 2)), s, dimensions=())
    assert_same(filled, np.full((2, 2), s))


def test_broadcast_into_the_middle_and_from_size_one():
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    value = run_op(Opcode.BROADCAST, array_shape("f32", (2, 4, 3)), m, dimensions=(0, 2))
    for k in range(4):
        assert_same(value[:, k, :], m)
    one = np.array([[1, 2, 3]], np.int8)
    value = run_op(Opcode.BROADCAST, array_shape("s8", (2, 3)), one, dimensions=(0, 1))
    assert_same(value, np.array([[1, 2, 3], [1, 2, 3]], np.int8))
    value = run_op(Opcode.BROADCAST, array_shape("f32", (3, 5, 2)), m, dimensions=(2, 0))
    assert_same(value, np.broadcast_to(m.T[:, None, :], (3, 5, 2)))


@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_reshape(type_name):
    x = sample(type_name, (2, 3, 4))
    assert_same(run_op(Opcode.RESHAPE, array_shape(type_name, (4, 6)), x), x.reshape(4, 6))
    one = sample(type_name, (1, 1))
    assert_same(run_op(Opcode.RESHAPE, array_shape(type_name, ()), one), one.reshape(()))
    s = sample(type_name, ())
    assert_same(run_op(Opcode.RESHAPE, array_shape(type_name, (1, 1)), s), s.reshape(1, 1))


def test_reshape_matches_xla_example():
    v = np.array([[[10, 11, 12], [15, 16, 17]], [[20, 21, 22], [25, 26, 27]],
                  [[30, 31, 32], [35, 36, 37]], [[40, 41, 42], [45, 46, 47]]], np.float32)
    value = run_op(Opcode.RESHAPE, array_shape("f32", (8, 3)), v)
    assert value[3].tolist() == [25, 26, 27] and value[6].tolist() == [40, 41, 42]


@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_transpose_result_dim_i_is_operand_dim_perm_i(type_name):
    x = sample(type_name, (2, 3, 4))
    value = run_op(Opcode.TRANSPOSE, array_shape(type_name, (3, 4, 2)), x, dimensions=(1, 2, 0))
    assert value.shape == (3, 4, 2)
    for a, b, c in np.ndindex(3, 4, 2):
        assert value[a, b, c].tobytes() == x[c, a, b].tobytes()
    assert_same(value, np.transpose(x, (1, 2, 0)))


@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_reverse(type_name):
    x = sample(type_name, (2, 3, 4))
    shape = shape_of(x)
    assert_same(run_op(Opcode.REVERSE, shape, x, dimensions=(1,)), x[:, ::-1, :])
    assert_same(run_op(Opcode.REVERSE, shape, x, dimensions=(0, 2)), x[::-1, :, ::-1])
    assert_same(run_op(Opcode.REVERSE, shape, x, dimensions=()), x)


# -- slice, concatenate -----------------------------------------------------------------
@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_slice(type_name):
    x = sample(type_name, (5, 7))
    ranges = (SliceRange(1, 4), SliceRange(0, 7, 3))
    value = run_op(Opcode.SLICE, array_shape(type_name, (3, 3)), x, slice=ranges)
    assert_same(value, x[1:4, 0:7:3])


def test_slice_hand_example():
    x = np.arange(10, dtype=np.int32)
    value = run_op(Opcode.SLICE, array_shape("s32", (3,)), x, slice=(SliceRange(2, 9, 3),))
    assert value.tolist() == [2, 5, 8]
    empty = run_op(Opcode.SLICE, array_shape("s32", (0,)), x, slice=(SliceRange(4, 4),))
    assert empty.shape == (0,)


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_slice_matches_python_slicing(data):
    dims = data.draw(st.lists(st.integers(0, 6), min_size=0, max_size=3))
    x = np.arange(int(np.prod(dims)), dtype=np.float64).reshape(dims)
    ranges = []
    for n in dims:
        start = data.draw(st.integers(0, n))
        limit = data.draw(st.integers(start, n))
        ranges.append(SliceRange(start, limit, data.draw(st.integers(1, 3))))
    expected = x[tuple(slice(r.start, r.limit, r.stride) for r in ranges)]
    value = run_op(Opcode.SLICE, shape_of(expected), x, slice=tuple(ranges))
    assert_same(value, expected)


@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_concatenate(type_name):
    a, b, c = (sample(type_name, (2, n), seed=n) for n in (1, 3, 0))
    value = run_op(Opcode.CONCATENATE, array_shape(type_name, (2, 4)), a, b, c, dimensions=(1,))
    assert_same(value, np.concatenate([a, b], axis=1))
    value = run_op(Opcode.CONCATENATE, array_shape(type_name, (4, 1)), a, a, dimensions=(0,))
    assert_same(value, np.concatenate([a, a], axis=0))


# -- pad ------------------------------------------------------------------------------
def padding(*dims) -> PaddingConfig:
    return PaddingConfig(tuple(PaddingDimension(*d) for d in dims))


def pad_reference(x: np.ndarray, value, dims) -> np.ndarray:
    """XLA's definition step by step: interior padding, then edge padding where a
    negative edge removes elements from the interior-padded array."""
    out = x
    for axis, (low, high, interior) in enumerate(dims):
        n = out.shape[axis]
        size = n + max(n - 1, 0) * interior
        grown = np.full(out.shape[:axis] + (size,) + out.shape[axis + 1:], value, x.dtype)
        index = [slice(None)] * out.ndim
        index[axis] = slice(None, None, interior + 1)
        grown[tuple(index)] = out
        edge = [(0, 0)] * out.ndim
        edge[axis] = (max(low, 0), max(high, 0))
        grown = np.pad(grown, edge, constant_values=value)
        index[axis] = slice(max(-low, 0), grown.shape[axis] - max(-high, 0))
        out = grown[tuple(index)]
    return out


@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_pad_every_type(type_name):
    x = sample(type_name, (2, 3))
    pad_value = sample(type_name, (), seed=5)
    config = ((1, 0, 1), (-1, 2, 2))
    # rows land at 1 + 2i; columns at -1 + 3j, so column j=0 is cut by the -1 edge
    expected = np.full((4, 8), pad_value)
    for i in range(2):
        for j in (1, 2):
            expected[1 + 2 * i, -1 + 3 * j] = x[i, j]
    value = run_op(Opcode.PAD, array_shape(type_name, (4, 8)), x, pad_value,
                   padding=padding(*config))
    assert_same(value, expected)
    assert_same(value, pad_reference(x, pad_value, config))


@pytest.mark.parametrize("config, expected", [
    ((1, 2, 1), [0, 1, 0, 2, 0, 3, 0, 0]),
    ((-1, -1, 1), [0, 2, 0]),
    ((-2, 1, 2), [0, 2, 0, 0, 3, 0]),
    ((0, -3, 0), []),
    ((2, -1, 0), [0, 0, 1, 2]),
    ((-4, 0, 1), [3]),
])
def test_pad_hand_examples(config, expected):
    x = np.array([1, 2, 3], np.int32)
    value = run_op(Opcode.PAD, array_shape("s32", (len(expected),)), x, np.int32(0),
                   padding=padding(config))
    assert value.tolist() == expected


def test_pad_empty_and_scalar_operands():
    empty = np.zeros((0,), np.float32)
    value = run_op(Opcode.PAD, array_shape("f32", (3,)), empty, np.float32(7),
                   padding=padding((2, 1, 3)))
    assert value.tolist() == [7, 7, 7]
    s = np.float64(4.5)
    assert_same(run_op(Opcode.PAD, Shape.scalar("f64"), np.asarray(s), np.float64(0),
                       padding=padding()), np.asarray(s))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_pad_matches_the_step_by_step_definition(data):
    dims = data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=3))
    x = np.arange(1, int(np.prod(dims)) + 1, dtype=np.int64).reshape(dims)
    config = []
    for n in dims:
        interior = data.draw(st.integers(0, 2))
        size = n + max(n - 1, 0) * interior
        low = data.draw(st.integers(-size, 3))
        high = data.draw(st.integers(-(size + low), 3))  # the result size is >= 0
        config.append((low, high, interior))
    expected = pad_reference(x, -1, config)
    value = run_op(Opcode.PAD, shape_of(expected), x, np.int64(-1), padding=padding(*config))
    assert_same(value, expected)


def test_get_dimension_size():
    x = np.zeros((2, 5, 3), np.float32)
    for d, n in enumerate(x.shape):
        value = run_op(Opcode.GET_DIMENSION_SIZE, Shape.scalar("s32"), x, dimensions=(d,))
        assert_same(value, np.int32(n))
