"""Reductions to a few values over a large input, split between threads.

`sum(x + y * z)` has one output element, so splitting the output (what loop
kernels do) gives one thread nothing to do. Instead the outermost reduced
dimension is cut into contiguous pieces (a few per thread, claimed by the
threads as they come: thread_pool.CHUNKS_PER_THREAD), each reduced from the
reducer's identity into a row of scratch memory; then one pass combines the
rows in order with the init value and evaluates whatever the fusion does
after the reduce (a mean's division). The pieces are fixed at compile time,
so the result does not depend on which thread ran which. Only for the simple reducers (add,
multiply, maximum, minimum, and, or), which XLA lets us reassociate.

A cheap reduction of an input too big for the caches (`sum(x + y*z)` over
2^24 floats: a few additions per element read) runs one vector per loop
iteration instead of the module's four: reading three such streams of
NumPy's arrays (16 bytes past a cache line, so every vector load spans two
lines), four vectors per iteration ran 3-5% slower, measured in turns in one
process (6.07-6.27 ms against 5.79-6.11); the loop is bound by memory either
way, and the four only hide latency a streaming loop does not have.
"""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from xlapy.backends.cpu import codegen, parallel
from xlapy.backends.cpu.thread_pool import CHUNKS_PER_THREAD
from xlapy.codegen import ir_types as T
from xlapy.codegen.generator import Generator
from xlapy.codegen.ir_array import IrArray, minor_to_major
from xlapy.codegen.loop_nest import emit_nest, kernel_function, outer_extent
from xlapy.codegen.loops import for_range
from xlapy.codegen.reduce_generator import combine
from xlapy.codegen.scalar_computation import simple_reducer
from xlapy.codegen.scope import Scope
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.opcode import Opcode as Op
from xlapy.hlo.shape import Shape

MAX_OUTPUTS = 64
STREAMING_BYTES = 16 << 20
"""Input bytes past which a reduction streams from memory: 2^20 floats in each of three
inputs (12 MiB) ran as fast with either count, 2^18 (3 MiB, in L2) 10% slower with one."""
_CHEAP = frozenset({Op.PARAMETER, Op.CONSTANT, Op.BROADCAST, Op.RESHAPE, Op.BITCAST,
                    Op.CONVERT, Op.ADD, Op.SUBTRACT, Op.MULTIPLY, Op.NEGATE, Op.ABS,
                    Op.MAXIMUM, Op.MINIMUM, Op.SELECT, Op.COMPARE, Op.AND, Op.OR, Op.NOT,
                    Op.COPY})
"""Ops a streaming reduction's input may be made of and stay bound by memory."""


def _identity(opcode, ptype: P):
    if opcode is Op.ADD:
        return -0.0 if ptype in (P.F16, P.BF16, P.F32, P.F64) else 0
    if opcode is Op.MULTIPLY:
        return 1
    if opcode is Op.AND:
        return True if ptype is P.PRED else -1
    if opcode is Op.OR:
        return 0
    if ptype in (P.F16, P.BF16, P.F32, P.F64):
        return -np.inf if opcode is Op.MAXIMUM else np.inf
    info = np.iinfo(ptype.numpy) if ptype is not P.PRED else None
    if info is None:
        return 0 if opcode is Op.MAXIMUM else 1
    return int(info.min) if opcode is Op.MAXIMUM else int(info.max)


def candidate(instruction):
    """The reduce to split, or None."""
    if instruction.opcode is Op.FUSION:
        computation = instruction.attr("calls")
        if instruction.shape.is_tuple:
            return None
        reduces = [i for i in computation.instructions if i.opcode is Op.REDUCE]
        if len(reduces) != 1:
            return None
        reduce = reduces[0]
        users = [i for i in computation.instructions if reduce in i.operands]
        if reduce is not computation.root_instruction and \
                any(u.opcode is Op.REDUCE for u in users):
            return None
    elif instruction.opcode is Op.REDUCE:
        reduce = instruction
    else:
        return None
    if len(reduce.operands) != 2 or reduce.shape.is_tuple:
        return None
    ptype = reduce.shape.element_type
    if ptype in (P.C64, P.C128) or simple_reducer(reduce.attr("to_apply")) is None:
        return None
    if reduce.shape.element_count > MAX_OUTPUTS or instruction.shape.element_count > MAX_OUTPUTS:
        return None
    return reduce


def emit_parallel_reduction(cg, instruction) -> bool:
    reduce = candidate(instruction)
    if reduce is None:
        return False
    operand = reduce.operands[0]
    threads = parallel.worth_parallelising(operand.shape.element_count, cg.options.threads)
    reduced = set(reduce.attr("dimensions") or ())
    order = [d for d in reversed(minor_to_major(operand.shape)) if d in reduced]
    if threads <= 1 or not order:
        return False
    outer = order[0]
    extent = operand.shape.dimensions[outer]
    threads = min(threads, extent)
    if threads <= 1:
        return False
    pieces = min(extent, threads * CHUNKS_PER_THREAD)   # (a late worker still finds some)
    ptype = reduce.shape.element_type
    partial_shape = Shape.array(ptype, (pieces, *reduce.shape.dimensions))
    scratch = cg.scratch(partial_shape.byte_size)

    operands = cg.kernel_operands(instruction)
    slices = [s for _, s in operands]
    name = f"k{cg._kernels}_{codegen.symbol_name(instruction.name)}"
    cg._kernels += 1
    fn, b, pointers, begin, end = kernel_function(cg.llmod, name, len(slices) + 1,
                                                  noalias=True)
    arrays = _arrays(instruction, b, pointers)
    with for_range(b, begin, end, name="chunk") as c:
        lo = b.sdiv(b.mul(c, ir.Constant(T.I64, extent)), ir.Constant(T.I64, pieces))
        hi = b.sdiv(b.mul(b.add(c, ir.Constant(T.I64, 1)), ir.Constant(T.I64, extent)),
                    ir.Constant(T.I64, pieces))
        g = Generator(cg.kernel_context(b), Scope(b), arrays)
        if _streaming(instruction, reduce):
            g.interleave[id(reduce)] = 1
        g.overrides[id(reduce)] = (T.constant(ptype, _identity(
            simple_reducer(reduce.attr("to_apply")), ptype)), {outer: (lo, hi)})
        rows = IrArray(b, b.gep(pointers[-1], [b.mul(c, ir.Constant(
            T.I64, reduce.shape.byte_size))]), reduce.shape)
        emit_nest(g, reduce, rows, ir.Constant(T.I64, 0),
                  ir.Constant(T.I64, outer_extent(reduce.shape)))
    b.ret_void()
    cg.call_kernel(fn, [*slices, scratch], pieces, threads * (1 << 20), threads=threads)

    # combine the rows, then the rest of the fusion
    out_slice = cg.output_leaves(instruction)[0][2]
    name = f"k{cg._kernels}_{codegen.symbol_name(instruction.name)}_combine"
    cg._kernels += 1
    fn, b, pointers, _, _ = kernel_function(cg.llmod, name, len(slices) + 2, noalias=False)
    arrays = _arrays(instruction, b, pointers)
    partials = IrArray(b, pointers[-2], partial_shape)
    g = Generator(cg.kernel_context(b), Scope(b), arrays)
    combined = _CombinedRows(reduce, partials, pieces, g)
    g.generated[id(reduce)] = combined
    out = IrArray(b, pointers[-1], instruction.shape)
    root = instruction.attr("calls").root_instruction if instruction.opcode is Op.FUSION \
        else instruction
    emit_nest(g, root, out, ir.Constant(T.I64, 0), ir.Constant(T.I64, outer_extent(out.shape)))
    b.ret_void()
    cg.call_kernel(fn, [*slices, scratch, out_slice], 1, 1)
    return True


def _streaming(instruction, reduce) -> bool:
    """Whether `reduce` reads more than the caches hold through cheap ops only."""
    read = sum(o.shape.byte_size for o in instruction.operands if o.shape.is_array)
    if read < STREAMING_BYTES:
        return False
    if instruction.opcode is not Op.FUSION:
        return True                         # the input itself, read from memory
    seen, stack = set(), [reduce.operands[0]]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.opcode not in _CHEAP:
            return False
        stack.extend(node.operands)
    return True


class _CombinedRows:
    """The reduce's value at an index: init combined with every piece's partial, in order."""

    def __init__(self, reduce, partials: IrArray, pieces: int, g: Generator):
        self.reduce, self.partials, self.pieces, self.g = reduce, partials, pieces, g

    def __call__(self, index):
        g, b = self.g, self.g.b
        reducer = self.reduce.attr("to_apply")
        ptype = self.reduce.shape.element_type
        acc = g.value(self.reduce.operands[1], ())
        with g.scope.at(max((i.depth for i in index), default=-1)):
            for t in range(self.pieces):
                row = self.partials.load(b, [ir.Constant(T.I64, t), *[i.value for i in index]])
                acc = combine(b, reducer, [acc], [row], [ptype])[0]
        return acc


def _arrays(instruction, b, pointers):
    if instruction.opcode is Op.FUSION:
        params = instruction.attr("calls").parameters
        return {p: IrArray(b, ptr, p.shape) for p, ptr in zip(params, pointers)}
    return {o: IrArray(b, ptr, o.shape) for o, ptr in zip(instruction.operands, pointers)}
