"""The C entry point of an ahead-of-time object, emitted as LLVM IR:

    int NAME_run(const void* const* args, void* const* results, void* temp);

It builds the allocation table `xlapy_entry` expects (backends/cpu/codegen.py)
from the caller's buffers: parameters are the arguments themselves, an
output allocation holding exactly one result is that result's buffer, and
the temporary arena and any other output allocation are carved out of
`temp` (NAME_TEMP_SIZE bytes, 64-byte aligned; NULL: malloc'd for the call).
Results not written in place are copied into the caller's buffers at the
end. Returns 0, 1 when `temp` was NULL and malloc failed, or 2 when a
kernel could not allocate its scratch memory.
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.aot.signature import ALIGN, result_shapes
from xlapy.backends.cpu import codegen
from xlapy.backends.cpu.control_flow import memcpy
from xlapy.backends.cpu.kernels.heap import aligned_malloc, free
from xlapy.codegen import ir_types as T
from xlapy.errors import CompileError

OK, NO_TEMP_MEMORY, NO_SCRATCH_MEMORY = 0, 1, 2


def _aligned(size: int) -> int:
    return -(-size // ALIGN) * ALIGN


def plan_temp(cg: codegen.Codegen) -> tuple[dict[int, int], dict[int, int], int]:
    """(output allocation -> result number it is, allocation -> offset in temp,
    temp bytes) for the module `cg` compiled."""
    assignment = cg.assignment
    shapes = result_shapes(cg.hlo)
    leaves_in = {}
    for number, shape in enumerate(shapes):
        index = (number,) if cg.hlo.entry_computation.root_instruction.shape.is_tuple else ()
        s = assignment.outputs.get(index)
        if s is None:
            raise CompileError(f"result {number} has no buffer")
        leaves_in.setdefault(s.allocation, []).append((number, s, shape))
    direct, offsets, at = {}, {}, 0
    for alloc in assignment.allocations:
        if alloc.kind not in ("output", "temp"):
            continue
        held = leaves_in.get(alloc.index, [])
        if alloc.kind == "output" and len(held) == 1 and held[0][1].offset == 0 \
                and alloc.size == held[0][2].byte_size:
            direct[alloc.index] = held[0][0]
            continue
        offsets[alloc.index] = at
        at += _aligned(alloc.size)
    return direct, offsets, at


def emit_run_function(cg: codegen.Codegen, name: str) -> int:
    """Add `NAME_run` to `cg`'s module; returns the temp bytes it needs."""
    if cg.assignment.donations:
        raise CompileError("the module aliases an output with an input "
                           "(input_output_alias); ahead-of-time arguments are read-only")
    direct, offsets, temp_bytes = plan_temp(cg)
    module = cg.llmod
    n_allocs = len(cg.assignment.allocations)
    fn_type = ir.FunctionType(T.I32, [T.I8P.as_pointer(), T.I8P.as_pointer(), T.I8P])
    fn = ir.Function(module, fn_type, f"{name}_run")
    args, results, temp = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    c = lambda v: ir.Constant(T.I64, v)  # noqa: E731
    table = b.alloca(T.I8P, size=ir.Constant(T.I32, n_allocs + 1), name="table")
    error_slot = b.gep(table, [ir.Constant(T.I32, n_allocs)])
    b.store(ir.Constant(T.I8P, None), error_slot)

    # temp: the caller's, or malloc'd for this call
    raw_slot = b.alloca(T.I8P, name="raw")
    base_slot = b.alloca(T.I8P, name="base")
    b.store(ir.Constant(T.I8P, None), raw_slot)
    b.store(temp, base_slot)
    no_temp = b.icmp_unsigned("==", temp, ir.Constant(T.I8P, None))
    with b.if_then(no_temp):
        raw, aligned = aligned_malloc(b, c(max(temp_bytes, 1)), T.I8)
        with b.if_then(b.icmp_unsigned("==", raw, ir.Constant(T.I8P, None))):
            b.ret(ir.Constant(T.I32, NO_TEMP_MEMORY))
        b.store(raw, raw_slot)
        b.store(aligned, base_slot)
    base = b.load(base_slot)

    entry = cg.hlo.entry_computation
    for alloc in cg.assignment.allocations:
        slot = b.gep(table, [ir.Constant(T.I32, alloc.index)])
        if alloc.kind == "parameter":
            pointer = b.load(b.gep(args, [c(alloc.parameter_number)]))
        elif alloc.index in direct:
            pointer = b.load(b.gep(results, [c(direct[alloc.index])]))
        elif alloc.index in offsets:
            pointer = b.gep(base, [c(offsets[alloc.index])])
        else:   # constants: globals of the object, read by the entry itself
            continue
        b.store(pointer, slot)

    b.call(cg.entry, [table, _error_reporter(module, n_allocs)])
    failed = b.icmp_unsigned("!=", b.load(error_slot), ir.Constant(T.I8P, None))
    with b.if_then(failed):
        free(b, b.load(raw_slot))
        b.ret(ir.Constant(T.I32, NO_SCRATCH_MEMORY))

    is_tuple = entry.root_instruction.shape.is_tuple
    for number, shape in enumerate(result_shapes(cg.hlo)):
        s = cg.assignment.outputs[(number,) if is_tuple else ()]
        alloc = cg.assignment.allocations[s.allocation]
        if alloc.index in direct:
            continue
        if alloc.kind == "parameter":
            source = b.load(b.gep(args, [c(alloc.parameter_number)]))
        elif alloc.kind == "constant":
            instruction = alloc.values[0].buffer.instruction
            source = b.bitcast(cg._constant_global(None, instruction, alloc.size), T.I8P)
        else:
            source = b.load(b.gep(table, [ir.Constant(T.I32, alloc.index)]))
        source = b.gep(source, [c(s.offset)])
        target = b.load(b.gep(results, [c(number)]))
        if shape.byte_size:
            memcpy(b, target, source, shape.byte_size)
    free(b, b.load(raw_slot))
    b.ret(ir.Constant(T.I32, OK))
    return temp_bytes


def _error_reporter(module: ir.Module, n_allocs: int) -> ir.Function:
    """The fallback the entry calls only to report a failed scratch allocation
    (AOT modules have no interpreter fallbacks): it marks the table's last slot."""
    fn = ir.Function(module, codegen.FALLBACK_TYPE, "xlapy_aot_report")
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    table = fn.args[1]
    marker = b.inttoptr(ir.Constant(T.I64, 1), T.I8P)
    b.store(marker, b.gep(table, [ir.Constant(T.I32, n_allocs)]))
    b.ret_void()
    return fn
