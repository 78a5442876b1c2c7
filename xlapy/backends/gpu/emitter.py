"""Whole-module code generation for the GPU: one LLVM module of kernels, and the
thunks that launch them.

The module is walked in schedule order, as the CPU's `Codegen` walks it, but
where the CPU emits calls into one entry function, the GPU emits a kernel per
fusion (or unfused instruction) and a thunk saying how to launch it on which
buffers; control flow becomes thunks the host runs, reading a loop's
predicate back from the device. What no GPU emitter computes is a
`CompileError` naming the opcode and the reason (`lowering.py`): nothing
falls back to the host.
"""

from __future__ import annotations

from dataclasses import dataclass

import llvmlite.ir as ir

from xlapy.analysis.buffer_assignment import BufferAssignment, Slice
from xlapy.backends.cpu import lowering as cpu_lowering
from xlapy.backends.gpu import library_kernels, loop_kernel, lowering
from xlapy.backends.gpu.thunks import (
    ConditionalThunk,
    CopyThunk,
    GemmThunk,
    KernelThunk,
    WhileThunk,
)
from xlapy.codegen.constants import literal_bytes
from xlapy.codegen.elemental import FAST_MATH
from xlapy.codegen.ir_array import IrArray, minor_to_major
from xlapy.errors import CompileError
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.opcode import Opcode as Op

_INTERNAL_ERRORS = (ValueError, TypeError, KeyError, AttributeError, IndexError,
                    AssertionError)


@dataclass
class Kernel:
    """A kernel being emitted: its builder, its coordinates, the target, its inputs
    by instruction (IrArrays), its output arrays and the slices it is launched on."""

    name: str
    fn: ir.Function
    b: ir.IRBuilder
    coords: object
    target: object
    context: object
    arrays: dict
    outputs: list
    slices: list[Slice]
    pointers: list


class KernelContext:
    """What the element generators ask the module for: fused constants."""

    def __init__(self, emitter: GpuEmitter, b: ir.IRBuilder, options=None):
        self.emitter = emitter
        self.b = b
        self.options = options

    def constant_array(self, instruction):
        b = self.b
        with b.goto_entry_block():
            b.position_at_start(b.function.entry_basic_block)
            data = literal_bytes(instruction.literal, instruction.shape)
            pointer = self.emitter.target.constant(b.module, b, data, "fused_constant")
            return IrArray(b, pointer, instruction.shape)


class GpuEmitter:
    def __init__(self, module: HloModule, assignment: BufferAssignment, target,
                 fast_math: bool = False, name: str = "xlapy_gpu_module"):
        self.hlo = module
        self.assignment = assignment
        self.target = target
        self.fast_math = fast_math
        self.llmod = target.new_module(name)
        self.thunks: list = []
        self.kernel_names: list[str] = []

    def emit(self) -> list:
        token = FAST_MATH.set(("fast",) if self.fast_math else ())
        try:
            self.thunks = self.emit_computation(self.hlo.entry_computation)
            self.thunks += self._donation_copies()
        finally:
            FAST_MATH.reset(token)
        return self.thunks

    # -- buffers ---------------------------------------------------------------------------
    def slice_of(self, instruction: HloInstruction, index=()) -> Slice:
        s = self.assignment.slice_of(instruction, index)
        if s is None:
            raise CompileError(f"{instruction.name}: no buffer for output {index}")
        return s

    def leaf_slices(self, instruction: HloInstruction) -> list[Slice]:
        shape = instruction.shape
        if shape.is_tuple:
            return [self.slice_of(instruction, index) for index, _ in shape.leaves()]
        if shape.is_token:
            return []
        return [self.slice_of(instruction)]

    # -- computations ----------------------------------------------------------------------
    def emit_computation(self, computation: HloComputation) -> list:
        thunks: list = []
        for instruction in computation.instructions:
            op = instruction.opcode
            if not cpu_lowering.needs_code(instruction, self.assignment):
                continue
            try:
                thunks += self.emit_instruction(instruction)
            except _INTERNAL_ERRORS as e:   # an emitter's bug: say where, never crash
                raise CompileError(f"{instruction.name} ({op.value}): internal error in the "
                                   f"GPU backend: {type(e).__name__}: {e}") from e
            except CompileError as e:
                if "the GPU backend cannot compile" in str(e):
                    raise
                raise CompileError(f"{instruction.name}: the GPU backend cannot compile "
                                   f"{op.value}: {e}") from e
        return thunks

    def emit_instruction(self, instruction: HloInstruction) -> list:
        op = instruction.opcode
        if op is Op.WHILE:
            return self._while(instruction)
        if op is Op.CONDITIONAL:
            return self._conditional(instruction)
        if op is Op.CALL:
            callee = instruction.attr("to_apply")
            return self.emit_computation(callee) + self.copies(
                self.leaf_slices(callee.root_instruction), self.leaf_slices(instruction))
        reason = lowering.refusal(instruction)
        if reason:
            raise CompileError(f"{instruction.name}: the GPU backend cannot compile "
                               f"{op.value}: {reason}")
        if op in library_kernels.EMITTERS:
            return library_kernels.EMITTERS[op](self, instruction)
        if op is Op.DOT:
            gemm = gemm_shape(instruction)
            if gemm is not None:
                fallback = self.loop_kernel(instruction)
                return [GemmThunk(self.slice_of(instruction.operands[0]),
                                  self.slice_of(instruction.operands[1]),
                                  self.slice_of(instruction), *gemm, fallback=fallback,
                                  instruction=instruction.name)]
        return [self.loop_kernel(instruction)]

    # -- kernels ---------------------------------------------------------------------------
    def new_kernel(self, instruction: HloInstruction, slices: list[Slice],
                   suffix: str = "") -> Kernel:
        name = f"k{len(self.kernel_names)}_{_symbol(instruction.name)}{suffix}"
        self.kernel_names.append(name)
        fn, b, pointers, coords = self.target.kernel(self.llmod, name, len(slices))
        return Kernel(name, fn, b, coords, self.target, KernelContext(self, b), {}, [],
                      slices, pointers)

    def loop_kernel(self, instruction: HloInstruction) -> KernelThunk:
        """A kernel computing `instruction` (a fusion or one op) from its generators."""
        operands = []
        for operand in instruction.operands:
            if operand.shape.is_tuple or operand.shape.is_token:
                raise CompileError(f"{instruction.name}: tuple operand")
            operands.append(operand)
        outputs = instruction.shape.leaves() if instruction.shape.is_tuple \
            else [((), instruction.shape)]
        slices = [self.slice_of(o) for o in operands] + \
            [self.slice_of(instruction, index) for index, _ in outputs]
        k = self.new_kernel(instruction, slices)
        inputs = instruction.attr("calls").parameters if instruction.opcode is Op.FUSION \
            else operands
        k.arrays = {p: IrArray(k.b, ptr, p.shape) for p, ptr in zip(inputs, k.pointers)}
        k.outputs = [IrArray(k.b, ptr, shape) for (_, shape), ptr in
                     zip(outputs, k.pointers[len(operands):])]
        launch = loop_kernel.emit(k, instruction)
        return KernelThunk(k.name, slices, launch, instruction.name)

    # -- control flow ----------------------------------------------------------------------
    def copies(self, sources: list[Slice], targets: list[Slice]) -> list:
        moves = [(s, t) for s, t in zip(sources, targets) if s != t and s.size > 0]
        if not moves:
            return []
        written = {(t.allocation, t.offset) for _, t in moves}
        staged = any((s.allocation, s.offset) in written for s, _ in moves)
        return [CopyThunk(moves, staged)]

    def _while(self, instruction) -> list:
        body, condition = instruction.attr("body"), instruction.attr("condition")
        state = self.leaf_slices(instruction)
        before = self.copies(self.leaf_slices(instruction.operands[0]), state)
        body_thunks = self.emit_computation(body) + self.copies(
            self.leaf_slices(body.root_instruction), state)
        return before + [WhileThunk(self.emit_computation(condition),
                                    self.slice_of(condition.root_instruction), body_thunks,
                                    instruction.name)]

    def _conditional(self, instruction) -> list:
        branches = instruction.attr("branch_computations") or (
            instruction.attr("true_computation"), instruction.attr("false_computation"))
        branches = [c for c in branches if c is not None]
        if not branches:
            raise CompileError(f"{instruction.name}: conditional without branches")
        selector = instruction.operands[0]
        outputs = self.leaf_slices(instruction)
        thunk = ConditionalThunk(self.slice_of(selector), str(selector.shape.dtype),
                                 instruction=instruction.name)
        for computation in branches:
            thunk.branches.append(self.emit_computation(computation) + self.copies(
                self.leaf_slices(computation.root_instruction), outputs))
        return [thunk]

    def _donation_copies(self) -> list:
        entry = self.hlo.entry_computation
        sources, targets = [], []
        for donation in self.assignment.donations:
            if donation.how != "copy":
                continue
            alias = donation.alias
            sources.append(self.slice_of(entry.root_instruction, tuple(alias.output_index)))
            targets.append(self.slice_of(entry.parameter(alias.parameter_number),
                                         tuple(alias.parameter_index)))
        return self.copies(sources, targets)


_GEMM_TYPES = {P.F32: "float32", P.F16: "float16", P.BF16: "bfloat16", P.F64: "float64"}


def gemm_shape(dot: HloInstruction):
    """(m, n, k, batch, trans_a, trans_b, dtype) when `dot` is one row-major (batched)
    GEMM cuBLAS computes as it is, else None (the generated kernel computes it)."""
    lhs, rhs = (o.shape for o in dot.operands)
    dtype = _GEMM_TYPES.get(dot.shape.element_type)
    if dtype is None or lhs.element_type != dot.shape.element_type or \
            rhs.element_type != dot.shape.element_type:
        return None
    lb, rb = (tuple(dot.attr(f"{side}_batch_dims") or ()) for side in ("lhs", "rhs"))
    lc, rc = (tuple(dot.attr(f"{side}_contracting_dims") or ()) for side in ("lhs", "rhs"))
    if len(lc) != 1 or len(rc) != 1 or lb != tuple(range(len(lb))) or rb != lb:
        return None
    if lhs.rank != len(lb) + 2 or rhs.rank != len(rb) + 2:
        return None
    for shape in (lhs, rhs, dot.shape):
        if list(minor_to_major(shape)) != list(range(shape.rank))[::-1]:
            return None
    nb = len(lb)
    batch = 1
    for d in lb:
        batch *= lhs.dimensions[d]
    trans_a = lc[0] == nb          # lhs stored [k, m]
    trans_b = rc[0] == nb + 1      # rhs stored [n, k]
    m = lhs.dimensions[nb + 1 if trans_a else nb]
    k = lhs.dimensions[lc[0]]
    n = rhs.dimensions[nb if trans_b else nb + 1]
    if min(m, n, k, batch) == 0:
        return None
    return m, n, k, batch, trans_a, trans_b, dtype


def _symbol(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)
