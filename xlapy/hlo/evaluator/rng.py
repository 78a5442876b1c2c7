"""Interpreter rule for rng-bit-generator, bit-exact with XLA.

XLA expands `rng-bit-generator` (RngBitGeneratorExpander) into the
counter-based generators of its PRNG library (`prng.cc`); this module
computes the same bits with NumPy:

* ThreeFry-2x32 (20 rounds). State u64[2] = [key, counter]. A 64-bit output
  element i is the encryption of the counter `counter + i` (row-major i); a
  32-bit output is made from half as many encryptions whose two words are
  interleaved along one "split" dimension (see `_split_dim`). The new state
  is [key, counter + number of encryptions].
* Philox-4x32 (10 rounds). State u64[2] = [key, counter] or u64[3] =
  [key, counter_low, counter_high]: a 128-bit counter (with u64[2] its high
  word is the key itself, as XLA reverses the state). Encryption j of
  counter + j gives four 32-bit words, laid out round-robin: 32-bit output
  element 4j+w is word w; a 64-bit element 2j+h joins words (2h, 2h+1) as
  (low, high). The new state advances the counter by the number of
  encryptions (with carry into the high word when it is part of the state).
* Elements narrower than 32 bits take the low bits of the 32-bit output of
  the same shape, as XLA converts u32 to the narrow unsigned type.

`rng_default` is Philox: the algorithm XLA's CPU and GPU compilers expand it
to. Random bits of a signed or floating type are the unsigned bits
reinterpreted (bitcast); pred, complex and the sub-byte float types are
rejected, as XLA's bit generators reject them.
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.errors import ExecutionError
from xlapy.hlo.attributes import RngAlgorithm
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.evaluator.rules import rule
from xlapy.hlo.opcode import Opcode

_U32 = np.uint32
_U64 = np.uint64
_MASK32 = np.uint64(0xFFFFFFFF)

# -- the two block ciphers, vectorised over NumPy arrays of uint32 -------------------
_THREEFRY_ROTATIONS = (13, 15, 26, 6, 17, 29, 16, 24)
_THREEFRY_PARITY = 0x1BD11BDA


def _rotl32(v: np.ndarray, distance: int) -> np.ndarray:
    return (v << _U32(distance)) | (v >> _U32(32 - distance))


def threefry2x32(x0: np.ndarray, x1: np.ndarray, k0: int, k1: int):
    """Threefry-2x32 with 20 rounds (Salmon et al. 2011) of counters (x0, x1)."""
    ks = (_U32(k0), _U32(k1), _U32(k0 ^ k1 ^ _THREEFRY_PARITY))
    x0 = np.asarray(x0, _U32) + ks[0]
    x1 = np.asarray(x1, _U32) + ks[1]
    for block in range(5):
        for rotation in _THREEFRY_ROTATIONS[4 * (block % 2): 4 * (block % 2) + 4]:
            x0 = x0 + x1
            x1 = _rotl32(x1, rotation) ^ x0
        # Key injection after every four rounds.
        x0 = x0 + ks[(block + 1) % 3]
        x1 = x1 + ks[(block + 2) % 3] + _U32(block + 1)
    return x0, x1


_PHILOX_W32A, _PHILOX_W32B = 0x9E3779B9, 0xBB67AE85
_PHILOX_M4x32A, _PHILOX_M4x32B = 0xD2511F53, 0xCD9E8D57


def _mulhilo(x: np.ndarray, multiplier: int):
    product = x.astype(_U64) * _U64(multiplier)
    return (product >> _U64(32)).astype(_U32), (product & _MASK32).astype(_U32)


def philox4x32(words, k0: int, k1: int):
    """Philox-4x32 with 10 rounds (Salmon et al. 2011) of counters `words` (4 arrays)."""
    x0, x1, x2, x3 = (np.asarray(w, _U32) for w in words)
    for _ in range(10):
        hi0, lo0 = _mulhilo(x0, _PHILOX_M4x32A)
        hi1, lo1 = _mulhilo(x2, _PHILOX_M4x32B)
        x0, x1, x2, x3 = hi1 ^ x1 ^ _U32(k0), lo1, hi0 ^ x3 ^ _U32(k1), lo0
        k0 = (k0 + _PHILOX_W32A) & 0xFFFFFFFF
        k1 = (k1 + _PHILOX_W32B) & 0xFFFFFFFF
    return x0, x1, x2, x3


# -- XLA's layout of the bits ------------------------------------------------------
def _low_high(values: np.ndarray):
    values = np.asarray(values, _U64)
    return (values & _MASK32).astype(_U32), (values >> _U64(32)).astype(_U32)


def _join(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    return low.astype(_U64) | (high.astype(_U64) << _U64(32))


def _split_dim(dims: tuple[int, ...]) -> int:
    """The dimension XLA's SplitShapeIntoHalves halves: the first even one,
    else the first of the largest."""
    for i, d in enumerate(dims):
        if d % 2 == 0:
            return i
    return max(range(len(dims)), key=lambda i: (dims[i], -i))


def _threefry_counters(counter: int, count: int):
    return _low_high(np.uint64(counter) + np.arange(count, dtype=_U64))


def _threefry32(key: int, counter: int, dims: tuple[int, ...]):
    """u32 bits of shape `dims` and the number of counters used."""
    k0, k1 = int(key) & 0xFFFFFFFF, int(key) >> 32
    if not dims:
        o0, _ = threefry2x32(*_threefry_counters(counter, 1), k0, k1)
        return o0.reshape(()), 1
    split = _split_dim(dims)
    half = list(dims)
    half[split] = (dims[split] + 1) // 2
    count = math.prod(half)
    o0, o1 = threefry2x32(*_threefry_counters(counter, count), k0, k1)
    pairs = np.stack([o0.reshape(half), o1.reshape(half)], axis=split + 1)
    widened = list(dims)
    widened[split] = 2 * half[split]
    bits = pairs.reshape(widened)
    return bits[(slice(None),) * split + (slice(0, dims[split]),)], count


def _threefry64(key: int, counter: int, dims: tuple[int, ...]):
    k0, k1 = int(key) & 0xFFFFFFFF, int(key) >> 32
    count = math.prod(dims)
    o0, o1 = threefry2x32(*_threefry_counters(counter, count), k0, k1)
    return _join(o0, o1).reshape(dims), count


def _philox_blocks(key: int, low: int, high: int, blocks: int):
    """The four output words of `blocks` encryptions of the 128-bit counter
    (low, high) + j, j = 0..blocks-1."""
    offsets = np.arange(blocks, dtype=_U64)
    lows = np.uint64(low) + offsets
    highs = np.where(lows < np.uint64(low), np.uint64((high + 1) % 2**64), np.uint64(high))
    words = (*_low_high(lows), *_low_high(highs))
    return philox4x32(words, int(key) & 0xFFFFFFFF, int(key) >> 32)


def _philox32(key: int, low: int, high: int, dims: tuple[int, ...]):
    count = math.prod(dims)
    blocks = -(-count // 4)
    words = _philox_blocks(key, low, high, blocks)
    bits = np.stack(words, axis=1).reshape(-1)[:count]
    return bits.reshape(dims), blocks


def _philox64(key: int, low: int, high: int, dims: tuple[int, ...]):
    count = math.prod(dims)
    blocks = -(-count // 2)
    w0, w1, w2, w3 = _philox_blocks(key, low, high, blocks)
    bits = np.stack([_join(w0, w1), _join(w2, w3)], axis=1).reshape(-1)[:count]
    return bits.reshape(dims), blocks


def _random_bits(algorithm: RngAlgorithm, state: np.ndarray, dims, width: int):
    """(new state, unsigned bits of `width` 32 or 64) for one call."""
    state = [int(s) for s in state]
    if algorithm is RngAlgorithm.THREE_FRY:
        if len(state) != 2:
            raise ExecutionError(f"rng_three_fry needs a u64[2] state, got u64[{len(state)}]")
        key, counter = state
        generate = _threefry64 if width == 64 else _threefry32
        bits, used = generate(key, counter, dims)
        return [key, (counter + used) % 2**64], bits
    if len(state) not in (2, 3):
        raise ExecutionError(f"rng_philox needs a u64[2] or u64[3] state, got u64[{len(state)}]")
    key = state[0]
    # With a u64[2] state XLA reverses it: the counter's high word is the key.
    low, high = (state[1], state[0]) if len(state) == 2 else (state[1], state[2])
    generate = _philox64 if width == 64 else _philox32
    bits, used = generate(key, low, high, dims)
    counter = low + high * 2**64 + used
    new_state = [key, counter % 2**64]
    if len(state) == 3:
        new_state.append((counter >> 64) % 2**64)
    return new_state, bits


def _as_element_type(bits: np.ndarray, element_type: PrimitiveType) -> np.ndarray:
    """Unsigned random bits reinterpreted as `element_type` (narrow types keep
    the low bits, as XLA's u32 -> narrow unsigned conversion does)."""
    width = element_type.bit_width
    dtype = element_type.numpy
    if width >= 8:
        unsigned = np.dtype(f"u{width // 8}")
        return bits.astype(unsigned).view(dtype)
    if not element_type.is_integral:
        raise ExecutionError(f"rng-bit-generator cannot produce {element_type.value}")
    values = (bits & _U32(2**width - 1)).astype(np.int64)
    if element_type.is_signed_int:
        values = np.where(values >= 2 ** (width - 1), values - 2**width, values)
    return values.astype(dtype)


@rule(Opcode.RNG_BIT_GENERATOR)
def rng_bit_generator(instruction, operands, evaluator):
    """(new state, random bits) from the state operand; see the module docstring."""
    state_shape, data_shape = instruction.shape.tuple_shapes
    element_type = data_shape.element_type
    if not (element_type.is_integral or element_type.is_float):  # pred, complex, ...
        raise ExecutionError(f"rng-bit-generator cannot produce {element_type.value} bits")
    state = np.asarray(operands[0])
    if state.dtype != np.uint64 or state.ndim != 1:
        raise ExecutionError(f"rng-bit-generator state must be u64[N], got {state.dtype}"
                             f"{list(state.shape)}")
    algorithm = instruction.attr("algorithm", RngAlgorithm.DEFAULT)
    if algorithm is RngAlgorithm.DEFAULT:
        algorithm = RngAlgorithm.PHILOX
    width = 64 if element_type.bit_width == 64 else 32
    new_state, bits = _random_bits(algorithm, state, data_shape.dimensions, width)
    return (np.array(new_state, dtype=np.uint64).reshape(state_shape.dimensions),
            _as_element_type(bits, element_type))
