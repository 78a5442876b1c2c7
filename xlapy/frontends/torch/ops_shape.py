"""Lowerings of ATen's views, data movement and tensor creation.

A view is a copy in HLO (values, not storage): `view`, `reshape`, `squeeze`,
`unsqueeze` are one `reshape` to the result's shape, `permute`/`t`/`transpose`
one `transpose`, `expand` one `broadcast`, `slice`/`select`/`narrow` one
`slice`. Creation ops (`full`, `zeros`, `arange`...) read their shape and dtype
from the node's metadata.
"""

from __future__ import annotations

import torch

from xlapy.frontends.torch.convert import GraphLowering
from xlapy.frontends.torch.registry import Unsupported, lowering
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloInstruction

aten = torch.ops.aten
H = HloInstruction


def axis(dim: int, rank: int) -> int:
    """A PyTorch dimension (negative counts from the end) as 0..rank-1."""
    return dim % rank if rank else 0


# -- identities and reshapes -----------------------------------------------------------------
@lowering(aten.alias, aten.detach, aten.clone, aten.lift_fresh_copy, aten.contiguous,
          aten.alias_copy, aten.detach_copy, aten._to_copy, aten.to.dtype,
          aten.to.dtype_layout, aten.to.device, aten._assert_tensor_metadata)
def identity(g: GraphLowering, out, x, *args, **kwargs):
    """The value unchanged; the converter turns it into the result's dtype."""
    if out is None:  # an assertion: no result
        return None
    if isinstance(out, torch.Tensor) and out.device.type not in ("cpu", "meta"):
        raise Unsupported(g.op, f"a copy to device {out.device}")
    return x


@lowering(aten.view.default, aten._unsafe_view, aten.reshape, aten.unsqueeze, aten.squeeze,
          aten.view_copy.default, aten.flatten.using_ints, aten.unflatten,
          aten._reshape_alias, aten.expand_as, aten.view_as)
def reshape(g: GraphLowering, out, x, *args, **kwargs):
    return g.b.reshape(x, g.shape_of(out))


@lowering(aten.view.dtype)
def view_dtype(g: GraphLowering, out, x, dtype):
    element_type = g.type_of(dtype)
    if element_type.numpy.itemsize != g.ptype(x).numpy.itemsize:
        raise Unsupported(g.op, "a view as a dtype of another size")
    return g.b.bitcast_convert(x, element_type)


@lowering(aten.permute)
def permute(g: GraphLowering, out, x, dims):
    rank = len(g.dims(x))
    return g.b.transpose(x, [axis(d, rank) for d in dims])


@lowering(aten.t, aten.numpy_T)
def t(g: GraphLowering, out, x):
    rank = len(g.dims(x))
    return x if rank < 2 else g.b.transpose(x, list(range(rank))[::-1])


@lowering(aten.transpose.int)
def transpose(g: GraphLowering, out, x, dim0: int, dim1: int):
    rank = len(g.dims(x))
    if rank < 2:
        return x
    permutation = list(range(rank))
    a, b = axis(dim0, rank), axis(dim1, rank)
    permutation[a], permutation[b] = permutation[b], permutation[a]
    return g.b.transpose(x, permutation)


@lowering(aten.expand, aten.broadcast_to, aten.expand_copy)
def expand(g: GraphLowering, out, x, *args, **kwargs):
    return g.broadcast_to(x, g.shape_of(out))


# -- slicing ---------------------------------------------------------------------------------
def _slice(g: GraphLowering, x: H, dim: int, start: int, step: int, length: int) -> H:
    dims = g.dims(x)
    starts = [0] * len(dims)
    limits = list(dims)
    strides = [1] * len(dims)
    starts[dim] = start
    limits[dim] = start + (length - 1) * step + 1 if length > 0 else start
    strides[dim] = step
    return g.b.slice(x, starts, limits, strides)


def _start(start, size: int) -> int:
    start = 0 if start is None else int(start)
    if start < 0:
        start += size
    return min(max(start, 0), size)


@lowering(aten.slice.Tensor)
def slice_(g: GraphLowering, out, x, dim: int = 0, start=None, end=None, step: int = 1):
    dim = axis(dim, len(g.dims(x)))
    length = g.shape_of(out)[dim]
    return _slice(g, x, dim, _start(start, g.dims(x)[dim]), int(step), length)


@lowering(aten.narrow)
def narrow(g: GraphLowering, out, x, dim: int, start: int, length: int):
    dim = axis(dim, len(g.dims(x)))
    return _slice(g, x, dim, _start(start, g.dims(x)[dim]), 1, int(length))


@lowering(aten.select.int)
def select(g: GraphLowering, out, x, dim: int, index: int):
    dim = axis(dim, len(g.dims(x)))
    index = int(index) + (g.dims(x)[dim] if index < 0 else 0)
    return g.b.reshape(_slice(g, x, dim, index, 1, 1), g.shape_of(out))


@lowering(aten.split.Tensor, aten.split_with_sizes, aten.unbind.int, aten.chunk)
def split(g: GraphLowering, out, x, sizes_or_size=None, dim: int = 0):
    if "unbind" in g.op:
        dim = sizes_or_size or 0
    dim = axis(dim, len(g.dims(x)))
    pieces, start = [], 0
    for piece in out:
        length = g.shape_of(piece)[dim] if len(g.shape_of(piece)) == len(g.dims(x)) else 1
        part = _slice(g, x, dim, start, 1, length)
        pieces.append(g.b.reshape(part, g.shape_of(piece)))
        start += length
    return pieces


def _placed(g: GraphLowering, base: H, src: H, dim: int, start: int, step: int) -> H:
    """`base` with `src` written along `dim` at start, start+step, ...: the inverse of a
    slice, by interior padding (no scatter)."""
    dims = g.dims(base)
    src = g.convert(src, g.ptype(base))
    length = g.dims(src)[dim]
    if length == 0:
        return base
    end = start + (length - 1) * step + 1
    config = [(0, 0, 0)] * len(dims)
    config[dim] = (start, dims[dim] - end, step - 1)
    zero = g.const(0, g.ptype(base))
    placed = g.b.pad(src, zero, config)
    mask = g.b.pad(g.const(True, PrimitiveType.PRED, g.dims(src)),
                   g.const(False, PrimitiveType.PRED), config)
    return g.b.select(mask, placed, base)


@lowering(aten.slice_scatter)
def slice_scatter(g: GraphLowering, out, x, src, dim: int = 0, start=None, end=None,
                  step: int = 1):
    dim = axis(dim, len(g.dims(x)))
    return _placed(g, x, src, dim, _start(start, g.dims(x)[dim]), int(step))


@lowering(aten.select_scatter)
def select_scatter(g: GraphLowering, out, x, src, dim: int, index: int):
    dim = axis(dim, len(g.dims(x)))
    index = int(index) + (g.dims(x)[dim] if index < 0 else 0)
    shape = list(g.dims(x))
    shape[dim] = 1
    return _placed(g, x, g.b.reshape(src, shape), dim, index, 1)


# -- joining and rearranging -----------------------------------------------------------------
@lowering(aten.cat)
def cat(g: GraphLowering, out, tensors, dim: int = 0):
    shape = g.shape_of(out)
    dim = axis(dim, len(shape))
    element_type = g.type_of(out)
    parts = [g.convert(t, element_type) for t in tensors
             if not (g.dims(t) == (0,) and len(shape) != 1)]  # legacy empty operands
    parts = [p for p in parts if g.dims(p)[dim] > 0] or parts[:1]
    if len(parts) == 1:
        return parts[0]
    return g.b.concatenate(parts, dim)


@lowering(aten.stack)
def stack(g: GraphLowering, out, tensors, dim: int = 0):
    shape = g.shape_of(out)
    dim = axis(dim, len(shape))
    element_type = g.type_of(out)
    single = list(shape)
    single[dim] = 1
    parts = [g.b.reshape(g.convert(t, element_type), single) for t in tensors]
    return parts[0] if len(parts) == 1 else g.b.concatenate(parts, dim)


@lowering(aten.flip)
def flip(g: GraphLowering, out, x, dims):
    rank = len(g.dims(x))
    return g.b.reverse(x, sorted({axis(d, rank) for d in dims})) if rank else x


@lowering(aten.roll)
def roll(g: GraphLowering, out, x, shifts, dims=()):
    if not dims:
        flat = g.b.reshape(x, [_count(g.dims(x))])
        return g.b.reshape(roll(g, None, flat, shifts, [0]), g.dims(x))
    for shift, dim in zip(shifts, dims):
        dim = axis(dim, len(g.dims(x)))
        size = g.dims(x)[dim]
        shift = int(shift) % size if size else 0
        if shift:
            tail = _slice(g, x, dim, size - shift, 1, shift)
            head = _slice(g, x, dim, 0, 1, size - shift)
            x = g.b.concatenate([tail, head], dim)
    return x


def _count(dims) -> int:
    count = 1
    for d in dims:
        count *= d
    return count


@lowering(aten.repeat)
def repeat(g: GraphLowering, out, x, repeats):
    repeats = [int(r) for r in repeats]
    dims = [1] * (len(repeats) - len(g.dims(x))) + list(g.dims(x))
    x = g.b.reshape(x, dims)
    interleaved = [v for pair in zip(repeats, dims) for v in pair]
    x = g.b.broadcast(x, interleaved, range(1, 2 * len(dims), 2))
    return g.b.reshape(x, g.shape_of(out))


@lowering(aten.constant_pad_nd)
def constant_pad_nd(g: GraphLowering, out, x, pad, value=0):
    rank = len(g.dims(x))
    config = [(0, 0, 0)] * rank
    for i in range(len(pad) // 2):
        config[rank - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]), 0)
    padding_value = g.operand(value, g.type_of(out), ())
    return g.b.pad(g.convert(x, g.type_of(out)), padding_value, config)


@lowering(aten.tril, aten.triu)
def tril(g: GraphLowering, out, x, diagonal: int = 0):
    dims = g.dims(x)
    rank = len(dims)
    s64 = PrimitiveType.S64
    offset = g.b.subtract(g.iota(s64, dims, rank - 1), g.iota(s64, dims, rank - 2))
    direction = "LE" if "tril" in g.op else "GE"
    keep = g.b.compare(offset, g.const(int(diagonal), s64, dims), direction)
    return g.b.select(keep, x, g.const(0, g.ptype(x), dims))


# -- creation --------------------------------------------------------------------------------
@lowering(aten.full, aten.full_like, aten.new_full)
def full(g: GraphLowering, out, *args, **kwargs):
    value = args[-1] if "full_like" not in g.op else args[1]
    if "new_full" in g.op:
        value = args[2]
    (value,) = g.operands(out, value)
    return value


@lowering(aten.scalar_tensor)
def scalar_tensor(g: GraphLowering, out, value, **kwargs):
    (value,) = g.operands(out, value)
    return value


@lowering(aten.zeros, aten.zeros_like, aten.new_zeros, aten.empty, aten.empty_like,
          aten.new_empty, aten.empty_strided, aten.new_empty_strided, aten.empty_permuted)
def zeros(g: GraphLowering, out, *args, **kwargs):
    return g.const(0, g.type_of(out), g.shape_of(out))


@lowering(aten.ones, aten.ones_like, aten.new_ones)
def ones(g: GraphLowering, out, *args, **kwargs):
    return g.const(1, g.type_of(out), g.shape_of(out))


@lowering(aten.arange)
def arange(g: GraphLowering, out, *args, **kwargs):
    numbers = [a for a in args if isinstance(a, int | float) and not isinstance(a, bool)]
    start, step = (0, 1) if len(numbers) == 1 else (numbers[0], 1)
    if len(numbers) >= 3:
        step = numbers[2]
    element_type = g.type_of(out)
    wide = PrimitiveType.F64 if element_type.numpy.kind in "fV" else PrimitiveType.S64
    (n,) = g.shape_of(out)
    values = g.iota(wide, [n], 0)
    values = g.b.add(g.b.multiply(values, g.const(step, wide, [n])), g.const(start, wide, [n]))
    return g.convert(values, element_type)
