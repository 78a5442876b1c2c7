"""`xlapy.random`: explicit-key random numbers, drawn as jax.random draws them.

Keys are raw `uint32[2]` arrays (what `jax.random.PRNGKey` returns) and the
generator is JAX's default threefry-2x32 with its partitionable counter
layout. Keys, split, fold_in, bits, uniform floats and every integer or
discrete sampler (randint, bernoulli, permutation, choice, categorical...)
match JAX bit for bit; samplers that go through log, log1p or tan (normal's
erf_inv, gumbel, exponential...) use the same formulas and agree with JAX's
CPU results to an ulp or two, the difference between NumPy's and XLA's
elementary functions.
Nothing is stateful: split a key to get fresh ones, and never reuse a key for
two draws you want independent. Every function works eagerly and under
`xlapy.jit` with the same results.

Seeds: an integer of at most 32 bits gives JAX's key for it in JAX's default
(32-bit) mode; a wider Python int, or a 64-bit integer array (which exists
with `xlapy.config.enable_x64`; without it NumPy's int64 becomes int32 on
the way in, as in JAX), gives the key of JAX with x64 (high and low words).

Default dtypes follow the x64 switch as jax.random's do: float32 and int32,
or float64 and int64 with x64; a 64-bit `dtype=` without x64 is truncated
with JAX's warning.
"""

from __future__ import annotations

import numpy as np

from xlapy.core import dtypes
from xlapy.core.lazy_replay import replayed
from xlapy.core.trace import Array, as_array
from xlapy.numpy._promotion import canonicalize_axis
from xlapy.random._discrete import categorical, choice, permutation, shuffle_along
from xlapy.random._eager import compiled_when_eager
from xlapy.random._samplers import (
    bernoulli,
    cauchy,
    exponential,
    gumbel,
    laplace,
    logistic,
    multivariate_normal,
    normal,
    rademacher,
    randint,
    truncated_normal,
    uniform,
)
from xlapy.random._threefry import (
    canonical_shape,
    check_key,
    fold_in_key,
    make_key,
    random_bits,
    split_key,
)
from xlapy.random._threefry import threefry2x32 as threefry_2x32


def PRNGKey(seed) -> Array:  # noqa: N802 - JAX's name
    """The uint32[2] key of an integer seed (a Python int or an integer scalar)."""
    return make_key(seed)


def key(seed) -> Array:
    """As PRNGKey: xlapy has no typed key arrays, so this is the raw uint32[2] key
    (jax.random.key returns a typed scalar key that every sampler here also
    accepts in raw form)."""
    return make_key(seed)


def key_data(keys) -> Array:
    """The uint32 words of a key array (raw keys are their own data)."""
    keys = as_array(keys)
    if keys.dtype != np.uint32 or not keys.shape or keys.shape[-1] != 2:
        raise TypeError(f"key_data needs uint32[..., 2] keys, got {keys.dtype}"
                        f"{list(keys.shape)}")
    return keys


def wrap_key_data(key_bits_array) -> Array:
    """Keys from their uint32 words (the identity for raw keys)."""
    return key_data(key_bits_array)


def split(key, num=2) -> Array:
    """`num` new keys (or an array of keys of shape `num`, a tuple), stacked as
    uint32[*shape, 2]; each is independent of the others and of `key`."""
    key = check_key("split", key)
    shape = tuple(num) if isinstance(num, (tuple, list)) else (num,)
    return split_key(key, canonical_shape(shape))


def fold_in(key, data) -> Array:
    """A new key derived from `key` and a 32-bit integer scalar `data`, e.g. a
    step number or a device index."""
    return fold_in_key(check_key("fold_in", key), data)


def bits(key, shape=(), dtype=None) -> Array:
    """Uniformly random unsigned integers (uint32, or uint64 with x64, unless told)."""
    key = check_key("bits", key)
    dtype = dtypes.default_uint() if dtype is None else dtypes.canonicalize_user_dtype(dtype)
    if dtype.kind != "u":
        raise ValueError(f"bits draws unsigned integers; dtype {dtype} is not unsigned")
    return random_bits(key, dtype.itemsize * 8, canonical_shape(shape))


def shuffle(key, x, axis: int = 0) -> Array:
    """Deprecated in JAX in favour of permutation(independent=True): x with the
    entries of each lane along `axis` permuted independently."""
    x = as_array(x)
    return shuffle_along(check_key("shuffle", key), x, canonicalize_axis(axis, x.ndim))


def clone(key) -> Array:
    """The key itself: keys are immutable values here, as in JAX."""
    return check_key("clone", key)


# Called eagerly, these run compiled (`_eager`); in lazy mode each call's
# recording is learned once and replayed as one call: a normal draw is some
# 400 operations of threefry and erf_inv, and recorded one by one, a step
# adding noise to its batch cost 24 times its jitted self. (PRNGKey and key
# make concrete keys from Python seeds: nothing to compile or replay.)
_REPLAYED = ("bernoulli", "bits", "categorical", "cauchy", "choice", "exponential", "fold_in",
             "gumbel", "laplace", "logistic", "multivariate_normal", "normal", "permutation",
             "rademacher", "randint", "shuffle", "split", "truncated_normal", "uniform")
for _name in _REPLAYED:   # (choice's `a` and permutation's `x` size the result when ints)
    _fn = globals()[_name]
    if _name not in ("choice", "permutation", "shuffle"):
        _fn = compiled_when_eager(_fn)
    globals()[_name] = replayed(_fn, home=__name__)
del _fn, _name

__all__ = [
    "PRNGKey", "bernoulli", "bits", "categorical", "cauchy", "choice", "clone", "exponential",
    "fold_in", "gumbel", "key", "key_data", "laplace", "logistic", "multivariate_normal",
    "normal", "permutation", "rademacher", "randint", "random_bits", "shuffle", "split",
    "threefry_2x32", "truncated_normal", "uniform", "wrap_key_data",
]
