"""Elementwise ops: each rule is the op's partial derivatives, shared by both
modes (JVP: Σ ∂f/∂xᵢ · tᵢ; VJP: ct · ∂f/∂xᵢ, without conjugation, as JAX).

Conventions at non-differentiable points, as JAX's:
- `abs`: derivative +1 at 0 (sign taken as x >= 0); for complex x the
  derivative is conj(x) / |x| (with |x| = 0 read as 1), the real part taken in
  forward mode.
- `maximum`/`minimum`: an operand equal to the result gets the cotangent, half
  of it at ties; neither gets any where the result is NaN.
- `power(x, y)`: ∂/∂x = y x^(y-1) everywhere (NaN at x = y = 0, as JAX's
  lax.pow: integer exponents go through xnp's multiplications instead);
  ∂/∂y = log(x) x^y with log(0) read as 0.
- `clamp(lo, x, hi)`: x gets the cotangent where lo < x < hi strictly, lo where
  lo > x (and lo < hi), hi where x > hi; ties give zero to every operand.
- `remainder(x, y)`: ∂/∂y = -trunc(x / y).
- `sign`, `floor`, `ceil`, rounding: zero derivative (see nondifferentiable.py).
"""

from __future__ import annotations

import math

import numpy as np

from xlapy import lax
from xlapy.autodiff.rules import jvp, vjp
from xlapy.autodiff.rules._util import constant, linear_jvp, rebind, sum_to_shape, zeros_like
from xlapy.hlo.opcode import Opcode

Op = Opcode


def _unary_partials(node):
    (x,) = node.operands
    y = node.result
    op = node.opcode
    one = constant(1, x)
    if op is Op.NEGATE:
        return [constant(-1, x)]
    if op is Op.ABS:
        return [lax.select(lax.ge(x, zeros_like(x)), one, constant(-1, x))]
    if op is Op.EXP:
        return [y]
    if op is Op.EXPM1:
        return [lax.add(y, one)]
    if op is Op.LOG:
        return [lax.div(one, x)]
    if op is Op.LOG1P:
        return [lax.div(one, lax.add(x, one))]
    if op is Op.LOGISTIC:
        return [lax.mul(y, lax.sub(one, y))]
    if op is Op.TANH:
        return [lax.sub(one, lax.mul(y, y))]
    if op is Op.SIN:
        return [lax.cos(x)]
    if op is Op.COS:
        return [lax.neg(lax.sin(x))]
    if op is Op.TAN:
        return [lax.add(one, lax.mul(y, y))]
    if op is Op.SQRT:
        return [lax.div(constant(0.5, x), y)]
    if op is Op.RSQRT:
        return [lax.mul(constant(-0.5, x), lax.div(y, x))]
    if op is Op.CBRT:
        return [lax.div(constant(1 / 3, x), lax.mul(y, y))]
    if op is Op.ERF:
        return [lax.mul(constant(2 / math.sqrt(math.pi), x), lax.exp(lax.neg(lax.mul(x, x))))]
    if op is Op.ASIN:
        return [lax.rsqrt(lax.sub(one, lax.mul(x, x)))]
    if op is Op.ACOS:
        return [lax.neg(lax.rsqrt(lax.sub(one, lax.mul(x, x))))]
    if op is Op.ATAN:
        return [lax.div(one, lax.add(one, lax.mul(x, x)))]
    if op is Op.SINH:
        return [lax.cosh(x)]
    if op is Op.COSH:
        return [lax.sinh(x)]
    if op is Op.ASINH:
        return [lax.rsqrt(lax.add(lax.mul(x, x), one))]
    if op is Op.ACOSH:
        return [lax.rsqrt(lax.mul(lax.sub(x, one), lax.add(x, one)))]
    if op is Op.ATANH:
        return [lax.div(one, lax.sub(one, lax.mul(x, x)))]
    raise AssertionError(op)


def _binary_partials(node):
    x, y = node.operands
    op = node.opcode
    active = node.active
    one = constant(1, x)
    if op is Op.ADD:
        return [one, one]
    if op is Op.SUBTRACT:
        return [one, constant(-1, x)]
    if op is Op.MULTIPLY:
        return [y, x]
    if op is Op.DIVIDE:
        inv = lax.div(one, y)
        return [inv, lax.neg(lax.mul(node.result, inv)) if active[1] else None]
    if op in (Op.MAXIMUM, Op.MINIMUM):
        return [_balanced_eq(x, node.result, y), _balanced_eq(y, node.result, x)]
    if op is Op.REMAINDER:
        quotient = lax.div(x, y)
        trunc = lax.mul(lax.sign(quotient), lax.floor(lax.abs(quotient)))
        return [one, lax.neg(trunc)]
    if op is Op.POWER:
        px = lax.mul(y, lax.pow(x, lax.sub(y, one))) if active[0] else None
        py = None
        if active[1]:
            safe_x = lax.select(lax.eq(x, zeros_like(x)), one, x)
            py = lax.mul(lax.log(safe_x), node.result)
        return [px, py]
    if op is Op.ATAN2:
        denominator = lax.add(lax.mul(x, x), lax.mul(y, y))
        return [lax.div(y, denominator), lax.neg(lax.div(x, denominator))]
    raise AssertionError(op)


def _balanced_eq(x, result, other):
    """1 where x gave the result, 1/2 where `other` did too, else 0 (JAX's)."""
    one, zero = constant(1, x), zeros_like(x)
    return lax.select(lax.eq(x, result),
                      lax.select(lax.eq(other, result), constant(0.5, x), one), zero)


def _is_complex(x) -> bool:
    return np.dtype(x.dtype).kind == "c"


def _complex_abs_partial(node):
    """conj(x) / |x| (|x| = 0 read as 1), as a complex array like x."""
    (x,) = node.operands
    magnitude = node.result
    safe = lax.select(lax.eq(magnitude, zeros_like(magnitude)), constant(1, magnitude), magnitude)
    safe = lax.complex(safe, zeros_like(safe))
    return lax.div(lax.complex(lax.real(x), lax.neg(lax.imag(x))), safe)


UNARY = (Op.NEGATE, Op.ABS, Op.EXP, Op.EXPM1, Op.LOG, Op.LOG1P, Op.LOGISTIC, Op.TANH,
         Op.SIN, Op.COS, Op.TAN, Op.SQRT, Op.RSQRT, Op.CBRT, Op.ERF, Op.ASIN, Op.ACOS,
         Op.ATAN, Op.SINH, Op.COSH, Op.ASINH, Op.ACOSH, Op.ATANH)
BINARY = (Op.ADD, Op.SUBTRACT, Op.MULTIPLY, Op.DIVIDE, Op.MAXIMUM, Op.MINIMUM,
          Op.REMAINDER, Op.POWER, Op.ATAN2)


def _partials(node):
    return _unary_partials(node) if node.opcode in UNARY else _binary_partials(node)


@vjp(*UNARY, *BINARY)
def _elementwise_vjp(node, ct):
    if node.opcode is Op.ABS and _is_complex(node.operands[0]):
        return [lax.mul(lax.complex(ct, zeros_like(ct)), _complex_abs_partial(node))]
    if node.opcode is Op.ADD:
        return [ct, ct]
    if node.opcode is Op.SUBTRACT:
        return [ct, lax.neg(ct)]
    return [None if p is None or not a else lax.mul(ct, p)
            for p, a in zip(_partials(node), node.active)]


@jvp(*UNARY, *BINARY)
def _elementwise_jvp(node, tangents):
    if node.opcode is Op.ABS and _is_complex(node.operands[0]):
        (t,) = tangents
        return lax.real(lax.mul(t, _complex_abs_partial(node)))
    if node.opcode in (Op.ADD, Op.SUBTRACT):
        return linear_jvp(node, tangents)
    total = None
    for p, t in zip(_partials(node), tangents):
        if t is None:
            continue
        term = lax.mul(t, p)
        total = term if total is None else lax.add(total, term)
    return total


@vjp(Op.SELECT)
def _select_vjp(node, ct):
    pred, on_true, _ = node.operands
    zero = zeros_like(ct)
    return [None, lax.select(pred, ct, zero), lax.select(pred, zero, ct)]


@jvp(Op.SELECT, Op.REAL, Op.IMAG, Op.COMPLEX, Op.REDUCE_PRECISION)
def _linear_elementwise_jvp(node, tangents):
    return linear_jvp(node, tangents)


def _clamp_masks(node):
    lo, x, hi = node.operands
    if lo.shape != x.shape:
        lo = lax.broadcast_in_dim(lo, x.shape, ())
    if hi.shape != x.shape:
        hi = lax.broadcast_in_dim(hi, x.shape, ())
    inside = lax.and_(lax.gt(x, lo), lax.lt(x, hi))
    below = lax.and_(lax.gt(lo, x), lax.lt(lo, hi))
    above = lax.lt(hi, x)
    return below, inside, above


@vjp(Op.CLAMP)
def _clamp_vjp(node, ct):
    zero = zeros_like(ct)
    return [None if not a else sum_to_shape(lax.select(mask, ct, zero), operand.shape)
            for mask, a, operand in zip(_clamp_masks(node), node.active, node.operands)]


@jvp(Op.CLAMP)
def _clamp_jvp(node, tangents):
    x = node.operands[1]
    total = zeros_like(x)
    for mask, t in zip(_clamp_masks(node), tangents):
        if t is not None:
            if t.shape != x.shape:
                t = lax.broadcast_in_dim(t, x.shape, ())
            total = lax.add(total, lax.select(mask, t, zeros_like(x)))
    return total


@vjp(Op.REAL)
def _real_vjp(node, ct):
    return [lax.complex(ct, zeros_like(ct))]


@vjp(Op.IMAG)
def _imag_vjp(node, ct):
    return [lax.complex(zeros_like(ct), lax.neg(ct))]


@vjp(Op.COMPLEX)
def _complex_vjp(node, ct):
    return [lax.real(ct), lax.imag(lax.neg(ct))]


@vjp(Op.REDUCE_PRECISION)
def _reduce_precision_vjp(node, ct):
    return [rebind(node, [ct])]
