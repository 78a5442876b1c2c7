"""Lowerings of ATen's indexing: `index.Tensor`, `index_put`, `index_select`, `gather`,
`scatter`/`scatter_add`/`scatter_reduce`, `embedding` (+ its dense backward).

Each is one HLO `gather` or `scatter`. PyTorch's per-element forms (`gather`,
`scatter` along a dim) become full coordinates: the index tensor along `dim`,
an iota along every other axis. Negative indices wrap as in PyTorch; HLO
clamps anything still out of range (where PyTorch would raise).
"""

from __future__ import annotations

import numpy as np
import torch

from xlapy.frontends.torch.convert import GraphLowering
from xlapy.frontends.torch.ops_shape import axis
from xlapy.frontends.torch.registry import Unsupported, lowering
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode

aten = torch.ops.aten
H = HloInstruction
S64 = PrimitiveType.S64


def _wrapped(g: GraphLowering, index: H, size: int) -> H:
    """Indices as s64 with negative ones counted from the end."""
    if g.ptype(index) in (PrimitiveType.PRED, PrimitiveType.U8):
        raise Unsupported(g.op, "a boolean mask index (its result's shape depends on data)")
    index = g.convert(index, S64)
    dims = g.dims(index)
    negative = g.b.compare(index, g.const(0, S64, dims), "LT")
    return g.b.select(negative, g.b.add(index, g.const(size, S64, dims)), index)


def _coordinates(g: GraphLowering, index: H, dim: int, rank: int, size: int) -> H:
    """s64[*index.shape, rank]: `index` along `dim`, each position's own coordinate
    along the other axes."""
    dims = g.dims(index)
    columns = []
    for a in range(rank):
        column = _wrapped(g, index, size) if a == dim else g.iota(S64, dims, a)
        columns.append(g.b.reshape(column, [*dims, 1]))
    return columns[0] if rank == 1 else g.b.concatenate(columns, len(dims))


def _combiner(g: GraphLowering, reduce, element_type: PrimitiveType):
    """The scatter's update computation: replace, or a reduction by name."""
    if reduce in (None, "none"):
        b = g.b.subcomputation("replace")
        from_shape = g.const(0, element_type).shape
        b.parameter(0, from_shape, "old")
        b.parameter(1, from_shape, "new")
        return b.build()
    opcodes = {"add": Opcode.ADD, "sum": Opcode.ADD, "multiply": Opcode.MULTIPLY,
               "prod": Opcode.MULTIPLY, "amax": Opcode.MAXIMUM, "amin": Opcode.MINIMUM}
    if reduce not in opcodes:
        raise Unsupported(g.op, f"scatter reduction {reduce!r}")
    return g.b.scalar_reducer(opcodes[reduce], element_type)


# -- per-element gather and scatter along a dim ----------------------------------------------
@lowering(aten.gather)
def gather(g: GraphLowering, out, x, dim: int, index, sparse_grad: bool = False):
    rank = len(g.dims(x))
    if rank == 0:
        return x
    dim = axis(dim, rank)
    coordinates = _coordinates(g, index, dim, rank, g.dims(x)[dim])
    return g.b.gather(x, coordinates, offset_dims=(), collapsed_slice_dims=tuple(range(rank)),
                      start_index_map=tuple(range(rank)), index_vector_dim=len(g.dims(index)),
                      slice_sizes=(1,) * rank)


def _scatter(g: GraphLowering, out, x, dim: int, index, src, reduce):
    element_type = g.type_of(out)
    x = g.convert(x, element_type)
    rank = len(g.dims(x))
    dim = axis(dim, rank) if rank else 0
    index_dims = g.dims(index)
    if isinstance(src, H):
        src = g.convert(src, element_type)
        if g.dims(src) != index_dims:  # only src's leading part under index is used
            src = g.b.slice(src, [0] * len(index_dims), list(index_dims))
    else:
        src = g.const(src, element_type, index_dims)
    if rank == 0:
        return src
    coordinates = _coordinates(g, index, dim, rank, g.dims(x)[dim])
    return g.b.scatter(x, coordinates, src, _combiner(g, reduce, element_type),
                       update_window_dims=(), inserted_window_dims=tuple(range(rank)),
                       scatter_dims_to_operand_dims=tuple(range(rank)),
                       index_vector_dim=len(index_dims))


@lowering(aten.scatter)
def scatter(g: GraphLowering, out, x, dim: int, index, src, reduce=None):
    return _scatter(g, out, x, dim, index, src, reduce)


@lowering(aten.scatter_add)
def scatter_add(g: GraphLowering, out, x, dim: int, index, src):
    return _scatter(g, out, x, dim, index, src, "add")


@lowering(aten.scatter_reduce.two)
def scatter_reduce(g: GraphLowering, out, x, dim: int, index, src, reduce: str,
                   include_self: bool = True):
    if not include_self:
        raise Unsupported(g.op, "scatter_reduce with include_self=False")
    return _scatter(g, out, x, dim, index, src, reduce)


# -- whole slices: index_select, embedding ---------------------------------------------------
def _take(g: GraphLowering, x: H, dim: int, index: H) -> H:
    """x's slices along `dim` at `index` (any shape), which replaces `dim` in the result."""
    dims = g.dims(x)
    index = _wrapped(g, index, dims[dim])
    index_rank = len(g.dims(index))
    offset_dims = tuple(range(dim)) + tuple(range(dim + index_rank, len(dims) + index_rank - 1))
    sizes = list(dims)
    sizes[dim] = 1
    return g.b.gather(x, index, offset_dims=offset_dims, collapsed_slice_dims=(dim,),
                      start_index_map=(dim,), index_vector_dim=index_rank, slice_sizes=sizes)


@lowering(aten.index_select)
def index_select(g: GraphLowering, out, x, dim: int, index):
    if not g.dims(x):
        return x
    index = index if g.dims(index) else g.b.reshape(index, [1])
    return _take(g, x, axis(dim, len(g.dims(x))), index)


@lowering(aten.embedding)
def embedding(g: GraphLowering, out, weight, indices, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False):
    return _take(g, weight, 0, indices)


@lowering(aten.embedding_dense_backward)
def embedding_dense_backward(g: GraphLowering, out, grad, indices, num_weights: int,
                             padding_idx: int, scale_grad_by_freq: bool):
    if scale_grad_by_freq:
        raise Unsupported(g.op, "scale_grad_by_freq")
    element_type = g.type_of(out)
    index_dims = g.dims(indices)
    width = g.shape_of(out)[1]
    count = int(np.prod(index_dims, dtype=np.int64))
    flat = g.b.reshape(g.convert(indices, S64), [count])
    updates = g.b.reshape(g.convert(grad, element_type), [count, width])
    if padding_idx is not None and padding_idx >= 0:
        keep = g.b.compare(flat, g.const(padding_idx, S64, [count]), "NE")
        updates = g.b.select(g.b.broadcast(keep, [count, width], [0]), updates,
                             g.const(0, element_type, [count, width]))
    zeros = g.const(0, element_type, [num_weights, width])
    return g.b.scatter(zeros, flat, updates, g.b.scalar_reducer(Opcode.ADD, element_type),
                       update_window_dims=(1,), inserted_window_dims=(0,),
                       scatter_dims_to_operand_dims=(0,), index_vector_dim=1)


# -- advanced indexing -----------------------------------------------------------------------
class _Advanced:
    """x[..., i0, i1, ...] with index tensors at some axes (None at the others)."""

    def __init__(self, g: GraphLowering, x: H, indices):
        dims = g.dims(x)
        indices = list(indices) + [None] * (len(dims) - len(indices))
        self.axes = [a for a, i in enumerate(indices) if i is not None]
        self.rest = [a for a, i in enumerate(indices) if i is None]
        if not self.axes:
            raise Unsupported(g.op, "indexing with no index tensor")
        tensors = [indices[a] for a in self.axes]
        self.batch = tuple(np.broadcast_shapes(*(g.dims(t) for t in tensors)))
        columns = [g.b.reshape(g.broadcast_to(_wrapped(g, t, dims[a]), self.batch),
                               [*self.batch, 1]) for t, a in zip(tensors, self.axes)]
        self.coordinates = columns[0] if len(columns) == 1 else \
            g.b.concatenate(columns, len(self.batch))
        consecutive = self.axes == list(range(self.axes[0], self.axes[-1] + 1))
        first = self.axes[0] if consecutive else 0
        before = [a for a in self.rest if a < first]
        after = [a for a in self.rest if a >= first]
        self.offset_dims = tuple(range(len(before))) + tuple(
            range(len(before) + len(self.batch), len(before) + len(self.batch) + len(after)))
        self.sizes = [1 if a in self.axes else d for a, d in enumerate(dims)]
        self.result_dims = [dims[a] for a in before] + list(self.batch) + [dims[a] for a in
                                                                          after]


@lowering(aten.index.Tensor)
def index(g: GraphLowering, out, x, indices):
    adv = _Advanced(g, x, indices)
    return g.b.gather(x, adv.coordinates, offset_dims=adv.offset_dims,
                      collapsed_slice_dims=tuple(adv.axes), start_index_map=tuple(adv.axes),
                      index_vector_dim=len(adv.batch), slice_sizes=adv.sizes)


@lowering(aten.index_put)
def index_put(g: GraphLowering, out, x, indices, values, accumulate: bool = False):
    element_type = g.type_of(out)
    x = g.convert(x, element_type)
    adv = _Advanced(g, x, indices)
    updates = g.broadcast_to(g.convert(values, element_type), adv.result_dims)
    combiner = _combiner(g, "add" if accumulate else None, element_type)
    return g.b.scatter(x, adv.coordinates, updates, combiner,
                       update_window_dims=adv.offset_dims,
                       inserted_window_dims=tuple(adv.axes),
                       scatter_dims_to_operand_dims=tuple(adv.axes),
                       index_vector_dim=len(adv.batch))
