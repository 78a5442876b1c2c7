"""Random shapes cross-checked against NumPy's own result shapes: broadcast,
reshape, transpose, dot (np.einsum), concatenate, pad (a reference built from
np.pad and slicing), slice, reduce and reverse."""

import string

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hlo.shape_inference_util import T, reducer
from xlapy.errors import ShapeError
from xlapy.hlo.attributes import PaddingConfig, PaddingDimension, SliceRange
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.hlo.shape_inference import infer_shape

SETTINGS = settings(max_examples=60, deadline=None)
dims = st.lists(st.integers(0, 4), min_size=0, max_size=4)
nonzero_dims = st.lists(st.integers(1, 4), min_size=0, max_size=4)


def f32(shape) -> Shape:
    return Shape.array("f32", tuple(shape))


@SETTINGS
@given(st.data())
def test_broadcast_matches_numpy(data):
    result = data.draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))
    mapping = sorted(data.draw(st.sets(st.integers(0, max(len(result) - 1, 0)),
                                       max_size=len(result))))
    operand = [result[d] for d in mapping]
    inferred = infer_shape(Opcode.BROADCAST, [f32(operand)], {"dimensions": tuple(mapping)},
                           f32(result))
    expanded = [result[d] if d in mapping else 1 for d in range(len(result))]
    expected = np.broadcast_to(np.zeros(operand).reshape(expanded), result).shape
    assert inferred.dimensions == expected


@SETTINGS
@given(nonzero_dims, st.data())
def test_reshape_matches_numpy(shape, data):
    target = data.draw(st.permutations(shape + [1] * data.draw(st.integers(0, 2))))
    inferred = infer_shape(Opcode.RESHAPE, [f32(shape)], {}, f32(target))
    assert inferred.dimensions == np.zeros(shape).reshape(target).shape
    if shape:
        with pytest.raises(ShapeError, match="cannot reshape"):
            infer_shape(Opcode.RESHAPE, [f32(shape)], {}, f32(list(target) + [2]))


@SETTINGS
@given(dims, st.data())
def test_transpose_matches_numpy(shape, data):
    perm = data.draw(st.permutations(range(len(shape))))
    inferred = infer_shape(Opcode.TRANSPOSE, [f32(shape)], {"dimensions": tuple(perm)})
    assert inferred.dimensions == np.transpose(np.zeros(shape), perm).shape


@SETTINGS
@given(st.data())
def test_dot_matches_einsum(data):
    sizes = st.lists(st.integers(1, 3), max_size=2)
    batch, contracting = data.draw(sizes), data.draw(sizes)
    lhs_free, rhs_free = data.draw(sizes), data.draw(sizes)
    letters = iter(string.ascii_letters)
    b = [next(letters) for _ in batch]
    c = [next(letters) for _ in contracting]
    lf = [next(letters) for _ in lhs_free]
    rf = [next(letters) for _ in rhs_free]
    size = dict(zip(b + c + lf + rf, batch + contracting + lhs_free + rhs_free))
    lhs_labels = data.draw(st.permutations(b + c + lf))
    rhs_labels = data.draw(st.permutations(b + c + rf))
    attrs = {"lhs_batch_dims": tuple(lhs_labels.index(x) for x in b),
             "rhs_batch_dims": tuple(rhs_labels.index(x) for x in b),
             "lhs_contracting_dims": tuple(lhs_labels.index(x) for x in c),
             "rhs_contracting_dims": tuple(rhs_labels.index(x) for x in c)}
    lhs = np.ones([size[x] for x in lhs_labels])
    rhs = np.ones([size[x] for x in rhs_labels])
    inferred = infer_shape(Opcode.DOT, [f32(lhs.shape), f32(rhs.shape)], attrs)
    # XLA's order: batch dims, then the free dims of each side in operand order.
    out = b + [x for x in lhs_labels if x in lf] + [x for x in rhs_labels if x in rf]
    spec = f"{''.join(lhs_labels)},{''.join(rhs_labels)}->{''.join(out)}"
    assert inferred.dimensions == np.einsum(spec, lhs, rhs).shape


@SETTINGS
@given(nonzero_dims.filter(bool), st.data())
def test_concatenate_matches_numpy(shape, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    parts = [list(shape) for _ in range(data.draw(st.integers(1, 3)))]
    for part in parts:
        part[axis] = data.draw(st.integers(0, 4))
    inferred = infer_shape(Opcode.CONCATENATE, [f32(p) for p in parts], {"dimensions": (axis,)})
    assert inferred.dimensions == np.concatenate([np.zeros(p) for p in parts], axis).shape


def _reference_pad(x: np.ndarray, config) -> np.ndarray:
    """XLA's pad from NumPy pieces: interior by strided placement, positive edges
    with np.pad, negative edges by slicing."""
    for axis, (low, high, interior) in enumerate(config):
        n = x.shape[axis]
        spread = np.zeros(x.shape[:axis] + (n + max(n - 1, 0) * interior,) + x.shape[axis + 1:])
        index = [slice(None)] * x.ndim
        index[axis] = slice(None, None, interior + 1)
        spread[tuple(index)] = x
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(low, 0), max(high, 0))
        x = np.pad(spread, widths)
        index = [slice(None)] * x.ndim
        index[axis] = slice(max(-low, 0), x.shape[axis] - max(-high, 0))
        x = x[tuple(index)]
    return x


@SETTINGS
@given(dims, st.data())
def test_pad_matches_numpy_reference(shape, data):
    edge = st.integers(-3, 3)
    config = [(data.draw(edge), data.draw(edge), data.draw(st.integers(0, 2))) for _ in shape]
    padding = PaddingConfig(tuple(PaddingDimension(*c) for c in config))
    sizes = [lo + n + hi + max(n - 1, 0) * i for n, (lo, hi, i) in zip(shape, config)]
    operands = [f32(shape), f32(())]
    if any(s < 0 for s in sizes):
        with pytest.raises(ShapeError, match="negative size"):
            infer_shape(Opcode.PAD, operands, {"padding": padding})
        return
    inferred = infer_shape(Opcode.PAD, operands, {"padding": padding})
    assert inferred.dimensions == _reference_pad(np.zeros(shape), config).shape


@SETTINGS
@given(dims, st.data())
def test_slice_matches_numpy(shape, data):
    ranges = []
    for n in shape:
        start = data.draw(st.integers(0, n))
        limit = data.draw(st.integers(start, n))
        ranges.append(SliceRange(start, limit, data.draw(st.integers(1, 3))))
    inferred = infer_shape(Opcode.SLICE, [f32(shape)], {"slice": tuple(ranges)})
    index = tuple(slice(r.start, r.limit, r.stride) for r in ranges)
    assert inferred.dimensions == np.zeros(shape)[index].shape


@SETTINGS
@given(dims, st.data())
def test_reduce_matches_numpy(shape, data):
    axes = tuple(sorted(data.draw(st.sets(st.integers(0, max(len(shape) - 1, 0)),
                                          max_size=len(shape)))))
    inferred = infer_shape(Opcode.REDUCE, [f32(shape), f32(())],
                           {"dimensions": axes, "to_apply": reducer("f32")})
    assert inferred.dimensions == np.zeros(shape).sum(axis=axes).shape


@SETTINGS
@given(dims, st.data())
def test_gather_rows_matches_numpy_take(shape, data):
    """Gathering whole rows (an embedding lookup) is np.take along axis 0."""
    if not shape or shape[0] == 0:
        return
    count = data.draw(st.integers(0, 4))
    attrs = {"offset_dims": tuple(range(1, len(shape))), "collapsed_slice_dims": (0,),
             "start_index_map": (0,), "index_vector_dim": 1,
             "slice_sizes": (1, *shape[1:])}
    inferred = infer_shape(Opcode.GATHER, [f32(shape), Shape.array("s32", (count,))], attrs)
    expected = np.take(np.zeros(shape), np.zeros(count, int), axis=0).shape
    assert T(inferred) == T(f32(expected))


# -- robustness: any opcode, any operands, any attributes -> a Shape or a ShapeError --
def _attribute_pool():
    from tests.hlo.shape_inference_util import computation, padding, slices, window
    from xlapy.hlo.attributes import (
        ComparisonDirection,
        ConvolutionDimensionNumbers,
        FftType,
        IotaReplicaGroups,
        RandomDistribution,
    )

    return {
        "dimensions": [(), (0,), (1,), (1, 0), (0, 1, 2), (5,), (-1,)],
        "index": [0, 1, 2, -1],
        "k": [0, 1, 3, -2],
        "iota_dimension": [0, 1, 3],
        "feature_index": [0, 1, 4],
        "exponent_bits": [0, 5], "mantissa_bits": [-1, 10],
        "index_vector_dim": [0, 1, 2, 3],
        "offset_dims": [(), (1,), (0, 1)], "collapsed_slice_dims": [(), (0,)],
        "start_index_map": [(), (0,), (0, 1)], "slice_sizes": [(), (1,), (1, 2), (2, 2)],
        "operand_batching_dims": [(), (0,)], "start_indices_batching_dims": [(), (0,), (1,)],
        "update_window_dims": [(), (1,)], "inserted_window_dims": [(), (0,)],
        "scatter_dims_to_operand_dims": [(), (0,)], "input_batching_dims": [(), (1,)],
        "lhs_contracting_dims": [(), (1,), (0, 1)], "rhs_contracting_dims": [(), (0,)],
        "lhs_batch_dims": [(), (0,)], "rhs_batch_dims": [(), (0,)],
        "dynamic_slice_sizes": [(), (1,), (2, 2)],
        "slice": [slices((0, 1)), slices((0, 2, 1), (1, 2)), slices((2, 1))],
        "padding": [padding("0_0"), padding("1_-1_1x0_0"), padding("-9_0")],
        "window": [window("1"), window("2x2", stride="2x2"), window("3", pad="-5_0")],
        "dim_labels": [ConvolutionDimensionNumbers.from_text("b01f_01io->b01f"),
                       ConvolutionDimensionNumbers.from_text("bf_io->bf")],
        "feature_group_count": [1, 2, 0], "batch_group_count": [1, 2],
        "fft_type": list(FftType), "fft_length": [(), (2,), (4, 3), (0,)],
        "direction": [ComparisonDirection.LT],
        "distribution": list(RandomDistribution),
        "replica_groups": [(), ((0, 1),), ((0, 1), (2, 3)), IotaReplicaGroups((2, 2), (4,))],
        "source_target_pairs": [(), ((0, 1),)],
        "left_side": [True, False],
        "to_apply": [reducer("f32"), reducer("s32", 2), computation("c", ["f32[]"] * 2, "pred[]"),
                     computation("e", [], "f32[]")],
        "condition": [computation("c", ["f32[2]"], "pred[]")],
        "body": [computation("b", ["f32[2]"], "f32[2]")],
        "calls": [computation("f", ["f32[2]"], "f32[2]")],
        "select": [computation("s", ["f32[]"] * 2, "pred[]")],
        "scatter": [reducer("f32")],
        "true_computation": [computation("t", ["f32[2]"], "f32[]")],
        "false_computation": [computation("f", ["f32[2]"], "f32[]")],
        "branch_computations": [(), (computation("t", ["f32[2]"], "f32[]"),)],
    }


_SHAPES = ["f32[]", "f32[2]", "f32[2,2]", "f32[0,3]", "s32[]", "s32[2,1]", "u8[2,4]", "pred[2]",
           "c64[2]", "bf16[2,3,3,2]", "token[]", "(f32[2], s32[])", "()", "f32[<=2]"]


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(list(Opcode)), st.lists(st.sampled_from(_SHAPES), max_size=5),
       st.data())
def test_any_input_gives_a_shape_or_a_shape_error(opcode, operands, data):
    from tests.hlo.shape_inference_util import S

    pool = _attribute_pool()
    names = data.draw(st.sets(st.sampled_from(sorted(pool)), max_size=6))
    attrs = {name: data.draw(st.sampled_from(pool[name])) for name in names}
    declared = data.draw(st.none() | st.sampled_from(_SHAPES).map(S))
    try:
        shape = infer_shape(opcode, [S(o) for o in operands], attrs, declared)
    except ShapeError as error:
        assert str(error).startswith(opcode.value + ": ")
        assert "malformed" not in str(error), error
        return
    assert isinstance(shape, Shape)
    assert all(leaf.layout is None for _, leaf in shape.leaves())
