"""convert, bitcast-convert, reduce-precision and stochastic-convert against
Python-int/float references and hand-computed bit patterns, for every pair
of types each takes."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.hlo.evaluator.elementwise_util import (
    ALL,
    COMPLEX,
    FLOATS,
    INTS,
    assert_same,
    cast,
    float_edges,
    int_edges,
    name,
    run,
)
from tests.hlo.evaluator.util import run_op
from xlapy.errors import ExecutionError
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.evaluator import numerics
from xlapy.hlo.shape import Shape

NAN, INF = math.nan, math.inf


def _wrap(value: int, dtype) -> int:
    bits = np.dtype(dtype).itemsize * 8
    value &= (1 << bits) - 1
    if np.dtype(dtype).kind == "i" and value >> (bits - 1):
        value -= 1 << bits
    return value


def _saturate(value: float, dtype) -> int:
    info = np.iinfo(dtype)
    if math.isnan(value):
        return 0
    if value >= info.max:
        return int(info.max)
    if value <= info.min:
        return int(info.min)
    return int(value)  # truncates toward zero


# -- convert ------------------------------------------------------------------------
@pytest.mark.parametrize("target", INTS, ids=name)
@pytest.mark.parametrize("source", FLOATS, ids=name)
def test_float_to_int_truncates_and_saturates(source, target):
    values = np.concatenate([float_edges(source), cast(
        [0.99, -0.99, 127.9, -128.9, 255.5, 65535.7, -32768.5, 2.0**31, -(2.0**31) - 4096,
         2.0**32, 2.0**63, -(2.0**63), 2.0**64, 1e30], source)])
    expected = np.array([_saturate(v, target) for v in values.astype(np.float64)], target)
    assert_same(run("convert", target, values), expected)


@pytest.mark.parametrize("target", INTS, ids=name)
@pytest.mark.parametrize("source", INTS + [np.bool_], ids=name)
def test_int_to_int_wraps(source, target):
    values = int_edges(source) if source is not np.bool_ else np.array([False, True])
    expected = np.array([_wrap(int(v), target) for v in values], target)
    assert_same(run("convert", target, values), expected)


def _round_to_bits(n: int, digits: int) -> int:
    """n rounded to `digits` significant bits, halfway cases to even."""
    magnitude = abs(n)
    shift = magnitude.bit_length() - digits
    if shift <= 0:
        return n
    quotient, remainder = divmod(magnitude, 1 << shift)
    half = 1 << (shift - 1)
    if remainder > half or (remainder == half and quotient & 1):
        quotient += 1
    return (quotient << shift) * (1 if n >= 0 else -1)


_DIGITS = {np.float64: 53, np.float32: 24, np.float16: 11, ml_dtypes.bfloat16: 8}


@pytest.mark.parametrize("target", FLOATS, ids=name)
@pytest.mark.parametrize("source", INTS, ids=name)
def test_int_to_float_rounds_to_nearest_even(source, target):
    info = np.iinfo(source)
    candidates = {int(info.min), int(info.max), 0, -1, 1, 255, 2**24 + 1, 2**24 + 2**16 + 1,
                  2**53 + 1, -(2**31) + 1}
    values = np.array(sorted(v for v in candidates if info.min <= v <= info.max), source)
    # One rounding, straight from the integer (not through float32 first).
    expected = cast([float(_round_to_bits(int(v), _DIGITS[target])) for v in values], target)
    assert_same(run("convert", target, values), expected)


def test_int_to_float_by_hand():
    assert run("convert", np.float32, np.int32(2**24 + 1)) == 2**24  # tie to even
    assert run("convert", np.float32, np.int32(2**24 + 3)) == 2**24 + 4
    assert run("convert", np.float32, np.uint64(2**64 - 1)) == np.float32(2**64)
    assert run("convert", np.float16, np.int32(70000)) == INF
    # Through float32 this would round twice: 2**24 + 2**16 + 1 -> 2**24 + 2**16 -> 2**24.
    bf16 = ml_dtypes.bfloat16
    assert run("convert", bf16, np.int32(2**24 + 2**16 + 1)) == bf16(2**24 + 2**17)
    assert run("convert", bf16, np.int64(-(2**63))) == bf16(-(2.0**63))
    assert np.isnan(run("convert", ml_dtypes.float8_e4m3fn, np.int32(1000)))  # no inf


@pytest.mark.parametrize("target", FLOATS, ids=name)
@pytest.mark.parametrize("source", FLOATS, ids=name)
def test_float_to_float(source, target):
    values = float_edges(source)
    # Each value of a narrower type is exact in every wider one; the others
    # round once to nearest even (float64 -> bf16 by round-to-odd via float32,
    # checked against a brute-force rounding in test_numerics.py).
    if source == np.float64 and target == ml_dtypes.bfloat16:
        expected = numerics.narrow(values, target)
    else:
        expected = cast(values.astype(np.float32 if source != np.float64 else np.float64), target)
    result = run("convert", target, values)
    assert_same(result, expected)
    widening = target in (source, np.float64) or target == np.float32 and source != np.float64
    if widening:  # every value is exact in the target
        assert_same(result.astype(np.float64), values.astype(np.float64))


def test_float_narrowing_by_hand():
    f32, bf16 = np.float32, ml_dtypes.bfloat16
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, 3.4e38, -1e-40, NAN, -0.0], f32)
    expected = np.array([1.0, 1 + 2**-6, INF, -0.0, NAN, -0.0]).astype(bf16)
    expected[3] = bf16(-1e-40)  # bf16 keeps float32's subnormal range
    assert_same(run("convert", bf16, x), expected)
    assert run("convert", np.float16, f32(65520)) == INF
    assert run("convert", np.float16, f32(2**-25)) == 0  # halfway to the least subnormal
    assert run("convert", np.float16, f32(2**-25 * 1.5)) == np.float16(2**-24)
    assert np.isnan(run("convert", ml_dtypes.float8_e4m3fn, f32(1000)))  # no inf: NaN
    assert run("convert", ml_dtypes.float8_e5m2, f32(1e6)) == INF
    assert run("convert", np.float32, np.float64(1 + 2**-24)) == 1.0
    assert run("convert", np.float32, np.float64(1 + 3 * 2**-24)) == np.float32(1 + 2**-22)
    # float64 -> bf16 rounds once: just above halfway goes up (float32 first would tie down).
    assert run("convert", bf16, np.float64(1 + 2**-8 + 2**-30)) == bf16(1 + 2**-7)
    assert run("convert", np.float16, np.float64(1 + 2**-11 + 2**-40)) == np.float16(1 + 2**-10)


@pytest.mark.parametrize("source", ALL, ids=name)
def test_convert_to_pred_is_nonzero(source):
    kind = np.dtype(source).kind
    if kind in "iu":
        values = int_edges(source)
    elif kind == "b":
        values = np.array([True, False])
    elif kind == "c":
        values = np.array([0, 1j, -0.0, complex(NAN, 0), 2], source)
    else:
        values = float_edges(source)
    expected = np.array([v != 0 for v in values.astype(complex if kind == "c" else object)])
    assert_same(run("convert", np.bool_, values), expected.astype(bool))


@pytest.mark.parametrize("target", ALL, ids=name)
def test_convert_from_pred(target):
    result = run("convert", target, np.array([False, True]))
    assert_same(result, np.array([0, 1]).astype(target))


@pytest.mark.parametrize("target", COMPLEX + FLOATS + [np.int32], ids=name)
@pytest.mark.parametrize("source", COMPLEX, ids=name)
def test_complex_conversions(source, target):
    z = np.array([1.5 - 2j, complex(INF, NAN), -0.0 + 3j], source)
    if np.dtype(target).kind == "c":
        expected = z.astype(target)
    else:  # the real part (XLA's shape inference rejects complex -> real)
        expected = run("convert", target, z.real.copy())
    assert_same(run("convert", target, z), expected)


@pytest.mark.parametrize("target", COMPLEX, ids=name)
@pytest.mark.parametrize("source", INTS + FLOATS, ids=name)
def test_real_to_complex(source, target):
    values = int_edges(source) if np.dtype(source).kind in "iu" else float_edges(source)
    real = run("convert", np.float64 if target == np.complex128 else np.float32, values)
    result = run("convert", target, values)
    assert_same(result.real, real)
    assert not result.imag.any()


# -- bitcast-convert ----------------------------------------------------------------
def bitcast(target, x):
    source_bits = np.dtype(x.dtype).itemsize * 8
    target_bits = np.dtype(target).itemsize * 8
    dims = x.shape
    if source_bits > target_bits:
        dims = dims + (source_bits // target_bits,)
    elif source_bits < target_bits:
        dims = dims[:-1]
    return run_op("bitcast-convert", Shape.array(PrimitiveType.from_numpy(target), dims), x)


def test_bitcast_equal_widths_by_hand():
    assert bitcast(np.uint32, np.array(1.0, np.float32)) == 0x3F800000
    assert bitcast(np.float32, np.array(-0x3F800000, np.int32)) == -4.0  # 0xC0800000
    assert bitcast(np.uint16, np.array(1.0, ml_dtypes.bfloat16)) == 0x3F80
    assert bitcast(np.int16, np.array(-2.0, np.float16)) == -0x4000  # 0xC000
    assert bitcast(np.int64, np.array(-0.0)) == -(2**63)
    assert bitcast(np.uint64, np.array(1 + 2j, np.complex64)) == (0x40000000 << 32) | 0x3F800000
    assert bitcast(np.uint8, np.array([True, False])).tolist() == [1, 0]
    assert bitcast(np.bool_, np.array([0, 1, 2], np.uint8)).tolist() == [False, True, True]
    assert bitcast(np.int8, np.array([200], np.uint8)).tolist() == [-56]


def test_bitcast_changing_width_is_little_endian():
    assert bitcast(np.uint8, np.array([0x04030201], np.uint32)).tolist() == [[1, 2, 3, 4]]
    assert bitcast(np.uint32, np.array([[1, 2, 3, 4]], np.uint8)).tolist() == [0x04030201]
    halves = bitcast(np.float32, np.array(1 + 2j, np.complex64))
    assert halves.tolist() == [1.0, 2.0]
    assert bitcast(np.complex64, np.array([1.0, 2.0], np.float32)) == 1 + 2j
    parts = bitcast(np.uint32, np.array([1.0]))
    assert parts.tolist() == [[0, 0x3FF00000]]
    assert bitcast(np.int32, np.array([-1, 0], np.int16)) == 0x0000FFFF


def test_bitcast_sub_byte():
    result = run_op("bitcast-convert", Shape.array("u4", [2]), np.array(0x21, np.uint8))
    assert result.astype(np.int64).tolist() == [1, 2]
    joined = run_op("bitcast-convert", Shape.array("s8", []),
                    np.array([0xF, 0x7], ml_dtypes.uint4))
    assert int(joined) == 0x7F
    signed = run_op("bitcast-convert", Shape.array("s4", [3]), np.array([15, 8, 7], ml_dtypes.uint4))
    assert signed.astype(np.int64).tolist() == [-1, -8, 7]


BITCAST_TYPES = [np.uint8, np.int8, np.bool_, np.int16, np.uint16, np.float16,
                 ml_dtypes.bfloat16, np.int32, np.uint32, np.float32, np.int64, np.uint64,
                 np.float64, np.complex64, np.complex128]


@settings(max_examples=40, deadline=None)
@given(source=st.sampled_from(BITCAST_TYPES[3:]), target=st.sampled_from(BITCAST_TYPES[3:]),
       data=st.data())
def test_bitcast_round_trips_bits(source, target, data):
    """Bits survive a bitcast there and back; they match NumPy's little-endian view."""
    ratio = max(1, np.dtype(target).itemsize // np.dtype(source).itemsize)
    raw = data.draw(hnp.arrays(np.uint8, 2 * ratio * np.dtype(source).itemsize))
    x = raw.view(source).reshape(2, ratio) if ratio > 1 else raw.view(source)
    there = bitcast(target, x)
    assert np.array_equal(there.reshape(-1).view(np.uint8), raw)
    back = bitcast(source, there)
    assert np.array_equal(back.reshape(-1).view(np.uint8), raw)


def test_bitcast_size_mismatch_is_an_error():
    with pytest.raises(ExecutionError, match="bitcast"):
        run_op("bitcast-convert", Shape.array("u32", [3]), np.zeros(2, np.uint32))


# -- reduce-precision ---------------------------------------------------------------
def reduce(x, exponent_bits, mantissa_bits):
    return run("reduce-precision", x.dtype, x, exponent_bits=exponent_bits,
               mantissa_bits=mantissa_bits)


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.uint32, 16))
def test_reduce_precision_to_bf16_matches_rounding(bits):
    x = bits.view(np.float32)
    expected = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    assert_same(reduce(x, 8, 7), expected)


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.uint32, 16))
def test_reduce_precision_to_f16_flushes_subnormals(bits):
    x = bits.view(np.float32)
    with np.errstate(over="ignore"):
        expected = x.astype(np.float16).astype(np.float32)
    subnormal = np.abs(expected) < 2.0**-14
    expected = np.where(subnormal, np.copysign(np.float32(0), x), expected)
    assert_same(reduce(x, 5, 10), expected)


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.uint64, 16))
def test_reduce_precision_f64_to_f32_range(bits):
    x = bits.view(np.float64)
    with np.errstate(over="ignore"):
        expected = x.astype(np.float32).astype(np.float64)
    subnormal = np.abs(expected) < 2.0**-126
    expected = np.where(subnormal, np.copysign(0.0, x), expected)
    assert_same(reduce(x, 8, 23), expected)


def test_reduce_precision_by_hand():
    f32 = np.float32
    x = np.array([NAN, -INF, 1 + 2**-11, 1 + 3 * 2**-11, 65519, 65520, 2**-15, -(2**-20)], f32)
    expected = np.array([NAN, -INF, 1.0, 1 + 2**-9, 65504, INF, 0.0, -0.0], f32)
    assert_same(reduce(x, 5, 10), expected)
    assert reduce(np.array([NAN], f32), 5, 0)[0] == INF  # no mantissa: NaN becomes inf
    # With no mantissa bits the last kept bit is the exponent's lowest: ties go to
    # the even exponent. 3 = 1.5 * 2**1 -> 2**1; 6 = 1.5 * 2**2 -> 2**3; 5 -> 4.
    assert reduce(np.array([3.0, 6.0, 5.0], f32), 8, 0).tolist() == [2.0, 8.0, 4.0]
    x = np.array([1 + 2**-9, 300], ml_dtypes.bfloat16)  # narrow types via float32
    assert_same(reduce(x, 5, 3), np.array([1.0, 288], ml_dtypes.bfloat16))
    half = np.array([2**-24, -(2**-14), 1 + 2**-10, 65504], np.float16)
    assert_same(reduce(half, 5, 10), np.array([0.0, -(2**-14), 1 + 2**-10, 65504], np.float16))


def test_reduce_precision_rejects_bad_attributes():
    with pytest.raises(ExecutionError, match="exponent_bits"):
        reduce(np.ones(2, np.float32), 0, 3)
    with pytest.raises(ExecutionError, match="reduce-precision"):
        run("reduce-precision", np.int32, np.ones(2, np.int32), exponent_bits=5,
            mantissa_bits=2)


# -- stochastic-convert -------------------------------------------------------------
def stochastic(target, x, random):
    return run("stochastic-convert", target, x, random)


def test_stochastic_convert_threshold():
    x = np.array([2.25, 2.25, -2.25, -2.25, 3.0, 3.0], np.float32)
    threshold = 2**30  # 0.25 * 2**32
    random = np.array([threshold - 1, threshold, threshold - 1, threshold, 0, 2**32 - 1],
                      np.uint32)
    assert stochastic(np.int32, x, random).tolist() == [3, 2, -3, -2, 3, 3]


@pytest.mark.parametrize("target", [np.int8, np.int16, np.int32, np.int64], ids=name)
@pytest.mark.parametrize("source", FLOATS, ids=name)
def test_stochastic_convert_saturates(source, target):
    info = np.iinfo(target)
    x = np.array([NAN, INF, -INF, 1e30 if source != np.float16 else 65504,
                  -1e30 if source != np.float16 else -65504, 0.5, -0.5]).astype(source)
    random = np.zeros(x.shape, {2: np.uint16, 4: np.uint32, 8: np.uint64}[x.itemsize])
    result = stochastic(target, x, random)
    big = info.max if source != np.float16 or target in (np.int8, np.int16) else 65504
    small = info.min if source != np.float16 or target in (np.int8, np.int16) else -65504
    assert result.tolist() == [0, info.max, info.min, big, small, 1, -1]
    assert stochastic(target, x, random + np.iinfo(random.dtype).max).tolist()[-2:] == [0, 0]


def test_stochastic_convert_wide_and_narrow_fractions():
    x = np.array([0.75, -0.75])
    cut = 3 * 2**62  # 0.75 * 2**64
    below = stochastic(np.int64, x, np.array([cut - 1, cut - 1], np.uint64))
    at = stochastic(np.int64, x, np.array([cut, cut], np.uint64))
    assert below.tolist() == [1, -1] and at.tolist() == [0, 0]
    half = np.array([0.5], np.float16)
    assert stochastic(np.int8, half, np.array([32767], np.uint16)).tolist() == [1]
    assert stochastic(np.int8, half, np.array([32768], np.uint16)).tolist() == [0]
    edge = np.array([127.5, -128.5, -127.5], ml_dtypes.bfloat16)
    assert stochastic(np.int8, edge, np.zeros(3, np.uint16)).tolist() == [127, -128, -128]


def test_stochastic_convert_is_unbiased_on_average():
    rng = np.random.default_rng(0)
    x = np.full(20000, 1.3, np.float32)
    random = rng.integers(0, 2**32, x.shape, dtype=np.uint32)
    assert abs(stochastic(np.int32, x, random).mean() - 1.3) < 0.02


def test_stochastic_convert_checks_the_random_type():
    with pytest.raises(ExecutionError, match="random bits"):
        stochastic(np.int32, np.ones(2, np.float32), np.ones(2, np.int32))
    with pytest.raises(ExecutionError, match="random bits"):
        stochastic(np.int32, np.ones(2, np.float32), np.ones(2, np.uint16))
