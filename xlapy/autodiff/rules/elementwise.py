"""Elementwise ops: each op's partial derivatives are one entry of a table
(UNARY_PARTIAL, BINARY_PARTIALS), shared by both modes (JVP: Σ ∂f/∂xᵢ · tᵢ;
VJP: ct · ∂f/∂xᵢ, without conjugation, as JAX); add, subtract, select and the
complex parts are linear and have rules of their own.

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
from collections.abc import Callable

import numpy as np

from xlapy.autodiff.rules import jvp, vjp
from xlapy.autodiff.rules._util import constant, linear_jvp, rebind, sum_to_shape, zeros_like
from xlapy.hlo.opcode import Opcode
from xlapy.lax import primitives as lax

Op = Opcode

# ∂f/∂x of each unary op f, from its operand x, its result y = f(x) and `one`
# (ones like x): one entry per opcode.
UNARY_PARTIAL: dict[Opcode, Callable] = {
    Op.NEGATE: lambda x, y, one: constant(-1, x),
    Op.ABS: lambda x, y, one: lax.select(lax.ge(x, zeros_like(x)), one, constant(-1, x)),
    Op.EXP: lambda x, y, one: y,
    Op.EXPM1: lambda x, y, one: lax.add(y, one),
    Op.LOG: lambda x, y, one: lax.div(one, x),
    Op.LOG1P: lambda x, y, one: lax.div(one, lax.add(x, one)),
    Op.LOGISTIC: lambda x, y, one: lax.mul(y, lax.sub(one, y)),
    Op.TANH: lambda x, y, one: lax.sub(one, lax.mul(y, y)),
    Op.SIN: lambda x, y, one: lax.cos(x),
    Op.COS: lambda x, y, one: lax.neg(lax.sin(x)),
    Op.TAN: lambda x, y, one: lax.add(one, lax.mul(y, y)),
    Op.SQRT: lambda x, y, one: lax.div(constant(0.5, x), y),
    Op.RSQRT: lambda x, y, one: lax.mul(constant(-0.5, x), lax.div(y, x)),
    Op.CBRT: lambda x, y, one: lax.div(constant(1 / 3, x), lax.mul(y, y)),
    Op.ERF: lambda x, y, one: lax.mul(constant(2 / math.sqrt(math.pi), x),
                                      lax.exp(lax.neg(lax.mul(x, x)))),
    Op.ASIN: lambda x, y, one: lax.rsqrt(lax.sub(one, lax.mul(x, x))),
    Op.ACOS: lambda x, y, one: lax.neg(lax.rsqrt(lax.sub(one, lax.mul(x, x)))),
    Op.ATAN: lambda x, y, one: lax.div(one, lax.add(one, lax.mul(x, x))),
    Op.SINH: lambda x, y, one: lax.cosh(x),
    Op.COSH: lambda x, y, one: lax.sinh(x),
    Op.ASINH: lambda x, y, one: lax.rsqrt(lax.add(lax.mul(x, x), one)),
    Op.ACOSH: lambda x, y, one: lax.rsqrt(lax.mul(lax.sub(x, one), lax.add(x, one))),
    Op.ATANH: lambda x, y, one: lax.div(one, lax.sub(one, lax.mul(x, x))),
}


def _divide_partials(node, x, y, one):
    inv = lax.div(one, y)
    return [inv, lax.neg(lax.mul(node.result, inv)) if node.active[1] else None]


def _remainder_partials(node, x, y, one):
    quotient = lax.div(x, y)
    trunc = lax.mul(lax.sign(quotient), lax.floor(lax.abs(quotient)))
    return [one, lax.neg(trunc)]


def _power_partials(node, x, y, one):
    px = lax.mul(y, lax.pow(x, lax.sub(y, one))) if node.active[0] else None
    py = None
    if node.active[1]:
        safe_x = lax.select(lax.eq(x, zeros_like(x)), one, x)
        py = lax.mul(lax.log(safe_x), node.result)
    return [px, py]


def _atan2_partials(node, x, y, one):
    denominator = lax.add(lax.mul(x, x), lax.mul(y, y))
    return [lax.div(y, denominator), lax.neg(lax.div(x, denominator))]


def _balanced_eq(x, result, other):
    """1 where x gave the result, 1/2 where `other` did too, else 0 (JAX's)."""
    one, zero = constant(1, x), zeros_like(x)
    return lax.select(lax.eq(x, result),
                      lax.select(lax.eq(other, result), constant(0.5, x), one), zero)


# [∂f/∂x, ∂f/∂y] of each binary op f, from the node (its result and which
# operands are active), its operands x, y and `one` (ones like x); a partial may
# be None for an inactive operand. One entry per opcode; add and subtract have
# their own rules below (their derivatives need no multiplication).
BINARY_PARTIALS: dict[Opcode, Callable] = {
    Op.MULTIPLY: lambda node, x, y, one: [y, x],
    Op.DIVIDE: _divide_partials,
    Op.MAXIMUM: lambda node, x, y, one: [_balanced_eq(x, node.result, y),
                                         _balanced_eq(y, node.result, x)],
    Op.MINIMUM: lambda node, x, y, one: [_balanced_eq(x, node.result, y),
                                         _balanced_eq(y, node.result, x)],
    Op.REMAINDER: _remainder_partials,
    Op.POWER: _power_partials,
    Op.ATAN2: _atan2_partials,
}


UNARY = tuple(UNARY_PARTIAL)
BINARY = (Op.ADD, Op.SUBTRACT, *BINARY_PARTIALS)


def _partials(node):
    """The op's partial derivatives, one per operand, from its table entry."""
    x = node.operands[0]
    one = constant(1, x)
    if node.opcode in UNARY_PARTIAL:
        return [UNARY_PARTIAL[node.opcode](x, node.result, one)]
    return BINARY_PARTIALS[node.opcode](node, *node.operands, one)


# every op of the tables but abs, whose complex case has rules of its own below
_TABLED = [op for op in (*UNARY_PARTIAL, *BINARY_PARTIALS) if op is not Op.ABS]


@vjp(*_TABLED)
def _elementwise_vjp(node, ct):
    return [None if p is None or not a else lax.mul(ct, p)
            for p, a in zip(_partials(node), node.active)]


@jvp(*_TABLED)
def _elementwise_jvp(node, tangents):
    total = None
    for p, t in zip(_partials(node), tangents):
        if t is None:
            continue
        term = lax.mul(t, p)
        total = term if total is None else lax.add(total, term)
    return total


def _is_complex(x) -> bool:
    return np.dtype(x.dtype).kind == "c"


def _complex_abs_partial(node):
    """conj(x) / |x| (|x| = 0 read as 1), as a complex array like x."""
    (x,) = node.operands
    magnitude = node.result
    safe = lax.select(lax.eq(magnitude, zeros_like(magnitude)), constant(1, magnitude), magnitude)
    safe = lax.complex(safe, zeros_like(safe))
    return lax.div(lax.complex(lax.real(x), lax.neg(lax.imag(x))), safe)


@vjp(Op.ABS)
def _abs_vjp(node, ct):
    """Complex x: ct · conj(x)/|x|; real x: the table's partial."""
    if _is_complex(node.operands[0]):
        return [lax.mul(lax.complex(ct, zeros_like(ct)), _complex_abs_partial(node))]
    return _elementwise_vjp(node, ct)


@jvp(Op.ABS)
def _abs_jvp(node, tangents):
    if _is_complex(node.operands[0]):
        (t,) = tangents
        return lax.real(lax.mul(t, _complex_abs_partial(node)))
    return _elementwise_jvp(node, tangents)


@vjp(Op.ADD)
def _add_vjp(node, ct):
    return [ct, ct]


@vjp(Op.SUBTRACT)
def _subtract_vjp(node, ct):
    return [ct, lax.neg(ct)]


@vjp(Op.SELECT)
def _select_vjp(node, ct):
    pred, on_true, _ = node.operands
    zero = zeros_like(ct)
    return [None, lax.select(pred, ct, zero), lax.select(pred, zero, ct)]


@jvp(Op.ADD, Op.SUBTRACT, Op.SELECT, Op.REAL, Op.IMAG, Op.COMPLEX, Op.REDUCE_PRECISION)
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
