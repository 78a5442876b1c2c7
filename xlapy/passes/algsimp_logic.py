"""Algebraic simplifier rules for logic and value plumbing: not, and, or,
xor, select, compare, convert, clamp and reduce-precision.

Every rule here is exact. Comparing x with itself folds only for integers
and pred (a NaN is not equal to itself), as in XLA.
"""

from __future__ import annotations

import ml_dtypes

from xlapy.hlo.attributes import ComparisonDirection, ComparisonType
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.passes.algsimp_arith import idempotent_self
from xlapy.passes.algsimp_core import Rewriter, Rule, is_all, is_all_ones, preserves_values

Op = Opcode
Dir = ComparisonDirection


# -- not, and, or, xor -----------------------------------------------------------------------
def not_not(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x = op.operands[0]
    return x.operands[0] if x.opcode is Op.NOT else None


def and_zero(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, y = op.operands
    if is_all(y, 0):
        return y
    if is_all(x, 0):
        return x
    return None


def and_ones(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, y = op.operands
    if is_all_ones(y):
        return x
    if is_all_ones(x):
        return y
    return None


def or_zero(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Also xor: x ^ 0 is x."""
    x, y = op.operands
    if is_all(y, 0):
        return x
    if is_all(x, 0):
        return y
    return None


def or_ones(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, y = op.operands
    if is_all_ones(y):
        return y
    if is_all_ones(x):
        return x
    return None


def xor_self(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, y = op.operands
    return b.full(0, op.shape) if x is y else None


# -- select ---------------------------------------------------------------------------------
def select_constant(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    p, on_true, on_false = op.operands
    if is_all(p, True):
        return on_true
    if is_all(p, False):
        return on_false
    return None


def select_same(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    _, on_true, on_false = op.operands
    return on_true if on_true is on_false else None


def select_not(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    p, on_true, on_false = op.operands
    if p.opcode is not Op.NOT:
        return None
    return b.add(Op.SELECT, [p.operands[0], on_false, on_true])


# -- compare --------------------------------------------------------------------------------
_REFLEXIVE = {Dir.EQ: True, Dir.GE: True, Dir.LE: True, Dir.NE: False, Dir.LT: False,
              Dir.GT: False}


def compare_self(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, y = op.operands
    element_type = x.shape.element_type
    if x is not y or not (element_type.is_integral or element_type.is_pred):
        return None
    return b.full(_REFLEXIVE[op.attrs["direction"]], op.shape)


def compare_pred_identity(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, y = op.operands
    if not x.shape.element_type.is_pred:
        return None
    direction = op.attrs["direction"]
    neutral = {Dir.EQ: True, Dir.NE: False}.get(direction)
    if neutral is None:
        return None
    if is_all(y, neutral):
        return x
    if is_all(x, neutral):
        return y
    return None


def compare_unsigned_zero(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Nothing unsigned is below zero (the comparison type must be unsigned too)."""
    x, y = op.operands
    if not x.shape.element_type.is_unsigned_int:
        return None
    if op.attrs.get("type", ComparisonType.UNSIGNED) is not ComparisonType.UNSIGNED:
        return None
    direction = op.attrs["direction"]
    if is_all(y, 0) and direction in (Dir.LT, Dir.GE):
        return b.full(direction is Dir.GE, op.shape)
    if is_all(x, 0) and direction in (Dir.GT, Dir.LE):
        return b.full(direction is Dir.LE, op.shape)
    return None


# -- convert, clamp, reduce-precision ------------------------------------------------------
def convert_same_type(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x = op.operands[0]
    return x if x.shape.element_type is op.shape.element_type else None


def convert_round_trip(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """convert(convert(x, B), A) for x of type A where A -> B loses nothing."""
    inner = op.operands[0]
    if inner.opcode is not Op.CONVERT:
        return None
    x = inner.operands[0]
    source, middle = x.shape.element_type, inner.shape.element_type
    if source is not op.shape.element_type or not preserves_values(source, middle):
        return None
    return x


def clamp_clamp(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    lo, x, hi = op.operands
    if x.opcode is Op.CLAMP and x.operands[0] is lo and x.operands[2] is hi:
        return x
    return None


def reduce_precision_noop(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Reducing to the type's own exponent and mantissa widths changes nothing."""
    element_type = op.shape.element_type
    if not element_type.is_float:
        return None
    info = ml_dtypes.finfo(element_type.numpy)
    if op.attrs.get("exponent_bits") == info.nexp and op.attrs.get("mantissa_bits") == info.nmant:
        return op.operands[0]
    return None


RULES: dict[Opcode, tuple[Rule, ...]] = {
    Op.NOT: (
        not_not,                           # !!x -> x
    ),
    Op.AND: (
        idempotent_self,                   # x & x -> x
        and_zero,                          # x & 0 -> 0;  0 & x -> 0
        and_ones,                          # x & ~0 -> x;  ~0 & x -> x
    ),
    Op.OR: (
        idempotent_self,                   # x | x -> x
        or_zero,                           # x | 0 -> x;  0 | x -> x
        or_ones,                           # x | ~0 -> ~0;  ~0 | x -> ~0
    ),
    Op.XOR: (
        xor_self,                          # x ^ x -> 0
        or_zero,                           # x ^ 0 -> x;  0 ^ x -> x
    ),
    Op.SELECT: (
        select_constant,                   # select(true, a, b) -> a;  select(false, a, b) -> b
        select_same,                       # select(p, x, x) -> x
        select_not,                        # select(!p, a, b) -> select(p, b, a)
    ),
    Op.COMPARE: (
        compare_self,                      # x cmp x -> true|false   (integers, pred)
        compare_pred_identity,             # p == true -> p;  p != false -> p
        compare_unsigned_zero,             # x <u 0 -> false;  x >=u 0 -> true
    ),
    Op.CONVERT: (
        convert_same_type,                 # convert<T>(x: T) -> x
        convert_round_trip,                # convert<A>(convert<B>(x: A)) -> x  (A in B)
    ),
    Op.CLAMP: (
        clamp_clamp,                       # clamp(a, clamp(a, x, b), b) -> clamp(a, x, b)
    ),
    Op.REDUCE_PRECISION: (
        reduce_precision_noop,             # reduce-precision<e, m of T>(x: T) -> x
    ),
}
"""Logic and conversion rewrites by opcode, tried in order."""
