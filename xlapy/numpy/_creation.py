"""`xnp` array creation: from data, filled, ranges, grids and triangles.

Dtypes follow jax.numpy: Python data takes the default types and filled
arrays the default float (32-bit, or 64-bit with `xlapy.config.enable_x64`);
NumPy data keeps its dtype, canonicalized (64-bit data is 32-bit without
x64), and a `dtype=` asking for a 64-bit type without x64 is truncated with
JAX's warning. Shapes, counts and range bounds must be static (known while
tracing); fill values, and the ends of `linspace`/`logspace`/`geomspace`,
may be traced. Under `jit`, a filled or integer-range array is a scalar
broadcast or an iota, never a large constant.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence

import numpy as np

import xlapy.numpy as xnp
from xlapy.core import dtypes
from xlapy.core.errors import ConcretizationError
from xlapy.core.trace import Array, as_array, with_weak_type
from xlapy.lax import primitives as lax
from xlapy.numpy._promotion import (
    broadcast_shapes,
    broadcast_to,
    canonicalize_axis,
    convert,
    promote_dtypes,
    reshape_exact,
    result_dtype_and_weak,
    to_inexact_dtype,
)


def _shape(shape, name: str) -> tuple[int, ...]:
    """A static shape from an int or a sequence of ints."""
    try:
        if isinstance(shape, Sequence) or (isinstance(shape, np.ndarray) and shape.ndim):
            dims = tuple(operator.index(d) for d in shape)
        else:
            dims = (operator.index(shape),)
    except ConcretizationError as e:
        raise ConcretizationError(f"xnp.{name}: the shape must be static; {e}") from None
    except TypeError:
        raise TypeError(f"xnp.{name}: shape must be an int or a sequence of ints, "
                        f"got {shape!r}") from None
    if builtins.any(d < 0 for d in dims):
        raise ValueError(f"xnp.{name}: negative dimensions are not allowed, got {dims}")
    return dims


def _static(value, name: str, what: str):
    """A Python number from a static argument (a traced one is an error)."""
    if value is None:
        return None
    try:
        return np.asarray(value).item()
    except ConcretizationError:
        raise ConcretizationError(
            f"xnp.{name}: {what} must be static (a Python number or a concrete array), "
            "not a traced value, because it decides the shape of the result") from None


def _default_dtype(dtype, default, name: str) -> np.dtype:
    """`dtype` as the user asked for it (canonicalized), or the default."""
    return np.dtype(default) if dtype is None else dtypes.canonicalize_user_dtype(dtype, name)


# -- from data ----------------------------------------------------------------------------
def _holds_arrays(obj) -> bool:
    if isinstance(obj, Array):
        return True
    return isinstance(obj, (list, tuple)) and builtins.any(_holds_arrays(o) for o in obj)


def _stack_nested(obj) -> Array:
    """A nested list holding xlapy arrays, stacked like np.array would (the
    leaves promote together; Python scalars are weak)."""
    if not isinstance(obj, (list, tuple)):
        return as_array(obj)
    if not obj:
        return as_array(np.zeros((0,), dtypes.default_float()))
    parts = promote_dtypes(*[_stack_nested(o) for o in obj])
    shapes = {p.shape for p in parts}
    if len(shapes) != 1:
        raise ValueError(f"xnp.array: the nested sequence is ragged (shapes {sorted(shapes)})")
    rows = [reshape_exact(p, (1, *p.shape)) for p in parts]
    return rows[0] if len(rows) == 1 else lax.concatenate(rows, 0)


def array(object, dtype=None, copy: bool = True, order: str | None = "K",  # noqa: A002
          ndmin: int = 0) -> Array:
    """An Array from an array, a scalar or nested sequences (which may hold
    arrays, traced ones included). Python data takes the default types; a bare
    Python scalar stays weak-typed, as in JAX."""
    del copy  # xlapy arrays are immutable, so sharing one is safe; NumPy data is copied
    return _array(object, dtype, order, ndmin, "array")


def _array(object, dtype, order: str | None, ndmin: int, name: str) -> Array:  # noqa: A002
    if dtype is not None:
        dtype = dtypes.canonicalize_user_dtype(dtype, name)
    if order not in (None, "K", "A", "C"):
        raise NotImplementedError(f"xnp.array: only C order is supported, got order={order!r}")
    if isinstance(object, Array):
        out = object if dtype is None else convert(object, dtype)
    elif _holds_arrays(object):
        out = with_weak_type(_stack_nested(object), False)
        out = out if dtype is None else convert(out, dtype)
    else:
        if hasattr(object, "__jax_array__"):
            object = object.__jax_array__()
        if isinstance(object, np.ndarray):
            object = object.copy()  # the caller may mutate theirs; ours is immutable
        # Straight to `dtype` when given, so [0.1] as float64 is never rounded via f32.
        out = as_array(object) if dtype is None else as_array(object, dtype)
    if out.ndim < ndmin:
        out = reshape_exact(out, (1,) * (ndmin - out.ndim) + tuple(out.shape))
    return out


def asarray(a, dtype=None, order: str | None = None, *, copy: bool | None = None) -> Array:
    """`a` as an Array, converted to `dtype` if given (an xlapy array comes back
    as it is; NumPy data is copied, since its owner may change it)."""
    return _array(a, dtype, order, 0, "asarray")


# -- filled -------------------------------------------------------------------------------
def full(shape, fill_value, dtype=None) -> Array:
    """An array of `shape` filled with `fill_value` (a scalar or an array that
    broadcasts); its dtype is `fill_value`'s unless given, weak for a Python
    scalar."""
    shape = _shape(shape, "full")
    if dtype is not None:
        dtype = dtypes.canonicalize_user_dtype(dtype, "full")
    if dtype is None:
        dtype, weak = result_dtype_and_weak(fill_value)
        value = convert(fill_value, dtype, weak)
    else:
        value = convert(fill_value, dtype)
    if value.ndim == 0:
        return lax.broadcast_in_dim(value, shape, ())
    return broadcast_to(value, shape)


def zeros(shape, dtype=None) -> Array:
    """Zeros of `shape`, of the default float type unless `dtype` is given."""
    return full(_shape(shape, "zeros"), 0,
                _default_dtype(dtype, dtypes.default_float(), "zeros"))


def ones(shape, dtype=None) -> Array:
    """Ones of `shape`, of the default float type unless `dtype` is given."""
    return full(_shape(shape, "ones"), 1, _default_dtype(dtype, dtypes.default_float(), "ones"))


def empty(shape, dtype=None) -> Array:
    """An array of `shape` (zeros: XLA has no uninitialised memory to offer)."""
    return full(_shape(shape, "empty"), 0,
                _default_dtype(dtype, dtypes.default_float(), "empty"))


def _full_like(a, fill_value, dtype, shape, name: str) -> Array:
    """`full` with `a`'s shape and dtype (and weak type) unless given."""
    a_dtype, a_weak = dtypes.dtype_and_weak(a)
    a_shape = tuple(a.shape) if hasattr(a, "shape") else np.shape(a)
    out_shape = a_shape if shape is None else _shape(shape, name)
    out = full(out_shape, fill_value, _default_dtype(dtype, a_dtype, name))
    return with_weak_type(out, a_weak and dtype is None)


def full_like(a, fill_value, dtype=None, shape=None) -> Array:
    """`full` with `a`'s shape and dtype (and weak type) unless given."""
    return _full_like(a, fill_value, dtype, shape, "full_like")


def zeros_like(a, dtype=None, shape=None) -> Array:
    """Zeros with `a`'s shape and dtype unless given."""
    return _full_like(a, 0, dtype, shape, "zeros_like")


def ones_like(a, dtype=None, shape=None) -> Array:
    """Ones with `a`'s shape and dtype unless given."""
    return _full_like(a, 1, dtype, shape, "ones_like")


def empty_like(prototype, dtype=None, shape=None) -> Array:
    """Zeros with the prototype's shape and dtype unless given."""
    return _full_like(prototype, 0, dtype, shape, "empty_like")


# -- ranges -------------------------------------------------------------------------------
def arange(start, stop=None, step=None, dtype=None) -> Array:
    """Evenly spaced values in [start, stop), as np.arange; bounds must be
    static. Integer results are an iota (scaled and shifted), others a constant."""
    given = [v for v in (start, stop, step) if v is not None]
    start = _static(start, "arange", "start")
    stop = _static(stop, "arange", "stop")
    step = _static(step, "arange", "step")
    if stop is None and step is None:
        start, stop = 0, start
    if dtype is None:  # from the arguments as given (NumPy scalars canonicalized)
        dtype = result_dtype_and_weak(*given)[0]
    dtype = dtypes.canonicalize_user_dtype(dtype, "arange")
    step = 1 if step is None else step
    if step == 0:
        raise ValueError("xnp.arange: step must not be zero")
    size = builtins.max(0, int(np.ceil((stop - start) / step)))
    integral = builtins.all(float(v) == int(v) for v in (start, step) if not isinstance(v, complex))
    if dtypes.is_integer(dtype) or (integral and start == 0 and step == 1):
        ramp = lax.iota(dtype, size)
        if step != 1:
            ramp = lax.mul(ramp, as_array(step, dtype))
        if start != 0:
            ramp = lax.add(ramp, as_array(start, dtype))
        return ramp
    return as_array(np.arange(start, stop, step, dtype=dtype), dtype)


def _interpolate(start, stop, num: int, endpoint: bool, dtype, axis: int, name: str):
    """(samples, delta) of `num` points from start to stop along `axis`,
    computed as start * (1 - t) + stop * t so that both ends are exact."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"xnp.{name}: num must be non-negative, got {num}")
    compute = to_inexact_dtype(dtype)
    start, stop = convert(start, compute), convert(stop, compute)
    bounds = broadcast_shapes(start.shape, stop.shape)
    start, stop = broadcast_to(start, bounds), broadcast_to(stop, bounds)
    axis = canonicalize_axis(axis, len(bounds) + 1)
    out_shape = (*bounds[:axis], num, *bounds[axis:])
    others = tuple(d for d in range(len(out_shape)) if d != axis)
    first = lax.broadcast_in_dim(start, out_shape, others)
    last = lax.broadcast_in_dim(stop, out_shape, others)
    div = num - 1 if endpoint else num
    delta = lax.div(lax.sub(stop, start), as_array(div, compute)) if div > 0 \
        else convert(np.nan, compute)
    if num == 0 or (num == 1 and endpoint):
        return first, delta
    real = np.dtype(np.float32) if compute == np.complex64 else \
        np.dtype(np.float64) if compute == np.complex128 else compute
    index = lax.broadcasted_iota(real, out_shape, axis)
    t = lax.convert_element_type(lax.div(index, as_array(div, real)), compute)
    one = as_array(1, compute)
    out = lax.add(lax.mul(first, lax.sub(one, t)), lax.mul(last, t))
    if endpoint:
        is_last = lax.eq(index, as_array(num - 1, real))
        out = lax.select(is_last, last, out)
    return out, delta


def _to_result(x: Array, dtype) -> Array:
    dtype = np.dtype(dtype)
    if dtypes.is_integer(dtype) and x.dtype.kind != "c":
        x = lax.floor(x)
    return convert(x, dtype)


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype=None, axis: int = 0) -> Array | tuple[Array, Array]:
    """`num` evenly spaced samples from `start` to `stop` (arrays broadcast,
    samples along `axis`); with `retstep` also the spacing. Integer dtypes
    floor the samples."""
    dtype = _inexact_default(dtype, start, stop, "linspace")
    out, delta = _interpolate(start, stop, num, endpoint, dtype, axis, "linspace")
    out = _to_result(out, dtype)
    return (out, delta) if retstep else out


def _log_scale_dtype(dtype) -> np.dtype:
    """Log-scale samples are computed in double precision, as NumPy does, so
    that integral powers are integral before rounding to `dtype`."""
    return np.dtype(np.complex128 if np.dtype(dtype).kind == "c" else np.float64)


def _inexact_default(dtype, start, stop, name: str) -> np.dtype:
    """The dtype asked for, or the inexact type `start` and `stop` promote to."""
    if dtype is None:
        return to_inexact_dtype(result_dtype_and_weak(start, stop)[0])
    return dtypes.canonicalize_user_dtype(dtype, name)


def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None,
             axis: int = 0) -> Array:
    """`base ** linspace(start, stop)`: samples evenly spaced on a log scale."""
    return _logspace(start, stop, num, endpoint, base,
                     _inexact_default(dtype, start, stop, "logspace"), axis)


def _logspace(start, stop, num: int, endpoint: bool, base, dtype: np.dtype,
              axis: int) -> Array:
    compute = _log_scale_dtype(dtype)
    exponents, _ = _interpolate(start, stop, num, endpoint, compute, axis, "logspace")
    base = broadcast_to(convert(base, compute), exponents.shape)
    return _to_result(lax.pow(base, exponents), dtype)


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None,
              axis: int = 0) -> Array:
    """Samples evenly spaced on a log scale between `start` and `stop` (same
    sign, or a complex spiral), with both ends exact, as np.geomspace."""
    dtype = _inexact_default(dtype, start, stop, "geomspace")
    compute = _log_scale_dtype(dtype)
    start, stop = convert(start, compute), convert(stop, compute)
    bounds = broadcast_shapes(start.shape, stop.shape)
    start, stop = broadcast_to(start, bounds), broadcast_to(stop, bounds)
    # Rotate onto the positive reals (sign is -1, 1 or a complex phase), and back.
    sign = lax.sign(start)
    ln10 = convert(np.log(10), compute)
    log_start = lax.div(lax.log(lax.div(start, sign)), ln10)
    log_stop = lax.div(lax.log(lax.div(stop, sign)), ln10)
    magnitudes = _logspace(log_start, log_stop, num, endpoint, 10.0, compute, axis)
    axis = canonicalize_axis(axis, len(bounds) + 1)
    others = tuple(d for d in range(magnitudes.ndim) if d != axis)

    def spread(x: Array) -> Array:
        return lax.broadcast_in_dim(x, magnitudes.shape, others)

    samples = lax.mul(spread(sign), magnitudes)
    index = lax.broadcasted_iota(np.int32, samples.shape, axis)
    if num > 0:
        samples = lax.select(lax.eq(index, as_array(np.int32(0))), spread(start), samples)
    if num > 1 and endpoint:
        samples = lax.select(lax.eq(index, as_array(np.int32(num - 1))), spread(stop), samples)
    return _to_result(samples, dtype)


# -- matrices -----------------------------------------------------------------------------
def _diagonal_offsets(n: int, m: int) -> Array:
    """col - row for an n x m grid, as int32."""
    return lax.sub(lax.broadcasted_iota(np.int32, (n, m), 1),
                   lax.broadcasted_iota(np.int32, (n, m), 0))


def tri(N: int, M: int | None = None, k: int = 0, dtype=None) -> Array:  # noqa: N803
    """Ones at and below the k-th diagonal of an N x M matrix (float32 unless
    `dtype` is given, even with x64: jnp.tri's default)."""
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    mask = lax.le(_diagonal_offsets(n, m), as_array(np.int32(operator.index(k))))
    return lax.convert_element_type(mask, _default_dtype(dtype, dtypes.float32, "tri"))


def eye(N: int, M: int | None = None, k: int = 0, dtype=None) -> Array:  # noqa: N803
    """Ones on the k-th diagonal of an N x M matrix, zeros elsewhere."""
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    mask = lax.eq(_diagonal_offsets(n, m), as_array(np.int32(operator.index(k))))
    return lax.convert_element_type(mask, _default_dtype(dtype, dtypes.default_float(), "eye"))


def identity(n: int, dtype=None) -> Array:
    """The n x n identity matrix."""
    if dtype is not None:
        dtype = dtypes.canonicalize_user_dtype(dtype, "identity")
    return eye(n, dtype=dtype)


def _triangle(m, k: int, lower: bool, name: str) -> Array:
    m = as_array(m)
    if m.ndim < 2:
        raise ValueError(f"xnp.{name} needs an array of at least 2 dimensions, got {m.shape}")
    n_rows, n_cols = m.shape[-2:]
    offsets = _diagonal_offsets(n_rows, n_cols)
    k = as_array(np.int32(operator.index(k)))
    keep = lax.le(offsets, k) if lower else lax.ge(offsets, k)
    keep = lax.broadcast_in_dim(keep, m.shape, (m.ndim - 2, m.ndim - 1))
    zero = lax.broadcast_in_dim(convert(0, m.dtype, m.weak_type), m.shape, ())
    return lax.select(keep, m, zero)


def tril(m, k: int = 0) -> Array:
    """`m` with the elements above the k-th diagonal zeroed (last two axes)."""
    return _triangle(m, k, True, "tril")


def triu(m, k: int = 0) -> Array:
    """`m` with the elements below the k-th diagonal zeroed (last two axes)."""
    return _triangle(m, k, False, "triu")


def diag(v, k: int = 0) -> Array:
    """A 1-D `v` placed on the k-th diagonal of a square matrix, or the k-th
    diagonal of a 2-D `v`."""
    v = as_array(v)
    k = operator.index(k)
    if v.ndim == 2:
        return _diagonal_of(v, k)
    if v.ndim != 1:
        raise ValueError(f"xnp.diag needs a 1-D or 2-D array, got shape {v.shape}")
    n = v.shape[0] + builtins.abs(k)
    padded = lax.pad(v, convert(0, v.dtype, v.weak_type), [(0, builtins.abs(k), 0)])
    # Row r holds v[r] when k >= 0 (column r + k); column c holds v[c] when k < 0.
    spread = lax.broadcast_in_dim(padded, (n, n), (0,) if k >= 0 else (1,))
    on_diagonal = lax.eq(_diagonal_offsets(n, n), as_array(np.int32(k)))
    zero = lax.broadcast_in_dim(convert(0, v.dtype, v.weak_type), (n, n), ())
    return lax.select(on_diagonal, spread, zero)


def _diagonal_of(v: Array, k: int) -> Array:
    if hasattr(xnp, "diagonal"):
        return xnp.diagonal(v, offset=k)
    # Without the shapes module's gather-based diagonal: mask, sum along rows, slice.
    n, m = v.shape
    on_diagonal = lax.eq(_diagonal_offsets(n, m), as_array(np.int32(k)))
    zero = lax.broadcast_in_dim(convert(0, v.dtype, v.weak_type), (n, m), ())
    masked = lax.select(on_diagonal, v, zero)
    if k >= 0:
        length = builtins.max(0, builtins.min(n, m - k))
        return lax.slice(lax.reduce_sum(masked, (1,)), (0,), (length,))
    length = builtins.max(0, builtins.min(m, n + k))
    return lax.slice(lax.reduce_sum(masked, (0,)), (0,), (length,))


def diagflat(v, k: int = 0) -> Array:
    """The flattened `v` placed on the k-th diagonal of a square matrix."""
    v = as_array(v)
    return diag(reshape_exact(v, (v.size,)), k)


# -- grids --------------------------------------------------------------------------------
def meshgrid(*xi, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> list[Array]:
    """Coordinate arrays from 1-D coordinate vectors; 'xy' (Cartesian) swaps
    the first two output axes, 'ij' (matrix) does not."""
    del copy
    if indexing not in ("xy", "ij"):
        raise ValueError(f"xnp.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    arrays = [as_array(x) for x in xi]
    arrays = [reshape_exact(a, (a.size,)) for a in arrays]
    sizes = [a.shape[0] for a in arrays]
    axes = list(range(len(arrays)))
    if indexing == "xy" and len(arrays) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
        axes[0], axes[1] = 1, 0
    out = []
    for a, axis in zip(arrays, axes):
        if sparse:
            shape = tuple(a.shape[0] if d == axis else 1 for d in range(len(arrays)))
            out.append(reshape_exact(a, shape))
        else:
            out.append(lax.broadcast_in_dim(a, tuple(sizes), (axis,)))
    return out


def indices(dimensions, dtype=None, sparse: bool = False) -> Array | tuple[Array, ...]:
    """Index grids of `dimensions`: one array per axis counting along it,
    stacked (shape (len(dimensions), *dimensions)) or sparse (a tuple)."""
    dims = _shape(dimensions, "indices")
    dtype = _default_dtype(dtype, dtypes.default_int(), "indices")
    if sparse:
        return tuple(reshape_exact(lax.iota(dtype, n),
                                   tuple(n if d == i else 1 for d in range(len(dims))))
                     for i, n in enumerate(dims))
    grids = [reshape_exact(lax.broadcasted_iota(dtype, dims, i), (1, *dims))
             for i in range(len(dims))]
    if not grids:
        return as_array(np.zeros((0,), dtype), dtype)
    return grids[0] if len(grids) == 1 else lax.concatenate(grids, 0)


__all__ = [
    "arange", "array", "asarray", "diag", "diagflat", "empty", "empty_like", "eye", "full",
    "full_like", "geomspace", "identity", "indices", "linspace", "logspace", "meshgrid", "ones",
    "ones_like", "tri", "tril", "triu", "zeros", "zeros_like",
]
