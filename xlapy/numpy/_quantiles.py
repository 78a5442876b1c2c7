"""`xnp` order statistics: quantile, percentile, median and their
NaN-ignoring forms.

The reduced axes are moved last and merged, the data sorted along them
(lax.sort puts NaNs last), and each quantile read at its virtual index
q * (n - 1) by NumPy's methods: 'linear' (NumPy's lerp), 'lower',
'higher', 'midpoint', 'nearest' (ties to the even index, as NumPy). The
read is a one-hot select and sum, so `q` may be traced and the NaN forms,
whose n differs per row, stay static in shape. Data holding a NaN gives NaN
(the plain forms), as does a row of NaNs (the nan- forms).
"""

from __future__ import annotations

import numpy as np

from xlapy.core import dtypes
from xlapy.core.trace import Array, Tracer, as_array
from xlapy.lax import primitives as lax
from xlapy.numpy._promotion import (
    canonicalize_axes,
    constant_like,
    convert,
    promote_dtypes_inexact,
    reshape_exact,
)
from xlapy.numpy._reductions import _no_out, any, sum

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _rows_last(a: Array, axis, keepdims: bool) -> tuple[Array, tuple[int, ...]]:
    """`a` with the reduced axes merged into one last axis, and the shape each
    quantile has (before q's own axes)."""
    axes = canonicalize_axes(axis, a.ndim)
    kept = [d for d in range(a.ndim) if d not in axes]
    out_shape = tuple(1 if d in axes else a.shape[d] for d in range(a.ndim)) if keepdims \
        else tuple(a.shape[d] for d in kept)
    moved = lax.transpose(a, (*kept, *axes))
    n = int(np.prod([a.shape[d] for d in axes], dtype=np.int64))
    return reshape_exact(moved, (*(a.shape[d] for d in kept), n)), out_shape


def _pick(sorted_rows: Array, index: Array) -> Array:
    """sorted_rows[..., index] for per-row int32 indices (shape (k, *rows)),
    as a one-hot select and sum over the last axis."""
    shape = (*index.shape, sorted_rows.shape[-1])
    positions = lax.broadcasted_iota(np.int32, shape, len(shape) - 1)
    hits = lax.eq(positions, lax.broadcast_in_dim(index, shape, tuple(range(index.ndim))))
    rows = lax.broadcast_in_dim(sorted_rows, shape, tuple(range(1, len(shape))))
    zero = lax.broadcast_in_dim(constant_like(rows, 0), shape, ())
    return lax.reduce_sum(lax.select(hits, rows, zero), (len(shape) - 1,))


def _lerp(low: Array, high: Array, t: Array) -> Array:
    """NumPy's lerp: exact at both ends and monotonic in t."""
    diff = lax.sub(high, low)
    one = constant_like(t, 1)
    from_low = lax.add(low, lax.mul(diff, t))
    from_high = lax.sub(high, lax.mul(diff, lax.sub(one, t)))
    result = lax.select(lax.ge(t, constant_like(t, 0.5)), from_high, from_low)
    return lax.select(lax.eq(low, high), low, result)


def _quantile(a, q, axis, method: str, keepdims: bool, skip_nans: bool, name: str) -> Array:
    if method not in _METHODS:
        raise ValueError(f"xnp.{name}: method must be one of {_METHODS}, got {method!r}")
    a = promote_dtypes_inexact(as_array(a), q)[0]
    # Positions need more precision than float16 has (index 2049 is not one).
    q = convert(q, np.float64 if a.dtype == np.float64 else np.float32)
    if a.dtype.kind == "c":
        raise TypeError(f"xnp.{name} does not accept complex arrays ({a.dtype})")
    _check_q(q, name)
    rows, out_shape = _rows_last(a, axis, keepdims)
    n = rows.shape[-1]
    q_flat = reshape_exact(q, (q.size,))
    ordered = lax.sort(rows, dimension=rows.ndim - 1)
    nans = lax.ne(rows, rows)
    if skip_nans:
        count = sum(lax.bitwise_not(nans), -1, dtype=dtypes.default_int())
        missing = lax.eq(count, constant_like(count, 0))
    else:
        count = lax.broadcast_in_dim(as_array(np.int32(n)), rows.shape[:-1], ())
        missing = any(nans, -1)
    k_shape = (q.size, *rows.shape[:-1])
    spread = tuple(range(1, len(k_shape)))
    last = lax.convert_element_type(lax.sub(count, constant_like(count, 1)), q.dtype)
    position = lax.mul(lax.broadcast_in_dim(q_flat, k_shape, (0,)),
                       lax.broadcast_in_dim(last, k_shape, spread))
    result = _read(ordered, position, lax.broadcast_in_dim(count, k_shape, spread), method)
    result = lax.select(lax.broadcast_in_dim(missing, k_shape, spread),
                        constant_like(result, np.nan), result)
    return reshape_exact(result, (*q.shape, *out_shape))


def _read(ordered: Array, position: Array, count: Array, method: str) -> Array:
    """The quantile values at fractional `position`s of the sorted rows."""
    top = lax.convert_element_type(lax.max(lax.sub(count, constant_like(count, 1)),
                                           constant_like(count, 0)), position.dtype)
    zero = constant_like(position, 0)
    low_pos = lax.clamp(zero, lax.floor(position), top)
    high_pos = lax.clamp(zero, lax.ceil(position), top)
    if method == "nearest":
        nearest = lax.clamp(zero, lax.round(position, "to_nearest_even"), top)
        return _pick(ordered, lax.convert_element_type(nearest, np.int32))
    low = _pick(ordered, lax.convert_element_type(low_pos, np.int32))
    if method == "lower":
        return low
    high = _pick(ordered, lax.convert_element_type(high_pos, np.int32))
    if method == "higher":
        return high
    t = lax.sub(position, lax.floor(position))
    if method == "midpoint":
        half = lax.broadcast_in_dim(constant_like(t, 0.5), t.shape, ())
        t = lax.select(lax.eq(t, zero), t, half)
    return _lerp(low, high, lax.convert_element_type(t, low.dtype))


def _check_q(q: Array, name: str) -> None:
    if isinstance(q, Tracer):
        return
    values = np.asarray(q)
    if values.size and not ((values >= 0) & (values <= 1)).all():
        raise ValueError(f"xnp.{name}: quantiles must be in [0, 1] (percentiles in [0, 100])")


def _method(method: str, interpolation) -> str:
    return interpolation if interpolation is not None else method


def quantile(a, q, axis=None, out=None, overwrite_input: bool = False, method: str = "linear",
             keepdims: bool = False, *, interpolation=None) -> Array:
    """The q-th quantiles (q in [0, 1]) over `axis`; q's shape leads the result."""
    _no_out(out, "quantile")
    return _quantile(a, q, axis, _method(method, interpolation), keepdims, False, "quantile")


def nanquantile(a, q, axis=None, out=None, overwrite_input: bool = False,
                method: str = "linear", keepdims: bool = False, *, interpolation=None) -> Array:
    """`quantile` of the non-NaN elements."""
    _no_out(out, "nanquantile")
    return _quantile(a, q, axis, _method(method, interpolation), keepdims, True, "nanquantile")


def _percent(q) -> Array:
    q = as_array(q)
    (q,) = promote_dtypes_inexact(q)
    return lax.div(q, constant_like(q, 100))


def percentile(a, q, axis=None, out=None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False, *, interpolation=None) -> Array:
    """The q-th percentiles (q in [0, 100]) over `axis`."""
    _no_out(out, "percentile")
    return _quantile(a, _percent(q), axis, _method(method, interpolation), keepdims, False,
                     "percentile")


def nanpercentile(a, q, axis=None, out=None, overwrite_input: bool = False,
                  method: str = "linear", keepdims: bool = False, *,
                  interpolation=None) -> Array:
    """`percentile` of the non-NaN elements."""
    _no_out(out, "nanpercentile")
    return _quantile(a, _percent(q), axis, _method(method, interpolation), keepdims, True,
                     "nanpercentile")


def median(a, axis=None, out=None, overwrite_input: bool = False,
           keepdims: bool = False) -> Array:
    """The median over `axis` (the midpoint of the middle pair for even counts)."""
    _no_out(out, "median")
    return _quantile(a, 0.5, axis, "midpoint", keepdims, False, "median")


def nanmedian(a, axis=None, out=None, overwrite_input: bool = False,
              keepdims: bool = False) -> Array:
    """The median of the non-NaN elements over `axis`."""
    _no_out(out, "nanmedian")
    return _quantile(a, 0.5, axis, "midpoint", keepdims, True, "nanmedian")


__all__ = ["median", "nanmedian", "nanpercentile", "nanquantile", "percentile", "quantile"]
