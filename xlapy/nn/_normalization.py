"""Normalising functions of `xlapy.nn`: softmax, log_softmax, logsumexp,
standardize, and one_hot.

Each subtracts the maximum before exponentiating, as jax.nn does, so large
logits never overflow; logsumexp also survives rows that are all -inf (the
shift becomes 0, the result -inf). `where=` masks take part in neither the
maximum nor the sum.
"""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy.core import dtypes
from xlapy.core.trace import Array
from xlapy.lax import primitives as lax
from xlapy.numpy._promotion import canonicalize_axes, canonicalize_axis, promote_args_inexact


def _inexact(name: str, x) -> Array:
    (x,) = promote_args_inexact(name, x)
    return x


def softmax(x, axis=-1, where=None) -> Array:
    """exp(x) / sum(exp(x)) along `axis` (an int or a tuple); entries masked
    out by `where` are 0 and take no part."""
    x = _inexact("softmax", x)
    x_max = xnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else xnp.where(where, x, -np.inf)
    unnormalized = xnp.exp(x_safe - x_max)
    result = unnormalized / xnp.sum(unnormalized, axis, where=where, keepdims=True)
    return result if where is None else xnp.where(where, result, 0)


def log_softmax(x, axis=-1, where=None) -> Array:
    """x - logsumexp(x) along `axis`; entries masked out by `where` are -inf."""
    x = _inexact("log_softmax", x)
    x_max = xnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else xnp.where(where, x, -np.inf)
    shifted = x_safe - x_max
    shifted_logsumexp = xnp.log(xnp.sum(xnp.exp(shifted), axis, where=where, keepdims=True))
    result = shifted - shifted_logsumexp
    return result if where is None else xnp.where(where, result, -np.inf)


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False,
              where=None):
    """log(sum(b * exp(a))) over `axis`, computed around the maximum.

    With return_sign=True returns (log|sum|, sign(sum)); otherwise a negative
    sum (possible with negative weights b) gives NaN.
    """
    if where is not None:
        a = xnp.where(where, a, 0)
    if b is not None:
        a, b = promote_args_inexact("logsumexp", a, b)
        a = xnp.where(b != 0, a, -np.inf)
    else:
        a = _inexact("logsumexp", a)
    dims = canonicalize_axes(axis, a.ndim)
    real_a = xnp.real(a) if dtypes.is_complex(a.dtype) else a
    amax = xnp.max(real_a, dims, keepdims=True, where=where, initial=-np.inf)
    amax = lax.select(xnp.isfinite(amax), amax, xnp.zeros_like(amax))
    exp_a = xnp.exp(a - amax.astype(a.dtype))
    if b is not None:
        exp_a = exp_a * b
    sumexp = xnp.sum(exp_a, dims, keepdims=keepdims, where=where)
    sign = xnp.sign(sumexp)
    if return_sign or not dtypes.is_complex(a.dtype):
        sumexp = xnp.abs(sumexp)
    if not keepdims:
        amax = xnp.squeeze(amax, dims)
    out = xnp.log(sumexp) + amax.astype(sumexp.dtype)
    if return_sign:
        return out, sign
    if b is not None and not dtypes.is_complex(out.dtype):
        out = xnp.where(sign < 0, np.array(np.nan, out.dtype), out)
    return out


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm: str = "fast") -> Array:
    """(x - mean) / sqrt(variance + epsilon) along `axis`.

    algorithm="fast" (JAX's default) takes the variance as E[x^2] - E[x]^2,
    clipped at 0; "stable" uses the two-pass E[(x - E[x])^2].
    """
    x = _inexact("standardize", x)
    if mean is None:
        mean = xnp.mean(x, axis, keepdims=True, where=where)
    mean = xnp.asarray(mean)
    if variance is None:
        if algorithm == "stable":
            variance = xnp.mean(xnp.square(x - mean), axis, keepdims=True, where=where)
        elif algorithm == "fast":
            variance = xnp.mean(xnp.square(x), axis, keepdims=True, where=where) \
                - xnp.square(mean)
            variance = xnp.clip(variance, 0)
        else:
            raise ValueError(f"unknown algorithm {algorithm!r}; expected 'fast' or 'stable'")
    return (x - mean) * lax.rsqrt(xnp.asarray(variance) + epsilon)


def one_hot(x, num_classes: int, *, dtype=None, axis: int = -1) -> Array:
    """1 where x equals the class index along a new axis `axis`, 0 elsewhere
    (out-of-range x, e.g. -1, gives an all-zero row). The default float unless told."""
    x = xnp.asarray(x)
    dtype = dtypes.default_float() if dtype is None else \
        dtypes.canonicalize_user_dtype(dtype, "one_hot")
    try:
        num_classes = int(num_classes)
    except TypeError:
        raise TypeError("one_hot's num_classes must be a concrete integer") from None
    out_axis = canonicalize_axis(axis, x.ndim + 1)
    shape = (*x.shape[:out_axis], num_classes, *x.shape[out_axis:])
    kept = tuple(d for d in range(len(shape)) if d != out_axis)
    lhs = lax.broadcast_in_dim(x, shape, kept)
    rhs = lax.broadcasted_iota(x.dtype, shape, out_axis)
    return lax.convert_element_type(lax.eq(lhs, rhs), dtype)
