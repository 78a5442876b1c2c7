"""JAX's type promotion, with weak types for Python scalars.

The lattice (JAX's "type promotion semantics"): bool -> weak int -> {u8, i8};
unsigned and signed chains join at the next wider signed type; integers ->
weak float -> {bf16, f16} -> f32 -> f64, and weak complex -> c64 -> c128. The
result of mixing two types is their least upper bound. A Python scalar is
*weak*: `x * 2` keeps `x`'s dtype. A weak result materialises as the default
type of its kind (int32, float32, complex64), as JAX does without x64.

Unlike JAX without x64, explicit 64-bit arrays keep their dtype: xlapy never
silently narrows a user's float64 data.
"""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32,
                                                       np.uint64))
float16, float32, float64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

DEFAULT_INT, DEFAULT_FLOAT, DEFAULT_COMPLEX = int32, float32, complex64

# Weak kinds are lattice nodes of their own.
WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX = "i*", "f*", "c*"

_EDGES = {
    bool_: [WEAK_INT],
    WEAK_INT: [uint8, int8],
    uint8: [uint16, int16], uint16: [uint32, int32], uint32: [uint64, int64],
    uint64: [WEAK_FLOAT],
    int8: [int16], int16: [int32], int32: [int64], int64: [WEAK_FLOAT],
    WEAK_FLOAT: [bfloat16, float16, WEAK_COMPLEX],
    bfloat16: [float32], float16: [float32], float32: [float64, complex64],
    float64: [complex128],
    WEAK_COMPLEX: [complex64], complex64: [complex128], complex128: [],
}


@functools.cache
def _upper_bounds(node) -> frozenset:
    """Every lattice node at or above `node`."""
    bounds = {node}
    for above in _EDGES[node]:
        bounds |= _upper_bounds(above)
    return frozenset(bounds)


def _node(dtype: np.dtype, weak: bool):
    if not weak or dtype.kind == "b":
        return dtype
    if is_integer(dtype):
        return WEAK_INT
    return WEAK_COMPLEX if is_complex(dtype) else WEAK_FLOAT


def _materialise(node) -> tuple[np.dtype, bool]:
    weak = {WEAK_INT: DEFAULT_INT, WEAK_FLOAT: DEFAULT_FLOAT, WEAK_COMPLEX: DEFAULT_COMPLEX}
    return (weak[node], True) if isinstance(node, str) else (node, False)


@functools.cache
def _join(a, b):
    common = _upper_bounds(a) & _upper_bounds(b)
    # The least upper bound is the common bound below all the others.
    for candidate in common:
        if all(other in _upper_bounds(candidate) for other in common):
            return candidate
    raise TypeError(f"no common type for {a} and {b}")


def promote_types(*typed: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """The (dtype, weak) that values of the given (dtype, weak) pairs promote to."""
    nodes = []
    for dtype, weak in typed:
        dtype = np.dtype(dtype)
        if dtype not in _EDGES:
            # Narrow floats (f8...) only combine with themselves or weak values.
            nodes.append(dtype)
            continue
        nodes.append(_node(dtype, weak))
    narrow = {n for n in nodes if isinstance(n, np.dtype) and n not in _EDGES}
    if narrow:
        others = [n for n in nodes if n not in narrow and not isinstance(n, str)]
        if len(narrow) > 1 or others:
            raise TypeError(f"cannot promote {sorted(map(str, narrow))} with other types "
                            "implicitly; convert explicitly with astype")
        return narrow.pop(), False
    return _materialise(functools.reduce(_join, nodes))


def result_type(*values) -> np.dtype:
    """The dtype NumPy-style arguments promote to (arrays, scalars, dtypes)."""
    return promote_types(*(dtype_and_weak(v) for v in values))[0]


def dtype_and_weak(value) -> tuple[np.dtype, bool]:
    """(dtype, weak) of an xlapy array, NumPy value, Python scalar or dtype."""
    weak_type = getattr(value, "weak_type", None)
    if weak_type is not None:
        return np.dtype(value.dtype), weak_type
    if isinstance(value, (np.ndarray, np.generic)):  # before int/float: np.float64 is a float
        return canonicalize(value.dtype), False
    if isinstance(value, bool):
        return bool_, False
    if isinstance(value, int):
        return DEFAULT_INT, True
    if isinstance(value, float):
        return DEFAULT_FLOAT, True
    if isinstance(value, complex):
        return DEFAULT_COMPLEX, True
    if isinstance(value, (list, tuple)):
        return default_dtype_of(value), False
    try:
        return canonicalize(np.dtype(value)), False
    except TypeError:
        return canonicalize(np.asarray(value).dtype), False


def canonicalize(dtype) -> np.dtype:
    """A NumPy dtype as xlapy stores it (every HLO type is allowed)."""
    return np.dtype(dtype)


def default_dtype_of(value) -> np.dtype:
    """The dtype `xnp.asarray(value)` gives: weak Python scalars and lists of
    them take the default int/float/complex types; NumPy data keeps its dtype."""
    if isinstance(value, (np.ndarray, np.generic)):
        return canonicalize(value.dtype)
    array = np.asarray(value)
    kind = array.dtype.kind
    if kind == "f":
        return DEFAULT_FLOAT
    if kind in "iu":
        return DEFAULT_INT
    if kind == "c":
        return DEFAULT_COMPLEX
    return canonicalize(array.dtype)


def is_float(dtype) -> bool:
    return np.dtype(dtype).kind == "f" or np.dtype(dtype) == bfloat16


def is_integer(dtype) -> bool:
    return np.dtype(dtype).kind in "iu"


def is_complex(dtype) -> bool:
    return np.dtype(dtype).kind == "c"


def finfo(dtype):
    return ml_dtypes.finfo(dtype)


def iinfo(dtype):
    return ml_dtypes.iinfo(dtype)


float0 = np.dtype([("float0", np.void, 0)])
"""The dtype of an integer input's cotangent: zero bytes, as jax.dtypes.float0."""
