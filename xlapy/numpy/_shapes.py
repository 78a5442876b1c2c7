"""`xnp` shapes: reshape, transpose and friends, moving, adding and removing
axes, and the shape queries (`shape`, `ndim`, `size`), with the argument
helpers the other `xnp` modules share (array arguments, static ints, slices
along an axis, `axis=None` as the flattened array, scalars filled to a shape).

Every function is a `lax` reshape or transpose (or none), so it traces into
the same HLO that it runs eagerly; shapes are static.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

import xlapy.numpy as xnp
from xlapy.core.errors import compile_error
from xlapy.core.trace import Array, Tracer, as_array
from xlapy.lax import primitives as lax
from xlapy.numpy._indexing import getitem
from xlapy.numpy._promotion import (
    canonicalize_axes,
    canonicalize_axis,
    reshape_exact,
)


def _asarray(x) -> Array:
    """An array argument as an Array (lists holding Arrays are stacked)."""
    if isinstance(x, Array):
        return x
    if isinstance(x, (list, tuple)):
        return xnp.asarray(x)
    return as_array(x)


def _static_int(value, what: str) -> int:
    """A shape-deciding argument as a Python int; a traced value cannot be one."""
    if isinstance(value, Tracer):
        raise compile_error(what, "the output shape would depend on a traced value; pass a "
                                  "Python int (or mark the argument static)")
    return operator.index(value)


def _slice_along(a: Array, axis: int, start, stop, step=None) -> Array:
    return getitem(a, (slice(None),) * axis + (slice(start, stop, step),))


def _full(shape, value, dtype) -> Array:
    """`value` (a scalar or 0-d Array) as `dtype`, broadcast to `shape`."""
    value = value if isinstance(value, Array) else as_array(value, dtype)
    value = lax.convert_element_type(value, dtype)
    return lax.broadcast_in_dim(value, tuple(shape), ())


def _flat_axis(a: Array, axis) -> tuple[Array, int]:
    if axis is None:
        return ravel(a), 0
    return a, canonicalize_axis(axis, a.ndim)


# -- shapes -------------------------------------------------------------------------------
def _resolve_shape(shape, size: int) -> tuple[int, ...]:
    """`shape` with at most one -1 inferred from `size`."""
    if isinstance(shape, (int, np.integer, Array)):
        shape = (shape,)
    dims = [_static_int(d, "xnp.reshape") for d in shape]
    unknown = [i for i, d in enumerate(dims) if d == -1]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension (-1) in a shape")
    if any(d < -1 for d in dims):
        raise ValueError(f"negative dimensions are not allowed in shape {tuple(dims)}")
    known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
    if unknown:
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape an array of size {size} into shape {tuple(dims)}")
        dims[unknown[0]] = size // known
    if int(np.prod(dims, dtype=np.int64)) != size:
        raise ValueError(f"cannot reshape an array of size {size} into shape {tuple(dims)}")
    return tuple(dims)


def reshape(a, shape=None, order: str = "C", *, newshape=None, copy=None) -> Array:
    """`a` with a new shape of the same size; one dimension may be -1 (inferred).
    order 'C' (row-major, the default) or 'F' (column-major)."""
    if shape is None:
        shape = newshape
    if shape is None:
        raise TypeError("xnp.reshape needs a shape")
    a = _asarray(a)
    shape = _resolve_shape(shape, a.size)
    if order in ("C", "A", None):
        return reshape_exact(a, shape)
    if order == "F":
        return transpose(reshape_exact(transpose(a), shape[::-1]))
    raise ValueError(f"order must be 'C', 'F' or 'A', got {order!r}")


def ravel(a, order: str = "C") -> Array:
    """`a` flattened to one dimension (row-major unless order='F')."""
    a = _asarray(a)
    return reshape(a, (a.size,), order)


def transpose(a, axes: Sequence[int] | None = None) -> Array:
    """`a` with its axes permuted (reversed when `axes` is None)."""
    a = _asarray(a)
    if axes is None:
        perm = tuple(reversed(range(a.ndim)))
    else:
        perm = tuple(canonicalize_axis(x, a.ndim) for x in axes)
        if sorted(perm) != list(range(a.ndim)):
            raise ValueError(f"axes {tuple(axes)} are not a permutation of the {a.ndim} axes")
    if perm == tuple(range(a.ndim)):
        return a
    return lax.transpose(a, perm)


def permute_dims(a, /, axes: Sequence[int]) -> Array:
    """The array API's name for `transpose(a, axes)`."""
    return transpose(a, axes)


def _axis_list(axis, ndim: int, what: str) -> list[int]:
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    result = [canonicalize_axis(x, ndim) for x in axes]
    if len(set(result)) != len(result):
        raise ValueError(f"repeated axis in `{what}` argument: {axis!r}")
    return result


def moveaxis(a, source, destination) -> Array:
    """`a` with axes `source` moved to positions `destination` (others keep order)."""
    a = _asarray(a)
    src = _axis_list(source, a.ndim, "source")
    dst = _axis_list(destination, a.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number "
                         "of elements")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def swapaxes(a, axis1: int, axis2: int) -> Array:
    a = _asarray(a)
    perm = list(range(a.ndim))
    i, j = canonicalize_axis(axis1, a.ndim), canonicalize_axis(axis2, a.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(a, perm)


def matrix_transpose(x, /) -> Array:
    """`x` with its last two axes swapped (a stack of matrices transposed)."""
    x = _asarray(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least 2 dimensions, got shape {x.shape}")
    return swapaxes(x, -1, -2)


def squeeze(a, axis=None) -> Array:
    """`a` without its size-1 axes (only `axis`, when given; each must have size 1)."""
    a = _asarray(a)
    if axis is None:
        axes = tuple(i for i, n in enumerate(a.shape) if n == 1)
    else:
        axes = canonicalize_axes(axis, a.ndim)
        bad = [i for i in axes if a.shape[i] != 1]
        if bad:
            raise ValueError(f"cannot select an axis to squeeze out which has size not equal "
                             f"to one: axis {bad[0]} of shape {a.shape}")
    return lax.squeeze(a, axes) if axes else a


def expand_dims(a, axis) -> Array:
    """`a` with new size-1 axes at positions `axis` of the result."""
    a = _asarray(a)
    count = 1 if isinstance(axis, (int, np.integer)) else len(axis)
    axes = canonicalize_axes(axis, a.ndim + count)
    return lax.expand_dims(a, axes)


def shape(a) -> tuple[int, ...]:
    return tuple(_asarray(a).shape)


def ndim(a) -> int:
    return _asarray(a).ndim


def size(a, axis: int | None = None) -> int:
    a = _asarray(a)
    return a.size if axis is None else a.shape[canonicalize_axis(axis, a.ndim)]


# -- dimensions -----------------------------------------------------------------------------
def _atleast(arys, rank: int, place):
    out = []
    for a in arys:
        a = _asarray(a)
        out.append(reshape_exact(a, place(tuple(a.shape))) if a.ndim < rank else a)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys) -> Array | list[Array]:
    """Each argument with at least 1 dimension (a list when several are given)."""
    return _atleast(arys, 1, lambda s: (1,) * (1 - len(s)) + s)


def atleast_2d(*arys) -> Array | list[Array]:
    """Each argument with at least 2 dimensions, new ones in front."""
    return _atleast(arys, 2, lambda s: (1,) * (2 - len(s)) + s)


def atleast_3d(*arys) -> Array | list[Array]:
    """0-d -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1), as NumPy."""
    return _atleast(arys, 3, lambda s: {0: (1, 1, 1), 1: (1, *s, 1), 2: (*s, 1)}[len(s)])
