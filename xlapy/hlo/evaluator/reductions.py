"""Interpreter rules for ops that apply a called scalar computation: reduce,
reduce-window, select-and-scatter, map, sort and topk.

Called computations run on whole arrays through `ScalarFunction`, so each
rule evaluates its body a handful of times on whole arrays, never once per
element: reduce combines neighbours in a pairwise tree (log2(n) body walks),
reduce-window loops over window offsets, a cumulative window is a running
scan, and sort merges runs (sort_merge.py). Reducers that are a single
binary op of their parameters take NumPy's ufuncs instead.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ExecutionError
from xlapy.hlo.attributes import Window
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.evaluator.numerics import total_order_key
from xlapy.hlo.evaluator.rules import rule
from xlapy.hlo.evaluator.scalar_function import ScalarFunction, as_list
from xlapy.hlo.evaluator.sort_merge import sort_permutation
from xlapy.hlo.ir import HloComputation
from xlapy.hlo.opcode import Opcode

# -- binary reducers with a NumPy fast path ----------------------------------------------

_PRED_UFUNCS = {
    Opcode.ADD: np.logical_or, Opcode.MULTIPLY: np.logical_and, Opcode.MAXIMUM: np.logical_or,
    Opcode.MINIMUM: np.logical_and, Opcode.AND: np.logical_and, Opcode.OR: np.logical_or,
    Opcode.XOR: np.logical_xor,
}
_INT_UFUNCS = {
    Opcode.ADD: np.add, Opcode.MULTIPLY: np.multiply, Opcode.MAXIMUM: np.maximum,
    Opcode.MINIMUM: np.minimum, Opcode.AND: np.bitwise_and, Opcode.OR: np.bitwise_or,
    Opcode.XOR: np.bitwise_xor,
}
_FLOAT_UFUNCS = {Opcode.ADD: np.add, Opcode.MULTIPLY: np.multiply,
                 Opcode.MAXIMUM: np.maximum, Opcode.MINIMUM: np.minimum}
_COMPLEX_UFUNCS = {Opcode.ADD: np.add, Opcode.MULTIPLY: np.multiply}


def binary_reducer(computation: HloComputation, dtype: np.dtype):
    """(ufunc, compute dtype) when `computation` is `op(p0, p1)` on scalars of
    `dtype` for an op NumPy reduces exactly as XLA does; None otherwise.

    np.maximum/np.minimum propagate NaN like XLA. Narrow floats are computed in
    float32 and rounded once at the end.
    """
    root = computation.root_instruction
    params = computation.parameters
    if len(params) != 2 or root is None or len(root.operands) != 2:
        return None
    if sorted(id(op) for op in root.operands) != sorted(id(p) for p in params):
        return None
    if any(not s.is_scalar or s.dtype != dtype for s in (root.shape, *(p.shape for p in params))):
        return None
    element = PrimitiveType.from_numpy(dtype)
    if element.is_pred:
        table = _PRED_UFUNCS
    elif element.is_integral and element.bit_width == dtype.itemsize * 8:
        table = _INT_UFUNCS
    elif element.is_float:
        table = _FLOAT_UFUNCS
    elif element.is_complex:
        table = _COMPLEX_UFUNCS
    else:
        return None
    ufunc = table.get(root.opcode)
    if ufunc is None:
        return None
    wide = element.is_float and element.bit_width < 32
    return ufunc, np.dtype(np.float32) if wide else dtype


# -- reduce -------------------------------------------------------------------------------

@rule(Opcode.REDUCE)
def _reduce(instruction, operands, evaluator):
    """N inputs and N inits: per kept index, init ⊕ every reduced element (a tuple
    of N arrays when N > 1), the reduced dims taken in row-major order.

    A general body combines neighbours pairwise, the earlier always on the left,
    then applies init once on the left: XLA lets reductions reassociate, and a
    selection reducer (argmax: the better value, ties to the lower index) gives
    exactly the sequential fold's result.
    """
    n = len(operands) // 2
    inputs, inits = operands[:n], operands[n:]
    dims = tuple(sorted(instruction.attrs.get("dimensions", ())))
    computation = instruction.attrs["to_apply"]
    fast = binary_reducer(computation, inputs[0].dtype) if n == 1 else None
    if fast is not None:
        ufunc, compute = fast
        with np.errstate(all="ignore"):
            value = ufunc.reduce(inputs[0].astype(compute), axis=dims, dtype=compute,
                                 initial=inits[0].astype(compute)[()])
        return np.asarray(value).astype(inputs[0].dtype)
    kept = [d for d in range(inputs[0].ndim) if d not in dims]
    kept_shape = tuple(inputs[0].shape[d] for d in kept)
    length = int(np.prod([inputs[0].shape[d] for d in dims], dtype=np.int64))
    if length == 0 or 0 in kept_shape:
        return _collate([np.full(kept_shape, init, dtype=init.dtype) for init in inits], n)
    # Reduced elements along one trailing axis, in row-major order of the reduced dims.
    columns = [x.transpose(kept + list(dims)).reshape(kept_shape + (length,)) for x in inputs]
    fn = ScalarFunction(evaluator, computation)
    totals = tree_reduce(fn, columns)
    result = as_list(fn(*inits, *totals))
    return _collate([np.array(np.broadcast_to(r, kept_shape)) for r in result], n)


def tree_reduce(fn: ScalarFunction, columns: list) -> list:
    """c[0] ⊕ c[1] ⊕ ... along the last axis of each column, per leading index,
    as a balanced tree of neighbour combinations that keeps the elements' order
    (the earlier operand always on the left): log2(n) vectorised walks."""
    while columns[0].shape[-1] > 1:
        length = columns[0].shape[-1]
        even = length // 2 * 2
        merged = as_list(fn(*(c[..., 0:even:2] for c in columns),
                             *(c[..., 1:even:2] for c in columns)))
        if even < length:  # the odd last element moves up a level as it is
            merged = [np.concatenate([m, c[..., even:]], axis=-1)
                      for m, c in zip(merged, columns)]
        columns = merged
    return [c[..., 0] for c in columns]


# -- windows ------------------------------------------------------------------------------

def window_positions(window: Window, base_shape, out_shape):
    """For each window offset in row-major order: (index arrays, valid mask).

    Index arrays (one per dim, broadcastable to `out_shape`) address the base
    array; the mask is false where the offset falls into padding or a hole of
    base dilation, which XLA skips (they contribute nothing but the init value).
    """
    dims = window.dimensions
    for offset in np.ndindex(*(d.size for d in dims)):
        indices, mask = [], np.ones(out_shape, dtype=bool)
        for axis, (d, k) in enumerate(zip(dims, offset)):
            shape = [1] * len(out_shape)
            shape[axis] = out_shape[axis]
            dilated = np.arange(out_shape[axis]) * d.stride + k * d.window_dilation - d.padding_low
            extent = (base_shape[axis] - 1) * d.base_dilation + 1
            valid = (dilated >= 0) & (dilated < extent) & (dilated % d.base_dilation == 0)
            index = np.clip(dilated // d.base_dilation, 0, max(base_shape[axis] - 1, 0))
            indices.append(index.reshape(shape))
            mask &= valid.reshape(shape)
        yield tuple(indices), mask


@rule(Opcode.REDUCE_WINDOW)
def _reduce_window(instruction, operands, evaluator):
    """Per window placement, init ⊕ the window's elements in row-major order;
    padding and base-dilation holes are skipped. Variadic like reduce.

    A window spanning a whole axis with n-1 elements of padding on one side (a
    cumulative sum, max, ...) is a running scan instead (XLA leaves the order of
    a window's reduction open): NumPy's ufunc.accumulate for a single binary
    op, else a log-step scan of the body.
    """
    n = len(operands) // 2
    inputs, inits = operands[:n], operands[n:]
    shape = instruction.shape
    out_shape = (shape.tuple_shapes[0] if shape.is_tuple else shape).dimensions
    window = instruction.attrs["window"]
    computation = instruction.attrs["to_apply"]
    if min(inputs[0].shape, default=1) == 0:  # no element to read: every window is empty
        return _collate([np.full(out_shape, init, init.dtype) for init in inits], n)
    fast = binary_reducer(computation, inputs[0].dtype) if n == 1 else None
    cumulative = cumulative_axis(window, inputs[0].shape)
    if cumulative is not None:
        axis, reverse = cumulative
        if fast is not None:
            return _accumulate(fast, inputs[0], inits[0], axis, reverse)
        fn = ScalarFunction(evaluator, computation)
        return _collate(scan(fn, inputs, inits, axis, reverse), n)
    if fast is not None:
        ufunc, compute = fast
        x = inputs[0].astype(compute)
        acc = np.full(out_shape, inits[0], dtype=compute)
        with np.errstate(all="ignore"):
            for index, mask in window_positions(window, x.shape, out_shape):
                acc = np.where(mask, ufunc(acc, x[index]), acc)
        return acc.astype(inputs[0].dtype)
    fn = ScalarFunction(evaluator, computation)
    accs = [np.full(out_shape, init, dtype=init.dtype) for init in inits]
    for index, mask in window_positions(window, inputs[0].shape, out_shape):
        new = as_list(fn(*accs, *(x[index] for x in inputs)))
        accs = [np.where(mask, v, a) for v, a in zip(new, accs)]
    return _collate(accs, n)


def cumulative_axis(window: Window, base_shape) -> tuple[int, bool] | None:
    """(axis, reverse) when `window` makes a running reduction along one axis of
    length n ≥ 2: size n, stride 1, padding (n-1, 0) (or (0, n-1): `reverse`),
    no dilation, and a trivial window (size 1, no padding) on every other axis."""
    found = None
    for axis, (d, length) in enumerate(zip(window.dimensions, base_shape)):
        if d.stride != 1 or d.window_dilation != 1 or d.base_dilation != 1:
            return None
        pads = (d.padding_low, d.padding_high)
        if d.size == 1 and pads == (0, 0):
            continue
        if found is not None or d.size != length or length < 2:
            return None
        if pads not in ((length - 1, 0), (0, length - 1)):
            return None
        found = (axis, pads == (0, length - 1))
    return found


def _accumulate(fast, x: np.ndarray, init: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    """The running ufunc along `axis` from init: init ⊕ x[0] ⊕ ... ⊕ x[i] in that
    order, or init ⊕ x[n-1] ⊕ ... ⊕ x[i] for `reverse` (the ufuncs commute), in
    the compute dtype, rounded once."""
    ufunc, compute = fast
    values = x.astype(compute)
    if reverse:
        values = np.flip(values, axis)
    start_shape = values.shape[:axis] + (1,) + values.shape[axis + 1:]
    start = np.broadcast_to(init.astype(compute), start_shape)
    with np.errstate(all="ignore"):
        running = ufunc.accumulate(np.concatenate([start, values], axis=axis), axis=axis,
                                   dtype=compute)
    running = np.delete(running, 0, axis=axis)
    if reverse:
        running = np.flip(running, axis)
    return np.ascontiguousarray(running).astype(x.dtype)


def scan(fn: ScalarFunction, inputs: list, inits: list, axis: int, reverse: bool) -> list:
    """Running reductions of a general body along `axis` in log2(n) vectorised
    steps (Hillis-Steele), the earlier elements always on the left, then init
    applied once on the left: output i is init ⊕ (x[0] ⊕ ... ⊕ x[i]), or
    init ⊕ (x[i] ⊕ ... ⊕ x[n-1]) for `reverse`."""
    parts = [np.moveaxis(x, axis, -1) for x in inputs]
    n = parts[0].shape[-1]
    shift = 1
    while shift < n:
        combined = as_list(fn(*(p[..., :n - shift] for p in parts),
                               *(p[..., shift:] for p in parts)))
        if reverse:  # element k now covers k .. k + 2*shift - 1
            parts = [np.concatenate([c, p[..., n - shift:]], axis=-1)
                     for c, p in zip(combined, parts)]
        else:  # element k now covers k - 2*shift + 1 .. k
            parts = [np.concatenate([p[..., :shift], c], axis=-1)
                     for c, p in zip(combined, parts)]
        shift *= 2
    result = as_list(fn(*inits, *parts))
    return [np.ascontiguousarray(np.moveaxis(np.broadcast_to(r, parts[0].shape), -1, axis))
            for r in result]


def _collate(values: list, n: int):
    return tuple(values) if n > 1 else values[0]


@rule(Opcode.SELECT_AND_SCATTER)
def _select_and_scatter(instruction, operands, evaluator):
    """Output starts as init; each source element is scattered onto the element
    its window selects (XLA's scan: select(selected, current) false switches)."""
    operand, source, init = operands
    window = instruction.attrs["window"]
    select = ScalarFunction(evaluator, instruction.attrs["select"])
    scatter = ScalarFunction(evaluator, instruction.attrs["scatter"])
    output = np.full(operand.shape, init, dtype=operand.dtype)
    if operand.size == 0 or source.size == 0:
        return output
    # Scan each window in order: the first valid element starts the selection and a
    # later element replaces it wherever select(selected, current) is false.
    chosen = np.zeros(source.shape, dtype=bool)
    selected = np.zeros(source.shape, dtype=operand.dtype)
    where = np.zeros(source.shape, dtype=np.int64)
    for index, mask in window_positions(window, operand.shape, source.shape):
        current = np.broadcast_to(operand[index], source.shape)
        flat = np.broadcast_to(np.ravel_multi_index(index, operand.shape) if index else 0,
                               source.shape)
        first = mask & ~chosen
        keep = np.asarray(select(selected, current), dtype=bool)
        take = first | (mask & chosen & ~keep)
        selected = np.where(take, current, selected)
        where = np.where(take, flat, where)
        chosen |= mask
    targets, values = where[chosen], source[chosen]
    # Apply scatter in source order; the r-th hit of each target goes in round r.
    order = np.argsort(targets, kind="stable")
    sorted_targets = targets[order]
    starts = np.searchsorted(sorted_targets, sorted_targets, side="left")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size) - starts
    flat_out = output.reshape(-1)
    for r in range(int(rank.max(initial=-1)) + 1):
        hit = rank == r
        t = targets[hit]
        flat_out[t] = scatter(flat_out[t], values[hit])
    return output


@rule(Opcode.MAP)
def _map(instruction, operands, evaluator):
    """to_apply on the operands' elements at every index."""
    fn = ScalarFunction(evaluator, instruction.attrs["to_apply"])
    value = fn(*operands) if operands else evaluator.call(instruction.attrs["to_apply"], [])
    return np.array(np.broadcast_to(value, instruction.shape.dimensions))


# -- sort and topk ------------------------------------------------------------------------

@rule(Opcode.SORT)
def _sort(instruction, operands, evaluator):
    """All operands reordered along `dimensions={d}` by one stable permutation
    (stable even when is_stable=false: XLA allows any order of equal elements)."""
    axis = instruction.attrs.get("dimensions", (operands[0].ndim - 1,))[0]
    moved = [np.moveaxis(x, axis, -1) for x in operands]
    count = int(np.prod(moved[0].shape[:-1], dtype=np.int64))
    rows = [m.reshape(count, m.shape[-1]) for m in moved]
    perm = sort_permutation(evaluator, instruction.attrs["to_apply"], rows)
    result = [np.moveaxis(np.take_along_axis(r, perm, -1).reshape(m.shape), -1, axis)
              for r, m in zip(rows, moved)]
    return tuple(result) if instruction.shape.is_tuple else result[0]


@rule(Opcode.TOPK)
def _topk(instruction, operands, evaluator):
    """(values, s32 indices) of the k largest (or smallest) along the last dim;
    floats in total order (+NaN largest, -NaN smallest), ties by lower index."""
    x = operands[0]
    k = instruction.attrs["k"]
    largest = instruction.attrs.get("largest", True)
    element = PrimitiveType.from_numpy(x.dtype)
    if element.is_float:  # XLA's TopK compares floats in total order
        key = total_order_key(x)
    elif element.is_pred or element.is_integral:
        key = x.astype(np.int64 if element.is_signed_int else np.uint64)
    else:
        raise ExecutionError(f"{instruction.name}: topk does not take {element.value}")
    order = np.argsort(~key if largest else key, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, -1), order.astype(np.int32)


def topk_custom_call(instruction, operands, evaluator):
    """custom-call "TopK" as XLA's CPU pipeline emits it: the first k of a stable
    sort of the last dim under its comparator (`to_apply` or the one
    `called_computations`; on the values alone, or on values and their s32
    indices); returns (values, s32 indices)."""
    x = operands[0]
    k = instruction.shape.tuple_shapes[0].dimensions[-1]
    called = instruction.called_computations  # to_apply=, or called_computations={..}
    if len(called) != 1:
        raise ExecutionError(f"{instruction.name}: a TopK custom call needs one comparator "
                             f"computation, not {len(called)}")
    comparator = called[0]
    rows = [x.reshape(-1, x.shape[-1])]
    if comparator.num_parameters == 4:
        rows.append(np.broadcast_to(np.arange(x.shape[-1], dtype=np.int32), rows[0].shape))
    perm = sort_permutation(evaluator, comparator, rows)[:, :k]
    values = np.take_along_axis(rows[0], perm, -1)
    out_shape = x.shape[:-1] + (k,)
    return values.reshape(out_shape), perm.astype(np.int32).reshape(out_shape)
