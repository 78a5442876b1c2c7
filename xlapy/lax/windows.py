"""`xlapy.lax` windowed reductions: `reduce_window` (variadic) and its monoid
helpers, `select_and_scatter_add` (the max-pool gradient), and the
cumulative reductions `cumsum`, `cumprod`, `cummax`, `cummin`, `cumlogsumexp`.

The cumulative reductions lower, as JAX does for XLA's CPU path, to one
reduce-window whose window spans the whole axis with n-1 elements of padding
in front (behind, for `reverse`): output i folds elements 0..i, so integer
results are exact and no scan loop is needed. Eagerly and under jit alike
this one op runs; the interpreter evaluates such a window as a running scan.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from xlapy.core import dtypes
from xlapy.core.trace import Array, as_array, bind, with_weak_type
from xlapy.hlo.attributes import Window, WindowDimension
from xlapy.hlo.opcode import Opcode
from xlapy.lax import elementwise as ew
from xlapy.lax.reductions import (
    canonicalize_axes,
    flat_operands,
    max_identity,
    min_identity,
    reducer_for,
    scalar_computation,
    unflatten_results,
)

Padding = str | Sequence[tuple[int, int]]

# -- windows ------------------------------------------------------------------------------


def _ints(values, rank: int, what: str, name: str, default: int = 1) -> tuple[int, ...]:
    if values is None:
        return (default,) * rank
    values = tuple(int(v) for v in values)
    if len(values) != rank:
        raise ValueError(f"{name}: {what} has {len(values)} entries but the operand has "
                         f"rank {rank}")
    return values


def _pads(in_shape, window_shape, strides, padding: Padding, name: str):
    """(lo, hi) per dimension from 'VALID', 'SAME', 'SAME_LOWER' or explicit pairs.

    SAME pads so that the output has ceil(in / stride) elements, the odd
    element of padding going high (low for SAME_LOWER), as jax.lax.padtype_to_pads.
    """
    rank = len(in_shape)
    if isinstance(padding, str):
        kind = padding.upper()
        if kind == "VALID":
            return ((0, 0),) * rank
        if kind not in ("SAME", "SAME_LOWER"):
            raise ValueError(f"{name}: unknown padding {padding!r}; expected 'VALID', 'SAME', "
                             "'SAME_LOWER' or (low, high) pairs")
        pads = []
        for size, window, stride in zip(in_shape, window_shape, strides):
            out = -(-size // stride)
            total = max((out - 1) * stride + window - size, 0)
            small, large = total // 2, total - total // 2
            pads.append((small, large) if kind == "SAME" else (large, small))
        return tuple(pads)
    try:
        pairs = tuple((int(lo), int(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: padding must be a string or (low, high) pairs, "
                         f"got {padding!r}") from None
    if len(pairs) != rank:
        raise ValueError(f"{name}: padding has {len(pairs)} pairs but the operand has "
                         f"rank {rank}")
    return pairs


def make_window(in_shape, window_dimensions, window_strides, padding: Padding,
                base_dilation, window_dilation, name: str) -> Window:
    """XLA's Window for a window over an operand of `in_shape` (JAX's arguments)."""
    rank = len(in_shape)
    sizes = _ints(window_dimensions, rank, "window_dimensions", name)
    strides = _ints(window_strides, rank, "window_strides", name)
    base = _ints(base_dilation, rank, "base_dilation", name)
    dilation = _ints(window_dilation, rank, "window_dilation", name)
    dilated = [(w - 1) * d + 1 for w, d in zip(sizes, dilation)]
    pads = _pads(in_shape, dilated, strides, padding, name)
    return Window(tuple(WindowDimension(w, s, lo, hi, d, b) for w, s, (lo, hi), d, b
                        in zip(sizes, strides, pads, dilation, base)))


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None) -> tuple[int, ...]:
    """The output dimensions of a reduce-window over `operand_shape`."""
    window = make_window(operand_shape, window_dimensions, window_strides, padding,
                         base_dilation, window_dilation, "reduce_window_shape_tuple")
    out = []
    for size, w in zip(operand_shape, window.dimensions):
        base = 0 if size == 0 else (size - 1) * w.base_dilation + 1
        padded = base + w.padding_low + w.padding_high
        span = (w.size - 1) * w.window_dilation + 1
        out.append(0 if span > padded else (padded - span) // w.stride + 1)
    return tuple(out)


# -- reduce-window ------------------------------------------------------------------------

def reduce_window(operand, init_value, computation: Callable, window_dimensions,
                  window_strides=None, padding: Padding = "VALID", base_dilation=None,
                  window_dilation=None):
    """XLA's ReduceWindow: fold `computation` over each window placement.

    `operand` is an array or a pytree of same-shaped arrays (variadic);
    `computation(accs, xs)` works on pytrees of scalars of that structure and
    `init_value` holds one scalar per operand. Padding and base-dilation holes
    contribute nothing (the init value stands in for them).
    """
    ops, inits, tree = flat_operands(operand, init_value, "reduce_window")
    window = make_window(ops[0].shape, window_dimensions, window_strides, padding,
                         base_dilation, window_dilation, "reduce_window")
    reducer = reducer_for(computation, tree, [op.dtype for op in ops], "reduce_window")
    result = bind(Opcode.REDUCE_WINDOW, [*ops, *inits], {"window": window, "to_apply": reducer},
                  name="reduce_window")
    return unflatten_results(result, ops, inits, tree)


def _monoid_window(operand, op: Callable, identity: Callable, name: str, window_dimensions,
                   window_strides, padding, base_dilation, window_dilation) -> Array:
    x = as_array(operand)
    dtype = np.dtype(x.dtype)
    window = make_window(x.shape, window_dimensions, window_strides, padding, base_dilation,
                         window_dilation, name)
    init = as_array(identity(dtype), dtype)
    reducer = scalar_computation(op, [dtype] * 2, [dtype], name, tuple_root=False)
    return bind(Opcode.REDUCE_WINDOW, [x, init], {"window": window, "to_apply": reducer},
                weak_type=x.weak_type, name=name)


def reduce_window_sum(operand, window_dimensions, window_strides=None,
                      padding: Padding = "VALID", base_dilation=None,
                      window_dilation=None) -> Array:
    """Sum over each window (sum pooling); JAX's internal `_reduce_window_sum`."""
    _check_number(operand, "reduce_window_sum")
    return _monoid_window(operand, ew.add, lambda d: 0, "reduce_window_sum", window_dimensions,
                          window_strides, padding, base_dilation, window_dilation)


def reduce_window_prod(operand, window_dimensions, window_strides=None,
                       padding: Padding = "VALID", base_dilation=None,
                       window_dilation=None) -> Array:
    """Product over each window; JAX's internal `_reduce_window_prod`."""
    _check_number(operand, "reduce_window_prod")
    return _monoid_window(operand, ew.mul, lambda d: 1, "reduce_window_prod", window_dimensions,
                          window_strides, padding, base_dilation, window_dilation)


def reduce_window_max(operand, window_dimensions, window_strides=None,
                      padding: Padding = "VALID", base_dilation=None,
                      window_dilation=None) -> Array:
    """Maximum over each window (max pooling; padding never wins)."""
    return _monoid_window(operand, ew.max, max_identity, "reduce_window_max", window_dimensions,
                          window_strides, padding, base_dilation, window_dilation)


def reduce_window_min(operand, window_dimensions, window_strides=None,
                      padding: Padding = "VALID", base_dilation=None,
                      window_dilation=None) -> Array:
    """Minimum over each window (padding never wins)."""
    return _monoid_window(operand, ew.min, min_identity, "reduce_window_min", window_dimensions,
                          window_strides, padding, base_dilation, window_dilation)


def _check_number(operand, name: str) -> None:
    x = as_array(operand)
    if np.dtype(x.dtype) == np.bool_:
        raise TypeError(f"{name} does not accept dtype bool; accepted dtypes are numbers")


# -- select-and-scatter -------------------------------------------------------------------

def select_and_scatter(operand, select: Callable, window_dimensions, window_strides,
                       padding: Padding, source, init_value, scatter: Callable) -> Array:
    """XLA's SelectAndScatter: in each window of `operand`, `select(a, b)` (true
    keeps a) picks one element; the window's `source` value is combined with
    `scatter` into the output at that element, which starts as `init_value`."""
    operand, source = as_array(operand), as_array(source)
    dtype = np.dtype(operand.dtype)
    if np.dtype(source.dtype) != dtype:
        raise TypeError(f"select_and_scatter: source has dtype {source.dtype} but the operand "
                        f"has {dtype}; they must match")
    init = as_array(init_value)
    init = init if np.dtype(init.dtype) == dtype else ew.convert_element_type(init, dtype)
    window = make_window(operand.shape, window_dimensions, window_strides, padding, None, None,
                         "select_and_scatter")
    select_fn = scalar_computation(select, [dtype] * 2, [np.bool_], "select",
                                   tuple_root=False)
    scatter_fn = scalar_computation(scatter, [dtype] * 2, [dtype], "scatter", tuple_root=False)
    return bind(Opcode.SELECT_AND_SCATTER, [operand, source, init],
                {"window": window, "select": select_fn, "scatter": scatter_fn},
                weak_type=source.weak_type, name="select_and_scatter")


def select_and_scatter_add(source, operand, select_prim: Callable, window_dimensions,
                           window_strides, padding: Padding) -> Array:
    """Add each `source` value onto the element of its window of `operand` that
    `select_prim` picks (lax.ge: the first maximum, the max-pool gradient;
    lax.le: the first minimum). Elements picked by no window get 0."""
    operand = as_array(operand)
    dtype = np.dtype(operand.dtype)
    scatter = ew.bitwise_or if dtype == np.bool_ else ew.add
    zero = np.zeros((), dtype=dtype)
    return select_and_scatter(operand, select_prim, window_dimensions, window_strides, padding,
                              source, zero, scatter)


# -- cumulative reductions ----------------------------------------------------------------

def _cumulative(operand, axis: int, reverse: bool, window_reduce: Callable, name: str,
                accepts: Callable[[np.dtype], bool] = lambda d: d != np.bool_) -> Array:
    x = as_array(operand)
    dtype = np.dtype(x.dtype)
    if not accepts(dtype):
        raise TypeError(f"{name} does not accept dtype {dtype.name}")
    (axis,) = canonicalize_axes((axis,), x.ndim, name)
    n = x.shape[axis]
    if n == 0:
        return x
    sizes = [1] * x.ndim
    sizes[axis] = n
    padding = [(0, 0)] * x.ndim
    padding[axis] = (0, n - 1) if reverse else (n - 1, 0)
    return window_reduce(x, sizes, [1] * x.ndim, padding)


def cumsum(operand, axis: int = 0, reverse: bool = False) -> Array:
    """Running sum along `axis` (from the end with `reverse`)."""
    return _cumulative(operand, axis, reverse, reduce_window_sum, "cumsum")


def cumprod(operand, axis: int = 0, reverse: bool = False) -> Array:
    """Running product along `axis` (from the end with `reverse`)."""
    return _cumulative(operand, axis, reverse, reduce_window_prod, "cumprod")


def cummax(operand, axis: int = 0, reverse: bool = False) -> Array:
    """Running maximum along `axis` (NaN propagates onward)."""
    return _cumulative(operand, axis, reverse, reduce_window_max, "cummax")


def cummin(operand, axis: int = 0, reverse: bool = False) -> Array:
    """Running minimum along `axis` (NaN propagates onward)."""
    return _cumulative(operand, axis, reverse, reduce_window_min, "cummin")


def _logaddexp(a, b):
    """log(exp(a) + exp(b)) without overflow; equal infinities and NaNs give a + b."""
    delta = ew.sub(a, b)
    stable = ew.add(ew.max(a, b), ew.log1p(ew.exp(ew.neg(ew.abs(delta)))))
    return ew.select(ew.ne(delta, delta), ew.add(a, b), stable)


def _reduce_window_logaddexp(x, window_dimensions, window_strides, padding) -> Array:
    minus_inf = np.array(-np.inf, dtype=x.dtype)
    result = reduce_window(x, minus_inf, _logaddexp, window_dimensions, window_strides, padding)
    return with_weak_type(result, x.weak_type)


def cumlogsumexp(operand, axis: int = 0, reverse: bool = False) -> Array:
    """Running log-sum-exp along `axis`, computed stably (floats only)."""
    return _cumulative(operand, axis, reverse, _reduce_window_logaddexp, "cumlogsumexp",
                       accepts=dtypes.is_float)


__all__ = ["cumlogsumexp", "cummax", "cummin", "cumprod", "cumsum", "reduce_window",
           "reduce_window_max", "reduce_window_min", "reduce_window_prod",
           "reduce_window_shape_tuple", "reduce_window_sum", "select_and_scatter",
           "select_and_scatter_add"]
