"""Interpreter rules for data-dependent indexing: dynamic-slice,
dynamic-update-slice, gather and scatter, with XLA's bounds rules.

dynamic-slice, dynamic-update-slice and gather clamp every start index so
the whole slice is in bounds (an out-of-bounds read never happens); scatter
instead skips an update window entirely when any part of it would fall out of
bounds. Scatter applies its updates in order (scatter index major, window
index minor, as XLA's evaluator does), so duplicates combine
deterministically with any combiner.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ExecutionError
from xlapy.hlo.evaluator.rules import rule
from xlapy.hlo.evaluator.scalar_function import ScalarFunction, as_list
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import Opcode

_LARGE = 2**62
"""Unsigned indices are capped here before becoming int64: still past any bound."""


def _as_int64(indices: np.ndarray) -> np.ndarray:
    """Integer (or pred) index values as int64, keeping every out-of-bounds value
    out of bounds (a u64 above 2**63 must not wrap to a negative index)."""
    indices = np.asarray(indices)
    if indices.dtype == np.uint64:
        indices = np.minimum(indices, np.uint64(_LARGE))
    elif indices.dtype.kind not in "iub":
        raise ExecutionError(f"indices must be integers, got {indices.dtype}")
    return indices.astype(np.int64)


def _required(instruction: HloInstruction, key: str):
    value = instruction.attr(key)
    if value is None:
        raise ExecutionError(f"{instruction.name} ({instruction.opcode.value}) has no "
                             f"'{key}' attribute")
    return value


def _start_indices(index_operands) -> list[int]:
    """One start index per dimension, from N scalar operands or (older HLO) one vector."""
    starts: list[int] = []
    for operand in index_operands:
        starts.extend(int(i) for i in _as_int64(operand).reshape(-1))
    return starts


def _clamped_slices(starts, sizes, dims, where: str) -> tuple[slice, ...]:
    """Each start clamped to [0, dim - size], so the slice is always in bounds."""
    if len(starts) != len(dims):
        raise ExecutionError(f"{where}: {len(starts)} start indices for rank {len(dims)}")
    slices = []
    for start, size, dim in zip(starts, sizes, dims):
        start = min(max(start, 0), dim - size)
        slices.append(slice(start, start + size))
    return tuple(slices)


@rule(Opcode.DYNAMIC_SLICE)
def dynamic_slice(instruction, operands, evaluator):
    value = operands[0]
    sizes = instruction.attr("dynamic_slice_sizes", instruction.shape.dimensions)
    index = _clamped_slices(_start_indices(operands[1:]), sizes, value.shape, instruction.name)
    return value[index].copy()


@rule(Opcode.DYNAMIC_UPDATE_SLICE)
def dynamic_update_slice(instruction, operands, evaluator):
    value, update = operands[0], operands[1]
    index = _clamped_slices(_start_indices(operands[2:]), update.shape, value.shape,
                            instruction.name)
    result = value.copy()
    result[index] = update
    return result


# -- shared gather/scatter index arithmetic -----------------------------------------
def _index_vectors(indices: np.ndarray, index_vector_dim: int) -> np.ndarray:
    """`indices` as batch dims + one trailing index-vector dim (an implicit trailing
    1 when `index_vector_dim` equals the rank)."""
    indices = _as_int64(indices)
    if index_vector_dim == indices.ndim:
        return indices[..., None]
    return np.moveaxis(indices, index_vector_dim, -1)


def _batch_position(indices_dim: int, index_vector_dim: int) -> int:
    """Where dimension `indices_dim` of the indices array sits among the batch dims."""
    return indices_dim - 1 if indices_dim > index_vector_dim else indices_dim


def _full_starts(vectors: np.ndarray, rank: int, index_map, operand_batching_dims,
                 indices_batching_dims, index_vector_dim: int) -> np.ndarray:
    """Starts into the operand, shape batch + (rank,): the index vector scattered by
    `index_map`; each operand batching dim takes its paired batch coordinate."""
    batch_shape = vectors.shape[:-1]
    starts = np.zeros(batch_shape + (rank,), dtype=np.int64)
    for k, dim in enumerate(index_map):
        starts[..., dim] = vectors[..., k]
    for operand_dim, indices_dim in zip(operand_batching_dims, indices_batching_dims):
        axis = _batch_position(indices_dim, index_vector_dim)
        coordinate = np.arange(batch_shape[axis]).reshape(
            [-1 if a == axis else 1 for a in range(len(batch_shape))])
        starts[..., operand_dim] = coordinate
    return starts


def _window_indices(starts: np.ndarray, window: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """Per operand dim, `start + offset` broadcast to shape batch + window."""
    batch_rank = starts.ndim - 1
    rank = len(window)
    result = []
    for d, size in enumerate(window):
        offset = np.arange(size).reshape((1,) * batch_rank + tuple(
            size if e == d else 1 for e in range(rank)))
        start = starts[..., d].reshape(starts.shape[:-1] + (1,) * rank)
        result.append(start + offset)
    return tuple(result)


# -- gather -------------------------------------------------------------------------
@rule(Opcode.GATHER)
def gather(instruction, operands, evaluator):
    """XLA's general gather: a batch of clamped dynamic slices.

    Each output index splits into batch coordinates (the output dims not in
    `offset_dims`, in order the indices' dims without `index_vector_dim`) and
    offsets into the slice (`offset_dims`, the operand dims that are neither
    collapsed nor batching, in order).
    """
    value, indices = operands
    offset_dims = tuple(instruction.attr("offset_dims", ()))
    collapsed = tuple(instruction.attr("collapsed_slice_dims", ()))
    index_map = tuple(instruction.attr("start_index_map", ()))
    operand_batching = tuple(instruction.attr("operand_batching_dims", ()))
    indices_batching = tuple(instruction.attr("start_indices_batching_dims", ()))
    index_vector_dim = _required(instruction, "index_vector_dim")
    slice_sizes = tuple(_required(instruction, "slice_sizes"))
    if len(slice_sizes) != value.ndim:
        raise ExecutionError(f"gather {instruction.name}: {len(slice_sizes)} slice sizes "
                             f"for an operand of rank {value.ndim}")

    vectors = _index_vectors(indices, index_vector_dim)
    if vectors.shape[-1] != len(index_map):
        raise ExecutionError(f"gather {instruction.name}: index vectors of size "
                             f"{vectors.shape[-1]} for start_index_map={list(index_map)}")
    starts = _full_starts(vectors, value.ndim, index_map, operand_batching, indices_batching,
                          index_vector_dim)
    for d in index_map:  # clamp so the whole slice is in bounds
        starts[..., d] = np.clip(starts[..., d], 0, value.shape[d] - slice_sizes[d])

    if value.ndim == 0:  # a scalar operand: every slice is the scalar itself
        sliced = np.broadcast_to(value, starts.shape[:-1])
    else:
        sliced = value[_window_indices(starts, slice_sizes)]  # batch + slice_sizes
    batch_rank = vectors.ndim - 1
    dropped = set(collapsed) | set(operand_batching)
    kept = [d for d in range(value.ndim) if d not in dropped]
    sliced = sliced.reshape(sliced.shape[:batch_rank] + tuple(slice_sizes[d] for d in kept))

    # Output dim j is offset dim k if j == offset_dims[k], else the next batch dim.
    batch_axes = iter(range(batch_rank))
    perm = [batch_rank + offset_dims.index(j) if j in offset_dims else next(batch_axes)
            for j in range(batch_rank + len(kept))]
    return np.asarray(np.transpose(sliced, perm), order="C")


# -- scatter ------------------------------------------------------------------------
@rule(Opcode.SCATTER)
def scatter(instruction, operands, evaluator):
    """XLA's general (variadic) scatter.

    Operands are N arrays, the indices, then N updates. Update index U splits
    into scatter coordinates (dims not in `update_window_dims`) that pick an
    index vector, and window offsets that map to the operand dims which are
    neither inserted nor batching. A window any part of which lies out of
    bounds is skipped entirely. Updates combine with `to_apply(current, update)`
    one by one in order.
    """
    count = (len(operands) - 1) // 2
    if len(operands) != 2 * count + 1 or count < 1:
        raise ExecutionError(f"scatter {instruction.name} takes N operands, the indices and "
                             f"N updates; got {len(operands)} operands")
    arrays, indices, updates = operands[:count], operands[count], operands[count + 1:]
    window_dims = tuple(instruction.attr("update_window_dims", ()))
    inserted = tuple(instruction.attr("inserted_window_dims", ()))
    index_map = tuple(instruction.attr("scatter_dims_to_operand_dims", ()))
    operand_batching = tuple(instruction.attr("input_batching_dims", ()))
    indices_batching = tuple(instruction.attr("scatter_indices_batching_dims", ()))
    index_vector_dim = _required(instruction, "index_vector_dim")
    combiner = _required(instruction, "to_apply")
    shape = arrays[0].shape
    rank = len(shape)

    vectors = _index_vectors(indices, index_vector_dim)
    if vectors.shape[-1] != len(index_map):
        raise ExecutionError(f"scatter {instruction.name}: index vectors of size "
                             f"{vectors.shape[-1]} for scatter_dims_to_operand_dims="
                             f"{list(index_map)}")
    starts = _full_starts(vectors, rank, index_map, operand_batching, indices_batching,
                          index_vector_dim)

    # Updates as scatter dims + window dims; the window dims fill the operand dims
    # that are neither inserted nor batching, in order; the rest have size 1.
    scatter_dims = [d for d in range(updates[0].ndim) if d not in window_dims]
    perm = scatter_dims + list(window_dims)
    updates = [np.transpose(u, perm) for u in updates]
    batch_shape = updates[0].shape[:len(scatter_dims)]
    if batch_shape != starts.shape[:-1]:
        raise ExecutionError(f"scatter {instruction.name}: update scatter dims "
                             f"{list(batch_shape)} do not match the indices' batch dims "
                             f"{list(starts.shape[:-1])}")
    skipped = set(inserted) | set(operand_batching)
    window_sizes = list(updates[0].shape[len(scatter_dims):])
    if len(window_sizes) + len(skipped) != rank:
        raise ExecutionError(f"scatter {instruction.name}: {len(window_sizes)} window dims "
                             f"and {len(skipped)} inserted/batching dims for rank {rank}")
    window = tuple(1 if d in skipped else window_sizes.pop(0) for d in range(rank))
    updates = [u.reshape(batch_shape + window) for u in updates]

    upper = np.array(shape, dtype=np.int64) - np.array(window, dtype=np.int64)
    in_bounds = np.all((starts >= 0) & (starts <= upper), axis=-1)  # whole windows
    targets = _flat_targets(starts, window, shape)
    keep = np.broadcast_to(in_bounds.reshape(in_bounds.shape + (1,) * rank), targets.shape)
    targets = targets[keep]  # row-major: scatter index major, window index minor
    values = [u[keep] for u in updates]

    results = [np.array(a, copy=True, order="C") for a in arrays]
    apply_in_order(combiner, evaluator, [r.reshape(-1) for r in results], targets, values)
    return results[0] if count == 1 else tuple(results)


def _flat_targets(starts: np.ndarray, window: tuple[int, ...], shape) -> np.ndarray:
    """Row-major operand offsets of every window element, shape batch + window.

    Out-of-bounds positions are clamped here only to keep the arithmetic valid;
    the caller drops their windows.
    """
    if 0 in shape or not shape:  # nothing to address (an empty operand drops every window)
        return np.zeros(starts.shape[:-1] + window, dtype=np.int64)
    positions = _window_indices(starts, window)
    clamped = tuple(np.clip(p, 0, max(n - 1, 0)) for p, n in zip(positions, shape))
    return np.ravel_multi_index(clamped, shape)


# -- applying scatter updates in order ----------------------------------------------
def apply_in_order(combiner: HloComputation, evaluator, flats: list[np.ndarray],
                   targets: np.ndarray, values: list[np.ndarray]) -> None:
    """`flats[j][t] = combiner(flats..[t], values..[i])` for each update i in order,
    where t = targets[i].

    Updates run in rounds: round r holds the r-th update of every target, so
    within a round targets are distinct and one vectorised call of the combiner
    does them all, while each target still sees its updates in order.
    """
    fn = ScalarFunction(evaluator, combiner)
    for selected in _rounds(targets):
        where = targets[selected]
        current = [flat[where] for flat in flats]
        update = [value[selected] for value in values]
        for flat, new in zip(flats, as_list(fn(*current, *update))):
            flat[where] = new


def _rounds(targets: np.ndarray) -> list[np.ndarray]:
    """Positions of the updates grouped by how many earlier updates hit the same
    target; each group keeps the original order."""
    n = targets.size
    if n == 0:
        return []
    order = np.argsort(targets, kind="stable")
    ordered = targets[order]
    first = np.concatenate([[True], ordered[1:] != ordered[:-1]])
    group_start = np.maximum.accumulate(np.where(first, np.arange(n), 0))
    occurrence = np.empty(n, dtype=np.int64)
    occurrence[order] = np.arange(n) - group_start
    by_round = np.argsort(occurrence, kind="stable")
    return np.split(by_round, np.cumsum(np.bincount(occurrence))[:-1])
