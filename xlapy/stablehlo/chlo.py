"""Lowerings of the CHLO ops JAX can leave in StableHLO ("client HLO": ops
that XLA expands before compiling). Each becomes an xlapy opcode where one
exists (erf, tan, asinh, top_k...) or a few HLO ops otherwise (square, conj,
is_inf, erf_inv, the `broadcast_*` family with NumPy-style broadcasting).
CHLO ops without a lowering (lgamma, digamma, zeta, bessel...) are
ParseErrors naming the op.
"""

from __future__ import annotations

import numpy as np

from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.stablehlo.attributes import Dense, to_numpy
from xlapy.stablehlo.context import OpContext

H = HloInstruction

_UNARY = {"erf": Opcode.ERF, "tan": Opcode.TAN, "asin": Opcode.ASIN, "acos": Opcode.ACOS,
          "atan": Opcode.ATAN, "sinh": Opcode.SINH, "cosh": Opcode.COSH,
          "asinh": Opcode.ASINH, "acosh": Opcode.ACOSH, "atanh": Opcode.ATANH}


def _unary(opcode: Opcode):
    def lower(ctx: OpContext) -> list[H]:
        ctx.arity(1)
        return [ctx.b.unary(opcode, ctx.args[0])]
    return lower


def _full(ctx: OpContext, value, like: H) -> H:
    """`value` as a constant broadcast to `like`'s shape and element type."""
    scalar = ctx.b.constant(value, like.shape.element_type)
    return ctx.b.broadcast(scalar, like.shape.dimensions, ())


def square(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    return [ctx.b.multiply(ctx.args[0], ctx.args[0])]


def conj(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    x = ctx.args[0]
    if not x.shape.element_type.is_complex:
        return [x]
    return [ctx.b.complex(ctx.b.real(x), ctx.b.negate(ctx.b.imag(x)))]


def erfc(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    x = ctx.args[0]
    return [ctx.b.subtract(_full(ctx, 1, x), ctx.b.erf(x))]


def _infinity_test(direction: str, sign: float):
    def lower(ctx: OpContext) -> list[H]:
        ctx.arity(1)
        x = ctx.args[0]
        if not x.shape.element_type.is_float:
            return [ctx.b.broadcast(ctx.b.constant(False), x.shape.dimensions, ())]
        value = ctx.b.abs(x) if sign == 0 else x
        return [ctx.b.compare(value, _full(ctx, np.inf if sign >= 0 else -np.inf, x),
                              direction)]
    return lower


# XLA's ErfInv32 (M. Giles' single-precision polynomials in w = -log1p(-x^2)).
_ERF_INV_SMALL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERF_INV_LARGE = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                  0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def erf_inv(ctx: OpContext) -> list[H]:
    """Evaluated in f32 (f16/bf16/f64 converted there and back), as XLA does for the
    narrow types."""
    ctx.arity(1)
    b, x = ctx.b, ctx.args[0]
    element = x.shape.element_type
    if not element.is_float:
        raise ctx.error(f"needs a floating-point operand, got {element.value}")
    if element is not PrimitiveType.F32:
        x = b.convert(x, PrimitiveType.F32)
    w = b.negate(b.log1p(b.negate(b.multiply(x, x))))
    small = b.compare(w, _full(ctx, 5.0, w), "LT")
    w = b.select(small, b.subtract(w, _full(ctx, 2.5, w)),
                 b.subtract(b.sqrt(w), _full(ctx, 3.0, w)))
    p = None
    for lo, hi in zip(_ERF_INV_SMALL, _ERF_INV_LARGE):
        coefficient = b.select(small, _full(ctx, lo, w), _full(ctx, hi, w))
        p = coefficient if p is None else b.add(coefficient, b.multiply(p, w))
    at_one = b.compare(b.abs(x), _full(ctx, 1.0, x), "EQ")
    result = b.select(at_one, b.multiply(x, _full(ctx, np.inf, x)), b.multiply(p, x))
    return [result if element is PrimitiveType.F32 else b.convert(result, element)]


def top_k(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    return ctx.unpack(ctx.b.topk(ctx.args[0], ctx.int("k"), ctx.bool("largest", True)))


def constant_like(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    value = ctx.attr("value")
    if isinstance(value, Dense):
        value = to_numpy(value, value.shape) if value.shape else value.elements
    return [_full(ctx, np.asarray(value).reshape(()).item(), ctx.args[0])]


def _broadcast_operands(ctx: OpContext) -> list[H]:
    """Operands broadcast NumPy-style (or by `broadcast_dimensions`) to the result's dims."""
    dims = ctx.result().dimensions
    explicit = ctx.attr("broadcast_dimensions", None)
    out = []
    for x in ctx.args:
        rank = x.shape.rank
        if tuple(x.shape.dimensions) == tuple(dims):
            out.append(x)
            continue
        mapping = ctx.ints("broadcast_dimensions") if explicit is not None and \
            rank < len(dims) else range(len(dims) - rank, len(dims))
        out.append(ctx.b.broadcast(x, dims, list(mapping)))
    return out


def _broadcast_binary(opcode: Opcode):
    def lower(ctx: OpContext) -> list[H]:
        ctx.arity(2)
        return [ctx.b.binary(opcode, *_broadcast_operands(ctx))]
    return lower


def broadcast_compare(ctx: OpContext) -> list[H]:
    ctx.arity(2)
    return [ctx.b.compare(*_broadcast_operands(ctx), ctx.word("comparison_direction"),
                          ctx.word("compare_type", None))]


def broadcast_select(ctx: OpContext) -> list[H]:
    ctx.arity(3)
    return [ctx.b.select(*_broadcast_operands(ctx))]


_BROADCAST_BINARY = {
    "add": Opcode.ADD, "subtract": Opcode.SUBTRACT, "multiply": Opcode.MULTIPLY,
    "divide": Opcode.DIVIDE, "maximum": Opcode.MAXIMUM, "minimum": Opcode.MINIMUM,
    "remainder": Opcode.REMAINDER, "power": Opcode.POWER, "atan2": Opcode.ATAN2,
    "and": Opcode.AND, "or": Opcode.OR, "xor": Opcode.XOR, "complex": Opcode.COMPLEX,
    "shift_left": Opcode.SHIFT_LEFT, "shift_right_arithmetic": Opcode.SHIFT_RIGHT_ARITHMETIC,
    "shift_right_logical": Opcode.SHIFT_RIGHT_LOGICAL,
}

TABLE = {
    **{f"chlo.{name}": _unary(opcode) for name, opcode in _UNARY.items()},
    **{f"chlo.broadcast_{name}": _broadcast_binary(opcode)
       for name, opcode in _BROADCAST_BINARY.items()},
    "chlo.square": square, "chlo.conj": conj, "chlo.erfc": erfc, "chlo.erf_inv": erf_inv,
    "chlo.is_inf": _infinity_test("EQ", 0), "chlo.is_pos_inf": _infinity_test("EQ", 1),
    "chlo.is_neg_inf": _infinity_test("EQ", -1), "chlo.top_k": top_k,
    "chlo.constant_like": constant_like, "chlo.broadcast_compare": broadcast_compare,
    "chlo.broadcast_select": broadcast_select,
}
