"""Algebraic simplifier rules for ops that cut, join, pad and flip arrays:
slice, concatenate, pad, reverse, dynamic-slice and dynamic-update-slice.

Every rule here only moves values, so all are exact. Constant start indices
of a dynamic slice are clamped at compile time exactly as XLA clamps them at
run time: into [0, operand_dim - slice_size].
"""

from __future__ import annotations

import numpy as np

from xlapy.hlo.attributes import PaddingConfig, PaddingDimension, SliceRange
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.passes.algsimp_core import Rewriter, Rule, uniform_value

Op = Opcode


def _span(start: int, size: int, stride: int) -> SliceRange:
    """The slice range that takes `size` elements from `start` every `stride`."""
    limit = start + (size - 1) * stride + 1 if size > 0 else start
    return SliceRange(start, limit, stride)


# -- slice ---------------------------------------------------------------------------------
def slice_noop(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Same dims as the operand means every range is [0:n] (or a size-1 dim)."""
    x = op.operands[0]
    return x if x.shape.dimensions == op.shape.dimensions else None


def slice_slice(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Element k of the outer slice is inner element s2 + k*t2, which is x
    element s1 + (s2 + k*t2)*t1."""
    inner = op.operands[0]
    if inner.opcode is not Op.SLICE:
        return None
    ranges = tuple(_span(r1.start + r2.start * r1.stride, size, r1.stride * r2.stride)
                   for r1, r2, size in zip(inner.attrs["slice"], op.attrs["slice"],
                                           op.shape.dimensions))
    return b.add(Op.SLICE, [inner.operands[0]], slice=ranges)


def slice_concatenate(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """A slice that reads from one operand of a concatenate slices that operand."""
    concat = op.operands[0]
    if concat.opcode is not Op.CONCATENATE or len(concat.operands) < 2:
        return None
    dim = concat.attrs["dimensions"][0]
    ranges = list(op.attrs["slice"])
    taken = op.shape.dimensions[dim]
    if taken == 0:
        return None
    first = ranges[dim].start
    last = first + (taken - 1) * ranges[dim].stride
    offset = 0
    for piece in concat.operands:
        size = piece.shape.dimensions[dim]
        if offset <= first and last < offset + size:
            ranges[dim] = _span(first - offset, taken, ranges[dim].stride)
            return b.add(Op.SLICE, [piece], slice=tuple(ranges))
        offset += size
    return None


def slice_broadcast(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Slicing a broadcast slices its operand along the dims it came from."""
    bcast = op.operands[0]
    if bcast.opcode is not Op.BROADCAST:
        return None
    x = bcast.operands[0]
    dims = bcast.attrs["dimensions"]
    ranges = tuple(op.attrs["slice"][d] for d in dims)
    sizes = [op.shape.dimensions[d] for d in dims]
    sliced = x if list(x.shape.dimensions) == sizes else b.add(Op.SLICE, [x], slice=ranges)
    return b.add(Op.BROADCAST, [sliced], op.shape, dimensions=dims)


# -- concatenate -----------------------------------------------------------------------------
def concatenate_single(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    return op.operands[0] if len(op.operands) == 1 else None


def concatenate_empty(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    kept = [x for x in op.operands if x.shape.element_count > 0]
    if len(kept) == len(op.operands):
        return None
    if len(kept) == 1:
        return kept[0]
    if not kept:   # an empty result: only an operand of exactly its shape replaces it
        same = [x for x in op.operands if x.shape.dimensions == op.shape.dimensions]
        return same[0] if same else None
    return b.add(Op.CONCATENATE, kept, dimensions=op.attrs["dimensions"])


def concatenate_flatten(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    dims = op.attrs["dimensions"]
    nested = [x.opcode is Op.CONCATENATE and x.attrs["dimensions"] == dims
              for x in op.operands]
    if not any(nested):
        return None
    flat = [y for x, inner in zip(op.operands, nested) for y in (x.operands if inner else [x])]
    return b.add(Op.CONCATENATE, flat, dimensions=dims)


def _unstrided_slice_of(x: HloInstruction) -> HloInstruction | None:
    if x.opcode is Op.SLICE and all(r.stride == 1 for r in x.attrs["slice"]):
        return x.operands[0]
    return None


def _continues(run: list[HloInstruction], x: HloInstruction, dim: int) -> bool:
    """`x` slices the same operand as `run`, starting where it ends along `dim`
    and with the same ranges elsewhere."""
    last = run[-1]
    source = _unstrided_slice_of(last)
    if source is None or _unstrided_slice_of(x) is not source:
        return False
    a, b = last.attrs["slice"], x.attrs["slice"]
    return b[dim].start == a[dim].limit and all(
        a[i] == b[i] for i in range(len(a)) if i != dim)


def concatenate_slices(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Adjacent unstrided slices of one operand join into one slice."""
    dim = op.attrs["dimensions"][0]
    runs: list[list[HloInstruction]] = []
    for x in op.operands:
        if runs and _continues(runs[-1], x, dim):
            runs[-1].append(x)
        else:
            runs.append([x])
    if len(runs) == len(op.operands):
        return None
    pieces = []
    for run in runs:
        if len(run) == 1:
            pieces.append(run[0])
            continue
        ranges = list(run[0].attrs["slice"])
        ranges[dim] = SliceRange(ranges[dim].start, run[-1].attrs["slice"][dim].limit)
        pieces.append(b.add(Op.SLICE, [run[0].operands[0]], slice=tuple(ranges)))
    if len(pieces) == 1:
        return pieces[0]
    return b.add(Op.CONCATENATE, pieces, dimensions=(dim,))


# -- pad -------------------------------------------------------------------------------------
def pad_noop(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    padding = op.attrs["padding"].dimensions
    if any(d.low or d.high or d.interior for d in padding):
        return None
    return op.operands[0]


def pad_empty_operand(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Padding nothing leaves only padding."""
    x, value = op.operands
    if x.shape.element_count > 0:
        return None
    return b.add(Op.BROADCAST, [value], op.shape, dimensions=())


def same_value(a: HloInstruction, b: HloInstruction) -> bool:
    """The same instruction, or scalar constants equal bit for bit."""
    if a is b:
        return True
    return (a.opcode is Op.CONSTANT and b.opcode is Op.CONSTANT
            and a.shape.compatible(b.shape)
            and np.asarray(a.literal).tobytes() == np.asarray(b.literal).tobytes())


def pad_pad(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Edge padding around a pad with the same value widens its edges."""
    inner, value = op.operands
    if inner.opcode is not Op.PAD or not same_value(inner.operands[1], value):
        return None
    outer_dims, inner_dims = op.attrs["padding"].dimensions, inner.attrs["padding"].dimensions
    if any(d.interior or d.low < 0 or d.high < 0 for d in outer_dims):
        return None
    if any(d.low < 0 or d.high < 0 for d in inner_dims):
        return None
    merged = PaddingConfig(tuple(
        PaddingDimension(i.low + o.low, i.high + o.high, i.interior)
        for i, o in zip(inner_dims, outer_dims)))
    return b.add(Op.PAD, [inner.operands[0], value], padding=merged)


# -- reverse ---------------------------------------------------------------------------------
def reverse_noop(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    dims = op.attrs["dimensions"]
    return op.operands[0] if all(op.shape.dimensions[d] <= 1 for d in dims) else None


def reverse_reverse(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Reversing a dim twice restores it; what remains is the symmetric difference."""
    inner = op.operands[0]
    if inner.opcode is not Op.REVERSE:
        return None
    dims = tuple(sorted(set(inner.attrs["dimensions"]) ^ set(op.attrs["dimensions"])))
    if not dims:
        return inner.operands[0]
    return b.add(Op.REVERSE, [inner.operands[0]], dimensions=dims)


# -- dynamic-slice, dynamic-update-slice ---------------------------------------------------
def dynamic_slice_full(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Clamping puts every start at 0 when the slice is as large as the operand."""
    x = op.operands[0]
    return x if x.shape.dimensions == op.shape.dimensions else None


def dynamic_slice_constant(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, *indices = op.operands
    if len(indices) != x.shape.rank or any(i.opcode is not Op.CONSTANT for i in indices):
        return None
    ranges = []
    for index, dim, size in zip(indices, x.shape.dimensions, op.shape.dimensions):
        start = min(max(uniform_value(index), 0), dim - size)
        ranges.append(SliceRange(start, start + size))
    return b.add(Op.SLICE, [x], slice=tuple(ranges))


def dynamic_update_slice_full(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, update = op.operands[:2]
    return update if update.shape.dimensions == x.shape.dimensions else None


def dynamic_update_slice_empty(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x, update = op.operands[:2]
    return x if update.shape.element_count == 0 else None


RULES: dict[Opcode, tuple[Rule, ...]] = {
    Op.SLICE: (
        slice_noop,                        # x[0:n] -> x
        slice_slice,                       # x[a:b:s][c:d:t] -> x[a+c*s : ... : s*t]
        slice_concatenate,                 # concat(x, y)[i:j] -> x[i:j]  (inside x)
        slice_broadcast,                   # broadcast(x)[r] -> broadcast(x[r of x's dims])
    ),
    Op.CONCATENATE: (
        concatenate_single,                # concat(x) -> x
        concatenate_empty,                 # concat(x, [], y) -> concat(x, y)
        concatenate_flatten,               # concat(x, concat(y, z)) -> concat(x, y, z)
        concatenate_slices,                # concat(x[i:j], x[j:k]) -> x[i:k]
    ),
    Op.PAD: (
        pad_noop,                          # pad(x, v, 0_0) -> x
        pad_empty_operand,                 # pad([], v) -> broadcast(v)
        pad_pad,                           # pad(pad(x, v, e1), v, e2) -> pad(x, v, e1 + e2)
    ),
    Op.REVERSE: (
        reverse_noop,                      # reverse of 1-sized dims -> x
        reverse_reverse,                   # reverse(reverse(x, A), B) -> reverse(x, A ^ B)
    ),
    Op.DYNAMIC_SLICE: (
        dynamic_slice_full,                # dynamic-slice(x, i..) of x's size -> x
        dynamic_slice_constant,            # dynamic-slice(x, c..) -> slice(x, clamp(c))
    ),
    Op.DYNAMIC_UPDATE_SLICE: (
        dynamic_update_slice_full,         # dus(x, u, i..) with u of x's size -> u
        dynamic_update_slice_empty,        # dus(x, [], i..) -> x
    ),
}
"""Slicing rewrites by opcode, tried in order."""
