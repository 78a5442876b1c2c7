"""Interpreter rules for elementwise unary ops, select and clamp.

The binary ops and compare live in `binary.py`, the conversions in
`convert.py`; importing this module registers all three (the evaluator
imports only this one).

Numerics: transcendental functions are evaluated in float64/complex128 and
rounded once to the result type (correctly rounded in all but vanishingly
rare cases); exact operations (abs, floor, rounding...) run in float32 for
narrow floats, as XLA does; integers follow two's complement (abs(INT_MIN) =
INT_MIN, negate wraps).
"""

from __future__ import annotations

import numpy as np

from xlapy.hlo.evaluator import integer
from xlapy.hlo.evaluator.numerics import (
    arith_dtype,
    bits_of,
    erf,
    int_work,
    narrow,
    precise_dtype,
    ptype_of,
    unsupported,
    widen,
    wrap,
)
from xlapy.hlo.evaluator.rules import rule
from xlapy.hlo.opcode import Opcode

Op = Opcode


def _rsqrt(x):
    return 1 / np.sqrt(x)


def _logistic(x):
    # 1 / (1 + exp(-x)): exp overflows to inf for very negative x, giving 0.
    return 1 / (1 + np.exp(-x))


_TRANSCENDENTAL = {
    Op.EXP: np.exp, Op.EXPM1: np.expm1, Op.LOG: np.log, Op.LOG1P: np.log1p,
    Op.SQRT: np.sqrt, Op.RSQRT: _rsqrt, Op.CBRT: np.cbrt, Op.LOGISTIC: _logistic,
    Op.SIN: np.sin, Op.COS: np.cos, Op.TAN: np.tan, Op.TANH: np.tanh,
    Op.SINH: np.sinh, Op.COSH: np.cosh, Op.ASIN: np.arcsin, Op.ACOS: np.arccos,
    Op.ATAN: np.arctan, Op.ASINH: np.arcsinh, Op.ACOSH: np.arccosh, Op.ATANH: np.arctanh,
    Op.ERF: erf,
}
"""Float (and complex) functions, evaluated in float64/complex128."""

_REAL_ONLY = frozenset({Op.CBRT, Op.ERF})


@rule(*_TRANSCENDENTAL)
def transcendental(instruction, operands, evaluator):
    (x,) = operands
    ptype = ptype_of(x)
    takes_complex = ptype.is_complex and instruction.opcode not in _REAL_ONLY
    if not (ptype.is_float or takes_complex):
        raise unsupported(instruction, ptype)
    with np.errstate(all="ignore"):
        value = _TRANSCENDENTAL[instruction.opcode](widen(x, precise_dtype(ptype)))
        return narrow(value, instruction.shape.dtype)


@rule(Op.ABS)
def abs_(instruction, operands, evaluator):
    (x,) = operands
    ptype = ptype_of(x)
    with np.errstate(all="ignore"):
        if ptype.is_integral:
            return wrap(np.abs(int_work(x)), ptype)
        if ptype.is_complex:
            return np.abs(x.astype(np.complex128)).astype(instruction.shape.dtype)
        if ptype.is_float:
            return np.abs(widen(x, arith_dtype(ptype))).astype(instruction.shape.dtype)
    raise unsupported(instruction, ptype)


@rule(Op.NEGATE)
def negate(instruction, operands, evaluator):
    (x,) = operands
    ptype = ptype_of(x)
    with np.errstate(all="ignore"):
        if ptype.is_integral:
            return wrap(np.negative(int_work(x)), ptype)
        if ptype.is_float or ptype.is_complex:
            return np.negative(widen(x, arith_dtype(ptype))).astype(instruction.shape.dtype)
    raise unsupported(instruction, ptype)


@rule(Op.SIGN)
def sign(instruction, operands, evaluator):
    """-1/0/1 for integers; floats keep NaN and the sign of zero; complex x/|x| (0 -> 0)."""
    (x,) = operands
    ptype = ptype_of(x)
    dtype = instruction.shape.dtype
    with np.errstate(all="ignore"):
        if ptype.is_integral:
            return wrap(np.sign(int_work(x)), ptype)
        if ptype.is_float:
            value = widen(x, arith_dtype(ptype))
            signum = np.copysign((value != 0).astype(value.dtype), value)
            return np.where(np.isnan(value), value, signum).astype(dtype)
        if ptype.is_complex:
            value = x.astype(np.complex128)
            magnitude = np.abs(value)
            return np.where(magnitude == 0, 0, value / magnitude).astype(dtype)
    raise unsupported(instruction, ptype)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    """C's round(): halfway cases away from zero; x - trunc(x) is exact."""
    truncated = np.trunc(x)
    away = np.abs(x - truncated) >= 0.5
    return np.where(away, truncated + np.copysign(np.ones_like(x), x), truncated)


_ROUNDING = {
    Op.CEIL: np.ceil, Op.FLOOR: np.floor, Op.ROUND_NEAREST_EVEN: np.rint,
    Op.ROUND_NEAREST_AFZ: _round_half_away,
}


@rule(*_ROUNDING)
def rounding(instruction, operands, evaluator):
    (x,) = operands
    ptype = ptype_of(x)
    if not ptype.is_float:
        raise unsupported(instruction, ptype)
    with np.errstate(all="ignore"):
        value = _ROUNDING[instruction.opcode](widen(x, arith_dtype(ptype)))
        return np.asarray(value).astype(instruction.shape.dtype)


@rule(Op.IS_FINITE)
def is_finite(instruction, operands, evaluator):
    (x,) = operands
    ptype = ptype_of(x)
    if not ptype.is_float:
        raise unsupported(instruction, ptype)
    return np.isfinite(widen(x, arith_dtype(ptype)))


@rule(Op.NOT)
def not_(instruction, operands, evaluator):
    (x,) = operands
    ptype = ptype_of(x)
    if ptype.is_pred:
        return np.logical_not(x)
    if ptype.is_integral:
        return wrap(~bits_of(x), ptype)
    raise unsupported(instruction, ptype)


@rule(Op.POPCNT, Op.CLZ)
def bit_count(instruction, operands, evaluator):
    (x,) = operands
    ptype = ptype_of(x)
    if not ptype.is_integral:
        raise unsupported(instruction, ptype)
    with np.errstate(all="ignore"):
        if instruction.opcode is Op.POPCNT:
            return integer.count_ones(x)
        return integer.count_leading_zeros(x)


@rule(Op.REAL, Op.IMAG)
def real_imag(instruction, operands, evaluator):
    """The real or imaginary part; of a real number, itself or zero."""
    (x,) = operands
    ptype = ptype_of(x)
    dtype = instruction.shape.dtype
    if ptype.is_complex:
        part = x.real if instruction.opcode is Op.REAL else x.imag
        return np.array(part, dtype=dtype)
    if ptype.is_float:
        return x.copy() if instruction.opcode is Op.REAL else np.zeros(x.shape, dtype)
    raise unsupported(instruction, ptype)


# -- ternary ------------------------------------------------------------------------
@rule(Op.SELECT)
def select(instruction, operands, evaluator):
    """pred ? on_true : on_false per element; a scalar pred picks whole operands."""
    pred, on_true, on_false = operands
    if isinstance(on_true, tuple) or isinstance(on_false, tuple):
        if np.ndim(pred) != 0:
            raise unsupported(instruction, ptype_of(np.asarray(pred)))
        return on_true if bool(pred) else on_false
    result = np.where(np.asarray(pred, dtype=bool), on_true, on_false)
    return np.broadcast_to(result, instruction.shape.dimensions).astype(on_true.dtype)


def _nan_first(*values):
    """The first NaN among `values` per element, or None where none is NaN."""
    first = values[-1]
    for value in reversed(values[:-1]):
        first = np.where(np.isnan(value), value, first)
    return first


@rule(Op.CLAMP)
def clamp(instruction, operands, evaluator):
    """min(max(x, lo), hi) with std::max/std::min; a NaN in lo, x or hi (checked
    in that order) is the result. lo and hi may be scalars."""
    lo, x, hi = operands
    ptype = ptype_of(x)
    dims = instruction.shape.dimensions
    with np.errstate(all="ignore"):
        if ptype.is_pred:
            result = np.minimum(hi, np.maximum(x, lo))
            return np.broadcast_to(result, dims).copy()
        if ptype.is_integral:
            result = np.minimum(int_work(hi), np.maximum(int_work(x), int_work(lo)))
            return np.broadcast_to(wrap(result, ptype), dims).copy()
        if ptype.is_float:
            dtype = arith_dtype(ptype)
            lo, x, hi = (widen(v, dtype) for v in (lo, x, hi))
            raised = np.where(x < lo, lo, x)  # std::max(x, lo)
            clamped = np.where(raised < hi, raised, hi)  # std::min(hi, raised)
            result = _nan_first(lo, x, hi, clamped)
            return np.broadcast_to(result, dims).astype(instruction.shape.dtype)
    raise unsupported(instruction, ptype)
