"""`xnp` cumulative sums and products (cumsum / cumprod, their NaN-skipping
and array-API forms) and differences (diff / ediff1d): each a `lax` scan or
slices along one axis, flattened first when `axis` is None.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from xlapy.core import dtypes
from xlapy.core.trace import Array
from xlapy.lax import primitives as lax
from xlapy.numpy._manipulation import concatenate
from xlapy.numpy._promotion import broadcast_to, canonicalize_axis
from xlapy.numpy._reductions import _sum_dtype
from xlapy.numpy._shapes import _asarray, _flat_axis, _full, _slice_along, _static_int, ravel


# -- cumulative sums and products, differences --------------------------------------------
def _cumulative(a, axis, dtype, op: Callable, name: str, widen: bool = False) -> Array:
    a = _asarray(a)
    a, axis = _flat_axis(a, axis)
    target = _sum_dtype(a.dtype, dtype, widen, name)   # bools always widen, others if asked
    a = lax.convert_element_type(a, target) if a.dtype != target else a
    if a.dtype == np.bool_:
        raise TypeError(f"{name} cannot accumulate in bool")
    return op(a, axis)


def cumsum(a, axis: int | None = None, dtype=None, out=None) -> Array:
    """Running sum along `axis` (flattened when None); bool counts as int32."""
    return _cumulative(a, axis, dtype, lax.cumsum, "cumsum")


def cumprod(a, axis: int | None = None, dtype=None, out=None) -> Array:
    """Running product along `axis` (flattened when None)."""
    return _cumulative(a, axis, dtype, lax.cumprod, "cumprod")


def _nan_to(a: Array, value) -> Array:
    if not (dtypes.is_float(a.dtype) or dtypes.is_complex(a.dtype)):
        return a
    return lax.select(lax.ne(a, a), _full(a.shape, value, a.dtype), a)


def nancumsum(a, axis: int | None = None, dtype=None, out=None) -> Array:
    """`cumsum` with NaNs counted as zero."""
    return cumsum(_nan_to(_asarray(a), 0), axis, dtype)


def nancumprod(a, axis: int | None = None, dtype=None, out=None) -> Array:
    """`cumprod` with NaNs counted as one."""
    return cumprod(_nan_to(_asarray(a), 1), axis, dtype)


def _array_api_cumulative(x, axis, dtype, include_initial: bool, op, identity, name: str):
    x = _asarray(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: axis must be given for arrays of more than one "
                             "dimension")
        x, axis = ravel(x), 0
    axis = canonicalize_axis(axis, x.ndim)
    result = _cumulative(x, axis, dtype, op, name, widen=True)
    if include_initial:
        shape = result.shape[:axis] + (1,) + result.shape[axis + 1:]
        result = lax.concatenate([_full(shape, identity, result.dtype), result], axis)
    return result


def cumulative_sum(x, /, *, axis: int | None = None, dtype=None,
                   include_initial: bool = False) -> Array:
    """The array API's running sum (small integers widen as in `sum`)."""
    return _array_api_cumulative(x, axis, dtype, include_initial, lax.cumsum, 0,
                                 "cumulative_sum")


def cumulative_prod(x, /, *, axis: int | None = None, dtype=None,
                    include_initial: bool = False) -> Array:
    """The array API's running product (small integers widen as in `prod`)."""
    return _array_api_cumulative(x, axis, dtype, include_initial, lax.cumprod, 1,
                                 "cumulative_prod")


def _edge(value, a: Array, axis: int) -> Array:
    value = _asarray(value)
    if value.ndim == 0:
        value = broadcast_to(value, a.shape[:axis] + (1,) + a.shape[axis + 1:])
    return value


def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None) -> Array:
    """The `n`-th discrete difference along `axis` (`!=` for booleans), optionally after
    joining `prepend` / `append` to the ends."""
    a = _asarray(a)
    n = _static_int(n, "xnp.diff")
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = canonicalize_axis(axis, a.ndim)
    parts = [a]
    if prepend is not None:
        parts.insert(0, _edge(prepend, a, axis))
    if append is not None:
        parts.append(_edge(append, a, axis))
    if len(parts) > 1:
        a = concatenate(parts, axis)
    op = lax.ne if a.dtype == np.bool_ else lax.sub
    for _ in range(n):
        size = a.shape[axis]
        if size == 0:
            break
        a = op(_slice_along(a, axis, 1, None), _slice_along(a, axis, 0, size - 1))
    return a


def ediff1d(ary, to_end=None, to_begin=None) -> Array:
    """Differences of consecutive elements of the flattened array, with `to_begin`
    and `to_end` (flattened, converted to its dtype) joined at the ends."""
    a = ravel(ary)
    result = diff(a)
    parts = [result]
    if to_begin is not None:
        parts.insert(0, lax.convert_element_type(ravel(to_begin), result.dtype))
    if to_end is not None:
        parts.append(lax.convert_element_type(ravel(to_end), result.dtype))
    return lax.concatenate(parts, 0) if len(parts) > 1 else result
