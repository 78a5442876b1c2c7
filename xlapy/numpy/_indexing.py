"""NumPy indexing on xlapy arrays: `x[idx]`, JAX's `x.at[idx]` updates, `take`,
`take_along_axis`, `put_along_axis`, `unravel_index`, `ravel_multi_index`.

An index is parsed once into items (static slices, integers, integer arrays,
new axes; boolean masks become integer arrays when their value is known).
Reads with only static basic items become slice/rev/reshape, a traced scalar
index a dynamic-slice, anything else one HLO gather; updates become one HLO
scatter with the same dimension numbers, the gather's transpose.

Out-of-bounds indices follow JAX, not NumPy (there is no IndexError to raise
from compiled code): a negative index wraps once, then reads clamp (`x[10]` of
a length-10 array is `x[9]`) and updates out of bounds are dropped. `mode=`
picks 'clip', 'fill'/'drop' or 'promise_in_bounds' as in JAX.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

import xlapy.numpy as xnp
from xlapy.core import dtypes
from xlapy.core.errors import compile_error
from xlapy.core.lazy import LazyArray
from xlapy.core.trace import Array, ConcreteArray, Tracer, as_array, with_weak_type
from xlapy.lax import primitives as lax
from xlapy.numpy import _eager_fast
from xlapy.numpy._promotion import (
    broadcast_shapes,
    broadcast_to,
    reshape_exact,
)


# -- parsed index items -----------------------------------------------------------------
@dataclass(frozen=True)
class _Slice:
    """A static slice of one operand dim: `size` elements from `start` by `step`."""

    start: int
    size: int
    step: int


@dataclass(frozen=True)
class _Point:
    """An integer index array of one operand dim (a Python int becomes a 0-d one)."""

    array: Array
    static: int | None = None  # the value, for a Python int


class _NewAxis:
    """A `None` / `np.newaxis` entry."""


_NEW = _NewAxis()


def _is_scalar_bool(entry) -> bool:
    return isinstance(entry, (bool, np.bool_)) or (
        isinstance(entry, (Array, np.ndarray)) and entry.ndim == 0 and entry.dtype == np.bool_)


def _to_array(value) -> Array:
    """An array-like as an Array; sequences holding Arrays are stacked by xnp.asarray."""
    if isinstance(value, Array):
        return value
    if isinstance(value, (list, tuple)) and any(
            isinstance(e, Array) for e in np.ravel(np.asarray(value, dtype=object))):
        return xnp.asarray(value)
    return as_array(value)


def _as_index_array(entry) -> Array:
    """An index entry as an Array (an empty list is an empty integer index)."""
    if isinstance(entry, (list, tuple)) and np.size(entry) == 0:
        return as_array(np.zeros(np.shape(entry), np.int32))
    return _to_array(entry)


def _classify(entry):
    """One raw index entry as a slice, None, Ellipsis, a scalar bool, or an Array."""
    if entry is None or entry is Ellipsis or isinstance(entry, slice):
        return entry
    if _is_scalar_bool(entry):
        return entry
    if isinstance(entry, (int, np.integer)):
        return int(entry)
    if isinstance(entry, (Array, np.ndarray, list, tuple)):
        array = _as_index_array(entry)
        if array.dtype != np.bool_ and not dtypes.is_integer(array.dtype):
            raise IndexError(f"arrays used as indices must be of integer or boolean type, "
                             f"got {array.dtype}")
        return array
    raise IndexError(f"only integers, slices, Ellipsis, None and integer or boolean arrays "
                     f"are valid indices, got {type(entry).__name__}")


def _consumed(entry) -> int:
    """How many operand dims an index entry consumes."""
    if entry is None or entry is Ellipsis or _is_scalar_bool(entry):
        return 0
    if isinstance(entry, Array) and entry.dtype == np.bool_:
        return entry.ndim
    return 1


def _expand_ellipsis(entries: list, ndim: int) -> list:
    count = sum(1 for e in entries if e is Ellipsis)
    if count > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(_consumed(e) for e in entries)
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, "
                         f"but {used} were indexed")
    fill = [slice(None)] * (ndim - used)
    if count == 0:
        return entries + fill
    at = next(i for i, e in enumerate(entries) if e is Ellipsis)
    # The ellipsis stays as a gap: it separates advanced indices even when it
    # stands for no dimension at all (NumPy's rule for where their dims go).
    return entries[:at] + [Ellipsis] + fill + entries[at + 1:]


def _mask_points(mask: Array, dims: Sequence[int]) -> list[_Point]:
    """A boolean mask index as integer arrays, one per dim it covers; only a mask
    whose value is known can be, since the result's shape depends on it."""
    if isinstance(mask, Tracer):
        raise compile_error(
            "boolean mask indexing",
            "the shape of its result depends on the values of the mask (how many are True); "
            "use xnp.where(mask, x, y) instead, or xnp.nonzero(mask, size=...) for a fixed "
            "number of indices")
    if tuple(mask.shape) != tuple(dims):
        raise IndexError(f"boolean index of shape {mask.shape} does not match the indexed "
                         f"dimensions {tuple(dims)}")
    return [_Point(as_array(p, _index_dtype_for(dims)))
            for p in np.nonzero(np.asarray(mask.value))]


def _index_dtype_for(dims: Sequence[int]) -> np.dtype:
    return dtypes.int64 if any(d >= 2**31 for d in dims) else dtypes.int32


def _static_point(value: int, size: int) -> _Point:
    """A Python int index, wrapped once if negative (it may still be out of bounds:
    reads clamp it, updates drop it)."""
    wrapped = value + size if value < 0 else value
    dtype = _index_dtype_for([size, abs(wrapped)])
    return _Point(as_array(wrapped, dtype), wrapped)


def _static_slice(entry: slice, size: int) -> _Slice:
    def bound(v):
        return None if v is None else operator.index(v)

    start, stop, step = bound(entry.start), bound(entry.stop), bound(entry.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    start, stop, step = slice(start, stop, step).indices(size)
    return _Slice(start, len(range(start, stop, step)), step)


@dataclass
class _Parsed:
    """An index as one item per operand dim (plus new axes), for an operand whose
    shape is `shape` after inserting the size-1 axes of scalar booleans at
    `bool_axes`; `adjacent` when the integer indices form one run (NumPy then puts
    their broadcast dims where the run is, else first)."""

    items: list
    shape: tuple[int, ...]
    bool_axes: tuple[int, ...]
    adjacent: bool

    @property
    def has_arrays(self) -> bool:
        return any(isinstance(i, _Point) and i.static is None and i.array.ndim > 0
                   for i in self.items)


def _parse(shape: tuple[int, ...], index) -> _Parsed:
    raw = list(index) if isinstance(index, tuple) else [index]
    entries = _expand_ellipsis([_classify(e) for e in raw], len(shape))
    items, expanded, bool_axes = [], [], []
    dim, runs, in_run = 0, 0, False
    for entry in entries:
        before = len(items)
        if entry is Ellipsis:
            in_run = False
            continue
        if entry is None:
            items.append(_NEW)
        elif _is_scalar_bool(entry):
            if isinstance(entry, Tracer):
                raise compile_error("indexing with a traced boolean scalar",
                                    "the shape of its result depends on its value")
            bool_axes.append(len(expanded))
            expanded.append(1)
            count = 1 if bool(np.asarray(entry)) else 0
            items.append(_Point(as_array(np.zeros(count, np.int32))))
        elif isinstance(entry, slice):
            items.append(_static_slice(entry, shape[dim]))
            expanded.append(shape[dim])
            dim += 1
        elif isinstance(entry, int):
            items.append(_static_point(entry, shape[dim]))
            expanded.append(shape[dim])
            dim += 1
        elif entry.dtype == np.bool_:
            covered = shape[dim:dim + entry.ndim]
            items.extend(_mask_points(entry, covered))
            expanded.extend(covered)
            dim += entry.ndim
        else:
            if type(entry) is ConcreteArray and entry.ndim == 0:   # (not a pending one:
                items.append(_static_point(int(entry.value), shape[dim]))  # it is gathered)
            else:
                items.append(_Point(entry))
            expanded.append(shape[dim])
            dim += 1
        point = any(isinstance(item, _Point) for item in items[before:])
        runs += point and not in_run
        in_run = point
    return _Parsed(items, tuple(expanded), tuple(bool_axes), runs <= 1)


# -- the gather / scatter plan ----------------------------------------------------------
@dataclass
class _Plan:
    """`x[index]` as one gather: `indices` (S + (k,)) address operand dims
    `start_index_map`; dims in `collapsed` are points, the others windows of
    `slice_sizes`; the result (the "core view": the full view without new
    axes) has the windows at `offset_dims` and dims `reversed` to flip after."""

    indices: Array | None
    start_index_map: tuple[int, ...]
    collapsed: tuple[int, ...]
    slice_sizes: tuple[int, ...]
    offset_dims: tuple[int, ...]
    reversed: tuple[int, ...]
    core_shape: tuple[int, ...]
    view_shape: tuple[int, ...]


def _view_layout(parsed: _Parsed) -> tuple[list, tuple[int, ...]]:
    """The view's dims in order, each ('batch', j) / ('slice', operand dim) /
    ('new',), and the broadcast shape B of the point indices."""
    items = parsed.items
    points = [item for item in items if isinstance(item, _Point)]
    batch = broadcast_shapes(*(p.array.shape for p in points)) if points else ()
    batch_dims = [("batch", j) for j in range(len(batch))]
    layout: list = [] if parsed.adjacent else list(batch_dims)
    placed = bool(layout) or not batch_dims
    dim = 0
    for item in items:
        if item is _NEW:
            layout.append(("new",))
            continue
        if isinstance(item, _Slice):
            layout.append(("slice", dim))
        elif not placed:
            layout.extend(batch_dims)
            placed = True
        dim += 1
    return layout, batch


def _needs_int64(dtype) -> bool:
    dtype = np.dtype(dtype)
    return dtype.itemsize == 8 or (dtype.kind == "u" and dtype.itemsize == 4)


def _const(value, dtype) -> Array:
    return as_array(value, dtype)


def _normalized(array: Array, size: int, index_dtype) -> Array:
    """Integer indices as `index_dtype`, negative ones wrapped once (not at all
    where a concrete array has none: a pending one, whose values would have to
    be computed to know, is wrapped, so lazy mode can learn and replay x[idx])."""
    array = lax.convert_element_type(array, index_dtype)
    if np.dtype(array.dtype).kind == "u" or type(array) is ConcreteArray and \
            not np.any(np.asarray(array.value) < 0):
        return array
    wrapped = lax.add(array, _const(size, index_dtype))
    return lax.select(lax.lt(array, _const(0, index_dtype)), wrapped, array)


def _is_strided(item) -> bool:
    """A slice gathered element by element (a window needs a step of +-1)."""
    return isinstance(item, _Slice) and abs(item.step) != 1 and item.size > 1


def _plan(parsed: _Parsed) -> _Plan:
    """The gather that reads `parsed` (its transpose, a scatter, writes it)."""
    layout, batch = _view_layout(parsed)
    core = [d for d in layout if d[0] != "new"]
    items = [item for item in parsed.items if item is not _NEW]
    view_shape = tuple(_dim_size(d, batch, items) for d in layout)
    core_shape = tuple(_dim_size(d, batch, items) for d in core)
    big = any(n >= 2**31 for n in parsed.shape) or any(
        isinstance(i, _Point) and _needs_int64(i.array.dtype) for i in items)
    index_dtype = dtypes.int64 if big else dtypes.int32
    # S, the gather's batch shape: the broadcast index dims and the strided slices.
    batch_like = [p for p, d in enumerate(core) if d[0] == "batch" or _is_strided(items[d[1]])]
    s_shape = tuple(core_shape[p] for p in batch_like)
    b_positions = tuple(batch_like.index(p) for p, d in enumerate(core) if d[0] == "batch")

    components, index_map, collapsed, sizes, offset_dims, flips = [], [], [], [], [], []
    for dim, item in enumerate(items):
        n = parsed.shape[dim]
        if isinstance(item, _Point):
            # a static int was wrapped while parsing; wrapping again would be wrong
            index = _normalized(item.array, n, index_dtype) if item.static is None else \
                lax.convert_element_type(item.array, index_dtype)
            index = lax.broadcast_in_dim(broadcast_to(index, batch), s_shape, b_positions)
            components.append(index)
        elif _is_strided(item):
            axis = batch_like.index(core.index(("slice", dim)))
            index = lax.broadcasted_iota(index_dtype, s_shape, axis)
            index = lax.mul(index, _const(item.step, index_dtype))
            if item.start:
                index = lax.add(index, _const(item.start, index_dtype))
            components.append(index)
        else:  # a window, reversed afterwards for a step of -1
            position = core.index(("slice", dim))
            low = item.start if item.step > 0 else item.start - (item.size - 1)
            if item.step < 0 and item.size > 1:
                flips.append(position)
            offset_dims.append(position)
            sizes.append(item.size)
            if item.size != n:
                components.append(lax.broadcast_in_dim(_const(low, index_dtype), s_shape, ()))
                index_map.append(dim)
            continue
        index_map.append(dim)
        collapsed.append(dim)
        sizes.append(1)
    indices = None
    if components:
        indices = lax.concatenate([lax.expand_dims(c, (len(s_shape),)) for c in components],
                                  len(s_shape))
    return _Plan(indices, tuple(index_map), tuple(collapsed), tuple(sizes), tuple(offset_dims),
                 tuple(flips), core_shape, view_shape)


def _dim_size(entry, batch, operand_items) -> int:
    if entry[0] == "new":
        return 1
    if entry[0] == "batch":
        return batch[entry[1]]
    return operand_items[entry[1]].size


# -- reads --------------------------------------------------------------------------------
def _mode(mode, default):
    """A `mode=` argument as a lax.GatherScatterMode ('fill'/'drop', 'clip',
    'promise_in_bounds' or the enum itself)."""
    return default if mode is None else lax.GatherScatterMode.from_any(mode)


def _zeros(shape, dtype, weak_type=False) -> Array:
    zero = as_array(0, dtype)
    return with_weak_type(lax.broadcast_in_dim(zero, tuple(shape), ()), weak_type)


def _basic_read(x: Array, parsed: _Parsed) -> Array:
    """Static slices and integers as slice + rev + dynamic-slice + one reshape."""
    starts, limits, strides, flips, view = [], [], [], [], []
    dynamic = []
    dim = 0
    for item in parsed.items:
        if item is _NEW:
            view.append(1)
            continue
        if isinstance(item, _Slice):
            low = item.start if item.step > 0 else item.start + item.step * (item.size - 1)
            stride = abs(item.step)
            starts.append(low)
            limits.append(low + stride * (item.size - 1) + 1 if item.size else low)
            strides.append(stride)
            if item.step < 0 and item.size > 1:
                flips.append(dim)
            view.append(item.size)
        elif item.static is not None:
            if parsed.shape[dim] == 0:
                raise IndexError(f"index {item.static} is out of bounds for an axis of size 0")
            point = min(max(item.static, 0), parsed.shape[dim] - 1)  # reads clamp
            starts.append(point)
            limits.append(point + 1)
            strides.append(1)
        else:
            starts.append(0)
            limits.append(parsed.shape[dim])
            strides.append(1)
            dynamic.append((dim, item.array))
        dim += 1
    if 0 in view:
        return _zeros(view, x.dtype, x.weak_type)
    if (starts, limits) != ([0] * len(starts), list(parsed.shape)) or set(strides) - {1}:
        x = lax.slice(x, starts, limits, strides if set(strides) - {1} else None)
    if flips:
        x = lax.rev(x, tuple(flips))
    if dynamic:
        x = _dynamic_points(x, dynamic)
    return reshape_exact(x, view)


def _dynamic_points(x: Array, points: list) -> Array:
    """One dynamic-slice of size 1 along each traced scalar index's dim (a negative
    index wraps once, then XLA's dynamic-slice clamps)."""
    dims = dict(points)
    starts = [dims.get(d, 0) for d in range(x.ndim)]
    sizes = [1 if d in dims else n for d, n in enumerate(x.shape)]
    return lax.dynamic_slice(x, starts, sizes,
                             allow_negative_indices=[d in dims for d in range(x.ndim)])


def _expand_bool_axes(x: Array, parsed: _Parsed) -> Array:
    return reshape_exact(x, parsed.shape) if parsed.bool_axes else x


def _gather_read(x: Array, parsed: _Parsed, mode, fill_value, indices_are_sorted: bool,
                 unique_indices: bool) -> Array:
    plan = _plan(parsed)
    if 0 in plan.view_shape:
        return _zeros(plan.view_shape, x.dtype, x.weak_type)
    if any(n == 0 for n, s in zip(parsed.shape, plan.slice_sizes) if s == 1):
        raise IndexError(f"cannot index into an empty dimension of an array of shape "
                         f"{parsed.shape}")
    operand = _expand_bool_axes(x, parsed)
    if plan.indices is None:
        out = operand
    else:
        dnums = lax.GatherDimensionNumbers(offset_dims=plan.offset_dims,
                                           collapsed_slice_dims=plan.collapsed,
                                           start_index_map=plan.start_index_map)
        indices = plan.indices
        if not plan.core_shape:  # a scalar result: gathered as one element of a batch of
            indices = reshape_exact(indices, (1, *indices.shape))  # 1 (the interpreter's
            # gather returns 1-d for 0-d results: np.ascontiguousarray)
        out = lax.gather(operand, indices, dnums, plan.slice_sizes,
                         indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                         mode=mode, fill_value=fill_value)
    if plan.reversed:
        out = lax.rev(out, plan.reversed)
    return with_weak_type(reshape_exact(out, plan.view_shape), x.weak_type)


def _read(x, index, *, mode=None, fill_value=None, indices_are_sorted: bool = False,
          unique_indices: bool = False) -> Array:
    x = as_array(x)
    mode = _mode(mode, lax.GatherScatterMode.PROMISE_IN_BOUNDS)  # XLA's gather clamps
    parsed = _parse(tuple(x.shape), index)
    fill = mode is lax.GatherScatterMode.FILL_OR_DROP
    if not parsed.has_arrays and not parsed.bool_axes and not fill:
        return _basic_read(x, parsed)
    return _gather_read(x, parsed, mode, fill_value, indices_are_sorted, unique_indices)


def not_replayed(args) -> bool:
    """Whether lazy mode records `getitem(x, index)` as it is rather than replaying
    it: `x` is concrete (sliced on the spot), or the index still holds a Python
    int (a recipe would hold the slice's start, so a loop indexing by its step
    number, x[i % 10], would learn a call per value and leave its tape; a lazy
    array's ints are made operands before, `int_operands`, unless too big)."""
    if type(args[0]) is ConcreteArray or type(args[0]) is np.ndarray:
        return True
    return holds_int(args)


def int_operands(index):
    """`index` with each Python (or NumPy) int a 0-d int32 array, one object per
    value, or None where it has no int (or one int32 cannot hold). Lazy mode
    indexes a pending array so: `x[i]` by a loop's step number is then one
    replayed call whose index is a leaf, not a call recorded as it is every
    step (~75 µs: the index parsed, two operations inferred). A 0-d integer
    array indexes as the int does (the axis goes; negative wraps once, out of
    bounds clamps)."""
    entries = index if type(index) is tuple else (index,)
    if not any(_is_int(e) for e in entries):
        return None
    converted = []
    for e in entries:
        if _is_int(e):
            e = _int_operand(int(e))
            if e is None:
                return None
        converted.append(e)
    return tuple(converted) if type(index) is tuple else converted[0]


def lazy_index(x, index):
    """`index` as lazy mode's replayed calls take it: a lazy array's ints made
    operands (`int_operands`) where they can be; else as it is."""
    if type(x) is LazyArray:
        operands = int_operands(index)
        if operands is not None:
            return operands
    return index


def _is_int(entry) -> bool:
    return isinstance(entry, (int, np.integer)) and not isinstance(entry, (bool, np.bool_))


def _int_operand(value: int) -> ConcreteArray | None:
    """`value` as a 0-d int32 array, the same object every time (a constant
    index stays one leaf of a tape); None where int32 cannot hold it."""
    made = _INT_OPERANDS.get(value)
    if made is None:
        if not -2**31 <= value < 2**31:
            return None
        if len(_INT_OPERANDS) >= _MAX_INT_OPERANDS:
            _INT_OPERANDS.clear()
        made = _INT_OPERANDS[value] = ConcreteArray(np.asarray(value, np.int32))
    return made


_INT_OPERANDS: dict[int, ConcreteArray] = {}
_MAX_INT_OPERANDS = 4096


def getitem(x, index) -> Array:
    """`x[index]` with NumPy's basic and advanced indexing and JAX's bounds rules:
    negative indices wrap once, out-of-bounds reads clamp to the edge."""
    fast = _eager_fast.basic_index(x, index)
    if fast is not None:
        return fast
    return _read(x, index)


# -- updates ------------------------------------------------------------------------------
def _scatter(x, index, values, kind: str, *, mode=None, indices_are_sorted: bool = False,
             unique_indices: bool = False, func: Callable | None = None) -> Array:
    """`x[index] <kind>= values` as one scatter; returns x's dtype and weak type."""
    x = as_array(x)
    mode = _mode(mode, lax.GatherScatterMode.FILL_OR_DROP)  # XLA's scatter drops
    parsed = _parse(tuple(x.shape), index)
    plan = _plan(parsed)
    if 0 in plan.view_shape:
        return x
    work_dtype = x.dtype
    if func is None:
        values = _to_array(values)
        if isinstance(values, ConcreteArray) and values.weak_type and \
                dtypes.is_integer(x.dtype) and values.dtype.kind in "iu":
            values = lax.convert_element_type(values, x.dtype)  # in-range int literals
        work_dtype = dtypes.promote_types(dtypes.dtype_and_weak(x),
                                          dtypes.dtype_and_weak(values))[0]
        values = lax.convert_element_type(values, work_dtype)
        values = broadcast_to(values, plan.view_shape)
        values = reshape_exact(values, plan.core_shape)
        if plan.reversed:
            values = lax.rev(values, plan.reversed)
    operand = lax.convert_element_type(_expand_bool_axes(x, parsed), work_dtype)
    if plan.indices is None:  # the view is the whole operand, in order: no scatter needed
        out = func(operand) if func is not None else _ELEMENTWISE[kind](operand, values)
    else:
        dnums = lax.ScatterDimensionNumbers(update_window_dims=plan.offset_dims,
                                            inserted_window_dims=plan.collapsed,
                                            scatter_dims_to_operand_dims=plan.start_index_map)
        flags = {"indices_are_sorted": indices_are_sorted, "unique_indices": unique_indices,
                 "mode": mode}
        if func is not None:
            out = lax.scatter_apply(operand, plan.indices, func, dnums,
                                    update_shape=plan.core_shape, **flags)
        else:
            out = _SCATTERS[kind](operand, plan.indices, values, dnums, **flags)
    out = reshape_exact(out, tuple(x.shape))
    return with_weak_type(lax.convert_element_type(out, x.dtype), x.weak_type)


_ELEMENTWISE: dict[str, Callable] = {  # an update of the whole operand, in order
    "set": lambda x, y: y, "add": lax.add, "sub": lax.sub, "mul": lax.mul, "min": lax.min,
    "max": lax.max}
_SCATTERS: dict[str, Callable] = {
    "set": lax.scatter, "add": lax.scatter_add, "sub": lax.scatter_sub, "mul": lax.scatter_mul,
    "min": lax.scatter_min, "max": lax.scatter_max}


def index_update(x, index, values, kind: str, **kwargs) -> Array:
    """`x.at[index].<kind>(values)` for kind set, add, sub, mul, min or max: the
    call lazy mode learns and replays (`xnp._index_update`)."""
    return _scatter(x, index, values, kind, **kwargs)


def holds_int(args) -> bool:
    """Whether the index (the second argument) is or holds a Python int: such a
    call is recorded as it is, not replayed (see `not_replayed`)."""
    index = args[1] if len(args) > 1 else None
    entries = index if type(index) is tuple else (index,)
    return any(_is_int(e) for e in entries)


def _update(x, index, values, kind: str, **kwargs) -> Array:
    """An update through the replayed call, a lazy array's int indices operands
    (as `xnp.getitem` has them): `x.at[i].set(v)` in a taped step was recorded
    as it is every step, ~150 µs."""
    return xnp._index_update(x, lazy_index(x, index), values, kind, **kwargs)


class _IndexUpdateRef:
    """`x.at[index]`: methods return an updated copy of x (x itself never changes).

    Updates at out-of-bounds indices are dropped (mode='drop', the default) or
    clamped (mode='clip'); repeated indices all apply, in order for `set`.
    """

    def __init__(self, array: Array, index):
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode=None, fill_value=None) -> Array:
        """`x[index]`; mode='fill' gives `fill_value` (NaN, INT_MIN...) out of bounds."""
        return _read(self.array, self.index, mode=mode, fill_value=fill_value,
                     indices_are_sorted=indices_are_sorted, unique_indices=unique_indices)

    def set(self, values, **kwargs) -> Array:
        return _update(self.array, self.index, values, "set", **kwargs)

    def add(self, values, **kwargs) -> Array:
        return _update(self.array, self.index, values, "add", **kwargs)

    def subtract(self, values, **kwargs) -> Array:
        return _update(self.array, self.index, values, "sub", **kwargs)

    def multiply(self, values, **kwargs) -> Array:
        return _update(self.array, self.index, values, "mul", **kwargs)

    mul = multiply

    def divide(self, values, **kwargs) -> Array:
        """x / (ones with `values` multiplied in at index), as JAX: ints give floats."""
        ones = xnp.ones_like(self.array)
        return xnp.divide(self.array, _update(ones, self.index, values, "mul", **kwargs))

    def power(self, values, **kwargs) -> Array:
        ones = xnp.ones_like(self.array)
        return xnp.power(self.array, _update(ones, self.index, values, "mul", **kwargs))

    def min(self, values, **kwargs) -> Array:
        return _update(self.array, self.index, values, "min", **kwargs)

    def max(self, values, **kwargs) -> Array:
        return _update(self.array, self.index, values, "max", **kwargs)

    def apply(self, func: Callable, **kwargs) -> Array:
        """`func` (a scalar function) applied at index, once per occurrence."""
        return _scatter(self.array, self.index, None, "apply", func=func, **kwargs)


class IndexUpdateHelper:
    """What `x.at` returns: index it to get an `_IndexUpdateRef`."""

    __slots__ = ("array",)

    def __init__(self, array: Array):
        self.array = array

    def __getitem__(self, index) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"IndexUpdateHelper({self.array!r})"


# -- take and friends ---------------------------------------------------------------------


__all__ = ["IndexUpdateHelper", "getitem"]
