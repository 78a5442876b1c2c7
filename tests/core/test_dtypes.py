"""Type promotion agrees with JAX's lattice, weak types included.

jax_promotion_table.txt was produced by `jax.dtypes.result_type(a, b,
return_weak_type_flag=True)` with x64 enabled (xlapy keeps explicit 64-bit
types); a weak result there materialises here as the 32-bit default of its
kind, as JAX does without x64.
"""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from xlapy.core import dtypes

WEAK = {"i*": (np.int32, True), "f*": (np.float32, True), "c*": (np.complex64, True)}
TABLE = [line.split() for line in (Path(__file__).parent / "jax_promotion_table.txt")
         .read_text().splitlines() if line.strip()]


def typed(name):
    if name in WEAK:
        return np.dtype(WEAK[name][0]), True
    if name == "bfloat16":
        return np.dtype(ml_dtypes.bfloat16), False
    return np.dtype(name), False


@pytest.mark.parametrize("a, b, expected, weak", TABLE)
def test_promotion_matches_jax(a, b, expected, weak):
    dtype, is_weak = dtypes.promote_types(typed(a), typed(b))
    assert is_weak == bool(int(weak))
    if is_weak:
        kind = np.dtype(expected).kind
        expected = {"i": "int32", "f": "float32", "c": "complex64", "b": "bool"}[kind]
    assert dtype == typed(expected)[0]


def test_python_scalars_are_weak():
    assert dtypes.dtype_and_weak(2) == (np.dtype(np.int32), True)
    assert dtypes.dtype_and_weak(2.0) == (np.dtype(np.float32), True)
    assert dtypes.dtype_and_weak(True) == (np.dtype(np.bool_), False)
    assert dtypes.dtype_and_weak(np.float64(1)) == (np.dtype(np.float64), False)


def test_narrow_floats_need_explicit_conversion():
    f8 = np.dtype(ml_dtypes.float8_e4m3fn)
    assert dtypes.promote_types((f8, False), (np.dtype(np.float32), True)) == (f8, False)
    with pytest.raises(TypeError, match="convert explicitly"):
        dtypes.promote_types((f8, False), (np.dtype(np.float32), False))


def test_default_dtypes_of_python_data():
    assert dtypes.default_dtype_of([1.0, 2.0]) == np.float32
    assert dtypes.default_dtype_of([1, 2]) == np.int32
    assert dtypes.default_dtype_of(np.arange(3, dtype=np.int64)) == np.int64
