"""Tests of the numeric helpers behind the elementwise rules: bit patterns,
wrapping, bit counting, erf and the total-order key."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hlo.evaluator.elementwise_util import FLOATS, INTS, float_edges, int_edges, name
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.evaluator import numerics


@pytest.mark.parametrize("dtype", INTS + FLOATS, ids=name)
def test_bits_round_trip(dtype):
    values = int_edges(dtype) if np.dtype(dtype).kind in "iu" else float_edges(dtype)
    bits = numerics.bits_of(values)
    assert bits.dtype == np.uint64
    expected = values.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[
        np.dtype(dtype).itemsize])
    assert np.array_equal(bits, expected.astype(np.uint64))
    back = numerics.from_bits(bits, PrimitiveType.from_numpy(dtype))
    assert back.dtype == np.dtype(dtype)
    assert np.array_equal(back.view(expected.dtype), expected)


def test_bits_of_sub_byte_and_pred():
    s4 = np.array([-8, -1, 0, 7], ml_dtypes.int4)
    assert numerics.bits_of(s4).tolist() == [8, 15, 0, 7]
    back = numerics.from_bits(np.array([8, 15, 0, 7], np.uint64), PrimitiveType.S4)
    assert back.astype(np.int64).tolist() == [-8, -1, 0, 7]
    assert numerics.bits_of(np.array([True, False])).tolist() == [1, 0]
    assert numerics.from_bits(np.array([2, 0], np.uint64), PrimitiveType.PRED).tolist() == [
        True, False]


def test_wrap_reduces_modulo_width():
    values = np.array([128, -129, 255, 256, -1], np.int64)
    assert numerics.wrap(values, PrimitiveType.S8).tolist() == [-128, 127, -1, 0, -1]
    assert numerics.wrap(values, PrimitiveType.U8).tolist() == [128, 127, 255, 0, 255]
    big = np.array([2**64 - 1], np.uint64)
    assert numerics.wrap(big, PrimitiveType.S64).tolist() == [-1]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=20))
def test_popcount_and_bit_length_match_python(values):
    bits = np.array(values, np.uint64)
    assert numerics.popcount(bits).tolist() == [bin(v).count("1") for v in values]
    assert numerics.bit_length(bits).tolist() == [v.bit_length() for v in values]


def test_sign_extend():
    bits = np.array([0x7F, 0x80, 0xFF, 0], np.uint64)
    assert numerics.sign_extend(bits, 8).tolist() == [127, -128, -1, 0]
    assert numerics.sign_extend(np.array([2**63], np.uint64), 64).tolist() == [-(2**63)]


def test_erf_matches_math_erf():
    x = np.array([-math.inf, -6.0, -1.0, -1e-300, -0.0, 0.0, 1e-8, 0.5, 1.0, 3.0, 30.0,
                  math.inf, math.nan])
    result = numerics.erf(x)
    expected = np.array([math.erf(v) for v in x])
    assert result.dtype == np.float64
    assert np.array_equal(result, expected, equal_nan=True)
    assert np.signbit(result[4]) and not np.signbit(result[5])


@pytest.mark.parametrize("dtype", FLOATS, ids=name)
def test_total_order_key_orders_like_xla(dtype):
    ordered = np.array([-math.inf, -2.0, -1.0, -0.0, 0.0, 1.0, 2.0, math.inf]).astype(dtype)
    keys = numerics.total_order_key(ordered)
    assert np.all(np.diff(keys) > 0)
    nan = np.array([math.nan]).astype(dtype)
    negative_nan = -nan
    assert numerics.total_order_key(nan)[0] > keys[-1]
    assert numerics.total_order_key(negative_nan)[0] < keys[0]


def _nearest_even_reference(x: np.ndarray, dtype) -> np.ndarray:
    """Round each float64 to the nearest finite value of `dtype` (ties to the even
    bit pattern) by searching the sorted list of all its values."""
    itemsize = np.dtype(dtype).itemsize
    patterns = np.arange(2 ** (8 * itemsize), dtype=np.uint64).astype(
        {1: np.uint8, 2: np.uint16}[itemsize])
    with np.errstate(invalid="ignore"):
        values = patterns.view(dtype).astype(np.float64)
    keep = np.isfinite(values)
    values, patterns = values[keep], patterns[keep]
    order = np.argsort(values, kind="stable")
    values, patterns = values[order], patterns[order]
    out = []
    for v in x:
        i = np.searchsorted(values, v)
        lo, hi = max(i - 1, 0), min(i, len(values) - 1)
        d_lo, d_hi = abs(v - values[lo]), abs(values[hi] - v)
        pick = lo if d_lo < d_hi or (d_lo == d_hi and patterns[lo] % 2 == 0) else hi
        out.append(patterns[pick])
    return np.array(out, patterns.dtype).view(dtype)


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
                                   ml_dtypes.float8_e5m2], ids=lambda d: np.dtype(d).name)
def test_narrow_rounds_float64_once(dtype):
    rng = np.random.default_rng(5)
    finite_max = float(ml_dtypes.finfo(dtype).max)
    base = _nearest_even_reference(rng.uniform(-finite_max, finite_max, 300), dtype)
    base = base.astype(np.float64)
    # Points just off halfway between neighbours: where rounding twice goes wrong.
    spacing = np.abs(base) * 2.0 ** -(ml_dtypes.finfo(dtype).nmant + 1)
    x = np.concatenate([base + spacing * (1 + 2**-30), base - spacing * (1 + 2**-30),
                        base + spacing, rng.normal(size=100)])
    x = x[np.abs(x) <= finite_max]
    expected = _nearest_even_reference(x, dtype)
    result = numerics.narrow(x, dtype)
    assert result.dtype == np.dtype(dtype)
    assert np.array_equal(result.view(np.uint8), expected.view(np.uint8))
