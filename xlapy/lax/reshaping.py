"""`xlapy.lax` structural primitives: reshaping, transposing, reversing,
slicing, concatenating, padding and filling, with jax.lax's names and
signatures.

Each function is one HLO instruction (reshape, transpose, reverse, slice,
concatenate, pad, broadcast) emitted through `bind`, so it runs at once on
concrete arrays and traces under `xlapy.jit` with the same semantics. Shapes,
axes and paddings are static: they must be Python ints (a traced value there
raises an error saying so). As in JAX, operands must already agree in dtype;
only weak-typed values (Python scalars) adapt to the other operand's dtype.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence

import numpy as np

from xlapy.core import dtypes
from xlapy.core.array import Array
from xlapy.core.trace import Tracer, as_array, bind, element_type, with_weak_type
from xlapy.hlo.attributes import PaddingConfig, PaddingDimension, SliceRange
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.lax import indexing
from xlapy.lax._checks import (
    canonical_axes,
    canonical_axis,
    common_dtype,
    match_dtype,
    shape_error,
    static_int,
    static_ints,
)
from xlapy.lax.elementwise import broadcast_in_dim, convert_element_type


# -- reshaping ---------------------------------------------------------------------------
def reshape(operand, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None) -> Array:
    """`operand` with shape `new_sizes` (same element count, row-major order);
    with `dimensions`, the operand is first transposed by that permutation."""
    operand = as_array(operand)
    new_sizes = static_ints(new_sizes, "reshape", "new_sizes")
    if any(d < 0 for d in new_sizes):
        raise shape_error("reshape", f"new_sizes {new_sizes} must be non-negative "
                                     "(lax.reshape takes no -1; xnp.reshape does)")
    if math.prod(new_sizes) != operand.size:
        raise shape_error("reshape", f"total size must be unchanged, got new_sizes {new_sizes} "
                                     f"(of total size {math.prod(new_sizes)}) for shape "
                                     f"{operand.shape} (of total size {operand.size})")
    if dimensions is not None:
        operand = transpose(operand, dimensions)
    if tuple(operand.shape) == new_sizes:
        return operand
    shape = Shape.array(element_type(operand.dtype), new_sizes)
    return bind(Opcode.RESHAPE, [operand], shape=shape, weak_type=operand.weak_type,
                name="reshape")


def transpose(operand, permutation: Sequence[int]) -> Array:
    """Result dimension i is operand dimension `permutation[i]`."""
    operand = as_array(operand)
    perm = static_ints(permutation, "transpose", "permutation")
    if sorted(perm) != list(range(operand.ndim)):
        raise shape_error("transpose", f"permutation {perm} is not a permutation of the "
                                       f"dimensions of an operand of shape {operand.shape}")
    if perm == tuple(range(operand.ndim)):
        return operand
    return bind(Opcode.TRANSPOSE, [operand], {"dimensions": perm},
                weak_type=operand.weak_type, name="transpose")


def rev(operand, dimensions: Sequence[int]) -> Array:
    """`operand` with the order of elements reversed along `dimensions`."""
    operand = as_array(operand)
    dims = canonical_axes(dimensions, operand.ndim, "rev")
    return bind(Opcode.REVERSE, [operand], {"dimensions": dims},
                weak_type=operand.weak_type, name="rev")


def squeeze(array, dimensions: Sequence[int]) -> Array:
    """`array` without the size-1 `dimensions`."""
    array = as_array(array)
    dims = canonical_axes(dimensions, array.ndim, "squeeze")
    bad = [d for d in dims if array.shape[d] != 1]
    if bad:
        raise shape_error("squeeze", f"cannot squeeze dimension {bad[0]} of size "
                                     f"{array.shape[bad[0]]} (shape {array.shape}); only "
                                     "size-1 dimensions can be squeezed")
    if not dims:
        return array
    return reshape(array, [s for i, s in enumerate(array.shape) if i not in dims])


def expand_dims(array, dimensions: Sequence[int]) -> Array:
    """`array` with size-1 dimensions inserted at `dimensions` (positions in the
    result; negative ones count from the result's end)."""
    array = as_array(array)
    ndim_out = array.ndim + len(dimensions)
    dims = canonical_axes(dimensions, ndim_out, "expand_dims")
    shape = list(array.shape)
    for d in sorted(dims):
        shape.insert(d, 1)
    return reshape(array, shape)


def collapse(operand, start_dimension: int, stop_dimension: int | None = None) -> Array:
    """`operand` with dimensions [start_dimension, stop_dimension) merged into one."""
    operand = as_array(operand)
    lo, hi, _ = builtins.slice(start_dimension, stop_dimension).indices(operand.ndim)
    if hi < lo:
        raise shape_error("collapse", f"invalid dimension range [{start_dimension}:"
                                      f"{stop_dimension}] for shape {operand.shape}")
    shape = operand.shape
    return reshape(operand, (*shape[:lo], math.prod(shape[lo:hi]), *shape[hi:]))


def broadcast(operand, sizes: Sequence[int]) -> Array:
    """`operand` broadcast with new leading dimensions `sizes`."""
    operand = as_array(operand)
    sizes = static_ints(sizes, "broadcast", "sizes")
    dims = tuple(range(len(sizes), len(sizes) + operand.ndim))
    return broadcast_in_dim(operand, sizes + tuple(operand.shape), dims)


# -- joining and padding -----------------------------------------------------------------
def concatenate(operands: Sequence, dimension: int) -> Array:
    """The operands joined along `dimension`; other dimensions must agree."""
    if isinstance(operands, Array) or not len(operands):
        raise shape_error("concatenate", "needs a non-empty sequence of arrays")
    arrays = common_dtype([as_array(o) for o in operands], "concatenate")
    first = arrays[0]
    if not first.ndim:
        raise shape_error("concatenate", "cannot concatenate 0-d arrays")
    dim = canonical_axis(dimension, first.ndim, "concatenate")
    for i, a in enumerate(arrays[1:], 1):
        same_rank = a.ndim == first.ndim
        if not same_rank or any(
                a.shape[d] != first.shape[d] for d in range(a.ndim) if d != dim):
            raise shape_error("concatenate", f"operand {i} of shape {a.shape} does not match "
                                             f"operand 0 of shape {first.shape} outside "
                                             f"dimension {dim}")
    if len(arrays) == 1:
        return first
    return bind(Opcode.CONCATENATE, arrays, {"dimensions": (dim,)}, name="concatenate")


def pad(operand, padding_value, padding_config: Sequence[tuple[int, int, int]]) -> Array:
    """`operand` padded with the scalar `padding_value`: per dimension (low, high,
    interior) elements before, after and between; negative low/high crop."""
    operand = as_array(operand)
    value = match_dtype(as_array(padding_value), operand.dtype, "pad", "padding_value")
    if value.ndim:
        raise shape_error("pad", f"padding_value must be a scalar, got shape {value.shape}")
    config = [static_ints(c, "pad", "padding_config") for c in padding_config]
    if len(config) != operand.ndim or any(len(c) != 3 for c in config):
        raise shape_error("pad", f"padding_config must hold one (low, high, interior) triple "
                                 f"per dimension of shape {operand.shape}, got {config}")
    for d, ((lo, hi, interior), size) in enumerate(zip(config, operand.shape)):
        if interior < 0:
            raise shape_error("pad", f"interior padding {interior} of dimension {d} must be "
                                     "non-negative")
        if lo + hi + size + max(size - 1, 0) * interior < 0:
            raise shape_error("pad", f"padding ({lo}, {hi}, {interior}) leaves dimension {d} "
                                     f"of size {size} with a negative size")
    attrs = {"padding": PaddingConfig(tuple(PaddingDimension(*c) for c in config))}
    return bind(Opcode.PAD, [operand, value], attrs, name="pad")


# -- filling -----------------------------------------------------------------------------
def full(shape: Sequence[int], fill_value, dtype=None) -> Array:
    """An array of `shape` filled with the scalar `fill_value` (in `dtype` if
    given; a Python scalar without dtype gives a weak-typed result, as in JAX)."""
    shape = static_ints(shape, "full", "shape")
    value = as_array(fill_value)
    if value.ndim:
        raise shape_error("full", f"fill_value must be a scalar, got shape {value.shape}")
    if dtype is not None:
        value = convert_element_type(value, dtype)
    return broadcast_in_dim(value, shape, ())


def full_like(x, fill_value, dtype=None, shape: Sequence[int] | None = None) -> Array:
    """`full` with the shape and dtype (and weak type) of `x` unless given."""
    x_dtype, x_weak = dtypes.dtype_and_weak(x)
    x_shape = tuple(x.shape) if hasattr(x, "shape") else np.shape(x)
    fill_shape = x_shape if shape is None else shape
    weak = dtype is None and x_weak
    value = convert_element_type(as_array(fill_value), x_dtype if dtype is None else dtype)
    return full(fill_shape, with_weak_type(value, weak))


def zeros_like_array(x) -> Array:
    """Zeros of `x`'s shape and dtype."""
    return full_like(x, 0)


# -- static slicing ----------------------------------------------------------------------
def slice(operand, start_indices: Sequence[int], limit_indices: Sequence[int],  # noqa: A001
          strides: Sequence[int] | None = None) -> Array:
    """`operand[start:limit:stride]` per dimension, with static bounds."""
    operand = as_array(operand)
    starts = static_ints(start_indices, "slice", "start_indices")
    limits = static_ints(limit_indices, "slice", "limit_indices")
    steps = (1,) * operand.ndim if strides is None else static_ints(strides, "slice", "strides")
    if not len(starts) == len(limits) == len(steps) == operand.ndim:
        raise shape_error("slice", f"start_indices {starts}, limit_indices {limits} and "
                                   f"strides {steps} must each have one entry per dimension "
                                   f"of shape {operand.shape}")
    for d, (lo, hi, step, size) in enumerate(zip(starts, limits, steps, operand.shape)):
        if step <= 0:
            raise shape_error("slice", f"stride {step} of dimension {d} must be positive")
        if not 0 <= lo <= hi <= size:
            raise shape_error("slice", f"dimension {d}: need 0 <= start ({lo}) <= limit "
                                       f"({hi}) <= size ({size}) for shape {operand.shape}")
    ranges = tuple(SliceRange(lo, hi, step) for lo, hi, step in zip(starts, limits, steps))
    return bind(Opcode.SLICE, [operand], {"slice": ranges}, weak_type=operand.weak_type,
                name="slice")


def slice_in_dim(operand, start_index: int | None, limit_index: int | None, stride: int = 1,
                 axis: int = 0) -> Array:
    """`operand[..., start:limit:stride, ...]` along `axis`; None means the whole
    extent and negative indices count from the end."""
    operand = as_array(operand)
    axis = canonical_axis(axis, operand.ndim, "slice_in_dim")
    size = operand.shape[axis]
    start = 0 if start_index is None else static_int(start_index, "slice_in_dim", "start_index")
    limit = size if limit_index is None else static_int(limit_index, "slice_in_dim",
                                                        "limit_index")
    start = start + size if start < 0 else start
    limit = limit + size if limit < 0 else limit
    starts, limits, strides = [0] * operand.ndim, list(operand.shape), [1] * operand.ndim
    starts[axis], limits[axis] = start, limit
    strides[axis] = static_int(stride, "slice_in_dim", "stride")
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis: int = 0, keepdims: bool = True) -> Array:
    """`operand[..., index, ...]` along `axis`, keeping that dimension with size 1
    when `keepdims`. The index is static (negative counts from the end); a traced
    index is accepted too and then behaves like `dynamic_index_in_dim`."""
    if isinstance(index, Tracer):
        return indexing.dynamic_index_in_dim(operand, index, axis, keepdims)
    operand = as_array(operand)
    axis = canonical_axis(axis, operand.ndim, "index_in_dim")
    index = static_int(index, "index_in_dim", "index")
    size = operand.shape[axis]
    wrapped = index + size if index < 0 else index
    if not 0 <= wrapped < size:
        raise IndexError(f"lax.index_in_dim: index {index} is out of bounds for axis {axis} "
                         f"with size {size}")
    result = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
    return result if keepdims else squeeze(result, (axis,))


__all__ = ["broadcast", "collapse", "concatenate", "expand_dims", "full", "full_like",
           "index_in_dim", "pad", "reshape", "rev", "slice", "slice_in_dim", "squeeze",
           "transpose", "zeros_like_array"]
