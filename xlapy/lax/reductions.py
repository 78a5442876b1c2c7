"""`xlapy.lax` reductions: `reduce` with a traced reducer, the monoid
reductions (`reduce_sum`, `reduce_max`, ...) and `argmax`/`argmin`.

A reducer is a Python function of scalars, traced once into an HLO
computation. Traced reducers are cached per (function, dtypes): inside one
module (every `reduce` of f32 with `lax.add` in a jit calls one region, as
XLA's own modules do) and, in eager mode, process-wide, so a loop of eager
reductions does not re-trace its reducer each time.

The windowed reductions (windows.py) and sorts (sorting.py) share the
reducer cache and are re-exported at the bottom of this module.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from xlapy.core import dtypes
from xlapy.core.pytree import TreeDef, tree_flatten, tree_unflatten
from xlapy.core.subtrace import ShapedArray, trace_function
from xlapy.core.trace import Array, as_array, bind, current_trace, with_weak_type
from xlapy.hlo.ir import HloComputation
from xlapy.hlo.opcode import Opcode
from xlapy.lax import elementwise as ew

# -- traced scalar computations, cached ---------------------------------------------------

_EAGER_CACHE: OrderedDict[tuple, HloComputation] = OrderedDict()
_EAGER_CACHE_SIZE = 512
"""Eager reducers by key; least recently used ones are dropped beyond this size."""


def scalar_computation(fn: Callable, arg_dtypes: Sequence, out_dtypes: Sequence, name: str, *,
                       tuple_root: bool, key=None) -> HloComputation:
    """`fn` traced on scalars of `arg_dtypes` into a called computation (reducer,
    comparator, select/scatter function) returning scalars of `out_dtypes`.

    `fn` takes and returns flat scalars. The computation is cached under `key`
    (default: `fn` itself) and the dtypes: in the current module while tracing,
    else process-wide. Closing over a traced value is an error (XLA's called
    computations take only their parameters); raises TypeError when `fn`
    returns anything but scalars of `out_dtypes`.
    """
    arg_dtypes = tuple(np.dtype(d) for d in arg_dtypes)
    out_dtypes = tuple(np.dtype(d) for d in out_dtypes)
    cache_key = ("xlapy.lax.scalar_computation", fn if key is None else key, arg_dtypes,
                 out_dtypes, tuple_root)
    trace = current_trace()
    cache = trace.module_builder.shared if trace is not None else _EAGER_CACHE
    try:
        hit = cache.get(cache_key)
    except TypeError:  # an unhashable callable: trace it every time
        cache_key, hit = None, None
    if hit is not None:
        if trace is None:
            _EAGER_CACHE.move_to_end(cache_key)
        return hit
    computation = _trace_scalar(fn, arg_dtypes, out_dtypes, name, tuple_root)
    if cache_key is not None:
        cache[cache_key] = computation
        if trace is None and len(_EAGER_CACHE) > _EAGER_CACHE_SIZE:
            _EAGER_CACHE.popitem(last=False)
    return computation


def _trace_scalar(fn, arg_dtypes, out_dtypes, name, tuple_root) -> HloComputation:
    avals = [ShapedArray((), d) for d in arg_dtypes]
    traced = trace_function(fn, avals, _region_name(fn, name), tuple_root=tuple_root,
                            allow_captures=False)
    got = [(a.shape, a.dtype) for a in traced.out_avals]
    want = [((), d) for d in out_dtypes]
    if got != want:
        spelled = ", ".join(f"{d}{list(s)}" for s, d in got)
        expected = ", ".join(f"{d}[]" for d in out_dtypes)
        raise TypeError(f"{name}: the computation {_callable_name(fn)} returns ({spelled}) "
                        f"but must return ({expected}) for arguments of "
                        f"({', '.join(str(d) for d in arg_dtypes)})")
    return traced.computation


def _callable_name(fn) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def _region_name(fn, name: str) -> str:
    """An HLO-safe computation name: `region_<function>` or `region_<op>`."""
    base = getattr(fn, "__name__", "") or ""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", base) or base == "<lambda>":
        base = name
    return "region_" + re.sub(r"[^A-Za-z0-9_]", "_", base)


def pytree_reducer(computation: Callable, tree: TreeDef) -> Callable:
    """A flat function (acc_1..acc_n, x_1..x_n) -> results calling JAX-style
    `computation(accs, xs)` on pytrees shaped like `tree`."""

    def flat(*args):
        n = len(args) // 2
        accs = tree_unflatten(tree, args[:n])
        xs = tree_unflatten(tree, args[n:])
        leaves, out_tree = tree_flatten(computation(accs, xs))
        if out_tree != tree:
            raise TypeError(f"the reduction computation must return the operands' structure "
                            f"{tree}, got {out_tree}")
        return leaves if len(leaves) > 1 else leaves[0]

    flat.__name__ = getattr(computation, "__name__", "reduce")
    return flat


class _PytreeKey:
    """Cache key of a pytree reducer: the user's function and the structure."""

    __slots__ = ("fn", "tree")

    def __init__(self, fn, tree):
        self.fn, self.tree = fn, tree

    def __hash__(self):
        return hash((self.fn, self.tree))

    def __eq__(self, other):
        return isinstance(other, _PytreeKey) and self.fn is other.fn and self.tree == other.tree


def reducer_for(computation: Callable, tree: TreeDef, element_dtypes: Sequence,
                name: str) -> HloComputation:
    """The reducer computation of `computation` over operands shaped like `tree`
    (one array: `computation` itself, so `reduce(x, 0, lax.add, ...)` shares
    reduce_sum's region)."""
    n = len(element_dtypes)
    if tree.node_type is None:
        return scalar_computation(computation, [*element_dtypes] * 2, element_dtypes, name,
                                  tuple_root=False)
    return scalar_computation(pytree_reducer(computation, tree), [*element_dtypes] * 2,
                              element_dtypes, name, tuple_root=n > 1,
                              key=_PytreeKey(computation, tree))


# -- arguments ----------------------------------------------------------------------------

def canonicalize_axes(axes, ndim: int, name: str) -> tuple[int, ...]:
    """`axes` (an int or ints, negative counting from the end) as non-negative
    ints in the given order; ValueError for out-of-range or repeated axes."""
    if isinstance(axes, (int, np.integer)):
        axes = (axes,)
    out = []
    for axis in axes:
        axis = int(axis)
        if not -ndim <= axis < ndim:
            raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {ndim}")
        out.append(axis % ndim if ndim else axis)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: repeated axes in {tuple(axes)}")
    return tuple(out)


def scalar_like(value, dtype, what: str, name: str) -> Array:
    """An init value as a scalar of `dtype`: weak (Python) scalars are converted,
    a strong scalar of another dtype is an error, as in lax."""
    array = as_array(value)
    if array.shape != ():
        raise TypeError(f"{name}: {what} must be a scalar, got shape {list(array.shape)}")
    if np.dtype(array.dtype) == np.dtype(dtype):
        return array
    if array.weak_type:
        return with_weak_type(ew.convert_element_type(array, dtype), True)
    raise TypeError(f"{name}: {what} has dtype {array.dtype} but the operand has {dtype}; "
                    "they must match (convert with lax.convert_element_type)")


def flat_operands(operands, init_values, name: str):
    """(flat operand Arrays, flat init scalars, tree), checked to agree."""
    flat_ops, tree = tree_flatten(operands)
    flat_inits, init_tree = tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"{name}: operands must have the structure of init_values: "
                         f"{tree} vs. {init_tree}")
    if not flat_ops:
        raise ValueError(f"{name} needs at least one operand")
    ops = [as_array(x) for x in flat_ops]
    for i, op in enumerate(ops[1:], 1):
        if op.shape != ops[0].shape:
            raise ValueError(f"{name}: operand {i} has shape {list(op.shape)} but operand 0 "
                             f"has {list(ops[0].shape)}; all operands need one shape")
    inits = [scalar_like(v, op.dtype, f"init value {i}", name)
             for i, (v, op) in enumerate(zip(flat_inits, ops))]
    return ops, inits, tree


def unflatten_results(result, ops, inits, tree):
    results = result if isinstance(result, tuple) else (result,)
    results = [with_weak_type(r, op.weak_type and init.weak_type)
               for r, op, init in zip(results, ops, inits)]
    return tree_unflatten(tree, results)


# -- reduce -------------------------------------------------------------------------------

def reduce(operands, init_values, computation: Callable, dimensions: Sequence[int]):
    """XLA's Reduce: fold `computation` over `dimensions` of each operand,
    starting from `init_values` (scalars, one per operand).

    `operands` is an array or a pytree of arrays of one shape (variadic
    reduce); `computation(accs, xs)` takes and returns pytrees of that
    structure. `init_values` must be an identity of an associative
    `computation`: XLA may reassociate the fold.
    """
    ops, inits, tree = flat_operands(operands, init_values, "reduce")
    dims = canonicalize_axes(dimensions, ops[0].ndim, "reduce")
    reducer = reducer_for(computation, tree, [op.dtype for op in ops], "reduce")
    result = bind(Opcode.REDUCE, [*ops, *inits], {"dimensions": dims, "to_apply": reducer},
                  name="reduce")
    return unflatten_results(result, ops, inits, tree)


def _monoid(operand, axes, op: Callable, identity: Callable, name: str, accepts: Callable):
    x = as_array(operand)
    if not accepts(np.dtype(x.dtype)):
        raise TypeError(f"{name} does not accept dtype {np.dtype(x.dtype).name}")
    dims = canonicalize_axes(axes, x.ndim, name)
    init = as_array(identity(np.dtype(x.dtype)), x.dtype)
    reducer = scalar_computation(op, [x.dtype] * 2, [x.dtype], name, tuple_root=False)
    return bind(Opcode.REDUCE, [x, init], {"dimensions": dims, "to_apply": reducer},
                weak_type=x.weak_type, name=name)


def _is_number(dtype: np.dtype) -> bool:
    return dtype != np.bool_


def _is_bool_or_int(dtype: np.dtype) -> bool:
    return dtype == np.bool_ or dtypes.is_integer(dtype)


def _is_real(dtype: np.dtype) -> bool:
    return not dtypes.is_complex(dtype)


def max_identity(dtype: np.dtype):
    """The identity of max: -inf, the integer minimum, or False."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return False
    if dtypes.is_integer(dtype):
        return dtypes.iinfo(dtype).min
    return -np.inf if _has_inf(dtype) else dtypes.finfo(dtype).min


def min_identity(dtype: np.dtype):
    """The identity of min: inf, the integer maximum, or True."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return True
    if dtypes.is_integer(dtype):
        return dtypes.iinfo(dtype).max
    return np.inf if _has_inf(dtype) else dtypes.finfo(dtype).max


def _has_inf(dtype: np.dtype) -> bool:
    """False for the float8 formats without infinities (e4m3fn...)."""
    with np.errstate(all="ignore"):
        return bool(np.isinf(np.array(np.inf, dtype=dtype).astype(np.float32)))


def _all_ones(dtype: np.dtype):
    return True if dtype == np.bool_ else np.array(-1).astype(dtype)


def reduce_sum(operand, axes: Sequence[int]) -> Array:
    """Sum over `axes` (init 0)."""
    return _monoid(operand, axes, ew.add, lambda d: 0, "reduce_sum", _is_number)


def reduce_prod(operand, axes: Sequence[int]) -> Array:
    """Product over `axes` (init 1)."""
    return _monoid(operand, axes, ew.mul, lambda d: 1, "reduce_prod", _is_number)


def reduce_max(operand, axes: Sequence[int]) -> Array:
    """Maximum over `axes`; NaN propagates (init -inf or the integer minimum)."""
    return _monoid(operand, axes, ew.max, max_identity, "reduce_max", _is_real)


def reduce_min(operand, axes: Sequence[int]) -> Array:
    """Minimum over `axes`; NaN propagates (init inf or the integer maximum)."""
    return _monoid(operand, axes, ew.min, min_identity, "reduce_min", _is_real)


def reduce_and(operand, axes: Sequence[int]) -> Array:
    """Logical (bool) or bitwise (int) and over `axes`."""
    return _monoid(operand, axes, ew.bitwise_and, _all_ones, "reduce_and", _is_bool_or_int)


def reduce_or(operand, axes: Sequence[int]) -> Array:
    """Logical (bool) or bitwise (int) or over `axes`."""
    return _monoid(operand, axes, ew.bitwise_or, lambda d: 0, "reduce_or", _is_bool_or_int)


def reduce_xor(operand, axes: Sequence[int]) -> Array:
    """Logical (bool) or bitwise (int) xor over `axes`."""
    return _monoid(operand, axes, ew.bitwise_xor, lambda d: 0, "reduce_xor", _is_bool_or_int)


# -- argmax / argmin ----------------------------------------------------------------------

def _arg_reducer(better: Callable, floating: bool) -> Callable:
    """Reducer of (value, index) pairs choosing the better value, NaN above all,
    and the lower index among equals: a total order, so the result does not
    depend on how XLA associates the fold."""

    def reducer(va, ia, vb, ib):
        if floating:
            a_nan, b_nan = ew.ne(va, va), ew.ne(vb, vb)
            a_better = ew.bitwise_or(ew.bitwise_and(a_nan, ew.bitwise_not(b_nan)), better(va, vb))
            tie = ew.bitwise_or(ew.eq(va, vb), ew.bitwise_and(a_nan, b_nan))
        else:
            a_better, tie = better(va, vb), ew.eq(va, vb)
        pick_a = ew.bitwise_or(a_better, ew.bitwise_and(tie, ew.lt(ia, ib)))
        return ew.select(pick_a, va, vb), ew.select(pick_a, ia, ib)

    reducer.__name__ = f"arg{better.__name__}"
    return reducer


_ARG_REDUCERS = {(kind, floating): _arg_reducer(better, floating)
                 for kind, better in (("max", ew.gt), ("min", ew.lt))
                 for floating in (False, True)}


def _argminmax(operand, axis: int, index_dtype, kind: str) -> Array:
    name = f"arg{kind}"
    x = as_array(operand)
    index_dtype = np.dtype(index_dtype)
    if not dtypes.is_integer(index_dtype):
        raise TypeError(f"{name}: index_dtype must be an integer type, got {index_dtype}")
    if dtypes.is_complex(x.dtype):
        raise TypeError(f"{name} does not accept complex operands ({x.dtype})")
    (axis,) = canonicalize_axes((axis,), x.ndim, name)
    floating = dtypes.is_float(x.dtype)
    identity = max_identity(x.dtype) if kind == "max" else min_identity(x.dtype)
    indices = ew.broadcasted_iota(index_dtype, x.shape, axis)
    inits = [as_array(identity, x.dtype), as_array(0, index_dtype)]
    reducer = scalar_computation(_ARG_REDUCERS[kind, floating], [x.dtype, index_dtype] * 2,
                                 [x.dtype, index_dtype], name, tuple_root=True)
    _, index = bind(Opcode.REDUCE, [x, indices, *inits],
                    {"dimensions": (axis,), "to_apply": reducer}, weak_type=False, name=name)
    return index


def argmax(operand, axis: int, index_dtype) -> Array:
    """Index of the maximum along `axis`: the first one among equals, the
    first NaN if there is any (as JAX and NumPy)."""
    return _argminmax(operand, axis, index_dtype, "max")


def argmin(operand, axis: int, index_dtype) -> Array:
    """Index of the minimum along `axis`: the first one among equals, the
    first NaN if there is any (as JAX and NumPy)."""
    return _argminmax(operand, axis, index_dtype, "min")


__all__ = ["argmax", "argmin", "reduce", "reduce_and", "reduce_max", "reduce_min", "reduce_or",
           "reduce_prod", "reduce_sum", "reduce_xor"]

# The windowed reductions and sorts live in modules of their own, built on the cache above.
from xlapy.lax.sorting import *  # noqa: E402, F403
from xlapy.lax.sorting import __all__ as _sorting_all  # noqa: E402
from xlapy.lax.windows import *  # noqa: E402, F403
from xlapy.lax.windows import __all__ as _windows_all  # noqa: E402

__all__ += _windows_all + _sorting_all
