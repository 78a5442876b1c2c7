"""`xlapy.lax` sorting: `sort` (one array or several, lexicographic over the
first `num_keys`), `sort_key_val` and `top_k`.

The sort comparator is traced like JAX's: floats are compared in XLA's
TOTALORDER after mapping -0.0 to +0.0 and every NaN to +NaN, so -0.0 and 0.0
are equal (a stable sort keeps their order) and NaNs sort last; complex
numbers compare by (real, imag).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from xlapy.core import dtypes
from xlapy.core.trace import Array, as_array, bind, with_weak_type
from xlapy.hlo.attributes import ComparisonDirection, ComparisonType
from xlapy.hlo.opcode import Opcode
from xlapy.lax import elementwise as ew
from xlapy.lax.reductions import canonicalize_axes, scalar_computation

# -- the comparator -----------------------------------------------------------------------


def _canonical_float(x) -> Array:
    """-0.0 -> +0.0 and any NaN -> +NaN, so TOTALORDER sees one zero and one NaN."""
    zero = as_array(0, x.dtype)
    nan = as_array(np.nan, x.dtype)
    x = ew.select(ew.eq(x, zero), zero, x)
    return ew.select(ew.ne(x, x), nan, x)


def _keys(x) -> list[Array]:
    """The scalars a value is ordered by, most significant first."""
    if dtypes.is_complex(x.dtype):
        return [_canonical_float(ew.real(x)), _canonical_float(ew.imag(x))]
    if dtypes.is_float(x.dtype):
        return [_canonical_float(x)]
    return [x]


def _total_compare(direction: ComparisonDirection, x, y) -> Array:
    attrs = {"direction": direction}
    if dtypes.is_float(x.dtype):
        attrs["type"] = ComparisonType.TOTALORDER
    return bind(Opcode.COMPARE, [x, y], attrs, weak_type=False, name="compare")


@functools.cache
def _lt_comparator(num_keys: int):
    """The comparator over (lhs_0, rhs_0, lhs_1, rhs_1, ...): lexicographic
    less-than over the first `num_keys` operands. One function per num_keys,
    so traced comparators are cached."""

    def comparator(*params):
        xs, ys = [], []
        for k in range(num_keys):
            xs += _keys(params[2 * k])
            ys += _keys(params[2 * k + 1])
        result = None
        for x, y in zip(reversed(xs), reversed(ys)):
            less = _total_compare(ComparisonDirection.LT, x, y)
            if result is not None:
                equal = _total_compare(ComparisonDirection.EQ, x, y)
                less = ew.bitwise_or(less, ew.bitwise_and(equal, result))
            result = less
        return result

    comparator.__name__ = "compare_lt"
    return comparator


# -- sort ---------------------------------------------------------------------------------

def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """Sort along `dimension`. A sequence of same-shaped arrays is reordered by
    one permutation, ordered lexicographically by the first `num_keys` of them;
    returns a tuple then, else one array. Floats sort in JAX's order: -0.0
    equals 0.0 and NaNs come last."""
    single = isinstance(operand, Array) or not isinstance(operand, Sequence)
    arrays = [as_array(operand)] if single else [as_array(x) for x in operand]
    if not arrays:
        raise TypeError("sort needs at least one operand")
    if single and num_keys != 1:
        raise ValueError(f"sort: num_keys={num_keys} must be 1 for a single operand")
    if not 1 <= num_keys <= len(arrays):
        raise ValueError(f"sort: num_keys={num_keys} must be between 1 and {len(arrays)}")
    for i, x in enumerate(arrays[1:], 1):
        if x.shape != arrays[0].shape:
            raise ValueError(f"sort: operand {i} has shape {list(x.shape)} but operand 0 has "
                             f"{list(arrays[0].shape)}; sorted operands need one shape")
    if arrays[0].ndim == 0:
        raise ValueError("sort needs operands of rank >= 1, got a scalar")
    (dimension,) = canonicalize_axes((dimension,), arrays[0].ndim, "sort")
    arg_dtypes = [np.dtype(x.dtype) for x in arrays for _ in range(2)]
    comparator = scalar_computation(_lt_comparator(num_keys), arg_dtypes, [np.bool_], "sort",
                                    tuple_root=False)
    result = bind(Opcode.SORT, arrays, {"dimensions": (dimension,),
                                        "is_stable": bool(is_stable), "to_apply": comparator},
                  name="sort")
    results = result if isinstance(result, tuple) else (result,)
    results = tuple(with_weak_type(r, x.weak_type) for r, x in zip(results, arrays))
    return results[0] if single else results


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """Sort `keys` along `dimension` and apply the same permutation to `values`."""
    return sort((keys, values), dimension=dimension, is_stable=is_stable, num_keys=1)


# -- top_k --------------------------------------------------------------------------------

def _move_axis(x: Array, source: int, target: int) -> Array:
    if source == target:
        return x
    perm = [d for d in range(x.ndim) if d != source]
    perm.insert(target, source)
    return bind(Opcode.TRANSPOSE, [x], {"dimensions": tuple(perm)}, name="transpose")


def top_k(operand, k: int, *, axis: int = -1) -> tuple[Array, Array]:
    """The `k` largest entries along `axis`, largest first, and their int32
    indices; among equal values the lower index comes first. Floats compare in
    total order, so NaN counts as the largest value."""
    x = as_array(operand)
    k = int(k)
    if k < 0:
        raise ValueError(f"top_k: k must be nonnegative, got {k}")
    if dtypes.is_complex(x.dtype):
        raise TypeError(f"top_k does not accept complex operands ({x.dtype})")
    if x.ndim == 0:
        raise ValueError("top_k needs an operand of rank >= 1, got a scalar")
    (axis,) = canonicalize_axes((axis,), x.ndim, "top_k")
    if k > x.shape[axis]:
        raise ValueError(f"top_k: k={k} is larger than the axis size {x.shape[axis]}")
    last = x.ndim - 1
    values, indices = bind(Opcode.TOPK, [_move_axis(x, axis, last)],
                           {"k": k, "largest": True}, name="top_k")
    values = with_weak_type(_move_axis(values, last, axis), x.weak_type)
    indices = with_weak_type(_move_axis(indices, last, axis), False)
    return values, indices


__all__ = ["sort", "sort_key_val", "top_k"]
