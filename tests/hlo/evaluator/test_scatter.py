"""Interpreter scatter against NumPy (np.add.at and friends), XLA's documented
examples and hand-computed values for its bounds rule (a window partly out of
bounds is skipped), for every dtype and every integer index type; and the
indexing ops on degenerate shapes and bad attributes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hlo.evaluator.indexing_util import (
    ALL_TYPES,
    INDEX_TYPES,
    NUMERIC_TYPES,
    arr,
    assert_same,
    np_type,
    sample,
)
from tests.hlo.evaluator.util import run_op, scalar_computation, shape_of
from xlapy.errors import ExecutionError
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape


# -- combiners ------------------------------------------------------------------------
def param_computation(type_name: str, which: int, count: int = 1) -> HloComputation:
    """`(current..., update...) -> parameter which`: keep (0) or overwrite (count)."""
    scalar = Shape.scalar(type_name)
    params = [HloInstruction(Opcode.PARAMETER, scalar, name=f"a{i}", parameter_number=i)
              for i in range(2 * count)]
    return HloComputation(f"pick{which}_{type_name}", params, root=params[which])


def via_reshape_computation(opcode: Opcode, type_name: str) -> HloComputation:
    """`(a, b) -> opcode(a, reshape(b))`: a reshape that the rule cannot vectorise,
    forcing the element-by-element path."""
    scalar = Shape.scalar(type_name)
    a = HloInstruction(Opcode.PARAMETER, scalar, name="a", parameter_number=0)
    b = HloInstruction(Opcode.PARAMETER, scalar, name="b", parameter_number=1)
    r = HloInstruction(Opcode.RESHAPE, scalar, [b], name="r")
    root = HloInstruction(opcode, scalar, [a, r], name="root")
    return HloComputation(f"via_reshape_{type_name}", [a, b, r, root])


# -- scatter --------------------------------------------------------------------------
def rows_attrs() -> dict:
    """Dimension numbers for `x.at[idx].op(u)` on a 1-D x with a 1-D idx."""
    return dict(update_window_dims=(), inserted_window_dims=(0,),
                scatter_dims_to_operand_dims=(0,), index_vector_dim=1)


def scatter_1d(type_name, x, idx, updates, combiner):
    return run_op(Opcode.SCATTER, shape_of(x), x, idx, updates, to_apply=combiner,
                  **rows_attrs())


def sequential(x, idx, updates, fn):
    """Reference: apply `fn(current, update)` one update at a time, skipping OOB."""
    out = x.copy()
    with np.errstate(all="ignore"):
        for i, u in zip(idx, updates):
            if 0 <= i < len(out):
                out[i] = fn(out[i], u)
    return out


@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_scatter_set_every_type_last_update_wins(type_name):
    x = sample(type_name, (6,))
    u = sample(type_name, (5,), seed=2)
    idx = np.array([1, 4, 1, 6, -1], np.int32)  # 6 and -1 are out of bounds: skipped
    value = scatter_1d(type_name, x, idx, u, param_computation(type_name, 1))
    expected = x.copy()
    expected[4], expected[1] = u[1], u[2]
    assert_same(value, expected)
    keep = scatter_1d(type_name, x, idx, u, param_computation(type_name, 0))
    assert_same(keep, x)


@pytest.mark.parametrize("type_name", NUMERIC_TYPES)
def test_scatter_add_every_numeric_type(type_name):
    x = sample(type_name, (5,))
    u = sample(type_name, (7,), seed=3)
    idx = np.array([0, 3, 3, 1, 3, 9, 0], np.int64)
    value = scatter_1d(type_name, x, idx, u, scalar_computation("add", np_type(type_name)))
    assert_same(value, sequential(x, idx, u, lambda a, b: a + b))


@pytest.mark.parametrize("type_name, op, fn", [
    (t, op, fn) for t in ["pred", "s8", "u32", "bf16", "f64"]
    for op, fn in [("maximum", np.maximum), ("minimum", np.minimum), ("multiply", np.multiply)]
    if not (t == "pred" and op == "multiply")])
def test_scatter_max_min_mul(type_name, op, fn):
    x = sample(type_name, (4,))
    u = sample(type_name, (6,), seed=4)
    idx = np.array([2, 2, 0, 3, 2, -5], np.int8)
    value = scatter_1d(type_name, x, idx, u, scalar_computation(op, np_type(type_name)))
    assert_same(value, sequential(x, idx, u, lambda a, b: fn(a, b)))


def test_scatter_or_on_pred():
    x = np.array([False, False, True, False])
    u = np.array([True, False, False, True])
    idx = np.array([1, 1, 2, 4], np.int32)
    value = scatter_1d("pred", x, idx, u, scalar_computation("or", np.bool_))
    assert value.tolist() == [False, True, True, False]


def test_scatter_applies_updates_in_order():
    # f32 addition is not associative: 1e8 + 1 - 1e8 in order is 0, not 1.
    x = np.zeros(2, np.float32)
    u = np.array([1e8, 1.0, -1e8, 1.0], np.float32)
    idx = np.array([0, 0, 0, 1], np.int32)
    value = scatter_1d("f32", x, idx, u, scalar_computation("add", np.float32))
    assert value.tolist() == [0.0, 1.0]
    # a non-commutative combiner sees (current, update): current - update
    value = scatter_1d("s32", np.array([10, 0], np.int32), np.array([0, 0, 1], np.int32),
                       np.array([1, 2, 3], np.int32), scalar_computation("subtract", np.int32))
    assert value.tolist() == [7, -3]


@pytest.mark.parametrize("type_name", ["u8", "f16", "c128"])
def test_scatter_element_by_element_path_matches(type_name):
    x = sample(type_name, (5,))
    u = sample(type_name, (8,), seed=5)
    idx = np.array([4, 4, 0, 2, 4, 7, 1, 0], np.int32)
    value = scatter_1d(type_name, x, idx, u, via_reshape_computation(Opcode.ADD, type_name))
    assert_same(value, sequential(x, idx, u, lambda a, b: a + b))


def test_scatter_skips_a_window_that_is_partly_out_of_bounds():
    x = np.zeros(6, np.int32)
    u = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]], np.int32)
    idx = np.array([[3], [4], [-1], [0]], np.int32)  # window of 3 at 4 or -1 leaves [0, 6)
    value = run_op(Opcode.SCATTER, shape_of(x), x, idx, u, to_apply=param_computation("s32", 1),
                   update_window_dims=(1,), inserted_window_dims=(),
                   scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    assert value.tolist() == [10, 11, 12, 1, 2, 3]


def test_scatter_2d_windows_skip_whole_window():
    x = np.zeros((4, 4), np.float32)
    u = np.ones((3, 2, 2), np.float32) * np.array([1, 2, 3], np.float32)[:, None, None]
    idx = np.array([[0, 0], [2, 3], [2, 2]], np.int32)  # [2,3] pokes out of column 3
    value = run_op(Opcode.SCATTER, shape_of(x), x, idx, u,
                   to_apply=scalar_computation("add", np.float32), update_window_dims=(1, 2),
                   inserted_window_dims=(), scatter_dims_to_operand_dims=(0, 1),
                   index_vector_dim=1)
    expected = np.zeros((4, 4), np.float32)
    expected[0:2, 0:2] += 1
    expected[2:4, 2:4] += 3
    assert_same(value, expected)


def test_scatter_rows_and_index_vector_dim_first():
    x = np.zeros((4, 3), np.int64)
    u = np.arange(6, dtype=np.int64).reshape(2, 3)
    idx = np.array([[2, 0]], np.int32)  # index_vector_dim=0: the vectors are columns
    value = run_op(Opcode.SCATTER, shape_of(x), x, idx, u,
                   to_apply=scalar_computation("add", np.int64), update_window_dims=(1,),
                   inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                   index_vector_dim=0)
    expected = np.zeros((4, 3), np.int64)
    expected[2], expected[0] = u[0], u[1]
    assert_same(value, expected)


def test_scatter_updates_window_dims_before_scatter_dims():
    # x.at[:, idx].add(u) with u laid out as [3 rows (window), 2 indices (scatter)].
    x = np.zeros((3, 5), np.float64)
    u = np.arange(6, dtype=np.float64).reshape(3, 2)
    idx = np.array([4, 1], np.int32)
    value = run_op(Opcode.SCATTER, shape_of(x), x, idx, u,
                   to_apply=scalar_computation("add", np.float64), update_window_dims=(0,),
                   inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
                   index_vector_dim=1)
    expected = np.zeros((3, 5))
    expected[:, [4, 1]] = u
    assert_same(value, expected)


def test_scatter_batching_dims():
    # out[b, idx[b, j]] += u[b, j]
    x = np.zeros((3, 5), np.int32)
    idx = np.array([[0, 0], [4, 1], [2, 5]], np.int32)  # 5 is out of bounds: skipped
    u = np.array([[1, 2], [3, 4], [5, 6]], np.int32)
    value = run_op(Opcode.SCATTER, shape_of(x), x, idx, u,
                   to_apply=scalar_computation("add", np.int32), update_window_dims=(),
                   inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
                   input_batching_dims=(0,), scatter_indices_batching_dims=(0,),
                   index_vector_dim=2)
    assert value.tolist() == [[3, 0, 0, 0, 0], [0, 4, 0, 0, 3], [0, 0, 5, 0, 0]]


def test_scatter_batching_dim_second_in_the_indices():
    # out[idx[j, b], b] += u[j, b], the batch dim being dim 1 of indices and operand
    x = np.zeros((4, 2), np.float32)
    idx = np.array([[3, 0], [3, 1]], np.int32)
    u = np.array([[1.0, 2.0], [10.0, 20.0]], np.float32)
    value = run_op(Opcode.SCATTER, shape_of(x), x, idx, u,
                   to_apply=scalar_computation("add", np.float32), update_window_dims=(),
                   inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                   input_batching_dims=(1,), scatter_indices_batching_dims=(1,),
                   index_vector_dim=2)
    expected = np.zeros((4, 2), np.float32)
    expected[3, 0] = 11.0
    expected[0, 1], expected[1, 1] = 2.0, 20.0
    assert_same(value, expected)


def tuple_combiner(vectorisable: bool) -> HloComputation:
    """(sum, count, u_sum, u_count) -> (sum + u_sum, max(count, u_count))."""
    f32, s32 = Shape.scalar("f32"), Shape.scalar("s32")
    p = [HloInstruction(Opcode.PARAMETER, s, name=f"p{i}", parameter_number=i)
         for i, s in enumerate([f32, s32, f32, s32])]
    u_sum = p[2] if vectorisable else HloInstruction(Opcode.RESHAPE, f32, [p[2]], name="r")
    total = HloInstruction(Opcode.ADD, f32, [p[0], u_sum], name="total")
    top = HloInstruction(Opcode.MAXIMUM, s32, [p[1], p[3]], name="top")
    root = HloInstruction(Opcode.TUPLE, Shape.tuple([f32, s32]), [total, top], name="root")
    body = p + ([] if vectorisable else [u_sum]) + [total, top, root]
    return HloComputation(f"pair_{vectorisable}", body, root=root)


@pytest.mark.parametrize("vectorisable", [True, False])
def test_variadic_scatter(vectorisable):
    sums = np.zeros(3, np.float32)
    counts = np.array([5, 0, 0], np.int32)
    idx = np.array([0, 2, 2, 3], np.int32)
    u_sums = np.array([1.5, 2.0, 4.0, 100.0], np.float32)
    u_counts = np.array([1, 7, 3, 9], np.int32)
    shape = Shape.tuple([shape_of(sums), shape_of(counts)])
    value = run_op(Opcode.SCATTER, shape, sums, counts, idx, u_sums, u_counts,
                   to_apply=tuple_combiner(vectorisable), **rows_attrs())
    assert isinstance(value, tuple)
    assert value[0].tolist() == [1.5, 0.0, 6.0]
    assert value[1].tolist() == [5, 0, 7]
    two_keep = param_computation("s32", 0, count=2)
    value = run_op(Opcode.SCATTER, Shape.tuple([shape_of(counts)] * 2), counts, counts, idx,
                   u_counts, u_counts, to_apply=two_keep, **rows_attrs())
    assert_same(value[0], counts)


def test_scatter_into_a_scalar():
    x = np.array(1.0, np.float64)
    idx = np.zeros((3, 0), np.int32)
    u = np.array([2.0, 3.0, 4.0])
    value = run_op(Opcode.SCATTER, Shape.scalar("f64"), x, idx, u,
                   to_apply=scalar_computation("multiply", np.float64), update_window_dims=(),
                   inserted_window_dims=(), scatter_dims_to_operand_dims=(), index_vector_dim=1)
    assert_same(value, np.float64(24.0))


@pytest.mark.parametrize("index_type", INDEX_TYPES)
def test_scatter_index_types_and_huge_indices(index_type):
    info = np.iinfo(np_type(index_type))
    x = np.zeros(4, np.int32)
    raw = [3, info.max, 0] + ([-1, info.min] if info.min < 0 else [])
    idx = np.array(raw, np_type(index_type))
    u = np.arange(1, len(raw) + 1, dtype=np.int32)
    value = scatter_1d("s32", x, idx, u, scalar_computation("add", np.int32))
    assert value.tolist() == [3, 0, 0, 1]


def test_scatter_does_not_modify_its_operands():
    x = np.arange(4, dtype=np.float32)
    before = x.copy()
    scatter_1d("f32", x, np.array([1], np.int32), np.array([9.0], np.float32),
               scalar_computation("add", np.float32))
    assert_same(x, before)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_scatter_add_matches_numpy_add_at(data):
    dims = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    axis = data.draw(st.integers(0, len(dims) - 1))
    idx = np.array(data.draw(st.lists(st.integers(-2, dims[axis] + 1), max_size=6)), np.int32)
    x = np.arange(int(np.prod(dims)), dtype=np.float64).reshape(dims)
    window = dims[:axis] + dims[axis + 1:]
    u = np.arange(len(idx) * int(np.prod(window)), dtype=np.float64).reshape(
        (len(idx),) + window) + 0.5
    # updates as [scatter] + window dims in operand order; XLA's update_window_dims
    # name where the window dims sit in the update: here after the scatter dim.
    value = run_op(Opcode.SCATTER, shape_of(x), x, idx, u,
                   to_apply=scalar_computation("add", np.float64),
                   update_window_dims=tuple(range(1, len(dims))), inserted_window_dims=(axis,),
                   scatter_dims_to_operand_dims=(axis,), index_vector_dim=1)
    expected = x.copy()
    valid = (idx >= 0) & (idx < dims[axis])
    moved = np.moveaxis(expected, axis, 0)  # a view: add.at writes through
    np.add.at(moved, idx[valid], u[valid])
    assert_same(value, expected)


# -- degenerate shapes and bad attributes ---------------------------------------------
def test_scalar_operands():
    x = np.array(3.5, np.float32)
    value = run_op(Opcode.GATHER, arr("f32", (2,)), x, np.zeros((2, 0), np.int32),
                   offset_dims=(), collapsed_slice_dims=(), start_index_map=(),
                   index_vector_dim=1, slice_sizes=())
    assert_same(value, np.array([3.5, 3.5], np.float32))
    value = run_op(Opcode.DYNAMIC_UPDATE_SLICE, Shape.scalar("f32"), x, np.array(1.0, np.float32))
    assert_same(value, np.float32(1.0))


def test_scatter_into_an_empty_operand_changes_nothing():
    x = np.zeros((0, 3), np.int32)
    idx = np.array([0, 1], np.int32)
    u = np.ones((2, 3), np.int32)
    value = run_op(Opcode.SCATTER, shape_of(x), x, idx, u,
                   to_apply=scalar_computation("add", np.int32), update_window_dims=(1,),
                   inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
                   index_vector_dim=1)
    assert value.shape == (0, 3)


def test_missing_or_inconsistent_attributes_are_execution_errors():
    x = np.arange(6, dtype=np.float32)
    idx = np.array([1], np.int32)
    with pytest.raises(ExecutionError, match="index_vector_dim"):
        run_op(Opcode.GATHER, arr("f32", (1,)), x, idx, offset_dims=(),
               collapsed_slice_dims=(0,), start_index_map=(0,), slice_sizes=(1,))
    with pytest.raises(ExecutionError, match="start_index_map"):
        run_op(Opcode.GATHER, arr("f32", (1,)), x, idx, offset_dims=(),
               collapsed_slice_dims=(0,), start_index_map=(0, 1), index_vector_dim=1,
               slice_sizes=(1,))
    with pytest.raises(ExecutionError, match="to_apply"):
        run_op(Opcode.SCATTER, shape_of(x), x, idx, np.ones(1, np.float32), **rows_attrs())
    with pytest.raises(ExecutionError, match="window dims"):
        run_op(Opcode.SCATTER, shape_of(x), x, idx, np.ones((1, 2), np.float32),
               to_apply=scalar_computation("add", np.float32), update_window_dims=(1,),
               inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,),
               index_vector_dim=1)
