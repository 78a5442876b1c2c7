"""Interpreter rules for elementwise binary ops and compare.

Semantics follow XLA's evaluator (`hlo_evaluator_typed_visitor.h`):
- integers wrap (two's complement); divide, remainder, shifts, power and
  mulhi keep XLA's edge cases (see `integer.py`);
- pred arithmetic is `int8(x) OP int8(y) != 0`: add/maximum/or are logical
  or, multiply/minimum/and logical and, subtract/xor exclusive or, and power
  is `x or not y`;
- maximum/minimum return a NaN operand (lhs first), else std::max/std::min
  ((lhs < rhs) ? rhs : lhs and (rhs < lhs) ? rhs : lhs);
- float remainder is C's fmod (sign of the dividend);
- power: x ** 0 = 1 and 1 ** y = 1 for every x, y (NaN included); otherwise
  C's pow, evaluated in float64 and rounded once; complex inf ** real keeps
  Kahan's cases (inf ** a = inf for a > 0, 0 for a < 0);
- compare: IEEE for floats unless `type=TOTALORDER`, which orders the
  sign-magnitude bit patterns (-NaN < -inf < -0 < +0 < inf < NaN); integers
  compare by their own signedness, pred as false < true; complex takes only
  EQ and NE.
Narrow floats are computed in float32 and rounded once (transcendental ones
in float64).
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ExecutionError
from xlapy.hlo.attributes import ComparisonDirection, ComparisonType
from xlapy.hlo.evaluator import integer
from xlapy.hlo.evaluator.numerics import (
    arith_dtype,
    int_work,
    narrow,
    precise_dtype,
    ptype_of,
    total_order_key,
    unsupported,
    widen,
    wrap,
)
from xlapy.hlo.evaluator.rules import rule
from xlapy.hlo.opcode import ELEMENTWISE_BINARY, Opcode

Op = Opcode

_PRED = {
    Op.ADD: np.logical_or, Op.MAXIMUM: np.logical_or, Op.OR: np.logical_or,
    Op.MULTIPLY: np.logical_and, Op.MINIMUM: np.logical_and, Op.AND: np.logical_and,
    Op.SUBTRACT: np.logical_xor, Op.XOR: np.logical_xor,
    Op.POWER: lambda x, y: np.logical_or(x, np.logical_not(y)),
}

_INT_WRAPPING = {
    Op.ADD: np.add, Op.SUBTRACT: np.subtract, Op.MULTIPLY: np.multiply,
    Op.AND: np.bitwise_and, Op.OR: np.bitwise_or, Op.XOR: np.bitwise_xor,
    Op.MAXIMUM: np.maximum, Op.MINIMUM: np.minimum,
}
"""Integer ops computed on int64/uint64 values and wrapped to the width."""

_INT_KERNELS = {
    Op.DIVIDE: integer.divide, Op.REMAINDER: integer.remainder, Op.POWER: integer.power,
    Op.SHIFT_LEFT: integer.shift_left, Op.SHIFT_RIGHT_LOGICAL: integer.shift_right_logical,
    Op.SHIFT_RIGHT_ARITHMETIC: integer.shift_right_arithmetic, Op.MULHI: integer.mulhi,
}

_FLOAT_EXACT = {
    Op.ADD: np.add, Op.SUBTRACT: np.subtract, Op.MULTIPLY: np.multiply, Op.DIVIDE: np.divide,
}
"""Correctly rounded in float32 (narrow floats) or the type itself."""


@rule(*(ELEMENTWISE_BINARY - {Op.COMPLEX}))
def binary(instruction, operands, evaluator):
    lhs, rhs = operands
    ptype = ptype_of(lhs)
    opcode = instruction.opcode
    with np.errstate(all="ignore"):
        if ptype.is_pred and opcode in _PRED:
            return _PRED[opcode](lhs, rhs)
        if ptype.is_integral and opcode in _INT_WRAPPING:
            return wrap(_INT_WRAPPING[opcode](int_work(lhs), int_work(rhs)), ptype)
        if ptype.is_integral and opcode in _INT_KERNELS:
            return _INT_KERNELS[opcode](lhs, rhs)
        if ptype.is_float or ptype.is_complex:
            value = _float_binary(instruction, lhs, rhs)
            return narrow(value, instruction.shape.dtype)
    raise unsupported(instruction, ptype)


def _float_binary(instruction, lhs, rhs):
    opcode = instruction.opcode
    ptype = ptype_of(lhs)
    if opcode in _FLOAT_EXACT:
        dtype = arith_dtype(ptype)
        return _FLOAT_EXACT[opcode](widen(lhs, dtype), widen(rhs, dtype))
    if opcode is Op.POWER:
        dtype = precise_dtype(ptype)
        return _power(widen(lhs, dtype), widen(rhs, dtype))
    if opcode is Op.ATAN2:
        dtype = precise_dtype(ptype)
        y, x = widen(lhs, dtype), widen(rhs, dtype)
        return _complex_atan2(y, x) if ptype.is_complex else np.arctan2(y, x)
    if ptype.is_complex:
        raise unsupported(instruction, ptype)
    dtype = arith_dtype(ptype)
    a, b = widen(lhs, dtype), widen(rhs, dtype)
    if opcode is Op.REMAINDER:
        return np.fmod(a, b)
    if opcode is Op.MAXIMUM:
        return np.where(np.isnan(a), a, np.where(np.isnan(b), b, np.where(a < b, b, a)))
    if opcode is Op.MINIMUM:
        return np.where(np.isnan(a), a, np.where(np.isnan(b), b, np.where(b < a, b, a)))
    raise unsupported(instruction, ptype)


def _power(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    result = np.power(base, exponent)
    if np.iscomplexobj(base):
        inf_base = (base.imag == 0) & (base.real > 0) & np.isinf(base.real)
        real_exponent = exponent.imag == 0
        result = np.where(inf_base & real_exponent & (exponent.real > 0), base, result)
        result = np.where(inf_base & real_exponent & (exponent.real < 0), 0, result)
    return np.where((base == 1) | (exponent == 0), np.ones_like(result), result)


def _complex_atan2(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """XLA's complex atan2: -i * log((x + i*y) / sqrt(x*x + y*y))."""
    return -1j * np.log((x + 1j * y) / np.sqrt(x * x + y * y))


@rule(Op.COMPLEX)
def complex_(instruction, operands, evaluator):
    """real + i*imag, built part by part so that inf and NaN parts stay apart."""
    real, imag = operands
    ptype = ptype_of(real)
    if not ptype.is_float:
        raise unsupported(instruction, ptype)
    dims = instruction.shape.dimensions
    result = np.empty(dims, instruction.shape.dtype)
    result.real = np.broadcast_to(real, dims)
    result.imag = np.broadcast_to(imag, dims)
    return result


# -- compare ------------------------------------------------------------------------
_DIRECTIONS = {
    ComparisonDirection.EQ: np.equal, ComparisonDirection.NE: np.not_equal,
    ComparisonDirection.LT: np.less, ComparisonDirection.LE: np.less_equal,
    ComparisonDirection.GT: np.greater, ComparisonDirection.GE: np.greater_equal,
}


def _enum_attr(instruction, name, enum_type, required):
    value = instruction.attr(name)
    if value is None and not required:
        return None
    try:
        return value if isinstance(value, enum_type) else enum_type(value)
    except ValueError:
        raise ExecutionError(f"{instruction.name}: compare has no valid {name} "
                             f"(got {value!r})") from None


@rule(Op.COMPARE)
def compare(instruction, operands, evaluator):
    lhs, rhs = operands
    ptype = ptype_of(lhs)
    direction = _enum_attr(instruction, "direction", ComparisonDirection, required=True)
    comparison_type = _enum_attr(instruction, "type", ComparisonType, required=False)
    compare_fn = _DIRECTIONS[direction]
    if ptype.is_pred or ptype.is_integral:
        return compare_fn(int_work(lhs), int_work(rhs))
    if ptype.is_complex:
        if direction not in (ComparisonDirection.EQ, ComparisonDirection.NE):
            raise ExecutionError(f"{instruction.name}: complex compare takes only EQ and NE, "
                                 f"not {direction.value}")
        return compare_fn(lhs, rhs)
    if not ptype.is_float:
        raise unsupported(instruction, ptype)
    if comparison_type is ComparisonType.TOTALORDER:
        return compare_fn(total_order_key(lhs), total_order_key(rhs))
    if comparison_type in (ComparisonType.SIGNED, ComparisonType.UNSIGNED):
        raise ExecutionError(f"{instruction.name}: comparison type {comparison_type.value} "
                             f"does not apply to {ptype.value} operands")
    dtype = arith_dtype(ptype)
    with np.errstate(all="ignore"):
        return compare_fn(widen(lhs, dtype), widen(rhs, dtype))
