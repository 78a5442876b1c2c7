"""Algebraic simplifier rules for reduce (single-output reduces only).

XLA leaves the order in which a reduction combines its elements open, so a
float sum or product may be reassociated; three rules use that freedom and
may change float results in the last bits, exactly as XLA's do:
`reduce_broadcast_sum` (n copies of x summed become x * n),
`reduce_reduce` (two sums become one) and `reduce_transpose` (the elements
are visited in another order). For integers, pred, max and min they are
exact. Unlike XLA, xlapy merges two reduces only when the init value is the
op's identity (XLA also merges `reduce(reduce(x, 1), 1)` for add, adding the
init twice), and keeps the init in `reduce_elementwise` (XLA drops it,
assuming it is the identity).
"""

from __future__ import annotations

import math

from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.passes.algsimp_core import Rewriter, Rule, is_identity, scalar_binary_op

Op = Opcode

_ASSOCIATIVE = frozenset({Op.ADD, Op.MULTIPLY, Op.MAXIMUM, Op.MINIMUM, Op.AND, Op.OR, Op.XOR})
_IDEMPOTENT = frozenset({Op.MAXIMUM, Op.MINIMUM, Op.AND, Op.OR})


def _single(reduce: HloInstruction) -> bool:
    return len(reduce.operands) == 2 and not reduce.shape.is_tuple


def _combine(b: Rewriter, op: Opcode, swapped: bool, init: HloInstruction,
             x: HloInstruction) -> HloInstruction:
    """init ⊕ x as the reducer computes it (its first parameter is the accumulator)."""
    init = b.broadcast(init, x.shape, ())
    return b.add(op, [x, init] if swapped else [init, x])


def _broadcast_reduced_dims(reduce: HloInstruction) -> tuple[HloInstruction, list] | None:
    """(x, where x's dims land in the result) when the reduce's operand is a
    broadcast of x and every reduced dim is one the broadcast added."""
    bcast = reduce.operands[0]
    if bcast.opcode is not Op.BROADCAST:
        return None
    placed = list(bcast.attrs["dimensions"])
    reduced = reduce.attrs["dimensions"]
    if placed != sorted(placed) or not reduced or any(d in placed for d in reduced):
        return None
    landing = [d - sum(1 for r in reduced if r < d) for d in placed]
    return bcast.operands[0], landing


def reduce_empty(reduce: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Nothing to combine: every result element is the init value."""
    x, init = reduce.operands[:2]
    if not _single(reduce):
        return None
    if x.shape.element_count and reduce.shape.element_count:
        return None
    return b.add(Op.BROADCAST, [init], reduce.shape, dimensions=())


def reduce_elementwise(reduce: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Each result element combines the init with exactly one element of x."""
    x, init = reduce.operands[:2]
    reducer = scalar_binary_op(reduce.attrs["to_apply"])
    if not _single(reduce) or reducer is None:
        return None
    if x.shape.element_count != reduce.shape.element_count or not x.shape.element_count:
        return None
    return _combine(b, *reducer, init, b.reshape(x, reduce.shape))


def reduce_broadcast_sum(reduce: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """n equal terms sum to n * x (for floats, rounded once instead of n times)."""
    reducer = scalar_binary_op(reduce.attrs["to_apply"])
    if not _single(reduce) or reducer is None or reducer[0] is not Op.ADD:
        return None
    found = _broadcast_reduced_dims(reduce)
    if found is None:
        return None
    x, landing = found
    bcast = reduce.operands[0]
    count = math.prod(bcast.shape.dimensions[d] for d in reduce.attrs["dimensions"])
    scaled = b.add(Op.MULTIPLY, [x, b.full(count, x.shape)])
    summed = b.add(Op.ADD, [b.broadcast(reduce.operands[1], x.shape, ()), scaled])
    return b.broadcast(summed, reduce.shape, landing)


def reduce_broadcast_idempotent(reduce: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """max, min, and, or of n copies of x is x."""
    reducer = scalar_binary_op(reduce.attrs["to_apply"])
    if not _single(reduce) or reducer is None or reducer[0] not in _IDEMPOTENT:
        return None
    found = _broadcast_reduced_dims(reduce)
    if found is None:
        return None
    x, landing = found
    combined = _combine(b, *reducer, reduce.operands[1], x)
    return b.broadcast(combined, reduce.shape, landing)


def reduce_reduce(reduce: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Both reduces fold with the same associative op from its identity."""
    inner, init = reduce.operands[:2]
    if not _single(reduce) or inner.opcode is not Op.REDUCE or not _single(inner):
        return None
    outer_op = scalar_binary_op(reduce.attrs["to_apply"])
    inner_op = scalar_binary_op(inner.attrs["to_apply"])
    if outer_op is None or inner_op is None or outer_op[0] is not inner_op[0]:
        return None
    op = outer_op[0]
    if op not in _ASSOCIATIVE or not is_identity(op, init):
        return None
    if not is_identity(op, inner.operands[1]):
        return None
    x = inner.operands[0]
    inner_dims = set(inner.attrs["dimensions"])
    kept = [d for d in range(x.shape.rank) if d not in inner_dims]
    merged = sorted(inner_dims | {kept[d] for d in reduce.attrs["dimensions"]})
    return b.add(Op.REDUCE, [x, init], reduce.shape, dimensions=tuple(merged),
                 to_apply=reduce.attrs["to_apply"])


def _reorderable(reduce: HloInstruction, operand: Opcode) -> bool:
    """A single reduce of an `operand` op whose reducer may visit the elements in
    any order (associative and commutative)."""
    reducer = scalar_binary_op(reduce.attrs["to_apply"])
    return _single(reduce) and reduce.operands[0].opcode is operand and \
        reducer is not None and reducer[0] in _ASSOCIATIVE


def reduce_transpose(reduce: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Reduce the transpose's operand instead when the kept dims keep their order."""
    transpose, init = reduce.operands[:2]
    if not _reorderable(reduce, Op.TRANSPOSE):
        return None
    permutation = transpose.attrs["dimensions"]
    reduced = reduce.attrs["dimensions"]
    kept = [permutation[d] for d in range(len(permutation)) if d not in reduced]
    if kept != sorted(kept):
        return None
    dims = tuple(sorted(permutation[d] for d in reduced))
    return b.add(Op.REDUCE, [transpose.operands[0], init], reduce.shape, dimensions=dims,
                 to_apply=reduce.attrs["to_apply"])


def reshape_groups(source: tuple, target: tuple) -> list[tuple[list, list]] | None:
    """A row-major reshape as (source dims, target dims) groups of equal product, in
    order, each as small as it can be; None when a dimension of 1 or a product that
    never matches leaves the grouping unclear."""
    if 1 in source or 1 in target:
        return None
    result, i, j = [], 0, 0
    while i < len(source) and j < len(target):
        a, b = [i], [j]
        pa, pb = source[i], target[j]
        while pa != pb:
            if pa < pb:
                i += 1
                if i == len(source):
                    return None
                a.append(i)
                pa *= source[i]
            else:
                j += 1
                if j == len(target):
                    return None
                b.append(j)
                pb *= target[j]
        result.append((a, b))
        i, j = i + 1, j + 1
    return result if i == len(source) and j == len(target) else None


def reduce_reshape(reduce: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Reduce the reshape's operand when the reshape only splits or merges reduced
    dims among themselves and kept dims among themselves: the elements each result
    combines are the same (heads merged back, [b, s, h, d] -> [b, s, h*d], then
    summed over b and s: the sum over b and s of [b, s, h, d], whose transpose the
    next rule then sees)."""
    reshape, init = reduce.operands[:2]
    if not _reorderable(reduce, Op.RESHAPE):
        return None
    y = reshape.operands[0]
    found = reshape_groups(y.shape.dimensions, reshape.shape.dimensions)
    if found is None:
        return None
    reduced = set(reduce.attrs["dimensions"])
    dims = []
    for source, target in found:
        hit = [d in reduced for d in target]
        if any(hit) != all(hit):
            return None
        if hit[0]:
            dims.extend(source)
    kept = [y.shape.dimensions[d] for d in range(y.shape.rank) if d not in dims]
    if len(kept) == reduce.shape.rank:      # nothing split or merged among the kept dims:
        return None                         # the reshape only moved reduced ones (no gain)
    inner = b.add(Op.REDUCE, [y, init], Shape.array(reduce.shape.element_type, kept),
                  dimensions=tuple(dims), to_apply=reduce.attrs["to_apply"])
    return b.reshape(inner, reduce.shape)


RULES: dict[Opcode, tuple[Rule, ...]] = {
    Op.REDUCE: (
        reduce_empty,                      # reduce([], init) -> broadcast(init)
        reduce_elementwise,                # reduce over 1-sized dims -> init ⊕ reshape(x)
        reduce_broadcast_sum,              # sum(broadcast(x)) over new dims -> init + x * n
        reduce_broadcast_idempotent,       # max(broadcast(x)) over new dims -> max(init, x)
        reduce_reduce,                     # reduce(reduce(x, d1), d2) -> reduce(x, d1 + d2)
        reduce_transpose,                  # reduce(transpose(x), d) -> reduce(x, perm(d))
        reduce_reshape,                    # reduce(reshape(x)) -> reshape(reduce(x)) by groups
    ),
}
"""Reduce rewrites, tried in order."""
