"""HLO element types as LLVM types: how each is stored and how it is computed.

Memory holds each type at its own width (pred as one byte, bf16 as its 16
bits, complex as two parts). In registers the emitter computes:

    pred            i1
    sN / uN         iN (signedness lives in the HLO type, not the LLVM one)
    f16, bf16       float, rounded back to the narrow type after every op
                    (XLA's semantics: each HLO op rounds its result)
    f32, f64        float, double
    c64, c128       a Python pair (re, im) of float/double values
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.errors import CompileError
from xlapy.hlo.dtypes import PrimitiveType as P

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I16 = ir.IntType(16)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F16 = ir.HalfType()
F32 = ir.FloatType()
F64 = ir.DoubleType()
I8P = I8.as_pointer()

_INTS = {P.S8: 8, P.S16: 16, P.S32: 32, P.S64: 64, P.U8: 8, P.U16: 16, P.U32: 32, P.U64: 64}
NATIVE = frozenset({P.PRED, P.F16, P.BF16, P.F32, P.F64, P.C64, P.C128, *_INTS})
"""Element types the CPU backend computes natively."""


def check_native(ptype: P, where: str) -> None:
    if ptype not in NATIVE:
        raise CompileError(f"{where}: the CPU backend does not compute {ptype.value}")


def storage_type(ptype: P) -> ir.Type:
    """The LLVM type of one element in memory."""
    if ptype is P.PRED:
        return I8
    if ptype in _INTS:
        return ir.IntType(_INTS[ptype])
    if ptype is P.F16:
        return F16
    if ptype is P.BF16:
        return I16
    if ptype is P.F32:
        return F32
    if ptype is P.F64:
        return F64
    if ptype is P.C64:
        return ir.ArrayType(F32, 2)
    if ptype is P.C128:
        return ir.ArrayType(F64, 2)
    raise CompileError(f"the CPU backend does not compute {ptype.value}")


def compute_type(ptype: P) -> ir.Type:
    """The LLVM type a value is computed in (the part type for complex)."""
    if ptype is P.PRED:
        return I1
    if ptype in _INTS:
        return ir.IntType(_INTS[ptype])
    if ptype in (P.F16, P.BF16, P.F32, P.C64):
        return F32
    if ptype in (P.F64, P.C128):
        return F64
    raise CompileError(f"the CPU backend does not compute {ptype.value}")


def is_narrow_float(ptype: P) -> bool:
    return ptype in (P.F16, P.BF16)


def load(builder: ir.IRBuilder, ptr: ir.Value, ptype: P):
    """Load one element and widen it to its compute form."""
    if ptype in (P.C64, P.C128):
        zero = ir.Constant(I32, 0)
        return (builder.load(builder.gep(ptr, [zero, zero])),
                builder.load(builder.gep(ptr, [zero, ir.Constant(I32, 1)])))
    raw = builder.load(ptr)
    return widen(builder, raw, ptype)


def widen(builder: ir.IRBuilder, raw: ir.Value, ptype: P) -> ir.Value:
    """Storage form -> compute form (scalar or vector)."""
    if ptype is P.PRED:
        return builder.icmp_unsigned("!=", raw, ir.Constant(raw.type, 0))
    if ptype is P.F16:
        return builder.fpext(raw, _like(raw.type, F32))
    if ptype is P.BF16:
        bits = builder.shl(builder.zext(raw, _like(raw.type, I32)),
                           _splat(raw.type, I32, 16))
        return builder.bitcast(bits, _like(raw.type, F32))
    return raw


def store(builder: ir.IRBuilder, value, ptr: ir.Value, ptype: P) -> None:
    """Store a compute-form value as one element."""
    if ptype in (P.C64, P.C128):
        zero = ir.Constant(I32, 0)
        builder.store(value[0], builder.gep(ptr, [zero, zero]))
        builder.store(value[1], builder.gep(ptr, [zero, ir.Constant(I32, 1)]))
        return
    builder.store(to_storage(builder, value, ptype), ptr)


def to_storage(builder: ir.IRBuilder, value: ir.Value, ptype: P) -> ir.Value:
    if ptype is P.PRED:
        return builder.zext(value, _like(value.type, I8))
    if ptype is P.F16:
        return builder.fptrunc(value, _like(value.type, F16))
    if ptype is P.BF16:
        return bf16_bits(builder, value)
    return value


def bf16_bits(builder: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """f32 -> bf16 bits, rounding to nearest even; NaN stays a (quiet) NaN."""
    t = value.type
    bits = builder.bitcast(value, _like(t, I32))
    lsb = builder.and_(builder.lshr(bits, _splat(t, I32, 16)), _splat(t, I32, 1))
    rounded = builder.add(builder.add(bits, _splat(t, I32, 0x7FFF)), lsb)
    nan = builder.fcmp_unordered("uno", value, value)
    quiet = builder.or_(builder.lshr(bits, _splat(t, I32, 16)), _splat(t, I32, 0x40))
    result = builder.select(nan, quiet, builder.lshr(rounded, _splat(t, I32, 16)))
    return builder.trunc(result, _like(t, I16))


def round_to(builder: ir.IRBuilder, value: ir.Value, ptype: P) -> ir.Value:
    """Round a computed f32 value to a narrow float and widen it back (each HLO op
    rounds its result); other types pass through."""
    if ptype is P.F16:
        return builder.fpext(builder.fptrunc(value, _like(value.type, F16)), value.type)
    if ptype is P.BF16:
        return widen(builder, bf16_bits(builder, value), P.BF16)
    return value


def _like(t: ir.Type, element: ir.Type) -> ir.Type:
    """`element`, or a vector of it as wide as `t` when `t` is a vector."""
    return ir.VectorType(element, t.count) if isinstance(t, ir.VectorType) else element


def _splat(t: ir.Type, element: ir.Type, value) -> ir.Constant:
    if isinstance(t, ir.VectorType):
        return ir.Constant(ir.VectorType(element, t.count), [value] * t.count)
    return ir.Constant(element, value)


def constant(ptype: P, value):
    """A compute-form constant of `ptype` from a Python/NumPy scalar."""
    t = compute_type(ptype)
    if ptype in (P.C64, P.C128):
        return (ir.Constant(t, float(value.real)), ir.Constant(t, float(value.imag)))
    if ptype is P.PRED:
        return ir.Constant(I1, int(bool(value)))
    if ptype in _INTS:
        return ir.Constant(t, int(value) & ((1 << t.width) - 1))
    return ir.Constant(t, float(value))
