"""Elementwise differentiation rules (xlapy/autodiff/rules/elementwise.py).

Random tests: each op alone through `check_grads` (finite differences, both
modes, eager and jit) at float64 values inside its domain and away from the
points where it is not differentiable. Convention tests: the values JAX gives
at those points (checked by hand against jax 0.10.2), written out.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import xlapy
from tests.autodiff.check import check_grads
from xlapy import lax
from xlapy.autodiff.rules import NON_DIFFERENTIABLE
from xlapy.autodiff.rules.elementwise import BINARY, UNARY
from xlapy.hlo.opcode import Opcode as Op

# a quarter of the profile's examples per op: ~40 ops share the module's budget
EXAMPLES = max(4, settings.default.max_examples // 4)
few = settings(max_examples=EXAMPLES)

shapes = hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3)


def floats(lo, hi, avoid=(), margin=0.1):
    """Floats in [lo, hi] at least `margin` away from each point of `avoid`."""
    values = st.floats(lo, hi, allow_nan=False, allow_infinity=False)
    if avoid:
        values = values.filter(lambda v: all(abs(v - p) >= margin for p in avoid))
    return values


def arrays(shape, elements):
    return hnp.arrays(np.float64, shape, elements=elements)


# op -> (lax function, element strategy inside its domain)
UNARY_CASES = {
    Op.NEGATE: (lax.neg, floats(-3, 3)),
    Op.ABS: (lax.abs, floats(-3, 3, avoid=(0,))),
    Op.EXP: (lax.exp, floats(-3, 3)),
    Op.EXPM1: (lax.expm1, floats(-3, 3)),
    Op.LOG: (lax.log, floats(0.1, 5)),
    Op.LOG1P: (lax.log1p, floats(-0.9, 5)),
    Op.LOGISTIC: (lax.logistic, floats(-5, 5)),
    Op.TANH: (lax.tanh, floats(-3, 3)),
    Op.SIN: (lax.sin, floats(-4, 4)),
    Op.COS: (lax.cos, floats(-4, 4)),
    Op.TAN: (lax.tan, floats(-1.3, 1.3)),
    Op.SQRT: (lax.sqrt, floats(0.1, 5)),
    Op.RSQRT: (lax.rsqrt, floats(0.1, 5)),
    Op.CBRT: (lax.cbrt, floats(-5, 5, avoid=(0,))),
    Op.ERF: (lax.erf, floats(-3, 3)),
    Op.ASIN: (lax.asin, floats(-0.9, 0.9)),
    Op.ACOS: (lax.acos, floats(-0.9, 0.9)),
    Op.ATAN: (lax.atan, floats(-4, 4)),
    Op.SINH: (lax.sinh, floats(-3, 3)),
    Op.COSH: (lax.cosh, floats(-3, 3)),
    Op.ASINH: (lax.asinh, floats(-4, 4)),
    Op.ACOSH: (lax.acosh, floats(1.1, 5)),
    Op.ATANH: (lax.atanh, floats(-0.9, 0.9)),
}

# op -> (lax function, element strategies for x and y); pairs that need a
# relation between x and y (max/min, remainder) are built in their own tests
BINARY_CASES = {
    Op.ADD: (lax.add, floats(-3, 3), floats(-3, 3)),
    Op.SUBTRACT: (lax.sub, floats(-3, 3), floats(-3, 3)),
    Op.MULTIPLY: (lax.mul, floats(-3, 3), floats(-3, 3)),
    Op.DIVIDE: (lax.div, floats(-3, 3), floats(-3, 3, avoid=(0,), margin=0.3)),
    Op.POWER: (lax.pow, floats(0.1, 3), floats(-2, 2)),
    # atan2(x, y) jumps where x crosses 0 with y < 0: keep x off 0
    Op.ATAN2: (lax.atan2, floats(-2, 2, avoid=(0,), margin=0.2), floats(-2, 2)),
}


def test_cases_cover_the_rules():
    assert set(UNARY_CASES) == set(UNARY)
    assert set(BINARY_CASES) | {Op.MAXIMUM, Op.MINIMUM, Op.REMAINDER} == set(BINARY)


@pytest.mark.parametrize("op", UNARY_CASES, ids=lambda op: op.value)
@few
@given(data=st.data())
def test_unary(op, data):
    fn, elements = UNARY_CASES[op]
    x = data.draw(arrays(data.draw(shapes), elements))
    check_grads(fn, [x])


@pytest.mark.parametrize("op", BINARY_CASES, ids=lambda op: op.value)
@few
@given(data=st.data())
def test_binary(op, data):
    fn, x_elements, y_elements = BINARY_CASES[op]
    shape = data.draw(shapes)
    x = data.draw(arrays(shape, x_elements))
    y = data.draw(arrays(shape, y_elements))
    check_grads(fn, [x, y])


@pytest.mark.parametrize("fn", [lax.max, lax.min], ids=["maximum", "minimum"])
@few
@given(data=st.data())
def test_max_min_away_from_ties(fn, data):
    shape = data.draw(shapes)
    x = data.draw(arrays(shape, floats(-3, 3)))
    gap = data.draw(arrays(shape, floats(-2, 2, avoid=(0,), margin=0.1)))
    check_grads(fn, [x, x + gap])


@few
@given(data=st.data())
def test_remainder_away_from_jumps(data):
    shape = data.draw(shapes)
    y = data.draw(arrays(shape, floats(-2, 2, avoid=(0,), margin=0.5)))
    # x / y at least 0.1 from an integer (and from 0, where rem changes sign)
    quotient = data.draw(arrays(shape, floats(-3, 3).filter(
        lambda q: 0.1 <= abs(q) % 1 <= 0.9)))
    check_grads(lax.rem, [quotient * y, y])


@few
@given(data=st.data())
def test_select(data):
    shape = data.draw(shapes)
    pred = data.draw(hnp.arrays(np.bool_, shape))
    x = data.draw(arrays(shape, floats(-3, 3)))
    y = data.draw(arrays(shape, floats(-3, 3)))
    check_grads(lambda a, b: lax.select(pred, a, b), [x, y])


@few
@given(data=st.data())
def test_clamp_arrays(data):
    shape = data.draw(shapes)
    # bounds near -1 and 1, x at least 0.1 from both: every region, no ties
    lo = -1 + data.draw(arrays(shape, floats(-0.05, 0.05)))
    hi = 1 + data.draw(arrays(shape, floats(-0.05, 0.05)))
    x = data.draw(arrays(shape, floats(-3, 3, avoid=(-1, 1), margin=0.1)))
    check_grads(lax.clamp, [lo, x, hi])


@few
@given(data=st.data())
def test_clamp_scalar_bounds(data):
    x = data.draw(arrays(data.draw(shapes), floats(-3, 3, avoid=(-1, 1), margin=0.1)))
    check_grads(lax.clamp, [np.float64(-1), x, np.float64(1)])


@few
@given(data=st.data())
def test_complex_real_imag(data):
    shape = data.draw(shapes)
    x = data.draw(arrays(shape, floats(-2, 2)))
    y = data.draw(arrays(shape, floats(-2, 2)))

    def f(a, b):
        z = lax.complex(a, b)
        return lax.real(z), lax.imag(z)

    check_grads(f, [x, y])


@pytest.mark.parametrize("name", ["mul", "exp", "abs"])
@few
@given(data=st.data())
def test_complex_ops_through_real_parts(name, data):
    """A complex op between complex() and real()/imag() is a map R^2 -> R^2
    that finite differences can check."""
    shape = data.draw(shapes)
    x = data.draw(arrays(shape, floats(-2, 2, avoid=(0,), margin=0.2)))
    y = data.draw(arrays(shape, floats(-2, 2)))

    def f(a, b):
        z = lax.complex(a, b)
        if name == "mul":
            w = lax.mul(z, lax.complex(b, lax.mul(a, a)))
        elif name == "exp":
            w = lax.exp(z)
        else:
            return lax.abs(z)
        return lax.real(w), lax.imag(w)

    check_grads(f, [x, y])


@few
@given(data=st.data())
def test_reduce_precision_at_full_precision(data):
    x = data.draw(arrays(data.draw(shapes), floats(-3, 3)))
    check_grads(lambda a: lax.reduce_precision(a, 11, 52), [x])


# ---------------------------------------------------------------- conventions

def grads(fn, *args):
    """JAX-style grad of a scalar function in every argument, as float64 numbers."""
    args = [np.float64(a) for a in args]
    got = xlapy.grad(fn, argnums=tuple(range(len(args))))(*args)
    return [float(g) for g in got]


def tangent(fn, primals, tangents):
    primals = tuple(np.float64(p) for p in primals)
    tangents = tuple(np.float64(t) for t in tangents)
    return float(xlapy.jvp(fn, primals, tangents)[1])


def pullback_of_ones(fn, *args):
    """Cotangents of every argument for an all-ones output cotangent (the
    gradient of the output's sum, without needing reduce's rule)."""
    out, pullback = xlapy.vjp(fn, *args)
    return pullback(np.ones(out.shape, np.dtype(out.dtype)))


def assert_same(got, expected):
    np.testing.assert_array_equal(np.asarray(got, np.float64), np.asarray(expected, np.float64))


@pytest.mark.parametrize("x, expected", [(0.0, 1.0), (-0.0, 1.0), (2.0, 1.0), (-2.0, -1.0)])
def test_abs_derivative_is_one_at_zero(x, expected):
    assert_same(grads(lax.abs, x), [expected])
    assert_same(tangent(lax.abs, [x], [3.0]), 3.0 * expected)


@pytest.mark.parametrize("fn", [lax.max, lax.min], ids=["maximum", "minimum"])
def test_max_min_ties_split_evenly(fn):
    assert_same(grads(fn, 1.5, 1.5), [0.5, 0.5])
    assert_same(tangent(fn, [1.5, 1.5], [2.0, 4.0]), 3.0)
    assert_same(grads(lax.max, 2.0, 1.0), [1.0, 0.0])
    assert_same(grads(lax.min, 2.0, 1.0), [0.0, 1.0])


@pytest.mark.parametrize("fn", [lax.max, lax.min], ids=["maximum", "minimum"])
def test_max_min_nan_gives_no_gradient(fn):
    # JAX: neither operand equals a NaN result, so both get zero
    assert_same(grads(fn, math.nan, 1.0), [0.0, 0.0])
    assert_same(grads(fn, 1.0, math.nan), [0.0, 0.0])


@pytest.mark.parametrize("lo, x, hi, expected", [
    (0.0, 0.5, 1.0, [0.0, 1.0, 0.0]),   # inside: x
    (0.0, -1.0, 1.0, [1.0, 0.0, 0.0]),  # below: lo
    (0.0, 2.0, 1.0, [0.0, 0.0, 1.0]),   # above: hi
    (0.0, 0.0, 1.0, [0.0, 0.0, 0.0]),   # at lo: nobody
    (0.0, 1.0, 1.0, [0.0, 0.0, 0.0]),   # at hi: nobody
    (1.0, 0.5, 1.0, [0.0, 0.0, 0.0]),   # lo == hi
    (2.0, 0.5, 1.0, [0.0, 0.0, 0.0]),   # lo > hi, x below both: JAX gives zeros
    (2.0, 3.0, 1.0, [0.0, 0.0, 1.0]),   # lo > hi, x above both: hi
])
def test_clamp_conventions(lo, x, hi, expected):
    assert_same(grads(lax.clamp, lo, x, hi), expected)
    assert_same(tangent(lax.clamp, [lo, x, hi], [1.0, 10.0, 100.0]),
                np.dot([1.0, 10.0, 100.0], expected))


def test_clamp_scalar_bounds_sum_their_cotangent():
    x = np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 3.0])
    got = pullback_of_ones(lax.clamp, np.float64(-1), x, np.float64(1))
    assert_same(got[0], 1.0)
    assert_same(got[1], [0, 0, 1, 0, 0, 0])
    assert_same(got[2], 2.0)


@pytest.mark.parametrize("x, y, expected", [
    # (∂/∂x, ∂/∂y) as jax.grad(lax.pow, (0, 1)) in float64 (jax 0.10.2)
    (0.0, 0.0, [math.nan, 0.0]),
    (0.0, 1.0, [1.0, 0.0]),
    (0.0, 2.0, [0.0, 0.0]),
    (0.0, 0.5, [math.inf, 0.0]),
    (0.0, -1.0, [-math.inf, math.nan]),
    (2.0, 0.0, [0.0, math.log(2.0)]),
    (-2.0, 2.0, [-4.0, math.nan]),
    (-2.0, 3.0, [12.0, math.nan]),
])
def test_power_conventions(x, y, expected):
    assert_same(grads(lax.pow, x, y), expected)


def test_power_tangent_in_one_argument_ignores_the_other():
    # a symbolic-zero tangent adds nothing, even where the other partial is inf
    assert_same(tangent(lambda x: lax.pow(x, np.float64(0.5)), [0.0], [1.0]), math.inf)
    assert_same(tangent(lambda y: lax.pow(np.float64(0.0), y), [0.5], [1.0]), 0.0)


def test_power_with_integer_exponent_via_xnp_is_zero_at_zero():
    # as jax: x ** 0 is integer_pow, not pow, so its derivative at 0 is 0
    assert_same(xlapy.grad(lambda x: x ** 0)(np.float64(0.0)), 0.0)
    assert_same(xlapy.grad(lambda x: x ** 2)(np.float64(0.0)), 0.0)


@pytest.mark.parametrize("x, y, expected", [
    (5.5, 2.0, [1.0, -2.0]), (-5.5, 2.0, [1.0, 2.0]), (7.0, -2.0, [1.0, 3.0]),
    (0.5, 2.0, [1.0, 0.0]),
])
def test_remainder_partials(x, y, expected):
    assert_same(grads(lax.rem, x, y), expected)


@pytest.mark.parametrize("fn", [lax.sign, lax.floor, lax.ceil, lax.round_nearest_afz,
                                lax.round_nearest_even],
                         ids=["sign", "floor", "ceil", "round_afz", "round_even"])
@pytest.mark.parametrize("x", [0.0, 0.5, 1.5, -2.0])
def test_piecewise_constant_ops_have_zero_gradient(fn, x):
    assert_same(grads(fn, x), [0.0])
    assert_same(tangent(fn, [x], [1.0]), 0.0)
    # and they are constants inside a larger function: d(x * sign(x)) = sign(x)
    assert_same(grads(lambda a: lax.mul(a, fn(a)), x), [float(fn(np.float64(x)))])


def test_piecewise_constant_ops_are_listed_non_differentiable():
    for op in (Op.SIGN, Op.FLOOR, Op.CEIL, Op.ROUND_NEAREST_AFZ, Op.ROUND_NEAREST_EVEN,
               Op.COMPARE, Op.IS_FINITE):
        assert op in NON_DIFFERENTIABLE


def test_comparison_and_select_pass_gradient_to_the_chosen_branch():
    def f(x, y):
        return lax.select(lax.lt(x, y), lax.mul(x, 2.0), lax.mul(y, 3.0))

    assert_same(grads(f, 1.0, 2.0), [2.0, 0.0])
    assert_same(grads(f, 3.0, 2.0), [0.0, 3.0])
    assert_same(grads(lambda x: lax.select(lax.is_finite(x), x, 0.0), 2.0), [1.0])


def test_select_on_a_scalar_predicate():
    x = np.arange(3.0)
    got = pullback_of_ones(lambda a, b: lax.select(True, a, b), x, 2 * x)
    assert_same(got[0], [1, 1, 1])
    assert_same(got[1], [0, 0, 0])


def test_reduce_precision_is_linear():
    # JAX treats it as the identity's derivative, even where it rounds
    x = np.array([1.2345678, -3.3333333, 0.1])
    (got,) = pullback_of_ones(lambda a: lax.reduce_precision(a, 5, 10), x)
    assert_same(got, [1, 1, 1])
    t = xlapy.jvp(lambda a: lax.reduce_precision(a, 5, 10), (x,), (np.array([1.2345678, 2, 3]),))[1]
    assert_same(t, np.asarray(lax.reduce_precision(np.array([1.2345678, 2, 3]), 5, 10)))


# -------------------------------------------------------------------- complex

Z = np.complex128(1 + 2j)
W = np.complex128(3 - 1j)
CT = np.complex128(1 + 0.5j)


def close(got, expected):
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-12, atol=1e-12)


def test_complex_exp_jvp_and_vjp_without_conjugation():
    close(xlapy.jvp(lax.exp, (Z,), (CT,))[1], CT * np.exp(Z))
    (ct,) = xlapy.vjp(lax.exp, Z)[1](CT)
    close(ct, CT * np.exp(Z))
    close(ct, -2.367067719759223 + 1.9061244801264121j)  # jax.vjp(lax.exp, z)[1](ct)


def test_complex_multiply_jvp_and_vjp_without_conjugation():
    close(xlapy.jvp(lax.mul, (Z, W), (CT, 2 * CT))[1], CT * W + 2 * CT * Z)
    cts = xlapy.vjp(lax.mul, Z, W)[1](CT)
    close(cts[0], 3.5 + 0.5j)   # jax: ct * w
    close(cts[1], 2.5j)         # jax: ct * z


def test_real_imag_complex_transposes():
    # jax: real -> complex(ct, 0), imag -> complex(0, -ct), complex -> (re ct, -im ct)
    close(xlapy.vjp(lax.real, Z)[1](np.float64(2.0))[0], 2 + 0j)
    close(xlapy.vjp(lax.imag, Z)[1](np.float64(2.0))[0], -2j)
    cts = xlapy.vjp(lax.complex, np.float64(1), np.float64(2))[1](np.complex128(3 + 4j))
    close(cts[0], 3.0)
    close(cts[1], -4.0)
    close(xlapy.jvp(lax.real, (Z,), (CT,))[1], 1.0)
    close(xlapy.jvp(lax.imag, (Z,), (CT,))[1], 0.5)
    close(xlapy.jvp(lax.complex, (np.float64(1), np.float64(2)),
                    (np.float64(3), np.float64(4)))[1], 3 + 4j)


def test_complex_abs():
    # jax.grad(lax.abs)(3+4j) == conj(z)/|z| == 0.6-0.8j; jvp takes the real part
    z = np.complex128(3 + 4j)
    close(xlapy.grad(lax.abs)(z), 0.6 - 0.8j)
    close(xlapy.jvp(lax.abs, (z,), (np.complex128(1 + 1j),))[1], 0.6 + 0.8)
    close(xlapy.grad(lax.abs)(np.complex128(0)), 0)


# --------------------------------------------------------------------- dtypes

DTYPE_OPS = [lax.sin, lax.exp, lax.tanh, lax.logistic, lax.sqrt, lax.log, lax.abs,
             lambda x: lax.pow(x, x), lambda x: lax.max(x, lax.mul(x, x)),
             lambda x: lax.div(x, lax.add(x, 1.0)), lambda x: lax.clamp(0.3, x, 0.6)]
DTYPE_IDS = ["sin", "exp", "tanh", "logistic", "sqrt", "log", "abs", "pow", "max", "div",
             "clamp"]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16],
                         ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("fn", DTYPE_OPS, ids=DTYPE_IDS)
def test_low_precision_gradients_keep_the_dtype(fn, dtype):
    x = np.array([0.5, 0.8, 1.5], dtype=dtype)

    def gradient(a):
        return pullback_of_ones(fn, a)[0]

    expected = gradient(x.astype(np.float64))
    for g in (gradient(x), xlapy.jit(gradient)(x)):
        assert np.dtype(g.dtype) == np.dtype(dtype)
        tol = 1e-5 if dtype is np.float32 else 3e-2
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(expected),
                                   rtol=tol, atol=tol)
    t = xlapy.jvp(fn, (x,), (np.ones_like(x),))[1]
    assert np.dtype(t.dtype) == np.dtype(dtype)


def test_complex64_gradient_keeps_the_dtype():
    z = np.complex64(1 + 2j)
    g = xlapy.grad(lambda a: lax.real(lax.exp(a)))(z)
    assert np.dtype(g.dtype) == np.complex64
    # jax: ∂f/∂x - i ∂f/∂y of e^x cos y, which is exp(z)
    np.testing.assert_allclose(np.complex128(g), np.exp(np.complex128(z)), rtol=1e-6)
