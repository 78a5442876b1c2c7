"""Dtype lists, edge values and one-op runners shared by the elementwise rule tests."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from tests.hlo.evaluator.util import run_op
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.shape import Shape

SIGNED = [np.int8, np.int16, np.int32, np.int64]
UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]
INTS = SIGNED + UNSIGNED
NARROW_FLOATS = [np.float16, ml_dtypes.bfloat16]
FLOATS = NARROW_FLOATS + [np.float32, np.float64]
COMPLEX = [np.complex64, np.complex128]
ALL = [np.bool_] + INTS + FLOATS + COMPLEX


def ptype(dtype) -> PrimitiveType:
    return PrimitiveType.from_numpy(dtype)


def name(dtype) -> str:
    """A dtype's HLO spelling, for test ids."""
    return ptype(dtype).value


def run(opcode, out_dtype, *inputs, **attrs):
    """Evaluate `opcode(inputs...)` whose result has the first input's dims."""
    arrays = [np.asarray(x) for x in inputs]
    shape = Shape.array(ptype(out_dtype), np.broadcast_shapes(*(a.shape for a in arrays)))
    result = run_op(opcode, shape, *arrays, **attrs)
    assert result.dtype == np.dtype(out_dtype) and result.shape == shape.dimensions
    return result


def cast(values, dtype) -> np.ndarray:
    """`values` rounded to `dtype`; overflow to inf is expected, not warned about."""
    with np.errstate(over="ignore"):
        return np.asarray(values).astype(dtype)


def int_edges(dtype) -> np.ndarray:
    """min, min+1, -2, -1, 0, 1, 2, 3, 7, max-1, max (those the type holds)."""
    info = np.iinfo(dtype)
    values = [info.min, info.min + 1, -2, -1, 0, 1, 2, 3, 7, info.bits - 1, info.bits,
              info.max - 1, info.max]
    return np.array(sorted({v for v in values if info.min <= v <= info.max}), dtype=dtype)


def float_edges(dtype) -> np.ndarray:
    """NaN, +-inf, +-0, +-tiny subnormal, +-halfway points, +-max, ordinary values."""
    info = ml_dtypes.finfo(dtype)
    tiny = float(info.smallest_subnormal)
    values = [math.nan, math.inf, -math.inf, 0.0, -0.0, tiny, -tiny, 0.5, -0.5, 1.5, -1.5,
              2.5, -2.5, 1.0, -1.0, 3.25, -7.75, float(info.max), -float(info.max), 100.0]
    return np.array(values, dtype=np.float64).astype(dtype)


def pairs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (a, b) of `values`, as two flat arrays."""
    a, b = np.meshgrid(values, values, indexing="ij")
    return a.reshape(-1), b.reshape(-1)


def same(actual: np.ndarray, expected: np.ndarray) -> bool:
    """Equal values of equal dtype; NaN equals NaN, and -0 differs from +0."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        return False
    if actual.dtype.kind in "biu":
        return bool(np.array_equal(actual, expected))
    if actual.dtype.kind == "c":
        return same(actual.real, expected.real) and same(actual.imag, expected.imag)
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    both_nan = np.isnan(a) & np.isnan(e)
    equal = (a == e) & (np.signbit(a) == np.signbit(e))
    return bool(np.all(both_nan | equal))


def assert_same(actual, expected, context=""):
    assert same(actual, expected), f"{context}\nactual:   {actual!r}\nexpected: {expected!r}"


def ulp_distance(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Distance in units in the last place of the actual dtype (NaNs must agree)."""
    dtype = actual.dtype
    nan = np.isnan(actual.astype(np.float64))
    assert np.array_equal(nan, np.isnan(expected.astype(np.float64)))
    width = dtype.itemsize * 8
    uint = {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]

    def key(x):
        bits = x.astype(dtype).view(uint).astype(np.int64 if width < 64 else np.uint64)
        if width == 64:
            signed = bits.view(np.int64)
            return np.where(signed < 0, np.int64(-(2**63)) - signed, signed).astype(object)
        sign = 1 << (width - 1)
        return np.where(bits >= sign, sign - bits, bits)

    distance = np.abs(key(actual) - key(expected))
    return np.where(nan, 0, distance)
