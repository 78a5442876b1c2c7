"""xnp elementwise math and promotion: every function against NumPy on
several shapes and dtypes, eagerly and under jit; JAX's dtype rules with weak
types; NumPy's flooring division; special values; hypothesis on broadcasting."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import xlapy
import xlapy.numpy as xnp
from tests.numpy.math_util import BF16, assert_close, both, check, sample
from xlapy import config
from xlapy.numpy import _promotion

F32, F64, F16 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16)
I32, I8, U8, B = np.dtype(np.int32), np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.bool_)
C64 = np.dtype(np.complex64)
SHAPES = [(), (7,), (2, 3)]


def _wide(np_fn):
    """np_fn computing integer and bool data in float64 (NumPy would pick
    float16 for uint8, losing the precision the comparison needs)."""
    def fn(*args):
        return np_fn(*[a.astype(np.float64) if np.asarray(a).dtype.kind in "iub" else a
                       for a in map(np.asarray, args)])

    return fn


def _inexact(dtype):
    """The dtype xnp computes math of `dtype` in (JAX: ints -> float32)."""
    return dtype if dtype.kind in "fc" or dtype == BF16 else F32


# -- unary functions ----------------------------------------------------------------------
# name, NumPy reference, (low, high) domain, dtypes beyond float32 and float64
UNARY = [
    ("exp", np.exp, (-5, 5), [F16, BF16, I32, U8, B, C64]),
    ("exp2", np.exp2, (-5, 5), [F16, I32]),
    ("expm1", np.expm1, (-2, 2), [BF16, I32]),
    ("log", np.log, (0.1, 20), [F16, BF16, U8, C64]),
    ("log2", np.log2, (0.1, 20), [I32, C64]),
    ("log10", np.log10, (0.1, 20), [F16, U8]),
    ("log1p", np.log1p, (-0.5, 5), [BF16, I32]),
    ("sqrt", np.sqrt, (0, 20), [F16, BF16, I32, U8, C64]),
    ("cbrt", np.cbrt, (-20, 20), [I32]),
    ("sin", np.sin, (-4, 4), [F16, BF16, I32, B, C64]),
    ("cos", np.cos, (-4, 4), [F16, I8, C64]),
    ("tan", np.tan, (-1.2, 1.2), [I32]),
    ("arcsin", np.arcsin, (-0.95, 0.95), [F16]),
    ("arccos", np.arccos, (-0.95, 0.95), [BF16]),
    ("arctan", np.arctan, (-5, 5), [I32]),
    ("sinh", np.sinh, (-3, 3), [I8]),
    ("cosh", np.cosh, (-3, 3), [F16]),
    ("tanh", np.tanh, (-3, 3), [BF16, I32, C64]),
    ("arcsinh", np.arcsinh, (-5, 5), [I32]),
    ("arccosh", np.arccosh, (1.1, 10), [U8]),
    ("arctanh", np.arctanh, (-0.9, 0.9), [F16]),
    ("deg2rad", np.deg2rad, (-360, 360), [I32]),
    ("rad2deg", np.rad2deg, (-4, 4), [I32]),
    ("sinc", np.sinc, (-3, 3), [I32]),
    ("reciprocal", np.reciprocal, (0.5, 5), [I32, C64]),
]


@pytest.mark.parametrize("shape", [(), (2, 3)])
@pytest.mark.parametrize("name, np_fn, domain, extra", UNARY, ids=[u[0] for u in UNARY])
def test_unary_inexact(name, np_fn, domain, extra, shape):
    for dtype in [F32, F64, *extra]:
        x = sample(shape, dtype, *domain)
        check(getattr(xnp, name), _wide(np_fn), x, dtype=_inexact(dtype))


def test_weak_scalar_math_stays_weak_float32():
    out = xnp.sin(2)
    assert out.dtype == F32 and out.weak_type
    assert xnp.sqrt(xnp.float16(4)).dtype == F16
    assert xnp.exp(np.int64(1)).dtype == F32  # NumPy's int64 is int32 without x64
    with config.enable_x64(True):
        assert xnp.exp(np.int64(1)).dtype == F64  # with x64, int64 computes in float64
        assert xnp.sin(2).dtype == F64 and xnp.sin(2).weak_type
        assert xnp.sqrt(xnp.ones(2, np.int32)).dtype == F32   # as JAX with x64


# Functions keeping the dtype: name, reference, domain, dtypes
SAME_DTYPE = [
    ("negative", np.negative, [F32, F64, F16, BF16, I32, U8, I8, C64]),
    ("positive", np.positive, [F32, I32, U8, C64]),
    ("abs", np.abs, [F32, F64, F16, BF16, I32, U8, I8, B]),
    ("absolute", np.absolute, [F32, I8]),
    ("sign", np.sign, [F32, F64, I32, I8, U8, C64]),
    ("square", np.square, [F32, F64, I32, U8, C64]),
    ("floor", np.floor, [F32, F64, F16, BF16, I32, U8, B]),
    ("ceil", np.ceil, [F32, F64, BF16, I32]),
    ("trunc", np.trunc, [F32, F64, I32]),
    ("fix", np.fix, [F32, F64, I8]),
    ("round", np.round, [F32, F64, F16, I32]),
    ("around", np.around, [F32]),
    ("conjugate", np.conjugate, [F32, I32, C64, np.dtype(np.complex128)]),
    ("conj", np.conj, [C64]),
    ("real", np.real, [F32, I32]),
    ("imag", np.imag, [F32, I32]),
    ("invert", np.invert, [I32, U8, I8, B]),
    ("bitwise_not", np.bitwise_not, [I32, B]),
    ("logical_not", np.logical_not, [F32, I32, B]),
    ("nan_to_num", np.nan_to_num, [F32, F64, I32, C64]),
]


@pytest.mark.parametrize("shape", [(), (2, 3)])
@pytest.mark.parametrize("name, np_fn, dtypes", SAME_DTYPE, ids=[s[0] for s in SAME_DTYPE])
def test_unary_same_dtype(name, np_fn, dtypes, shape):
    for dtype in dtypes:
        x = sample(shape, dtype, -5, 5)
        expected = B if name == "logical_not" else dtype
        check(getattr(xnp, name), np_fn, x, dtype=expected)


def test_complex_magnitude_and_parts_are_real():
    z = sample((4,), C64)
    check(xnp.abs, np.abs, z, dtype=F32)
    check(xnp.real, np.real, z, dtype=F32)
    check(xnp.imag, np.imag, z, dtype=F32)
    check(xnp.angle, np.angle, z, dtype=F32)
    check(lambda v: xnp.angle(v, deg=True), lambda v: np.angle(v, deg=True), z, dtype=F32)
    check(xnp.angle, np.angle, sample((3,), I32), dtype=F32)


def test_square_and_power_of_bool_are_int32():
    x = np.array([True, False])
    assert xnp.square(x).dtype == I32
    assert xnp.floor_divide(x, x).dtype == I32


def test_bool_arithmetic_follows_numpy():
    x, y = np.array([True, True, False]), np.array([True, False, False])
    check(xnp.add, np.add, x, y, dtype=B)
    check(xnp.multiply, np.multiply, x, y, dtype=B)
    for fn in (xnp.subtract, xnp.negative):
        with pytest.raises(TypeError, match="bool"):
            fn(x, y) if fn is xnp.subtract else fn(x)


# -- rounding -----------------------------------------------------------------------------
TIES = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49999997, -0.0, 7.25])


@pytest.mark.parametrize("dtype", [F32, F64, F16])
def test_rounding_ties_to_even(dtype):
    x = TIES.astype(dtype)
    for name in ("round", "rint", "floor", "ceil", "trunc", "fix"):
        check(getattr(xnp, name), getattr(np, name), x, dtype=dtype)


@pytest.mark.parametrize("decimals", [1, 2, -1, -2])
def test_round_decimals(decimals):
    x = np.array([1.25, 2.675, -3.14159, 1234.5678, -55.5, 0.0], np.float64)
    check(lambda v: xnp.round(v, decimals), lambda v: np.round(v, decimals), x)
    ints = np.array([1250, -1350, 1249, 150, 250, -250, 7, 0, 32767], np.int32)
    check(lambda v: xnp.round(v, decimals), lambda v: np.round(v, decimals), ints, dtype=I32)


def test_rint_of_ints_is_float():
    check(xnp.rint, np.rint, np.arange(-3, 4, dtype=np.int32), dtype=F32)


# -- binary arithmetic --------------------------------------------------------------------
PAIRS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1), (1, 3)), ((), (5,))]
BINARY = [
    ("add", np.add, [F32, F64, F16, BF16, I32, U8, C64]),
    ("subtract", np.subtract, [F32, F64, BF16, I32, U8, I8, C64]),
    ("multiply", np.multiply, [F32, F64, F16, I32, U8, C64]),
    ("maximum", np.maximum, [F32, F64, I32, U8, B]),
    ("minimum", np.minimum, [F32, BF16, I32, I8]),
    ("fmax", np.fmax, [F32, I32]),
    ("fmin", np.fmin, [F64, U8]),
    ("equal", np.equal, [F32, I32, B, C64]),
    ("not_equal", np.not_equal, [F32, U8, C64]),
    ("less", np.less, [F32, I32, U8, C64]),
    ("less_equal", np.less_equal, [F64, I8, C64]),
    ("greater", np.greater, [F32, I32, B, C64]),
    ("greater_equal", np.greater_equal, [F16, I32, C64]),
    ("logical_and", np.logical_and, [F32, I32, B]),
    ("logical_or", np.logical_or, [F32, U8, B]),
    ("logical_xor", np.logical_xor, [I32, B]),
    ("bitwise_and", np.bitwise_and, [I32, U8, B]),
    ("bitwise_or", np.bitwise_or, [I8, U8, B]),
    ("bitwise_xor", np.bitwise_xor, [I32, B]),
]
_BOOL_RESULT = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                "logical_and", "logical_or", "logical_xor"}


@pytest.mark.parametrize("shapes", PAIRS, ids=str)
@pytest.mark.parametrize("name, np_fn, dtypes", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name, np_fn, dtypes, shapes):
    for dtype in dtypes:
        x = sample(shapes[0], dtype, -4, 4, seed=1)
        y = sample(shapes[1], dtype, -4, 4, seed=2)
        if dtype.kind == "c":  # ties in the real part exercise the lexicographic order
            y = np.where(np.arange(y.size).reshape(y.shape) % 2 == 0,
                         np.real(np.broadcast_to(x, np.broadcast_shapes(x.shape, y.shape))
                                 .reshape(-1)[:y.size].reshape(y.shape)) + 1j * np.imag(y),
                         y).astype(dtype)
        check(getattr(xnp, name), np_fn, x, y, dtype=B if name in _BOOL_RESULT else dtype)


INEXACT_BINARY = [
    ("true_divide", np.true_divide, (0.5, 4)),
    ("divide", np.divide, (0.5, 4)),
    ("arctan2", np.arctan2, (-3, 3)),
    ("hypot", np.hypot, (-3, 3)),
    ("logaddexp", np.logaddexp, (-30, 30)),
    ("logaddexp2", np.logaddexp2, (-30, 30)),
    ("copysign", np.copysign, (-3, 3)),
    ("float_power", np.float_power, (0.5, 3)),
    ("heaviside", np.heaviside, (-2, 2)),
]


@pytest.mark.parametrize("name, np_fn, domain", INEXACT_BINARY, ids=[b[0] for b in INEXACT_BINARY])
def test_binary_inexact(name, np_fn, domain):
    for dtype in (F32, F64, I32, BF16):
        x = sample((2, 3), dtype, *domain, seed=3)
        y = sample((3,), dtype, *domain, seed=4)
        if name == "heaviside":
            x = np.where(np.arange(6).reshape(2, 3) % 3 == 0, 0, x).astype(dtype)
        check(getattr(xnp, name), _wide(np_fn), x, y, dtype=_inexact(dtype), scale=2)


def test_true_divide_of_ints_is_float32():
    out = check(xnp.true_divide, np.true_divide, np.arange(1, 7, dtype=np.int32),
                np.int32(4), dtype=F32)
    assert not out.weak_type


@pytest.mark.parametrize("dtype", [I32, I8, F32, F64])
def test_floor_divide_and_remainder_signs(dtype):
    grid = np.array([-7, -6, -5, -1, 0, 1, 5, 6, 7], dtype)
    x, y = np.meshgrid(grid, np.array([-3, -2, 2, 3], dtype))
    x, y = x.astype(dtype), y.astype(dtype)
    check(xnp.floor_divide, np.floor_divide, x, y, dtype=dtype)
    check(xnp.remainder, np.remainder, x, y, dtype=dtype)
    check(xnp.mod, np.mod, x, y, dtype=dtype)
    check(xnp.fmod, np.fmod, x, y, dtype=dtype)
    check(xnp.divmod, np.divmod, x, y, dtype=dtype)
    check(lambda a, b: a // b, lambda a, b: a // b, x, y, dtype=dtype)
    check(lambda a, b: a % b, lambda a, b: a % b, x, y, dtype=dtype)


def test_float_floor_divide_fractions():
    x = sample((20,), F32, -10, 10, seed=5)
    y = sample((20,), F32, 0.3, 3, seed=6) * np.where(np.arange(20) % 2, 1, -1).astype(F32)
    check(xnp.floor_divide, np.floor_divide, x, y)
    check(xnp.remainder, np.remainder, x, y)
    check(xnp.divmod, np.divmod, x, y)


def test_unsigned_floor_divide_and_remainder():
    x, y = sample((10,), U8, 0, 255, seed=7), sample((10,), U8, 1, 20, seed=8)
    check(xnp.floor_divide, np.floor_divide, x, y, dtype=U8)
    check(xnp.remainder, np.remainder, x, y, dtype=U8)


def test_integer_division_by_zero_follows_jax():
    x = np.array([5, -5, 0], np.int32)
    zero = np.zeros(3, np.int32)
    for fn in (lambda a, b: a // b, xnp.remainder, xnp.fmod):
        eager, jitted = both(fn, x, zero)
        np.testing.assert_array_equal(eager[0], jitted[0])
    np.testing.assert_array_equal(xnp.floor_divide(x, zero), [-2, -2, -1])  # as JAX on XLA
    np.testing.assert_array_equal(xnp.remainder(x, zero), [0, 0, 0])  # as NumPy and JAX
    np.testing.assert_array_equal(xnp.fmod(x, zero), [0, 0, 0])


def test_complex_floor_divide_is_refused():
    with pytest.raises(TypeError, match="complex"):
        xnp.floor_divide(np.ones(2, np.complex64), 2)


@pytest.mark.parametrize("dtype", [F32, F64, I32, U8, C64])
def test_power(dtype):
    x = sample((2, 3), dtype, 0, 4, seed=9)
    for exponent in (0, 1, 2, 3, 5):
        check(lambda v, e=exponent: v ** e, lambda v, e=exponent: v ** e, x, dtype=dtype)
    y = sample((3,), dtype if dtype.kind != "c" else F32, 0, 3, seed=10)
    check(xnp.power, lambda a, b: np.power(a, b.astype(a.dtype)), x, y, dtype=dtype, scale=4)


def test_power_special_forms():
    check(lambda v: v ** -2, lambda v: v ** -2.0, sample((4,), F32, 0.5, 3))
    check(lambda v: 2 ** v, lambda v: 2 ** v, np.arange(6, dtype=np.int32), dtype=I32)
    check(lambda v: v ** 2.0, lambda v: v ** 2.0, np.arange(4, dtype=np.int32), dtype=F32)
    check(xnp.power, np.power, np.array([True, False]), np.array([False, True]))
    np.testing.assert_array_equal(xnp.power(np.array([2, 1, -1], np.int32), -1), [0, 1, 0])


@pytest.mark.parametrize("dtype", [I32, U8, I8])
def test_shifts(dtype):
    x = sample((2, 4), dtype, -100, 100, seed=11)
    bits = np.iinfo(dtype).bits
    y = np.array([0, 1, 3, bits - 1], dtype)
    check(xnp.left_shift, np.left_shift, x, y, dtype=dtype)
    check(xnp.right_shift, np.right_shift, x, y, dtype=dtype)
    check(lambda a, b: (a << b, a >> b), lambda a, b: (a << b, a >> b), x, y)


def test_bitwise_of_floats_is_refused():
    with pytest.raises(TypeError, match="integer"):
        xnp.bitwise_and(np.ones(2, np.float32), 1)


def test_gcd_lcm():
    x = np.array([[12, -18, 0, 7, 100], [1, 0, 35, -49, 64]], np.int32)
    y = np.array([8, 12, 5, 0, -36], np.int32)
    check(xnp.gcd, np.gcd, x, y, dtype=I32)
    check(xnp.lcm, np.lcm, x, y, dtype=I32)
    check(xnp.gcd, np.gcd, x.astype(np.uint8) % 60, y.astype(np.uint8) % 60)
    with pytest.raises(TypeError):
        xnp.gcd(1.5, 2)


# -- special values -----------------------------------------------------------------------
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5, 1e-45, -np.nan])


@pytest.mark.parametrize("dtype", [F32, F64, F16, BF16])
def test_classification(dtype):
    x = SPECIAL.astype(dtype)
    for name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit"):
        check(getattr(xnp, name), getattr(np, name), x, dtype=B)


@pytest.mark.parametrize("dtype", [I32, U8, B])
def test_classification_of_integers(dtype):
    x = sample((5,), dtype, -3, 3)
    for name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit"):
        check(getattr(xnp, name), getattr(np, name), x, dtype=B)


def test_classification_of_complex():
    z = np.array([1 + 1j, np.nan + 0j, 1j * np.inf, 0], np.complex64)
    for name in ("isnan", "isinf", "isfinite"):
        check(getattr(xnp, name), getattr(np, name), z, dtype=B)


def test_nan_propagation_and_fmax():
    x = np.array([np.nan, 1.0, np.nan, -0.0], np.float32)
    y = np.array([1.0, np.nan, np.nan, 2.0], np.float32)
    for name in ("maximum", "minimum", "fmax", "fmin", "logaddexp", "hypot", "copysign"):
        check(getattr(xnp, name), getattr(np, name), x, y)
    inf = np.array([np.inf, -np.inf, np.inf, 3.0], np.float32)
    for name in ("logaddexp", "logaddexp2", "hypot"):
        check(getattr(xnp, name), getattr(np, name), inf, inf[::-1].copy())


@pytest.mark.parametrize("dtype", [F32, F64, F16])
def test_nextafter(dtype):
    x = np.array([0.0, -0.0, 1.0, -1.0, 1e-3, np.inf, np.nan, 2.0, 5.0], dtype)
    y = np.array([1.0, -1.0, 2.0, 0.0, -1.0, 0.0, 1.0, np.nan, 5.0], dtype)
    out = check(xnp.nextafter, np.nextafter, x, y, dtype=dtype)
    np.testing.assert_array_equal(np.asarray(out)[:6], np.nextafter(x, y)[:6])


def test_nan_to_num_options():
    x = SPECIAL.astype(np.float32)
    check(lambda v: xnp.nan_to_num(v, nan=-1.0, posinf=9.0, neginf=-9.0),
          lambda v: np.nan_to_num(v, nan=-1.0, posinf=9.0, neginf=-9.0), x)
    z = np.array([complex(np.nan, np.inf), complex(-np.inf, 1)], np.complex64)
    check(xnp.nan_to_num, np.nan_to_num, z)


def test_isclose_family():
    a = np.array([1.0, 1.0 + 1e-6, np.nan, np.inf, -np.inf, 1e10, 0.0], np.float32)
    b = np.array([1.0, 1.0, np.nan, np.inf, np.inf, 1.00001e10, 1e-9], np.float32)
    check(xnp.isclose, np.isclose, a, b, dtype=B)
    check(lambda u, v: xnp.isclose(u, v, equal_nan=True),
          lambda u, v: np.isclose(u, v, equal_nan=True), a, b)
    check(lambda u, v: xnp.isclose(u, v, rtol=0.0, atol=0.5),
          lambda u, v: np.isclose(u, v, rtol=0.0, atol=0.5), a, b)
    check(xnp.isclose, np.isclose, np.arange(4, dtype=np.int32), np.int32(2))
    assert bool(xnp.allclose(a[:2], b[:2])) and not bool(xnp.allclose(a, b))
    assert bool(xnp.allclose(a, a, equal_nan=True))
    check(xnp.allclose, np.allclose, a[:2], b[:2], dtype=B)


def test_array_equal_and_equiv():
    x = np.arange(6).reshape(2, 3)
    assert bool(xnp.array_equal(x, x.copy()))
    assert not bool(xnp.array_equal(x, x[:1]))
    assert not bool(xnp.array_equal(x, x + 1))
    nan = np.array([np.nan, 1.0])
    assert not bool(xnp.array_equal(nan, nan)) and bool(xnp.array_equal(nan, nan, True))
    assert bool(xnp.array_equiv(x[:1] * 0 + 1, np.ones((4, 2, 3))))
    assert not bool(xnp.array_equiv(x, np.ones(4)))
    check(xnp.array_equal, np.array_equal, x, x, dtype=B)
    check(xnp.array_equiv, np.array_equiv, x[0], x, dtype=B)


# -- where, clip, astype ------------------------------------------------------------------
def test_where_three_arguments():
    c = sample((2, 3), B)
    x = sample((2, 3), F32)
    check(xnp.where, np.where, c, x, np.float32(0.5))
    check(xnp.where, np.where, c[0], sample((4, 1, 3), I32), sample((3,), I32), dtype=I32)
    check(lambda cond, v: xnp.where(cond, v, 2), lambda cond, v: np.where(cond, v, 2),
          sample((5,), I32), sample((5,), I8), dtype=I8)
    out = xnp.where(True, 1, 2.0)
    assert out.dtype == F32 and out.weak_type
    with pytest.raises(ValueError):
        xnp.where(c, x)


def test_where_one_argument_is_nonzero():
    (rows, cols) = xnp.where(np.array([[1, 0], [0, 3]]))
    np.testing.assert_array_equal(rows, [0, 1])
    np.testing.assert_array_equal(cols, [0, 1])


def test_clip():
    x = sample((3, 4), F32)
    check(lambda v: xnp.clip(v, -1.0, 2.0), lambda v: np.clip(v, -1.0, 2.0), x)
    check(lambda v: xnp.clip(v, max=0.5), lambda v: np.clip(v, None, 0.5), x)
    check(lambda v, lo: xnp.clip(v, lo), lambda v, lo: np.clip(v, lo, None), x,
          sample((4,), F32))
    check(lambda v: v.clip(1, 3), lambda v: v.clip(1, 3), sample((5,), I32, 0, 5), dtype=I32)
    out = xnp.clip(np.arange(3, dtype=np.int32), 0.5, 1.5)  # JAX: the bounds promote
    assert out.dtype == F32
    np.testing.assert_array_equal(out, [0.5, 1.0, 1.5])
    check(lambda v: xnp.clip(v, a_min=0, a_max=1), lambda v: np.clip(v, 0, 1), x)


@pytest.mark.parametrize("dtype", [F32, I32, U8, B, F16, BF16, C64])
def test_astype(dtype):
    x = sample((2, 3), F32, -3, 300, seed=12)
    if dtype.kind in "iu":
        x = np.clip(x, np.iinfo(dtype).min, np.iinfo(dtype).max).astype(np.float32)
    check(lambda v: xnp.astype(v, dtype), lambda v: v.astype(dtype), x, dtype=dtype)
    check(lambda v: v.astype(dtype), lambda v: v.astype(dtype), x, dtype=dtype)


def test_astype_complex_to_real_keeps_real_part():
    z = np.array([1.5 + 2j, -3 - 1j], np.complex64)
    np.testing.assert_array_equal(xnp.astype(z, np.float32), [1.5, -3.0])


# -- promotion with weak types ------------------------------------------------------------
def test_weak_types_keep_the_array_dtype():
    h = xnp.ones(3, xnp.float16)
    assert (h * 2).dtype == F16 and (2 * h).dtype == F16 and (h + 0.5).dtype == F16
    assert (xnp.float16(1) + 1.0).dtype == F16
    out = xnp.arange(3, dtype=xnp.int32) + 2.5
    assert out.dtype == F32 and out.weak_type
    assert (xnp.ones(2, xnp.uint8) + 1).dtype == U8
    assert (xnp.ones(2, xnp.int8) * 3).dtype == I8
    assert (xnp.ones(2, BF16) - 1.0).dtype == BF16
    assert (xnp.ones(2, np.float32) * 1j).dtype == C64
    with config.enable_x64(True):
        assert (xnp.ones(2, np.float64) + 1j).dtype == np.complex128
        assert (xnp.ones(2, np.float32) + 1.5).dtype == F32


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
def test_strong_types_promote_on_the_jax_lattice(x64):
    cases = [(I32, F32, F32), (U8, I8, np.int16), (BF16, F16, F32),
             (I32, np.uint32, np.int64 if x64 else I32),   # JAX forms no 64-bit type without x64
             (F16, I32, F16), (B, U8, U8), (F32, C64, C64)]
    if x64:
        cases.append((F64, C64, np.complex128))
    with config.enable_x64(x64):
        for a, b, want in cases:
            x, y = xnp.ones(2, a), xnp.ones(2, b)
            assert (x + y).dtype == np.dtype(want), (a, b)
            assert xnp.promote_types(a, b) == np.dtype(want)
            assert xnp.result_type(x, y) == np.dtype(want)


def test_python_scalars_convert_without_rounding_through_float32():
    with config.enable_x64(True):
        x = np.ones(1, np.float64)
        np.testing.assert_array_equal(xnp.add(x, 0.1), x + 0.1)
        np.testing.assert_array_equal(xnp.multiply(np.ones(1, np.int64), 2 ** 40), [2 ** 40])


def test_weak_types_under_jit():
    f = xlapy.jit(lambda v: (v * 2, v + 2.5, xnp.sin(v)))
    doubled, shifted, sine = f(np.ones(3, np.float16))
    assert doubled.dtype == F16 and shifted.dtype == F16 and sine.dtype == F16
    doubled, shifted, sine = f(np.ones(3, np.int32))
    assert doubled.dtype == I32 and shifted.dtype == F32 and sine.dtype == F32


# -- dtype utilities ----------------------------------------------------------------------
def test_scalar_types():
    x = xnp.float32(1.5)
    assert x.dtype == F32 and not x.weak_type and x.shape == ()
    assert np.dtype(xnp.bfloat16) == BF16
    assert xnp.zeros(2, xnp.int8).dtype == I8
    assert xnp.float32 == np.float32 and xnp.float32 == F32
    assert isinstance(np.float32(1), xnp.float32)
    assert xnp.bool_(1).dtype == B and xnp.bool is xnp.bool_
    assert xnp.uint8(np.array([300.0, 2.0])).dtype == U8
    assert xnp.dtype("float32") == F32


def test_dtype_queries():
    assert xnp.issubdtype(xnp.bfloat16, xnp.floating)
    assert xnp.issubdtype(BF16, xnp.inexact)
    assert not xnp.issubdtype(BF16, xnp.integer)
    assert xnp.issubdtype(np.uint8, xnp.unsignedinteger)
    assert xnp.issubdtype(np.float32, np.float32)
    assert xnp.isdtype(np.int8, "signed integer") and xnp.isdtype(BF16, "real floating")
    assert xnp.isdtype(np.complex64, ("bool", "complex floating"))
    assert not xnp.isdtype(np.uint8, "signed integer")
    assert xnp.can_cast(np.int8, np.int32) and not xnp.can_cast(np.float32, np.int32)
    assert xnp.finfo(xnp.bfloat16).bits == 16
    assert xnp.finfo(np.complex64).dtype == F32
    assert xnp.iinfo(xnp.int8).max == 127
    assert xnp.result_type(1, 2.0) == F32 and xnp.result_type(xnp.int8, 1) == I8
    assert xnp.result_type(float) == F32
    assert xnp.pi == np.pi and xnp.newaxis is None and np.isnan(xnp.nan)


# -- promotion helpers and broadcasting ---------------------------------------------------
def test_promote_args_helpers():
    x, y = _promotion.promote_args("f", np.ones((2, 1), np.int8), 3)
    assert x.shape == y.shape == (2, 1) and x.dtype == y.dtype == I8
    (z,) = _promotion.promote_args_inexact("f", np.arange(3, dtype=np.uint8))
    assert z.dtype == F32
    assert _promotion.canonicalize_axis(-1, 3) == 2
    assert _promotion.canonicalize_axes((-1, 0), 3) == (0, 2)
    with pytest.raises(ValueError, match="out of bounds"):
        _promotion.canonicalize_axis(3, 3)
    with pytest.raises(ValueError, match="repeated"):
        _promotion.canonicalize_axes((0, -3), 3)
    with pytest.raises(TypeError, match="argument 1"):
        xnp.add(1, object())


def test_broadcast_errors():
    with pytest.raises(ValueError, match="broadcast"):
        xnp.add(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="broadcast"):
        xnp.broadcast_to(np.ones(3), (4, 2))


@given(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4, max_side=3))
def test_broadcasting_hypothesis(shapes):
    a, b, c = (sample(s, F32, seed=i) for i, s in enumerate(shapes.input_shapes))
    assert xnp.broadcast_shapes(*shapes.input_shapes) == shapes.result_shape
    out = xnp.add(xnp.multiply(a, b), c)
    np.testing.assert_allclose(out, a * b + c, rtol=1e-6)
    for got, want in zip(xnp.broadcast_arrays(a, b, c), np.broadcast_arrays(a, b, c)):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(xnp.broadcast_to(a, shapes.result_shape),
                                  np.broadcast_to(a, shapes.result_shape))


@given(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
       st.sampled_from(["where", "maximum", "floor_divide", "less"]))
def test_broadcasting_under_jit_hypothesis(shapes, name):
    x = sample(shapes.input_shapes[0], I32, -5, 5, seed=1)
    y = sample(shapes.input_shapes[1], I32, 1, 5, seed=2)
    if name == "where":
        check(lambda u, v: xnp.where(u > 0, u, v), lambda u, v: np.where(u > 0, u, v), x, y)
    else:
        check(getattr(xnp, name), getattr(np, name), x, y)


_TYPED = st.one_of(st.tuples(st.sampled_from([F64, F16, BF16, U8, I8, C64]), st.just(False)),
                   st.tuples(st.sampled_from([F32, I32, B]), st.booleans()))


@given(_TYPED, _TYPED)
def test_promotion_matches_the_core_lattice(typed_a, typed_b):
    """Weak values are of the default types (what Python scalars become)."""
    from xlapy.core import dtypes

    (a, weak_a), (b, weak_b) = typed_a, typed_b
    want = dtypes.promote_types((a, weak_a), (b, weak_b))
    x = _promotion.convert(np.ones(2, a), a, weak_a)
    y = _promotion.convert(np.ones(2, b), b, weak_b)
    for out in _promotion.promote_args("f", x, y):
        assert (out.dtype, out.weak_type) == want


def test_ml_dtypes_bf16_values():
    x = np.array([1.5, -2.25, 3.0], ml_dtypes.bfloat16)
    assert_close(xnp.multiply(x, 2), x.astype(np.float32) * 2, BF16)


def test_lowered_hlo_parses_back():
    from xlapy import hlo

    def f(a, b):
        return (xnp.floor_divide(a, b) + xnp.hypot(a, 2.0) * xnp.sign(b),
                xnp.where(a > b, xnp.nextafter(a, b), xnp.round(b, 1)),
                xnp.gcd(xnp.astype(a, np.int32), 6))

    text = xlapy.jit(f).lower(sample((3, 4), F32), sample((4,), F32, 1, 3)).as_text()
    assert hlo.parse(text).to_text(short=True) == text


def test_constants():
    assert xnp.e == np.e and xnp.inf == np.inf and xnp.euler_gamma == np.euler_gamma
    x = xnp.ones((2, 3))
    assert x[:, xnp.newaxis].shape == (2, 1, 3)
