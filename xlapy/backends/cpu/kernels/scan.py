"""Running reductions (cumsum, cumprod, cummax...) as scans.

`lax.cumsum` is a reduce-window whose window spans the whole axis, padded by
n-1 on one side: element k folds x[0..k]. Evaluated window by window that is
n²/2 operations per line (a 2048-long cumsum took 676x NumPy's time); as a
scan it is one per element:

    run[i] = init;   for k:  run[i] = run[i] ⊕ x[o, k, i];  out[o, k, i] = run[i]

with o over the dimensions outside the axis and i over those inside it (in
layout order), so the inner loop is unit-stride and vectorises, and lines of
o and chunks of i split between threads. The running values stay in the
compute type (f32 for f16 and bf16, as the element generator's reductions
accumulate), on the stack: one per line when the axis is the minor one.
A reversed scan (padding n-1 after) runs k from the end. The fold's order
within an output element is the window's for a forward scan; a reversed
one folds from the far end, which reassociates the reducer (XLA leaves
reduction order unspecified).

`prefix_scan` recognises the pattern; the fusion pass keeps such a
reduce-window out of fusions, so this kernel always reads and writes memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import llvmlite.ir as ir

from xlapy.backends.cpu import codegen
from xlapy.codegen import ir_types as T
from xlapy.codegen.ir_array import IrArray, minor_to_major
from xlapy.codegen.loop_nest import kernel_function
from xlapy.codegen.loops import for_range
from xlapy.codegen.reduce_generator import combine
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode as Op
from xlapy.hlo.shape import Shape
from xlapy.passes.fusion_cost import running_axis

CHUNK = 512
"""Inner elements per work item: a chunk's running values stay in L1."""


@dataclass(frozen=True)
class Scan:
    axis: int
    reverse: bool
    outer: int     # lines: the product of the dimensions outside the axis
    length: int    # the axis
    inner: int     # the product of the dimensions inside it (1: the minor axis)


def prefix_scan(instruction: HloInstruction) -> Scan | None:
    """The scan a reduce-window computes, or None: a running reduction
    (`fusion_cost.running_axis`) of one real operand of the result's shape and layout."""
    if instruction.opcode is not Op.REDUCE_WINDOW or len(instruction.operands) != 2:
        return None
    operand, shape = instruction.operands[0].shape, instruction.shape
    if not shape.is_array or operand.dimensions != shape.dimensions or shape.rank == 0 \
            or shape.element_type in (P.C64, P.C128) or operand.element_type != shape.element_type \
            or list(minor_to_major(operand)) != list(minor_to_major(shape)):
        return None
    found = running_axis(instruction)
    if found is None:
        return None
    axis, reverse = found
    order = list(reversed(minor_to_major(shape)))   # major to minor
    at = order.index(axis)
    outer = inner = 1
    for d in order[:at]:
        outer *= shape.dimensions[d]
    for d in order[at + 1:]:
        inner *= shape.dimensions[d]
    return Scan(axis, reverse, outer, shape.dimensions[axis], inner)


def emit_scan(cg, instruction: HloInstruction) -> bool:
    """The scan kernel for `instruction`, or False when it is no prefix scan."""
    scan = prefix_scan(instruction)
    if scan is None or instruction.shape.element_count == 0:
        return False
    (source, source_slice), (init, init_slice) = cg.kernel_operands(instruction)
    out_slice = cg.output_leaves(instruction)[0][2]
    slices = [source_slice, init_slice, out_slice]
    name = f"k{cg._kernels}_{codegen.symbol_name(instruction.name)}"
    cg._kernels += 1
    fn, b, (x_ptr, init_ptr, out_ptr), begin, end = kernel_function(
        cg.llmod, name, 3, noalias=codegen.disjoint(slices, 2))
    ptype = instruction.shape.element_type
    flat = Shape.array(ptype, (instruction.shape.element_count,))
    x = IrArray(b, x_ptr, flat)
    out = IrArray(b, out_ptr, flat)
    init_value = IrArray(b, init_ptr, init.shape).load(b, [])
    reducer = instruction.attr("to_apply")
    c = lambda v: ir.Constant(T.I64, v)  # noqa: E731
    # the running values, in the compute type (f16 and bf16 accumulate in f32, as the
    # element generator's reductions do): one per line, or a chunk's of one line
    width = 1 if scan.inner == 1 else CHUNK
    with b.goto_entry_block():
        b.position_at_start(fn.entry_basic_block)
        running = b.alloca(ir.ArrayType(init_value.type, width))
    slot = lambda i: b.gep(running, [c(0), i], inbounds=True)  # noqa: E731
    chunks = -(-scan.inner // width)
    with for_range(b, begin, end, name="item") as item:
        line = b.udiv(item, c(chunks))
        lo = b.mul(b.urem(item, c(chunks)), c(width))
        hi = b.add(lo, c(width))
        hi = b.select(b.icmp_unsigned("<", hi, c(scan.inner)), hi, c(scan.inner))
        with for_range(b, lo, hi, name="i0") as i:
            b.store(init_value, slot(b.sub(i, lo)))
        base = b.mul(line, c(scan.length * scan.inner))
        with for_range(b, c(0), c(scan.length), name="k") as step:
            k = b.sub(c(scan.length - 1), step) if scan.reverse else step
            row = b.add(base, b.mul(k, c(scan.inner)))
            with for_range(b, lo, hi, name="i") as i:
                at = b.add(row, i)
                here = slot(b.sub(i, lo))
                total = combine(b, reducer, [b.load(here)], [x.load(b, [at])], [ptype])[0]
                b.store(total, here)
                out.store(b, total, [at])
    b.ret_void()
    items = scan.outer * chunks
    cg.call_kernel(fn, slices, items, instruction.shape.element_count * 4)
    return True


__all__ = ["CHUNK", "Scan", "emit_scan", "prefix_scan"]
