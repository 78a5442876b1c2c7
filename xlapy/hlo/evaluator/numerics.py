"""Numeric helpers for the elementwise interpreter rules.

Which NumPy dtype a value is computed in, the bit pattern of any element
type, two's-complement wrapping, rounding once into narrow floats, bit
counting and erf. The rules compute integers in int64/uint64 ("work" values,
as XLA's evaluator does for narrow integers) and wrap the result to the
element width once; exact float operations on narrow floats run in float32
(as XLA does) and transcendental ones in float64, each rounded once to the
result type.
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.errors import ExecutionError
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloInstruction

P = PrimitiveType

_UINT_OF_WIDTH = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def ptype_of(array: np.ndarray) -> PrimitiveType:
    """The HLO element type of a NumPy array."""
    return PrimitiveType.from_numpy(array.dtype)


def unsupported(instruction: HloInstruction, ptype: PrimitiveType) -> ExecutionError:
    """The error for an opcode applied to an element type it does not take."""
    return ExecutionError(f"{instruction.name}: {instruction.opcode.value} does not take "
                          f"element type {ptype.value}")


# -- dtypes values are computed in ---------------------------------------------------
def arith_dtype(ptype: PrimitiveType) -> np.dtype:
    """Where exact-ish arithmetic (add, compare, floor...) happens for `ptype`.

    Narrow floats widen to float32 (XLA's evaluator and CPU backend do the
    same), integers to int64/uint64, the rest stays as is.
    """
    if ptype is P.F64:
        return np.dtype(np.float64)
    if ptype.is_float:
        return np.dtype(np.float32)
    if ptype.is_signed_int:
        return np.dtype(np.int64)
    if ptype.is_unsigned_int:
        return np.dtype(np.uint64)
    return ptype.numpy


def precise_dtype(ptype: PrimitiveType) -> np.dtype:
    """Where transcendental functions are evaluated: float64 / complex128, so
    that rounding once to the result type gives the correctly rounded value
    in all but vanishingly rare cases."""
    if ptype.is_complex:
        return np.dtype(np.complex128)
    return np.dtype(np.float64)


def widen(x: np.ndarray, dtype) -> np.ndarray:
    """`x` as `dtype` (float32/float64/complex); narrow floats go through float32."""
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    ptype = ptype_of(x)
    if ptype.is_float and ptype not in (P.F32, P.F64):
        x = x.astype(np.float32)
    return x.astype(dtype)


def narrow(x: np.ndarray, dtype) -> np.ndarray:
    """Round float64/complex128 values once, to nearest even, into `dtype`.

    NumPy rounds float64 to float32/float16 directly, but ml_dtypes goes
    through float32 for bf16 and the f8 types, which can round twice. Rounding
    to float32 *to odd* first makes the second rounding exact (Boldo and
    Melquiond, "When double rounding is odd"): float32 has more than two extra
    bits over every such type, and covers their exponent ranges.
    """
    x = np.asarray(x)
    dtype = np.dtype(dtype)
    if x.dtype != np.float64 or dtype in (np.float64, np.float32, np.float16):
        return x.astype(dtype, copy=False)   # a result already of its type is not copied
    with np.errstate(all="ignore"):
        nearest = x.astype(np.float32)
        inexact = np.isfinite(x) & (nearest.astype(np.float64) != x)
        even = (nearest.view(np.uint32) & np.uint32(1)) == 0
        toward_x = np.where(nearest.astype(np.float64) > x, -np.inf, np.inf).astype(np.float32)
        odd = np.where(inexact & even, np.nextafter(nearest, toward_x), nearest)
        return odd.astype(dtype)


def int_to_float(work: np.ndarray, dtype) -> np.ndarray:
    """int64/uint64 values rounded once, to nearest even, into float `dtype`.

    float32/float64 are C casts. Narrower types first round to 24 significant
    bits *to odd* (dropped bits are folded into the lowest kept bit), which is
    exact in float32, so that the final rounding is the only one.
    """
    dtype = np.dtype(dtype)
    if dtype in (np.float64, np.float32):
        return work.astype(dtype)
    negative = work < 0
    magnitude = np.where(negative, -work, work).astype(np.uint64)  # -INT64_MIN wraps right
    shift = np.maximum(bit_length(magnitude) - 24, 0).astype(np.uint64)
    kept = magnitude >> shift
    sticky = (magnitude & ((np.uint64(1) << shift) - np.uint64(1))) != 0
    odd = (kept | sticky.astype(np.uint64)) << shift  # 24 significant bits: exact in float32
    value = odd.astype(np.float32)
    return np.where(negative, -value, value).astype(dtype)


# -- integer work values and bit patterns ---------------------------------------------
def int_work(x: np.ndarray) -> np.ndarray:
    """Integer (or pred) values as int64 (signed) or uint64 (unsigned, pred)."""
    ptype = ptype_of(x)
    if ptype.is_signed_int:
        return x.astype(np.int64)
    return x.astype(np.uint64)


def int_limits(ptype: PrimitiveType) -> tuple[int, int]:
    """(lowest, highest) value of an integer type."""
    width = ptype.bit_width
    if ptype.is_signed_int:
        return -(1 << (width - 1)), (1 << (width - 1)) - 1
    return 0, (1 << width) - 1


def width_mask(width: int) -> np.uint64:
    return np.uint64((1 << width) - 1)


def contiguous(x) -> np.ndarray:
    """`x` as a C-contiguous array of the same shape (0-d stays 0-d), for views."""
    x = np.asarray(x)
    return x if x.flags.c_contiguous else np.array(x, order="C")


def bits_of(x: np.ndarray) -> np.ndarray:
    """The low `bit_width` bits of every element, as uint64 (types up to 64 bits)."""
    ptype = ptype_of(x)
    width = ptype.bit_width
    if ptype.is_pred:
        return x.astype(np.uint64)
    if width > 64:
        raise ExecutionError(f"no 64-bit pattern for {ptype.value}")
    if width in _UINT_OF_WIDTH and x.dtype.itemsize * 8 == width:
        return contiguous(x).view(_UINT_OF_WIDTH[width]).astype(np.uint64)
    # Sub-byte types: ml_dtypes keeps the value in the low bits of one byte.
    return contiguous(x).view(np.uint8).astype(np.uint64) & width_mask(width)


def sign_extend(bits: np.ndarray, width: int) -> np.ndarray:
    """A `width`-bit two's-complement pattern (uint64) as its int64 value."""
    if width == 64:
        return bits.astype(np.uint64).view(np.int64)
    bits = bits.astype(np.uint64) & width_mask(width)
    sign = (bits >> np.uint64(width - 1)) & np.uint64(1)
    return bits.astype(np.int64) - (sign.astype(np.int64) << np.int64(width))


def from_bits(bits: np.ndarray, ptype: PrimitiveType) -> np.ndarray:
    """Elements of `ptype` whose bit patterns are the low bits of `bits` (uint64)."""
    bits = np.asarray(bits).astype(np.uint64) & width_mask(min(ptype.bit_width, 64))
    if ptype.is_pred:
        return bits != 0
    width = ptype.bit_width
    if width in _UINT_OF_WIDTH and ptype.numpy.itemsize * 8 == width:
        return bits.astype(_UINT_OF_WIDTH[width]).view(ptype.numpy)
    if ptype.is_signed_int:
        return sign_extend(bits, width).astype(ptype.numpy)
    if ptype.is_unsigned_int:
        return bits.astype(np.uint8).astype(ptype.numpy)
    return bits.astype(np.uint8).view(ptype.numpy)  # sub-byte floats


def wrap(values: np.ndarray, ptype: PrimitiveType) -> np.ndarray:
    """int64/uint64 work values reduced modulo 2**width into integer type `ptype`."""
    values = np.asarray(values)
    if values.dtype == np.int64:
        values = values.view(np.uint64)
    return from_bits(values, ptype)


def popcount(bits: np.ndarray) -> np.ndarray:
    """Number of set bits of each uint64."""
    x = bits.astype(np.uint64)
    with np.errstate(over="ignore"):  # the final multiply wraps on purpose
        return _popcount_swar(x)


def _popcount_swar(x: np.ndarray) -> np.ndarray:
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


def bit_length(bits: np.ndarray) -> np.ndarray:
    """Position of the highest set bit plus one (0 for 0) of each uint64, as int64."""
    x = bits.astype(np.uint64)
    length = np.zeros(x.shape, np.int64)
    for step in (32, 16, 8, 4, 2, 1):
        high = x >= np.uint64(1 << step)
        length += np.where(high, step, 0)
        x = np.where(high, x >> np.uint64(step), x)
    return length + (x > 0)


# -- floating point -----------------------------------------------------------------
_ERF = np.frompyfunc(math.erf, 1, 1)


def erf(x: np.ndarray) -> np.ndarray:
    """C's erf on every float64 element (math.erf: accurate to about 1 ulp)."""
    return np.asarray(_ERF(np.asarray(x, np.float64)), dtype=np.float64)


def total_order_key(x: np.ndarray) -> np.ndarray:
    """int64 keys ordering floats as -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.

    XLA compares the sign-magnitude bit patterns: a negative value with
    magnitude bits m maps to -1 - m, a positive one to m.
    """
    width = ptype_of(x).bit_width
    bits = bits_of(x)
    magnitude = (bits & width_mask(width - 1)).astype(np.int64)
    negative = (bits >> np.uint64(width - 1)) != 0
    return np.where(negative, -1 - magnitude, magnitude)
