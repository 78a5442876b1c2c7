"""Argument checks shared by the lax structural, indexing and contraction
modules: static integers and axes, dtype agreement (weak values adapt), and
shape errors that name the lax function and the user's line.

Shapes, axes and sizes must be static Python ints; a traced value there
raises a ConcretizationError saying which argument it was.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from xlapy.core import dtypes
from xlapy.core.array import Array
from xlapy.core.errors import ConcretizationError, where
from xlapy.core.trace import with_weak_type
from xlapy.errors import ShapeError
from xlapy.hlo import shape_inference
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.lax.elementwise import convert_element_type


def shape_error(name: str, why: str) -> TypeError:
    """A TypeError naming the lax function, the problem and the user's line."""
    location = where()
    return TypeError(f"lax.{name}: {why}" + (f"\n  at {location}" if location else ""))


def static_int(value, name: str, what: str) -> int:
    """`value` as a Python int; shapes, axes and sizes must be known while tracing."""
    try:
        return operator.index(value)
    except ConcretizationError as e:
        raise ConcretizationError(f"lax.{name}: {what} must be a static integer. {e}") from None
    except TypeError:
        raise TypeError(f"lax.{name}: {what} must be an integer, got {value!r}") from None


def static_ints(values, name: str, what: str) -> tuple[int, ...]:
    """A sequence of static ints (a lone int is an error, as in JAX)."""
    if isinstance(values, (int, np.integer)):
        raise TypeError(f"lax.{name}: {what} must be a sequence of integers, got {values!r}")
    return tuple(static_int(v, name, what) for v in values)


def canonical_axis(axis, ndim: int, name: str) -> int:
    """`axis` in [0, ndim), negative axes counting from the end."""
    axis = static_int(axis, name, "an axis")
    if not -ndim <= axis < ndim:
        raise shape_error(name, f"axis {axis} is out of bounds for an array of rank {ndim}")
    return axis % ndim


def canonical_axes(axes, ndim: int, name: str) -> tuple[int, ...]:
    """Distinct canonical axes."""
    result = tuple(canonical_axis(a, ndim, name) for a in axes)
    if len(set(result)) != len(result):
        raise shape_error(name, f"repeated axis in {tuple(axes)}")
    return result


def match_dtype(x: Array, dtype, name: str, what: str) -> Array:
    """`x` in `dtype`: a weak-typed value converts, a strong one must already match."""
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    if x.weak_type:
        return with_weak_type(convert_element_type(x, dtype), True)
    raise shape_error(name, f"{what} has dtype {x.dtype} but must have dtype {dtype}; "
                            "convert it with lax.convert_element_type")


def common_dtype(arrays: Sequence[Array], name: str) -> list[Array]:
    """Arrays of one dtype: weak values take the strong values' dtype."""
    strong = {np.dtype(a.dtype) for a in arrays if not a.weak_type}
    if len(strong) > 1:
        raise shape_error(name, "operands must have one dtype, got "
                                + ", ".join(str(a.dtype) for a in arrays))
    if strong:
        target = strong.pop()
    else:
        target = dtypes.promote_types(*((a.dtype, True) for a in arrays))[0]
    return [match_dtype(a, target, name, f"operand {i}") for i, a in enumerate(arrays)]


def inferred_shape(name: str, opcode: Opcode, operands: Sequence[Array], attrs: dict,
                   declared: Shape | None = None) -> Shape:
    """The result shape of `opcode`, or a TypeError from lax.`name` saying why not.
    Remembered per signature: eager and lazy code ask the same question every step."""
    try:
        key = (opcode, tuple((o.shape, o.dtype) for o in operands), tuple(attrs.items()),
               declared)
        hit = _INFERRED.get(key)
    except TypeError:   # an unhashable attribute
        key, hit = None, None
    if hit is not None:
        return hit
    try:
        shape = shape_inference.infer_shape(opcode, [o.hlo_shape for o in operands], attrs,
                                            declared)
    except ShapeError as e:
        raise shape_error(name, str(e)) from None
    if key is not None:
        if len(_INFERRED) > 4096:
            _INFERRED.clear()
        _INFERRED[key] = shape
    return shape


_INFERRED: dict[tuple, Shape] = {}
