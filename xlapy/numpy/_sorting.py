"""`xnp` sorting, searching and counting: sort / argsort / lexsort / partition,
searchsorted / digitize, the nonzero family, compress / extract, unique,
bincount / histogram, select / piecewise (cumulative sums, products and
differences are in `_cumulative`, re-exported here).

Sorts are one HLO sort (variadic, with an iota to carry indices). Functions
whose output size depends on the data (nonzero, argwhere, flatnonzero,
unique, bincount) run eagerly on concrete arrays, where the size can be read
off the values; under `jit` they need `size=` (`length=` for bincount), else
they raise CompileError naming the caller's line. With a fixed size the
result is computed with scatters into slots, padded with `fill_value`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import xlapy.numpy as xnp
from xlapy.core import dtypes
from xlapy.core.errors import compile_error
from xlapy.core.trace import Array, Tracer, as_array, with_weak_type
from xlapy.lax import primitives as lax
from xlapy.numpy._cumulative import (
    cumprod,
    cumsum,
    cumulative_prod,
    cumulative_sum,
    diff,
    ediff1d,
    nancumprod,
    nancumsum,
)
from xlapy.numpy._index_routines import take
from xlapy.numpy._indexing import _scatter, getitem
from xlapy.numpy._manipulation import concatenate, flip
from xlapy.numpy._promotion import (
    broadcast_arrays,
    canonicalize_axis,
    promote_dtypes,
    reshape_exact,
)
from xlapy.numpy._shapes import (
    _asarray,
    _flat_axis,
    _full,
    moveaxis,
    ravel,
    reshape,
)

_INDEX = dtypes.int32


# -- sorting --------------------------------------------------------------------------------
def sort(a, axis: int | None = -1, *, kind=None, order=None, stable: bool = True,
         descending: bool = False) -> Array:
    """`a` sorted along `axis` (flattened when None); NaNs sort last, -0.0 with 0.0."""
    if order is not None:
        raise NotImplementedError("xnp.sort does not support order= (structured arrays)")
    a, axis = _flat_axis(_asarray(a), axis)
    result = lax.sort(a, axis, is_stable=stable)
    return lax.rev(result, (axis,)) if descending else result


def argsort(a, axis: int | None = -1, *, kind=None, order=None, stable: bool = True,
            descending: bool = False) -> Array:
    """int32 indices that sort `a` along `axis`; equal elements keep their order (also
    when `descending`, as JAX)."""
    if order is not None:
        raise NotImplementedError("xnp.argsort does not support order= (structured arrays)")
    a, axis = _flat_axis(_asarray(a), axis)
    n = a.shape[axis]
    iota = lax.broadcasted_iota(_INDEX, a.shape, axis)
    if not descending:
        return lax.sort((a, iota), axis, is_stable=True, num_keys=1)[1]
    # Sorting the reversed array stably and reversing back keeps ties in order.
    _, index = lax.sort((lax.rev(a, (axis,)), iota), axis, is_stable=True, num_keys=1)
    return lax.sub(_full(a.shape, n - 1, _INDEX), lax.rev(index, (axis,)))


def lexsort(keys, axis: int = -1) -> Array:
    """int32 indices sorting by several keys: the last key is the primary one."""
    keys = [_asarray(k) for k in (keys if not isinstance(keys, Array) else list(keys))]
    if not keys:
        raise TypeError("need a sequence of keys with len > 0 in lexsort")
    if len({k.shape for k in keys}) > 1:
        raise ValueError("all keys need to be the same shape")
    if keys[0].ndim == 0:
        return as_array(np.int32(0))
    axis = canonicalize_axis(axis, keys[0].ndim)
    iota = lax.broadcasted_iota(_INDEX, keys[0].shape, axis)
    return lax.sort((*reversed(keys), iota), axis, is_stable=True, num_keys=len(keys))[-1]


def partition(a, kth: int, axis: int = -1) -> Array:
    """`a` with the kth element in its sorted place, smaller ones before and larger
    ones after (here: fully sorted, which satisfies the contract)."""
    a = _asarray(a)
    axis = canonicalize_axis(axis, a.ndim)
    _check_kth(kth, a.shape[axis])
    return sort(a, axis)


def argpartition(a, kth: int, axis: int = -1) -> Array:
    """Indices that partition `a` around its kth element (here: a full argsort)."""
    a = _asarray(a)
    axis = canonicalize_axis(axis, a.ndim)
    _check_kth(kth, a.shape[axis])
    return argsort(a, axis)


def _check_kth(kth, n: int) -> None:
    kth = int(kth)
    if not -n <= kth < n:
        raise ValueError(f"kth(={kth}) out of bounds ({n})")


# -- searching ------------------------------------------------------------------------------
def _less(x: Array, y: Array) -> Array:
    """x < y in sort order: NaN is the largest value; complex compares (real, imag)."""
    if dtypes.is_complex(x.dtype):
        xr, yr = lax.real(x), lax.real(y)
        return lax.bitwise_or(_less(xr, yr),
                              lax.bitwise_and(lax.eq(xr, yr), _less(lax.imag(x), lax.imag(y))))
    less = lax.lt(x, y)
    if dtypes.is_float(x.dtype):
        x_nan, y_nan = lax.ne(x, x), lax.ne(y, y)
        less = lax.bitwise_or(less, lax.bitwise_and(y_nan, lax.bitwise_not(x_nan)))
    return less


def searchsorted(a, v, side: str = "left", sorter=None, *, method: str = "scan") -> Array:
    """int32 positions where `v` would be inserted into the sorted 1-d `a` to keep it
    sorted: before equal elements (side='left') or after them ('right').

    method 'scan' (default) is an unrolled binary search, log2(len(a)) gathers;
    'compare_all' compares every pair, which suits small `a`.
    """
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', got {side!r}")
    a, v = _asarray(a), _asarray(v)
    if a.ndim != 1:
        raise ValueError("searchsorted: a must be one-dimensional")
    if sorter is not None:
        a = take(a, sorter)
    a, v = promote_dtypes(a, v)
    n = a.shape[0]

    def goes_right(element, value):  # does `value` belong after `element`?
        if side == "left":
            return _less(element, value)
        return lax.bitwise_not(_less(value, element))

    if n == 0:
        return _full(v.shape, 0, _INDEX)
    if method == "compare_all":
        table = goes_right(lax.broadcast_in_dim(a, v.shape + (n,), (v.ndim,)),
                           lax.broadcast_in_dim(v, v.shape + (n,), tuple(range(v.ndim))))
        return lax.reduce_sum(lax.convert_element_type(table, _INDEX), (v.ndim,))
    if method not in ("scan", "scan_unrolled", "sort"):
        raise ValueError(f"searchsorted: unknown method {method!r}")
    low, high = _full(v.shape, 0, _INDEX), _full(v.shape, n, _INDEX)
    for _ in range(int(np.ceil(np.log2(n + 1)))):
        mid = lax.div(lax.add(low, high), 2)
        active = lax.lt(low, high)  # searches already narrowed to one place stay there
        right = lax.bitwise_and(goes_right(getitem(a, mid), v), active)
        low = lax.select(right, lax.add(mid, 1), low)
        high = lax.select(lax.bitwise_and(active, lax.bitwise_not(right)), mid, high)
    return low


def digitize(x, bins, right: bool = False, *, method: str | None = None) -> Array:
    """int32 indices of the bins (monotonic, increasing or decreasing) `x` falls in."""
    x, bins = _asarray(x), _asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array, got {bins.shape}")
    n = bins.shape[0]
    if n == 0:
        return _full(x.shape, 0, _INDEX)
    side = "left" if right else "right"
    kwargs = {"method": method} if method else {}
    increasing = searchsorted(bins, x, side, **kwargs)
    decreasing = lax.sub(_full(x.shape, n, _INDEX), searchsorted(flip(bins), x, side, **kwargs))
    rising = lax.ge(getitem(bins, -1), getitem(bins, 0))
    return lax.select(lax.broadcast_in_dim(rising, x.shape, ()), increasing, decreasing)


# -- data-dependent sizes -------------------------------------------------------------------
def _output_size(size, counted: Array, name: str, keyword: str = "size") -> int:
    """The static output size: `size` if given, else the count of a concrete value."""
    if size is not None:
        size = int(size)
        if size < 0:
            raise ValueError(f"{name}: {keyword} must be non-negative, got {size}")
        return size
    if isinstance(counted, Tracer):
        raise compile_error(name, "its output shape depends on the values of its input; "
                                  f"pass {keyword}= to fix the output size")
    return int(np.asarray(counted.value))


def _nonzero_mask(a: Array) -> Array:
    if a.dtype == np.bool_:
        return a
    return lax.ne(a, _full(a.shape, 0, a.dtype))


def _count(mask: Array) -> Array:
    return lax.reduce_sum(lax.convert_element_type(mask, _INDEX), tuple(range(mask.ndim)))


def _slots(flat_mask: Array, size: int) -> Array:
    """For each True of a 1-d mask its rank among the Trues; `size` for the Falses (an
    out-of-bounds slot of a length-`size` result, which scatters drop)."""
    ranks = lax.cumsum(lax.convert_element_type(flat_mask, _INDEX), 0)
    ranks = lax.sub(ranks, _full(ranks.shape, 1, _INDEX))
    return lax.select(flat_mask, ranks, _full(ranks.shape, size, _INDEX))


def nonzero(a, *, size: int | None = None, fill_value=None) -> tuple[Array, ...]:
    """int32 index arrays, one per dimension, of the nonzero elements of `a` in C
    order. With `size`, exactly `size` of them: cut, or padded with `fill_value`
    (0 by default; a scalar or one value per dimension)."""
    return _nonzero(a, size, fill_value, "xnp.nonzero")


def _nonzero(a, size: int | None, fill_value, name: str) -> tuple[Array, ...]:
    a = _asarray(a)
    if a.ndim == 0:
        raise ValueError("calling nonzero on 0d arrays is not allowed; use "
                         "xnp.atleast_1d(scalar).nonzero() instead")
    mask = _nonzero_mask(a)
    count = None if size is not None else _count(mask)
    size = _output_size(size, count, name)
    flat_mask = ravel(mask)
    positions = lax.iota(_INDEX, flat_mask.size)
    flat = _scatter(_full((size,), 0, _INDEX), _slots(flat_mask, size), positions, "set")
    out = []
    for stride, n in zip(_strides(a.shape), a.shape):
        out.append(lax.rem(lax.div(flat, stride), n) if n else flat)
    if fill_value is not None:
        fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * a.ndim
        if len(fills) != a.ndim:
            raise ValueError(f"nonzero: fill_value must be a scalar or a tuple of {a.ndim}")
        padding = lax.ge(lax.iota(_INDEX, size), _full((size,), _count(mask), _INDEX))
        out = [lax.select(padding, _full((size,), f, _INDEX), o) for o, f in zip(out, fills)]
    return tuple(out)


def _strides(shape: Sequence[int]) -> list[int]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(max(step, 1))
        step *= n
    return list(reversed(strides))


def flatnonzero(a, *, size: int | None = None, fill_value=None) -> Array:
    """int32 indices of the nonzero elements of the flattened `a`."""
    return _nonzero(ravel(a), size, fill_value, "xnp.flatnonzero")[0]


def argwhere(a, *, size: int | None = None, fill_value=None) -> Array:
    """The indices of the nonzero elements as rows of an (N, ndim) int32 array."""
    a = _asarray(a)
    if a.ndim == 0:
        count = _nonzero(reshape(a, (1,)), size, fill_value, "xnp.argwhere")[0].shape[0]
        return _full((count, 0), 0, _INDEX)
    columns = _nonzero(a, size, fill_value, "xnp.argwhere")
    return concatenate([lax.expand_dims(c, (1,)) for c in columns], 1)


def extract(condition, arr, *, size: int | None = None, fill_value=0) -> Array:
    """The elements of the flattened `arr` where the flattened `condition` is nonzero
    (padded with `fill_value` to `size` when given)."""
    return compress(ravel(condition), ravel(arr), size=size, fill_value=fill_value)


def compress(condition, a, axis: int | None = None, *, size: int | None = None,
             fill_value=0, out=None) -> Array:
    """The slices of `a` along `axis` (flattened when None) where the 1-d `condition`
    is nonzero; padded with `fill_value` to `size` when given."""
    if out is not None:
        raise NotImplementedError("xnp.compress does not support out=")
    condition, a = _asarray(condition), _asarray(a)
    if condition.ndim != 1:
        raise ValueError("condition must be a 1D array")
    a, axis = _flat_axis(a, axis)
    n = a.shape[axis]
    condition = getitem(condition, slice(0, n))  # entries past the axis must be False
    count = None if size is not None else _count(_nonzero_mask(condition))
    size = _output_size(size, count, "xnp.compress")
    (index,) = nonzero(condition, size=size, fill_value=n)
    shape = a.shape[:axis] + (1,) + a.shape[axis + 1:]
    padded = concatenate([a, _full(shape, _asarray(fill_value), a.dtype)], axis)
    return take(padded, index, axis, mode="clip")


def isin(element, test_elements, assume_unique: bool = False, invert: bool = False, *,
         method: str = "auto") -> Array:
    """Elementwise, whether `element` occurs in `test_elements` (its shape is kept).

    Compares every pair ('compare_all'), or with method='sort' binary-searches the
    sorted test elements, which suits many of them.
    """
    element, test = promote_dtypes(element, ravel(test_elements))
    if method == "sort" or (method == "auto" and test.size > 256):
        test = sort(test)
        position = searchsorted(test, element)
        found = lax.eq(take(test, position, mode="clip"), element) if test.size else \
            _full(element.shape, False, np.bool_)
    elif method in ("auto", "compare_all"):
        table = lax.eq(lax.broadcast_in_dim(element, element.shape + (test.size,),
                                            tuple(range(element.ndim))),
                       lax.broadcast_in_dim(test, element.shape + (test.size,), (element.ndim,)))
        found = lax.reduce_or(table, (element.ndim,))
    else:
        raise ValueError(f"isin: unknown method {method!r}")
    return lax.bitwise_not(found) if invert else found


# -- unique ---------------------------------------------------------------------------------
def _differs(x: Array, y: Array, equal_nan: bool) -> Array:
    """x != y elementwise, NaNs equal to each other when `equal_nan`."""
    differ = lax.ne(x, y)
    if equal_nan and (dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype)):
        both_nan = lax.bitwise_and(lax.ne(x, x), lax.ne(y, y))
        differ = lax.bitwise_and(differ, lax.bitwise_not(both_nan))
    return differ


def _sorted_rows(rows: Array) -> tuple[list[Array], Array]:
    """The rows of a 2-d array sorted lexicographically (stably), as columns, and the
    permutation that sorts them."""
    columns = [reshape_exact(getitem(rows, (slice(None), j)), (rows.shape[0],))
               for j in range(rows.shape[1])]
    iota = lax.iota(_INDEX, rows.shape[0])
    result = lax.sort((*columns, iota), 0, is_stable=True, num_keys=max(len(columns), 1)) \
        if columns else (iota,)
    return list(result[:-1]), result[-1]


def unique(ar, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value=None,
           sorted: bool = True) -> Array | tuple[Array, ...]:  # noqa: A002
    """The sorted unique elements of `ar` (or unique slices along `axis`), and on
    request the index of each one's first occurrence, the inverse (ar's elements as
    indices into the result) and the counts, all int32.

    With `size` the result has exactly that length: cut, or padded with `fill_value`
    (default: the smallest unique value), padded indices pointing at it and counts 0.
    """
    x = _asarray(ar)
    if axis is None:
        shape, x = tuple(x.shape), ravel(x)
        rows = lax.expand_dims(x, (1,))
        inverse_shape = shape
    else:
        axis = canonicalize_axis(axis, x.ndim)
        moved = moveaxis(x, axis, 0)
        rows = reshape_exact(moved, (moved.shape[0], int(np.prod(moved.shape[1:]))))
        inverse_shape = (x.shape[axis],)
    n = rows.shape[0]
    columns, perm = _sorted_rows(rows)
    if n:
        differ = [_differs(getitem(c, slice(1, None)), getitem(c, slice(None, -1)), equal_nan)
                  for c in columns]
        step = differ[0] if differ else _full((n - 1,), False, np.bool_)
        for d in differ[1:]:
            step = lax.bitwise_or(step, d)
        first = concatenate([_full((1,), True, np.bool_), step])
    else:
        first = _full((0,), True, np.bool_)
    count = None if size is not None else _count(first)
    size = _output_size(size, count, "xnp.unique")
    slots = _slots(first, size)
    sorted_rows = getitem(rows, perm)
    fill_row = getitem(sorted_rows, slice(0, 1)) if n else _full((1, rows.shape[1]), 0, x.dtype)
    if fill_value is not None:
        fill_row = _full((1, rows.shape[1]), _asarray(fill_value), x.dtype)
    values = lax.broadcast_in_dim(reshape_exact(fill_row, (rows.shape[1],)),
                                  (size, rows.shape[1]), (1,))
    values = _scatter(values, slots, sorted_rows, "set")
    if axis is None:
        result = [reshape_exact(values, (size,))]
    else:
        moved_shape = (size,) + tuple(moveaxis(x, axis, 0).shape[1:])
        result = [moveaxis(reshape_exact(values, moved_shape), 0, axis)]
    if return_index:
        start = getitem(perm, 0) if n else as_array(np.int32(0))
        result.append(_scatter(lax.broadcast_in_dim(start, (size,), ()), slots, perm, "set"))
    if return_inverse:
        ranks = lax.sub(lax.cumsum(lax.convert_element_type(first, _INDEX), 0),
                        _full((n,), 1, _INDEX))
        inverse = _scatter(_full((n,), 0, _INDEX), perm, ranks, "set")
        result.append(reshape_exact(inverse, inverse_shape))
    if return_counts:
        ranks = lax.sub(lax.cumsum(lax.convert_element_type(first, _INDEX), 0),
                        _full((n,), 1, _INDEX))
        result.append(_scatter(_full((size,), 0, _INDEX), ranks, 1, "add"))
    return result[0] if len(result) == 1 else tuple(result)


def unique_values(x) -> Array:
    """The array API's `unique(x)`."""
    return unique(x)


# -- counting -------------------------------------------------------------------------------
def bincount(x, weights=None, minlength: int = 0, *, length: int | None = None) -> Array:
    """How often each value 0, 1, ... occurs in the non-negative integer array `x`
    (summing `weights` instead of ones when given). Negative values count as 0 and
    values past `length` are dropped, as JAX; `length` is needed under jit."""
    x = _asarray(x)
    if x.ndim != 1 or not (dtypes.is_integer(x.dtype) or x.dtype == np.bool_):
        raise TypeError(f"bincount: x must be a 1-d integer array, got {x.dtype}{list(x.shape)}")
    if length is None:
        top = None
        if not isinstance(x, Tracer):
            top = as_array(int(np.max(x.value)) + 1 if x.size else 0, np.int64)
        length = max(_output_size(None, top if top is not None else x, "xnp.bincount",
                                  "length"), int(minlength))
    weights = as_array(np.int32(1)) if weights is None else _asarray(weights)
    weights = with_weak_type(weights, False)
    if weights.ndim and weights.shape != x.shape:
        raise ValueError(f"bincount: weights of shape {weights.shape} do not match x "
                         f"{x.shape}")
    index = lax.convert_element_type(x, _INDEX if x.dtype.itemsize < 8 else x.dtype)
    index = lax.max(index, _full(index.shape, 0, index.dtype))
    return _scatter(_full((int(length),), 0, weights.dtype), index, weights, "add")


def histogram_bin_edges(a, bins=10, range=None, weights=None) -> Array:  # noqa: A002
    """The edges of `bins` equal bins over `range` (default: the data's min and max),
    or the given edges."""
    a = ravel(a)
    if isinstance(bins, (int, np.integer)):
        dtype = a.dtype if dtypes.is_float(a.dtype) else dtypes.float32
        if range is None:
            low, high = xnp.min(a), xnp.max(a)
        else:
            low, high = (as_array(r, dtype) for r in range)
        low = lax.convert_element_type(low, dtype)
        high = lax.convert_element_type(high, dtype)
        same = lax.eq(low, high)
        low = lax.select(same, lax.sub(low, 0.5), low)
        high = lax.select(same, lax.add(high, 0.5), high)
        return xnp.linspace(low, high, int(bins) + 1)
    return _asarray(bins)


def histogram(a, bins=10, range=None, weights=None,  # noqa: A002
              density: bool | None = None) -> tuple[Array, Array]:
    """(counts, bin edges) of `a`: the last bin includes its right edge, values
    outside are not counted. `density` normalises to a probability density."""
    a = ravel(a)
    edges = histogram_bin_edges(a, bins, range, weights)
    n = edges.shape[0]
    index = searchsorted(edges, a, side="right")
    on_last = lax.eq(lax.convert_element_type(a, edges.dtype), getitem(edges, -1))
    index = lax.select(on_last, _full(index.shape, n - 1, _INDEX), index)
    weights = xnp.ones_like(a, dtype=edges.dtype) if weights is None else ravel(weights)
    counts = _scatter(_full((n + 1,), 0, weights.dtype), index, weights, "add")
    counts = getitem(counts, slice(1, -1))
    if density:
        widths = xnp.diff(edges)
        counts = xnp.divide(xnp.divide(counts, widths), xnp.sum(counts))
    return counts, edges


# -- choosing -------------------------------------------------------------------------------
def select(condlist: Sequence, choicelist: Sequence, default=0) -> Array:
    """Elementwise, the choice of the first true condition, else `default`."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    conds = [_asarray(c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    choices = promote_dtypes(default, *choicelist)
    arrays = broadcast_arrays(*choices, *conds)
    values, conds = arrays[:len(choices)], arrays[len(choices):]
    result = values[0]
    for cond, choice in zip(reversed(conds), reversed(values[1:])):
        result = lax.select(cond, choice, result)
    return result


def piecewise(x, condlist, funclist, *args, **kw) -> Array:
    """`funclist[i]` (a function of x, or a value) where `condlist[i]` holds; a last
    extra function covers where none holds (else 0). Later conditions win, as NumPy."""
    x = _asarray(x)
    if isinstance(condlist, (bool, np.bool_)) or (
            isinstance(condlist, (Array, np.ndarray)) and np.ndim(condlist) == x.ndim):
        condlist = [condlist]
    conds = [lax.broadcast_in_dim(c, x.shape, tuple(range(x.ndim - c.ndim, x.ndim)))
             if c.shape != x.shape else c for c in (_asarray(c) for c in condlist)]
    funcs = list(funclist)
    if len(funcs) == len(conds) + 1:
        none = conds[0]
        for c in conds[1:]:
            none = lax.bitwise_or(none, c)
        conds.append(lax.bitwise_not(none))
    elif len(funcs) != len(conds):
        raise ValueError(f"with {len(conds)} condition(s), either {len(conds)} or "
                         f"{len(conds) + 1} functions are expected")
    result = _full(x.shape, 0, x.dtype)
    for cond, f in zip(conds, funcs):
        value = f(x, *args, **kw) if callable(f) else f
        value = lax.convert_element_type(_asarray(value), x.dtype)
        value = lax.broadcast_in_dim(value, x.shape, tuple(range(x.ndim - value.ndim, x.ndim))) \
            if value.shape != x.shape else value
        result = lax.select(cond, value, result)
    return with_weak_type(result, x.weak_type)


__all__ = ["argpartition", "argsort", "argwhere", "bincount", "compress", "cumprod", "cumsum",
           "cumulative_prod", "cumulative_sum", "diff", "digitize", "ediff1d", "extract",
           "flatnonzero", "histogram", "histogram_bin_edges", "isin", "lexsort", "nancumprod",
           "nancumsum", "nonzero", "partition", "piecewise", "searchsorted", "select", "sort",
           "unique", "unique_values"]
