"""The elemental emitter: one HLO elementwise op on compute-form values.

`emit_elementwise(b, instruction, args, in_types)` returns the op's result
for one element (scalar LLVM values; complex values are (re, im) pairs),
with the interpreter's semantics: IEEE arithmetic (no fast-math, no
contraction into FMA), NaN-propagating maximum/minimum, XLA's integer edge
cases (division by zero, INT_MIN / -1, shifts past the width), saturating
float-to-integer converts, total-order comparisons. Narrow floats compute in
f32 and round after every op. Transcendental functions come from the
vectorisable implementations in `math/` where one exists, else from libm in
double precision rounded once (what the interpreter does).
"""

from __future__ import annotations

import contextvars

import llvmlite.ir as ir

from xlapy.codegen import elemental_complex, elemental_extra
from xlapy.codegen import ir_types as T
from xlapy.codegen import math as vmath
from xlapy.codegen.intrinsics import intrinsic, libm
from xlapy.codegen.tables import EMITTERS, emits
from xlapy.errors import CompileError
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.opcode import Opcode as Op

FAST_MATH: contextvars.ContextVar[tuple] = contextvars.ContextVar("fast_math", default=())
"""LLVM fast-math flags for float arithmetic: () (strict IEEE, the default) or
("fast",) while a module compiles with --xla_cpu_enable_fast_math."""


MISCOMPILED: contextvars.ContextVar[str] = contextvars.ContextVar("miscompiled", default="")
"""Testing only (--xlapy_test_miscompile): the opcode whose result is emitted plus one,
a known wrong lowering for numerics bisection to find."""


def emit_elementwise(b: ir.IRBuilder, instruction, args: list, in_types: list):
    """The value of `instruction` for one element whose operands are `args`."""
    out = instruction.shape.element_type
    if out in (P.C64, P.C128) or any(t in (P.C64, P.C128) for t in in_types):
        return elemental_complex.emit_complex(b, instruction, args, in_types)
    fn = EMITTERS.get(instruction.opcode)
    if fn is None:
        raise CompileError(f"{instruction.name}: the CPU backend has no elemental emitter "
                           f"for {instruction.opcode.value}")
    value = fn(b, instruction, args, in_types)
    if MISCOMPILED.get() == instruction.opcode.value:
        value = _plus_one(b, value, out)
    return T.round_to(b, value, out) if T.is_narrow_float(out) else value


def _plus_one(b, value, out: P):
    if _is_float(out):
        return b.fadd(value, _const(value, 1.0))
    return b.add(value, _const(value, 1)) if isinstance(value.type, ir.IntType) else value


def supports(instruction) -> bool:
    return instruction.opcode in EMITTERS


def _is_float(t: P) -> bool:
    return t in (P.F16, P.BF16, P.F32, P.F64)


def _signed(t: P) -> bool:
    return t in (P.S8, P.S16, P.S32, P.S64)


def _const(like: ir.Value, value) -> ir.Constant:
    t = like.type
    if isinstance(t, ir.IntType):
        return ir.Constant(t, int(value) & ((1 << t.width) - 1))
    return ir.Constant(t, value)


# -- arithmetic ---------------------------------------------------------------------------
@emits(Op.ADD, Op.SUBTRACT, Op.MULTIPLY)
def _arith(b, instruction, args, in_types):
    x, y = args
    float_op = {Op.ADD: b.fadd, Op.SUBTRACT: b.fsub, Op.MULTIPLY: b.fmul}
    int_op = {Op.ADD: b.add, Op.SUBTRACT: b.sub, Op.MULTIPLY: b.mul}
    if in_types[0] is P.PRED:
        return {Op.ADD: b.or_, Op.SUBTRACT: b.xor, Op.MULTIPLY: b.and_}[instruction.opcode](x, y)
    if _is_float(in_types[0]):
        return float_op[instruction.opcode](x, y, flags=FAST_MATH.get())
    return int_op[instruction.opcode](x, y)


@emits(Op.DIVIDE)
def _divide(b, instruction, args, in_types):
    x, y = args
    t = in_types[0]
    if _is_float(t):
        return b.fdiv(x, y, flags=FAST_MATH.get())
    zero = b.icmp_unsigned("==", y, _const(y, 0))
    if _signed(t):
        overflow = b.and_(b.icmp_signed("==", x, _const(x, 1 << (x.type.width - 1))),
                          b.icmp_signed("==", y, _const(y, -1)))
        safe = b.select(b.or_(zero, overflow), _const(y, 1), y)
        return b.select(zero, _const(x, -1), b.sdiv(x, safe))
    if t is P.PRED:
        return b.select(zero, _const(x, 1), x)
    return b.select(zero, _const(x, -1), b.udiv(x, b.select(zero, _const(y, 1), y)))


@emits(Op.REMAINDER)
def _remainder(b, instruction, args, in_types):
    x, y = args
    t = in_types[0]
    if _is_float(t):
        return b.frem(x, y)
    zero = b.icmp_unsigned("==", y, _const(y, 0))
    if t is P.PRED:
        return b.select(zero, x, _const(x, 0))
    if _signed(t):
        minus_one = b.icmp_signed("==", y, _const(y, -1))
        r = b.srem(x, b.select(b.or_(zero, minus_one), _const(y, 1), y))
    else:
        r = b.urem(x, b.select(zero, _const(y, 1), y))
    return b.select(zero, x, r)


@emits(Op.MAXIMUM, Op.MINIMUM)
def _max_min(b, instruction, args, in_types):
    x, y = args
    t = in_types[0]
    is_max = instruction.opcode is Op.MAXIMUM
    if _is_float(t):
        return max_min_float(b, x, y, is_max)
    if t is P.PRED or not _signed(t):
        cmp = b.icmp_unsigned(">" if is_max else "<", x, y)
    else:
        cmp = b.icmp_signed(">" if is_max else "<", x, y)
    return b.select(cmp, x, y)


def max_min_float(b, x, y, is_max: bool):
    """NaN-propagating max/min with the interpreter's tie rule: x unless y is
    strictly greater (smaller), so max(-0, +0) = -0, as std::max."""
    better = b.fcmp_ordered("<" if is_max else ">", x, y)
    picked = b.select(better, y, x)
    return b.select(b.fcmp_unordered("uno", x, x), x, b.select(
        b.fcmp_unordered("uno", y, y), y, picked))


@emits(Op.CLAMP)
def _clamp(b, instruction, args, in_types):
    lo, x, hi = args
    t = in_types[1]
    if _is_float(t):
        inner = b.select(b.fcmp_ordered("<", x, lo), lo, x)          # std::max(x, lo)
        result = b.select(b.fcmp_ordered("<", inner, hi), inner, hi)  # std::min(hi, inner)
        # a NaN bound is the result even when x is a number (checked lo, x, hi)
        nan_hi = b.fcmp_unordered("uno", hi, hi)
        result = b.select(nan_hi, hi, result)
        result = b.select(b.fcmp_unordered("uno", x, x), x, result)
        return b.select(b.fcmp_unordered("uno", lo, lo), lo, result)
    cmp_gt = (lambda p, q: b.icmp_signed(">", p, q)) if _signed(t) else \
        (lambda p, q: b.icmp_unsigned(">", p, q))
    inner = b.select(cmp_gt(lo, x), lo, x)
    return b.select(cmp_gt(inner, hi), hi, inner)


@emits(Op.NEGATE)
def _negate(b, instruction, args, in_types):
    (x,) = args
    return b.fneg(x) if _is_float(in_types[0]) else b.sub(_const(x, 0), x)


@emits(Op.ABS)
def _abs(b, instruction, args, in_types):
    (x,) = args
    if _is_float(in_types[0]):
        return intrinsic(b, "fabs", [x])
    if not _signed(in_types[0]):
        return x
    return b.select(b.icmp_signed("<", x, _const(x, 0)), b.sub(_const(x, 0), x), x)


@emits(Op.SIGN)
def _sign(b, instruction, args, in_types):
    (x,) = args
    t = in_types[0]
    if _is_float(t):
        nonzero = b.uitofp(b.fcmp_unordered("une", x, _const(x, 0.0)), x.type)
        signum = intrinsic(b, "copysign", [nonzero, x])
        return b.select(b.fcmp_unordered("uno", x, x), x, signum)
    if not _signed(t):
        return b.zext(b.icmp_unsigned("!=", x, _const(x, 0)), x.type) if t is not P.PRED else x
    positive = b.zext(b.icmp_signed(">", x, _const(x, 0)), x.type)
    negative = b.zext(b.icmp_signed("<", x, _const(x, 0)), x.type)
    return b.sub(positive, negative)


@emits(Op.POWER)
def _power(b, instruction, args, in_types):
    x, y = args
    t = in_types[0]
    if _is_float(t):
        return float_function(b, "power", [x, y], t)
    if t is P.PRED:
        return b.or_(x, b.not_(y))
    width = x.type.width
    result, base = _const(x, 1), x
    for bit in range(width):
        take = b.trunc(b.lshr(y, _const(y, bit)), T.I1)
        result = b.select(take, b.mul(result, base), result)
        base = b.mul(base, base)
    one_result = b.or_(b.icmp_unsigned("==", y, _const(y, 0)),
                       b.icmp_unsigned("==", x, _const(x, 1)))
    if _signed(t):
        negative = b.icmp_signed("<", y, _const(y, 0))
        result = b.select(negative, _const(x, 0), result)
    return b.select(one_result, _const(x, 1), result)


# -- bits -------------------------------------------------------------------------------
@emits(Op.AND, Op.OR, Op.XOR)
def _bitwise(b, instruction, args, in_types):
    x, y = args
    return {Op.AND: b.and_, Op.OR: b.or_, Op.XOR: b.xor}[instruction.opcode](x, y)


@emits(Op.NOT)
def _not(b, instruction, args, in_types):
    return b.not_(args[0])


@emits(Op.SHIFT_LEFT, Op.SHIFT_RIGHT_LOGICAL, Op.SHIFT_RIGHT_ARITHMETIC)
def _shift(b, instruction, args, in_types):
    x, y = args
    width = x.type.width
    too_far = b.icmp_unsigned(">=", y, _const(y, width))
    amount = b.select(too_far, _const(y, 0), y)
    if instruction.opcode is Op.SHIFT_LEFT:
        return b.select(too_far, _const(x, 0), b.shl(x, amount))
    if instruction.opcode is Op.SHIFT_RIGHT_LOGICAL:
        return b.select(too_far, _const(x, 0), b.lshr(x, amount))
    return b.ashr(x, b.select(too_far, _const(y, width - 1), y))


@emits(Op.POPCNT)
def _popcnt(b, instruction, args, in_types):
    return intrinsic(b, "ctpop", [args[0]])


@emits(Op.CLZ)
def _clz(b, instruction, args, in_types):
    return intrinsic(b, "ctlz", [args[0], ir.Constant(T.I1, 0)])


@emits(Op.MULHI)
def _mulhi(b, instruction, args, in_types):
    x, y = args
    width = x.type.width
    wide = ir.IntType(2 * width)
    extend = b.sext if _signed(in_types[0]) else b.zext
    product = b.mul(extend(x, wide), extend(y, wide))
    return b.trunc(b.lshr(product, ir.Constant(wide, width)), x.type)


# -- comparisons and selection -----------------------------------------------------------
_FLOAT_CMP = {"EQ": ("==", True), "NE": ("!=", False), "LT": ("<", True), "LE": ("<=", True),
              "GT": (">", True), "GE": (">=", True)}
_INT_CMP = {"EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}


def _direction(instruction) -> str:
    d = instruction.attr("direction")
    return getattr(d, "value", str(d)).upper()


@emits(Op.COMPARE)
def _compare(b, instruction, args, in_types):
    x, y = args
    t = in_types[0]
    direction = _direction(instruction)
    kind = instruction.attr("type")
    kind = getattr(kind, "value", kind)
    if _is_float(t):
        if kind is not None and str(kind).upper() == "TOTALORDER":
            x, y = total_order_key(b, x), total_order_key(b, y)
            return b.icmp_signed(_INT_CMP[direction], x, y)
        op, ordered = _FLOAT_CMP[direction]
        return (b.fcmp_ordered if ordered else b.fcmp_unordered)(op, x, y)
    if _signed(t):
        return b.icmp_signed(_INT_CMP[direction], x, y)
    return b.icmp_unsigned(_INT_CMP[direction], x, y)


def total_order_key(b, x):
    """A signed integer whose order is IEEE totalOrder on the float's bits."""
    it = ir.IntType(x.type.width if isinstance(x.type, ir.IntType) else
                    (32 if str(x.type) == "float" else 64))
    bits = b.bitcast(x, it)
    flip = b.lshr(b.ashr(bits, ir.Constant(it, it.width - 1)), ir.Constant(it, 1))
    return b.xor(bits, flip)


@emits(Op.SELECT)
def _select(b, instruction, args, in_types):
    return b.select(args[0], args[1], args[2])


@emits(Op.IS_FINITE)
def _is_finite(b, instruction, args, in_types):
    (x,) = args
    return b.fcmp_ordered("<", intrinsic(b, "fabs", [x]), _const(x, float("inf")))


# -- conversions --------------------------------------------------------------------------
@emits(Op.CONVERT)
def _convert(b, instruction, args, in_types):
    return convert(b, args[0], in_types[0], instruction.shape.element_type)


def convert(b, x, source: P, target: P):
    """`x` (compute form of `source`) as `target`, XLA's convert semantics."""
    to_t = T.compute_type(target)
    if source is target:
        return x
    if target is P.PRED:
        if _is_float(source):
            return b.fcmp_unordered("une", x, _const(x, 0.0))
        return b.icmp_unsigned("!=", x, _const(x, 0))
    if T.is_narrow_float(target) and (source is P.F64 or source in _WIDE_INTS):
        if source is P.F64:
            return elemental_extra.f64_to_narrow(b, x, target)
        return elemental_extra.int_to_narrow(b, x, _signed(source), target)
    if _is_float(target):
        if _is_float(source):
            value = _float_resize(b, x, to_t)
        elif _signed(source):
            value = b.sitofp(x, to_t)
        else:
            value = b.uitofp(x, to_t)
        return T.round_to(b, value, target)
    # integer target
    if _is_float(source):
        name = "fptosi.sat" if _signed(target) else "fptoui.sat"
        return intrinsic(b, name, [x], ret=to_t, overloads=[to_t, x.type])
    if x.type.width == to_t.width:
        return x
    if x.type.width > to_t.width:
        return b.trunc(x, to_t)
    return b.sext(x, to_t) if _signed(source) else b.zext(x, to_t)


_WIDE_INTS = frozenset({P.S32, P.S64, P.U32, P.U64})
"""Integers with more significant bits than f32 (narrower ones convert exactly)."""


def _float_resize(b, x, to_t):
    if str(x.type) == str(to_t):
        return x
    if str(to_t) == "double":
        return b.fpext(x, to_t)
    return b.fptrunc(x, to_t)


# -- rounding -----------------------------------------------------------------------------
@emits(Op.FLOOR, Op.CEIL, Op.ROUND_NEAREST_EVEN, Op.ROUND_NEAREST_AFZ)
def _rounding(b, instruction, args, in_types):
    name = {Op.FLOOR: "floor", Op.CEIL: "ceil", Op.ROUND_NEAREST_EVEN: "roundeven",
            Op.ROUND_NEAREST_AFZ: "round"}[instruction.opcode]
    return intrinsic(b, name, [args[0]])


@emits(Op.SQRT)
def _sqrt(b, instruction, args, in_types):
    return intrinsic(b, "sqrt", [args[0]])


@emits(Op.REAL)
def _real(b, instruction, args, in_types):
    return args[0]


@emits(Op.IMAG)
def _imag(b, instruction, args, in_types):
    return _const(args[0], 0.0)


# -- transcendental -----------------------------------------------------------------------
_TRANSCENDENTAL = {
    Op.EXP: "exponential", Op.EXPM1: "exponential-minus-one", Op.LOG: "log",
    Op.LOG1P: "log-plus-one", Op.TANH: "tanh", Op.LOGISTIC: "logistic", Op.ERF: "erf",
    Op.SIN: "sine", Op.COS: "cosine", Op.RSQRT: "rsqrt", Op.TAN: "tan", Op.CBRT: "cbrt",
    Op.SINH: "sinh", Op.COSH: "cosh", Op.ASIN: "asin", Op.ACOS: "acos", Op.ATAN: "atan",
    Op.ASINH: "asinh", Op.ACOSH: "acosh", Op.ATANH: "atanh", Op.ATAN2: "atan2",
}

_LIBM = {"exponential": "exp", "exponential-minus-one": "expm1", "log": "log",
         "log-plus-one": "log1p", "tanh": "tanh", "erf": "erf", "sine": "sin",
         "cosine": "cos", "tan": "tan", "cbrt": "cbrt", "sinh": "sinh", "cosh": "cosh",
         "asin": "asin", "acos": "acos", "atan": "atan", "asinh": "asinh", "acosh": "acosh",
         "atanh": "atanh", "atan2": "atan2", "power": "pow"}


@emits(*_TRANSCENDENTAL)
def _transcendental(b, instruction, args, in_types):
    return float_function(b, _TRANSCENDENTAL[instruction.opcode], args, in_types[0])


def float_function(b, name: str, args: list, ptype: P):
    """A float function by HLO name: the vectorisable version when `math/` has one,
    else libm in double precision, rounded once."""
    table = vmath.BINARY if len(args) == 2 else vmath.UNARY
    if name in table:
        emit = vmath.emit_binary if len(args) == 2 else vmath.emit_unary
        return emit(name, b, *args)
    t = args[0].type
    wide = [b.fpext(a, T.F64) if str(t) == "float" else a for a in args]
    if name == "rsqrt":
        value = b.fdiv(ir.Constant(T.F64, 1.0), intrinsic(b, "sqrt", wide))
    elif name == "logistic":
        e = libm(b, "exp", [b.fneg(wide[0])])
        value = b.fdiv(ir.Constant(T.F64, 1.0), b.fadd(ir.Constant(T.F64, 1.0), e))
    elif name == "power":
        value = _pow_fixups(b, wide[0], wide[1], libm(b, "pow", wide))
    else:
        value = libm(b, _LIBM[name], wide)
    if T.is_narrow_float(ptype):
        # the caller's rounding is then the only one
        return elemental_extra.f64_to_f32_odd(b, value)
    return b.fptrunc(value, t) if str(t) == "float" else value


def _pow_fixups(b, x, y, value):
    one = ir.Constant(x.type, 1.0)
    unit = b.or_(b.fcmp_ordered("==", x, one), b.fcmp_ordered("==", y, ir.Constant(x.type, 0.0)))
    return b.select(unit, one, value)
