"""Algebraic simplifier rules for shape plumbing: reshape, transpose,
broadcast, iota, constant, copy and get-tuple-element.

Every rule here only moves or duplicates values, so all are exact. Before
layout assignment a reshape or transpose is never turned into a bitcast:
that needs layouts (XLA does it in its layout-sensitive run).
"""

from __future__ import annotations

import numpy as np

from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import ELEMENTWISE, Opcode
from xlapy.hlo.shape import Shape
from xlapy.passes.algsimp_core import Rewriter, Rule

Op = Opcode


# -- reshape -------------------------------------------------------------------------------
def reshape_noop(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x = op.operands[0]
    return x if x.shape.dimensions == op.shape.dimensions else None


def reshape_reshape(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x = op.operands[0]
    if x.opcode is not Op.RESHAPE:
        return None
    return b.reshape(x.operands[0], op.shape)


def reshape_scalar_broadcast(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x = op.operands[0]
    if x.opcode is not Op.BROADCAST or not x.operands[0].shape.is_scalar:
        return None
    return b.add(Op.BROADCAST, [x.operands[0]], op.shape, dimensions=())


# -- transpose -----------------------------------------------------------------------------
def transpose_identity(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    permutation = op.attrs["dimensions"]
    return op.operands[0] if list(permutation) == sorted(permutation) else None


def transpose_transpose(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Result dim j of the outer transpose is inner dim p2[j], which is x dim p1[p2[j]]."""
    x = op.operands[0]
    if x.opcode is not Op.TRANSPOSE:
        return None
    inner, outer = x.attrs["dimensions"], op.attrs["dimensions"]
    composed = tuple(inner[d] for d in outer)
    if composed == tuple(range(len(composed))):
        return x.operands[0]
    return b.add(Op.TRANSPOSE, [x.operands[0]], dimensions=composed)


def transpose_degenerate(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """A transpose that keeps the order of the dims larger than 1 moves only
    size-1 dims around: the elements stay in row-major order."""
    x = op.operands[0]
    permutation = op.attrs["dimensions"]
    moved = [d for d in permutation if x.shape.dimensions[d] != 1]
    if moved != sorted(moved) or list(permutation) == sorted(permutation):
        return None
    return b.add(Op.RESHAPE, [x], op.shape)


# -- broadcast -----------------------------------------------------------------------------
def broadcast_broadcast(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Inner dim i lands on outer operand dim d_in[i], which lands on d_out[d_in[i]]."""
    x = op.operands[0]
    if x.opcode is not Op.BROADCAST:
        return None
    outer = op.attrs["dimensions"]
    composed = tuple(outer[d] for d in x.attrs["dimensions"])
    return b.add(Op.BROADCAST, [x.operands[0]], op.shape, dimensions=composed)


def broadcast_reshape(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Adding only size-1 dims, in order, is a reshape."""
    x = op.operands[0]
    dims = list(op.attrs["dimensions"])
    if dims != sorted(dims) or x.shape.element_count != op.shape.element_count:
        return None
    return b.add(Op.RESHAPE, [x], op.shape)


def broadcast_iota(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x = op.operands[0]
    if x.opcode is not Op.IOTA:
        return None
    dimension = op.attrs["dimensions"][x.attrs["iota_dimension"]]
    return b.add(Op.IOTA, [], op.shape, iota_dimension=dimension)


def iota_degenerate(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """An iota along a dim of size <= 1 only ever counts to 0."""
    if op.shape.dimensions[op.attrs["iota_dimension"]] > 1:
        return None
    return b.full(0, op.shape)


# -- constant, copy, get-tuple-element ---------------------------------------------------
def constant_uniform(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Keeps splat constants small: one scalar, broadcast where used. Elements
    must agree bit for bit, so -0.0 and 0.0 (or NaN payloads) stay apart."""
    if not op.shape.is_array or op.shape.element_count < 2:
        return None
    literal = np.asarray(op.literal)
    raw = literal.reshape(-1).view(np.uint8).reshape(literal.size, -1)
    if not np.all(raw == raw[0]):
        return None
    scalar = b.constant(literal.reshape(-1)[0:1].reshape(()), op.shape.element_type)
    return b.broadcast(scalar, op.shape, ())


def copy_copy(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x = op.operands[0]
    if x.opcode is not Op.COPY:
        return None
    return b.add(Op.COPY, [x.operands[0]], op.shape)


def copy_noop(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """Before copy insertion a copy only matters for its layout. The entry's root
    copy stays: it gives the result a buffer of its own."""
    x = op.operands[0]
    module = b.computation.parent
    if x.shape != op.shape:
        return None
    if b.replacing_root and module is not None and b.computation is module.entry_computation:
        return None
    return x


def get_tuple_element_of_tuple(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    x = op.operands[0]
    return x.operands[op.attrs["index"]] if x.opcode is Op.TUPLE else None


# -- elementwise ops of broadcasts ----------------------------------------------------------
def sink_broadcast(op: HloInstruction, b: Rewriter) -> HloInstruction | None:
    """op(broadcast(x, d), broadcast(s)...) -> broadcast(op(x, s...), d): every operand a
    broadcast, of one array x's shape by the same dims or of scalars, so the op is
    computed once per element of x (XLA's TryToSinkBroadcastAfterOpWithUnique-
    NonScalarOperand). A layer norm's backward divides 1 by the broadcast row
    deviation: per row, not per element, and no row-constant array is stored."""
    if op.opcode not in ELEMENTWISE or not op.operands or not op.shape.is_array:
        return None
    common = None
    for operand in op.operands:
        if operand.opcode is not Op.BROADCAST:
            return None
        source = operand.operands[0]
        if source.shape.rank == 0:
            continue
        key = (source.shape.dimensions, tuple(operand.attrs["dimensions"]))
        if common is not None and common != key:
            return None
        common = key
    if common is None:
        return None
    dims, placed = common
    small = Shape.array(op.shape.element_type, dims)
    if small.element_count == op.shape.element_count:
        return None                         # only moves dims: nothing computed fewer times
    operands = []
    for operand in op.operands:
        source = operand.operands[0]
        operands.append(source if source.shape.rank else b.broadcast(
            source, Shape.array(source.shape.element_type, dims), ()))
    attrs = {k: v for k, v in op.attrs.items() if k != "metadata"}
    return b.broadcast(b.add(op.opcode, operands, small, **attrs), op.shape, placed)


RULES: dict[Opcode, tuple[Rule, ...]] = {
    Op.RESHAPE: (
        reshape_noop,                      # reshape<S>(x: S) -> x
        reshape_reshape,                   # reshape(reshape(x)) -> reshape(x)
        reshape_scalar_broadcast,          # reshape(broadcast(s)) -> broadcast(s)  (s scalar)
    ),
    Op.TRANSPOSE: (
        transpose_identity,                # transpose(x, id) -> x
        transpose_transpose,               # transpose(transpose(x, p1), p2) -> transpose(x, p1.p2)
        transpose_degenerate,              # transpose moving only 1-sized dims -> reshape(x)
    ),
    Op.BROADCAST: (
        broadcast_broadcast,               # broadcast(broadcast(x, d1), d2) -> broadcast(x, d2.d1)
        broadcast_reshape,                 # broadcast adding only 1-sized dims -> reshape(x)
        broadcast_iota,                    # broadcast(iota(i), d) -> iota(d[i])
    ),
    Op.IOTA: (
        iota_degenerate,                   # iota over a dim of size 1 -> 0
    ),
    Op.CONSTANT: (
        constant_uniform,                  # constant({c, c, ..., c}) -> broadcast(c)
    ),
    Op.COPY: (
        copy_copy,                         # copy(copy(x)) -> copy(x)
        copy_noop,                         # copy(x) -> x            (same layout, not the result)
    ),
    Op.GET_TUPLE_ELEMENT: (
        get_tuple_element_of_tuple,        # gte(tuple(x0, ..., xn), i) -> xi
    ),
}
"""Shape-plumbing rewrites by opcode, tried in order."""
for _opcode in ELEMENTWISE:
    RULES[_opcode] = RULES.get(_opcode, ()) + (sink_broadcast,)   # op(broadcasts) -> broadcast(op)
