"""Threefry-2x32, JAX's default PRNG, built from uint32 lax ops.

Everything here is bit-exact with `jax.random` under its default settings
(`jax_threefry_partitionable=True`): the same 20-round hash with key
injections, the same seed layout, and the same counter layout for `split`,
`fold_in` and `random_bits` (a flat 64-bit iota over the result shape, split
into high and low 32-bit words). Keys are raw `uint32[2]` arrays, as
`jax.random.PRNGKey` returns them.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from xlapy.core.trace import Array, as_array
from xlapy.lax import primitives as lax

_U32 = np.dtype(np.uint32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KEY_PARITY = np.uint32(0x1BD11BDA)  # Threefry's C240 constant
UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32,
               64: np.dtype(np.uint64)}


def _u32(value: int) -> Array:
    return as_array(np.uint32(value))


def threefry2x32(k1: Array, k2: Array, x1: Array, x2: Array) -> tuple[Array, Array]:
    """The Threefry-2x32 hash of counters (x1, x2) under key (k1, k2).

    k1 and k2 are uint32 scalars; x1 and x2 uint32 arrays of one shape. Five
    groups of four Threefish rounds, each group followed by a key injection
    from the rotating schedule (k1, k2, k1 ^ k2 ^ C240) plus the group number.
    Scalars are broadcast once up front, so every round is three same-shape ops.
    """
    x1, x2 = as_array(x1), as_array(x2)
    shape = x1.shape
    constants: dict[int, Array] = {}

    def full(value) -> Array:
        if isinstance(value, Array):
            return lax.broadcast_in_dim(value, shape, ())
        if value not in constants:
            constants[value] = lax.broadcast_in_dim(_u32(value), shape, ())
        return constants[value]

    k1, k2 = as_array(k1), as_array(k2)
    schedule = [full(k1), full(k2),
                full(lax.bitwise_xor(lax.bitwise_xor(k1, k2), as_array(_KEY_PARITY)))]
    x = [lax.add(x1, schedule[0]), lax.add(x2, schedule[1])]
    for group in range(5):
        for distance in _ROTATIONS[group % 2]:
            x[0] = lax.add(x[0], x[1])
            rotated = lax.bitwise_or(lax.shift_left(x[1], full(distance)),
                                     lax.shift_right_logical(x[1], full(32 - distance)))
            x[1] = lax.bitwise_xor(x[0], rotated)
        x[0] = lax.add(x[0], schedule[(group + 1) % 3])
        x[1] = lax.add(lax.add(x[1], schedule[(group + 2) % 3]), full(group + 1))
    return x[0], x[1]


# -- keys ---------------------------------------------------------------------------------
def check_key(where: str, key) -> Array:
    """`key` as a uint32[2] Array, or a TypeError naming `where`."""
    key = as_array(key)
    if key.dtype != _U32 or key.shape != (2,):
        raise TypeError(f"{where} needs a single PRNG key, a uint32[2] array as PRNGKey or "
                        f"split gives; got {key.dtype}{list(key.shape)}")
    return key


def key_words(key: Array) -> tuple[Array, Array]:
    """The two uint32 scalars of a uint32[2] key."""
    return lax.index_in_dim(key, 0, 0, False), lax.index_in_dim(key, 1, 0, False)


def stack_words(hi: Array, lo: Array) -> Array:
    """uint32[..., 2] from two uint32 arrays of one shape (a new minor axis)."""
    shape = (*hi.shape, 2)
    dims = tuple(range(hi.ndim))
    hi, lo = lax.broadcast_in_dim(hi, shape, dims), lax.broadcast_in_dim(lo, shape, dims)
    first = lax.eq(lax.broadcasted_iota(np.int32, shape, hi.ndim - 1), as_array(np.int32(0)))
    return lax.select(first, hi, lo)


def seed_words(seed) -> tuple[Array, Array]:
    """(high, low) words of an integer seed as JAX lays them out.

    A Python int of at most 32 bits (and any array seed of at most 32 bits)
    gives (0, seed mod 2**32), as JAX's default (32-bit) mode; a wider Python
    int or a 64-bit array seed gives its high and low words, as JAX with x64.
    """
    if isinstance(seed, int) and not isinstance(seed, bool):
        value = seed
        if not -(2 ** 63) <= value < 2 ** 64:
            raise OverflowError(f"PRNG seed {value} does not fit in 64 bits")
        if -(2 ** 31) <= value < 2 ** 32:
            value &= 0xFFFFFFFF
        value &= 0xFFFFFFFFFFFFFFFF
        return _u32(value >> 32), _u32(value & 0xFFFFFFFF)
    seed = as_array(seed)
    if seed.shape:
        raise TypeError(f"a PRNG seed must be a scalar, got shape {list(seed.shape)}")
    if seed.dtype.kind not in "iu":
        raise TypeError(f"a PRNG seed must be an integer, got {seed.dtype}")
    low = lax.convert_element_type(seed, _U32)
    if seed.dtype.itemsize < 8:
        return _u32(0), low
    high = lax.shift_right_logical(seed, as_array(32, seed.dtype))
    return lax.convert_element_type(high, _U32), low


def make_key(seed) -> Array:
    """The uint32[2] key of an integer seed."""
    hi, lo = seed_words(seed)
    return stack_words(hi, lo)


def counters(shape: tuple[int, ...]) -> tuple[Array, Array]:
    """(high, low) uint32 words of a row-major 64-bit iota over `shape`."""
    size = math.prod(shape)
    if size >= 2 ** 32:
        raise NotImplementedError(f"random arrays of 2**32 or more elements ({size})")
    if not shape:
        return _u32(0), _u32(0)
    low = None
    stride = 1
    for axis in range(len(shape) - 1, -1, -1):
        term = lax.broadcasted_iota(_U32, shape, axis)
        if stride != 1:
            term = lax.mul(term, _u32(stride))
        low = term if low is None else lax.add(low, term)
        stride *= shape[axis]
    return lax.broadcast_in_dim(_u32(0), shape, ()), low


def split_key(key: Array, shape: tuple[int, ...]) -> Array:
    """uint32[*shape, 2]: new keys, one per counter of `shape` (JAX's fold-like split)."""
    k1, k2 = key_words(key)
    hi, lo = counters(shape)
    bits1, bits2 = threefry2x32(k1, k2, hi, lo)
    return stack_words(bits1, bits2)


def fold_in_key(key: Array, data) -> Array:
    """The key `key` becomes after folding in the 32-bit integer `data`."""
    k1, k2 = key_words(key)
    hi, lo = seed_words(_as_uint32_data(data))
    bits1, bits2 = threefry2x32(k1, k2, hi, lo)
    return stack_words(bits1, bits2)


def _as_uint32_data(data):
    if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
        return np.uint32(int(data) & 0xFFFFFFFF)
    data = as_array(data)
    if data.shape:
        raise TypeError(f"fold_in takes a scalar, got an array of shape {list(data.shape)}")
    return lax.convert_element_type(data, _U32)


def random_bits(key: Array, bit_width: int, shape) -> Array:
    """Uniform random unsigned integers of `bit_width` bits and `shape`."""
    if bit_width not in UINT_DTYPES:
        raise TypeError(f"random bits come in 8, 16, 32 or 64 bits, not {bit_width}")
    shape = canonical_shape(shape)
    k1, k2 = key_words(key)
    hi, lo = counters(shape)
    bits1, bits2 = threefry2x32(k1, k2, hi, lo)
    dtype = UINT_DTYPES[bit_width]
    if bit_width == 64:
        high = lax.convert_element_type(bits1, dtype)
        low = lax.convert_element_type(bits2, dtype)
        return lax.bitwise_or(lax.shift_left(high, as_array(32, np.uint64)), low)
    mixed = lax.bitwise_xor(bits1, bits2)
    return mixed if bit_width == 32 else lax.convert_element_type(mixed, dtype)


def canonical_shape(shape) -> tuple[int, ...]:
    """A shape argument (int or sequence of ints) as a tuple of non-negative ints."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        shape = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"a shape must be a sequence of integers, got {shape!r}") from None
    if any(d < 0 for d in shape):
        raise ValueError(f"a shape cannot have negative dimensions, got {shape}")
    return shape
