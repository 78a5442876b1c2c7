"""Permutations and draws from finite sets: permutation, shuffle, choice,
categorical, as jax.random computes them.

Shuffles sort by random 32-bit keys (several rounds when collisions are
likely, as JAX and TensorFlow do) instead of running Fisher-Yates, which is
sequential; categorical and weighted choice without replacement use the
Gumbel-max and Gumbel-top-k tricks.
"""

from __future__ import annotations

import math

import numpy as np

import xlapy.numpy as xnp
from xlapy.core import dtypes
from xlapy.core.trace import Array, Tracer, as_array
from xlapy.lax import primitives as lax
from xlapy.numpy._promotion import (
    broadcast_shapes,
    broadcast_to,
    canonicalize_axis,
    reshape_exact,
)
from xlapy.random._samplers import gumbel_values, randint, split_two, uniform_values
from xlapy.random._threefry import canonical_shape, check_key, random_bits

_SHUFFLE_EXPONENT = 3  # rounds until key collisions are unlikely (tjablin's criterion)


def _static_int(value, where: str) -> int:
    if isinstance(value, Tracer):
        raise TypeError(f"{where} needs a concrete integer to size its result, got the traced "
                        f"value {value.describe()}; pass a Python int")
    return int(value)


def _rank(x) -> int:
    return x.ndim if isinstance(x, Array) else np.ndim(x)


def _arange(n: int) -> Array:
    return lax.iota(dtypes.default_int(), n)


def shuffle_along(key: Array, x: Array, axis: int) -> Array:
    """`x` with its entries along `axis` permuted; every 1-D lane by the same
    sort keys only when x is 1-D (JAX's behaviour for independent=True)."""
    rounds = math.ceil(_SHUFFLE_EXPONENT * math.log(max(1, x.size))
                       / math.log(np.iinfo(np.uint32).max))
    for _ in range(rounds):
        key, subkey = split_two(key)
        sort_keys = random_bits(subkey, 32, x.shape)
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


def _take(x: Array, indices: Array, axis: int) -> Array:
    return xnp.take(x, indices, axis=axis)


def permutation(key, x, axis: int = 0, independent: bool = False) -> Array:
    """A random permutation of range(x) for an integer x, else of x's entries
    along `axis` (each lane separately when independent=True)."""
    key = check_key("permutation", key)
    if _rank(x) == 0:
        dtype = x.dtype if isinstance(x, Array) else np.asarray(x).dtype
        if not dtypes.is_integer(dtype):
            raise TypeError("permutation's x must be an integer or an array of rank >= 1")
        return shuffle_along(key, _arange(_static_int(x, "permutation")), 0)
    x = as_array(x)
    axis = canonicalize_axis(axis, x.ndim)
    if independent or x.ndim == 1:
        return shuffle_along(key, x, axis)
    order = shuffle_along(key, _arange(x.shape[axis]), 0)
    return _take(x, order, axis)


def choice(key, a, shape=(), replace: bool = True, p=None, axis: int = 0) -> Array:
    """Draws from range(a) (integer a) or from a's entries along `axis`, with or
    without replacement, uniformly or with probabilities p."""
    key = check_key("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"choice's shape must be a sequence, got {shape!r}")
    shape = canonical_shape(shape)
    scalar = _rank(a) == 0
    arr = None if scalar else as_array(a)
    if scalar:
        n_inputs = _static_int(a, "choice")
    else:
        axis = canonicalize_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    out_dtype = dtypes.default_int() if scalar else arr.dtype
    if n_draws == 0:
        return lax.broadcast_in_dim(as_array(0, out_dtype), shape, ())
    if n_inputs <= 0:
        raise ValueError("choice: a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"choice: cannot take a larger sample (size {n_draws}) than the "
                         f"population (size {n_inputs}) when replace=False")
    if p is None and not replace:
        pool = _arange(n_inputs) if scalar else arr
        shuffled = permutation(key, pool, axis=0 if scalar else axis)
        result = lax.slice_in_dim(shuffled, 0, n_draws, axis=0 if scalar else axis)
    else:
        if p is None:
            index = randint(key, shape, 0, n_inputs)
        else:
            index = _weighted_index(key, p, n_inputs, n_draws, shape, replace)
        result = index if scalar else _take(arr, index, axis)
    out_shape = shape if scalar else arr.shape[:axis] + shape + arr.shape[axis + 1:]
    return reshape_exact(result, out_shape)


def _weighted_index(key: Array, p, n_inputs: int, n_draws: int, shape, replace: bool) -> Array:
    """Indices drawn with probabilities p: inverse CDF with replacement, the
    Gumbel top-k trick without."""
    p = as_array(p)
    if not (dtypes.is_float(p.dtype) or dtypes.is_complex(p.dtype)):
        p = lax.convert_element_type(p, dtypes.default_float())
    if p.shape != (n_inputs,):
        raise ValueError(f"choice: p must be a 1-D vector of the population size {n_inputs}, "
                         f"got shape {list(p.shape)}")
    if replace:
        cdf = lax.cumsum(p, 0)
        total = lax.index_in_dim(cdf, n_inputs - 1, 0, False)
        u = uniform_values(key, shape, p.dtype, 0.0, 1.0)
        r = lax.mul(total, lax.sub(as_array(1, p.dtype), u))
        # searchsorted(cdf, r, side='left') = how many cdf entries lie below r
        below = lax.lt(lax.broadcast_in_dim(cdf, (*shape, n_inputs), (len(shape),)),
                       lax.broadcast_in_dim(r, (*shape, n_inputs), tuple(range(len(shape)))))
        counts = lax.convert_element_type(below, dtypes.default_int())
        return lax.reduce_sum(counts, (len(shape),))
    g = lax.add(gumbel_values(key, (n_inputs,), p.dtype, "low"), lax.log(p))
    return lax.top_k(g, n_draws)[1]


def categorical(key, logits, axis: int = -1, shape=None, replace: bool = True,
                mode=None) -> Array:
    """Indices drawn from softmax(logits) along `axis` (Gumbel-max; Gumbel-top-k
    without replacement). `shape` may add leading sample dimensions to the
    batch shape of logits."""
    key = check_key("categorical", key)
    logits = as_array(logits)
    if not dtypes.is_float(logits.dtype):
        logits = lax.convert_element_type(logits, dtypes.default_float())
    axis = canonicalize_axis(axis, logits.ndim)
    batch_shape = logits.shape[:axis] + logits.shape[axis + 1:]
    if shape is None:
        shape = batch_shape
    else:
        shape = canonical_shape(shape)
        if broadcast_shapes(shape, batch_shape) != shape:
            raise ValueError(f"categorical: shape {shape} must be broadcast-compatible with "
                             f"the batch shape {batch_shape} of logits, and contain it")
    prefix = shape[:len(shape) - len(batch_shape)]
    mode = mode or "low"
    if replace:
        sample_batch = shape[len(prefix):]
        logits_shape = (*prefix, *sample_batch[:axis], logits.shape[axis], *sample_batch[axis:])
        g = gumbel_values(key, logits_shape, logits.dtype, mode)
        lifted = reshape_exact(logits, (1,) * len(prefix) + logits.shape)
        scores = lax.add(g, broadcast_to(lifted, logits_shape))
        return lax.argmax(scores, len(prefix) + axis, dtypes.default_int())
    k = math.prod(prefix)
    if k > logits.shape[axis]:
        raise ValueError(f"categorical: {k} samples without replacement cannot exceed the "
                         f"{logits.shape[axis]} categories")
    scores = lax.add(logits, gumbel_values(key, logits.shape, logits.dtype, mode))
    _, indices = lax.top_k(scores, k, axis=axis)          # batch dims with k at `axis`
    indices = lax.transpose(indices, (axis, *range(axis), *range(axis + 1, logits.ndim)))
    return reshape_exact(indices, shape)
