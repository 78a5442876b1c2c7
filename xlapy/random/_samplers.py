"""Continuous and discrete samplers of `xlapy.random`, drawing JAX's numbers.

Each sampler turns threefry bits into values with the same recipe as
`jax.random`, so a key gives the same sample here and in JAX: uniform floats
from a mantissa filled with random bits (one bit-exact trick), normals as
sqrt(2) * erf_inv(uniform), integers by JAX's double-width modulus, and the
Gumbel-based discrete samplers on top.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

import xlapy.numpy as xnp
from xlapy.core import dtypes
from xlapy.core.trace import Array, as_array
from xlapy.lax import primitives as lax
from xlapy.numpy._promotion import broadcast_shapes, broadcast_to
from xlapy.random._erf_inv import erf_inv
from xlapy.random._fma import fma
from xlapy.random._threefry import (
    UINT_DTYPES,
    canonical_shape,
    check_key,
    random_bits,
    split_key,
)


def float_dtype(where: str, dtype) -> np.dtype:
    """The float dtype a sampler produces (the default float unless told), or
    ValueError; without x64 a 64-bit request is truncated with JAX's warning."""
    dtype = _user_dtype(dtype, dtypes.default_float)
    if not dtypes.is_float(dtype):
        raise ValueError(f"{where} samples floating-point values; dtype {dtype} is not one")
    return dtype


def _user_dtype(dtype, default) -> np.dtype:
    """A sampler's `dtype=` canonicalized (jax.random's warning names no function)."""
    return default() if dtype is None else dtypes.canonicalize_user_dtype(dtype)


def _scalar(value, dtype) -> Array:
    return as_array(value, dtype)


def _param(value, dtype, shape: tuple[int, ...], where: str) -> Array:
    """A distribution parameter converted to `dtype` and broadcast to `shape`."""
    if isinstance(value, Array):
        x = lax.convert_element_type(value, dtype)
    else:  # Python and NumPy values convert straight to dtype, not through float32
        x = as_array(value, dtype)
    try:
        return broadcast_to(x, shape)
    except ValueError:
        raise ValueError(f"{where}: a parameter of shape {list(x.shape)} does not broadcast "
                         f"to the sample shape {list(shape)}") from None


def split_two(key: Array) -> tuple[Array, Array]:
    keys = split_key(key, (2,))
    return lax.index_in_dim(keys, 0, 0, False), lax.index_in_dim(keys, 1, 0, False)


# -- uniform and friends ----------------------------------------------------------------
def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0) -> Array:
    """Floats in [minval, maxval), as jax.random.uniform draws them."""
    key = check_key("uniform", key)
    return uniform_values(key, canonical_shape(shape), float_dtype("uniform", dtype),
                          minval, maxval)


def uniform_values(key: Array, shape: tuple[int, ...], dtype, minval, maxval) -> Array:
    """Random mantissa bits under the exponent of 1.0 give [1, 2); shift and scale.

    Narrow mantissas (bf16, f8) still draw 8 random bits, as JAX does.
    """
    finfo = ml_dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    rng_bits = 8 if nmant < 8 else nbits
    uint = UINT_DTYPES[nbits]
    bits = random_bits(key, rng_bits, shape)
    if rng_bits != nbits:
        bits = lax.convert_element_type(bits, uint)
    mantissa = lax.shift_right_logical(bits, _scalar(rng_bits - nmant, uint))
    one_bits = _scalar(np.array(1.0, dtype).view(uint), uint)
    floats = lax.sub(lax.bitcast_convert_type(lax.bitwise_or(mantissa, one_bits), dtype),
                     _scalar(1.0, dtype))
    lo = _param(minval, dtype, shape, "uniform")
    hi = _param(maxval, dtype, shape, "uniform")
    # JAX writes floats * (hi - lo) + lo, which XLA contracts to one FMA
    return lax.max(lo, fma(floats, lax.sub(hi, lo), lo))


def normal(key, shape=(), dtype=None) -> Array:
    """Standard normal floats (complex dtypes: independent real and imaginary
    halves scaled by 1/sqrt(2)), as jax.random.normal draws them."""
    key = check_key("normal", key)
    shape = canonical_shape(shape)
    dtype = _user_dtype(dtype, dtypes.default_float)
    if dtypes.is_complex(dtype):
        real = np.dtype(np.float64 if dtype == np.complex128 else np.float32)
        key_re, key_im = split_two(key)
        re, im = normal_values(key_re, shape, real), normal_values(key_im, shape, real)
        z = lax.complex(re, im)
        return lax.div(z, _scalar(np.sqrt(2), dtype))
    return normal_values(key, shape, float_dtype("normal", dtype))


def normal_values(key: Array, shape: tuple[int, ...], dtype) -> Array:
    low = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = uniform_values(key, shape, dtype, low, 1.0)
    return lax.mul(_scalar(np.sqrt(2), dtype), erf_inv(u))


def truncated_normal(key, lower, upper, shape=None, dtype=None) -> Array:
    """Normals conditioned on (lower, upper), by inverting the CDF between the
    bounds; the result is clamped strictly inside them against rounding."""
    key = check_key("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype)
    bounds = broadcast_shapes(np.shape(lower), np.shape(upper))
    shape = bounds if shape is None else canonical_shape(shape)
    sqrt2 = _scalar(np.sqrt(2), dtype)
    lower = lax.convert_element_type(as_array(lower), dtype)
    upper = lax.convert_element_type(as_array(upper), dtype)
    a, b = lax.erf(lax.div(lower, sqrt2)), lax.erf(lax.div(upper, sqrt2))
    u = uniform_values(key, shape, dtype, a, b)
    out = lax.mul(sqrt2, erf_inv(u))
    low = _param(_next_after(lower, up=True), dtype, shape, "truncated_normal")
    high = _param(_next_after(upper, up=False), dtype, shape, "truncated_normal")
    return lax.min(lax.max(out, low), high)


def _next_after(x: Array, up: bool) -> Array:
    """The next representable float above (or below) x; NaN and the infinity in
    the direction of travel stay put."""
    uint = UINT_DTYPES[np.dtype(x.dtype).itemsize * 8]
    bits = lax.bitcast_convert_type(x, uint)
    one = _scalar(1, uint)
    zero = lax.eq(x, lax.broadcast_in_dim(_scalar(0, x.dtype), x.shape, ()))
    positive = lax.gt(x, lax.broadcast_in_dim(_scalar(0, x.dtype), x.shape, ()))
    grow = positive if up else lax.bitwise_not(positive)  # magnitude grows
    stepped = lax.select(grow, lax.add(bits, one), lax.sub(bits, one))
    tiny = np.array(1 if up else (1 << (8 * uint.itemsize - 1)) | 1, uint)
    stepped = lax.select(zero, lax.broadcast_in_dim(_scalar(tiny, uint), x.shape, ()), stepped)
    result = lax.bitcast_convert_type(stepped, x.dtype)
    stay = lax.bitwise_or(lax.ne(x, x),
                          lax.eq(x, lax.broadcast_in_dim(
                              _scalar(np.inf if up else -np.inf, x.dtype), x.shape, ())))
    return lax.select(stay, x, result)


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method: str = "cholesky"):
    """Normal vectors with the given mean (..., n) and covariance (..., n, n):
    mean + L z with L the Cholesky factor of cov, as JAX's default method."""
    key = check_key("multivariate_normal", key)
    if method != "cholesky":
        raise NotImplementedError(f"multivariate_normal: method {method!r} needs an "
                                  "eigendecomposition or SVD; use method='cholesky'")
    dtype = float_dtype("multivariate_normal", dtype)
    mean = lax.convert_element_type(as_array(mean), dtype)
    cov = lax.convert_element_type(as_array(cov), dtype)
    if mean.ndim < 1 or cov.ndim < 2:
        raise ValueError(f"multivariate_normal needs mean.ndim >= 1 and cov.ndim >= 2, got "
                         f"shapes {mean.shape} and {cov.shape}")
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal needs cov of shape (..., {n}, {n}), got "
                         f"{cov.shape}")
    batch = broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    shape = batch if shape is None else canonical_shape(shape)
    if broadcast_shapes(shape, batch) != shape:
        raise ValueError(f"multivariate_normal: shape {shape} must contain the broadcast "
                         f"batch shape {batch} of mean and cov")
    factor = xnp.linalg.cholesky(cov)
    z = normal_values(key, (*shape, n), dtype)
    return xnp.add(mean, xnp.einsum("...ij,...j->...i", factor, z))


def cauchy(key, shape=(), dtype=None) -> Array:
    """Standard Cauchy floats: tan(pi * (u - 1/2))."""
    key = check_key("cauchy", key)
    dtype = float_dtype("cauchy", dtype)
    u = uniform_values(key, canonical_shape(shape), dtype, float(ml_dtypes.finfo(dtype).eps),
                       1.0)
    return lax.tan(lax.mul(_scalar(np.pi, dtype), lax.sub(u, _scalar(0.5, dtype))))


def bernoulli(key, p=0.5, shape=None) -> Array:
    """Booleans that are True with probability p (a float, broadcastable)."""
    key = check_key("bernoulli", key)
    p = as_array(p)
    if not dtypes.is_float(p.dtype):
        raise TypeError(f"bernoulli's probability p must be floating-point, got {p.dtype}")
    shape = tuple(p.shape) if shape is None else canonical_shape(shape)
    u = uniform_values(key, shape, p.dtype, 0.0, 1.0)
    return lax.lt(u, _param(p, p.dtype, shape, "bernoulli"))


def exponential(key, shape=(), dtype=None) -> Array:
    """Exponential(1) floats: -log1p(-u)."""
    key = check_key("exponential", key)
    dtype = float_dtype("exponential", dtype)
    u = uniform_values(key, canonical_shape(shape), dtype, 0.0, 1.0)
    return lax.neg(lax.log1p(lax.neg(u)))


def laplace(key, shape=(), dtype=None) -> Array:
    """Laplace(0, 1) floats: sign(u) * log1p(-|u|) for u in (-1, 1)."""
    key = check_key("laplace", key)
    dtype = float_dtype("laplace", dtype)
    low = -1.0 + float(ml_dtypes.finfo(dtype).epsneg)
    u = uniform_values(key, canonical_shape(shape), dtype, low, 1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def logistic(key, shape=(), dtype=None) -> Array:
    """Standard logistic floats: log(u) - log1p(-u)."""
    key = check_key("logistic", key)
    dtype = float_dtype("logistic", dtype)
    tiny = float(ml_dtypes.finfo(dtype).tiny)
    u = uniform_values(key, canonical_shape(shape), dtype, tiny, 1.0)
    return lax.sub(lax.log(u), lax.log1p(lax.neg(u)))


def gumbel(key, shape=(), dtype=None, mode=None) -> Array:
    """Standard Gumbel floats: -log(-log(u)). mode='high' spends two uniforms
    per value to reach further into the right tail, as JAX's does."""
    key = check_key("gumbel", key)
    dtype = float_dtype("gumbel", dtype)
    return gumbel_values(key, canonical_shape(shape), dtype, mode or "low")


def gumbel_values(key: Array, shape: tuple[int, ...], dtype, mode: str) -> Array:
    finfo = ml_dtypes.finfo(dtype)
    if mode == "low":
        u = uniform_values(key, shape, dtype, float(finfo.tiny), 1.0)
        return lax.neg(lax.log(lax.neg(lax.log(u))))
    if mode != "high":
        raise ValueError(f"gumbel's mode must be 'low' or 'high', got {mode!r}")
    both = uniform_values(key, (2, *shape), dtype, 0.0, 1.0)
    high = lax.index_in_dim(both, 0, 0, False)
    low = lax.index_in_dim(both, 1, 0, False)
    refined = lax.add(lax.add(high, lax.mul(_scalar(2.0 ** -finfo.nmant, dtype), low)),
                      _scalar(finfo.tiny, dtype))
    x = lax.select(lax.ge(high, _scalar(0.5, dtype)), high, refined)
    return lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(x)))))


def rademacher(key, shape=(), dtype=None) -> Array:
    """-1 or +1 with equal probability (int32 unless told)."""
    key = check_key("rademacher", key)
    dtype = _user_dtype(dtype, dtypes.default_int)
    shape = canonical_shape(shape)
    heads = lax.lt(uniform_values(key, shape, dtypes.default_float(), 0.0, 1.0),
                   _scalar(0.5, dtypes.default_float()))
    b = lax.convert_element_type(heads, dtype)
    return lax.sub(lax.mul(_scalar(2, dtype), b), _scalar(1, dtype))


# -- integers -----------------------------------------------------------------------------
def randint(key, shape, minval, maxval, dtype=None) -> Array:
    """Integers in [minval, maxval), as jax.random.randint draws them: two words
    of random bits per value reduced modulo the span (bias ~ span**2 / 2**64).
    8- and 16-bit types are drawn as int32 and narrowed."""
    key = check_key("randint", key)
    shape = canonical_shape(shape)
    dtype = _user_dtype(dtype, dtypes.default_int)
    if not dtypes.is_integer(dtype):
        raise TypeError(f"randint samples integers; dtype {dtype} is not an integer type")
    minval, maxval = _integer_bound(minval), _integer_bound(maxval)
    info = np.iinfo(dtype)
    if info.bits >= 32:
        return _randint(key, shape, minval, maxval, dtype)
    int32 = np.dtype(np.int32)
    minval = lax.clamp(_scalar(info.min, int32), lax.convert_element_type(minval, int32),
                       _scalar(info.max, int32))
    maxval = lax.clamp(_scalar(info.min, int32), lax.convert_element_type(maxval, int32),
                       _scalar(int(info.max) + 1, int32))
    return lax.convert_element_type(_randint(key, shape, minval, maxval, int32), dtype)


def _integer_bound(value) -> Array:
    value = as_array(value)
    if not dtypes.is_integer(value.dtype):
        value = lax.convert_element_type(value, dtypes.default_int())
    return value


def _clip_convert(value: Array, dtype) -> Array:
    """An integer array converted to `dtype`, clipped (not wrapped) to its range."""
    source, target = np.iinfo(value.dtype), np.iinfo(dtype)
    lo, hi = max(source.min, target.min), min(source.max, target.max)
    value = lax.clamp(_scalar(lo, value.dtype), value, _scalar(hi, value.dtype))
    return lax.convert_element_type(value, dtype)


def _randint(key: Array, shape, minval: Array, maxval: Array, dtype) -> Array:
    nbits = np.iinfo(dtype).bits
    top = _clip_convert(_scalar(np.iinfo(dtype).max, dtype), maxval.dtype)
    maxval_out_of_range = _param(lax.gt(maxval, top), np.bool_, shape, "randint")
    lo = _param(_clip_convert(minval, dtype), dtype, shape, "randint")
    hi = _param(_clip_convert(maxval, dtype), dtype, shape, "randint")
    k1, k2 = split_two(key)
    higher, lower = random_bits(k1, nbits, shape), random_bits(k2, nbits, shape)
    unsigned = UINT_DTYPES[nbits]
    one = lax.broadcast_in_dim(_scalar(1, unsigned), shape, ())
    span = lax.convert_element_type(lax.sub(hi, lo), unsigned)
    empty = lax.le(hi, lo)
    span = lax.select(empty, one, span)
    # maxval beyond the type's range: the span reaches one past its maximum
    span = lax.select(lax.bitwise_and(maxval_out_of_range, lax.bitwise_not(empty)),
                      lax.add(span, one), span)
    # (hi * 2**nbits + lo) mod span, without overflowing nbits
    multiplier = lax.rem(lax.broadcast_in_dim(_scalar(2 ** (nbits // 2), unsigned), shape, ()),
                         span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher, span), multiplier), lax.rem(lower, span))
    offset = lax.rem(offset, span)
    return lax.add(lo, lax.convert_element_type(offset, dtype))
