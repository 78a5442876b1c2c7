"""Interpreter rules for conversions: convert, bitcast-convert, reduce-precision
and stochastic-convert.

convert (XLA's `Literal::Convert`):
- float -> integer truncates toward zero and saturates: NaN -> 0, values at
  or beyond the target's range -> its lowest/highest value;
- integer -> integer and pred -> integer wrap modulo 2**width;
- anything -> pred is `x != 0` (NaN is true);
- integer -> float and float -> float round once, to nearest even, as
  LLVM's sitofp/fptrunc (XLA's compiled code) do; overflow gives inf, or NaN
  for types without inf (ml_dtypes). XLA's evaluator instead goes through
  float32 for bf16/f16 targets of int or f64 values (Eigen), which can round
  twice; we do not copy that artefact;
- complex -> real takes the real part (XLA's shape inference rejects this
  conversion; taking the real part is what a frontend would have asked for).

bitcast-convert reinterprets the bits, little-endian: to a narrower type
the result gains a minor dimension of width ratio, to a wider one the
operand's minor dimension (of width ratio) is folded in.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ExecutionError
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.evaluator.numerics import (
    bits_of,
    contiguous,
    from_bits,
    int_limits,
    int_to_float,
    int_work,
    narrow,
    ptype_of,
    unsupported,
    width_mask,
    wrap,
)
from xlapy.hlo.evaluator.rules import rule
from xlapy.hlo.opcode import Opcode

P = PrimitiveType


@rule(Opcode.CONVERT)
def convert(instruction, operands, evaluator):
    (x,) = operands
    with np.errstate(all="ignore"):
        return convert_array(x, instruction.shape.element_type)


def convert_array(x: np.ndarray, target: PrimitiveType) -> np.ndarray:
    """`x` converted element by element to `target` with XLA's semantics."""
    source = ptype_of(x)
    if source is target:
        return x.copy()
    if target.is_pred:
        return _widen_float(x) != 0 if source.is_float else x != 0
    if source.is_complex and not target.is_complex:
        x, source = np.array(x.real), source.component_type
    if target.is_complex:
        if source.is_complex:
            return x.astype(target.numpy)
        return (_widen_float(x) if source.is_float else int_work(x)).astype(target.numpy)
    if target.is_float:
        if source is P.F64:
            return narrow(x, target.numpy)
        if source.is_float:
            return _widen_float(x).astype(target.numpy)
        return int_to_float(int_work(x), target.numpy)
    if not target.is_integral:
        raise ExecutionError(f"cannot convert {source.value} to {target.value}")
    if source.is_float:
        return _float_to_int(x, target)
    return wrap(int_work(x), target)


def _widen_float(x: np.ndarray) -> np.ndarray:
    """A float array as float32 or float64, exactly."""
    if x.dtype in (np.float32, np.float64):
        return x
    return x.astype(np.float32)


def _float_to_int(x: np.ndarray, target: PrimitiveType) -> np.ndarray:
    value = _widen_float(x).astype(np.float64)  # exact for every float type
    lowest, highest = int_limits(target)
    nan = np.isnan(value)
    too_big = value >= float(highest)
    too_small = value <= float(lowest)
    in_range = np.where(nan | too_big | too_small, 0.0, np.trunc(value))
    work = np.int64 if target.is_signed_int else np.uint64
    result = in_range.astype(work)
    result = np.where(too_big, work(highest), np.where(too_small, work(lowest), result))
    return wrap(result, target)


# -- bitcast-convert ----------------------------------------------------------------
@rule(Opcode.BITCAST_CONVERT)
def bitcast_convert(instruction, operands, evaluator):
    (x,) = operands
    source, target = ptype_of(x), instruction.shape.element_type
    dims = instruction.shape.dimensions
    if not target.is_array_type:
        raise unsupported(instruction, target)
    if source.bit_width % 8 == 0 and target.bit_width % 8 == 0:
        raw = contiguous(x).reshape(-1).view(np.uint8)
        if raw.size != np.prod(dims, dtype=np.int64) * target.byte_size:
            raise ExecutionError(f"{instruction.name}: cannot bitcast {x.dtype}{list(x.shape)} "
                                 f"to {instruction.shape.to_text(False)}: sizes differ")
        if target.is_pred:
            return (raw != 0).reshape(dims)
        return raw.view(target.numpy).reshape(dims).copy()
    return _bitcast_sub_byte(instruction, x, source, target)


def _bitcast_sub_byte(instruction, x, source: PrimitiveType, target: PrimitiveType):
    """Bit-level bitcast where a type is narrower than a byte (s4, u2, f4e2m1fn...)."""
    src_width, dst_width = source.bit_width, target.bit_width
    if src_width > 64 or dst_width > 64:
        raise unsupported(instruction, source if src_width > 64 else target)
    bits = bits_of(x)
    if src_width > dst_width:
        shifts = np.arange(0, src_width, dst_width, dtype=np.uint64)
        bits = (bits[..., None] >> shifts) & width_mask(dst_width)
    elif src_width < dst_width:
        shifts = np.arange(0, dst_width, src_width, dtype=np.uint64)
        if x.ndim == 0 or x.shape[-1] != shifts.size:
            raise ExecutionError(f"{instruction.name}: bitcast to a wider type needs a minor "
                                 f"dimension of {shifts.size}, got shape {list(x.shape)}")
        bits = np.bitwise_or.reduce(bits << shifts, axis=-1)
    if bits.shape != instruction.shape.dimensions:
        raise ExecutionError(f"{instruction.name}: bitcast of {list(x.shape)} gives "
                             f"{list(bits.shape)}, not {instruction.shape.to_text(False)}")
    return from_bits(bits, target)


# -- reduce-precision ---------------------------------------------------------------
@rule(Opcode.REDUCE_PRECISION)
def reduce_precision(instruction, operands, evaluator):
    """Round to a float with `exponent_bits` and `mantissa_bits`, in the input type.

    XLA's bit-level algorithm on the float32 (float64 for f64) pattern: round
    the mantissa to nearest even, then send exponents above the reduced range
    to inf and at or below its least normal exponent to zero (denormals of the
    reduced type flush to zero); NaN stays NaN (inf when mantissa_bits is 0).
    """
    (x,) = operands
    ptype = ptype_of(x)
    exponent_bits = instruction.attr("exponent_bits")
    mantissa_bits = instruction.attr("mantissa_bits")
    if not ptype.is_float:
        raise unsupported(instruction, ptype)
    if not isinstance(exponent_bits, int) or not isinstance(mantissa_bits, int) \
            or exponent_bits < 1 or mantissa_bits < 0:
        raise ExecutionError(f"{instruction.name}: reduce-precision needs exponent_bits >= 1 "
                             f"and mantissa_bits >= 0, got {exponent_bits} and {mantissa_bits}")
    value = x if ptype is P.F64 else _widen_float(x)
    with np.errstate(all="ignore"):
        reduced = reduce_precision_array(value, exponent_bits, mantissa_bits)
        return reduced.astype(instruction.shape.dtype)


def reduce_precision_array(value: np.ndarray, exponent_bits: int, mantissa_bits: int):
    """XLA's reduce-precision on a float32 or float64 array."""
    is_double = value.dtype == np.float64
    uint = np.uint64 if is_double else np.uint32
    width, src_mantissa = (64, 52) if is_double else (32, 23)
    src_exponent = width - src_mantissa - 1
    bits = contiguous(value).view(uint).copy()
    if mantissa_bits < src_mantissa:
        dropped = src_mantissa - mantissa_bits
        last_kept = uint(1 << dropped)
        # Round to nearest even: add 0111... plus the last kept bit, then truncate.
        bias = ((bits & last_kept) >> uint(dropped)) + uint((1 << (dropped - 1)) - 1)
        bits = (bits + bias) & uint(~((1 << dropped) - 1) & ((1 << width) - 1))
    if exponent_bits < src_exponent:
        sign_mask = uint(1 << (width - 1))
        exponent_mask = uint(((1 << src_exponent) - 1) << src_mantissa)
        bias = (1 << (src_exponent - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        exponent = bits & exponent_mask
        overflows = exponent > uint((bias + reduced_bias) << src_mantissa)
        underflows = exponent <= uint((bias - reduced_bias) << src_mantissa)
        signed_zero = bits & sign_mask
        bits = np.where(overflows, signed_zero | exponent_mask, bits)
        bits = np.where(underflows, signed_zero, bits)
    result = bits.view(value.dtype)
    nan_value = value if mantissa_bits > 0 else np.full_like(value, np.inf)
    return np.where(np.isnan(value), nan_value, result)


# -- stochastic-convert -------------------------------------------------------------
@rule(Opcode.STOCHASTIC_CONVERT)
def stochastic_convert(instruction, operands, evaluator):
    """Float -> integer, rounding the magnitude up iff random < fraction * 2**width.

    As XLA's StochasticConvertDecomposer: the fraction of |x| is scaled to
    a fixed-point integer of the random operand's width and compared
    (unsigned) with the random bits; NaN -> 0 and values at or beyond the
    target's range saturate. Unsigned targets (which XLA does not lower)
    saturate negative results to 0.
    """
    x, random = operands
    source, random_type = ptype_of(x), ptype_of(random)
    target = instruction.shape.element_type
    if not source.is_float or not target.is_integral:
        raise unsupported(instruction, source if not source.is_float else target)
    if not random_type.is_unsigned_int or random_type.bit_width != source.bit_width:
        raise ExecutionError(f"{instruction.name}: random bits must be unsigned of "
                             f"{source.bit_width} bits, got {random_type.value}")
    value = _widen_float(x).astype(np.float64)
    lowest, highest = int_limits(target)
    with np.errstate(all="ignore"):
        magnitude = np.abs(value)
        whole = np.floor(magnitude)
        scaled = np.floor(np.ldexp(magnitude - whole, random_type.bit_width))
        fixed = np.where(np.isfinite(scaled), scaled, 0.0).astype(np.uint64)
        rounded = whole + (random.astype(np.uint64) < fixed)
        signed = np.where(value < 0, -rounded, rounded)
        nan = np.isnan(value)
        too_big = value >= float(highest)
        too_small = value <= float(lowest)
        in_range = np.where(nan | too_big | too_small, 0.0, signed)
        work = np.int64 if target.is_signed_int else np.uint64
        result = np.where(too_big, work(highest),
                          np.where(too_small, work(lowest), in_range.astype(work)))
    return wrap(result, target)
