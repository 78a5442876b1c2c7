"""Reductions over the major dimensions of a row-major array ("column" reductions).

A bias gradient sums f32[batch, seq, features] over batch and seq: each of the
`features` outputs is a sum down a column. Computed one output at a time (what
the element generator does) that is a strided scalar loop per output. Here
the whole rows are folded into the outputs instead:

    out[j] = init                       for every j of a chunk of the outputs
    for each row r:  out[j] = out[j] (+) x[r, j]

so the inner loop runs along the minor dimension, unit-stride and vectorised,
and each output still combines its elements in row order. Chunks of outputs
are split between threads. Only plain standalone reduces with a simple
reducer, stored and computed in the same type, and at most `MAX_ROWS` rows:
within one block the element generator's float sums are sequential too, so
the two agree; longer sums keep its blocked, compensated scheme.
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.backends.cpu import ir_types as T
from xlapy.backends.cpu.ir_array import minor_to_major
from xlapy.backends.cpu.loop_kernel import kernel_function
from xlapy.backends.cpu.loops import for_range
from xlapy.backends.cpu.reduce_generator import combine
from xlapy.backends.cpu.scalar_computation import simple_reducer
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.opcode import Opcode as Op

MAX_ROWS = 2048
"""The element generator's float sums are sequential within blocks of this many."""
CHUNK = 512
"""Outputs per chunk: their running values stay in L1 while the rows stream by."""
_TYPES = (P.F32, P.F64, P.S32, P.S64, P.U32, P.U64)


def _plan(instruction):
    """(rows R, outputs K) when `instruction` reduces the major dims of a row-major
    operand into a row-major result, else None."""
    if instruction.opcode is not Op.REDUCE or len(instruction.operands) != 2 \
            or instruction.shape.is_tuple:
        return None
    operand = instruction.operands[0]
    shape = operand.shape
    ptype = instruction.shape.element_type
    if ptype not in _TYPES or shape.element_type is not ptype \
            or simple_reducer(instruction.attr("to_apply")) is None:
        return None
    rank = shape.rank
    row_major = list(range(rank - 1, -1, -1))
    if list(minor_to_major(shape)) != row_major or \
            list(minor_to_major(instruction.shape)) != list(range(instruction.shape.rank - 1,
                                                                  -1, -1)):
        return None
    reduced = sorted(instruction.attr("dimensions") or ())
    if not reduced or reduced != list(range(len(reduced))) or len(reduced) == rank:
        return None
    rows = 1
    for d in reduced:
        rows *= shape.dimensions[d]
    outputs = instruction.shape.element_count
    if rows > MAX_ROWS or rows < 2 or outputs < 16:
        return None
    return rows, outputs


def emit_column_reduction(cg, instruction) -> bool:
    from xlapy.backends.cpu.codegen import _disjoint, _symbol

    plan = _plan(instruction)
    if plan is None:
        return False
    rows, outputs = plan
    ptype = instruction.shape.element_type
    element = T.storage_type(ptype)
    operands = cg.kernel_operands(instruction)
    out_slice = cg.output_leaves(instruction)[0][2]
    slices = [s for _, s in operands] + [out_slice]
    name = f"k{cg._kernels}_{_symbol(instruction.name)}"
    cg._kernels += 1
    fn, b, pointers, begin, end = kernel_function(cg.llmod, name, 3,
                                                  noalias=_disjoint(slices, 2))
    x, init, out = (b.bitcast(p, element.as_pointer()) for p in pointers)
    reducer = instruction.attr("to_apply")
    initial = b.load(init)
    c = lambda v: ir.Constant(T.I64, v)  # noqa: E731
    with for_range(b, begin, end, name="chunk") as chunk:
        lo = b.mul(chunk, c(CHUNK))
        hi = b.add(lo, c(CHUNK))
        hi = b.select(b.icmp_signed("<", hi, c(outputs)), hi, c(outputs))
        with for_range(b, lo, hi, name="j0") as j:
            b.store(initial, b.gep(out, [j]))
        with for_range(b, c(0), c(rows), name="row") as r:
            row = b.gep(x, [b.mul(r, c(outputs))])
            with for_range(b, lo, hi, name="j") as j:
                slot = b.gep(out, [j])
                value = combine(b, reducer, [b.load(slot)], [b.load(b.gep(row, [j]))],
                                [ptype])[0]
                b.store(value, slot)
    b.ret_void()
    chunks = -(-outputs // CHUNK)
    cg.call_kernel(fn, slices, chunks, rows * outputs)
    return True
