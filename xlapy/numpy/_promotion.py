"""Argument promotion and broadcasting shared by every `xlapy.numpy` module.

`xnp` functions take NumPy-style arguments (arrays, Python and NumPy scalars,
nested lists), promote them with JAX's lattice (weak Python scalars adapt to
the other operands: `x * 2` keeps `x`'s dtype) and broadcast them with
NumPy's rules, before handing them to `lax` ops that need one dtype and one
shape. Python scalars convert straight to the promoted dtype, so
`f64_array + 0.1` sees 0.1 in double precision, never rounded through f32.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence

import numpy as np

from xlapy.core import dtypes, lazy
from xlapy.core.array import ConcreteArray
from xlapy.core.trace import (
    Array,
    as_array,
    bind,
    current_trace,
    element_type,
    with_weak_type,
)
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.lax import primitives as lax

_PY_SCALARS = (bool, int, float, complex)


# -- dtype utilities ----------------------------------------------------------------------
def is_inexact(dtype) -> bool:
    """Floating or complex (bf16 included)."""
    return dtypes.is_float(dtype) or dtypes.is_complex(dtype)


def to_inexact_dtype(dtype) -> np.dtype:
    """The dtype math functions compute `dtype` in, as JAX's: inexact types
    stay, 64-bit integers become float64 and bool and narrower integers float32
    (whatever the x64 mode: `sqrt(int32)` is float32 in JAX with x64 too)."""
    dtype = np.dtype(dtype)
    if is_inexact(dtype):
        return dtype
    if dtype.kind in "iu" and dtype.itemsize == 8:
        return dtypes.float64
    return dtypes.float32


def real_dtype(dtype) -> np.dtype:
    """The component dtype of a complex dtype (c64 -> f32); others unchanged."""
    dtype = np.dtype(dtype)
    if dtype == dtypes.complex64:
        return dtypes.float32
    if dtype == dtypes.complex128:
        return dtypes.float64
    return dtype


def _typed(x):
    """`x` as something `dtype_and_weak` reads as xnp.asarray would type it
    (nested lists of Python numbers take the default types)."""
    if isinstance(x, (list, tuple)):
        return as_array(x)
    return x


def result_dtype_and_weak(*args) -> tuple[np.dtype, bool]:
    """(dtype, weak) that `args` (arrays, scalars, lists, dtypes) promote to."""
    if not args:
        raise ValueError("at least one array or dtype is required")
    return dtypes.promote_types(*(dtypes.dtype_and_weak(_typed(a)) for a in args))


def convert(x, dtype, weak_type: bool = False) -> Array:
    """`x` as an Array of `dtype`; a Python scalar converts directly (no
    intermediate 32-bit rounding), and the result carries `weak_type`."""
    dtype = np.dtype(dtype)
    if not isinstance(x, Array):  # host data converts on the host
        return with_weak_type(as_array(x, dtype), weak_type)
    if x.dtype != dtype:
        x = lax.convert_element_type(x, dtype)
    return with_weak_type(x, weak_type)


def check_arraylike(name: str, *args) -> None:
    """Raise TypeError naming `name` when an argument is not array-like."""
    for i, arg in enumerate(args):
        if isinstance(arg, (Array, np.ndarray, np.generic, *_PY_SCALARS, list, tuple)):
            continue
        if hasattr(arg, "__array__"):
            continue
        raise TypeError(f"{name}: argument {i} must be an array or a scalar, "
                        f"got {type(arg).__name__}")


# -- promotion ----------------------------------------------------------------------------
def promote_dtypes(*args) -> list[Array]:
    """The arguments as Arrays of their common dtype (JAX's lattice, weak
    types honoured); shapes are left alone."""
    if args and all(isinstance(a, Array) for a in args):
        first = args[0]
        if all(a.dtype == first.dtype and a.weak_type == first.weak_type for a in args):
            return list(args)  # the common case, kept cheap for eager mode
    dtype, weak = result_dtype_and_weak(*args)
    return [convert(a, dtype, weak) for a in args]


def promote_dtypes_inexact(*args) -> list[Array]:
    """As `promote_dtypes`, then integers and bool become the default float:
    `xnp.sin(1)` is a weak float32, `xnp.sqrt(int32 array)` a float32 array."""
    dtype, weak = result_dtype_and_weak(*args)
    return [convert(a, to_inexact_dtype(dtype), weak) for a in args]


def promote_args(name: str, *args) -> list[Array]:
    """The arguments of `name` promoted to one dtype and broadcast to one shape."""
    check_arraylike(name, *args)
    return broadcast_arrays(*promote_dtypes(*args))


def promote_args_inexact(name: str, *args) -> list[Array]:
    """As `promote_args`, with integer and bool results made floating."""
    check_arraylike(name, *args)
    return broadcast_arrays(*promote_dtypes_inexact(*args))


def constant_like(x: Array, value) -> Array:
    """A 0-d constant of `x`'s dtype, weak so it never changes `x`'s weak type."""
    return with_weak_type(as_array(value, x.dtype), True)


def full_like_of(x: Array, value) -> Array:
    """An array of `x`'s shape, dtype and weak type filled with `value`."""
    filled = lax.broadcast_in_dim(constant_like(x, value), x.shape, ())
    return with_weak_type(filled, x.weak_type)


def promote_args_numeric(name: str, *args) -> list[Array]:
    """As `promote_args`, but a bool result is computed as int32 (NumPy's
    flooring division and powers of bools give integers; jnp's give int32
    whatever the x64 mode)."""
    arrays = promote_args(name, *args)
    if arrays[0].dtype == np.bool_:
        arrays = [with_weak_type(lax.convert_element_type(a, dtypes.int32), a.weak_type)
                  for a in arrays]
    return arrays


# -- broadcasting -------------------------------------------------------------------------
def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """NumPy's broadcast of `shapes`; ValueError when they are incompatible."""
    shapes = [tuple(int(d) for d in s) for s in shapes]
    if not shapes:
        return ()
    rank = max(len(s) for s in shapes)
    result = []
    for axis in range(rank):
        sizes = {s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            raise ValueError("shapes " + ", ".join(str(s) for s in shapes)
                             + " cannot be broadcast together")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def broadcast_to(array, shape) -> Array:
    """`array` broadcast to `shape` by NumPy's rules (size-1 and missing leading
    dimensions repeat); ValueError when it cannot be."""
    x = as_array(array)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if x.shape == shape:
        return x
    lead = len(shape) - x.ndim
    if lead < 0 or any(d not in (1, t) for d, t in zip(x.shape, shape[lead:])):
        raise ValueError(f"cannot broadcast an array of shape {x.shape} to shape {shape}")
    if type(x) is ConcreteArray and current_trace() is None and not lazy.active():
        # eager: NumPy's broadcast is the same, exact op. Under a trace (or
        # recording lazily) the broadcast is staged, so a scalar stays one
        # constant (or leaf) of the module instead of an array of the full shape.
        return ConcreteArray(np.broadcast_to(x.value, shape), x.weak_type)
    # HLO broadcast maps dimensions one to one, so size-1 axes that grow are
    # reshaped away first.
    keep = [i for i, d in enumerate(x.shape) if d == shape[lead + i]]
    if len(keep) != x.ndim:
        x = reshape_exact(x, tuple(x.shape[i] for i in keep))
    return lax.broadcast_in_dim(x, shape, tuple(lead + i for i in keep))


def broadcast_arrays(*args) -> list[Array]:
    """The arguments as Arrays broadcast to their common shape."""
    arrays = [as_array(a) for a in args]
    if all(a.shape == arrays[0].shape for a in arrays):
        return arrays
    shape = broadcast_shapes(*(a.shape for a in arrays))
    return [broadcast_to(a, shape) for a in arrays]


def reshape_exact(x: Array, shape: Sequence[int]) -> Array:
    """HLO reshape of `x` to `shape` (same element count; no -1 inference)."""
    shape = tuple(int(d) for d in shape)
    if tuple(x.shape) == shape:
        return x
    if int(np.prod(shape, dtype=np.int64)) != x.size:
        raise ValueError(f"cannot reshape an array of shape {x.shape} to {shape}")
    result = Shape.array(element_type(x.dtype), shape)
    return bind(Opcode.RESHAPE, [x], shape=result, weak_type=x.weak_type, name="reshape")


# -- axes ---------------------------------------------------------------------------------
def canonicalize_axis(axis, ndim: int) -> int:
    """`axis` as a non-negative int below `ndim` (negative counts from the end)."""
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"axis must be an integer, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for an array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


def canonicalize_axes(axis, ndim: int) -> tuple[int, ...]:
    """`axis` (None for all, an int, or a sequence) as sorted unique axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, Iterable) and not isinstance(axis, Array):
        axes = tuple(canonicalize_axis(a, ndim) for a in axis)
    else:
        axes = (canonicalize_axis(axis, ndim),)
    if len(set(axes)) != len(axes):
        raise ValueError(f"repeated axis in {axis!r}")
    return tuple(sorted(axes))


__all__ = ["broadcast_arrays", "broadcast_shapes", "broadcast_to"]
