"""`xnp` reductions: sums, products, extrema, truth tests, moments and
their NaN-ignoring forms, arg-extrema.

Every reduction takes `axis` (None, an int or a tuple; negative counts from
the end) and `keepdims`; those with an identity take `where=` (masked
elements count as the identity) and `initial=`. Result dtypes follow
jax.numpy: sums and products of small integers widen to int32/uint32 and
of bools to int32; means and moments of integers are float32; float16 and
bfloat16 moments are computed in float32 and rounded back. Results are
never weak-typed.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable

import numpy as np

from xlapy.core import dtypes
from xlapy.core.trace import Array, as_array, with_weak_type
from xlapy.lax import primitives as lax
from xlapy.lax.reductions import max_identity, min_identity
from xlapy.numpy._promotion import (
    broadcast_to,
    canonicalize_axes,
    canonicalize_axis,
    constant_like,
    convert,
    promote_dtypes_inexact,
    real_dtype,
    reshape_exact,
    to_inexact_dtype,
)
from xlapy.numpy._ufuncs import greater, less


def _no_out(out, name: str) -> None:
    if out is not None:
        raise NotImplementedError(f"xnp.{name}: out= is not supported (arrays are immutable)")


def _keep_dims(x: Array, shape: tuple[int, ...], axes: tuple[int, ...]) -> Array:
    kept = tuple(1 if d in axes else n for d, n in enumerate(shape))
    return reshape_exact(x, kept)


def _as_mask(where, shape: tuple[int, ...]) -> Array:
    mask = as_array(where)
    if mask.dtype != np.bool_:
        mask = lax.ne(mask, constant_like(mask, 0))
    return broadcast_to(mask, shape)


def _reduce(a: Array, axis, keepdims: bool, where, initial, *, name: str,
            reducer: Callable, identity, combine: Callable | None) -> Array:
    """`reducer(a, axes)` with masked elements set to `identity` (None: the
    reduction has none, so `where` needs `initial` and empty axes are an
    error), `initial` folded in with `combine`, and `keepdims` applied."""
    axes = canonicalize_axes(axis, a.ndim)
    if identity is None and initial is None:
        if where is not None:
            raise ValueError(f"xnp.{name} has no identity, so where= needs initial=")
        if builtins.any(a.shape[d] == 0 for d in axes):
            raise ValueError(f"zero-size array to reduction operation {name} which has no "
                             "identity; pass initial=")
    if where is not None:
        fill = identity if identity is not None else _extreme_identity(name, a.dtype)
        a = lax.select(_as_mask(where, a.shape), a, constant_like(a, fill))
    out = reducer(a, axes)
    if initial is not None:
        out = combine(out, convert(initial, out.dtype, True))
    out = with_weak_type(out, False)
    return _keep_dims(out, a.shape, axes) if keepdims else out


def _extreme_identity(name: str, dtype):
    is_max = name in ("max", "amax")
    if np.dtype(dtype).kind == "c":
        return complex(-np.inf, -np.inf) if is_max else complex(np.inf, np.inf)
    return max_identity(dtype) if is_max else min_identity(dtype)


def _sum_dtype(dtype, given, promote_integers: bool, name: str) -> np.dtype:
    """jnp.sum's accumulation dtype: `given` (canonicalized), or bools and
    integers narrower than the default int widen to it (unsigned ones to the
    unsigned default) unless `promote_integers` is False."""
    if given is not None:
        return dtypes.canonicalize_user_dtype(given, name)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return dtypes.default_int()
    if promote_integers and dtype.kind in "iu":
        default = dtypes.default_uint() if dtype.kind == "u" else dtypes.default_int()
        return default if dtype.itemsize < default.itemsize else dtype
    return dtype


# -- sums and products --------------------------------------------------------------------
def sum(a, axis=None, dtype=None, out=None, keepdims: bool = False, initial=None,  # noqa: A001
        where=None, promote_integers: bool = True) -> Array:
    """Sum over `axis` (all axes when None)."""
    _no_out(out, "sum")
    a = as_array(a)
    a = convert(a, _sum_dtype(a.dtype, dtype, promote_integers, "sum"))
    if a.dtype == np.bool_:
        raise TypeError("xnp.sum: dtype=bool is not supported; use xnp.any")
    return _reduce(a, axis, keepdims, where, initial, name="sum", reducer=lax.reduce_sum,
                   identity=0, combine=lax.add)


def prod(a, axis=None, dtype=None, out=None, keepdims: bool = False, initial=None,
         where=None, promote_integers: bool = True) -> Array:
    """Product over `axis` (all axes when None)."""
    _no_out(out, "prod")
    a = as_array(a)
    a = convert(a, _sum_dtype(a.dtype, dtype, promote_integers, "prod"))
    if a.dtype == np.bool_:
        raise TypeError("xnp.prod: dtype=bool is not supported; use xnp.all")
    return _reduce(a, axis, keepdims, where, initial, name="prod", reducer=lax.reduce_prod,
                   identity=1, combine=lax.mul)


# -- extrema ------------------------------------------------------------------------------
def _complex_max(x, y):
    return lax.select(greater(x, y), x, y)


def _complex_min(x, y):
    return lax.select(less(x, y), x, y)


def _complex_reducer(pick: Callable, fill: complex) -> Callable:
    """reduce over axes by a lexicographic pick (HLO's max is real-only)."""
    def reducer(a: Array, axes: tuple[int, ...]) -> Array:
        return lax.reduce(a, constant_like(a, fill), pick, axes)

    return reducer


def _extremum(a, axis, out, keepdims, initial, where, name: str) -> Array:
    _no_out(out, name)
    a = as_array(a)
    is_max = name in ("max", "amax")
    if a.dtype.kind == "c":  # NumPy's order: real part, then imaginary part
        fill = complex(-np.inf, -np.inf) if is_max else complex(np.inf, np.inf)
        pick = _complex_max if is_max else _complex_min
        reducer, combine = _complex_reducer(pick, fill), pick
    else:
        reducer = lax.reduce_max if is_max else lax.reduce_min
        combine = lax.max if is_max else lax.min
    return _reduce(a, axis, keepdims, where, initial, name=name, reducer=reducer, identity=None,
                   combine=combine)


def max(a, axis=None, out=None, keepdims: bool = False, initial=None,  # noqa: A001
        where=None) -> Array:
    """Maximum over `axis`; NaN if any element is NaN."""
    return _extremum(a, axis, out, keepdims, initial, where, "max")


def min(a, axis=None, out=None, keepdims: bool = False, initial=None,  # noqa: A001
        where=None) -> Array:
    """Minimum over `axis`; NaN if any element is NaN."""
    return _extremum(a, axis, out, keepdims, initial, where, "min")


amax, amin = max, min


def ptp(a, axis=None, out=None, keepdims: bool = False) -> Array:
    """Peak to peak: max - min over `axis`."""
    _no_out(out, "ptp")
    high = max(a, axis, keepdims=keepdims)
    low = min(a, axis, keepdims=keepdims)
    return lax.sub(high, low)


# -- truth --------------------------------------------------------------------------------
def _truth(a, axis, out, keepdims, where, name: str) -> Array:
    _no_out(out, name)
    a = as_array(a)
    if a.dtype != np.bool_:
        a = lax.ne(a, constant_like(a, 0))
    is_all = name == "all"
    return _reduce(a, axis, keepdims, where, None, name=name,
                   reducer=lax.reduce_and if is_all else lax.reduce_or,
                   identity=is_all, combine=None)


def all(a, axis=None, out=None, keepdims: bool = False, *, where=None) -> Array:  # noqa: A001
    """Whether every element over `axis` is nonzero."""
    return _truth(a, axis, out, keepdims, where, "all")


def any(a, axis=None, out=None, keepdims: bool = False, *, where=None) -> Array:  # noqa: A001
    """Whether some element over `axis` is nonzero."""
    return _truth(a, axis, out, keepdims, where, "any")


def count_nonzero(a, axis=None, keepdims: bool = False) -> Array:
    """The number of nonzero elements over `axis`, as the default int."""
    a = as_array(a)
    nonzero = a if a.dtype == np.bool_ else lax.ne(a, constant_like(a, 0))
    return sum(nonzero, axis, dtype=dtypes.default_int(), keepdims=keepdims)


# -- moments ------------------------------------------------------------------------------
def _upcast_f16(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    return dtypes.float32 if dtype in (dtypes.float16, dtypes.bfloat16) else dtype


def _count(a: Array, axis, keepdims: bool, where) -> Array | int:
    """How many elements each reduction sees: a static int, or per-result
    counts of the `where` mask."""
    axes = canonicalize_axes(axis, a.ndim)
    if where is None:
        return math.prod(a.shape[d] for d in axes)
    return sum(_as_mask(where, a.shape), axis, dtype=dtypes.default_int(), keepdims=keepdims)


def _divide(total: Array, count) -> Array:
    return lax.div(total, convert(count, total.dtype))


def mean(a, axis=None, dtype=None, out=None, keepdims: bool = False, *, where=None) -> Array:
    """Arithmetic mean over `axis` (integers of up to 32 bits give float32, as
    in JAX whatever the x64 mode; f16 sums in f32)."""
    _no_out(out, "mean")
    a = as_array(a)
    result = to_inexact_dtype(a.dtype) if dtype is None else \
        dtypes.canonicalize_user_dtype(dtype, "mean")
    total = sum(a, axis, dtype=_upcast_f16(result), keepdims=keepdims, where=where)
    return convert(_divide(total, _count(a, axis, keepdims, where)), result)


def _var_dtypes(a_dtype, dtype, name: str = "var") -> tuple[np.dtype, np.dtype]:
    """(computation dtype, result dtype) of var/std, as jnp: complex data has
    a real variance, integers that of `to_inexact_dtype`."""
    if dtype is not None:
        dtype = dtypes.canonicalize_user_dtype(dtype, name)
        if dtype.kind != "c" and np.dtype(a_dtype).kind == "c":
            raise ValueError("xnp.var: a real dtype= for complex data is not supported")
        return _upcast_f16(dtype), dtype
    if not dtypes.is_float(a_dtype) and np.dtype(a_dtype).kind != "c":
        return to_inexact_dtype(a_dtype), to_inexact_dtype(a_dtype)
    return _upcast_f16(a_dtype), real_dtype(a_dtype)


def _squared_magnitude(x: Array) -> Array:
    if x.dtype.kind == "c":
        return lax.real(lax.mul(x, lax.complex(lax.real(x), lax.neg(lax.imag(x)))))
    return lax.mul(x, x)


def _ddof(ddof, correction, name: str):
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError(f"xnp.{name}: ddof and correction cannot both be given")
    return correction


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims: bool = False, *, where=None,
        correction=None) -> Array:
    """Variance over `axis`: mean squared deviation, divided by N - ddof."""
    _no_out(out, "var")
    ddof = _ddof(ddof, correction, "var")
    a = as_array(a)
    compute, result = _var_dtypes(a.dtype, dtype, "var")
    a = convert(a, compute)
    center = mean(a, axis, dtype=compute, keepdims=True, where=where)
    centered = lax.sub(a, broadcast_to(center, a.shape))
    total = sum(_squared_magnitude(centered), axis, keepdims=keepdims, where=where)
    count = _count(a, axis, keepdims, where)
    if isinstance(count, int):
        normalizer = convert(float(builtins.max(count - ddof, 0)), total.dtype)
    else:
        normalizer = lax.max(lax.sub(convert(count, total.dtype), convert(ddof, total.dtype)),
                             constant_like(total, 0))
    return convert(lax.div(total, normalizer), result)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims: bool = False, *, where=None,
        correction=None) -> Array:
    """Standard deviation over `axis`: sqrt of `var`."""
    _no_out(out, "std")
    ddof = _ddof(ddof, correction, "std")
    a = as_array(a)
    compute, result = _var_dtypes(a.dtype, dtype, "std")
    variance = var(a, axis, dtype=compute, ddof=ddof, keepdims=keepdims, where=where)
    return convert(lax.sqrt(variance), result)


def average(a, axis=None, weights=None, returned: bool = False,
            keepdims: bool = False) -> Array | tuple[Array, Array]:
    """The weighted mean over `axis`; with `returned`, also the sum of weights
    (broadcast to the result's shape). 1-D weights apply along an int axis."""
    a = as_array(a)
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        scale = convert(_count(a, axis, keepdims, None), avg.dtype)
    else:
        a, w = promote_dtypes_inexact(a, weights)
        if a.shape != w.shape:
            w = _weights_along(a, w, axis)
        scale = sum(w, axis, keepdims=keepdims)
        avg = lax.div(sum(lax.mul(a, w), axis, keepdims=keepdims), scale)
    if not returned:
        return avg
    return avg, broadcast_to(with_weak_type(scale, False), avg.shape)


def _weights_along(a: Array, w: Array, axis) -> Array:
    if axis is None:
        raise ValueError("xnp.average: axis must be given when a and weights differ in shape")
    if w.ndim != 1 or not isinstance(axis, (int, np.integer)):
        raise ValueError("xnp.average: weights of another shape than a must be 1-D, "
                         "with an int axis")
    axis = canonicalize_axis(axis, a.ndim)
    if w.shape[0] != a.shape[axis]:
        raise ValueError(f"xnp.average: {w.shape[0]} weights for axis {axis} of length "
                         f"{a.shape[axis]}")
    return lax.broadcast_in_dim(w, a.shape, (axis,))


# -- arg-extrema --------------------------------------------------------------------------
def _arg(a, axis, out, keepdims, name: str, lax_fn: Callable) -> Array:
    _no_out(out, name)
    a = as_array(a)
    if axis is None:
        a, axis, shape = reshape_exact(a, (a.size,)), 0, tuple(a.shape)
        axes = tuple(range(len(shape)))
    else:
        axis = canonicalize_axis(axis, a.ndim)
        shape, axes = tuple(a.shape), (axis,)
    if a.shape[axis] == 0:
        raise ValueError(f"xnp.{name}: attempt to get {name} of an empty sequence")
    result = lax_fn(a, axis, dtypes.default_int())
    return _keep_dims(result, shape, axes) if keepdims else result


def argmax(a, axis=None, out=None, keepdims: bool | None = None) -> Array:
    """Index of the first maximum along `axis` (of the flattened array when
    None); a NaN counts as the maximum."""
    return _arg(a, axis, out, bool(keepdims), "argmax", lax.argmax)


def argmin(a, axis=None, out=None, keepdims: bool | None = None) -> Array:
    """Index of the first minimum along `axis` (of the flattened array when
    None); a NaN counts as the minimum."""
    return _arg(a, axis, out, bool(keepdims), "argmin", lax.argmin)


__all__ = ["all", "amax", "amin", "any", "argmax", "argmin", "average", "count_nonzero", "max",
           "mean", "min", "prod", "ptp", "std", "sum", "var"]

# The NaN-ignoring forms and the order statistics live in sibling modules.
from xlapy.numpy._nan_reductions import *  # noqa: E402, F403
from xlapy.numpy._nan_reductions import __all__ as _nan_all  # noqa: E402
from xlapy.numpy._quantiles import *  # noqa: E402, F403
from xlapy.numpy._quantiles import __all__ as _quantile_all  # noqa: E402

__all__ += _nan_all + _quantile_all
