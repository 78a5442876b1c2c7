"""Algebraic simplifier rules for arithmetic: add, subtract, multiply, divide,
remainder, negate, power, maximum and minimum.

Every rule is exact (the interpreter computes the same values before and
after) except two, both of which XLA performs: `add_zero` and
`subtract_zero` on floats keep x = -0 where `-0 + 0` and `-0 - (-0)` give +0
(equal values, another sign of zero), and `power_two` on f64, where C's pow
and a multiply may differ in the last bit. `x * 0 -> 0` and `x - x -> 0`
hold only for integers (NaN and infinities break them for floats), as in XLA.
"""

from __future__ import annotations

import math

from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.passes.algsimp_core import (
    Rewriter,
    Rule,
    highest,
    is_all,
    is_real,
    literal_of,
    lowest,
    uniform_value,
)

Op = Opcode


def _integral(instruction: HloInstruction) -> bool:
    element_type = instruction.shape.element_type
    return element_type.is_integral or element_type.is_pred


def _other_than_identity(op: HloInstruction, identity) -> HloInstruction | None:
    """For a commutative op with an operand that is all `identity`, the other one."""
    x, y = op.operands
    if is_all(y, identity):
        return x
    if is_all(x, identity):
        return y
    return None


# -- add, subtract ------------------------------------------------------------------------
def add_zero(add: HloInstruction, b: Rewriter) -> HloInstruction | None:
    return _other_than_identity(add, 0)


def add_negate(add: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, y = add.operands
    if y.opcode is Op.NEGATE:
        return b.add(Op.SUBTRACT, [x, y.operands[0]])
    if x.opcode is Op.NEGATE:
        return b.add(Op.SUBTRACT, [y, x.operands[0]])
    return None


def subtract_zero(sub: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, y = sub.operands
    return x if is_all(y, 0) else None


def subtract_self(sub: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, y = sub.operands
    return b.full(0, sub.shape) if x is y and _integral(sub) else None


def subtract_negate(sub: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, y = sub.operands
    return b.add(Op.ADD, [x, y.operands[0]]) if y.opcode is Op.NEGATE else None


# -- multiply, divide, remainder ---------------------------------------------------------
def multiply_one(mul: HloInstruction, b: Rewriter) -> HloInstruction | None:
    return _other_than_identity(mul, 1)


def multiply_zero(mul: HloInstruction, b: Rewriter) -> HloInstruction | None:
    if not _integral(mul):
        return None
    x, y = mul.operands
    if is_all(y, 0):
        return y
    if is_all(x, 0):
        return x
    return None


def multiply_minus_one(mul: HloInstruction, b: Rewriter) -> HloInstruction | None:
    if not is_real(mul.shape.element_type):
        return None
    x, y = mul.operands
    if is_all(y, -1):
        return b.add(Op.NEGATE, [x])
    if is_all(x, -1):
        return b.add(Op.NEGATE, [y])
    return None


def multiply_negates(mul: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, y = mul.operands
    if x.opcode is Op.NEGATE and y.opcode is Op.NEGATE:
        return b.add(Op.MULTIPLY, [x.operands[0], y.operands[0]])
    return None


def divide_one(div: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, y = div.operands
    return x if is_all(y, 1) else None


def divide_power_of_two(div: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Only where 1/c is exactly representable: then x/c and x*(1/c) are both
    the correctly rounded x * 2^-k. (XLA inverts every constant divisor; that
    changes results, so xlapy does not.)"""
    element_type = div.shape.element_type
    if not element_type.is_float:
        return None
    x, y = div.operands
    c = uniform_value(y)
    if c is None or not math.isfinite(c) or c == 0:
        return None
    mantissa, _ = math.frexp(c)
    if abs(mantissa) != 0.5:
        return None
    reciprocal = 1.0 / c
    if float(literal_of(reciprocal, element_type)) != reciprocal:
        return None
    return b.add(Op.MULTIPLY, [x, b.full(reciprocal, div.shape)])


def _unsigned_power_of_two(instruction: HloInstruction) -> int | None:
    """k when `instruction` is a uniform unsigned constant 2^k."""
    if not instruction.shape.element_type.is_unsigned_int:
        return None
    c = uniform_value(instruction)
    if c is None or c <= 0 or c & (c - 1):
        return None
    return c.bit_length() - 1


def divide_unsigned_power_of_two(div: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, y = div.operands
    k = _unsigned_power_of_two(y)
    if k is None:
        return None
    return b.add(Op.SHIFT_RIGHT_LOGICAL, [x, b.full(k, div.shape)])


def remainder_unsigned_power_of_two(rem: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, y = rem.operands
    k = _unsigned_power_of_two(y)
    if k is None:
        return None
    return b.add(Op.AND, [x, b.full((1 << k) - 1, rem.shape)])


def remainder_remainder(rem: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """|x % y| < |y| with x's sign (y = 0 leaves x, or NaN), so a second % y keeps it."""
    x, y = rem.operands
    if x.opcode is Op.REMAINDER and x.operands[1] is y:
        return x
    return None


# -- negate, power -----------------------------------------------------------------------
def negate_negate(neg: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x = neg.operands[0]
    return x.operands[0] if x.opcode is Op.NEGATE else None


def power_zero(pow_: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """XLA's pow(x, 0) is 1 for every x, NaN included (C's pow)."""
    _, y = pow_.operands
    return b.full(1, pow_.shape) if is_all(y, 0) else None


def power_one(pow_: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, y = pow_.operands
    return x if is_all(y, 1) else None


def power_two(pow_: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Exact where pow runs in a wider type than the result (f32 and narrower)
    and for integers; for f64 both round the same real within one ulp."""
    x, y = pow_.operands
    if not is_all(y, 2) or pow_.shape.element_type.is_pred:
        return None
    return b.add(Op.MULTIPLY, [x, x])


# -- maximum, minimum --------------------------------------------------------------------
def idempotent_self(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """For max, min, and, or: op(x, x) is x."""
    x, y = op.operands
    return x if x is y else None


def maximum_lowest(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """NaN-propagating max: max(NaN, -inf) is NaN, which x already is."""
    x, y = op.operands
    floor = lowest(op.shape.element_type)
    if is_all(y, floor):
        return x
    if is_all(x, floor):
        return y
    return None


def minimum_highest(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, y = op.operands
    ceiling = highest(op.shape.element_type)
    if is_all(y, ceiling):
        return x
    if is_all(x, ceiling):
        return y
    return None


RULES: dict[Opcode, tuple[Rule, ...]] = {
    Op.ADD: (
        add_zero,                          # x + 0 -> x;  0 + x -> x
        add_negate,                        # x + (-y) -> x - y;  (-x) + y -> y - x
    ),
    Op.SUBTRACT: (
        subtract_zero,                     # x - 0 -> x
        subtract_self,                     # x - x -> 0              (integers)
        subtract_negate,                   # x - (-y) -> x + y
    ),
    Op.MULTIPLY: (
        multiply_one,                      # x * 1 -> x;  1 * x -> x
        multiply_zero,                     # x * 0 -> 0;  0 * x -> 0 (integers)
        multiply_minus_one,                # x * -1 -> -x            (signed, real)
        multiply_negates,                  # (-x) * (-y) -> x * y
    ),
    Op.DIVIDE: (
        divide_one,                        # x / 1 -> x
        divide_power_of_two,               # x / 2^k -> x * 2^-k     (floats)
        divide_unsigned_power_of_two,      # x / 2^k -> x >> k       (unsigned)
    ),
    Op.REMAINDER: (
        remainder_unsigned_power_of_two,   # x % 2^k -> x & (2^k - 1) (unsigned)
        remainder_remainder,               # (x % y) % y -> x % y
    ),
    Op.NEGATE: (
        negate_negate,                     # -(-x) -> x
    ),
    Op.POWER: (
        power_zero,                        # x ^ 0 -> 1
        power_one,                         # x ^ 1 -> x
        power_two,                         # x ^ 2 -> x * x
    ),
    Op.MAXIMUM: (
        idempotent_self,                   # max(x, x) -> x
        maximum_lowest,                    # max(x, -inf) -> x;  max(-inf, x) -> x
    ),
    Op.MINIMUM: (
        idempotent_self,                   # min(x, x) -> x
        minimum_highest,                   # min(x, +inf) -> x;  min(+inf, x) -> x
    ),
}
"""Arithmetic rewrites by opcode, tried in order."""
