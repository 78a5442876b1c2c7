"""Shared pieces of the interpreter's indexing tests (dynamic-slice, gather,
scatter): HLO type names, random samples per type, bit-exact comparison."""

from __future__ import annotations

import numpy as np

from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.shape import Shape

ALL_TYPES = ["pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
             "f16", "bf16", "f32", "f64", "c64", "c128"]
NUMERIC_TYPES = ALL_TYPES[1:]
INDEX_TYPES = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]


def np_type(type_name: str) -> np.dtype:
    return PrimitiveType.from_text(type_name).numpy


def sample(type_name: str, dims, seed: int = 0) -> np.ndarray:
    """Random values of an HLO type; small magnitudes so sums stay exact-ish."""
    rng = np.random.default_rng(seed)
    dtype = np_type(type_name)
    count = int(np.prod(dims, dtype=np.int64))
    if type_name == "pred":
        flat = rng.random(count) < 0.5
    elif dtype.kind in "iu":
        flat = rng.integers(0 if dtype.kind == "u" else -50, 100, count)
    else:
        flat = np.round(rng.standard_normal(count) * 8, 1)
        if dtype.kind == "c":
            flat = flat + 1j * np.round(rng.standard_normal(count) * 8, 1)
    return np.asarray(flat).astype(dtype).reshape(dims)


def assert_same(actual, expected) -> None:
    expected = np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    assert actual.tobytes() == expected.tobytes(), (actual, expected)


def arr(type_name: str, dims) -> Shape:
    return Shape.array(type_name, dims)
