"""Algebraic simplifier rules for dot: transposes folded into the dimension
numbers (XLA's TransposeFolding), a transposed result made by swapping the
operands, and dots that contract nothing turned into multiplies (part of
XLA's dot strength reduction).

Folding a transpose keeps every product and the order in which the
contracting dims are summed (they are paired in the listed order); only the
memory order the operand is read in changes. The interpreter's f64 matmul
of f32 data rounds identically; a library GEMM may differ in the last bit
for f64, as it may in XLA. A dot without contracting dims computes each
element as one product rounded once, which is what multiply computes.
"""

from __future__ import annotations

from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.passes.algsimp_core import Rewriter, Rule

Op = Opcode

_SIDES = (("lhs_batch_dims", "lhs_contracting_dims"), ("rhs_batch_dims", "rhs_contracting_dims"))


def _free_dims(rank: int, batch, contracting) -> list[int]:
    """The dims a dot keeps, in operand order (they come after the batch dims)."""
    return [d for d in range(rank) if d not in batch and d not in contracting]


def _folded(dot: HloInstruction, side: int) -> dict | None:
    """The dimension numbers with operand `side`'s transpose folded in, or None
    when the transpose reorders the dims the dot keeps (the result would change
    its dim order)."""
    transpose = dot.operands[side]
    if transpose.opcode is not Op.TRANSPOSE:
        return None
    permutation = transpose.attrs["dimensions"]
    batch_key, contracting_key = _SIDES[side]
    batch = tuple(dot.attrs.get(batch_key, ()))
    contracting = tuple(dot.attrs.get(contracting_key, ()))
    free = [permutation[d] for d in _free_dims(len(permutation), batch, contracting)]
    if free != sorted(free):
        return None
    attrs = dict(dot.attrs)
    if batch:
        attrs[batch_key] = tuple(permutation[d] for d in batch)
    attrs[contracting_key] = tuple(permutation[d] for d in contracting)
    return attrs


def dot_transpose(dot: HloInstruction, b: Rewriter) -> HloInstruction | None:
    for side in (0, 1):
        attrs = _folded(dot, side)
        if attrs is None:
            continue
        operands = list(dot.operands)
        operands[side] = operands[side].operands[0]
        return b.add(Op.DOT, operands, dot.shape, **attrs)
    return None


def transpose_dot(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """transpose(dot(a, b)) -> dot(b, a) where the transpose only puts b's free dims
    before a's (batch dims staying first) and is the dot's one user: the GEMM
    then writes the order its users read (a weight gradient x^T @ g comes out
    as W is laid out) instead of a transposing pass over its result. The same
    products are summed in the same order."""
    dot = op.operands[0]
    if dot.opcode is not Op.DOT or not _only_user(dot, op, b.computation):
        return None
    lhs, rhs = dot.operands
    lhs_batch = tuple(dot.attrs.get("lhs_batch_dims", ()))
    lhs_free = lhs.shape.rank - len(lhs_batch) - len(dot.attrs.get("lhs_contracting_dims", ()))
    rhs_free = (rhs.shape.rank - len(dot.attrs.get("rhs_batch_dims", ()))
                - len(dot.attrs.get("rhs_contracting_dims", ())))
    batch = len(lhs_batch)
    swapped = (*range(batch), *range(batch + lhs_free, batch + lhs_free + rhs_free),
               *range(batch, batch + lhs_free))
    if not lhs_free or not rhs_free or tuple(op.attrs["dimensions"]) != swapped:
        return None
    mirror = {**dict(zip(*_SIDES)), **dict(zip(*reversed(_SIDES)))}
    renamed = {mirror.get(key, key): value for key, value in dot.attrs.items()}
    attrs = {key: renamed.pop(key) for key in dot.attrs if key in renamed}   # (in order)
    attrs.update(renamed)
    if attrs.get("operand_precision"):
        attrs["operand_precision"] = tuple(reversed(attrs["operand_precision"]))
    return b.add(Op.DOT, [rhs, lhs], op.shape, **attrs)


def _only_user(value: HloInstruction, user: HloInstruction, computation) -> bool:
    """Whether `user` is the only use of `value` (which is not the root)."""
    if value is computation.root_instruction:
        return False
    return sum(o is value for i in computation.instructions for o in i.operands) == 1


def _broadcast_dims(rank: int, batch, offset: int) -> tuple[int, ...] | None:
    """Where each operand dim lands in the result of a dot that contracts nothing:
    batch dims in listed order first, then this side's free dims from `offset`."""
    free = _free_dims(rank, batch, ())
    dims = [batch.index(d) if d in batch else offset + free.index(d) for d in range(rank)]
    return tuple(dims) if dims == sorted(dims) else None


def dot_outer(dot: HloInstruction, b: Rewriter) -> HloInstruction | None:
    lhs, rhs = dot.operands
    if dot.attrs.get("lhs_contracting_dims"):
        return None
    element_type = dot.shape.element_type
    if lhs.shape.element_type is not element_type or rhs.shape.element_type is not element_type:
        return None
    lhs_batch = tuple(dot.attrs.get("lhs_batch_dims", ()))
    rhs_batch = tuple(dot.attrs.get("rhs_batch_dims", ()))
    lhs_free = lhs.shape.rank - len(lhs_batch)
    lhs_dims = _broadcast_dims(lhs.shape.rank, lhs_batch, len(lhs_batch))
    rhs_dims = _broadcast_dims(rhs.shape.rank, rhs_batch, len(lhs_batch) + lhs_free)
    if lhs_dims is None or rhs_dims is None:
        return None
    wide_lhs = b.broadcast(lhs, dot.shape, lhs_dims)
    wide_rhs = b.broadcast(rhs, dot.shape, rhs_dims)
    return b.add(Op.MULTIPLY, [wide_lhs, wide_rhs])


RULES: dict[Opcode, tuple[Rule, ...]] = {
    Op.DOT: (
        dot_transpose,                     # dot(transpose(a), b) -> dot(a, b) (dims permuted)
        dot_outer,                         # dot(a, b) contracting nothing -> bcast(a) * bcast(b)
    ),
    Op.TRANSPOSE: (
        transpose_dot,                     # transpose(dot(a, b)) -> dot(b, a)  (its one user)
    ),
}
"""Dot rewrites, tried in order."""
