"""Elementwise unary rules, select and clamp against independent references:
Python's math/cmath/decimal per element and hand-computed XLA edge cases,
for every float, complex and pred type each op takes (integer unary ops are
in test_integer.py)."""

from __future__ import annotations

import cmath
import decimal
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
    ulp_distance,
)
from xlapy.errors import ExecutionError
from xlapy.hlo.attributes import ComparisonDirection, ComparisonType

NAN, INF = math.nan, math.inf


def _math(fn):
    """`fn` extended to C99's special values: overflow -> +-inf, domain -> NaN."""

    def safe(x):
        try:
            return fn(x)
        except OverflowError:
            return INF
        except ValueError:
            return NAN

    return safe


def _cbrt(x):
    """Cube root to 40 digits with decimal, then rounded to a float."""
    with decimal.localcontext() as context:
        context.prec = 40
        root = decimal.Decimal(abs(x)) ** (decimal.Decimal(1) / 3) if x else decimal.Decimal(0)
    return math.copysign(float(root), x)


def _logistic(x):
    return 1 / (1 + math.exp(-x)) if x > -700 else 0.0


REAL_FUNCTIONS = {  # opcode: (reference on a Python float, domain (lo, hi))
    "exponential": (_math(math.exp), (-80, 80)),
    "exponential-minus-one": (_math(math.expm1), (-80, 80)),
    "log": (_math(math.log), (1e-30, 1e30)),
    "log-plus-one": (_math(math.log1p), (-0.99, 1e30)),
    "sqrt": (_math(math.sqrt), (0, 1e30)),
    "rsqrt": (lambda x: 1 / math.sqrt(x), (1e-30, 1e30)),
    "cbrt": (_cbrt, (-1e30, 1e30)),
    "logistic": (_logistic, (-100, 100)),
    "sine": (math.sin, (-100, 100)),
    "cosine": (math.cos, (-100, 100)),
    "tan": (math.tan, (-1.5, 1.5)),
    "tanh": (math.tanh, (-20, 20)),
    "sinh": (math.sinh, (-80, 80)),
    "cosh": (math.cosh, (-80, 80)),
    "asin": (math.asin, (-1, 1)),
    "acos": (math.acos, (-1, 1)),
    "atan": (math.atan, (-1e6, 1e6)),
    "asinh": (math.asinh, (-1e6, 1e6)),
    "acosh": (math.acosh, (1, 1e6)),
    "atanh": (math.atanh, (-0.99, 0.99)),
    "erf": (math.erf, (-6, 6)),
}


def _max_ulps(opcode, dtype):
    return 2 if dtype == np.float64 else 1


@settings(max_examples=10, deadline=None)
@given(data=st.data())
@pytest.mark.parametrize("dtype", FLOATS, ids=name)
@pytest.mark.parametrize("opcode", sorted(REAL_FUNCTIONS))
def test_real_function_within_ulps_of_math(opcode, dtype, data):
    reference, (lo, hi) = REAL_FUNCTIONS[opcode]
    finfo = ml_dtypes.finfo(dtype)
    lo, hi = max(lo, -float(finfo.max)), min(hi, float(finfo.max))
    values = data.draw(hnp.arrays(np.float64, st.integers(1, 8),
                                  elements=st.floats(lo, hi, allow_nan=False)))
    x = values.astype(dtype)
    wide = x.astype(np.float64)
    x = x[(wide >= lo) & (wide <= hi)]  # rounding may leave the domain
    result = run(opcode, dtype, x)
    expected = cast([reference(float(v)) for v in x.astype(np.float64)], dtype)
    distance = ulp_distance(result, expected)
    assert np.all(distance <= _max_ulps(opcode, dtype)), (opcode, x, result, expected)


SPECIAL_VALUES = {  # opcode: [(x, expected)], C99 / XLA special cases
    "exponential": [(-INF, 0.0), (INF, INF), (NAN, NAN), (0.0, 1.0), (1000.0, INF)],
    "exponential-minus-one": [(-INF, -1.0), (-0.0, -0.0), (INF, INF)],
    "log": [(0.0, -INF), (-0.0, -INF), (-1.0, NAN), (INF, INF), (1.0, 0.0)],
    "log-plus-one": [(-1.0, -INF), (-2.0, NAN), (-0.0, -0.0)],
    "sqrt": [(-0.0, -0.0), (-1.0, NAN), (INF, INF), (4.0, 2.0)],
    "rsqrt": [(0.0, INF), (-0.0, -INF), (INF, 0.0), (-1.0, NAN), (4.0, 0.5)],
    "cbrt": [(-8.0, -2.0), (-0.0, -0.0), (-INF, -INF), (27.0, 3.0)],
    "logistic": [(-INF, 0.0), (INF, 1.0), (0.0, 0.5), (-1000.0, 0.0), (1000.0, 1.0)],
    "sine": [(-0.0, -0.0), (INF, NAN)],
    "cosine": [(0.0, 1.0), (-INF, NAN)],
    "tan": [(-0.0, -0.0), (INF, NAN)],
    "tanh": [(INF, 1.0), (-INF, -1.0), (-0.0, -0.0)],
    "sinh": [(-INF, -INF), (-0.0, -0.0)],
    "cosh": [(-INF, INF), (0.0, 1.0)],
    "asin": [(2.0, NAN), (-0.0, -0.0), (1.0, math.pi / 2)],
    "acos": [(1.0, 0.0), (-2.0, NAN)],
    "atan": [(INF, math.pi / 2), (-INF, -math.pi / 2)],
    "asinh": [(-INF, -INF), (-0.0, -0.0)],
    "acosh": [(1.0, 0.0), (0.5, NAN), (INF, INF)],
    "atanh": [(1.0, INF), (-1.0, -INF), (2.0, NAN)],
    "erf": [(INF, 1.0), (-INF, -1.0), (-0.0, -0.0), (NAN, NAN)],
}


@pytest.mark.parametrize("dtype", FLOATS, ids=name)
@pytest.mark.parametrize("opcode", sorted(SPECIAL_VALUES))
def test_real_function_special_values(opcode, dtype):
    x, expected = zip(*SPECIAL_VALUES[opcode])
    x = np.array(x).astype(dtype)
    expected = np.array(expected).astype(dtype)
    with np.errstate(all="raise"):  # the rule itself must not warn
        assert_same(run(opcode, dtype, x), expected, opcode)


COMPLEX_FUNCTIONS = {
    "exponential": cmath.exp, "log": cmath.log, "sqrt": cmath.sqrt,
    "rsqrt": lambda z: 1 / cmath.sqrt(z), "logistic": lambda z: 1 / (1 + cmath.exp(-z)),
    "exponential-minus-one": lambda z: cmath.exp(z) - 1, "log-plus-one": lambda z: cmath.log(1 + z),
    "sine": cmath.sin, "cosine": cmath.cos, "tan": cmath.tan, "tanh": cmath.tanh,
    "sinh": cmath.sinh, "cosh": cmath.cosh, "asin": cmath.asin, "acos": cmath.acos,
    "atan": cmath.atan, "asinh": cmath.asinh, "acosh": cmath.acosh, "atanh": cmath.atanh,
}


@pytest.mark.parametrize("dtype", COMPLEX, ids=name)
@pytest.mark.parametrize("opcode", sorted(COMPLEX_FUNCTIONS))
def test_complex_function_matches_cmath(opcode, dtype):
    rng = np.random.default_rng(7)
    z = (rng.uniform(0.3, 2, 12) * rng.choice([-1, 1], 12)
         + 1j * rng.uniform(0.3, 2, 12) * rng.choice([-1, 1], 12)).astype(dtype)
    result = run(opcode, dtype, z)
    expected = np.array([COMPLEX_FUNCTIONS[opcode](complex(v)) for v in z]).astype(dtype)
    rtol = 1e-6 if dtype == np.complex64 else 1e-13
    np.testing.assert_allclose(result, expected, rtol=rtol, atol=0)


@pytest.mark.parametrize("opcode", ["cbrt", "erf", "floor", "ceil", "round-nearest-afz",
                                    "round-nearest-even", "is-finite"])
@pytest.mark.parametrize("dtype", COMPLEX + [np.int32], ids=name)
def test_real_only_ops_reject_other_types(opcode, dtype):
    x = np.ones(2, dtype)
    with pytest.raises(ExecutionError, match=opcode):
        run(opcode, np.bool_ if opcode == "is-finite" else dtype, x)


@pytest.mark.parametrize("dtype", FLOATS, ids=name)
def test_rounding_ops(dtype):
    x = float_edges(dtype)
    wide = x.astype(np.float64)
    assert_same(run("floor", dtype, x), np.floor(wide).astype(dtype))
    assert_same(run("ceil", dtype, x), np.ceil(wide).astype(dtype))
    assert_same(run("round-nearest-even", dtype, x), np.rint(wide).astype(dtype))

    def half_away(v):
        if not math.isfinite(v) or abs(v) >= 2**52:
            return v  # already an integer
        rounded = decimal.Decimal(v).quantize(decimal.Decimal(1), decimal.ROUND_HALF_UP)
        return math.copysign(float(rounded), v)

    expected = np.array([half_away(v) for v in wide]).astype(dtype)
    assert_same(run("round-nearest-afz", dtype, x), expected)


def test_rounding_halfway_cases_by_hand():
    x = np.array([0.5, -0.5, 1.5, 2.5, -2.5, 0.49999999999999994, -0.3, 3.7])
    afz = [1.0, -1.0, 2.0, 3.0, -3.0, 0.0, -0.0, 4.0]
    even = [0.0, -0.0, 2.0, 2.0, -2.0, 0.0, -0.0, 4.0]
    assert_same(run("round-nearest-afz", np.float64, x), np.array(afz))
    assert_same(run("round-nearest-even", np.float64, x), np.array(even))


@pytest.mark.parametrize("dtype", FLOATS, ids=name)
def test_abs_negate_sign_is_finite(dtype):
    x = float_edges(dtype)
    wide = x.astype(np.float64)
    assert_same(run("abs", dtype, x), np.abs(wide).astype(dtype))
    assert_same(run("negate", dtype, x), (-wide).astype(dtype))
    sign = [v if math.isnan(v) or v == 0 else math.copysign(1.0, v) for v in wide]
    assert_same(run("sign", dtype, x), np.array(sign).astype(dtype))
    assert_same(run("is-finite", np.bool_, x), np.isfinite(wide))


@pytest.mark.parametrize("dtype", COMPLEX, ids=name)
def test_complex_abs_negate_sign_real_imag(dtype):
    z = np.array([3 + 4j, -1j, 0j, complex(-2, 0), complex(1e-30, -1e-30)], dtype)
    real = np.float32 if dtype == np.complex64 else np.float64
    magnitude = np.array([abs(complex(v)) for v in z])
    assert_same(run("abs", real, z), magnitude.astype(real))
    assert_same(run("negate", dtype, z), -z)
    sign = np.array([v / abs(v) if v != 0 else 0j for v in z.astype(complex)]).astype(dtype)
    np.testing.assert_allclose(run("sign", dtype, z), sign, rtol=1e-6)
    assert run("sign", dtype, z)[2] == 0
    assert_same(run("real", real, z), z.real.astype(real))
    assert_same(run("imag", real, z), z.imag.astype(real))


@pytest.mark.parametrize("dtype", FLOATS, ids=name)
def test_real_and_imag_of_real_values(dtype):
    x = float_edges(dtype)
    assert_same(run("real", dtype, x), x)
    assert_same(run("imag", dtype, x), np.zeros(x.shape, dtype))


def test_not_on_pred_and_rejects_floats():
    x = np.array([True, False])
    assert_same(run("not", np.bool_, x), np.array([False, True]))
    with pytest.raises(ExecutionError, match="not"):
        run("not", np.float32, np.ones(2, np.float32))


# -- select and clamp ---------------------------------------------------------------
def _samples(dtype, n=6):
    kind = np.dtype(dtype).kind
    if kind == "b":
        return np.array([True, False, True, True, False, False][:n])
    if kind in "iu":
        return int_edges(dtype)[:n]
    if kind == "c":
        return (np.arange(n) + 1j * np.arange(n)[::-1]).astype(dtype)
    return float_edges(dtype)[:n]


@pytest.mark.parametrize("dtype", ALL, ids=name)
def test_select(dtype):
    on_true, on_false = _samples(dtype), _samples(dtype)[::-1].copy()
    pred = np.array([True, False, False, True, True, False])
    assert_same(run("select", dtype, pred, on_true, on_false), np.where(pred, on_true, on_false))
    assert_same(run("select", dtype, np.array(False), on_true, on_false), on_false)


def test_select_scalar_pred_picks_tuples():
    from tests.hlo.evaluator.util import run_op, shape_of

    a = (np.array([1, 2], np.int32), np.array(1.5, np.float32))
    b = (np.array([3, 4], np.int32), np.array(2.5, np.float32))
    result = run_op("select", shape_of(a), np.array(True), a, b)
    assert result[0].tolist() == [1, 2] and result[1] == np.float32(1.5)


@pytest.mark.parametrize("dtype", INTS + FLOATS, ids=name)
def test_clamp_with_scalar_and_array_bounds(dtype):
    x = _samples(dtype, 6)
    lo, hi = np.array(1, dtype), np.array(2, dtype)
    wide = x.astype(np.float64) if np.dtype(dtype).kind not in "iu" else x.astype(object)
    expected = [v if v != v else min(2, max(v, 1)) for v in wide]
    assert_same(run("clamp", dtype, lo, x, hi), np.array(expected).astype(dtype))
    lows = np.zeros(6, dtype)
    assert_same(run("clamp", dtype, lows, x, hi), np.array(
        [v if v != v else min(2, max(v, 0)) for v in wide]).astype(dtype))


def test_clamp_nan_and_inverted_bounds():
    f32 = np.float32
    assert np.isnan(run("clamp", f32, f32(NAN), f32(5), f32(3)))
    assert np.isnan(run("clamp", f32, f32(0), f32(NAN), f32(3)))
    assert np.isnan(run("clamp", f32, f32(0), f32(1), f32(NAN)))
    assert run("clamp", f32, f32(5), f32(0), f32(3)) == 3  # min(hi, max(x, lo))
    assert run("clamp", np.int8, np.int8(-128), np.int8(100), np.int8(-1)) == -1
    assert run("clamp", np.bool_, np.bool_(True), np.bool_(False), np.bool_(True))
    x = np.array([-INF, INF, -0.0], f32)
    assert_same(run("clamp", f32, f32(-1), x, f32(1)), np.array([-1, 1, -0.0], f32))


# -- element types beyond the common fifteen ----------------------------------------
def test_sub_byte_integers():
    s4, u4 = ml_dtypes.int4, ml_dtypes.uint4

    def ints(result):
        return result.astype(np.int64).tolist()

    assert ints(run("add", s4, np.array([7, -8], s4), np.array([1, -1], s4))) == [-8, 7]
    assert ints(run("divide", s4, np.array([-8, 5], s4), np.array([-1, 0], s4))) == [-8, -1]
    assert ints(run("remainder", s4, np.array([-7, 5], s4), np.array([2, 0], s4))) == [-1, 5]
    assert ints(run("shift-left", u4, np.array([1, 1], u4), np.array([3, 4], u4))) == [8, 0]
    assert ints(run("shift-right-arithmetic", s4, np.array([-8], s4), np.array([2], s4))) == [-2]
    assert ints(run("multiply", u4, np.array([5], u4), np.array([7], u4))) == [3]  # 35 % 16
    assert ints(run("popcnt", s4, np.array([-1, 5], s4))) == [4, 2]
    assert ints(run("count-leading-zeros", u4, np.array([1, 0], u4))) == [3, 4]
    assert ints(run("negate", s4, np.array([-8, 3], s4))) == [-8, -3]
    assert ints(run("convert", s4, np.array([9, -9, 16], np.int32))) == [-7, 7, 0]
    assert run("compare", np.bool_, np.array([-8], s4), np.array([7], s4),
               direction=ComparisonDirection.LT).tolist() == [True]


def test_f8_and_f4_floats():
    e4m3, e5m2, f4 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.float4_e2m1fn
    assert np.isnan(run("add", e4m3, np.array(448, e4m3), np.array(32, e4m3)))  # no inf: NaN
    assert run("add", e4m3, np.array(448, e4m3), np.array(8, e4m3)) == 448  # rounds back
    assert run("exponential", e5m2, np.array(20, e5m2)) == np.inf
    assert run("multiply", f4, np.array(1.5, f4), np.array(2, f4)) == 3
    assert run("convert", f4, np.array([6.5, 100, -7], np.float32)).astype(float).tolist() == [
        6, 6, -6]  # float4_e2m1fn has no inf: ml_dtypes saturates
    keys = run("compare", np.bool_, np.array([-1, 0], e4m3), np.array([-0.0, 1], e4m3),
               direction=ComparisonDirection.LT, type=ComparisonType.TOTALORDER)
    assert keys.tolist() == [True, True]
    assert run("floor", e4m3, np.array(-2.5, e4m3)) == -3
    assert run("sqrt", e4m3, np.array(2, e4m3)) == e4m3(1.375)  # sqrt(2) = 1.414 -> 1.375
