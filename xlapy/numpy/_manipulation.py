"""`xnp` shape manipulation: joining and splitting, tiling and repeating,
padding, flips and rolls, diagonals, inserting and deleting (reshape,
transpose and the other shape functions are in `_shapes`, re-exported here).

Every function is a composition of `lax` structural ops (reshape, transpose,
rev, slice, concatenate, pad, gather), so it traces into the same HLO that it
runs eagerly. Shapes are static: arguments that decide a shape (`repeats`,
`pad_width`, split points, `insert` positions) must be known while tracing;
`repeat` with traced `repeats` needs `total_repeat_length=`.
"""

from __future__ import annotations

import operator

import numpy as np

import xlapy.numpy as xnp
from xlapy.core import dtypes
from xlapy.core.errors import compile_error
from xlapy.core.trace import Array, ConcreteArray, Tracer, as_array
from xlapy.lax import primitives as lax
from xlapy.numpy._indexing import _scatter, getitem
from xlapy.numpy._promotion import (
    broadcast_to,
    canonicalize_axes,
    canonicalize_axis,
    promote_dtypes,
    reshape_exact,
)
from xlapy.numpy._shapes import (
    _asarray,
    _slice_along,
    _static_int,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    expand_dims,
    matrix_transpose,
    moveaxis,
    ndim,
    permute_dims,
    ravel,
    reshape,
    shape,
    size,
    squeeze,
    swapaxes,
    transpose,
)


# -- resizing -------------------------------------------------------------------------------
def resize(a, new_shape) -> Array:
    """`a` flattened, repeated as often as needed and cut to fill `new_shape`."""
    a = ravel(a)
    new_shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    total = int(np.prod(new_shape, dtype=np.int64))
    if a.size == 0 or total == 0:
        return broadcast_to(lax.convert_element_type(as_array(0), a.dtype), new_shape)
    repeated = tile(a, -(-total // a.size))
    return reshape_exact(_slice_along(repeated, 0, 0, total), new_shape)


# -- joining --------------------------------------------------------------------------------
def _arrays(arrays, name: str) -> list[Array]:
    if isinstance(arrays, Array):
        arrays = [arrays[i] for i in range(arrays.shape[0])] if arrays.ndim else [arrays]
    if isinstance(arrays, np.ndarray):
        arrays = list(arrays)
    arrays = [_asarray(a) for a in arrays]
    if not arrays:
        raise ValueError(f"{name} needs at least one array")
    return arrays


def _promoted(arrays: list[Array], dtype, name: str) -> list[Array]:
    arrays = promote_dtypes(*arrays)
    if dtype is not None:
        dtype = dtypes.canonicalize_user_dtype(dtype, name)
        arrays = [lax.convert_element_type(a, dtype) for a in arrays]
    return arrays


def concatenate(arrays, axis: int | None = 0, dtype=None) -> Array:
    """The arrays joined along an existing `axis` (flattened first when None), their
    dtypes promoted together."""
    arrays = _arrays(arrays, "concatenate")
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    if any(a.ndim == 0 for a in arrays):
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    arrays = _promoted(arrays, dtype, "concatenate")
    axis = canonicalize_axis(axis, arrays[0].ndim)
    if len(arrays) == 1:
        return arrays[0]
    return lax.concatenate(arrays, axis)


def concat(arrays, /, *, axis: int | None = 0) -> Array:
    """The array API's name for `concatenate`."""
    return concatenate(arrays, axis)


def stack(arrays, axis: int = 0, out=None, dtype=None) -> Array:
    """The arrays (all of one shape) joined along a new `axis`."""
    if out is not None:
        raise NotImplementedError("xnp.stack does not support out=")
    arrays = _arrays(arrays, "stack")
    if len({a.shape for a in arrays}) > 1:
        raise ValueError("all input arrays must have the same shape, got "
                         + ", ".join(str(a.shape) for a in arrays))
    axis = canonicalize_axis(axis, arrays[0].ndim + 1)
    return concatenate([lax.expand_dims(a, (axis,)) for a in arrays], axis, dtype)


def hstack(tup, dtype=None) -> Array:
    arrays = [atleast_1d(a) for a in _arrays(tup, "hstack")]
    return concatenate(arrays, 0 if arrays[0].ndim == 1 else 1, dtype)


def vstack(tup, dtype=None) -> Array:
    return concatenate([atleast_2d(a) for a in _arrays(tup, "vstack")], 0, dtype)


row_stack = vstack


def dstack(tup, dtype=None) -> Array:
    return concatenate([atleast_3d(a) for a in _arrays(tup, "dstack")], 2, dtype)


def column_stack(tup) -> Array:
    """1-d arrays as columns (others as they are, at least 2-d) joined along axis 1."""
    arrays = [transpose(atleast_2d(a)) if a.ndim < 2 else a for a in _arrays(tup, "column_stack")]
    return concatenate(arrays, 1)


def unstack(x, /, *, axis: int = 0) -> tuple[Array, ...]:
    """The slices of `x` along `axis`, as a tuple (the inverse of `stack`)."""
    x = _asarray(x)
    axis = canonicalize_axis(axis, x.ndim)
    return tuple(lax.squeeze(_slice_along(x, axis, i, i + 1), (axis,))
                 for i in range(x.shape[axis]))


def append(arr, values, axis: int | None = None) -> Array:
    """`values` joined to the end of `arr` (both flattened when `axis` is None)."""
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


# -- splitting ------------------------------------------------------------------------------
def _split_points(n: int, indices_or_sections, strict: bool, name: str) -> list[int]:
    if isinstance(indices_or_sections, Tracer):
        raise compile_error(name, "the split points decide the output shapes and must be static")
    if isinstance(indices_or_sections, ConcreteArray):
        indices_or_sections = indices_or_sections.value
    points = np.asarray(indices_or_sections)
    if points.ndim:
        return [0] + [operator.index(p) for p in points.ravel()] + [n]
    sections = operator.index(points)
    if sections <= 0:
        raise ValueError("number of sections must be larger than 0")
    if strict and n % sections:
        raise ValueError("array split does not result in an equal division")
    small, extra = divmod(n, sections)
    sizes = [small + 1] * extra + [small] * (sections - extra)
    return [int(p) for p in np.cumsum([0] + sizes)]


def _split(ary, indices_or_sections, axis: int, strict: bool, name: str) -> list[Array]:
    a = _asarray(ary)
    axis = canonicalize_axis(axis, a.ndim)
    points = _split_points(a.shape[axis], indices_or_sections, strict, name)
    return [_slice_along(a, axis, int(start), int(stop))
            for start, stop in zip(points[:-1], points[1:])]


def split(ary, indices_or_sections, axis: int = 0) -> list[Array]:
    """`ary` cut into equal sections (an int that must divide the axis) or at the
    given indices along `axis`."""
    return _split(ary, indices_or_sections, axis, True, "xnp.split")


def array_split(ary, indices_or_sections, axis: int = 0) -> list[Array]:
    """As `split`, but an int need not divide the axis: the first sections get one more."""
    return _split(ary, indices_or_sections, axis, False, "xnp.array_split")


def hsplit(ary, indices_or_sections) -> list[Array]:
    a = _asarray(ary)
    if a.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(a, indices_or_sections, 1 if a.ndim > 1 else 0)


def vsplit(ary, indices_or_sections) -> list[Array]:
    a = _asarray(ary)
    if a.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(a, indices_or_sections, 0)


def dsplit(ary, indices_or_sections) -> list[Array]:
    a = _asarray(ary)
    if a.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(a, indices_or_sections, 2)


# -- tiling and repeating -------------------------------------------------------------------
def tile(A, reps) -> Array:
    """`A` repeated `reps` times along each axis (`reps` an int or a tuple)."""
    a = _asarray(A)
    reps = (reps,) if isinstance(reps, (int, np.integer, Array)) else tuple(reps)
    reps = tuple(_static_int(r, "xnp.tile") for r in reps)
    rank = max(len(reps), a.ndim)
    shape = (1,) * (rank - a.ndim) + tuple(a.shape)
    reps = (1,) * (rank - len(reps)) + reps
    wide = tuple(x for r, n in zip(reps, shape) for x in (r, n))
    out = lax.broadcast_in_dim(reshape_exact(a, shape), wide, tuple(range(1, 2 * rank, 2)))
    return reshape_exact(out, tuple(r * n for r, n in zip(reps, shape)))


def repeat(a, repeats, axis: int | None = None, *, total_repeat_length: int | None = None
           ) -> Array:
    """Each element of `a` repeated `repeats` times along `axis` (flattened when None).

    `repeats` (an int or one count per element) decides the output's size, so it
    must be static, unless `total_repeat_length` fixes the size: then a traced
    `repeats` works, the output is cut to that length or padded with the last
    element, as in JAX.
    """
    a = _asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonicalize_axis(axis, a.ndim)
    n = a.shape[axis]
    if isinstance(repeats, Tracer):
        if total_repeat_length is None:
            raise compile_error("xnp.repeat", "the output shape depends on the values of "
                                              "`repeats`; pass total_repeat_length= to fix it")
        index = _traced_repeat_index(repeats, n, total_repeat_length)
        return getitem(a, (slice(None),) * axis + (index,))
    counts = np.asarray(repeats.value if isinstance(repeats, ConcreteArray) else repeats)
    if counts.ndim == 0 and total_repeat_length is None:
        r = int(counts)
        wide = a.shape[:axis + 1] + (r,) + a.shape[axis + 1:]
        dims = tuple(d if d <= axis else d + 1 for d in range(a.ndim))
        out = lax.broadcast_in_dim(a, wide, dims)
        return reshape_exact(out, a.shape[:axis] + (n * r,) + a.shape[axis + 1:])
    counts = np.broadcast_to(counts, (n,))
    if np.any(counts < 0):
        raise ValueError("repeats may not contain negative values")
    index = np.repeat(np.arange(n, dtype=np.int32), counts)
    if total_repeat_length is not None:
        index = index[:total_repeat_length]
        last = index[-1] if index.size else max(n - 1, 0)
        index = np.concatenate([index, np.full(total_repeat_length - index.size, last,
                                               np.int32)])
    return getitem(a, (slice(None),) * axis + (as_array(index),))


def _traced_repeat_index(repeats: Array, n: int, total: int) -> Array:
    """For each of `total` output positions, the input element it repeats: the number
    of elements whose repeats end at or before it (positions past the end repeat the
    last element)."""
    repeats = lax.convert_element_type(broadcast_to(repeats, (n,)), dtypes.int32)
    ends = lax.cumsum(repeats, 0)
    zeros = lax.broadcast_in_dim(as_array(np.int32(0)), (total,), ())
    markers = _scatter(zeros, _slice_along(ends, 0, 0, n - 1), 1, "add")
    return lax.cumsum(markers, 0)


# -- padding ----------------------------------------------------------------------------------
def _pad_pairs(pad_width, ndim: int, what: str = "pad_width") -> np.ndarray:
    if isinstance(pad_width, Tracer):
        raise compile_error("xnp.pad", f"{what} decides the output shape and must be static")
    values = np.asarray(pad_width.value if isinstance(pad_width, ConcreteArray) else pad_width)
    if values.dtype.kind not in "iu":
        raise TypeError(f"`{what}` must be of integral type, got {values.dtype}")
    try:
        pairs = np.broadcast_to(values, (ndim, 2))
    except ValueError:
        raise ValueError(f"`{what}` {pad_width!r} does not fit an array of {ndim} "
                         "dimensions") from None
    if np.any(pairs < 0):
        raise ValueError(f"index can't contain negative values: {what}={pad_width!r}")
    return pairs.astype(np.int64)


def _pad_constant(a: Array, pairs: np.ndarray, constant_values) -> Array:
    values = _asarray(constant_values)
    if values.ndim == 0:
        value = lax.convert_element_type(values, a.dtype)
        return lax.pad(a, value, [(int(lo), int(hi), 0) for lo, hi in pairs])
    per_axis = np.broadcast_to(np.arange(values.size).reshape(values.shape), (a.ndim, 2))
    flat = ravel(values)
    for axis, (lo, hi) in enumerate(pairs):
        for side, count in enumerate((lo, hi)):
            if not count:
                continue
            value = lax.convert_element_type(getitem(flat, int(per_axis[axis, side])), a.dtype)
            config = [(0, 0, 0)] * a.ndim
            config[axis] = (int(count), 0, 0) if side == 0 else (0, int(count), 0)
            a = lax.pad(a, value, config)
    return a


def _pad_by_index(a: Array, pairs: np.ndarray, mode: str, reflect_type: str) -> Array:
    """edge / reflect / symmetric / wrap: each output position copies one input
    position, which NumPy's own pad of an index range tells."""
    if reflect_type != "even":
        raise NotImplementedError("xnp.pad supports reflect_type='even' only")
    for axis, (lo, hi) in enumerate(pairs):
        if not lo and not hi:
            continue
        n = a.shape[axis]
        if n == 0:
            raise ValueError(f"can't extend empty axis {axis} using modes other than "
                             "'constant' or 'empty'")
        index = np.pad(np.arange(n, dtype=np.int32), (int(lo), int(hi)), mode=mode)
        a = getitem(a, (slice(None),) * axis + (as_array(index),))
    return a


def _pad_stat(a: Array, pairs: np.ndarray, mode: str, stat_length) -> Array:
    """maximum / minimum / mean: pads filled with a statistic of the edge region."""
    lengths = None if stat_length is None else _pad_pairs(stat_length, a.ndim, "stat_length")
    reduce = {"maximum": xnp.max, "minimum": xnp.min, "mean": xnp.mean}[mode]
    for axis, (lo, hi) in enumerate(pairs):
        n = a.shape[axis]
        if (lo or hi) and n == 0:
            raise ValueError(f"can't extend empty axis {axis} using mode {mode!r}")
        parts = [a]
        for side, count in ((0, lo), (1, hi)):
            if not count:
                continue
            k = n if lengths is None else max(1, min(int(lengths[axis, side]), n))
            region = _slice_along(a, axis, 0, k) if side == 0 else _slice_along(a, axis, n - k,
                                                                                 None)
            stat = reduce(region, axis=axis, keepdims=True)
            if stat.dtype != a.dtype:
                stat = lax.convert_element_type(xnp.round(stat) if dtypes.is_integer(a.dtype)
                                                else stat, a.dtype)
            shape = a.shape[:axis] + (int(count),) + a.shape[axis + 1:]
            stat = broadcast_to(stat, shape)
            parts.insert(0 if side == 0 else len(parts), stat)
        a = lax.concatenate(parts, axis) if len(parts) > 1 else a
    return a


def pad(array, pad_width, mode: str = "constant", **kwargs) -> Array:
    """`array` padded by `pad_width` ((before, after) per axis, or one pair or int for
    all), as np.pad: modes 'constant' (constant_values=0), 'empty' (zeros), 'edge',
    'reflect' and 'symmetric' (reflect_type='even'), 'wrap', 'maximum', 'minimum',
    'mean' (stat_length=)."""
    a = _asarray(array)
    pairs = _pad_pairs(pad_width, a.ndim)
    if callable(mode):
        raise NotImplementedError("xnp.pad does not support a function as mode")
    if mode == "constant":
        return _pad_constant(a, pairs, kwargs.get("constant_values", 0))
    if mode == "empty":
        return _pad_constant(a, pairs, 0)
    if mode in ("edge", "reflect", "symmetric", "wrap"):
        return _pad_by_index(a, pairs, mode, kwargs.get("reflect_type", "even"))
    if mode in ("maximum", "minimum", "mean"):
        return _pad_stat(a, pairs, mode, kwargs.get("stat_length"))
    raise NotImplementedError(f"xnp.pad: mode {mode!r} is not supported")


# -- flips and rolls --------------------------------------------------------------------------
def flip(m, axis=None) -> Array:
    """`m` with the order of elements reversed along `axis` (all axes when None)."""
    m = _asarray(m)
    axes = canonicalize_axes(axis, m.ndim)
    return lax.rev(m, axes) if axes else m


def fliplr(m) -> Array:
    m = _asarray(m)
    if m.ndim < 2:
        raise ValueError("fliplr needs an array of at least 2 dimensions")
    return flip(m, 1)


def flipud(m) -> Array:
    m = _asarray(m)
    if m.ndim < 1:
        raise ValueError("flipud needs an array of at least 1 dimension")
    return flip(m, 0)


def _roll_axis(a: Array, shift, axis: int) -> Array:
    n = a.shape[axis]
    if n == 0:
        return a
    if isinstance(shift, Tracer):
        doubled = lax.concatenate([a, a], axis)
        shift = lax.convert_element_type(shift, dtypes.int32) if shift.dtype.itemsize < 8 \
            else shift
        start = lax.rem(lax.neg(shift), n)
        start = lax.select(lax.lt(start, 0), lax.add(start, n), start)
        return lax.dynamic_slice_in_dim(doubled, start, n, axis)
    shift = operator.index(shift) % n
    if not shift:
        return a
    return lax.concatenate([_slice_along(a, axis, n - shift, None),
                            _slice_along(a, axis, 0, n - shift)], axis)


def roll(a, shift, axis=None) -> Array:
    """`a` with elements shifted by `shift` along `axis`, those past the end coming
    back at the start (the flattened array when `axis` is None). `shift` may be traced."""
    a = _asarray(a)
    if axis is None:
        return reshape_exact(roll(ravel(a), shift, 0), tuple(a.shape))
    shifts = [shift] if isinstance(shift, (int, np.integer)) or (
        isinstance(shift, Array) and shift.ndim == 0) else list(shift)
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(axes) == 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError("'shift' and 'axis' must have the same length")
    for s, ax in zip(shifts, axes):
        if isinstance(s, ConcreteArray):
            s = int(s.value)
        a = _roll_axis(a, s, canonicalize_axis(ax, a.ndim))
    return a


def rot90(m, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Array:
    """`m` rotated by 90 degrees `k` times in the plane of `axes` (from the first
    axis towards the second)."""
    m = _asarray(m)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2")
    ax1, ax2 = (canonicalize_axis(x, m.ndim) for x in axes)
    if ax1 == ax2:
        raise ValueError("axes must be different")
    k = _static_int(k, "xnp.rot90") % 4
    if k == 0:
        return m
    if k == 2:
        return flip(m, (ax1, ax2))
    perm = list(range(m.ndim))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return transpose(flip(m, ax2), perm)
    return flip(transpose(m, perm), ax2)


# -- diagonals -------------------------------------------------------------------------------


def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """The `offset` diagonal of the planes spanned by `axis1` and `axis2`, as the
    last axis of the result."""
    a = _asarray(a)
    if a.ndim < 2:
        raise ValueError("diagonal requires an array of at least two dimensions")
    ax1, ax2 = canonicalize_axis(axis1, a.ndim), canonicalize_axis(axis2, a.ndim)
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    a = moveaxis(a, (ax1, ax2), (-2, -1))
    offset = _static_int(offset, "xnp.diagonal")
    rows, cols = a.shape[-2:]
    size = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
    i = np.arange(size, dtype=np.int32) + max(-offset, 0)
    j = np.arange(size, dtype=np.int32) + max(offset, 0)
    return getitem(a, (Ellipsis, as_array(i), as_array(j)))


def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None, out=None) -> Array:
    """The sum along a diagonal (dtype as `xnp.sum`: small integers widen)."""
    if out is not None:
        raise NotImplementedError("xnp.trace does not support out=")
    return xnp.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


# -- inserting and deleting -----------------------------------------------------------------
def _static_positions(obj, n: int, name: str) -> np.ndarray | int:
    if isinstance(obj, slice):
        return np.arange(*obj.indices(n))
    if isinstance(obj, Tracer):
        raise compile_error(name, "the output shape depends on traced positions; pass "
                                  "static positions")
    value = np.asarray(obj.value if isinstance(obj, ConcreteArray) else obj)
    if value.dtype == np.bool_:
        raise TypeError(f"{name}: boolean positions are not supported; use xnp.nonzero")
    if value.size == 0:
        return value.astype(np.int64).ravel()
    if value.dtype.kind not in "iu":
        raise IndexError(f"{name}: positions must be integers, got {value.dtype}")
    return int(value) if value.ndim == 0 else value.astype(np.int64).ravel()


def insert(arr, obj, values, axis: int | None = None) -> Array:
    """`arr` with `values` inserted before the positions `obj` along `axis` (the
    flattened array when None); values take `arr`'s dtype."""
    a = _asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonicalize_axis(axis, a.ndim)
    n = a.shape[axis]
    values = lax.convert_element_type(_asarray(values), a.dtype)
    positions = _static_positions(obj, n, "xnp.insert")
    if isinstance(positions, int) or positions.size == 1:
        return _insert_block(a, int(np.ravel(positions)[0]), values, axis,
                             move=isinstance(positions, int))
    if np.any((positions < -n) | (positions > n)):
        raise IndexError(f"index out of bounds for axis {axis} with size {n}")
    positions = np.where(positions < 0, positions + n, positions)
    count = positions.size
    order = np.argsort(positions, kind="stable")
    new = positions.copy()
    new[order] += np.arange(count)
    source = np.empty(n + count, dtype=np.int32)
    keep = np.ones(n + count, dtype=bool)
    keep[new] = False
    source[keep] = np.arange(n)
    source[new] = n + np.arange(count)
    block = broadcast_to(values, a.shape[:axis] + (count,) + a.shape[axis + 1:])
    joined = lax.concatenate([a, block], axis)
    return getitem(joined, (slice(None),) * axis + (as_array(source),))


def _insert_block(a: Array, at: int, values: Array, axis: int, move: bool) -> Array:
    """`values` (at least `a.ndim`-d, its first axis moved to `axis` for a scalar
    position, as NumPy) inserted as one block before position `at`."""
    n = a.shape[axis]
    if not -n <= at <= n:
        raise IndexError(f"index {at} is out of bounds for axis {axis} with size {n}")
    at = at + n if at < 0 else at
    block = reshape_exact(values, (1,) * (a.ndim - values.ndim) + tuple(values.shape)) \
        if values.ndim < a.ndim else values
    if move:
        block = moveaxis(block, 0, axis)
    count = block.shape[axis]
    block = broadcast_to(block, a.shape[:axis] + (count,) + a.shape[axis + 1:])
    return concatenate([_slice_along(a, axis, 0, at), block, _slice_along(a, axis, at, None)],
                       axis)


def delete(arr, obj, axis: int | None = None, *, assume_unique_indices: bool = False) -> Array:
    """`arr` without the positions `obj` (an int, slice or static index array) along
    `axis` (the flattened array when None)."""
    a = _asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonicalize_axis(axis, a.ndim)
    n = a.shape[axis]
    positions = np.atleast_1d(_static_positions(obj, n, "xnp.delete"))
    if np.any((positions < -n) | (positions >= n)):
        raise IndexError(f"index out of bounds for axis {axis} with size {n}")
    keep = np.ones(n, dtype=bool)
    keep[positions] = False
    index = as_array(np.nonzero(keep)[0].astype(np.int32))
    return getitem(a, (slice(None),) * axis + (index,))


def copy(a, order=None) -> Array:
    """A copy of `a` (arrays are immutable, so only eager values are duplicated)."""
    a = _asarray(a)
    if isinstance(a, ConcreteArray):
        return ConcreteArray(a.value.copy(), a.weak_type)
    return a


__all__ = ["append", "array_split", "atleast_1d", "atleast_2d", "atleast_3d", "column_stack",
           "concat", "concatenate", "copy", "delete", "diagonal", "dsplit", "dstack",
           "expand_dims", "flip", "fliplr", "flipud", "hsplit", "hstack", "insert",
           "matrix_transpose", "moveaxis", "ndim", "pad", "permute_dims", "ravel", "repeat",
           "reshape", "resize", "roll", "rot90", "row_stack", "shape", "size", "split", "squeeze",
           "stack", "swapaxes", "tile", "trace", "transpose", "unstack", "vsplit", "vstack"]
