"""sort and topk: both move values without changing them, so their derivatives
move the tangents the same way (JAX's _sort_jvp, and top_k's gather).

sort's permutation comes from sorting one more operand, an iota along the
sorted dimension, with the same comparator (extended to ignore the iota's
pair of parameters): the sort stays one sort, stable or not, and every
operand's tangent is gathered with the permutation; its cotangent is
scattered back with it. topk returns its indices, so its values' tangent is
a gather and their cotangent a scatter-add into zeros along the last axis.
Integer operands and the returned indices carry no derivative.
"""

from __future__ import annotations

import numpy as np

from xlapy.autodiff.rules import jvp, vjp, vjp_forward
from xlapy.autodiff.rules._util import zeros_like
from xlapy.autodiff.tape import evaluate, is_differentiable_type
from xlapy.core.trace import bind
from xlapy.hlo.opcode import Opcode
from xlapy.lax import elementwise as ew
from xlapy.lax import primitives as lax
from xlapy.lax.gather_scatter import _combiner
from xlapy.lax.reductions import scalar_computation

Op = Opcode
_INDEX = np.dtype(np.int32)


# -- moving values along one axis -------------------------------------------------------------
def _full_indices(index, axis: int):
    """Index vectors (last dim) addressing x[..., index[...], ...]: iotas over every
    dim of `index` but `axis`, which takes `index` itself (as JAX's _sort_jvp)."""
    index = lax.convert_element_type(index, _INDEX)
    shape = tuple(index.shape)
    parts = [index if d == axis else lax.broadcasted_iota(_INDEX, shape, d)
             for d in range(len(shape))]
    return lax.concatenate([lax.reshape(p, shape + (1,)) for p in parts], len(shape))


def _point_dnums(rank: int) -> tuple[tuple[int, ...], int]:
    return tuple(range(rank)), rank


def take_along(x, index, axis: int):
    """x gathered along `axis` at `index` (shaped as x but along `axis`)."""
    dims, rank = _point_dnums(x.ndim)
    attrs = {"offset_dims": (), "collapsed_slice_dims": dims, "start_index_map": dims,
             "index_vector_dim": rank, "slice_sizes": (1,) * rank}
    return bind(Op.GATHER, [x, _full_indices(index, axis)], attrs, weak_type=False,
                name="gather")


def put_along(values, index, axis: int, like):
    """zeros like `like` with `values` added at `index` along `axis` (the transpose
    of take_along; index entries are distinct along `axis`)."""
    dims, rank = _point_dnums(like.ndim)
    attrs = {"update_window_dims": (), "inserted_window_dims": dims,
             "scatter_dims_to_operand_dims": dims, "index_vector_dim": rank,
             "unique_indices": True, "to_apply": _combiner(ew.add, like.dtype, "scatter_add")}
    return bind(Op.SCATTER, [zeros_like(like), _full_indices(index, axis), values], attrs,
                weak_type=False, name="scatter_add")


# -- sort ---------------------------------------------------------------------------------------
def _with_index_comparator(node):
    """node's comparator taking one more (lhs, rhs) pair, which it ignores."""
    comparator = node.attr("to_apply")
    count = 2 * len(node.operands)

    def compare(*params):
        return evaluate(comparator, list(params[:count]))

    arg_dtypes = [np.dtype(x.dtype) for x in node.operands for _ in range(2)] + [_INDEX] * 2
    return scalar_computation(compare, arg_dtypes, [np.bool_], "sort", tuple_root=False,
                              key=("xlapy.autodiff.sort_with_index", comparator))


def _sort_dimension(node) -> int:
    dims = node.attr("dimensions")
    return dims[0] if dims else node.operands[0].ndim - 1


def _sorted_and_permutation(node):
    """(node's result, the permutation along the sorted dimension)."""
    axis = _sort_dimension(node)
    shape = node.operands[0].shape
    iota = lax.broadcasted_iota(_INDEX, shape, axis)
    attrs = {"dimensions": (axis,), "is_stable": bool(node.attr("is_stable", False)),
             "to_apply": _with_index_comparator(node)}
    out = bind(Op.SORT, [*node.operands, iota], attrs, weak_type=False, name="sort")
    values = out[:-1]
    return (values if node.shape.is_tuple else values[0]), out[-1]


@vjp_forward(Op.SORT)
def _sort_forward(node):
    return _sorted_and_permutation(node)


@vjp(Op.SORT)
def _sort_vjp(node, ct):
    axis, perm = _sort_dimension(node), node.residuals
    cts = ct if node.shape.is_tuple else (ct,)
    return [None if c is None or not is_differentiable_type(x.dtype)
            else put_along(c, perm, axis, x) for c, x in zip(cts, node.operands)]


@jvp(Op.SORT, joint=True)
def _sort_jvp(node, tangents):
    result, perm = _sorted_and_permutation(node)
    axis = _sort_dimension(node)
    out = tuple(None if t is None or not is_differentiable_type(x.dtype)
                else take_along(t, perm, axis) for t, x in zip(tangents, node.operands))
    return result, (out if node.shape.is_tuple else out[0])


# -- topk ---------------------------------------------------------------------------------------
@vjp(Op.TOPK)
def _topk_vjp(node, ct):
    (x,) = node.operands
    ct_values = ct[0]
    if ct_values is None:
        return [None]
    return [put_along(ct_values, node.result[1], x.ndim - 1, x)]


@jvp(Op.TOPK)
def _topk_jvp(node, tangents):
    (t,) = tangents
    return take_along(t, node.result[1], t.ndim - 1), None
