"""Whole-module code generation: one LLVM module, one entry point.

`void xlapy_entry(i8** allocations, void (*fallback)(i64, i8**))` runs the
whole HLO module: `allocations[k]` is the base address of buffer-assignment
allocation k (parameters, outputs, the temporary arena; constants are
globals of the object itself). Instructions run in schedule order; each
kernel is an internal function taking its buffers as `noalias` pointers
(where buffer assignment proves they do not overlap) plus an outer-loop
range, so large kernels are split between threads with `parallel_for`.
Control flow (`while`, `conditional`, `call`) is emitted inline as branches
around the kernels of the called computations.

An instruction no native emitter handles (an op outside the issue's list,
such as `fft`) calls `fallback(k, allocations)` once per execution: the
Python side evaluates instruction k with the interpreter on the buffers in
place. `Codegen.fallbacks` lists them; ahead-of-time compilation refuses
modules that have any.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import llvmlite.ir as ir

from xlapy.analysis.buffer_assignment import BufferAssignment, Slice
from xlapy.backends.cpu import lowering, parallel
from xlapy.backends.cpu.column_reduce import emit_column_reduction
from xlapy.backends.cpu.control_flow import emit_control_flow, memcpy
from xlapy.backends.cpu.kernels.heap import ALIGN, aligned_malloc, free
from xlapy.backends.cpu.llvm_target import aot_target_machine, new_module
from xlapy.backends.cpu.llvm_workarounds import apply as steer_llvm
from xlapy.backends.cpu.options import CpuOptions
from xlapy.backends.cpu.parallel_reduce import emit_parallel_reduction
from xlapy.backends.cpu.profiling import ProfileCounters
from xlapy.backends.cpu.special_kernels import emit_special
from xlapy.backends.cpu.thread_pool import CHUNKS_PER_THREAD
from xlapy.codegen import ir_types as T
from xlapy.codegen.constants import literal_bytes
from xlapy.codegen.elemental import FAST_MATH, MISCOMPILED
from xlapy.codegen.generator import Generator
from xlapy.codegen.intrinsics import intrinsic
from xlapy.codegen.ir_array import IrArray, is_row_major, minor_to_major
from xlapy.codegen.loop_nest import emit_nest, group_leaves, kernel_function, outer_extent
from xlapy.codegen.scope import Scope
from xlapy.errors import CompileError
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.opcode import Opcode as Op

ENTRY = "xlapy_entry"
OUT_OF_MEMORY = -1
"""The fallback number an execution reports when a kernel's scratch malloc fails."""

COLLECTIVE_BASE = 1 << 40
"""Callback numbers from here on are collectives (`Codegen.collectives`), not fallbacks."""
FALLBACK_TYPE = ir.FunctionType(ir.VoidType(), [T.I64, T.I8P.as_pointer()])

_INTERNAL_ERRORS = (ValueError, TypeError, KeyError, AttributeError, IndexError,
                    AssertionError)
"""What an emitter's bug raises (llvmlite's IR checks raise ValueError/TypeError)."""


class Codegen:
    def __init__(self, module: HloModule, assignment: BufferAssignment, options: CpuOptions,
                 name: str = "xlapy_module"):
        self.hlo = module
        self.assignment = assignment
        self.options = options
        target = options.target   # (triple, cpu, features) ahead of time; None: this host
        self.llmod = new_module(name, aot_target_machine(*target), target[2]) if target \
            else new_module(name)
        self.llmod.xlapy_runtime = set()   # runtime-library kernels the module calls
        self.llmod.xlapy_inline_runtime = options.inline_runtime   # AOT: carries its own
        if options.target:
            self.llmod.xlapy_target_features = options.target[2]
        self.fallbacks: list[HloInstruction] = []
        self.fallback_reasons: list[str] = []
        """Why each of `fallbacks` runs in the evaluator (the lowering table's words,
        or the emitter's refusal)."""
        self.collectives: list[HloInstruction] = []
        """The collectives the code hands to the runtime, by number (`emit_collective`)."""
        self._constants: dict[int, ir.GlobalVariable] = {}
        self._fused_constants: dict[int, ir.GlobalVariable] = {}
        self._kernels = 0
        fn_type = ir.FunctionType(ir.VoidType(), [T.I8P.as_pointer(), FALLBACK_TYPE.as_pointer()])
        self.entry = ir.Function(self.llmod, fn_type, ENTRY)
        self.table, self.fallback = self.entry.args
        self.b = ir.IRBuilder(self.entry.append_basic_block("entry"))
        self._bases: dict[int, ir.Value] = {}
        self.profile = None
        """ProfileCounters when profiling; `profiled` lists the instructions it times."""
        self.profiled: list[HloInstruction] = []

    # -- public -------------------------------------------------------------------------
    def emit(self) -> ir.Module:
        steer_llvm()   # before anything is optimised: LLVM options it miscompiles without
        token = FAST_MATH.set(("fast",) if self.options.fast_math else ())
        broken = MISCOMPILED.set(self.options.miscompile)
        try:
            for alloc in self.assignment.allocations:
                self._bases[alloc.index] = self._base(alloc)
            restore = self._flush_denormals() if self.options.flush_denormals else None
            if self.options.profile:
                self.profile = ProfileCounters(self.llmod, self.b,
                                               len(self.hlo.entry_computation.instructions))
            self.emit_computation(self.hlo.entry_computation)
            self._donation_copies()
            if restore is not None:
                restore()
            self.b.ret_void()
        finally:
            FAST_MATH.reset(token)
            MISCOMPILED.reset(broken)
        return self.llmod

    def _flush_denormals(self):
        """Set FTZ and DAZ in MXCSR for this execution (x86; threads started by
        parallel loops inherit it); returns the function that restores it."""
        if not self.llmod.triple.startswith(("x86_64", "i686")):
            return None
        b = self.b
        saved = b.alloca(T.I32)
        intrinsic(b, "x86.sse.stmxcsr", [b.bitcast(saved, T.I8P)], ret=ir.VoidType(),
                  overloads=[])
        flushed = b.alloca(T.I32)
        b.store(b.or_(b.load(saved), ir.Constant(T.I32, 0x8040)), flushed)
        intrinsic(b, "x86.sse.ldmxcsr", [b.bitcast(flushed, T.I8P)], ret=ir.VoidType(),
                  overloads=[])
        return lambda: intrinsic(b, "x86.sse.ldmxcsr", [b.bitcast(saved, T.I8P)],
                                 ret=ir.VoidType(), overloads=[])

    # -- memory -------------------------------------------------------------------------
    def _base(self, alloc) -> ir.Value:
        if alloc.kind == "constant":
            instruction = alloc.values[0].buffer.instruction
            return self.b.bitcast(self._constant_global(alloc.index, instruction, alloc.size),
                                  T.I8P)
        return self.b.load(self.b.gep(self.table, [ir.Constant(T.I32, alloc.index)]),
                           name=f"alloc{alloc.index}")

    def _constant_global(self, key, instruction: HloInstruction, size: int):
        data = literal_bytes(instruction.literal, instruction.shape)
        data = data + bytes(max(0, size - len(data)))
        t = ir.ArrayType(T.I8, max(len(data), 1))
        g = ir.GlobalVariable(self.llmod, t, f"xlapy_const_{len(self.llmod.globals)}")
        g.global_constant = True
        g.linkage = "internal"
        g.align = 64
        g.initializer = ir.Constant(t, bytearray(data or b"\0"))
        return g

    def constant_array(self, instruction: HloInstruction, b: ir.IRBuilder) -> IrArray:
        """A constant inside a fused computation, as a global array."""
        g = self._fused_constants.get(id(instruction))
        if g is None:
            g = self._constant_global(None, instruction, 0)
            self._fused_constants[id(instruction)] = g
        return IrArray(b, b.bitcast(g, T.I8P), instruction.shape)

    def scratch(self, size: int) -> Slice:
        """Stack memory of the entry function, as a pseudo-slice for `call_kernel`."""
        key = min([k for k in self._bases if k < 0], default=0) - 1
        with self.b.goto_entry_block():
            self.b.position_at_start(self.entry.entry_basic_block)
            slot = self.b.alloca(ir.ArrayType(T.I8, max(size, 1)))
            slot.align = 64
            self._bases[key] = self.b.bitcast(slot, T.I8P)
        return Slice(key, 0, size)

    @contextlib.contextmanager
    def heap_scratch(self, size: int):
        """Heap memory for the kernels emitted inside the block (too big for the
        stack), as a pseudo-slice. Where malloc fails the block's code is
        skipped and the execution reports OUT_OF_MEMORY through the fallback,
        so the caller gets MemoryError, never a crash."""
        b = self.b
        raw, aligned = aligned_malloc(b, ir.Constant(T.I64, max(size, 1)), T.I8)
        failed = b.icmp_unsigned("==", raw, ir.Constant(T.I8P, None))
        key = min([k for k in self._bases if k < 0], default=0) - 1
        with b.if_else(failed) as (then, otherwise):
            with then:
                b.call(self.fallback, [ir.Constant(T.I64, OUT_OF_MEMORY), self.table])
            with otherwise:
                self._bases[key] = aligned
                yield Slice(key, 0, size + ALIGN)
                del self._bases[key]
        free(b, raw)

    def kernel_context(self, b: ir.IRBuilder):
        return KernelContext(self, b)

    def slice_of(self, instruction: HloInstruction, index=()) -> Slice:
        s = self.assignment.slice_of(instruction, index)
        if s is None:
            raise CompileError(f"{instruction.name}: no buffer for output {index}")
        return s

    def pointer(self, instruction: HloInstruction, index=(), b: ir.IRBuilder | None = None):
        s = self.slice_of(instruction, index)
        return self._slice_pointer(s, b or self.b)

    def _slice_pointer(self, s: Slice, b: ir.IRBuilder):
        base = self._bases[s.allocation]
        return base if s.offset == 0 else b.gep(base, [ir.Constant(T.I64, s.offset)])

    # -- computations -------------------------------------------------------------------
    def emit_computation(self, computation: HloComputation) -> None:
        timed = self.profile is not None and computation is self.hlo.entry_computation
        for instruction in computation.instructions:
            op = instruction.opcode
            if not lowering.needs_code(instruction, self.assignment):
                continue
            slot = self.profile.begin(instruction.name) if timed else None
            if op in lowering.CONTROL_FLOW:
                emit_control_flow(self, instruction)
            else:
                self.emit_instruction(instruction)
            if timed:
                self.profile.end(slot)
                self.profiled.append(instruction)

    def emit_instruction(self, instruction: HloInstruction) -> None:
        """Native code for `instruction`, or a call to the evaluator where the
        lowering table allows one (`lowering.TABLE`), with the reason recorded."""
        op = instruction.opcode
        entry = lowering.TABLE[op]
        if op in lowering.COLLECTIVES:
            self.emit_collective(instruction)
            return
        before = set(self.llmod.globals)
        try:
            try:
                if emit_special(self, instruction):
                    return
                if op is Op.FUSION or op in lowering.LOOP_OPS:
                    self.emit_loop_kernel(instruction)
                    return
            except _INTERNAL_ERRORS as e:   # an emitter's bug: say where, never crash
                raise CompileError(f"{instruction.name} ({op.value}): internal "
                                   f"error in the CPU backend: {type(e).__name__}: {e}") from e
        except CompileError as e:
            if self.options.strict or not entry.fallback:
                raise
            self._discard_new_definitions(before)
            self.emit_fallback(instruction, str(e))
            return
        if entry.impossible:
            raise CompileError(f"{instruction.name}: {op.value} cannot run: {entry.impossible}")
        if not entry.fallback:
            raise CompileError(f"{instruction.name}: the CPU backend has no lowering for "
                               f"{op.value} and no reason to leave it to the evaluator")
        self.emit_fallback(instruction, entry.fallback)

    def _discard_new_definitions(self, before: set) -> None:
        """Drop the functions and globals a failed attempt defined (declarations such
        as malloc stay: a later kernel may declare them again by name)."""
        for name in set(self.llmod.globals) - before:
            value = self.llmod.globals[name]
            if isinstance(value, ir.Function) and value.is_declaration:
                continue
            del self.llmod.globals[name]
            self.llmod.scope._useset.discard(name)

    def emit_fallback(self, instruction: HloInstruction, reason: str) -> None:
        if self.options.strict:
            raise CompileError(f"{instruction.name}: the CPU backend has no native code for "
                               f"{instruction.opcode.value} ({reason}), and "
                               "--xlapy_cpu_strict forbids the evaluator fallback")
        number = len(self.fallbacks)
        self.fallbacks.append(instruction)
        self.fallback_reasons.append(reason)
        self.b.call(self.fallback, [ir.Constant(T.I64, number), self.table])

    def emit_collective(self, instruction: HloInstruction) -> None:
        """A call into the collectives runtime: the same callback as the evaluator
        fallback, numbered from COLLECTIVE_BASE, so no process-wide symbol binds a
        compiled object to one executable."""
        if self.options.target:
            raise CompileError(f"{instruction.name}: {instruction.opcode.value} needs the "
                               "collectives runtime (MPI through xlapy), which ahead-of-time "
                               "compiled code does not carry")
        number = COLLECTIVE_BASE + len(self.collectives)
        self.collectives.append(instruction)
        self.b.call(self.fallback, [ir.Constant(T.I64, number), self.table])

    # -- loop kernels -------------------------------------------------------------------
    def kernel_operands(self, instruction: HloInstruction):
        """(operand instruction, its buffer slice) for the array operands of a kernel."""
        result = []
        for operand in instruction.operands:
            if operand.shape.is_tuple or operand.shape.is_token:
                raise CompileError(f"{instruction.name}: tuple operand")
            result.append((operand, self.slice_of(operand)))
        return result

    def output_leaves(self, instruction: HloInstruction):
        if instruction.shape.is_tuple:
            return [(index, shape, self.slice_of(instruction, index))
                    for index, shape in instruction.shape.leaves()]
        return [((), instruction.shape, self.slice_of(instruction))]

    def loop_kernel(self, instruction: HloInstruction, fused_parameters: bool = True):
        """A new kernel function over `instruction`'s buffers, named after it: its
        operands' (noalias where no output overlaps them) and then its outputs'.
        The inputs are bound as IrArrays — a fusion's parameters, or the operands
        themselves with `fused_parameters=False` — and the outputs listed."""
        operands = self.kernel_operands(instruction)
        outputs = self.output_leaves(instruction)
        name = f"k{self._kernels}_{symbol_name(instruction.name)}"
        self._kernels += 1
        fn, b, in_pointers, out_pointers, slices, begin, end = in_place_kernel(
            self.llmod, name, [s for _, s in operands], [s for _, _, s in outputs])
        if fused_parameters and instruction.opcode is Op.FUSION:
            inputs = instruction.attr("calls").parameters
        else:
            inputs = [operand for operand, _ in operands]
        arrays = {p: IrArray(b, in_pointers[i], p.shape) for i, p in enumerate(inputs)}
        out_arrays = [IrArray(b, ptr, shape) for (_, shape, _), ptr in
                      zip(outputs, out_pointers)]
        return LoopKernel(fn, b, begin, end, slices, arrays, out_arrays)

    def emit_loop_kernel(self, instruction: HloInstruction) -> None:
        """A loop nest over the output(s), values from the element generator."""
        if emit_column_reduction(self, instruction) or emit_parallel_reduction(self, instruction):
            return
        k = self.loop_kernel(instruction)
        b, begin, end, out_arrays = k.b, k.begin, k.end, k.outputs
        if instruction.opcode is Op.FUSION:
            root = instruction.attr("calls").root_instruction
            roots = list(root.operands) if root.opcode is Op.TUPLE else [root]
        else:
            roots = [instruction]
        g = Generator(KernelContext(self, b), Scope(b), k.arrays)
        pairs = _unreshaped(list(zip(roots, group_leaves(roots, out_arrays))), b,
                            self.options.threads * CHUNKS_PER_THREAD)
        nests = [out[0] if isinstance(out, list) else out for _, out in pairs]
        tiled = _transposes(instruction)
        extents = {outer_extent(a.shape) for a in nests}
        splittable = len(extents) == 1 and all(a.shape.rank > 0 for a in out_arrays)
        if splittable:   # roots of one shape and layout share a nest (and their values)
            for group in _same_shape_groups(pairs):
                emit_nest(g, *group[0], begin, end, tiled, also=tuple(group[1:]))
        else:   # outputs of different extents: one call does everything
            for (root, out), first in zip(pairs, nests):
                emit_nest(g, root, out, ir.Constant(T.I64, 0),
                          ir.Constant(T.I64, outer_extent(first.shape)), tiled)
        b.ret_void()
        n = extents.pop() if splittable else 1
        work = sum(a.shape.element_count for a in out_arrays) * work_per_element(instruction)
        self.call_kernel(k.fn, k.slices, n, work)

    def call_kernel(self, fn: ir.Function, slices: list[Slice], n: int, work: int,
                    threads: int | None = None) -> None:
        pointers = [self._slice_pointer(s, self.b) for s in slices]
        if threads is None:
            threads = parallel.worth_parallelising(work, self.options.threads)
        threads = min(threads, n)
        if threads <= 1:
            self.b.call(fn, [*pointers, ir.Constant(T.I64, 0), ir.Constant(T.I64, n)])
            return
        task = parallel.task_wrapper(self.llmod, fn, len(pointers))
        with self.b.goto_entry_block():
            self.b.position_at_start(self.entry.entry_basic_block)
            ctx = self.b.alloca(T.I8P, size=ir.Constant(T.I32, max(len(pointers), 1)))
        for i, p in enumerate(pointers):
            self.b.store(p, self.b.gep(ctx, [ir.Constant(T.I32, i)]))
        self.b.call(parallel.parallel_for(self.llmod),
                    [task, self.b.bitcast(ctx, T.I8P), ir.Constant(T.I64, n),
                     ir.Constant(T.I64, threads)])

    # -- end of the module ---------------------------------------------------------------
    def _donation_copies(self) -> None:
        entry = self.hlo.entry_computation
        for donation in self.assignment.donations:
            if donation.how != "copy":
                continue
            alias = donation.alias
            source = self.slice_of(entry.root_instruction, tuple(alias.output_index))
            param = entry.parameter(alias.parameter_number)
            target = self.slice_of(param, tuple(alias.parameter_index))
            memcpy(self.b, self._slice_pointer(target, self.b),
                   self._slice_pointer(source, self.b), source.size)


@dataclass
class LoopKernel:
    """A kernel function being emitted (`Codegen.loop_kernel`): its builder, the
    [begin, end) range of its outer loop, the buffers `call_kernel` passes, its
    inputs by instruction and its output arrays."""

    fn: ir.Function
    b: ir.IRBuilder
    begin: ir.Value
    end: ir.Value
    slices: list
    arrays: dict
    outputs: list


class KernelContext:
    """What generators ask the module for (constants), bound to one kernel's builder."""

    row_stash = True
    """Reductions may keep rows of an expensive input on the stack (row_stash)."""

    def __init__(self, codegen: Codegen, b: ir.IRBuilder):
        self.codegen = codegen
        self.b = b
        self.options = codegen.options

    def constant_array(self, instruction):
        with self.b.goto_entry_block():
            return self.codegen.constant_array(instruction, self.b)


def _transposes(instruction: HloInstruction) -> bool:
    """Whether the kernel moves an operand's minor dimension away from the minor end
    (so walking the output in order would read the operand with a large stride)."""
    inner = instruction.attr("calls").instructions if instruction.opcode is Op.FUSION \
        else [instruction]
    for i in inner:
        if i.opcode is Op.TRANSPOSE:
            perm = list(i.attr("dimensions"))
            if perm and perm[-1] != len(perm) - 1 and i.shape.element_count >= 1024:
                return True
    return False


def in_place_kernel(llmod: ir.Module, name: str, reads: list[Slice], writes: list[Slice]):
    """(fn, builder, a pointer per read, a pointer per write, the slices to pass,
    begin, end) of a new kernel reading `reads` and writing `writes`. A read
    whose buffer a write takes over in place is read through that write's
    pointer: with one pointer LLVM sees each element read before it is written
    (and vectorises without overlap checks, which would fail and keep the loop
    scalar), and the other pointers stay noalias."""
    kept = [s for s in reads if s not in writes]
    slices = kept + list(writes)
    fn, b, pointers, begin, end = kernel_function(llmod, name, len(slices),
                                                  noalias=disjoint(slices, len(kept)))
    out_pointers = pointers[len(kept):]
    given = dict(zip(kept, pointers))
    in_pointers = [given[s] if s in given else out_pointers[writes.index(s)] for s in reads]
    return fn, b, in_pointers, out_pointers, slices, begin, end


def disjoint(slices: list[Slice], n_inputs: int) -> bool:
    """Whether no written slice overlaps another slice (inputs may share)."""
    for i, s in enumerate(slices):
        for j, t in enumerate(slices):
            if j <= i or (i < n_inputs and j < n_inputs):
                continue
            if s.allocation == t.allocation and s.offset < t.offset + t.size and \
                    t.offset < s.offset + s.size:
                return False
    return True


def work_per_element(instruction: HloInstruction) -> int:
    """Rough element operations per output element, for the parallel cost model:
    a reduction or contraction reads many inputs per output, a window its size."""
    if instruction.opcode is Op.FUSION:
        inner = instruction.attr("calls").instructions
        return max(1, sum(_reads_per_element(i) for i in inner if i.opcode is not Op.PARAMETER))
    return _reads_per_element(instruction)


def _reads_per_element(instruction: HloInstruction) -> int:
    op = instruction.opcode
    outputs = 1 if instruction.shape.is_tuple else max(1, instruction.shape.element_count)
    if op in (Op.REDUCE, Op.DOT):
        return max(1, instruction.operands[0].shape.element_count // outputs)
    if op is Op.CONVOLUTION:
        kernel = instruction.operands[1].shape
        labels = instruction.attr("dim_labels")
        features = kernel.dimensions[labels.kernel_output_feature_dimension] if labels else 1
        return max(1, kernel.element_count // max(1, features))
    if op is Op.REDUCE_WINDOW:
        window = instruction.attr("window")
        size = 1
        for d in getattr(window, "dimensions", ()):
            size *= d.size
        return max(1, size)
    return 1


def symbol_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "_." else "_" for c in name)


MIN_UNRESHAPED_MINOR = 16
"""A root reshape's operand is iterated instead when its minor dimension is at least
this long (a vector's width of f32 on AVX-512): the inner loop stays long."""


def _unreshaped(pairs: list, b: ir.IRBuilder, chunks: int) -> list:
    """(root, output) pairs with each root reshape of row-major shapes replaced by its
    operand, stored into the output viewed in the operand's shape (the same bytes in
    the same order). Walking the output's index space, a reshape splitting the minor
    dimension reads its operand at j // d, j % d: attention's heads merged back,
    transpose(x, (0, 2, 1, 3)) reshaped to [b, s, h*d], ran element by element
    (56 us for f32[8,4,128,64], 23 without the reshape). Kept where the operands'
    outer dimension would give the threads fewer than `chunks` pieces that the
    outputs' gave them."""
    changed = []
    for root, out in pairs:
        operand = root.operands[0] if root.opcode is Op.RESHAPE else None
        if operand is None or isinstance(out, list) or not operand.shape.is_array or \
                operand.shape.rank == 0 or not is_row_major(operand.shape) or \
                not is_row_major(out.shape) or \
                operand.shape.dimensions[-1] < MIN_UNRESHAPED_MINOR:
            changed.append((root, out))
            continue
        changed.append((operand, IrArray(b, out.ptr, operand.shape)))
    before = {outer_extent(o.shape) for _, o in pairs if not isinstance(o, list)}
    after = {outer_extent(o.shape) for _, o in changed if not isinstance(o, list)}
    if len(after) > len(before) or min(after, default=0) < min(min(before, default=0), chunks):
        return pairs
    return changed


def _same_shape_groups(pairs: list) -> list[list]:
    """(root, output) pairs grouped by their output's dimensions and layout, in order."""
    groups: dict[tuple, list] = {}
    for root, out in pairs:
        first = out[0] if isinstance(out, list) else out
        key = (tuple(first.shape.dimensions), tuple(minor_to_major(first.shape)))
        groups.setdefault(key, []).append((root, out))
    return list(groups.values())
