"""Algebraic simplifier rules for arrays put together from pads: the gradient of
a slice is its cotangent padded back to the operand's shape, so the gradient of
x[0:a], x[a:b], x[b:] (attention's query, key and value cut from one
projection) arrives as pad + pad + pad, each pad often masked again by a
select. Those become the concatenation they are: one contiguous copy per
piece instead of three bounds checks per element.

    select(pad(true, false, cfg), pad(x, v, cfg), v)   -> pad(x, v, cfg)
    pad(x, 0, cfg_x) + pad(y, 0, cfg_y)                 -> pad(concatenate(x, 0s, y), 0, cfg)
        (pads along one dimension, no interior padding, the two regions disjoint)

The second is exact up to the sign of zero (x + 0 for x = -0 is +0), as XLA's
own `A + 0 => A` is.
"""

from __future__ import annotations

import math

from xlapy.hlo.attributes import PaddingConfig, PaddingDimension
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.passes.algsimp_core import Rewriter, Rule, uniform_value
from xlapy.passes.algsimp_slicing import same_value

Op = Opcode


def select_masked_pad(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Where the mask (true padded with false) is true the pad holds x; elsewhere
    it holds its padding value, which is what the select would take there."""
    mask, placed, other = op.operands
    if mask.opcode is not Op.PAD or placed.opcode is not Op.PAD:
        return None
    if uniform_value(mask.operands[0]) is not True or uniform_value(mask.operands[1]) is not False:
        return None
    if mask.attrs["padding"] != placed.attrs["padding"]:
        return None
    value = placed.operands[1]
    if not (same_value(other, value) or (other.opcode is Op.BROADCAST
                                         and same_value(other.operands[0], value))):
        return None
    return placed


def _placement(pad: HloInstruction):
    """(dim, start, length) of a pad with +0 along one dimension without interior
    padding; None for anything else."""
    if pad.opcode is not Op.PAD:
        return None
    value = uniform_value(pad.operands[1])
    if value is None or isinstance(value, bool) or value != 0 or (
            isinstance(value, float) and math.copysign(1.0, value) < 0):
        return None
    dims = [(d, p) for d, p in enumerate(pad.attrs["padding"].dimensions)
            if p.low or p.high or p.interior]
    if len(dims) != 1:
        return None
    dim, p = dims[0]
    if p.interior or p.low < 0 or p.high < 0:
        return None
    return dim, p.low, pad.operands[0].shape.dimensions[dim]


def add_disjoint_pads(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Two zero pads filling disjoint parts of one dimension add up to their
    concatenation (with zeros between), padded."""
    x, y = op.operands
    px, py = _placement(x), _placement(y)
    if px is None or py is None or px[0] != py[0]:
        return None
    if px[1] > py[1]:
        (x, px), (y, py) = (y, py), (x, px)
    dim, start, length = px
    _, other_start, other_length = py
    gap = other_start - (start + length)
    if gap < 0:
        return None
    zero = x.operands[1]
    pieces = [x.operands[0]]
    if gap:
        dims = list(x.operands[0].shape.dimensions)
        dims[dim] = gap
        fill = Shape.array(op.shape.element_type, tuple(dims))
        pieces.append(b.add(Op.BROADCAST, [zero], fill, dimensions=()))
    pieces.append(y.operands[0])
    joined = b.add(Op.CONCATENATE, pieces, dimensions=(dim,))
    end = other_start + other_length
    padding = [PaddingDimension(0, 0, 0)] * op.shape.rank
    padding[dim] = PaddingDimension(start, op.shape.dimensions[dim] - end, 0)
    return b.add(Op.PAD, [joined, zero], padding=PaddingConfig(tuple(padding)))


RULES: dict[Opcode, tuple[Rule, ...]] = {
    Op.SELECT: (
        select_masked_pad,                 # select(pad(T, F), pad(x, v), v) -> pad(x, v)
    ),
    Op.ADD: (
        add_disjoint_pads,                 # pad(x, 0) + pad(y, 0), disjoint -> pad(concat)
    ),
}
"""Pad rewrites by opcode, tried after the other families'."""
