"""`xlapy.lax.rng_bit_generator`: XLA's stateless random bit generator, as
jax.lax exposes it.

The key is JAX's u32[4] (or XLA's own u64[2]); HLO's rng-bit-generator takes
and returns a u64[2] state, so a u32[4] key is reshaped to u32[2,2] and
bitcast to u64[2] on the way in, and back on the way out, exactly as JAX's
lowering does. The bits are identical to XLA's (the interpreter's
rng-bit-generator rule is bit-exact with XLA's threefry and philox).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

import numpy as np

from xlapy.core.array import Array
from xlapy.core.trace import as_array, bind, element_type
from xlapy.hlo.attributes import RngAlgorithm
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.lax._checks import shape_error, static_ints
from xlapy.lax.elementwise import bitcast_convert_type
from xlapy.lax.reshaping import reshape


class RandomAlgorithm(enum.IntEnum):
    """Which generator rng_bit_generator uses (RNG_DEFAULT is the backend's
    choice: Philox on XLA's CPU and GPU)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self) -> str:
        return self.name


_HLO_ALGORITHM = {RandomAlgorithm.RNG_DEFAULT: RngAlgorithm.DEFAULT,
                  RandomAlgorithm.RNG_THREE_FRY: RngAlgorithm.THREE_FRY,
                  RandomAlgorithm.RNG_PHILOX: RngAlgorithm.PHILOX}
_BIT_TYPES = {np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)}


def rng_bit_generator(key, shape: Sequence[int], dtype=np.uint32,
                      algorithm: RandomAlgorithm = RandomAlgorithm.RNG_DEFAULT
                      ) -> tuple[Array, Array]:
    """(new key, random bits of `shape` and unsigned `dtype`) from `key`, a
    u32[4] (JAX's form) or u64[2] state; the new key has the key's form."""
    key = as_array(key)
    shape = static_ints(shape, "rng_bit_generator", "shape")
    dtype = np.dtype(dtype)
    if dtype not in _BIT_TYPES:
        raise TypeError(f"lax.rng_bit_generator: unsupported dtype {dtype}; use uint8, "
                        "uint16, uint32 or uint64")
    algorithm = _HLO_ALGORITHM[RandomAlgorithm(algorithm)]
    u32_key = key.dtype == np.uint32 and key.shape == (4,)
    if not u32_key and not (key.dtype == np.uint64 and key.shape == (2,)):
        raise shape_error("rng_bit_generator", f"the key must be uint32[4] or uint64[2], got "
                                               f"{key.dtype}{list(key.shape)}")
    state = bitcast_convert_type(reshape(key, (2, 2)), np.uint64) if u32_key else key
    result = Shape.tuple([state.hlo_shape, Shape.array(element_type(dtype), shape)])
    new_state, bits = bind(Opcode.RNG_BIT_GENERATOR, [state], {"algorithm": algorithm},
                           shape=result, weak_type=False, name="rng_bit_generator")
    if u32_key:
        new_state = reshape(bitcast_convert_type(new_state, np.uint32), (4,))
    return new_state, bits


__all__ = ["RandomAlgorithm", "rng_bit_generator"]
