"""Type promotion agrees with JAX's lattice, weak types included, in both
of JAX's modes.

jax_promotion_table.txt was produced by `jax.dtypes.result_type(a, b,
return_weak_type_flag=True)` with x64 enabled. Without x64 a weak result
materialises as the 32-bit default of its kind, and uint32 joins a signed
type of at most 32 bits at int32 (JAX's lattice never forms a 64-bit type
from 32-bit inputs); every other join is the same.
"""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from xlapy import config
from xlapy.core import dtypes

WEAK = {"i*": (np.int32, True), "f*": (np.float32, True), "c*": (np.complex64, True)}
TABLE = [line.split() for line in (Path(__file__).parent / "jax_promotion_table.txt")
         .read_text().splitlines() if line.strip()]
DEFAULTS = {False: {"i": "int32", "f": "float32", "c": "complex64", "b": "bool"},
            True: {"i": "int64", "f": "float64", "c": "complex128", "b": "bool"}}


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def x64(request):
    with config.enable_x64(request.param):
        yield request.param


def typed(name):
    if name in WEAK:
        return np.dtype(WEAK[name][0]), True
    if name == "bfloat16":
        return np.dtype(ml_dtypes.bfloat16), False
    return np.dtype(name), False


def _x32_join(a, b, expected):
    """The table's (x64) join as JAX forms it without x64."""
    if {a, b} & {"uint32"} and {a, b} & {"int8", "int16", "int32"}:
        return "int32"
    return expected


@pytest.mark.parametrize("a, b, expected, weak", TABLE)
def test_promotion_matches_jax(a, b, expected, weak, x64):
    dtype, is_weak = dtypes.promote_types(typed(a), typed(b))
    assert is_weak == bool(int(weak))
    if is_weak:
        expected = DEFAULTS[x64][np.dtype(expected).kind]
    elif not x64:
        expected = _x32_join(a, b, expected)
    assert dtype == typed(expected)[0]


def test_python_scalars_are_weak(x64):
    assert dtypes.dtype_and_weak(2) == (np.dtype(DEFAULTS[x64]["i"]), True)
    assert dtypes.dtype_and_weak(2.0) == (np.dtype(DEFAULTS[x64]["f"]), True)
    assert dtypes.dtype_and_weak(1j) == (np.dtype(DEFAULTS[x64]["c"]), True)
    assert dtypes.dtype_and_weak(True) == (np.dtype(np.bool_), False)


def test_numpy_values_are_canonicalized(x64):
    assert dtypes.dtype_and_weak(np.float64(1)) == (np.dtype(DEFAULTS[x64]["f"]), False)
    assert dtypes.dtype_and_weak(np.ones(2, np.uint64)) == \
        (np.dtype(np.uint64 if x64 else np.uint32), False)
    assert dtypes.dtype_and_weak(np.float16(1)) == (np.dtype(np.float16), False)


def test_narrow_floats_need_explicit_conversion():
    f8 = np.dtype(ml_dtypes.float8_e4m3fn)
    assert dtypes.promote_types((f8, False), (np.dtype(np.float32), True)) == (f8, False)
    with pytest.raises(TypeError, match="convert explicitly"):
        dtypes.promote_types((f8, False), (np.dtype(np.float32), False))


def test_default_dtypes_of_python_data(x64):
    assert dtypes.default_dtype_of([1.0, 2.0]) == DEFAULTS[x64]["f"]
    assert dtypes.default_dtype_of([1, 2]) == DEFAULTS[x64]["i"]
    assert dtypes.default_dtype_of([1j]) == DEFAULTS[x64]["c"]
    assert dtypes.default_dtype_of(np.arange(3, dtype=np.int64)) == DEFAULTS[x64]["i"]
    assert dtypes.default_dtype_of([np.ones(2, np.float16)]) == np.float16
