"""`xnp`'s NaN-ignoring reductions: nansum, nanprod, nanmax, nanmin,
nanmean, nanvar, nanstd, nanargmax, nanargmin.

NaNs are replaced by the reduction's identity before reducing (so the
shapes stay static under `jit`); where every element is NaN the extrema and
moments are NaN and the arg-extrema -1, as in jax.numpy (NumPy warns or
raises there). Integer and bool data have no NaNs and reduce as usual.
"""

from __future__ import annotations

import numpy as np

from xlapy.core import dtypes
from xlapy.core.trace import Array, as_array
from xlapy.lax import primitives as lax
from xlapy.lax.reductions import max_identity, min_identity
from xlapy.numpy._promotion import broadcast_to, constant_like, convert, to_inexact_dtype
from xlapy.numpy._reductions import (
    _as_mask,
    _no_out,
    _squared_magnitude,
    _upcast_f16,
    _var_dtypes,
    all,
    argmax,
    argmin,
    max,
    mean,
    min,
    prod,
    sum,
)


def _has_nans(x: Array) -> bool:
    return dtypes.is_float(x.dtype) or x.dtype.kind == "c"


def _replace_nans(x: Array, value) -> Array:
    return lax.select(lax.ne(x, x), constant_like(x, value), x)


def nansum(a, axis=None, dtype=None, out=None, keepdims: bool = False, initial=None,
           where=None) -> Array:
    """Sum over `axis` treating NaNs as zero."""
    a = as_array(a)
    a = _replace_nans(a, 0) if _has_nans(a) else a
    return sum(a, axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims: bool = False, initial=None,
            where=None) -> Array:
    """Product over `axis` treating NaNs as one."""
    a = as_array(a)
    a = _replace_nans(a, 1) if _has_nans(a) else a
    return prod(a, axis, dtype, out, keepdims, initial, where)


def _nan_extremum(a, axis, out, keepdims, initial, where, is_max: bool) -> Array:
    reduce = max if is_max else min
    a = as_array(a)
    if not dtypes.is_float(a.dtype):
        return reduce(a, axis, out, keepdims, initial, where)
    nans = lax.ne(a, a)
    fill = max_identity(a.dtype) if is_max else min_identity(a.dtype)
    result = reduce(_replace_nans(a, fill), axis, out, keepdims, initial, where)
    if initial is not None:
        return result
    all_nan = all(nans, axis, keepdims=keepdims, where=where)
    return lax.select(all_nan, constant_like(result, np.nan), result)


def nanmax(a, axis=None, out=None, keepdims: bool = False, initial=None, where=None) -> Array:
    """Maximum over `axis` ignoring NaNs (NaN where all are NaN)."""
    return _nan_extremum(a, axis, out, keepdims, initial, where, True)


def nanmin(a, axis=None, out=None, keepdims: bool = False, initial=None, where=None) -> Array:
    """Minimum over `axis` ignoring NaNs (NaN where all are NaN)."""
    return _nan_extremum(a, axis, out, keepdims, initial, where, False)


def _present(a: Array, where) -> Array:
    """True for the elements a NaN-ignoring reduction counts."""
    present = lax.eq(a, a)
    return present if where is None else lax.bitwise_and(present, _as_mask(where, a.shape))


def nanmean(a, axis=None, dtype=None, out=None, keepdims: bool = False, where=None) -> Array:
    """Mean over `axis` of the non-NaN elements (NaN where there are none)."""
    _no_out(out, "nanmean")
    a = as_array(a)
    if not _has_nans(a):
        return mean(a, axis, dtype, keepdims=keepdims, where=where)
    result = dtypes.canonicalize_user_dtype(dtype, "nanmean") if dtype is not None else \
        to_inexact_dtype(a.dtype)
    total = sum(_replace_nans(a, 0), axis, dtype=_upcast_f16(result), keepdims=keepdims,
                where=where)
    count = sum(_present(a, where), axis, dtype=dtypes.default_int(), keepdims=keepdims)
    return convert(lax.div(total, convert(count, total.dtype)), result)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims: bool = False,
           where=None) -> Array:
    """Variance over `axis` of the non-NaN elements, divided by count - ddof
    (NaN where that is not positive)."""
    _no_out(out, "nanvar")
    a = as_array(a)
    compute, result = _var_dtypes(a.dtype, dtype, "nanvar")
    a = convert(a, compute)
    center = nanmean(a, axis, dtype=compute, keepdims=True, where=where)
    centered = lax.sub(a, broadcast_to(center, a.shape))
    squares = _replace_nans(_squared_magnitude(centered), 0)
    total = sum(squares, axis, keepdims=keepdims, where=where)
    count = sum(_present(a, where), axis, dtype=dtypes.default_int(), keepdims=keepdims)
    normalizer = lax.sub(convert(count, total.dtype), convert(ddof, total.dtype))
    positive = lax.gt(normalizer, constant_like(normalizer, 0))
    quotient = lax.div(total, lax.select(positive, normalizer, constant_like(normalizer, 1)))
    return convert(lax.select(positive, quotient, constant_like(quotient, np.nan)), result)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims: bool = False,
           where=None) -> Array:
    """Standard deviation over `axis` of the non-NaN elements."""
    _no_out(out, "nanstd")
    a = as_array(a)
    compute, result = _var_dtypes(a.dtype, dtype, "nanstd")
    variance = nanvar(a, axis, dtype=compute, ddof=ddof, keepdims=keepdims, where=where)
    return convert(lax.sqrt(variance), result)


def _nan_arg(a, axis, out, keepdims, is_max: bool) -> Array:
    arg = argmax if is_max else argmin
    a = as_array(a)
    if not dtypes.is_float(a.dtype):
        return arg(a, axis, out, keepdims)
    nans = lax.ne(a, a)
    fill = max_identity(a.dtype) if is_max else min_identity(a.dtype)
    index = arg(_replace_nans(a, fill), axis, out, keepdims)
    all_nan = all(nans, axis, keepdims=bool(keepdims))
    return lax.select(all_nan, constant_like(index, -1), index)


def nanargmax(a, axis=None, out=None, keepdims: bool | None = None) -> Array:
    """Index of the first maximum ignoring NaNs (-1 where all are NaN)."""
    return _nan_arg(a, axis, out, keepdims, True)


def nanargmin(a, axis=None, out=None, keepdims: bool | None = None) -> Array:
    """Index of the first minimum ignoring NaNs (-1 where all are NaN)."""
    return _nan_arg(a, axis, out, keepdims, False)


__all__ = ["nanargmax", "nanargmin", "nanmax", "nanmean", "nanmin", "nanprod", "nanstd",
           "nansum", "nanvar"]
