"""rng-bit-generator: the block ciphers against Random123's known answers, the
op against bits that XLA's CPU backend produced, and XLA's output layout."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.hlo.evaluator.util import run_op
from xlapy.errors import ExecutionError
from xlapy.hlo.attributes import RngAlgorithm
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.evaluator.rng import philox4x32, threefry2x32
from xlapy.hlo.shape import Shape

THREE_FRY, PHILOX, DEFAULT = RngAlgorithm.THREE_FRY, RngAlgorithm.PHILOX, RngAlgorithm.DEFAULT
M = 2**64 - 1


def generate(algorithm, state, dims, element_type="u32"):
    state = np.array(state, dtype=np.uint64)
    shape = Shape.tuple([Shape.array("u64", state.shape), Shape.array(element_type, dims)])
    new_state, bits = run_op("rng-bit-generator", shape, state, algorithm=algorithm)
    return [int(v) for v in new_state], bits


# -- the ciphers: Random123's kat_vectors ---------------------------------------------
@pytest.mark.parametrize("counter, key, expected", [
    ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x243F6A88, 0x85A308D3), (0x13198A2E, 0x03707344), (0xC4923A9C, 0x483DF7A0)),
])
def test_threefry2x32_20_known_answers(counter, key, expected):
    out = threefry2x32(np.array([counter[0]], np.uint32), np.array([counter[1]], np.uint32), *key)
    assert tuple(int(w[0]) for w in out) == expected


@pytest.mark.parametrize("counter, key, expected", [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF, 0xFFFFFFFF),
     (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
])
def test_philox4x32_10_known_answers(counter, key, expected):
    out = philox4x32([np.array([c], np.uint32) for c in counter], *key)
    assert tuple(int(w[0]) for w in out) == expected


def test_ciphers_are_vectorised_elementwise():
    counters = np.arange(10, dtype=np.uint32)
    batch = threefry2x32(counters, counters * 3, 5, 6)
    for i in range(10):
        one = threefry2x32(counters[i:i + 1], counters[i:i + 1] * 3, 5, 6)
        assert (batch[0][i], batch[1][i]) == (one[0][0], one[1][0])


# -- the op against bits XLA's CPU backend produced (jaxlib 0.10.2) -------------------
XLA_VECTORS = [
    (THREE_FRY, [0x0123456789ABCDEF, 0xFF], (3, 2), "u32", [0x0123456789ABCDEF, 0x102],
     [0x93317BB7, 0x52A0647D, 0x0EFE59DB, 0x5DBB9AEA, 0xB5597047, 0xB83493B6]),
    (THREE_FRY, [0x0123456789ABCDEF, M - 1], (5,), "u32", [0x0123456789ABCDEF, 1],
     [0xB0F4215B, 0xE19A60B4, 0x0B3D7494, 0xACF8C4DC, 0xAAA4D889]),
    (THREE_FRY, [0x0123456789ABCDEF, 42], (2, 3), "u64", [0x0123456789ABCDEF, 48],
     [0x93887604892C25C1, 0x7403A6BB02E2C389, 0xF9653E03F72BAAFD, 0x4C8414C84E63DF35,
      0x00B61B0B3DA776FD, 0xFBC7A8E170CF275E]),
    (THREE_FRY, [7, 9], (), "u32", [7, 10], [0x8015F2D2]),
    (THREE_FRY, [7, 9], (3, 3), "u16", [7, 15],
     [0xF2D2, 0xB8EC, 0x52A3, 0x1B34, 0x3D2D, 0x6D4E, 0xDC7B, 0xA788, 0x79A9]),
    (PHILOX, [0x0123456789ABCDEF, 0xFF], (3, 2), "u32", [0x0123456789ABCDEF, 0x101],
     [0x49CDAA9D, 0xB102C1D7, 0xC3F045C9, 0x989B1289, 0x4587AA72, 0xEBF715F4]),
    (PHILOX, [0x0123456789ABCDEF, M], (5,), "u64", [0x0123456789ABCDEF, 2],
     [0x307385E041EB59F3, 0xA262F67C5B8B3389, 0xD71FD4DE7006D264, 0x40B5F7683AFF468E,
      0xA2A4E85734DA5D11]),
    (PHILOX, [5, M, 0x10], (7,), "u32", [5, 1, 0x11],
     [0xBC1BFE9B, 0x5585B765, 0xAB90FC8A, 0xDA5936C4, 0x53CD77B1, 0xEE1A41D7, 0x15E18587]),
    (PHILOX, [5, M - 1, M], (3,), "u64", [5, 0, 0],
     [0x13F56E92ADBCBA56, 0xC7FF6565315C23D0, 0xD63BFEBBFF0EC573]),
    (PHILOX, [11, 12], (2, 3), "u8", [11, 14], [0x5E, 0xAB, 0x53, 0xCD, 0x2C, 0xCE]),
]


@pytest.mark.parametrize("algorithm, state, dims, element_type, new_state, bits", XLA_VECTORS)
def test_bit_exact_with_xla(algorithm, state, dims, element_type, new_state, bits):
    got_state, got_bits = generate(algorithm, state, dims, element_type)
    assert got_state == new_state
    assert got_bits.shape == dims
    assert [int(v) for v in got_bits.ravel()] == bits


def test_default_is_philox():
    for dims, element_type in [((3, 2), "u32"), ((5,), "u64"), ((4,), "u16")]:
        a = generate(DEFAULT, [3, 4], dims, element_type)
        b = generate(PHILOX, [3, 4], dims, element_type)
        assert a[0] == b[0] and np.array_equal(a[1], b[1])


# -- layout: how cipher outputs become elements ---------------------------------------
def test_threefry_64_bit_elements_encrypt_consecutive_counters():
    key, counter = 0x1111222233334444, 1000
    state, bits = generate(THREE_FRY, [key, counter], (2, 3), "u64")
    counters = counter + np.arange(6, dtype=np.uint64)
    lo, hi = threefry2x32((counters & 0xFFFFFFFF).astype(np.uint32),
                          (counters >> np.uint64(32)).astype(np.uint32), 0x33334444, 0x11112222)
    expected = lo.astype(np.uint64) | (hi.astype(np.uint64) << np.uint64(32))
    assert np.array_equal(bits.ravel(), expected)
    assert state == [key, counter + 6]


@pytest.mark.parametrize("dims, split", [((3, 2), 1), ((4, 3), 0), ((5,), 0), ((3, 5), 1),
                                         ((3, 3, 3), 0), ((1, 7), 1), ((2, 5, 3), 0)])
def test_threefry_32_bit_elements_interleave_along_split_dim(dims, split):
    """A 32-bit output halves one dim (the first even one, else the first largest)
    and interleaves the two words of each encryption along it."""
    key, counter = 99, 7
    state, bits = generate(THREE_FRY, [key, counter], dims, "u32")
    half = list(dims)
    half[split] = (dims[split] + 1) // 2
    count = int(np.prod(half))
    o0, o1 = threefry2x32(np.arange(counter, counter + count, dtype=np.uint32),
                          np.zeros(count, np.uint32), 99, 0)
    o0, o1 = o0.reshape(half), o1.reshape(half)
    for index in np.ndindex(*dims):
        h = list(index)
        h[split] //= 2
        word = o0 if index[split] % 2 == 0 else o1
        assert bits[index] == word[tuple(h)]
    assert state == [key, counter + count]


def test_philox_32_and_64_bit_elements_are_round_robin():
    key, low, high = 0xABCDEF, 10, 3
    state, bits32 = generate(PHILOX, [key, low, high], (10,), "u32")
    counters = [np.array([low + j], np.uint32) for j in range(3)]
    blocks = [philox4x32([c, np.zeros(1, np.uint32), np.array([high], np.uint32),
                          np.zeros(1, np.uint32)], key, 0) for c in counters]
    words = [int(w[0]) for block in blocks for w in block]
    assert [int(v) for v in bits32] == words[:10]
    assert state == [key, low + 3, high]
    state, bits64 = generate(PHILOX, [key, low, high], (3,), "u64")
    joined = [words[i] | words[i + 1] << 32 for i in range(0, 12, 2)]
    assert [int(v) for v in bits64] == joined[:3]
    assert state == [key, low + 2, high]


def test_philox_two_word_state_uses_key_as_counter_high_word():
    a = generate(PHILOX, [0x55, 9], (4,), "u32")
    b = generate(PHILOX, [0x55, 9, 0x55], (4,), "u32")
    assert np.array_equal(a[1], b[1])
    assert a[0] == [0x55, 10] and b[0] == [0x55, 10, 0x55]


def test_philox_counter_carries_into_high_word():
    state, _ = generate(PHILOX, [1, M, 4], (9,), "u32")  # 3 blocks
    assert state == [1, 2, 5]
    state, _ = generate(PHILOX, [1, M], (9,), "u32")  # no high word to carry into
    assert state == [1, 2]


# -- element types: the same bits, reinterpreted or truncated -------------------------
WIDE = {32: "u32", 64: "u64"}


@pytest.mark.parametrize("algorithm", [THREE_FRY, PHILOX])
@pytest.mark.parametrize("element_type", ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
                                          "f16", "bf16", "f32", "f64", "f8e4m3fn", "s4", "u4"])
def test_every_element_type_gets_the_unsigned_bits(algorithm, element_type):
    t = PrimitiveType.from_text(element_type)
    dims = (3, 4)
    _, bits = generate(algorithm, [12345, 678], dims, element_type)
    assert bits.dtype == t.numpy and bits.shape == dims
    _, wide = generate(algorithm, [12345, 678], dims, WIDE.get(t.bit_width, "u32"))
    if t.bit_width >= 8:
        unsigned = np.dtype(f"u{t.bit_width // 8}")
        assert np.array_equal(bits.view(unsigned), wide.astype(unsigned))
    else:
        low = (wide & 0xF).astype(np.int64)
        if t.is_signed_int:
            low = np.where(low >= 8, low - 16, low)
        assert np.array_equal(bits.astype(np.int64), low)


def test_bf16_bits_view():
    _, bits = generate(PHILOX, [1, 2], (6,), "bf16")
    _, wide = generate(PHILOX, [1, 2], (6,), "u32")
    assert bits.dtype == ml_dtypes.bfloat16
    assert np.array_equal(bits.view(np.uint16), (wide & 0xFFFF).astype(np.uint16))


# -- determinism and state threading --------------------------------------------------
@pytest.mark.parametrize("algorithm", [THREE_FRY, PHILOX])
def test_deterministic_and_state_advances(algorithm):
    first = generate(algorithm, [77, 5], (4, 4), "u32")
    again = generate(algorithm, [77, 5], (4, 4), "u32")
    assert first[0] == again[0] and np.array_equal(first[1], again[1])
    second = generate(algorithm, first[0], (4, 4), "u32")
    assert not np.array_equal(first[1], second[1])
    other_key = generate(algorithm, [78, 5], (4, 4), "u32")
    assert not np.array_equal(first[1], other_key[1])


@pytest.mark.parametrize("algorithm", [THREE_FRY, PHILOX])
def test_chained_calls_continue_the_stream(algorithm):
    """64-bit streams split across calls: the state hands over the counter."""
    whole = generate(algorithm, [31, 0], (8,), "u64")
    state, head = generate(algorithm, [31, 0], (4,), "u64")
    state, tail = generate(algorithm, state, (4,), "u64")
    assert np.array_equal(np.concatenate([head, tail]), whole[1])
    assert state == whole[0]


def test_zero_elements():
    state, bits = generate(THREE_FRY, [1, 2], (3, 0), "u32")
    assert bits.shape == (3, 0) and state == [1, 2]
    state, bits = generate(PHILOX, [1, 2], (0,), "u64")
    assert bits.shape == (0,) and state == [1, 2]


# -- errors ---------------------------------------------------------------------------
@pytest.mark.parametrize("element_type", ["pred", "c64"])
def test_rejects_types_without_random_bits(element_type):
    with pytest.raises(ExecutionError, match="rng-bit-generator cannot produce"):
        generate(PHILOX, [1, 2], (2,), element_type)


def test_rejects_bad_state_sizes():
    with pytest.raises(ExecutionError, match="u64\\[2\\] state"):
        generate(THREE_FRY, [1, 2, 3], (2,))
    with pytest.raises(ExecutionError, match="u64\\[2\\] or u64\\[3\\]"):
        generate(PHILOX, [1, 2, 3, 4], (2,))


# -- against XLA itself, where jax is installed -------------------------------------
@pytest.mark.parametrize("algorithm", ["RNG_THREE_FRY", "RNG_PHILOX", "RNG_DEFAULT"])
@pytest.mark.parametrize("dims", [(), (5,), (3, 2), (2, 3, 5), (7, 1)])
def test_against_jax_when_installed(algorithm, dims):
    jax = pytest.importorskip("jax")
    key = np.array([0x12345678, 0x9ABCDEF0, 0x0FEDCBA9, 0x87654321], np.uint32)
    lax_algorithm = getattr(jax.lax.RandomAlgorithm, algorithm)
    new_key, want = jax.jit(lambda k: jax.lax.rng_bit_generator(
        k, dims, dtype=np.uint32, algorithm=lax_algorithm))(key)
    state = key.view(np.uint64)
    ours = {"RNG_THREE_FRY": THREE_FRY, "RNG_PHILOX": PHILOX, "RNG_DEFAULT": DEFAULT}[algorithm]
    got_state, got = generate(ours, state, dims, "u32")
    assert np.array_equal(got, np.asarray(want))
    assert np.array_equal(np.array(got_state, np.uint64).view(np.uint32), np.asarray(new_key))
