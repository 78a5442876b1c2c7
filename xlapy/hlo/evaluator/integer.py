"""Integer kernels with XLA's edge semantics, vectorised over NumPy arrays.

Each takes arrays of one integer element type and returns an array of the
same type. Following XLA's evaluator, values are computed as int64/uint64 and
wrapped to the element width (two's complement) once at the end:

- divide: x / 0 = -1 (signed) or all ones (unsigned); INT_MIN / -1 = INT_MIN;
  the quotient truncates toward zero.
- remainder: x % 0 = x; INT_MIN % -1 = 0; the sign follows the dividend.
- shifts: the amount is read as unsigned of the element width; an amount of
  at least the width gives 0 (left, logical right) or the sign fill
  (arithmetic right). Arithmetic shifts act on the bit pattern as signed and
  logical shifts as unsigned, whatever the element type's signedness.
- power: x ** 0 = 1 and 1 ** y = 1; a negative exponent gives 0 for any other
  base (so (-1) ** -1 = 0, as XLA's evaluator and CPU emitter compute);
  otherwise square-and-multiply modulo 2**width.
- mulhi: the high half of the full double-width product.
"""

from __future__ import annotations

import numpy as np

from xlapy.hlo.evaluator.numerics import (
    bit_length,
    bits_of,
    int_limits,
    int_work,
    popcount,
    ptype_of,
    sign_extend,
    width_mask,
    wrap,
)

_U1 = np.uint64(1)


def divide(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    ptype = ptype_of(lhs)
    a, b = int_work(lhs), int_work(rhs)
    zero = b == 0
    if ptype.is_unsigned_int:
        quotient = a // np.where(zero, _U1, b)
        return wrap(np.where(zero, np.uint64(int_limits(ptype)[1]), quotient), ptype)
    overflow = (a == int_limits(ptype)[0]) & (b == -1)
    safe = np.where(zero | overflow, 1, b)
    # lhs - fmod(lhs, rhs) is an exact multiple of rhs, so floor division truncates.
    quotient = (a - np.fmod(a, safe)) // safe
    result = np.where(zero, -1, np.where(overflow, a, quotient))
    return wrap(result, ptype)


def remainder(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    ptype = ptype_of(lhs)
    a, b = int_work(lhs), int_work(rhs)
    zero = b == 0
    if ptype.is_unsigned_int:
        return wrap(np.where(zero, a, a % np.where(zero, _U1, b)), ptype)
    overflow = (a == int_limits(ptype)[0]) & (b == -1)
    safe = np.where(zero | overflow, 1, b)
    result = np.where(zero, a, np.where(overflow, 0, np.fmod(a, safe)))
    return wrap(result, ptype)


def _shift_amount(rhs: np.ndarray) -> np.ndarray:
    """The shift amount as an unsigned integer of the element width."""
    return bits_of(rhs)


def shift_left(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    ptype = ptype_of(lhs)
    width = ptype.bit_width
    amount = _shift_amount(rhs)
    out_of_range = amount >= np.uint64(width)
    shifted = bits_of(lhs) << np.minimum(amount, np.uint64(width - 1))
    return wrap(np.where(out_of_range, np.uint64(0), shifted), ptype)


def shift_right_logical(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    ptype = ptype_of(lhs)
    width = ptype.bit_width
    amount = _shift_amount(rhs)
    out_of_range = amount >= np.uint64(width)
    shifted = bits_of(lhs) >> np.minimum(amount, np.uint64(width - 1))
    return wrap(np.where(out_of_range, np.uint64(0), shifted), ptype)


def shift_right_arithmetic(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    ptype = ptype_of(lhs)
    width = ptype.bit_width
    amount = _shift_amount(rhs)
    value = sign_extend(bits_of(lhs), width)
    fill = np.where(value < 0, np.int64(-1), np.int64(0))
    shifted = value >> np.minimum(amount, np.uint64(width - 1)).astype(np.int64)
    return wrap(np.where(amount >= np.uint64(width), fill, shifted), ptype)


def power(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    ptype = ptype_of(lhs)
    base_value, exponent = int_work(lhs), int_work(rhs)
    negative = exponent < 0 if ptype.is_signed_int else np.zeros(exponent.shape, bool)
    # Work modulo 2**64 on the sign-extended pattern; wrapping keeps the low bits.
    base = base_value.view(np.uint64) if base_value.dtype == np.int64 else base_value
    remaining = np.where(negative, 0, exponent).astype(np.uint64)
    result = np.ones(np.broadcast(base, remaining).shape, np.uint64)
    base = np.broadcast_to(base, result.shape).copy()
    while remaining.any():
        odd = (remaining & _U1) == _U1
        result = np.where(odd, result * base, result)
        base = base * base
        remaining = remaining >> _U1
    one = base_value == 1
    result = np.where(negative, np.where(one, _U1, np.uint64(0)), result)
    return wrap(result, ptype)


def mulhi(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    ptype = ptype_of(lhs)
    width = ptype.bit_width
    if width < 64:
        # The double-width product fits in 64 bits.
        product = int_work(lhs) * int_work(rhs)
        return wrap(product >> product.dtype.type(width), ptype)
    a, b = bits_of(lhs), bits_of(rhs)
    high = _unsigned_mulhi64(a, b)
    if ptype.is_signed_int:
        # Signed high half = unsigned high half - (a < 0 ? b : 0) - (b < 0 ? a : 0).
        a_negative = (a >> np.uint64(63)) == _U1
        b_negative = (b >> np.uint64(63)) == _U1
        high = high - np.where(a_negative, b, np.uint64(0)) - np.where(b_negative, a, np.uint64(0))
    return wrap(high, ptype)


def _unsigned_mulhi64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """High 64 bits of the 128-bit product of uint64 arrays, from 32-bit halves."""
    low32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    a_lo, a_hi = a & low32, a >> s32
    b_lo, b_hi = b & low32, b >> s32
    lo_lo, hi_lo, lo_hi, hi_hi = a_lo * b_lo, a_hi * b_lo, a_lo * b_hi, a_hi * b_hi
    cross = (lo_lo >> s32) + (hi_lo & low32) + lo_hi  # < 2**64: cannot overflow
    return hi_hi + (hi_lo >> s32) + (cross >> s32)


def count_ones(x: np.ndarray) -> np.ndarray:
    """popcnt: set bits of each element's bit pattern."""
    return wrap(popcount(bits_of(x)), ptype_of(x))


def count_leading_zeros(x: np.ndarray) -> np.ndarray:
    """clz: leading zero bits within the element width (the width for 0)."""
    ptype = ptype_of(x)
    bits = bits_of(x) & width_mask(ptype.bit_width)
    return wrap(ptype.bit_width - bit_length(bits), ptype)
