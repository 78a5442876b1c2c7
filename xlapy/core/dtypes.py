"""JAX's type promotion, with weak types for Python scalars, and its x64 switch.

The lattice (JAX's "type promotion semantics"): bool -> weak int -> {u8, i8};
unsigned and signed chains join at the next wider signed type; integers ->
weak float -> {bf16, f16} -> f32 -> f64, and weak complex -> c64 -> c128. The
result of mixing two types is their least upper bound. A Python scalar is
*weak*: `x * 2` keeps `x`'s dtype. A weak result materialises as the default
type of its kind.

The defaults follow `xlapy.config.enable_x64`, JAX's `jax_enable_x64`. Off
(the default): int32, float32, complex64; 64-bit NumPy data becomes 32-bit
as it enters the frontend (`canonicalize`), an explicitly requested 64-bit
dtype is truncated with JAX's warning (`canonicalize_user_dtype`), and
uint32 with int32 joins at int32, so no 64-bit type forms from 32-bit
inputs. On: int64, float64, complex128, and 64-bit data keeps its width.
An xlapy array keeps the dtype it was made with whatever the mode, as a JAX
array does; HLO modules (parsed, or from other frameworks) never see the
switch, and `lax`, HLO's builder, takes the dtypes it is given literally
(`lax.convert_element_type(x, float64)` is float64 in either mode, where JAX
would truncate it): xlapy's own code computes in float64 where it must.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings

import ml_dtypes
import numpy as np

from xlapy import config

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32,
                                                       np.uint64))
float16, float32, float64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

_TO_32_BIT = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


def default_int() -> np.dtype:
    """What a weak Python int materialises as: int64 with x64, else int32."""
    return int64 if config.enable_x64.value else int32


def default_uint() -> np.dtype:
    """The unsigned default (sums of unsigned integers): uint64 with x64, else uint32."""
    return uint64 if config.enable_x64.value else uint32


def default_float() -> np.dtype:
    """What a weak Python float materialises as: float64 with x64, else float32."""
    return float64 if config.enable_x64.value else float32


def default_complex() -> np.dtype:
    """What a weak Python complex materialises as: complex128 with x64, else complex64."""
    return complex128 if config.enable_x64.value else complex64


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
# Without x64 the one join that would form a 64-bit type from 32-bit inputs,
# uint32 with int32, stays at int32 (JAX's lattice does the same).
_EDGES_32 = {**_EDGES, uint32: [uint64, int32]}


@functools.cache
def _upper_bounds(node, x64: bool) -> frozenset:
    """Every lattice node at or above `node`."""
    bounds = {node}
    for above in (_EDGES if x64 else _EDGES_32)[node]:
        bounds |= _upper_bounds(above, x64)
    return frozenset(bounds)


def _node(dtype: np.dtype, weak: bool):
    if not weak or dtype.kind == "b":
        return dtype
    if is_integer(dtype):
        return WEAK_INT
    return WEAK_COMPLEX if is_complex(dtype) else WEAK_FLOAT


def _materialise(node) -> tuple[np.dtype, bool]:
    if node == WEAK_INT:
        return default_int(), True
    if node == WEAK_FLOAT:
        return default_float(), True
    if node == WEAK_COMPLEX:
        return default_complex(), True
    return node, False


@functools.cache
def _join(a, b, x64: bool):
    common = _upper_bounds(a, x64) & _upper_bounds(b, x64)
    # The least upper bound is the common bound below all the others.
    for candidate in common:
        if all(other in _upper_bounds(candidate, x64) for other in common):
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
    x64 = config.enable_x64.value
    return _materialise(functools.reduce(lambda a, b: _join(a, b, x64), nodes))


def result_type(*values) -> np.dtype:
    """The dtype NumPy-style arguments promote to (arrays, scalars, dtypes)."""
    return promote_types(*(dtype_and_weak(v) for v in values))[0]


def dtype_and_weak(value) -> tuple[np.dtype, bool]:
    """(dtype, weak) of an xlapy array, NumPy value, Python scalar or dtype, as
    the frontend types it: an xlapy array keeps its dtype, NumPy data and
    dtypes are canonicalized, Python scalars are weak defaults."""
    weak_type = getattr(value, "weak_type", None)
    if weak_type is not None:
        return np.dtype(value.dtype), weak_type
    if isinstance(value, (np.ndarray, np.generic)):  # before int/float: np.float64 is a float
        return canonicalize(value.dtype), False
    if isinstance(value, bool):
        return bool_, False
    if isinstance(value, int):
        return default_int(), True
    if isinstance(value, float):
        return default_float(), True
    if isinstance(value, complex):
        return default_complex(), True
    if isinstance(value, (list, tuple)):
        return default_dtype_of(value), False
    try:
        return canonicalize(np.dtype(value)), False
    except TypeError:
        return canonicalize(np.asarray(value).dtype), False


def canonicalize(dtype) -> np.dtype:
    """`dtype` as the frontend holds data of it: without x64, 64-bit types
    become their 32-bit counterparts (silently, as JAX converts NumPy inputs)."""
    if not isinstance(dtype, np.dtype):
        dtype = np.dtype(dtype)
    if config.enable_x64.value:
        return dtype
    return without_x64(dtype)


def without_x64(dtype: np.dtype) -> np.dtype:
    """`canonicalize` of a NumPy dtype with x64 off, without its checks (every
    NumPy argument of a jit call asks)."""
    return _TO_32_BIT.get(dtype, dtype)


_PYTHON_TYPES = {bool: lambda: bool_, int: default_int, float: default_float,
                 complex: default_complex}
_PYTHON_DEFAULTS = {int64: default_int, float64: default_float, complex128: default_complex}


def canonicalize_user_dtype(dtype, fun_name: str = "") -> np.dtype:
    """A dtype a user asked for (`dtype=` of zeros, astype...) as the frontend
    makes it: Python's `int`/`float`/`complex` are the defaults; without x64 an
    explicit 64-bit dtype is truncated to 32 bits with JAX's UserWarning."""
    if isinstance(dtype, type) and dtype in _PYTHON_TYPES:
        return _PYTHON_TYPES[dtype]()
    requested = np.dtype(dtype)
    canonical = canonicalize(requested)
    if canonical != requested:
        where = f" requested in {fun_name}" if fun_name else ""
        warnings.warn(
            f"Explicitly requested dtype {requested}{where} is not available, and will be "
            f"truncated to dtype {canonical}. To enable more dtypes, set the enable_x64 "
            "configuration option (xlapy.config.update('enable_x64', True), JAX's "
            "jax_enable_x64) or --xlapy_enable_x64 in XLAPY_FLAGS.",
            UserWarning, stacklevel=_user_stacklevel())
    return canonical


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_stacklevel() -> int:
    """The `stacklevel` that points a warning at the first frame outside xlapy."""
    frame, level = sys._getframe(1), 1   # level 1: whoever calls warnings.warn
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level


def default_dtype_of(value) -> np.dtype:
    """The dtype `xnp.asarray(value)` gives: weak Python scalars and lists of
    them take the default int/float/complex types; NumPy data is canonicalized."""
    if isinstance(value, (np.ndarray, np.generic)):
        return canonicalize(value.dtype)
    found = np.asarray(value).dtype
    # NumPy reads Python numbers as int64/float64/complex128: those are the
    # defaults; narrower types come from NumPy leaves and stay.
    default = _PYTHON_DEFAULTS.get(found)
    return default() if default is not None else canonicalize(found)


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
