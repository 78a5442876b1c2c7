"""Elementwise emitters beyond the arithmetic core: reduce-precision,
stochastic-convert, bitcast-convert, and correctly rounded conversions into
the narrow float types.

reduce-precision and stochastic-convert register with `elemental.emits`;
bitcast-convert changes rank when widths differ, so it is an element
generator (`generator.generates`), as is bitcast (a layout change that may
also reinterpret the element type). Semantics are the interpreter's
(`hlo/evaluator/convert.py`), bit for bit.

Narrow floats (f16, bf16) are computed in f32. A value computed in f64 (or a
64-bit integer) that is rounded to f32 and then to the narrow type rounds
twice, which is wrong whenever the first rounding lands on a midpoint of the
second. `f64_to_narrow` and `int_to_narrow` round the first step *to odd*
instead (Boldo and Melquiond: f32 keeps more than two extra bits over f16 and
bf16, so the second rounding is then the only one), as the interpreter does.
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.codegen import generator
from xlapy.codegen import ir_types as T
from xlapy.codegen.intrinsics import intrinsic
from xlapy.codegen.ir_array import minor_to_major
from xlapy.codegen.scope import Ix, depth_of
from xlapy.codegen.tables import emits, generates
from xlapy.errors import CompileError
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.opcode import Opcode as Op


def _int(width: int, value: int) -> ir.Constant:
    return ir.Constant(ir.IntType(width), value & ((1 << width) - 1))


# -- rounding to odd -----------------------------------------------------------------------
def f64_to_f32_odd(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """f64 -> f32 rounded to odd: an inexact result keeps its last bit set."""
    nearest = b.fptrunc(x, T.F32)
    back = b.fpext(nearest, T.F64)
    bits = b.bitcast(nearest, T.I32)
    finite = b.fcmp_ordered("<", intrinsic(b, "fabs", [x]), ir.Constant(T.F64, float("inf")))
    inexact = b.and_(finite, b.fcmp_unordered("une", back, x))
    even = b.icmp_unsigned("==", b.and_(bits, _int(32, 1)), _int(32, 0))
    # step towards x: magnitude down when |nearest| > |x|, else up
    away = b.fcmp_ordered(">", intrinsic(b, "fabs", [back]), intrinsic(b, "fabs", [x]))
    stepped = b.select(away, b.sub(bits, _int(32, 1)), b.add(bits, _int(32, 1)))
    return b.bitcast(b.select(b.and_(inexact, even), stepped, bits), T.F32)


def f64_to_narrow(b: ir.IRBuilder, x: ir.Value, target: P) -> ir.Value:
    """An f64 value rounded once to f16/bf16 (in compute form, f32)."""
    return T.round_to(b, f64_to_f32_odd(b, x), target)


def int_to_narrow(b: ir.IRBuilder, x: ir.Value, signed: bool, target: P) -> ir.Value:
    """An integer rounded once to f16/bf16 (in compute form): the magnitude is cut
    to 24 significant bits rounded to odd (exact in f32), then rounded once."""
    wide = (b.sext if signed else b.zext)(x, T.I64) if x.type.width < 64 else x
    negative = b.icmp_signed("<", wide, _int(64, 0)) if signed else ir.Constant(T.I1, 0)
    magnitude = b.select(negative, b.sub(_int(64, 0), wide), wide)   # INT64_MIN stays 2**63
    length = b.sub(_int(64, 64), intrinsic(b, "ctlz", [magnitude, ir.Constant(T.I1, 0)]))
    over = b.sub(length, _int(64, 24))
    shift = b.select(b.icmp_signed(">", over, _int(64, 0)), over, _int(64, 0))
    kept = b.lshr(magnitude, shift)
    dropped = b.and_(magnitude, b.sub(b.shl(_int(64, 1), shift), _int(64, 1)))
    sticky = b.zext(b.icmp_unsigned("!=", dropped, _int(64, 0)), T.I64)
    odd = b.shl(b.or_(kept, sticky), shift)
    value = b.uitofp(odd, T.F32)
    return T.round_to(b, b.select(negative, b.fneg(value), value), target)


# -- reduce-precision ----------------------------------------------------------------------
@emits(Op.REDUCE_PRECISION)
def _reduce_precision(b, instruction, args, in_types):
    """XLA's bit-level rounding to (exponent_bits, mantissa_bits) on the f32 (f64 for
    f64) pattern: mantissa to nearest even, exponent overflow to inf, underflow
    (subnormals of the reduced type included) to zero; NaN stays NaN, or +inf with
    no mantissa bits."""
    (x,) = args
    exponent_bits = instruction.attr("exponent_bits")
    mantissa_bits = instruction.attr("mantissa_bits")
    if not isinstance(exponent_bits, int) or not isinstance(mantissa_bits, int) \
            or exponent_bits < 1 or mantissa_bits < 0:
        raise CompileError(f"{instruction.name}: reduce-precision needs exponent_bits >= 1 "
                           f"and mantissa_bits >= 0")
    double = str(x.type) == "double"
    width, src_mantissa = (64, 52) if double else (32, 23)
    src_exponent = width - src_mantissa - 1
    it = ir.IntType(width)
    bits = b.bitcast(x, it)
    if mantissa_bits < src_mantissa:
        dropped = src_mantissa - mantissa_bits
        last_kept = b.and_(b.lshr(bits, _int(width, dropped)), _int(width, 1))
        bias = b.add(last_kept, _int(width, (1 << (dropped - 1)) - 1))
        bits = b.and_(b.add(bits, bias), _int(width, ~((1 << dropped) - 1)))
    if exponent_bits < src_exponent:
        exponent_mask = ((1 << src_exponent) - 1) << src_mantissa
        bias = (1 << (src_exponent - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        exponent = b.and_(bits, _int(width, exponent_mask))
        sign = b.and_(bits, _int(width, 1 << (width - 1)))
        overflows = b.icmp_unsigned(">", exponent,
                                    _int(width, (bias + reduced_bias) << src_mantissa))
        underflows = b.icmp_unsigned("<=", exponent,
                                     _int(width, (bias - reduced_bias) << src_mantissa))
        bits = b.select(overflows, b.or_(sign, _int(width, exponent_mask)), bits)
        bits = b.select(underflows, sign, bits)
    result = b.bitcast(bits, x.type)
    nan_value = x if mantissa_bits > 0 else ir.Constant(x.type, float("inf"))
    return b.select(b.fcmp_unordered("uno", x, x), nan_value, result)


# -- stochastic-convert --------------------------------------------------------------------
_INT_RANGE = {P.S8: 8, P.S16: 16, P.S32: 32, P.S64: 64, P.U8: 8, P.U16: 16, P.U32: 32,
              P.U64: 64}


@emits(Op.STOCHASTIC_CONVERT)
def _stochastic_convert(b, instruction, args, in_types):
    """Float -> integer rounding |x| up iff random < fraction * 2**width (XLA's
    StochasticConvertDecomposer), in f64 as the interpreter: NaN -> 0, values at
    or beyond the target's range saturate."""
    x, random = args
    source, random_type = in_types
    target = instruction.shape.element_type
    if target not in _INT_RANGE or random_type not in (P.U8, P.U16, P.U32, P.U64) \
            or _INT_RANGE[random_type] != source.bit_width:
        raise CompileError(f"{instruction.name}: stochastic-convert from {source.value} "
                           f"with {random_type.value} bits to {target.value}")
    f64 = T.F64
    value = x if str(x.type) == "double" else b.fpext(x, f64)
    magnitude = intrinsic(b, "fabs", [value])
    whole = intrinsic(b, "floor", [magnitude])
    scaled = intrinsic(b, "floor", [b.fmul(b.fsub(magnitude, whole),
                                           ir.Constant(f64, float(2 ** random_type.bit_width)))])
    finite = b.fcmp_ordered("<", intrinsic(b, "fabs", [scaled]), ir.Constant(f64, float("inf")))
    fixed = b.fptoui(b.select(finite, scaled, ir.Constant(f64, 0.0)), T.I64)
    up = b.icmp_unsigned("<", b.zext(random, T.I64) if random.type.width < 64 else random, fixed)
    rounded = b.fadd(whole, b.uitofp(up, f64))
    signed = b.select(b.fcmp_ordered("<", value, ir.Constant(f64, 0.0)), b.fneg(rounded), rounded)
    return _saturate(b, value, signed, target)


def _saturate(b, value, in_range_value, target: P):
    """The interpreter's float -> integer edge rules around an integral f64 value."""
    width = _INT_RANGE[target]
    signed = target.is_signed_int
    lowest, highest = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else \
        (0, (1 << width) - 1)
    it = ir.IntType(width)
    f64 = T.F64
    too_big = b.fcmp_ordered(">=", value, ir.Constant(f64, float(highest)))
    too_small = b.fcmp_ordered("<=", value, ir.Constant(f64, float(lowest)))
    nan = b.fcmp_unordered("uno", value, value)
    safe = b.select(b.or_(b.or_(too_big, too_small), nan), ir.Constant(f64, 0.0),
                    in_range_value)
    result = b.fptosi(safe, it) if signed else b.fptoui(safe, it)
    result = b.select(too_small, _int(width, lowest), result)
    return b.select(too_big, _int(width, highest), result)


# -- bitcast-convert -----------------------------------------------------------------------
def to_bits(b, value, ptype: P) -> ir.Value:
    """A compute-form value as the integer of its storage bits."""
    if ptype is P.PRED:
        return b.zext(value, T.I8)
    if ptype is P.F16:
        return b.bitcast(b.fptrunc(value, T.F16), T.I16)
    if ptype is P.BF16:
        return T.bf16_bits(b, value)
    if ptype in (P.F32, P.F64):
        return b.bitcast(value, ir.IntType(ptype.bit_width))
    if ptype in _INT_RANGE:
        return value
    raise CompileError(f"bitcast-convert of {ptype.value} is not compiled")


def from_bits(b, bits: ir.Value, ptype: P) -> ir.Value:
    """Storage bits as a compute-form value."""
    if ptype is P.PRED:
        return b.icmp_unsigned("!=", bits, ir.Constant(bits.type, 0))
    if ptype is P.F16:
        return b.fpext(b.bitcast(bits, T.F16), T.F32)
    if ptype is P.BF16:
        return T.widen(b, bits, P.BF16)
    if ptype in (P.F32, P.F64):
        return b.bitcast(bits, T.compute_type(ptype))
    if ptype in _INT_RANGE:
        return bits
    raise CompileError(f"bitcast-convert to {ptype.value} is not compiled")


def _operand_bits(g, operand, index):
    """(bits, depth) of operand's element at `index`: straight from memory when it
    has a buffer (so NaN payloads of f16/bf16 survive), else from its value."""
    ptype = operand.shape.element_type
    array = g.arrays.get(operand)
    if array is not None and ptype is not P.PRED:
        depth = depth_of(index)
        with g.scope.at(depth):
            raw = g.b.load(array.address(g.b, [i.value for i in index]))
            return g.b.bitcast(raw, ir.IntType(ptype.bit_width)), depth
    value = g.value(operand, index)
    depth = g.depth(operand, index)
    with g.scope.at(depth):
        return to_bits(g.b, value, ptype), depth


@generates(Op.BITCAST_CONVERT)
def _bitcast_convert(g, instruction, index):
    """Same width: the bits reinterpreted. To a narrower type: the last output
    dimension picks a little-endian piece. To a wider one: the operand's last
    dimension is joined, its element 0 in the low bits."""
    operand = instruction.operands[0]
    source, target = operand.shape.element_type, instruction.shape.element_type
    if source in (P.C64, P.C128) or target in (P.C64, P.C128):
        if source is target:
            return g.operand_at(instruction, 0, index)
        raise CompileError(f"{instruction.name}: complex bitcast-convert is not compiled")
    src_width, dst_width = _storage_width(source), _storage_width(target)
    if src_width == dst_width:
        bits, depth = _operand_bits(g, operand, index)
        with g.scope.at(depth):
            return from_bits(g.b, bits, target), depth
    if src_width > dst_width:
        return _narrowing(g, instruction, index, src_width, dst_width)
    return _widening(g, instruction, index, src_width, dst_width)


@generates(Op.BITCAST)
def _bitcast(g, instruction, index):
    """A bitcast keeps the bytes: the operand element with the same physical
    position (layouts included). XLA's optimised modules also bitcast between
    element types of one width (an f32 comparator key read as s32): then the
    element's bits are reinterpreted, as bitcast-convert does."""
    operand = instruction.operands[0]
    source, target = operand.shape.element_type, instruction.shape.element_type
    if source is not target and (_storage_width(source) != _storage_width(target)
                                 or P.C64 in (source, target) or P.C128 in (source, target)):
        raise CompileError(f"{instruction.name}: bitcast from {source.value} to "
                           f"{target.value} changes the element width")
    out_order = list(reversed(minor_to_major(instruction.shape)))
    in_order = list(reversed(minor_to_major(operand.shape)))
    physical = tuple(index[d] for d in out_order)
    in_physical = generator.reshape_index(g, [instruction.shape.dimensions[d] for d in out_order],
                                [operand.shape.dimensions[d] for d in in_order], physical)
    operand_index = [None] * operand.shape.rank
    for pos, d in enumerate(in_order):
        operand_index[d] = in_physical[pos]
    if source is target:
        return g.operand_at(instruction, 0, tuple(operand_index))
    bits, depth = _operand_bits(g, operand, tuple(operand_index))
    with g.scope.at(depth):
        return from_bits(g.b, bits, target), depth


def _storage_width(ptype: P) -> int:
    return 8 if ptype is P.PRED else ptype.bit_width


def _narrowing(g, instruction, index, src_width: int, dst_width: int):
    operand = instruction.operands[0]
    piece = index[-1]
    bits, depth = _operand_bits(g, operand, tuple(index[:-1]))
    depth = max(depth, piece.depth)
    with g.scope.at(depth):
        b = g.b
        wide = ir.IntType(src_width)
        shift = b.mul(b.trunc(piece.value, wide) if src_width < 64 else piece.value,
                      ir.Constant(wide, dst_width))
        part = b.trunc(b.lshr(bits, shift), ir.IntType(dst_width))
        return from_bits(b, part, instruction.shape.element_type), depth


def _widening(g, instruction, index, src_width: int, dst_width: int):
    operand = instruction.operands[0]
    pieces = []
    for k in range(dst_width // src_width):
        pieces.append(_operand_bits(g, operand, tuple(index) + (Ix.const(k),)))
    depth = max([d for _, d in pieces] + [depth_of(index)])
    with g.scope.at(depth):
        b = g.b
        wide = ir.IntType(dst_width)
        joined = ir.Constant(wide, 0)
        for k, (bits, _) in enumerate(pieces):
            joined = b.or_(joined, b.shl(b.zext(bits, wide), ir.Constant(wide, k * src_width)))
        return from_bits(b, joined, instruction.shape.element_type), depth


# -- complex ----------------------------------------------------------------------------
@emits(Op.COMPLEX)
def _complex(b, instruction, args, in_types):
    """(re, im) from two reals (`emit_elementwise` sends complex results to
    `elemental_complex` before this is reached; the entry marks the op as handled)."""
    return args[0], args[1]
