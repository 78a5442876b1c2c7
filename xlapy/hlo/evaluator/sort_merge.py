"""The stable sorting permutation under an arbitrary sort comparator, for the
interpreter's sort and TopK rules.

A comparator that orders by one key computed the same way from each side
(`compare(f(lhs_k), f(rhs_k))`, LT or GT: a plain compare, or JAX's compare
of canonicalised floats) is sorted by NumPy on that key. Every other
comparator runs a vectorised bottom-up merge sort that evaluates it on whole
arrays about log²(n)/2 times and gives exactly the permutation of a stable
sort under that comparator. Before merging, the parts of the comparator
that read only one side (JAX's canonicalisation of each key) are computed
once per element, so each comparison runs only the part reading both.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from xlapy.hlo.attributes import ComparisonDirection, ComparisonType
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.evaluator.numerics import total_order_key
from xlapy.hlo.evaluator.scalar_function import ScalarFunction, operand_post_order
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import Opcode

Less = Callable[[list, list], np.ndarray]
"""less(lhs, rhs): one array per operand on each side -> where lhs is ordered first."""

_LHS, _RHS = 1, 2
"""The comparator's parameters 0, 2, 4, ... describe its left element; 1, 3, 5, ... its right."""


def sort_permutation(evaluator, comparator: HloComputation, rows: list) -> np.ndarray:
    """The stable sorting permutation (int64, shape (rows, n)) of each row of
    `rows` (one (rows, n) array per operand) under `comparator`, which takes
    (lhs_0, rhs_0, lhs_1, rhs_1, ...)."""
    count, n = rows[0].shape
    if n <= 1 or count == 0:
        return np.broadcast_to(np.arange(n), (count, n)).copy()
    fn = ScalarFunction(evaluator, comparator)
    keyed = _key_comparator(comparator)
    if keyed is not None:
        operand, side, descending, compare_type = keyed
        values = fn.value_of(side, {2 * operand: rows[operand]})
        key = None if values is None else _sort_key(values, compare_type, descending)
        if key is not None:
            return np.argsort(key, axis=-1, kind="stable")

    split = _split(fn, comparator, rows)
    if split is not None:
        two_sided, lhs_columns, rhs_columns = split

        def less_split(lhs: list, rhs: list) -> np.ndarray:
            return np.asarray(two_sided(*lhs, *rhs), dtype=bool)

        try:
            return merge_sort(less_split, lhs_columns, rhs_columns)
        except Exception:  # noqa: S110  the walk of the whole body below runs the
            pass  # comparator one element at a time where it must, or says what fails

    def less(lhs: list, rhs: list) -> np.ndarray:
        args = [v for pair in zip(lhs, rhs) for v in pair]
        return np.asarray(fn(*args), dtype=bool)

    return merge_sort(less, rows)


def _split(fn: ScalarFunction, comparator: HloComputation, rows: list):
    """(two-sided part, lhs columns, rhs columns): the comparator's one-sided
    values (those reading only lhs parameters, or only rhs ones, that a
    two-sided instruction uses) computed once per element, and a function of
    them giving the comparison; None when the body does not split so.

    JAX's comparator canonicalises each side's floats before comparing: those
    selects then run n times instead of n·log²(n)/2 times.
    """
    side: dict[int, int] = {}  # id -> _LHS | _RHS: the sides of the parameters it reads
    order = operand_post_order(comparator.root_instruction)
    for node in order:
        reads = 0
        if node.opcode is Opcode.PARAMETER:
            reads = _RHS if node.parameter_number % 2 else _LHS
        for op in node.operands:
            reads |= side[id(op)]
        side[id(node)] = reads
    frontier: dict[int, list] = {_LHS: [], _RHS: []}
    for node in order:
        if side[id(node)] != _LHS | _RHS:
            continue
        for op in node.operands:
            one_side = frontier.get(side[id(op)])
            if one_side is not None and op not in one_side:
                one_side.append(op)
    lhs, rhs = frontier[_LHS], frontier[_RHS]
    if not lhs or not rhs or any(not f.shape.is_scalar for f in lhs + rhs):
        return None
    lhs_columns = [fn.value_of(f, {2 * k: r for k, r in enumerate(rows)}) for f in lhs]
    rhs_columns = [fn.value_of(f, {2 * k + 1: r for k, r in enumerate(rows)}) for f in rhs]
    two_sided = fn.with_inputs(lhs + rhs)
    if two_sided is None or any(c is None for c in lhs_columns + rhs_columns):
        return None
    return two_sided, lhs_columns, rhs_columns


# -- comparators that order by one key ----------------------------------------------------

def _key_comparator(comparator: HloComputation):
    """(operand k, the instruction computing k's key from lhs_k, descending,
    comparison type) when the root is an LT/GT compare of one expression of
    lhs_k against the same expression of rhs_k; None otherwise."""
    root = comparator.root_instruction
    if root is None or root.opcode is not Opcode.COMPARE or len(root.operands) != 2:
        return None
    direction = root.attrs.get("direction")
    if direction not in (ComparisonDirection.LT, ComparisonDirection.GT):
        return None
    a, b = root.operands
    for operand in range(comparator.num_parameters // 2):
        lhs, rhs = 2 * operand, 2 * operand + 1
        for side, other, swapped in ((a, b, False), (b, a, True)):
            if _mirrored(side, other, lhs, rhs, {}):
                # compare(f(rhs), f(lhs), LT) sorts descending, as GT does
                descending = (direction is ComparisonDirection.GT) != swapped
                return operand, side, descending, root.attrs.get("type")
    return None


def _mirrored(a: HloInstruction, b: HloInstruction, lhs: int, rhs: int, memo: dict) -> bool:
    """Whether `a` computes from parameter `lhs` exactly what `b` computes from
    parameter `rhs` (the same ops, attributes and constants), reading no
    other parameter."""
    key = (id(a), id(b))
    if key not in memo:
        memo[key] = _mirrored_step(a, b, lhs, rhs, memo)
    return memo[key]


def _mirrored_step(a, b, lhs: int, rhs: int, memo: dict) -> bool:
    if a.opcode is Opcode.PARAMETER or b.opcode is Opcode.PARAMETER:
        return (a.opcode is b.opcode and a.parameter_number == lhs
                and b.parameter_number == rhs)
    if a.opcode is not b.opcode or a.shape != b.shape or len(a.operands) != len(b.operands):
        return False
    if a is b:
        return not _reads_parameters(a, {})
    if a.opcode is Opcode.CONSTANT:
        return _same_literal(a.literal, b.literal)
    if a.attrs.keys() != b.attrs.keys() or not all(
            _same_value(a.attrs[k], b.attrs[k]) for k in a.attrs):
        return False
    return all(_mirrored(x, y, lhs, rhs, memo) for x, y in zip(a.operands, b.operands))


def _reads_parameters(node: HloInstruction, memo: dict) -> bool:
    if id(node) not in memo:
        memo[id(node)] = node.opcode is Opcode.PARAMETER or any(
            _reads_parameters(op, memo) for op in node.operands)
    return memo[id(node)]


def _same_value(x, y) -> bool:
    if x is y:
        return True
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        return _same_literal(x, y)
    try:
        return type(x) is type(y) and bool(x == y)
    except Exception:  # a value without a usable ==: count it as different
        return False


def _same_literal(x, y) -> bool:
    if not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray):
        return False
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


def _sort_key(values: np.ndarray, compare_type, descending: bool):
    """Integers or floats whose stable ascending NumPy order is the requested
    order, or None where a NumPy key cannot express the comparison exactly."""
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


# -- the general merge sort ---------------------------------------------------------------

def merge_sort(less: Less, lhs_columns: list, rhs_columns: list | None = None) -> np.ndarray:
    """Bottom-up stable merge sort of every row at once; returns the permutation
    (int64, shape (rows, n)).

    Each element is described by `lhs_columns` when it is the comparator's left
    argument and by `rhs_columns` (default: the same) when it is the right one,
    each a list of (rows, n) arrays. Runs of width w are merged pairwise: a
    left-run element lands at its own position plus the number of right-run
    elements strictly less than it, found for all left elements together by a
    branchless binary search of log2(w) + 1 comparator calls on whole arrays;
    right-run elements fill the remaining places in order (each after every
    left element not greater than it), which keeps the sort stable. A
    comparator that is no strict weak order still yields a permutation (the
    counts are made monotone within each run).
    """
    rhs_columns = lhs_columns if rhs_columns is None else rhs_columns
    count, n = lhs_columns[0].shape
    lhs_flat = [np.ascontiguousarray(c).reshape(-1) for c in lhs_columns]
    rhs_flat = [np.ascontiguousarray(c).reshape(-1) for c in rhs_columns]
    order = np.arange(count * n)  # the element (flat index) at each flat position
    pos = np.arange(n)
    row_start = (np.arange(count) * n)[:, None]
    width = 1
    while width < n:
        in_left = pos % (2 * width) < width
        left, right = pos[in_left], pos[~in_left]
        block = left // (2 * width)
        right_start = block * (2 * width) + width
        right_len = np.clip(n - right_start, 0, width)
        right_last = np.minimum(right_start + right_len - 1, n - 1)
        # Flat positions: every row's left elements one after another.
        lefts = (row_start + left).reshape(-1)
        starts = (row_start + right_start).reshape(-1)
        lasts = (row_start + right_last).reshape(-1)
        current = [c[order] for c in lhs_flat]
        elements = order[lefts]
        mine = [c[elements] for c in rhs_flat]
        # Binary lifting over the right run, read past its end as its last element
        # repeated (which keeps the predicate a prefix); the count is clipped after.
        found = starts.copy()
        step = width
        while step:
            probe = np.minimum(found + (step - 1), lasts)
            ahead = less([np.take(c, probe) for c in current], mine)
            found += np.multiply(ahead, step, dtype=found.dtype)
            step //= 2
        before = np.minimum(found - starts, np.tile(right_len, count))
        # Monotone within each run (true already for a strict weak order).
        run = (np.arange(count)[:, None] * (block[-1] + 1) + block).reshape(-1) * (width + 1)
        before = np.maximum.accumulate(before + run) - run
        merged = np.empty_like(order)
        placed = np.zeros(order.shape, dtype=bool)
        merged[lefts + before] = elements
        placed[lefts + before] = True
        merged[~placed] = order[(row_start + right).reshape(-1)]
        order = merged
        width *= 2
    return (order.reshape(count, n) - row_start).astype(np.int64)
