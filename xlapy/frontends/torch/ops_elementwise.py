"""Lowerings of ATen's elementwise operations: math, arithmetic, comparisons, `where`,
activations and the activations' backward ops.

Operands are converted to the result's dtype (PyTorch's type promotion, read off
the node's metadata) and broadcast to its shape, then one HLO op per step; a
comparison computes in the operands' promoted type, not the boolean result's.
"""

from __future__ import annotations

import math

import torch

from xlapy.frontends.torch.convert import GraphLowering
from xlapy.frontends.torch.dtypes import torch_dtype
from xlapy.frontends.torch.registry import Unsupported, lowering
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloInstruction

aten = torch.ops.aten
H = HloInstruction
PRED = PrimitiveType.PRED


def _is_float(element_type: PrimitiveType) -> bool:
    return element_type.numpy.kind in "fcV" or element_type is PrimitiveType.BF16


# -- unary math ------------------------------------------------------------------------------
_UNARY = {
    aten.abs: "abs", aten.neg: "negate", aten.exp: "exp", aten.expm1: "expm1",
    aten.log: "log", aten.log1p: "log1p", aten.sqrt: "sqrt", aten.rsqrt: "rsqrt",
    aten.sin: "sin", aten.cos: "cos", aten.tan: "tan", aten.tanh: "tanh",
    aten.sigmoid: "logistic", aten.erf: "erf", aten.sign: "sign", aten.atan: "atan",
    aten.asin: "asin", aten.acos: "acos", aten.sinh: "sinh", aten.cosh: "cosh",
    aten.asinh: "asinh", aten.acosh: "acosh", aten.atanh: "atanh",
}
_ROUNDING = {aten.floor: "floor", aten.ceil: "ceil", aten.round: "round_nearest_even"}


def _unary(method: str):
    def lower(g: GraphLowering, out, x):
        (x,) = g.operands(out, x)
        return getattr(g.b, method)(x)
    lower.__name__ = method
    return lower


def _rounding(method: str):
    def lower(g: GraphLowering, out, x, decimals: int = 0):
        (x,) = g.operands(out, x)
        if not _is_float(g.ptype(x)):
            return x
        if decimals:
            raise Unsupported(g.op, "round with decimals")
        return getattr(g.b, method)(x)
    lower.__name__ = method
    return lower


for _op, _method in _UNARY.items():
    lowering(_op)(_unary(_method))
for _op, _method in _ROUNDING.items():
    lowering(_op)(_rounding(_method))


@lowering(aten.trunc)
def trunc(g: GraphLowering, out, x):
    (x,) = g.operands(out, x)
    if not _is_float(g.ptype(x)):
        return x
    negative = g.b.compare(x, g.const(0, g.ptype(x), g.dims(x)), "LT")
    return g.b.select(negative, g.b.ceil(x), g.b.floor(x))


@lowering(aten.reciprocal)
def reciprocal(g: GraphLowering, out, x):
    (one, x) = g.operands(out, 1, x)
    return g.b.divide(one, x)


@lowering(aten.log2, aten.log10)
def log_base(g: GraphLowering, out, x):
    (x,) = g.operands(out, x)
    base = 2.0 if "log2" in g.op else 10.0
    return g.b.divide(g.b.log(x), g.const(math.log(base), g.ptype(x), g.dims(x)))


@lowering(aten.exp2)
def exp2(g: GraphLowering, out, x):
    (x, ln2) = g.operands(out, x, math.log(2.0))
    return g.b.exp(g.b.multiply(x, ln2))


@lowering(aten.bitwise_not)
def bitwise_not(g: GraphLowering, out, x):
    (x,) = g.operands(out, x)
    return g.b.not_(x)


@lowering(aten.logical_not)
def logical_not(g: GraphLowering, out, x):
    (x,) = g.operands(out, x, element_type=PRED)
    return g.b.not_(x)


@lowering(aten.isnan)
def isnan(g: GraphLowering, out, x):
    if not _is_float(g.ptype(x)):
        return g.const(False, PRED, g.shape_of(out))
    return g.b.compare(x, x, "NE")


@lowering(aten.isinf)
def isinf(g: GraphLowering, out, x):
    if not _is_float(g.ptype(x)):
        return g.const(False, PRED, g.shape_of(out))
    inf = g.const(math.inf, g.ptype(x), g.dims(x))
    return g.b.compare(g.b.abs(x), inf, "EQ")


@lowering(aten.isfinite)
def isfinite(g: GraphLowering, out, x):
    if not _is_float(g.ptype(x)):
        return g.const(True, PRED, g.shape_of(out))
    return g.b.is_finite(x)


# -- binary arithmetic -----------------------------------------------------------------------
def _scaled(g: GraphLowering, out, y, alpha):
    (y,) = g.operands(out, y)
    if alpha is None or alpha == 1:
        return y
    (alpha,) = g.operands(out, alpha)
    return g.b.multiply(y, alpha)


@lowering(aten.add)
def add(g: GraphLowering, out, x, y, alpha=1):
    (x,) = g.operands(out, x)
    if g.ptype(x) is PRED:
        return g.b.or_(x, _scaled(g, out, y, alpha))
    return g.b.add(x, _scaled(g, out, y, alpha))


@lowering(aten.sub)
def sub(g: GraphLowering, out, x, y, alpha=1):
    (x,) = g.operands(out, x)
    return g.b.subtract(x, _scaled(g, out, y, alpha))


@lowering(aten.rsub)
def rsub(g: GraphLowering, out, x, y, alpha=1):
    (y,) = g.operands(out, y)
    return g.b.subtract(y, _scaled(g, out, x, alpha))


@lowering(aten.mul)
def mul(g: GraphLowering, out, x, y):
    x, y = g.operands(out, x, y)
    if g.ptype(x) is PRED:
        return g.b.and_(x, y)
    return g.b.multiply(x, y)


@lowering(aten.div)
def div(g: GraphLowering, out, x, y, rounding_mode=None):
    x, y = g.operands(out, x, y)
    if rounding_mode is None:
        return g.b.divide(x, y)
    if _is_float(g.ptype(x)):
        quotient = g.b.divide(x, y)
        return g.b.floor(quotient) if rounding_mode == "floor" else trunc(g, out, quotient)
    quotient = g.b.divide(x, y)  # integer divide truncates towards zero
    if rounding_mode == "trunc":
        return quotient
    zero = g.const(0, g.ptype(x), g.dims(x))
    inexact = g.b.compare(g.b.remainder(x, y), zero, "NE")
    signs_differ = g.b.xor(g.b.compare(x, zero, "LT"), g.b.compare(y, zero, "LT"))
    down = g.b.subtract(quotient, g.const(1, g.ptype(x), g.dims(x)))
    return g.b.select(g.b.and_(inexact, signs_differ), down, quotient)


@lowering(aten.floor_divide)
def floor_divide(g: GraphLowering, out, x, y):
    return div(g, out, x, y, rounding_mode="floor")


@lowering(aten.remainder)
def remainder(g: GraphLowering, out, x, y):
    """Python's modulo: the remainder takes the divisor's sign."""
    x, y = g.operands(out, x, y)
    r = g.b.remainder(x, y)
    zero = g.const(0, g.ptype(x), g.dims(x))
    wrong_sign = g.b.and_(g.b.compare(r, zero, "NE"),
                          g.b.xor(g.b.compare(r, zero, "LT"), g.b.compare(y, zero, "LT")))
    return g.b.select(wrong_sign, g.b.add(r, y), r)


@lowering(aten.fmod)
def fmod(g: GraphLowering, out, x, y):
    x, y = g.operands(out, x, y)
    return g.b.remainder(x, y)


@lowering(aten.pow)
def pow_(g: GraphLowering, out, x, y):
    if not isinstance(y, H) and isinstance(x, H):
        (base,) = g.operands(out, x)
        if y == 1:
            return base
        if y == 2:
            return g.b.multiply(base, base)
        if y == 0.5 and _is_float(g.ptype(base)):
            return g.b.sqrt(base)
        if y == -0.5 and _is_float(g.ptype(base)):
            return g.b.rsqrt(base)
    x, y = g.operands(out, x, y)
    return g.b.power(x, y)


@lowering(aten.maximum)
def maximum(g: GraphLowering, out, x, y):
    return g.b.maximum(*g.operands(out, x, y))


@lowering(aten.minimum)
def minimum(g: GraphLowering, out, x, y):
    return g.b.minimum(*g.operands(out, x, y))


@lowering(aten.atan2)
def atan2(g: GraphLowering, out, x, y):
    return g.b.atan2(*g.operands(out, x, y))


@lowering(aten.bitwise_and, aten.logical_and)
def and_(g: GraphLowering, out, x, y):
    element_type = PRED if "logical" in g.op else None
    return g.b.and_(*g.operands(out, x, y, element_type=element_type))


@lowering(aten.bitwise_or, aten.logical_or)
def or_(g: GraphLowering, out, x, y):
    element_type = PRED if "logical" in g.op else None
    return g.b.or_(*g.operands(out, x, y, element_type=element_type))


@lowering(aten.bitwise_xor, aten.logical_xor)
def xor(g: GraphLowering, out, x, y):
    element_type = PRED if "logical" in g.op else None
    return g.b.xor(*g.operands(out, x, y, element_type=element_type))


# -- comparisons and selection ---------------------------------------------------------------
def promoted(g: GraphLowering, *values) -> PrimitiveType:
    """PyTorch's promotion of tensors and Python scalars (for ops whose result type,
    like a comparison's bool, does not say the type they compute in)."""
    tensors = [torch_dtype(g.ptype(v)) for v in values if isinstance(v, H)]
    if not tensors:
        raise Unsupported(g.op, "no tensor operand")
    dtype = tensors[0]
    for other in tensors[1:]:
        dtype = torch.promote_types(dtype, other)
    for v in values:
        if isinstance(v, bool) or isinstance(v, H):
            continue
        if isinstance(v, float) and not dtype.is_floating_point and not dtype.is_complex:
            dtype = torch.get_default_dtype()
        elif isinstance(v, int) and dtype == torch.bool:
            dtype = torch.int64
    return g.type_of(dtype)


def _comparison(direction: str):
    def lower(g: GraphLowering, out, x, y):
        x, y = g.operands(out, x, y, element_type=promoted(g, x, y))
        return g.b.compare(x, y, direction)
    lower.__name__ = direction.lower()
    return lower


for _op, _direction in ((aten.eq, "EQ"), (aten.ne, "NE"), (aten.lt, "LT"), (aten.le, "LE"),
                        (aten.gt, "GT"), (aten.ge, "GE")):
    lowering(_op)(_comparison(_direction))


@lowering(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar)
def where(g: GraphLowering, out, condition, x, y):
    (condition,) = g.operands(out, condition, element_type=PRED)
    x, y = g.operands(out, x, y)
    return g.b.select(condition, x, y)


@lowering(aten.masked_fill)
def masked_fill(g: GraphLowering, out, x, mask, value):
    (mask,) = g.operands(out, mask, element_type=PRED)
    x, value = g.operands(out, x, value)
    return g.b.select(mask, value, x)


@lowering(aten.clamp, aten.clamp_min, aten.clamp_max)
def clamp(g: GraphLowering, out, x, low=None, high=None):
    if "clamp_max" in g.op:
        low, high = None, low
    (x,) = g.operands(out, x)
    if low is not None:
        x = g.b.maximum(x, *g.operands(out, low))
    if high is not None:
        x = g.b.minimum(x, *g.operands(out, high))
    return x


@lowering(aten.copy)
def copy(g: GraphLowering, out, x, src, non_blocking=False):
    (src,) = g.operands(out, src)
    return src


@lowering(aten.fill)
def fill(g: GraphLowering, out, x, value):
    (value,) = g.operands(out, value)
    return value


# -- activations -----------------------------------------------------------------------------
@lowering(aten.relu)
def relu(g: GraphLowering, out, x):
    x, zero = g.operands(out, x, 0)
    return g.b.maximum(x, zero)


@lowering(aten.silu)
def silu(g: GraphLowering, out, x):
    (x,) = g.operands(out, x)
    return g.b.multiply(x, g.b.logistic(x))


@lowering(aten.hardtanh)
def hardtanh(g: GraphLowering, out, x, low=-1.0, high=1.0):
    x, low, high = g.operands(out, x, low, high)
    return g.b.minimum(g.b.maximum(x, low), high)


@lowering(aten.leaky_relu)
def leaky_relu(g: GraphLowering, out, x, slope=0.01):
    x, slope, zero = g.operands(out, x, slope, 0)
    return g.b.select(g.b.compare(x, zero, "GT"), x, g.b.multiply(x, slope))


_GELU_TANH_BETA = math.sqrt(2.0 / math.pi)
_GELU_KAPPA = 0.044715


@lowering(aten.gelu)
def gelu(g: GraphLowering, out, x, approximate: str = "none"):
    x, half, one = g.operands(out, x, 0.5, 1.0)
    if approximate == "tanh":
        beta, kappa = g.operands(out, _GELU_TANH_BETA, _GELU_KAPPA)
        cube = g.b.multiply(g.b.multiply(x, x), x)
        inner = g.b.multiply(beta, g.b.add(x, g.b.multiply(kappa, cube)))
        return g.b.multiply(g.b.multiply(half, x), g.b.add(one, g.b.tanh(inner)))
    (rsqrt2,) = g.operands(out, 1 / math.sqrt(2.0))
    cdf = g.b.multiply(half, g.b.add(one, g.b.erf(g.b.multiply(x, rsqrt2))))
    return g.b.multiply(x, cdf)


@lowering(aten.gelu_backward)
def gelu_backward(g: GraphLowering, out, grad, x, approximate: str = "none"):
    grad, x, half, one = g.operands(out, grad, x, 0.5, 1.0)
    if approximate == "tanh":
        beta, kappa, three_kappa = g.operands(out, _GELU_TANH_BETA, _GELU_KAPPA,
                                              3 * _GELU_KAPPA)
        square = g.b.multiply(x, x)
        inner = g.b.multiply(beta, g.b.add(x, g.b.multiply(kappa, g.b.multiply(square, x))))
        t = g.b.tanh(inner)
        left = g.b.multiply(half, g.b.add(one, t))
        d_inner = g.b.multiply(beta, g.b.add(one, g.b.multiply(three_kappa, square)))
        right = g.b.multiply(g.b.multiply(g.b.multiply(half, x),
                                          g.b.subtract(one, g.b.multiply(t, t))), d_inner)
        return g.b.multiply(grad, g.b.add(left, right))
    rsqrt2, rsqrt2pi = g.operands(out, 1 / math.sqrt(2.0), 1 / math.sqrt(2.0 * math.pi))
    cdf = g.b.multiply(half, g.b.add(one, g.b.erf(g.b.multiply(x, rsqrt2))))
    pdf = g.b.multiply(rsqrt2pi, g.b.exp(g.b.negate(g.b.multiply(half, g.b.multiply(x, x)))))
    return g.b.multiply(grad, g.b.add(cdf, g.b.multiply(x, pdf)))


@lowering(aten.threshold_backward)
def threshold_backward(g: GraphLowering, out, grad, x, threshold):
    grad, zero = g.operands(out, grad, 0)
    x, threshold = g.operands(out, x, threshold, element_type=promoted(g, x, threshold))
    return g.b.select(g.b.compare(x, threshold, "LE"), zero, grad)


@lowering(aten.threshold)
def threshold(g: GraphLowering, out, x, threshold, value):
    x, threshold, value = g.operands(out, x, threshold, value)
    return g.b.select(g.b.compare(x, threshold, "LE"), value, x)


@lowering(aten.sigmoid_backward)
def sigmoid_backward(g: GraphLowering, out, grad, y):
    grad, y, one = g.operands(out, grad, y, 1)
    return g.b.multiply(grad, g.b.multiply(y, g.b.subtract(one, y)))


@lowering(aten.tanh_backward)
def tanh_backward(g: GraphLowering, out, grad, y):
    grad, y, one = g.operands(out, grad, y, 1)
    return g.b.multiply(grad, g.b.subtract(one, g.b.multiply(y, y)))


@lowering(aten.silu_backward)
def silu_backward(g: GraphLowering, out, grad, x):
    grad, x, one = g.operands(out, grad, x, 1)
    s = g.b.logistic(x)
    return g.b.multiply(grad, g.b.multiply(s, g.b.add(one, g.b.multiply(
        x, g.b.subtract(one, s)))))


@lowering(aten.leaky_relu_backward)
def leaky_relu_backward(g: GraphLowering, out, grad, x, slope, self_is_result=False):
    grad, x, slope, zero = g.operands(out, grad, x, slope, 0)
    return g.b.select(g.b.compare(x, zero, "GT"), grad, g.b.multiply(grad, slope))


@lowering(aten.hardtanh_backward)
def hardtanh_backward(g: GraphLowering, out, grad, x, low, high):
    grad, x, low, high, zero = g.operands(out, grad, x, low, high, 0)
    outside = g.b.or_(g.b.compare(x, low, "LE"), g.b.compare(x, high, "GE"))
    return g.b.select(outside, zero, grad)
