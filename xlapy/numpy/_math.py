"""`xnp` elementwise functions composed of several lax ops: extrema with
NaN rules, clipping, floating-point classification and bit-level helpers,
complex parts, stable log-sum-exp pairs, tolerance comparisons, gcd/lcm,
and the three-argument `where`.

Each follows jax.numpy's formula, so results match JAX's, which match
NumPy's within rounding.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from xlapy.core import dtypes
from xlapy.core.trace import Array, as_array, with_weak_type
from xlapy.lax import primitives as lax
from xlapy.numpy._arithmetic import absolute, floor_divide
from xlapy.numpy._promotion import (
    broadcast_arrays,
    broadcast_shapes,
    constant_like,
    full_like_of,
    promote_args,
    promote_args_inexact,
    promote_args_numeric,
    promote_dtypes,
    promote_dtypes_inexact,
    real_dtype,
)
from xlapy.numpy._sorting import nonzero
from xlapy.numpy._ufuncs import greater, less


def _bools_like(x: Array, value: bool) -> Array:
    return lax.broadcast_in_dim(as_array(np.bool_(value)), x.shape, ())


def _real_only(name: str, x: Array) -> None:
    if x.dtype.kind == "c":
        raise TypeError(f"xnp.{name} does not accept complex operands ({x.dtype})")


def _all(x: Array) -> Array:
    return lax.reduce_and(x, tuple(range(x.ndim)))


# -- extrema ------------------------------------------------------------------------------
def maximum(x, y, /) -> Array:
    """The larger of `x` and `y`; NaN if either is NaN (complex: lexicographic)."""
    x, y = promote_args("maximum", x, y)
    if x.dtype.kind == "c":
        return lax.select(greater(x, y), x, y)
    return lax.max(x, y)


def minimum(x, y, /) -> Array:
    """The smaller of `x` and `y`; NaN if either is NaN (complex: lexicographic)."""
    x, y = promote_args("minimum", x, y)
    if x.dtype.kind == "c":
        return lax.select(less(x, y), x, y)
    return lax.min(x, y)


def fmax(x1, x2, /) -> Array:
    """The larger of `x1` and `x2`, ignoring a NaN unless both are NaN."""
    x1, x2 = promote_args("fmax", x1, x2)
    return lax.select(lax.bitwise_or(greater(x1, x2), isnan(x2)), x1, x2)


def fmin(x1, x2, /) -> Array:
    """The smaller of `x1` and `x2`, ignoring a NaN unless both are NaN."""
    x1, x2 = promote_args("fmin", x1, x2)
    return lax.select(lax.bitwise_or(less(x1, x2), isnan(x2)), x1, x2)


def clip(arr, /, min=None, max=None, *, a_min=None, a_max=None) -> Array:  # noqa: A002
    """`arr` limited to [min, max] (either may be None); `maximum(min, arr)`
    then `minimum(max, arr)`, so the bounds take part in promotion."""
    low = min if min is not None else a_min
    high = max if max is not None else a_max
    arr = as_array(arr)
    if low is not None:
        arr = maximum(low, arr)
    if high is not None:
        arr = minimum(high, arr)
    return arr


# -- classification -----------------------------------------------------------------------
def isnan(x, /) -> Array:
    """True where `x` is NaN (never for integers)."""
    (x,) = promote_args("isnan", x)
    if x.dtype.kind in "iub":
        return _bools_like(x, False)
    return lax.ne(x, x)


def isinf(x, /) -> Array:
    """True where `x` is +-inf (complex: either part)."""
    (x,) = promote_args("isinf", x)
    if x.dtype.kind in "iub":
        return _bools_like(x, False)
    if x.dtype.kind == "c":
        return lax.bitwise_or(isinf(lax.real(x)), isinf(lax.imag(x)))
    return lax.eq(lax.abs(x), constant_like(x, np.inf))


def isfinite(x, /) -> Array:
    """True where `x` is neither infinite nor NaN (complex: both parts)."""
    (x,) = promote_args("isfinite", x)
    if x.dtype.kind in "iub":
        return _bools_like(x, True)
    if x.dtype.kind == "c":
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.is_finite(x)


def _signed_inf(name: str, x, value: float) -> Array:
    (x,) = promote_args(name, x)
    _real_only(name, x)
    if x.dtype.kind in "iub":
        return _bools_like(x, False)
    return lax.eq(x, constant_like(x, value))


def isposinf(x, /) -> Array:
    """True where `x` is +inf."""
    return _signed_inf("isposinf", x, np.inf)


def isneginf(x, /) -> Array:
    """True where `x` is -inf."""
    return _signed_inf("isneginf", x, -np.inf)


def _bits_type(dtype) -> np.dtype:
    return np.dtype(f"int{np.dtype(dtype).itemsize * 8}")


def signbit(x, /) -> Array:
    """True where the sign bit is set: negative numbers, -0.0 and -NaN."""
    (x,) = promote_args("signbit", x)
    _real_only("signbit", x)
    if x.dtype.kind in "ub":
        return _bools_like(x, False)
    if x.dtype.kind == "i":
        return lax.lt(x, constant_like(x, 0))
    bits = lax.bitcast_convert_type(x, _bits_type(x.dtype))
    return lax.lt(bits, constant_like(bits, 0))


def copysign(x1, x2, /) -> Array:
    """|x1| with the sign bit of `x2`."""
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    _real_only("copysign", x1)
    magnitude = lax.abs(x1)
    return lax.select(signbit(x2), lax.neg(magnitude), magnitude)


def nextafter(x1, x2, /) -> Array:
    """The next representable value after `x1` toward `x2`, stepping the bit
    pattern (subnormals included)."""
    x1, x2 = promote_args_inexact("nextafter", x1, x2)
    _real_only("nextafter", x1)
    int_type = _bits_type(x1.dtype)
    bits = lax.bitcast_convert_type(x1, int_type)
    zero = constant_like(x1, 0)
    # Adding one to the raw bits grows the magnitude for either sign.
    away_from_zero = lax.eq(lax.gt(x2, x1), lax.gt(x1, zero))
    one = constant_like(bits, 1)
    stepped = lax.select(away_from_zero, lax.add(bits, one), lax.sub(bits, one))
    sign_mask = constant_like(bits, np.iinfo(int_type).min)
    sign_of_x2 = lax.bitwise_and(lax.bitcast_convert_type(x2, int_type), sign_mask)
    tiniest = lax.bitcast_convert_type(lax.bitwise_or(sign_of_x2, one), x1.dtype)
    result = lax.bitcast_convert_type(stepped, x1.dtype)
    result = lax.select(lax.eq(x1, zero), tiniest, result)
    result = lax.select(lax.eq(x1, x2), x2, result)
    either_nan = lax.bitwise_or(isnan(x1), isnan(x2))
    return lax.select(either_nan, constant_like(x1, np.nan), result)


# -- exponent sums, hypotenuse, angles ----------------------------------------------------
def logaddexp(x1, x2, /) -> Array:
    """log(exp(x1) + exp(x2)) without overflow: max + log1p(exp(-|x1 - x2|))."""
    x1, x2 = promote_args_inexact("logaddexp", x1, x2)
    _real_only("logaddexp", x1)
    delta = lax.sub(x1, x2)
    tail = lax.log1p(lax.exp(lax.neg(lax.abs(delta))))
    # delta is NaN for NaN inputs and for infinities of one sign, where x1 + x2 is right.
    return lax.select(lax.ne(delta, delta), lax.add(x1, x2), lax.add(lax.max(x1, x2), tail))


def logaddexp2(x1, x2, /) -> Array:
    """log2(2**x1 + 2**x2) without overflow."""
    x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
    _real_only("logaddexp2", x1)
    delta = lax.sub(x1, x2)
    power = lax.pow(constant_like(x1, 2), lax.neg(lax.abs(delta)))
    tail = lax.div(lax.log1p(power), constant_like(x1, math.log(2)))
    return lax.select(lax.ne(delta, delta), lax.add(x1, x2), lax.add(lax.max(x1, x2), tail))


def hypot(x1, x2, /) -> Array:
    """sqrt(x1**2 + x2**2) without overflow or underflow: big * sqrt(1 + (small/big)**2)."""
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    _real_only("hypot", x1)
    a, b = lax.abs(x1), lax.abs(x2)
    big, small = lax.max(a, b), lax.min(a, b)
    zero, one = constant_like(big, 0), constant_like(big, 1)
    is_zero = lax.eq(big, zero)
    ratio = lax.div(small, lax.select(is_zero, one, big))
    result = lax.select(is_zero, big, lax.mul(big, lax.sqrt(lax.add(one, lax.mul(ratio, ratio)))))
    either_inf = lax.bitwise_or(isinf(a), isinf(b))
    return lax.select(either_inf, constant_like(big, np.inf), result)


def deg2rad(x, /) -> Array:
    """Degrees to radians."""
    (x,) = promote_args_inexact("deg2rad", x)
    return lax.mul(x, constant_like(x, np.pi / 180))


def rad2deg(x, /) -> Array:
    """Radians to degrees."""
    (x,) = promote_args_inexact("rad2deg", x)
    return lax.mul(x, constant_like(x, 180 / np.pi))


radians, degrees = deg2rad, rad2deg


# -- complex parts ------------------------------------------------------------------------
def conjugate(x, /) -> Array:
    """The complex conjugate (other dtypes unchanged)."""
    (x,) = promote_args("conjugate", x)
    if x.dtype.kind != "c":
        return x
    return lax.complex(lax.real(x), lax.neg(lax.imag(x)))


conj = conjugate


def real(val, /) -> Array:
    """The real part (other dtypes unchanged)."""
    (val,) = promote_args("real", val)
    return lax.real(val) if val.dtype.kind == "c" else val


def imag(val, /) -> Array:
    """The imaginary part (zeros for real dtypes)."""
    (val,) = promote_args("imag", val)
    return lax.imag(val) if val.dtype.kind == "c" else full_like_of(val, 0)


def angle(z, deg: bool = False) -> Array:
    """The argument of complex `z` (0 or pi for reals), in radians or degrees."""
    (z,) = promote_args("angle", z)
    re, im = real(z), imag(z)
    re, im = promote_dtypes_inexact(re, im)
    result = lax.atan2(im, re)
    return rad2deg(result) if deg else result


# -- special functions --------------------------------------------------------------------
def heaviside(x1, x2, /) -> Array:
    """0 where x1 < 0, 1 where x1 > 0, `x2` where x1 == 0, NaN where x1 is NaN."""
    x1, x2 = promote_args_inexact("heaviside", x1, x2)
    _real_only("heaviside", x1)
    zero = constant_like(x1, 0)
    positive = lax.select(lax.gt(x1, zero), constant_like(x1, 1), x2)
    step = lax.select(lax.lt(x1, zero), zero, positive)
    return lax.select(lax.ne(x1, x1), x1, step)


def sinc(x, /) -> Array:
    """sin(pi x) / (pi x), and 1 at 0."""
    (x,) = promote_args_inexact("sinc", x)
    pi_x = lax.mul(x, constant_like(x, np.pi))
    at_zero = lax.eq(x, constant_like(x, 0))
    safe = lax.select(at_zero, constant_like(x, 1), pi_x)
    return lax.select(at_zero, constant_like(x, 1), lax.div(lax.sin(safe), safe))


def nan_to_num(x, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Array:
    """NaN -> `nan`, +inf -> `posinf` (default the largest finite), -inf ->
    `neginf` (default the most negative finite); complex parts separately."""
    del copy  # arrays are immutable
    (x,) = promote_args("nan_to_num", x)
    if x.dtype.kind in "iub":
        return x
    if x.dtype.kind == "c":
        parts = [nan_to_num(p, nan=nan, posinf=posinf, neginf=neginf)
                 for p in (lax.real(x), lax.imag(x))]
        return lax.complex(*parts)
    info = np.finfo(x.dtype) if x.dtype.kind == "f" else _ml_finfo(x.dtype)
    high = info.max if posinf is None else posinf
    low = info.min if neginf is None else neginf
    out = lax.select(lax.ne(x, x), constant_like(x, nan), x)
    out = lax.select(lax.eq(out, constant_like(x, np.inf)), constant_like(x, high), out)
    return lax.select(lax.eq(out, constant_like(x, -np.inf)), constant_like(x, low), out)


def _ml_finfo(dtype):
    return ml_dtypes.finfo(dtype)


# -- tolerance and equality ---------------------------------------------------------------
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan: bool = False) -> Array:
    """|a - b| <= atol + rtol * |b|, elementwise; infinities are close only to
    the same infinity, NaN to nothing (or to NaN with `equal_nan`)."""
    a, b = promote_args_inexact("isclose", a, b)
    tol_dtype = real_dtype(a.dtype)
    rtol = with_weak_type(as_array(rtol, tol_dtype), True)
    atol = with_weak_type(as_array(atol, tol_dtype), True)
    close = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol, lax.mul(rtol, lax.abs(b))))
    a_inf, b_inf = isinf(a), isinf(b)
    close = lax.bitwise_and(close, lax.bitwise_not(lax.bitwise_or(a_inf, b_inf)))
    same_inf = lax.bitwise_and(lax.bitwise_and(a_inf, b_inf), lax.eq(a, b))
    close = lax.bitwise_or(close, same_inf)
    a_nan, b_nan = isnan(a), isnan(b)
    close = lax.bitwise_and(close, lax.bitwise_not(lax.bitwise_or(a_nan, b_nan)))
    if equal_nan:
        close = lax.bitwise_or(close, lax.bitwise_and(a_nan, b_nan))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan: bool = False) -> Array:
    """Whether every element pair is close (a bool scalar array)."""
    return _all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def array_equal(a1, a2, equal_nan: bool = False) -> Array:
    """Same shape and equal elements (NaNs equal with `equal_nan`)."""
    a1, a2 = as_array(a1), as_array(a2)
    if a1.shape != a2.shape:
        return as_array(np.bool_(False))
    a1, a2 = promote_dtypes(a1, a2)
    same = lax.eq(a1, a2)
    if equal_nan:
        same = lax.bitwise_or(same, lax.bitwise_and(isnan(a1), isnan(a2)))
    return _all(same)


def array_equiv(a1, a2) -> Array:
    """Equal after broadcasting (False when the shapes do not broadcast)."""
    a1, a2 = as_array(a1), as_array(a2)
    try:
        broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return as_array(np.bool_(False))
    return _all(lax.eq(*promote_args("array_equiv", a1, a2)))


# -- gcd / lcm ----------------------------------------------------------------------------
def _gcd_step(state):
    a, b = state
    zero = constant_like(b, 0)
    nonzero = lax.ne(b, zero)
    a, b = lax.select(nonzero, b, a), lax.select(nonzero, lax.rem(a, b), zero)
    swap = lax.lt(a, b)
    return lax.select(swap, b, a), lax.select(swap, a, b)


def _gcd_pending(state):
    _, b = state
    return lax.reduce_or(lax.ne(b, constant_like(b, 0)), tuple(range(b.ndim)))


def gcd(x1, x2, /) -> Array:
    """Greatest common divisor of |x1| and |x2| (Euclid's loop, run until every
    element is done)."""
    x1, x2 = promote_args_numeric("gcd", x1, x2)
    if x1.dtype.kind not in "iu":
        raise TypeError(f"xnp.gcd needs integer operands, got {x1.dtype}")
    if x1.dtype.kind == "i":
        x1, x2 = lax.abs(x1), lax.abs(x2)
    result, _ = lax.while_loop(_gcd_pending, _gcd_step, (x1, x2))
    return result


def lcm(x1, x2, /) -> Array:
    """Least common multiple of |x1| and |x2| (0 if either is 0)."""
    x1, x2 = promote_args_numeric("lcm", x1, x2)
    if x1.dtype.kind not in "iu":
        raise TypeError(f"xnp.lcm needs integer operands, got {x1.dtype}")
    d = gcd(x1, x2)
    zero = constant_like(d, 0)
    safe = lax.select(lax.eq(d, zero), constant_like(d, 1), d)
    return lax.select(lax.eq(d, zero), d, absolute(lax.mul(x1, floor_divide(x2, safe))))


# -- selection and conversion -------------------------------------------------------------
def where(condition, x=None, y=None, /, *, size=None,
          fill_value=None) -> Array | tuple[Array, ...]:
    """`x` where `condition`, else `y` (broadcast, promoted). With only
    `condition` it is `xnp.nonzero(condition, size=, fill_value=)`."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("xnp.where takes either one argument or three")
    if size is not None or fill_value is not None:
        raise ValueError("xnp.where: size= and fill_value= apply to the one-argument form")
    condition = as_array(condition)
    if condition.dtype != np.bool_:
        condition = lax.ne(condition, constant_like(condition, 0))
    x, y = promote_dtypes(x, y)
    condition, x, y = broadcast_arrays(condition, x, y)
    return lax.select(condition, x, y)


def astype(x, dtype, /, *, copy: bool = False, device=None) -> Array:
    """`x` converted to `dtype` (complex to real keeps the real part; a 64-bit
    dtype without x64 is truncated to 32 bits with a warning, as in JAX)."""
    del copy, device
    x = as_array(x)
    dtype = dtypes.canonicalize_user_dtype(dtype, "astype")
    if x.dtype.kind == "c" and dtype.kind != "c":
        x = lax.real(x)
    return lax.convert_element_type(x, dtype)


__all__ = [
    "allclose", "angle", "array_equal", "array_equiv", "astype", "clip", "conj", "conjugate",
    "copysign", "deg2rad", "degrees", "fmax", "fmin", "gcd", "heaviside", "hypot", "imag",
    "isclose", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "lcm", "logaddexp",
    "logaddexp2", "maximum", "minimum", "nan_to_num", "nextafter", "rad2deg", "radians", "real",
    "signbit", "sinc", "where",
]

# The rest of the elementwise family lives in sibling modules; `xnp` sees it all from here.
from xlapy.numpy._arithmetic import *  # noqa: E402, F403
from xlapy.numpy._arithmetic import __all__ as _arithmetic_all  # noqa: E402
from xlapy.numpy._dtypes import *  # noqa: E402, F403
from xlapy.numpy._dtypes import __all__ as _dtypes_all  # noqa: E402
from xlapy.numpy._promotion import __all__ as _promotion_all  # noqa: E402
from xlapy.numpy._promotion import broadcast_to  # noqa: E402, F401
from xlapy.numpy._ufuncs import *  # noqa: E402, F403
from xlapy.numpy._ufuncs import __all__ as _ufuncs_all  # noqa: E402

__all__ += _arithmetic_all + _ufuncs_all + _dtypes_all + _promotion_all
