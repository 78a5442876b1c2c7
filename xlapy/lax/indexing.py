"""`xlapy.lax` dynamic slicing: `dynamic_slice`, `dynamic_update_slice` and
their one-dimension and one-index conveniences, with jax.lax's signatures.

Start indices may be traced. Each call is one HLO `dynamic-slice` or
`dynamic-update-slice`, whose semantics clamp the start indices so that the
whole slice lies inside the operand (never an out-of-bounds read or write).
As in JAX, negative indices first count from the end of their dimension
(`allow_negative_indices=True`); for traced indices that takes a compare and
a select. The indices are brought to one integer dtype, as HLO requires:
Python ints adapt to the traced indices' dtype.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from xlapy.core import dtypes
from xlapy.core.array import Array, ConcreteArray
from xlapy.core.trace import as_array, bind
from xlapy.hlo.opcode import Opcode
from xlapy.lax import reshaping
from xlapy.lax._checks import canonical_axis, match_dtype, shape_error, static_ints
from xlapy.lax.elementwise import add, convert_element_type, lt, select


def _split_indices(start_indices, name: str) -> list[Array]:
    """A sequence of scalar indices, or a 1-D array of them, as a list of scalars."""
    if isinstance(start_indices, (Array, np.ndarray)):
        vector = as_array(start_indices)
        if vector.ndim != 1:
            raise shape_error(name, f"start indices must be a 1-D sequence, got shape "
                                    f"{vector.shape}")
        if type(vector) is ConcreteArray:   # (a pending one is sliced, not computed)
            return [ConcreteArray(np.asarray(v)) for v in vector.value]
        return [reshaping.reshape(reshaping.slice_in_dim(vector, i, i + 1), ())
                for i in range(vector.shape[0])]
    return [as_array(i) for i in start_indices]


def _one_dtype(indices: list[Array], name: str) -> list[Array]:
    for i, index in enumerate(indices):
        if index.ndim or not dtypes.is_integer(index.dtype):
            raise shape_error(name, f"start index {i} must be an integer scalar, got "
                                    f"{index.dtype}{list(index.shape)}")
    if not indices:
        return indices
    target = dtypes.promote_types(*((i.dtype, i.weak_type) for i in indices))[0]
    if not dtypes.is_integer(target):
        raise shape_error(name, "start indices of dtypes "
                                + ", ".join(str(i.dtype) for i in indices)
                                + " have no common integer dtype")
    return [i if i.dtype == target else convert_element_type(i, target) for i in indices]


def _wrap_negative(index: Array, size: int) -> Array:
    """`index + size` where `index < 0`: JAX's reading of negative start indices."""
    if index.dtype.kind == "u":
        return index
    if type(index) is ConcreteArray:  # a static index becomes strong, as in JAX
        value = index.value
        return ConcreteArray(np.asarray(value + size if value < 0 else value, index.dtype))
    return select(lt(index, 0), add(index, size), index)


def normalize_start_indices(operand: Array, indices, allow_negative_indices,
                            name: str) -> list[Array]:
    """The start indices of a dynamic slice of `operand`: scalars of one integer
    dtype, one per dimension, negative ones wrapped where allowed."""
    indices = _one_dtype(_split_indices(indices, name), name)
    if len(indices) != operand.ndim:
        raise shape_error(name, f"needs one start index per dimension of shape "
                                f"{operand.shape}, got {len(indices)}")
    allow = allow_negative_indices
    if isinstance(allow, (bool, np.bool_)):
        allow = [bool(allow)] * operand.ndim
    return [_wrap_negative(i, size) if wrap else i
            for i, size, wrap in zip(indices, operand.shape, allow)]


# -- dynamic-slice -----------------------------------------------------------------------
def dynamic_slice(operand, start_indices: Sequence, slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """The `slice_sizes` block of `operand` starting at (possibly traced)
    `start_indices`; starts are clamped so the block fits, as XLA does."""
    operand = as_array(operand)
    starts = normalize_start_indices(operand, start_indices, allow_negative_indices,
                                     "dynamic_slice")
    sizes = static_ints(slice_sizes, "dynamic_slice", "slice_sizes")
    if len(sizes) != operand.ndim:
        raise shape_error("dynamic_slice", f"slice_sizes {sizes} needs one size per "
                                           f"dimension of shape {operand.shape}")
    for d, (size, bound) in enumerate(zip(sizes, operand.shape)):
        if not 0 <= size <= bound:
            raise shape_error("dynamic_slice", f"slice size {size} of dimension {d} must be "
                                               f"within [0, {bound}] (shape {operand.shape})")
    return bind(Opcode.DYNAMIC_SLICE, [operand, *starts], {"dynamic_slice_sizes": sizes},
                weak_type=operand.weak_type, name="dynamic_slice")


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True) -> Array:
    """`operand[..., start:start + slice_size, ...]` along `axis`, start traced or not."""
    operand = as_array(operand)
    axis = canonical_axis(axis, operand.ndim, "dynamic_slice_in_dim")
    starts: list = [0] * operand.ndim
    starts[axis] = start_index
    allow = [False] * operand.ndim
    allow[axis] = allow_negative_indices
    sizes = list(operand.shape)
    sizes[axis] = slice_size
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True) -> Array:
    """`operand[..., index, ...]` along `axis` for a possibly traced `index`
    (clamped into range), keeping a size-1 dimension when `keepdims`."""
    operand = as_array(operand)
    axis = canonical_axis(axis, operand.ndim, "dynamic_index_in_dim")
    result = dynamic_slice_in_dim(operand, index, 1, axis,
                                  allow_negative_indices=allow_negative_indices)
    return result if keepdims else reshaping.squeeze(result, (axis,))


# -- dynamic-update-slice ----------------------------------------------------------------
def dynamic_update_slice(operand, update, start_indices: Sequence, *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Array:
    """`operand` with the block at (possibly traced) `start_indices` replaced by
    `update`; starts are clamped so the block fits, as XLA does."""
    operand = as_array(operand)
    update = match_dtype(as_array(update), operand.dtype, "dynamic_update_slice", "update")
    if update.ndim != operand.ndim:
        raise shape_error("dynamic_update_slice", f"update of shape {update.shape} must have "
                                                  f"the rank of operand shape {operand.shape}")
    for d, (size, bound) in enumerate(zip(update.shape, operand.shape)):
        if size > bound:
            raise shape_error("dynamic_update_slice", f"update of shape {update.shape} is "
                                                      f"larger than operand shape "
                                                      f"{operand.shape} in dimension {d}")
    starts = normalize_start_indices(operand, start_indices, allow_negative_indices,
                                     "dynamic_update_slice")
    return bind(Opcode.DYNAMIC_UPDATE_SLICE, [operand, update, *starts],
                name="dynamic_update_slice")


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int, *,
                                allow_negative_indices: bool = True) -> Array:
    """`dynamic_update_slice` with a start index along `axis` only (0 elsewhere)."""
    operand = as_array(operand)
    axis = canonical_axis(axis, operand.ndim, "dynamic_update_slice_in_dim")
    starts: list = [0] * operand.ndim
    starts[axis] = start_index
    allow = [False] * operand.ndim
    allow[axis] = allow_negative_indices
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(operand, update, index, axis: int, *,
                                allow_negative_indices: bool = True) -> Array:
    """Write `update` at `index` along `axis`; `update` may lack that dimension."""
    operand, update = as_array(operand), as_array(update)
    axis = canonical_axis(axis, operand.ndim, "dynamic_update_index_in_dim")
    if update.ndim + 1 == operand.ndim:
        update = reshaping.expand_dims(update, (axis,))
    elif update.ndim != operand.ndim:
        raise shape_error("dynamic_update_index_in_dim",
                          f"update of shape {update.shape} must have rank {operand.ndim} or "
                          f"{operand.ndim - 1} for operand shape {operand.shape}")
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


__all__ = ["dynamic_index_in_dim", "dynamic_slice", "dynamic_slice_in_dim",
           "dynamic_update_index_in_dim", "dynamic_update_slice", "dynamic_update_slice_in_dim"]
