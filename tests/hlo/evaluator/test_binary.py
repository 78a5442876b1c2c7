"""Elementwise binary rules on float, complex and pred values, and compare on
every type, against Python/math/cmath references and hand-computed XLA edge
cases (integer binary ops are in test_integer.py)."""

from __future__ import annotations

import cmath
import math
import operator

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
    pairs,
    run,
    ulp_distance,
)
from xlapy.errors import ExecutionError
from xlapy.hlo.attributes import ComparisonDirection, ComparisonType

NAN, INF = math.nan, math.inf


def _compute_dtype(dtype):
    return np.float64 if dtype == np.float64 else np.float32


EXACT = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide}


@pytest.mark.parametrize("opcode", sorted(EXACT))
@pytest.mark.parametrize("dtype", FLOATS, ids=name)
def test_arithmetic_rounds_once_from_float32(opcode, dtype):
    """Narrow floats are computed in float32 and rounded once, as XLA does."""
    a, b = pairs(float_edges(dtype))
    wide = _compute_dtype(dtype)
    with np.errstate(all="ignore"):
        expected = EXACT[opcode](a.astype(wide), b.astype(wide)).astype(dtype)
    assert_same(run(opcode, dtype, a, b), expected, opcode)


def test_arithmetic_by_hand():
    f32 = np.float32
    assert run("divide", f32, f32(1), f32(0)) == INF
    assert run("divide", f32, f32(-1), f32(0)) == -INF
    assert np.isnan(run("divide", f32, f32(0), f32(0)))
    assert np.signbit(run("multiply", f32, f32(-0.0), f32(5)))
    assert run("add", np.float16, np.float16(65504), np.float16(32)) == INF
    bf16 = ml_dtypes.bfloat16
    assert run("add", bf16, bf16(256), bf16(1)) == 256  # 257 rounds to even
    assert run("add", bf16, bf16(256), bf16(3)) == 260


@pytest.mark.parametrize("dtype", FLOATS, ids=name)
def test_remainder_is_fmod(dtype):
    a, b = pairs(float_edges(dtype))
    expected = np.array([math.fmod(x, y) if math.isfinite(x) and y != 0 and not math.isnan(y)
                         else (x if math.isfinite(x) and math.isinf(y) else NAN)
                         for x, y in zip(a.astype(float), b.astype(float))]).astype(dtype)
    assert_same(run("remainder", dtype, a, b), expected)
    assert run("remainder", dtype, np.array(-7, dtype), np.array(2, dtype)) == -1


def _std_max(a, b):
    if math.isnan(a):
        return a
    if math.isnan(b):
        return b
    return b if a < b else a


def _std_min(a, b):
    if math.isnan(a):
        return a
    if math.isnan(b):
        return b
    return b if b < a else a


@pytest.mark.parametrize("dtype", FLOATS, ids=name)
def test_maximum_minimum_propagate_nan(dtype):
    a, b = pairs(float_edges(dtype))
    wide = list(zip(a.astype(float), b.astype(float)))
    assert_same(run("maximum", dtype, a, b),
                np.array([_std_max(x, y) for x, y in wide]).astype(dtype))
    assert_same(run("minimum", dtype, a, b),
                np.array([_std_min(x, y) for x, y in wide]).astype(dtype))
    nan = np.array(NAN, dtype)
    assert np.isnan(run("maximum", dtype, nan, np.array(INF, dtype)))
    assert np.isnan(run("minimum", dtype, np.array(-INF, dtype), nan))


def _pow(x, y):
    if x == 1 or y == 0:
        return 1.0
    try:
        return math.pow(x, y)
    except OverflowError:
        return math.copysign(INF, x) if x < 0 and y == int(y) and int(y) % 2 else INF
    except ValueError:
        if x == 0:  # pole: 0 ** negative
            odd = y == int(y) and int(y) % 2
            return math.copysign(INF, x) if odd else INF
        return NAN


@pytest.mark.parametrize("dtype", FLOATS, ids=name)
def test_power_edge_values(dtype):
    a, b = pairs(float_edges(dtype))
    expected = np.array([_pow(x, y) for x, y in zip(a.astype(float), b.astype(float))])
    result = run("power", dtype, a, b)
    assert np.all(ulp_distance(result, cast(expected, dtype)) <= 1)
    special = [(0.0, 0.0, 1.0), (NAN, 0.0, 1.0), (1.0, NAN, 1.0), (-1.0, INF, 1.0),
               (-0.0, -1.0, -INF), (0.0, -1.0, INF), (-2.0, 0.5, NAN), (2.0, -1.0, 0.5),
               (-2.0, 3.0, -8.0), (INF, -1.0, 0.0)]
    x, y, want = (np.array(column).astype(dtype) for column in zip(*special))
    assert_same(run("power", dtype, x, y), want)


@settings(max_examples=15, deadline=None)
@given(data=st.data())
@pytest.mark.parametrize("dtype", FLOATS, ids=name)
def test_power_and_atan2_random(dtype, data):
    finfo = ml_dtypes.finfo(dtype)
    elements = st.floats(-float(finfo.max), float(finfo.max), allow_nan=False, width=64)
    shape = st.integers(1, 6)
    a = data.draw(hnp.arrays(np.float64, shape, elements=elements)).astype(dtype)
    b = data.draw(hnp.arrays(np.float64, a.shape, elements=elements)).astype(dtype)
    b_small = np.clip(b.astype(np.float64), -8, 8).astype(dtype)
    wide = list(zip(a.astype(float), b_small.astype(float)))
    expected = cast([_pow(x, y) for x, y in wide], dtype)
    tolerance = 2 if dtype == np.float64 else 1
    assert np.all(ulp_distance(run("power", dtype, a, b_small), expected) <= tolerance)
    expected = np.array([math.atan2(y, x) for y, x in zip(a.astype(float), b.astype(float))])
    assert np.all(ulp_distance(run("atan2", dtype, a, b), expected.astype(dtype)) <= tolerance)


def test_atan2_special_values():
    cases = [(0.0, -0.0, math.pi), (-0.0, -0.0, -math.pi), (0.0, 0.0, 0.0),
             (-0.0, 0.0, -0.0), (1.0, -INF, math.pi), (INF, INF, math.pi / 4),
             (NAN, 1.0, NAN), (-1.0, 0.0, -math.pi / 2)]
    y, x, want = (np.array(column) for column in zip(*cases))
    assert_same(run("atan2", np.float64, y, x), want)


@pytest.mark.parametrize("dtype", COMPLEX, ids=name)
def test_complex_binary(dtype):
    rng = np.random.default_rng(3)
    a = (rng.normal(size=10) + 1j * rng.normal(size=10)).astype(dtype)
    b = (rng.normal(size=10) + 1j * rng.normal(size=10)).astype(dtype)
    rtol = 1e-5 if dtype == np.complex64 else 1e-12
    za, zb = a.astype(complex), b.astype(complex)
    references = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
                  "divide": operator.truediv, "power": operator.pow}
    for opcode, reference in references.items():
        expected = np.array([reference(x, y) for x, y in zip(za, zb)]).astype(dtype)
        np.testing.assert_allclose(run(opcode, dtype, a, b), expected, rtol=rtol, err_msg=opcode)
    # XLA: atan2(y, x) = -i * log((x + i*y) / sqrt(x*x + y*y))
    expected = np.array([-1j * cmath.log((x + 1j * y) / cmath.sqrt(x * x + y * y))
                         for y, x in zip(za, zb)]).astype(dtype)
    np.testing.assert_allclose(run("atan2", dtype, a, b), expected, rtol=rtol)


@pytest.mark.parametrize("dtype", COMPLEX, ids=name)
def test_complex_power_special_cases(dtype):
    base = np.array([0, 1, 2 + 1j, complex(INF, 0), complex(INF, 0)], dtype)
    exponent = np.array([0, complex(NAN, NAN), 0, 2, -2], dtype)
    expected = np.array([1, 1, 1, complex(INF, 0), 0], dtype)
    assert_same(run("power", dtype, base, exponent), expected)


@pytest.mark.parametrize("opcode", ["maximum", "minimum", "remainder", "and", "shift-left"])
@pytest.mark.parametrize("dtype", COMPLEX, ids=name)
def test_complex_rejects_ordered_and_bitwise_ops(opcode, dtype):
    with pytest.raises(ExecutionError, match=opcode):
        run(opcode, dtype, np.ones(2, dtype), np.ones(2, dtype))


@pytest.mark.parametrize("opcode", ["and", "or", "xor", "shift-left", "mulhi",
                                    "shift-right-logical"])
def test_floats_reject_bitwise_ops(opcode):
    with pytest.raises(ExecutionError, match=opcode):
        run(opcode, np.float32, np.ones(2, np.float32), np.ones(2, np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=name)
def test_complex_builds_from_parts(dtype):
    real = np.array([1.0, INF, NAN, -0.0], dtype)
    imag = np.array([INF, 2.0, 0.0, -0.0], dtype)
    out = np.complex64 if dtype == np.float32 else np.complex128
    result = run("complex", out, real, imag)
    assert_same(result.real, real)
    assert_same(result.imag, imag)


PRED_TABLES = {  # opcode: results for (F,F), (F,T), (T,F), (T,T)
    "add": [0, 1, 1, 1], "maximum": [0, 1, 1, 1], "or": [0, 1, 1, 1],
    "multiply": [0, 0, 0, 1], "minimum": [0, 0, 0, 1], "and": [0, 0, 0, 1],
    "subtract": [0, 1, 1, 0], "xor": [0, 1, 1, 0], "power": [1, 0, 1, 1],
}


@pytest.mark.parametrize("opcode", sorted(PRED_TABLES))
def test_pred_binary_truth_tables(opcode):
    a = np.array([False, False, True, True])
    b = np.array([False, True, False, True])
    assert_same(run(opcode, np.bool_, a, b), np.array(PRED_TABLES[opcode], bool))


def test_pred_rejects_divide_and_shifts():
    for opcode in ("divide", "remainder", "shift-left"):
        with pytest.raises(ExecutionError, match=opcode):
            run(opcode, np.bool_, np.ones(2, bool), np.ones(2, bool))


# -- compare ------------------------------------------------------------------------
DIRECTIONS = {
    ComparisonDirection.EQ: operator.eq, ComparisonDirection.NE: operator.ne,
    ComparisonDirection.LT: operator.lt, ComparisonDirection.LE: operator.le,
    ComparisonDirection.GT: operator.gt, ComparisonDirection.GE: operator.ge,
}


def _edges(dtype):
    kind = np.dtype(dtype).kind
    if kind == "b":
        return np.array([False, True])
    if kind in "iu":
        return int_edges(dtype)
    return float_edges(dtype)


@pytest.mark.parametrize("direction", list(DIRECTIONS), ids=lambda d: d.value)
@pytest.mark.parametrize("dtype", [np.bool_] + INTS + FLOATS, ids=name)
def test_compare_default_type(dtype, direction):
    a, b = pairs(_edges(dtype))
    wide = a.astype(object if np.dtype(dtype).kind in "biu" else float), \
        b.astype(object if np.dtype(dtype).kind in "biu" else float)
    expected = np.array([DIRECTIONS[direction](x, y) for x, y in zip(*wide)])
    assert_same(run("compare", np.bool_, a, b, direction=direction), expected)
    if np.dtype(dtype).kind in "iu":  # SIGNED/UNSIGNED change nothing for integers
        kind = ComparisonType.SIGNED if np.dtype(dtype).kind == "i" else ComparisonType.UNSIGNED
        assert_same(run("compare", np.bool_, a, b, direction=direction, type=kind), expected)


def _total_order_key(x: float, dtype) -> int:
    bits = int(np.array(x).astype(dtype).view(f"u{np.dtype(dtype).itemsize}"))
    width = np.dtype(dtype).itemsize * 8
    magnitude = bits & ((1 << (width - 1)) - 1)
    return -1 - magnitude if bits >> (width - 1) else magnitude


@pytest.mark.parametrize("direction", list(DIRECTIONS), ids=lambda d: d.value)
@pytest.mark.parametrize("dtype", FLOATS, ids=name)
def test_compare_total_order(dtype, direction):
    values = np.concatenate([float_edges(dtype), -np.array([NAN]).astype(dtype)])
    a, b = pairs(values)
    keys = [(_total_order_key(x, dtype), _total_order_key(y, dtype)) for x, y in zip(a, b)]
    expected = np.array([DIRECTIONS[direction](x, y) for x, y in keys])
    result = run("compare", np.bool_, a, b, direction=direction, type=ComparisonType.TOTALORDER)
    assert_same(result, expected)


def test_total_order_by_hand():
    f32 = np.float32
    ordered = np.array([-NAN, -INF, -1, -0.0, 0.0, 1, INF, NAN], f32)
    ordered[0] = -abs(ordered[0])
    lt = run("compare", np.bool_, ordered[:-1], ordered[1:], direction=ComparisonDirection.LT,
             type=ComparisonType.TOTALORDER)
    assert lt.all()
    eq = run("compare", np.bool_, f32(NAN), f32(NAN), direction=ComparisonDirection.EQ,
             type=ComparisonType.TOTALORDER)
    assert eq  # same bit pattern
    assert not run("compare", np.bool_, f32(NAN), f32(NAN), direction=ComparisonDirection.EQ)
    assert not run("compare", np.bool_, f32(-0.0), f32(0.0), direction=ComparisonDirection.EQ,
                   type=ComparisonType.TOTALORDER)
    assert run("compare", np.bool_, f32(-0.0), f32(0.0), direction=ComparisonDirection.EQ)


@pytest.mark.parametrize("dtype", COMPLEX, ids=name)
def test_compare_complex_equality_only(dtype):
    a = np.array([1 + 1j, 1 + 1j, complex(NAN, 0)], dtype)
    b = np.array([1 + 1j, 1 - 1j, complex(NAN, 0)], dtype)
    assert_same(run("compare", np.bool_, a, b, direction=ComparisonDirection.EQ),
                np.array([True, False, False]))
    assert_same(run("compare", np.bool_, a, b, direction=ComparisonDirection.NE),
                np.array([False, True, True]))
    with pytest.raises(ExecutionError, match="EQ and NE"):
        run("compare", np.bool_, a, b, direction=ComparisonDirection.LT)


def test_compare_needs_a_direction():
    with pytest.raises(ExecutionError, match="direction"):
        run("compare", np.bool_, np.ones(2, np.int32), np.ones(2, np.int32))


@pytest.mark.parametrize("dtype", ALL, ids=name)
def test_compare_broadcast_free_scalars(dtype):
    x = np.array(_edges(dtype)[0] if np.dtype(dtype).kind != "c" else 1j, dtype)
    assert run("compare", np.bool_, x, x, direction=ComparisonDirection.NE).shape == ()
