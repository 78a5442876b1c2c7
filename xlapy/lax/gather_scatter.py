"""`xlapy.lax.gather` and the scatter family, with jax.lax's dimension numbers
and out-of-bounds modes.

As in jax.lax, the index vector is always the last dimension of the indices
(XLA's `index_vector_dim` is implicit). Out-of-bounds handling follows JAX's
lowering exactly:

* gather, CLIP or PROMISE_IN_BOUNDS (lax.gather's default): the HLO gather,
  which clamps every start index so the whole window is in bounds.
* gather, FILL_OR_DROP: the clamping gather, then a select that puts
  `fill_value` in every window whose start was out of bounds (a mask from
  comparing each index component with 0 and `dim - slice_size`).
* scatter, FILL_OR_DROP (the scatters' default) or PROMISE_IN_BOUNDS: the HLO
  scatter, which skips every update window that is not wholly in bounds.
* scatter, CLIP: the indices are clamped explicitly first.

The scatter combiner is a traced scalar computation (`to_apply`); it may not
close over traced values.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from xlapy.core import dtypes
from xlapy.core.array import Array, ConcreteArray
from xlapy.core.subtrace import ShapedArray, trace_function
from xlapy.core.trace import as_array, bind, current_trace
from xlapy.hlo.ir import HloComputation
from xlapy.hlo.opcode import Opcode
from xlapy.lax import elementwise as ew
from xlapy.lax._checks import inferred_shape, match_dtype, shape_error, static_ints
from xlapy.lax.reshaping import full, full_like, reshape, slice_in_dim


class GatherDimensionNumbers(NamedTuple):
    """How the operand, the start indices and the gather's output relate (XLA's
    GatherDimensionNumbers without index_vector_dim, which is the indices' last
    dimension)."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How the operand, the scatter indices and the updates relate (XLA's
    ScatterDimensionNumbers without index_vector_dim, the indices' last dimension)."""

    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class GatherScatterMode(enum.Enum):
    """What an out-of-bounds index does.

    CLIP: indices are clamped so the whole window is in bounds.
    FILL_OR_DROP: a gathered window with any part out of bounds is all
      `fill_value`; a scattered one is dropped.
    PROMISE_IN_BOUNDS: the caller promises in-bounds indices; in practice
      gathers clamp and scatters drop.
    """

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()

    @staticmethod
    def from_any(mode: str | GatherScatterMode | None) -> GatherScatterMode:
        """A mode from its enum, None (FILL_OR_DROP) or JAX's spellings."""
        if isinstance(mode, GatherScatterMode):
            return mode
        spelled = {None: GatherScatterMode.FILL_OR_DROP, "fill": GatherScatterMode.FILL_OR_DROP,
                   "drop": GatherScatterMode.FILL_OR_DROP, "clip": GatherScatterMode.CLIP,
                   "promise_in_bounds": GatherScatterMode.PROMISE_IN_BOUNDS}
        if isinstance(mode, str | None) and mode in spelled:
            return spelled[mode]
        raise ValueError(f'Unknown gather mode "{mode}"; use "clip", "fill", "drop" or '
                         '"promise_in_bounds"')


def _indices(indices, name: str) -> Array:
    indices = as_array(indices)
    if not dtypes.is_integer(indices.dtype):
        raise shape_error(name, f"indices must have an integer dtype, got {indices.dtype}")
    if not indices.ndim:
        raise shape_error(name, "indices need a last dimension holding the index vectors; "
                                "add a trailing dimension of size 1 for scalar indices")
    return indices


# -- gather ------------------------------------------------------------------------------
def _gather_attrs(dnums: GatherDimensionNumbers, index_vector_dim: int, slice_sizes,
                  indices_are_sorted: bool) -> dict:
    attrs = {"offset_dims": static_ints(dnums.offset_dims, "gather", "offset_dims"),
             "collapsed_slice_dims": static_ints(dnums.collapsed_slice_dims, "gather",
                                                 "collapsed_slice_dims"),
             "start_index_map": static_ints(dnums.start_index_map, "gather", "start_index_map")}
    if dnums.operand_batching_dims or dnums.start_indices_batching_dims:
        attrs["operand_batching_dims"] = static_ints(dnums.operand_batching_dims, "gather",
                                                     "operand_batching_dims")
        attrs["start_indices_batching_dims"] = static_ints(
            dnums.start_indices_batching_dims, "gather", "start_indices_batching_dims")
    attrs["index_vector_dim"] = index_vector_dim
    attrs["slice_sizes"] = slice_sizes
    if indices_are_sorted:
        attrs["indices_are_sorted"] = True
    return attrs


def default_fill_value(dtype) -> object:
    """JAX's fill for out-of-bounds gathers: NaN for inexact types, the most
    negative value for signed, the largest for unsigned integers, True for bool."""
    dtype = np.dtype(dtype)
    if dtypes.is_float(dtype) or dtypes.is_complex(dtype):
        return np.nan
    if dtype.kind == "i":
        return dtypes.iinfo(dtype).min
    if dtype.kind == "u":
        return dtypes.iinfo(dtype).max
    if dtype.kind == "b":
        return True
    raise TypeError(f"lax.gather: no fill value for dtype {dtype}")


def gather(operand, start_indices, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode: str | GatherScatterMode | None = None,
           fill_value=None) -> Array:
    """XLA's gather: a batch of `slice_sizes` windows of `operand` starting at the
    index vectors in the last dimension of `start_indices`. `mode` None means
    PROMISE_IN_BOUNDS (clamping), as jax.lax.gather; FILL_OR_DROP fills
    out-of-bounds windows with `fill_value` (default as `default_fill_value`)."""
    del unique_indices  # only a hint; XLA's gather has no such attribute
    operand = as_array(operand)
    indices = _indices(start_indices, "gather")
    dnums = GatherDimensionNumbers(*dimension_numbers)
    sizes = static_ints(slice_sizes, "gather", "slice_sizes")
    mode = GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else \
        GatherScatterMode.from_any(mode)
    attrs = _gather_attrs(dnums, indices.ndim - 1, sizes, indices_are_sorted)
    shape = inferred_shape("gather", Opcode.GATHER, [operand, indices], attrs)
    gathered = bind(Opcode.GATHER, [operand, indices], attrs, weak_type=operand.weak_type,
                    name="gather")
    if mode is not GatherScatterMode.FILL_OR_DROP or not dnums.start_index_map:
        return gathered
    mask = _windows_in_bounds(operand.shape, indices, attrs["start_index_map"], sizes)
    batch_dims = tuple(d for d in range(shape.rank) if d not in attrs["offset_dims"])
    mask = ew.broadcast_in_dim(mask, shape.dimensions, batch_dims)
    if fill_value is None:
        fill_value = default_fill_value(operand.dtype)
    if not isinstance(fill_value, Array):
        fill_value = np.asarray(fill_value)
    fill = ew.convert_element_type(as_array(fill_value), operand.dtype)
    return ew.select(mask, gathered, full_like(gathered, fill))


def _windows_in_bounds(operand_shape, indices: Array, index_map, slice_sizes) -> Array:
    """bool[batch]: whether each index vector starts a window wholly in bounds."""
    wide = np.int64 if indices.dtype.itemsize == 8 else np.int32
    indices = ew.convert_element_type(indices, wide)
    batch = indices.shape[:-1]
    mask = None
    for k, d in enumerate(index_map):
        component = reshape(slice_in_dim(indices, k, k + 1, axis=-1), batch)
        upper = operand_shape[d] - slice_sizes[d]
        ok = ew.bitwise_and(ew.ge(component, wide(0)), ew.le(component, wide(upper)))
        mask = ok if mask is None else ew.bitwise_and(mask, ok)
    return mask


# -- scatter -----------------------------------------------------------------------------
def _scatter_attrs(dnums: ScatterDimensionNumbers, index_vector_dim: int, combiner,
                   indices_are_sorted: bool, unique_indices: bool, name: str) -> dict:
    attrs = {"update_window_dims": static_ints(dnums.update_window_dims, name,
                                               "update_window_dims"),
             "inserted_window_dims": static_ints(dnums.inserted_window_dims, name,
                                                 "inserted_window_dims"),
             "scatter_dims_to_operand_dims": static_ints(dnums.scatter_dims_to_operand_dims,
                                                         name, "scatter_dims_to_operand_dims")}
    if dnums.operand_batching_dims or dnums.scatter_indices_batching_dims:
        attrs["input_batching_dims"] = static_ints(dnums.operand_batching_dims, name,
                                                   "operand_batching_dims")
        attrs["scatter_indices_batching_dims"] = static_ints(
            dnums.scatter_indices_batching_dims, name, "scatter_indices_batching_dims")
    attrs["index_vector_dim"] = index_vector_dim
    if indices_are_sorted:
        attrs["indices_are_sorted"] = True
    if unique_indices:
        attrs["unique_indices"] = True
    attrs["to_apply"] = combiner
    return attrs


def _combiner(combine: Callable, dtype, name: str) -> HloComputation:
    """`combine(current, update)` traced on scalars of `dtype` into a computation
    (of the module being traced; in eager mode the fixed combiners are cached)."""
    if current_trace() is None and combine in _FIXED_COMBINERS:
        return _eager_combiner(combine, np.dtype(dtype), name)
    return _trace_combiner(combine, dtype, name)


@functools.lru_cache(maxsize=256)
def _eager_combiner(combine: Callable, dtype: np.dtype, name: str) -> HloComputation:
    return _trace_combiner(combine, dtype, name)


def _trace_combiner(combine: Callable, dtype, name: str) -> HloComputation:
    scalar = ShapedArray((), np.dtype(dtype))
    traced = trace_function(combine, [scalar, scalar], f"{name}_combiner", tuple_root=False,
                            allow_captures=False)
    out = traced.out_avals[0]
    if out.shape != () or out.dtype != scalar.dtype:
        raise shape_error(name, f"the combiner must return a {scalar.dtype} scalar, got {out}")
    return traced.computation


def _clamp_indices(operand: Array, indices: Array, updates_shape, attrs: dict) -> Array:
    """Indices clamped so every update window lies in the operand (CLIP mode)."""
    skipped = set(attrs["inserted_window_dims"]) | set(attrs.get("input_batching_dims", ()))
    window = iter(updates_shape[d] for d in attrs["update_window_dims"])
    sizes = [1 if d in skipped else next(window) for d in range(operand.ndim)]
    top = dtypes.iinfo(indices.dtype).max
    upper = [min(operand.shape[d] - sizes[d], top) for d in attrs["scatter_dims_to_operand_dims"]]
    upper = ConcreteArray(np.asarray(upper, dtype=indices.dtype))
    upper = ew.broadcast_in_dim(upper, indices.shape, (indices.ndim - 1,))
    return ew.clamp(indices.dtype.type(0), indices, upper)


def _scatter(name: str, operand, scatter_indices, updates, dimension_numbers,
             combine: Callable, indices_are_sorted: bool, unique_indices: bool,
             mode) -> Array:
    operand = as_array(operand)
    indices = _indices(scatter_indices, name)
    updates = match_dtype(as_array(updates), operand.dtype, name, "updates")
    dnums = ScatterDimensionNumbers(*dimension_numbers)
    combiner = _combiner(combine, operand.dtype, name)
    attrs = _scatter_attrs(dnums, indices.ndim - 1, combiner, indices_are_sorted,
                           unique_indices, name)
    inferred_shape(name, Opcode.SCATTER, [operand, indices, updates], attrs)
    if GatherScatterMode.from_any(mode) is GatherScatterMode.CLIP:
        indices = _clamp_indices(operand, indices, updates.shape, attrs)
    return bind(Opcode.SCATTER, [operand, indices, updates], attrs,
                weak_type=operand.weak_type, name=name)


def _scatter_with(combine: Callable, name: str, doc: str):
    def op(operand, scatter_indices, updates, dimension_numbers: ScatterDimensionNumbers, *,
           indices_are_sorted: bool = False, unique_indices: bool = False,
           mode: str | GatherScatterMode | None = None) -> Array:
        return _scatter(name, operand, scatter_indices, updates, dimension_numbers, combine,
                        indices_are_sorted, unique_indices, mode)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"XLA's scatter where {doc}. `mode` None means FILL_OR_DROP: update "
                  "windows not wholly in bounds are dropped.")
    return op


def _replace(current, update):
    return update


_FIXED_COMBINERS = (_replace, ew.add, ew.sub, ew.mul, ew.min, ew.max)
scatter = _scatter_with(_replace, "scatter", "updates replace the operand's values "
                                             "(in order for repeated indices)")
scatter_add = _scatter_with(ew.add, "scatter_add", "updates are added to the operand")
scatter_sub = _scatter_with(ew.sub, "scatter_sub", "updates are subtracted from the operand")
scatter_mul = _scatter_with(ew.mul, "scatter_mul", "the operand is multiplied by updates")
scatter_min = _scatter_with(ew.min, "scatter_min", "the operand keeps the minimum")
scatter_max = _scatter_with(ew.max, "scatter_max", "the operand keeps the maximum")


def scatter_apply(operand, scatter_indices, func: Callable,
                  dimension_numbers: ScatterDimensionNumbers, *,
                  update_shape: Sequence[int] = (), indices_are_sorted: bool = False,
                  unique_indices: bool = False,
                  mode: str | GatherScatterMode | None = None) -> Array:
    """`operand` with `func` applied at the scattered positions (once per
    occurrence of a repeated index); `update_shape` is the updates' shape the
    dimension numbers describe."""
    operand = as_array(operand)
    unused = full(update_shape, 0, operand.dtype)
    return _scatter("scatter_apply", operand, scatter_indices, unused, dimension_numbers,
                    lambda current, _: func(current), indices_are_sorted, unique_indices, mode)


__all__ = ["GatherDimensionNumbers", "GatherScatterMode", "ScatterDimensionNumbers", "gather",
           "scatter", "scatter_add", "scatter_apply", "scatter_max", "scatter_min",
           "scatter_mul", "scatter_sub"]
