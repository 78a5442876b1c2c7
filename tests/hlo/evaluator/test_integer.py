"""Integer binary ops and bit counts against a Python-int reference with XLA's
semantics (C truncation, two's-complement wrap, divide/remainder by zero,
INT_MIN / -1, out-of-range shifts, negative powers, mulhi), for every integer
type, on all pairs of edge values and on random values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.hlo.evaluator.elementwise_util import (
    INTS,
    SIGNED,
    UNSIGNED,
    assert_same,
    int_edges,
    name,
    pairs,
    run,
)


def _bits(dtype) -> int:
    return np.dtype(dtype).itemsize * 8


def _signed(dtype) -> bool:
    return np.dtype(dtype).kind == "i"


def wrap(value: int, dtype) -> int:
    bits = _bits(dtype)
    value &= (1 << bits) - 1
    if _signed(dtype) and value >> (bits - 1):
        value -= 1 << bits
    return value


def c_div(a: int, b: int) -> int:
    quotient = abs(a) // abs(b)
    return quotient if (a < 0) == (b < 0) else -quotient


def ref_divide(a, b, dtype):
    if b == 0:
        return -1 if _signed(dtype) else np.iinfo(dtype).max
    return wrap(c_div(a, b), dtype)  # INT_MIN / -1 wraps back to INT_MIN


def ref_remainder(a, b, dtype):
    if b == 0:
        return a
    return wrap(a - c_div(a, b) * b, dtype)  # INT_MIN % -1 = 0


def ref_shift_left(a, s, dtype):
    amount = s & ((1 << _bits(dtype)) - 1)
    return 0 if amount >= _bits(dtype) else wrap(a << amount, dtype)


def ref_shift_right_logical(a, s, dtype):
    bits = _bits(dtype)
    amount = s & ((1 << bits) - 1)
    return 0 if amount >= bits else wrap((a & ((1 << bits) - 1)) >> amount, dtype)


def ref_shift_right_arithmetic(a, s, dtype):
    bits = _bits(dtype)
    amount = s & ((1 << bits) - 1)
    value = a & ((1 << bits) - 1)
    if value >> (bits - 1):
        value -= 1 << bits
    if amount >= bits:
        return wrap(-1 if value < 0 else 0, dtype)
    return wrap(value >> amount, dtype)


def ref_power(a, e, dtype):
    if a == 1 or e == 0:
        return 1
    if e < 0:
        return 0
    return wrap(pow(a, e, 1 << _bits(dtype)), dtype)


def ref_mulhi(a, b, dtype):
    return wrap((a * b) >> _bits(dtype), dtype)


REFERENCES = {
    "add": lambda a, b, t: wrap(a + b, t),
    "subtract": lambda a, b, t: wrap(a - b, t),
    "multiply": lambda a, b, t: wrap(a * b, t),
    "maximum": lambda a, b, t: max(a, b),
    "minimum": lambda a, b, t: min(a, b),
    "and": lambda a, b, t: wrap(a & b, t),
    "or": lambda a, b, t: wrap(a | b, t),
    "xor": lambda a, b, t: wrap(a ^ b, t),
    "divide": ref_divide,
    "remainder": ref_remainder,
    "shift-left": ref_shift_left,
    "shift-right-logical": ref_shift_right_logical,
    "shift-right-arithmetic": ref_shift_right_arithmetic,
    "power": ref_power,
    "mulhi": ref_mulhi,
}


def expected_binary(opcode, a, b, dtype):
    reference = REFERENCES[opcode]
    return np.array([reference(int(x), int(y), dtype) for x, y in zip(a, b)], dtype=dtype)


@pytest.mark.parametrize("opcode", sorted(REFERENCES))
@pytest.mark.parametrize("dtype", INTS, ids=name)
def test_binary_on_edge_pairs(opcode, dtype):
    a, b = pairs(int_edges(dtype))
    assert_same(run(opcode, dtype, a, b), expected_binary(opcode, a, b, dtype), opcode)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
@pytest.mark.parametrize("dtype", INTS, ids=name)
def test_binary_on_random_values(dtype, data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=2, max_side=4))
    a = data.draw(hnp.arrays(dtype, shape))
    b = data.draw(hnp.arrays(dtype, shape))
    for opcode in REFERENCES:
        expected = expected_binary(opcode, a.reshape(-1), b.reshape(-1), dtype).reshape(shape)
        assert_same(run(opcode, dtype, a, b), expected, opcode)


def test_hand_computed_edges():
    s32 = np.int32
    int_min = np.iinfo(s32).min
    assert run("divide", s32, s32(7), s32(-2)) == -3  # truncation, not floor
    assert run("remainder", s32, s32(-7), s32(2)) == -1  # sign of the dividend
    assert run("divide", s32, s32(5), s32(0)) == -1
    assert run("divide", np.uint32, np.uint32(5), np.uint32(0)) == 2**32 - 1
    assert run("divide", s32, s32(int_min), s32(-1)) == int_min
    assert run("remainder", s32, s32(int_min), s32(-1)) == 0
    assert run("remainder", s32, s32(9), s32(0)) == 9
    assert run("shift-left", s32, s32(1), s32(32)) == 0
    assert run("shift-left", s32, s32(1), s32(-1)) == 0  # -1 is 2**32 - 1 unsigned
    assert run("shift-right-arithmetic", s32, s32(-8), s32(40)) == -1
    assert run("shift-right-arithmetic", s32, s32(8), s32(40)) == 0
    assert run("shift-right-logical", s32, s32(-8), s32(1)) == 2**31 - 4
    assert run("shift-right-arithmetic", np.uint8, np.uint8(0x80), np.uint8(1)) == 0xC0
    assert run("power", s32, s32(-1), s32(-1)) == 0
    assert run("power", s32, s32(1), s32(-5)) == 1
    assert run("power", s32, s32(0), s32(0)) == 1
    assert run("power", s32, s32(3), s32(4)) == 81
    assert run("power", np.int8, np.int8(2), np.int8(7)) == -128
    assert run("mulhi", s32, s32(-1), s32(1)) == -1
    assert run("mulhi", np.uint64, np.uint64(2**64 - 1), np.uint64(2**64 - 1)) == 2**64 - 2
    assert run("mulhi", np.int64, np.int64(-(2**63)), np.int64(-(2**63))) == 2**62
    assert run("add", np.int8, np.int8(127), np.int8(1)) == -128
    assert run("multiply", np.uint8, np.uint8(16), np.uint8(16)) == 0


def ref_popcnt(a, dtype):
    return bin(int(a) & ((1 << _bits(dtype)) - 1)).count("1")


def ref_clz(a, dtype):
    return _bits(dtype) - (int(a) & ((1 << _bits(dtype)) - 1)).bit_length()


UNARY_REFERENCES = {
    "popcnt": ref_popcnt,
    "count-leading-zeros": ref_clz,
    "not": lambda a, t: wrap(~int(a), t),
    "negate": lambda a, t: wrap(-int(a), t),
    "abs": lambda a, t: wrap(abs(int(a)), t),
    "sign": lambda a, t: (int(a) > 0) - (int(a) < 0),
}


@pytest.mark.parametrize("opcode", sorted(UNARY_REFERENCES))
@pytest.mark.parametrize("dtype", INTS, ids=name)
def test_unary_on_edges(opcode, dtype):
    a = int_edges(dtype)
    expected = np.array([UNARY_REFERENCES[opcode](x, dtype) for x in a], dtype=dtype)
    assert_same(run(opcode, dtype, a), expected, opcode)


@pytest.mark.parametrize("dtype", SIGNED, ids=name)
def test_abs_and_negate_of_int_min_wrap(dtype):
    int_min = np.iinfo(dtype).min
    assert run("abs", dtype, np.array(int_min, dtype)) == int_min
    assert run("negate", dtype, np.array(int_min, dtype)) == int_min


@pytest.mark.parametrize("dtype", UNSIGNED, ids=name)
def test_unsigned_abs_is_identity_and_negate_wraps(dtype):
    values = int_edges(dtype)
    assert_same(run("abs", dtype, values), values)
    assert run("negate", dtype, np.array(1, dtype)) == np.iinfo(dtype).max


def test_bit_counts_hand_computed():
    assert run("count-leading-zeros", np.int8, np.int8(1)) == 7
    assert run("count-leading-zeros", np.uint8, np.uint8(0)) == 8
    assert run("count-leading-zeros", np.int8, np.int8(-1)) == 0
    assert run("count-leading-zeros", np.int64, np.int64(1)) == 63
    assert run("popcnt", np.int8, np.int8(-1)) == 8
    assert run("popcnt", np.int64, np.int64(-1)) == 64
    assert run("popcnt", np.uint16, np.uint16(0xF0F0)) == 8
