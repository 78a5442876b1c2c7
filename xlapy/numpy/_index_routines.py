"""xlapy.numpy: index routines built on indexing and `.at` updates: take,
take_along_axis, put_along_axis, put, unravel_index, ravel_multi_index."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import xlapy.numpy as xnp
from xlapy.core import dtypes
from xlapy.core.trace import Array, ConcreteArray, as_array
from xlapy.lax import primitives as lax
from xlapy.numpy._indexing import (
    _as_index_array,
    _read,
    _scatter,
)
from xlapy.numpy._promotion import (
    broadcast_shapes,
    broadcast_to,
    canonicalize_axis,
    reshape_exact,
)


def take(a, indices, axis: int | None = None, out=None, mode: str | None = None,
         unique_indices: bool = False, indices_are_sorted: bool = False,
         fill_value=None) -> Array:
    """Elements of `a` at `indices` along `axis` (all of `a` flattened when None).

    mode: 'fill' (the default, as JAX: out of bounds gives `fill_value`, NaN for
    floats), 'clip', 'wrap' (indices modulo the size) or 'promise_in_bounds'.
    """
    if out is not None:
        raise NotImplementedError("xnp.take does not support out=; arrays are immutable")
    a = as_array(a)
    if axis is None:
        a, axis = reshape_exact(a, (a.size,)), 0
    axis = canonicalize_axis(axis, a.ndim)
    indices = _as_index_array(indices)
    if mode in ("wrap", "clip"):  # NumPy's modes: -1 wraps to the end, or clips to 0
        n = a.shape[axis]
        indices = xnp.mod(indices, n) if mode == "wrap" else xnp.clip(indices, 0, max(n - 1, 0))
        mode = "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("mode='raise' cannot be compiled; use 'fill' or 'clip'")
    index = (slice(None),) * axis + (indices,)
    return _read(a, index, mode="fill" if mode is None else mode, fill_value=fill_value,
                 unique_indices=unique_indices, indices_are_sorted=indices_are_sorted)


def _along_axis_index(shape: tuple[int, ...], indices: Array, axis: int) -> tuple:
    """An all-array index picking `indices` along `axis` and every position elsewhere."""
    index = []
    for d, n in enumerate(shape):
        if d == axis:
            index.append(indices)
        else:   # (an iota, not a NumPy constant: lazy mode replays a call of constants)
            index.append(lax.broadcasted_iota(
                np.int32, tuple(n if e == d else 1 for e in range(len(shape))), d))
    return tuple(index)


def _along_axis_args(arr, indices, axis, name: str):
    arr, indices = as_array(arr), _as_index_array(indices)
    if axis is None:
        arr, indices = reshape_exact(arr, (arr.size,)), reshape_exact(indices, (indices.size,))
        axis = 0
    if indices.ndim != arr.ndim:
        raise ValueError(f"{name}: indices and arr must have the same number of dimensions, "
                         f"got {indices.ndim} and {arr.ndim}")
    axis = canonicalize_axis(axis, arr.ndim)
    shape = list(broadcast_shapes(
        tuple(1 if d == axis else n for d, n in enumerate(arr.shape)),
        tuple(1 if d == axis else n for d, n in enumerate(indices.shape))))
    shape[axis] = indices.shape[axis]
    indices = broadcast_to(indices, tuple(shape))
    return arr, indices, axis


def take_along_axis(arr, indices, axis: int | None = -1, mode=None, fill_value=None) -> Array:
    """`arr`'s elements at `indices` along `axis`, as np.take_along_axis; out of bounds
    gives `fill_value` (mode='fill', JAX's default) or clamps (mode='clip')."""
    arr, indices, axis = _along_axis_args(arr, indices, axis, "take_along_axis")
    index = _along_axis_index(tuple(arr.shape), indices, axis)
    return _read(arr, index, mode="fill" if mode is None else mode, fill_value=fill_value)


def put_along_axis(arr, indices, values, axis: int | None, inplace: bool = True,
                   *, mode=None) -> Array:
    """A copy of `arr` with `values` put at `indices` along `axis`; JAX arrays are
    immutable, so `inplace=False` must be passed, as in jax.numpy."""
    if inplace:
        raise ValueError("xnp.put_along_axis cannot modify arrays in place; pass inplace=False")
    original = as_array(arr)
    arr, indices, axis = _along_axis_args(arr, indices, axis, "put_along_axis")
    index = _along_axis_index(tuple(arr.shape), indices, axis)
    out = _scatter(arr, index, values, "set", mode=mode)
    return reshape_exact(out, tuple(original.shape))


def put(a, ind, v, mode: str | None = None, *, inplace: bool = True) -> Array:
    """A copy of `a` with flat positions `ind` set to `v` (repeated cyclically when
    shorter). mode 'clip' (also the default, as JAX) or 'wrap'."""
    if inplace:
        raise ValueError("xnp.put cannot modify arrays in place; pass inplace=False")
    a = as_array(a)
    ind = _as_index_array(ind)
    ind = reshape_exact(ind, (ind.size,))
    v = as_array(v)
    v = reshape_exact(v, (v.size,))
    if v.size == 0 or ind.size == 0 or a.size == 0:
        return a
    if v.size != ind.size:
        v = _read(v, as_array(np.arange(ind.size, dtype=np.int32) % v.size))
    if mode == "wrap":
        ind = xnp.mod(ind, a.size)
    elif mode in (None, "clip"):
        (ind,) = unravel_index(ind, (a.size,))
    else:
        raise ValueError(f"xnp.put: mode must be None, 'clip' or 'wrap', got {mode!r}")
    flat = _scatter(reshape_exact(a, (a.size,)), ind, v, "set")
    return reshape_exact(flat, tuple(a.shape))


# -- flat <-> multi indices ---------------------------------------------------------------
def unravel_index(indices, shape: Sequence[int]) -> tuple[Array, ...]:
    """The multi-index of flat `indices` in an array of `shape` (C order). Out-of-range
    indices are clamped into the array, as JAX does."""
    indices = _as_index_array(indices)
    shape = tuple(int(n) for n in shape)
    size = int(np.prod(shape, dtype=np.int64))
    indices = xnp.where(indices < 0, indices + size, indices)
    indices = lax.clamp(0, indices, max(size - 1, 0)) if size else indices
    out = []
    for n in reversed(shape):
        out.append(lax.rem(indices, n) if n else indices)
        indices = lax.div(indices, n) if n else indices
    return tuple(reversed(out))


def ravel_multi_index(multi_index: Sequence, dims: Sequence[int], mode: str = "raise",
                      order: str = "C") -> Array:
    """Flat indices of the `multi_index` arrays in an array of shape `dims`; mode
    'clip' or 'wrap' ('raise' is only checked on concrete values)."""
    dims = tuple(int(n) for n in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(multi_index)} index arrays for "
                         f"{len(dims)} dimensions")
    arrays = [_as_index_array(i) for i in multi_index]
    if mode == "raise":
        for a, n in zip(arrays, dims):
            if isinstance(a, ConcreteArray) and np.any((a.value < 0) | (a.value >= n)):
                raise ValueError("invalid entry in coordinates array")
    elif mode == "wrap":
        arrays = [xnp.mod(a, n) for a, n in zip(arrays, dims)]
    elif mode == "clip":
        arrays = [xnp.clip(a, 0, n - 1) for a, n in zip(arrays, dims)]
    else:
        raise ValueError(f"ravel_multi_index: unknown mode {mode!r}")
    order_dims = range(len(dims)) if order == "C" else reversed(range(len(dims)))
    result = None
    for d in order_dims:
        a = xnp.asarray(arrays[d], dtype=dtypes.int32 if arrays[d].dtype.itemsize <= 4
                        else arrays[d].dtype)
        result = a if result is None else result * dims[d] + a
    return result


__all__ = ["put", "put_along_axis", "ravel_multi_index", "take", "take_along_axis",
           "unravel_index"]
