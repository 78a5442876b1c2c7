"""Interpreter indexing rules: dynamic-slice, dynamic-update-slice and gather,
against NumPy, XLA's documented examples and hand-computed values for its
bounds rule (start indices clamped so the slice is in bounds), for every dtype
and every integer index type. Scatter is in test_scatter.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hlo.evaluator.indexing_util import (
    ALL_TYPES,
    INDEX_TYPES,
    arr,
    assert_same,
    np_type,
    sample,
)
from tests.hlo.evaluator.util import run_op, shape_of
from xlapy.hlo.opcode import Opcode


# -- dynamic-slice --------------------------------------------------------------------
@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_dynamic_slice_every_type(type_name):
    x = sample(type_name, (4, 5))
    value = run_op(Opcode.DYNAMIC_SLICE, arr(type_name, (2, 3)), x, np.int32(1), np.int32(2),
                   dynamic_slice_sizes=(2, 3))
    assert_same(value, x[1:3, 2:5])


def test_dynamic_slice_xla_examples():
    a = np.array([0.0, 1.0, 2.0, 3.0, 4.0], np.float32)
    value = run_op(Opcode.DYNAMIC_SLICE, arr("f32", (2,)), a, np.int64(2), dynamic_slice_sizes=(2,))
    assert value.tolist() == [2.0, 3.0]
    b = np.arange(12, dtype=np.float32).reshape(4, 3)
    value = run_op(Opcode.DYNAMIC_SLICE, arr("f32", (2, 2)), b, np.int32(2), np.int32(1),
                   dynamic_slice_sizes=(2, 2))
    assert value.tolist() == [[7.0, 8.0], [10.0, 11.0]]


@pytest.mark.parametrize("index_type", INDEX_TYPES)
def test_dynamic_slice_clamps_each_start_into_bounds(index_type):
    x = np.arange(10, dtype=np.int32)
    info = np.iinfo(np_type(index_type))
    for start, first in [(info.max, 7), (8, 7), (7, 7), (3, 3), (0, 0), (info.min, 0)]:
        index = np.array(start, np_type(index_type))
        value = run_op(Opcode.DYNAMIC_SLICE, arr("s32", (3,)), x, index,
                       dynamic_slice_sizes=(3,))
        assert value.tolist() == [first, first + 1, first + 2], start
    if info.min < 0:
        value = run_op(Opcode.DYNAMIC_SLICE, arr("s32", (3,)), x,
                       np.array(-1, np_type(index_type)), dynamic_slice_sizes=(3,))
        assert value.tolist() == [0, 1, 2]


def test_dynamic_slice_accepts_one_index_vector():
    x = np.arange(20, dtype=np.int32).reshape(4, 5)
    value = run_op(Opcode.DYNAMIC_SLICE, arr("s32", (2, 2)), x, np.array([3, 9], np.int32),
                   dynamic_slice_sizes=(2, 2))
    assert_same(value, x[2:4, 3:5])


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_dynamic_slice_matches_a_clamped_reference(data):
    dims = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=3))
    sizes = [data.draw(st.integers(0, n)) for n in dims]
    starts = [data.draw(st.integers(-8, 8)) for _ in dims]
    x = np.arange(int(np.prod(dims)), dtype=np.float64).reshape(dims)
    clamped = [min(max(s, 0), n - k) for s, n, k in zip(starts, dims, sizes)]
    expected = x[tuple(slice(s, s + k) for s, k in zip(clamped, sizes))]
    value = run_op(Opcode.DYNAMIC_SLICE, shape_of(expected), x,
                   *[np.int32(s) for s in starts], dynamic_slice_sizes=tuple(sizes))
    assert_same(value, expected)


# -- dynamic-update-slice -------------------------------------------------------------
@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_dynamic_update_slice_every_type(type_name):
    x, u = sample(type_name, (4, 5)), sample(type_name, (2, 2), seed=1)
    expected = x.copy()
    expected[2:4, 1:3] = u
    value = run_op(Opcode.DYNAMIC_UPDATE_SLICE, shape_of(x), x, u, np.int32(2), np.int32(1))
    assert_same(value, expected)


def test_dynamic_update_slice_xla_examples():
    a = np.arange(5, dtype=np.float32)
    value = run_op(Opcode.DYNAMIC_UPDATE_SLICE, shape_of(a), a, np.array([5.0, 6.0], np.float32),
                   np.int32(2))
    assert value.tolist() == [0.0, 1.0, 5.0, 6.0, 4.0]
    b = np.arange(12, dtype=np.float32).reshape(4, 3)
    u = np.arange(12, 18, dtype=np.float32).reshape(3, 2)
    value = run_op(Opcode.DYNAMIC_UPDATE_SLICE, shape_of(b), b, u, np.int32(1), np.int32(1))
    assert value.tolist() == [[0, 1, 2], [3, 12, 13], [6, 14, 15], [9, 16, 17]]
    assert b[1, 1] == 4  # the operand is not modified


@pytest.mark.parametrize("index_type", INDEX_TYPES)
def test_dynamic_update_slice_clamps(index_type):
    x = np.zeros(6, np.int16)
    u = np.array([1, 2, 3], np.int16)
    info = np.iinfo(np_type(index_type))
    for start, first in [(info.max, 3), (4, 3), (1, 1), (info.min, 0)]:
        value = run_op(Opcode.DYNAMIC_UPDATE_SLICE, shape_of(x), x, u,
                       np.array(start, np_type(index_type)))
        expected = np.zeros(6, np.int16)
        expected[first:first + 3] = u
        assert_same(value, expected)


# -- gather ---------------------------------------------------------------------------
def take(x: np.ndarray, idx: np.ndarray, axis: int, type_name: str) -> np.ndarray:
    """Gather standing for `x[..., idx, ...]` on `axis` (indices clamped)."""
    sizes = tuple(1 if d == axis else n for d, n in enumerate(x.shape))
    out = x.shape[:axis] + idx.shape + x.shape[axis + 1:]
    return run_op(Opcode.GATHER, arr(type_name, out), x, idx,
                  offset_dims=tuple(d for d in range(x.ndim) if d != axis),
                  collapsed_slice_dims=(axis,), start_index_map=(axis,),
                  index_vector_dim=1, slice_sizes=sizes)


@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_gather_take_rows_every_type(type_name):
    x = sample(type_name, (5, 3))
    idx = np.array([4, 0, 2, 2], np.int32)
    assert_same(take(x, idx, 0, type_name), x[idx])


@pytest.mark.parametrize("type_name", ["pred", "u8", "bf16", "c64"])
def test_gather_take_columns(type_name):
    x = sample(type_name, (3, 5))
    idx = np.array([1, 4, 1], np.int64)
    assert_same(take(x, idx, 1, type_name), x[:, idx])


@pytest.mark.parametrize("index_type", INDEX_TYPES)
def test_gather_clamps_out_of_bounds_and_negative_indices(index_type):
    x = np.arange(50, 55, dtype=np.int32)
    info = np.iinfo(np_type(index_type))
    raw = [0, 4, 5, 100, info.max] + ([-1, info.min] if info.min < 0 else [])
    idx = np.array(raw, np_type(index_type))
    expected = np.array([50, 54, 54, 54, 54] + ([50, 50] if info.min < 0 else []), np.int32)
    assert_same(take(x, idx, 0, "s32"), expected)


def test_gather_clamps_so_the_whole_slice_is_in_bounds():
    # The XLA docs' example: slices of [8,6] from [16,11], start indices [5,2].
    x = np.arange(16 * 11, dtype=np.float32).reshape(16, 11)
    starts = np.array([[0, 0], [8, 5], [10, 7], [-3, 2], [15, 10]], np.int32)
    value = run_op(Opcode.GATHER, arr("f32", (5, 8, 6)), x, starts, offset_dims=(1, 2),
                   collapsed_slice_dims=(), start_index_map=(0, 1), index_vector_dim=1,
                   slice_sizes=(8, 6))
    for g, (r, c) in enumerate([(0, 0), (8, 5), (8, 5), (0, 2), (8, 5)]):
        assert_same(value[g], x[r:r + 8, c:c + 6])


def test_gather_multidimensional_batch_and_index_vector_first():
    x = np.arange(16 * 11, dtype=np.int64).reshape(16, 11)
    starts = np.array([[[1, 2], [3, 4], [9, 0]], [[0, 5], [2, 2], [7, 7]]], np.int32)  # [2,3,2]
    value = run_op(Opcode.GATHER, arr("s64", (2, 3, 8, 6)), x, starts, offset_dims=(2, 3),
                   collapsed_slice_dims=(), start_index_map=(0, 1), index_vector_dim=2,
                   slice_sizes=(8, 6))
    moved = np.moveaxis(starts, 2, 0)  # the same indices with index_vector_dim=0
    again = run_op(Opcode.GATHER, arr("s64", (2, 3, 8, 6)), x, moved, offset_dims=(2, 3),
                   collapsed_slice_dims=(), start_index_map=(0, 1), index_vector_dim=0,
                   slice_sizes=(8, 6))
    assert_same(again, value)
    for i, j in np.ndindex(2, 3):
        r, c = min(starts[i, j, 0], 8), min(starts[i, j, 1], 5)
        assert_same(value[i, j], x[r:r + 8, c:c + 6])


def test_gather_nd_with_collapsed_dims_and_offset_dims_first():
    # tf.gather_nd-style rows: [G0, G1, O0] maps to x[idx[G0, G1, 0], O0].
    x = np.arange(16 * 11, dtype=np.float64).reshape(16, 11)
    idx = np.array([[[3], [15]], [[0], [7]]], np.int32)
    value = run_op(Opcode.GATHER, arr("f64", (2, 2, 11)), x, idx, offset_dims=(2,),
                   collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=2,
                   slice_sizes=(1, 11))
    assert_same(value, x[idx[..., 0]])
    # The offset dim may come first: output [11, 2, 2].
    value = run_op(Opcode.GATHER, arr("f64", (11, 2, 2)), x, idx, offset_dims=(0,),
                   collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=2,
                   slice_sizes=(1, 11))
    assert_same(value, np.moveaxis(x[idx[..., 0]], 2, 0))


def test_gather_point_lookup_with_permuted_start_index_map():
    x = np.arange(20, dtype=np.int32).reshape(4, 5)
    idx = np.array([[4, 0], [1, 3], [0, 9]], np.int32)  # (column, row) pairs
    value = run_op(Opcode.GATHER, arr("s32", (3,)), x, idx, offset_dims=(),
                   collapsed_slice_dims=(0, 1), start_index_map=(1, 0), index_vector_dim=1,
                   slice_sizes=(1, 1))
    assert value.tolist() == [x[0, 4], x[3, 1], x[3, 0]]


def test_gather_embedding_lookup():
    table = sample("bf16", (10, 4))
    ids = np.array([[1, 9, 9], [0, 3, 12]], np.int32)  # 12 clamps to 9
    value = run_op(Opcode.GATHER, arr("bf16", (2, 3, 4)), table, ids, offset_dims=(2,),
                   collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=2,
                   slice_sizes=(1, 4))
    assert_same(value, table[np.clip(ids, 0, 9)])


def test_gather_batching_dims_leading():
    # take_along_axis: out[b, j, :] = x[b, idx[b, j], :]
    x = sample("f32", (3, 5, 4))
    idx = np.array([[0, 4], [2, 2], [1, 7]], np.int32)
    value = run_op(Opcode.GATHER, arr("f32", (3, 2, 4)), x, idx, offset_dims=(2,),
                   collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(0,),
                   start_indices_batching_dims=(0,), index_vector_dim=2, slice_sizes=(1, 1, 4))
    assert_same(value, np.take_along_axis(x, np.clip(idx, 0, 4)[:, :, None], axis=1))


def test_gather_batching_dims_in_the_middle():
    # out[j, b, :] = x[idx[j, b], b, :]
    x = sample("s16", (5, 3, 4))
    idx = np.array([[0, 1, 2], [4, 3, 0]], np.int64)
    value = run_op(Opcode.GATHER, arr("s16", (2, 3, 4)), x, idx, offset_dims=(2,),
                   collapsed_slice_dims=(0,), start_index_map=(0,), operand_batching_dims=(1,),
                   start_indices_batching_dims=(1,), index_vector_dim=2, slice_sizes=(1, 1, 4))
    for j, b in np.ndindex(2, 3):
        assert_same(value[j, b], x[idx[j, b], b])


def test_gather_with_empty_indices():
    x = sample("f32", (4, 3))
    value = take(x, np.zeros((0,), np.int32), 0, "f32")
    assert value.shape == (0, 3)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_gather_take_matches_numpy(data):
    dims = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    axis = data.draw(st.integers(0, len(dims) - 1))
    idx = np.array(data.draw(st.lists(st.integers(-3, dims[axis] + 3), max_size=5)), np.int32)
    x = np.arange(int(np.prod(dims)), dtype=np.float32).reshape(dims)
    expected = np.take(x, np.clip(idx, 0, dims[axis] - 1), axis=axis)
    assert_same(take(x, idx, axis, "f32"), expected)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_gather_windows_match_clamped_dynamic_slices(data):
    dims = tuple(data.draw(st.lists(st.integers(1, 5), min_size=2, max_size=2)))
    sizes = tuple(data.draw(st.integers(0, n)) for n in dims)
    count = data.draw(st.integers(0, 4))
    starts = np.array([[data.draw(st.integers(-2, n + 2)) for n in dims] for _ in range(count)],
                      np.int32).reshape(count, 2)
    x = np.arange(int(np.prod(dims)), dtype=np.int32).reshape(dims)
    value = run_op(Opcode.GATHER, arr("s32", (count,) + sizes), x, starts, offset_dims=(1, 2),
                   collapsed_slice_dims=(), start_index_map=(0, 1), index_vector_dim=1,
                   slice_sizes=sizes)
    for g in range(count):
        r, c = (min(max(s, 0), n - k) for s, n, k in zip(starts[g], dims, sizes))
        assert_same(value[g], x[r:r + sizes[0], c:c + sizes[1]])
