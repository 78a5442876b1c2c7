"""Interpreter rules for ops that apply a called scalar computation: reduce,
reduce-window, select-and-scatter, map, sort and topk.

Called computations run on whole arrays through `ScalarFunction`. Reducers
that are a single binary op of their parameters take a NumPy fast path; so
do sorts whose comparator is a single LT/GT compare.
"""

from __future__ import annotations

import functools

import numpy as np

from xlapy.backends.interpreter.rules import rule
from xlapy.backends.interpreter.scalar_function import ScalarFunction, as_list
from xlapy.errors import ExecutionError
from xlapy.hlo.attributes import ComparisonDirection, ComparisonType, Window
from xlapy.hlo.dtypes import PrimitiveType
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

_SEQUENTIAL_LIMIT = 1024
"""Longest fold done strictly left to right; longer ones combine pairwise (XLA
lets reductions reassociate), which keeps the number of body walks logarithmic."""


@rule(Opcode.REDUCE)
def _reduce(instruction, operands, evaluator):
    """N inputs and N inits: per kept index, init ⊕ every reduced element (a tuple
    of N arrays when N > 1). The reduced dims are folded in row-major order."""
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
    # Reduced elements along one trailing axis, in row-major order of the reduced dims.
    columns = [x.transpose(kept + list(dims)).reshape(kept_shape + (length,)) for x in inputs]
    accs = [np.broadcast_to(init, kept_shape) for init in inits]
    result = fold(ScalarFunction(evaluator, computation), accs, columns)
    return tuple(result) if n > 1 else result[0]


def fold(fn: ScalarFunction, accs: list, columns: list) -> list:
    """init ⊕ c[0] ⊕ c[1] ⊕ ... along the last axis of each column, per kept index."""
    length = columns[0].shape[-1]
    if length > _SEQUENTIAL_LIMIT:
        columns = _pairwise(fn, columns)
        length = 1
    for i in range(length):
        accs = as_list(fn(*accs, *(c[..., i] for c in columns)))
    return [np.array(np.broadcast_to(a, columns[0].shape[:-1])) for a in accs]


def _pairwise(fn: ScalarFunction, columns: list) -> list:
    """Combine neighbours (keeping order) until each column has one element."""
    while columns[0].shape[-1] > 1:
        even = columns[0].shape[-1] // 2 * 2
        merged = as_list(fn(*(c[..., 0:even:2] for c in columns),
                             *(c[..., 1:even:2] for c in columns)))
        columns = [np.concatenate([m, c[..., even:]], axis=-1) for m, c in zip(merged, columns)]
    return columns


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
    padding and base-dilation holes are skipped. Variadic like reduce."""
    n = len(operands) // 2
    inputs, inits = operands[:n], operands[n:]
    shape = instruction.shape
    out_shape = (shape.tuple_shapes[0] if shape.is_tuple else shape).dimensions
    window = instruction.attrs["window"]
    computation = instruction.attrs["to_apply"]
    if min(inputs[0].shape, default=1) == 0:  # no element to read: every window is empty
        return _collate([np.full(out_shape, init, init.dtype) for init in inits], n)
    fast = binary_reducer(computation, inputs[0].dtype) if n == 1 else None
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


def sort_permutation(evaluator, comparator: HloComputation, rows: list) -> np.ndarray:
    """The stable sorting permutation of each row (shape (rows, n), one array per
    operand) under `comparator`, which takes (lhs_0, rhs_0, lhs_1, rhs_1, ...)."""
    count, n = rows[0].shape
    if n <= 1 or count == 0:
        return np.broadcast_to(np.arange(n), (count, n)).copy()
    simple = _simple_comparator(comparator)
    if simple is not None:
        operand, descending, compare_type = simple
        key = _sort_key(rows[operand], compare_type, descending)
        if key is not None:
            return np.argsort(key, axis=-1, kind="stable")
    fn = ScalarFunction(evaluator, comparator)

    def less(lhs: list, rhs: list) -> np.ndarray:
        args = [v for pair in zip(lhs, rhs) for v in pair]
        return np.asarray(fn(*args), dtype=bool)

    return _merge_sort(less, rows)


def _simple_comparator(comparator: HloComputation):
    """(operand, descending, comparison type) when the comparator is one LT/GT
    compare of an operand's two parameters; None otherwise."""
    root = comparator.root_instruction
    if root is None or root.opcode is not Opcode.COMPARE:
        return None
    a, b = root.operands
    if a.opcode is not Opcode.PARAMETER or b.opcode is not Opcode.PARAMETER:
        return None
    i, j = a.parameter_number, b.parameter_number
    if i // 2 != j // 2 or i == j:
        return None
    direction = root.attrs.get("direction")
    if direction not in (ComparisonDirection.LT, ComparisonDirection.GT):
        return None
    descending = (direction is ComparisonDirection.GT) != (i > j)
    return i // 2, descending, root.attrs.get("type")


def _sort_key(values: np.ndarray, compare_type, descending: bool):
    """Integers whose stable ascending order is the requested order, or None
    where a NumPy key cannot express the comparison exactly."""
    element = PrimitiveType.from_numpy(values.dtype)
    if element.is_pred or element.is_integral:
        key = values.astype(np.int64 if element.is_signed_int else np.uint64)
        return ~key if descending else key
    if not element.is_float:
        return None
    if compare_type is ComparisonType.TOTALORDER:
        key = total_order_key(values)
        return ~key if descending else key
    wide = values.astype(np.float64)
    if np.isnan(wide).any():  # FLOAT compares leave NaN unordered: ask the comparator
        return None
    return -wide if descending else wide


_TOTAL_ORDER_BITS = {
    PrimitiveType.F16: np.int16, PrimitiveType.BF16: np.int16,
    PrimitiveType.F32: np.int32, PrimitiveType.F64: np.int64,
}


def total_order_key(values: np.ndarray) -> np.ndarray:
    """int64 keys ordering floats as XLA's TOTALORDER does:
    -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN.

    Types without a table entry (f8 and smaller) widen exactly to float32 first.
    """
    bits_type = _TOTAL_ORDER_BITS.get(PrimitiveType.from_numpy(values.dtype))
    if bits_type is None:
        values, bits_type = values.astype(np.float32), np.int32
    bits = values.view(bits_type).astype(np.int64)
    magnitude = (1 << (np.dtype(bits_type).itemsize * 8 - 1)) - 1
    return np.where(bits < 0, bits ^ magnitude, bits)


def _merge_sort(less, rows: list) -> np.ndarray:
    """Bottom-up stable merge sort of every row at once.

    Each merge places an element of the left run at its index plus the number of
    right-run elements less than it, and a right-run element at its index plus
    the number of left-run elements not greater than it; both counts come from a
    binary search done for all elements together, so the comparator runs
    O(log² n) times on whole arrays. A comparator that is no strict weak order
    can make the positions collide; those rows are re-sorted one comparison at
    a time with Python's stable sort.
    """
    count, n = rows[0].shape
    perm = np.broadcast_to(np.arange(n), (count, n)).copy()
    pos = np.arange(n)
    row_index = np.arange(count)[:, None]
    width = 1
    while width < n:
        current = [np.take_along_axis(r, perm, -1) for r in rows]
        start = pos // (2 * width) * (2 * width)
        in_left = pos - start < width
        own = np.where(in_left, pos - start, pos - start - width)
        other_start = np.where(in_left, start + width, start)
        other_len = np.clip(np.where(in_left, n - start - width, n - start), 0, width)
        lo = np.zeros((count, n), dtype=np.int64)
        hi = np.broadcast_to(other_len, (count, n)).copy()
        while True:
            active = lo < hi
            if not active.any():
                break
            mid = (lo + hi) // 2
            partner = np.minimum(other_start + mid, n - 1)
            theirs = [np.take_along_axis(c, partner, -1) for c in current]
            lhs = [np.where(in_left, t, c) for t, c in zip(theirs, current)]
            rhs = [np.where(in_left, c, t) for t, c in zip(theirs, current)]
            lt = less(lhs, rhs)
            right = np.where(in_left, lt, ~lt)
            lo = np.where(active & right, mid + 1, lo)
            hi = np.where(active & ~right, mid, hi)
        target = start + own + lo
        merged = np.full((count, n), -1, dtype=np.int64)
        merged[row_index, target] = perm
        perm = merged
        width *= 2
    broken = np.nonzero((perm < 0).any(axis=1))[0]
    for r in broken:
        perm[r] = _python_sort_row(less, [row[r] for row in rows])
    return perm


def _python_sort_row(less, row: list) -> list[int]:
    def compare(i: int, j: int) -> int:
        if less([c[i] for c in row], [c[j] for c in row]):
            return -1
        return 1 if less([c[j] for c in row], [c[i] for c in row]) else 0

    return sorted(range(row[0].shape[0]), key=functools.cmp_to_key(compare))


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
