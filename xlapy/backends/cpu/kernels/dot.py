"""`dot` and dot-epilogue (kOutput) fusions through the GEMM kernel.

A dot whose contracting and free dimensions each collapse to one stride per
operand (every dot JAX emits for matmul, batched matmul and dense layers) is
a loop over its batch dimensions calling `gemm`. In a kOutput fusion the
product goes straight into the fusion's output buffer (or a scratch buffer
when the epilogue changes the element type) and the epilogue then runs as
an elementwise loop over it in place. Anything else takes the element
generator path (`dot_generator.py`)."""

from __future__ import annotations

import math

import llvmlite.ir as ir

from xlapy.backends.cpu import codegen
from xlapy.backends.cpu.kernels import convolution
from xlapy.backends.cpu.kernels.gemm import gemm_function
from xlapy.backends.cpu.runtime_library import FAST_GEMM_TYPES, gemm_declaration
from xlapy.backends.cpu.special_kernels import special
from xlapy.codegen import ir_types as T
from xlapy.codegen.dot_generator import dot_dims
from xlapy.codegen.generator import Generator
from xlapy.codegen.ir_array import IrArray, minor_to_major, strides
from xlapy.codegen.loop_nest import emit_nest, kernel_function, outer_extent
from xlapy.codegen.loops import for_range
from xlapy.codegen.scope import Scope
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.opcode import ELEMENTWISE
from xlapy.hlo.opcode import Opcode as Op

_GEMM_TYPES = frozenset({P.F32, P.F64, P.F16, P.BF16, P.S8, P.S16, P.S32, P.S64, P.U8, P.U16,
                         P.U32, P.U64, P.C64, P.C128})


def _plan(dot, out_shape):
    """(batch sizes, lhs/rhs/out batch strides, M, N, K, lhs (rs, cs), rhs (rs, cs), ldc)
    or None when the dot does not reduce to strided GEMMs. Several free (or
    contracting) dimensions act as one where they are laid out as one: a dense
    layer on [batch, seq, d] is a single [batch * seq, d] GEMM."""
    lhs, rhs = dot.operands
    if lhs.shape.element_type is not rhs.shape.element_type or \
            lhs.shape.element_type is not out_shape.element_type or \
            out_shape.element_type not in _GEMM_TYPES:
        return None
    lb, rb, lc, rc, lf, rf = dot_dims(dot)
    if list(minor_to_major(out_shape)) != list(range(out_shape.rank - 1, -1, -1)):
        return None
    if out_shape.rank != len(lb) + len(lf) + len(rf):
        return None
    ls, rs, os = strides(lhs.shape), strides(rhs.shape), strides(out_shape)
    ld, rd = lhs.shape.dimensions, rhs.shape.dimensions
    parts = [_collapsed(lf, ld, ls), _collapsed(rf, rd, rs), _collapsed(lc, ld, ls),
             _collapsed(rc, rd, rs)]
    if any(p is None for p in parts) or not lc:
        return None
    (m, lhs_row), (n, rhs_col), (k, lhs_col), (_, rhs_row) = parts
    batch = [(ld[a], ls[a], rs[c], os[i]) for i, (a, c) in enumerate(zip(lb, rb))]
    return batch, m, n, k, (lhs_row, lhs_col), (rhs_row, rhs_col), n


def _collapsed(dims, sizes, dim_strides):
    """(size, stride) of `dims` taken as one dimension, or None when they are not laid
    out as one (in this order); size-1 dimensions are ignored, none at all is (1, 0)."""
    size = 1
    for d in dims:
        size *= sizes[d]
    kept = [d for d in dims if sizes[d] != 1]
    if not kept:
        return size, 0
    for outer, inner in zip(kept, kept[1:]):
        if dim_strides[outer] != dim_strides[inner] * sizes[inner]:
            return None
    return size, dim_strides[kept[-1]]


def _gemm_kernel(cg, name: str, plan, ptype, slices) -> None:
    """Emit and call the kernel computing the dot of `plan` from slices (lhs, rhs, out).

    A batch of small products (attention's heads: 32 of 128 x 128 x 64) is
    split between threads by batch entry, each running the single-threaded
    GEMM: one parallel loop instead of one per entry, each too small to share
    well. Otherwise each product is a GEMM that threads itself."""
    batch, m, n, k = plan[:4]
    entries = math.prod(size for size, *_ in batch)
    threads = cg.options.threads
    by_entry = threads > 1 and entries >= threads and (
        m * n * k <= BATCH_SPLIT_MACS or entries % threads == 0)
    fn, b, pointers, begin, end = kernel_function(cg.llmod, name, 3, noalias=False)
    _gemm_calls(b, plan, ptype, _gemm_callee(cg, ptype, serial=by_entry), pointers, begin, end)
    b.ret_void()
    if by_entry:
        cg.call_kernel(fn, slices, entries, entries * m * n * k)
    else:
        cg.call_kernel(fn, slices, entries, 1, threads=1)   # each gemm threads itself


BATCH_SPLIT_MACS = 1 << 22
"""Up to this many multiply-adds per entry (a 160^3 product), a batched dot is
split between threads by entry whatever the batch size; larger entries only
when the batch divides evenly, else each GEMM threads itself."""


def _gemm_callee(cg, ptype, serial: bool) -> ir.Function:
    dtype = ptype.numpy
    threads = 1 if serial else cg.options.threads
    if cg.options.inline_runtime or dtype.name not in FAST_GEMM_TYPES:
        return gemm_function(cg.llmod, dtype, threads)
    # shared, compiled once per process (runtime_library.py)
    return gemm_declaration(cg.llmod, dtype, cg.options.threads, serial=serial)


def _gemm_calls(b, plan, ptype, gemm, pointers, begin, end) -> None:
    """gemm on the batch entries [begin, end), numbered with the last batch
    dimension minor."""
    batch, m, n, k, (ars, acs), (brs, bcs), ldc = plan
    elem = T.storage_type(ptype)
    lhs, rhs, out = (b.bitcast(p, elem.as_pointer()) for p in pointers)
    c = lambda v: ir.Constant(T.I64, v)  # noqa: E731
    with for_range(b, begin, end, name="entry") as entry:
        offsets = [c(0), c(0), c(0)]
        rest = entry
        for size, *strides in reversed(batch):
            index = b.srem(rest, c(size))
            rest = b.sdiv(rest, c(size))
            offsets = [b.add(o, b.mul(index, c(s))) for o, s in zip(offsets, strides)]
        lo, ro, oo = offsets
        b.call(gemm, [c(m), c(n), c(k), b.gep(lhs, [lo]), c(ars), c(acs),
                      b.gep(rhs, [ro]), c(brs), c(bcs), b.gep(out, [oo]), c(ldc)])


@special(Op.DOT)
def dot_kernel(cg, instruction) -> bool:
    plan = _plan(instruction, instruction.shape)
    if plan is None:
        return False
    operands = cg.kernel_operands(instruction)
    outputs = cg.output_leaves(instruction)
    slices = [s for _, s in operands] + [outputs[0][2]]
    name = f"k{cg._kernels}_dot"
    cg._kernels += 1
    _gemm_kernel(cg, name, plan, instruction.shape.element_type, slices)
    return True


@special(Op.FUSION)
def output_fusion(cg, instruction) -> bool:
    """kOutput fusions: a dot's (here) or a convolution's (`convolution.py`)."""
    if _dot_output_fusion(cg, instruction):
        return True
    return convolution.output_fusion(cg, instruction)


def _dot_output_fusion(cg, instruction) -> bool:
    computation = instruction.attr("calls")
    root = computation.root_instruction
    if root.opcode is Op.TUPLE or instruction.shape.is_tuple:
        return False
    dots = [i for i in computation.instructions if i.opcode is Op.DOT]
    if len(dots) != 1 or any(i.opcode not in ELEMENTWISE and i.opcode not in
                             (Op.PARAMETER, Op.CONSTANT, Op.BROADCAST, Op.DOT, Op.RESHAPE,
                              Op.BITCAST, Op.TRANSPOSE, Op.COPY)
                             for i in computation.instructions):
        return False
    dot = dots[0]
    if any(o.opcode is not Op.PARAMETER for o in dot.operands):
        return False
    plan = _plan(dot, dot.shape)
    if plan is None:
        return False
    in_place = (dot.shape.element_type is instruction.shape.element_type and
                dot.shape.dimensions == instruction.shape.dimensions and
                list(minor_to_major(instruction.shape)) == list(minor_to_major(dot.shape)))
    operands = cg.kernel_operands(instruction)
    out_slice = cg.output_leaves(instruction)[0][2]
    # buffer assignment may put the output over an operand the epilogue still reads
    in_place = in_place and not any(_overlap(s, out_slice) for _, s in operands)
    name = f"k{cg._kernels}_{''.join(c if c.isalnum() else '_' for c in instruction.name)}"
    cg._kernels += 1
    if in_place:
        _gemm_then_epilogue(cg, instruction, dot, plan, operands, out_slice, out_slice, name)
    else:
        with cg.heap_scratch(dot.shape.byte_size) as product:
            _gemm_then_epilogue(cg, instruction, dot, plan, operands, product, out_slice, name)
    return True


def _gemm_then_epilogue(cg, instruction, dot, plan, operands, product, out_slice, name):
    """The product goes into `product` (the output buffer itself when it may: one
    kernel, GEMM threads itself), then the epilogue runs over it as a loop
    kernel split between threads like any elementwise loop (a GELU-gradient
    epilogue over f32[8,128,1024] had cost twice its GEMM on one thread)."""
    lhs, rhs = (operands[o.parameter_number][1] for o in dot.operands)
    _gemm_kernel(cg, name + "_gemm", plan, dot.shape.element_type, [lhs, rhs, product])
    if instruction.attr("calls").root_instruction is dot:
        return
    # The product (in place), and an operand whose buffer the output takes over,
    # are read through the output pointer (a GELU-gradient epilogue whose loop
    # two pointers to one buffer kept scalar cost more than its GEMM).
    fn, b, reads, (out,), slices, begin, end = codegen.in_place_kernel(
        cg.llmod, name, [s for _, s in operands] + [product], [out_slice])
    _emit_epilogue(cg, b, instruction, dot, reads[:-1] + [out], reads[-1], begin, end)
    b.ret_void()
    work = instruction.shape.element_count * codegen.work_per_element(instruction)
    cg.call_kernel(fn, slices, outer_extent(instruction.shape), work)


def _emit_epilogue(cg, b, instruction, dot, pointers, product, begin, end) -> None:
    """The fused computation's root over rows [begin, end), the dot read from `product`."""
    computation = instruction.attr("calls")
    if computation.root_instruction is dot:
        return
    arrays = {p: IrArray(b, ptr, p.shape) for p, ptr in zip(computation.parameters, pointers)}
    arrays[dot] = IrArray(b, product, dot.shape)
    g = Generator(codegen.KernelContext(cg, b), Scope(b), arrays)
    emit_nest(g, computation.root_instruction, IrArray(b, pointers[-1], instruction.shape),
              begin, end)


def _overlap(a, b) -> bool:
    return a.allocation == b.allocation and a.offset < b.offset + b.size and \
        b.offset < a.offset + a.size


