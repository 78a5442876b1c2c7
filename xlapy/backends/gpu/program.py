"""A GPU program and how it runs: its thunks, in order, on a machine that holds its
buffers.

`run_thunks` is the one interpreter of thunks. A machine gives it addresses
for buffer slices, launches kernels, copies, reads a predicate back and calls
cuBLAS: `device_runner.DeviceMachine` does that on a CUDA device,
`host_emulation.HostMachine` with the kernels compiled for the host CPU, so
a machine without a GPU runs the same thunks, buffer plan and kernel logic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from xlapy.analysis.buffer_assignment import BufferAssignment
from xlapy.backends.gpu.thunks import (
    ConditionalThunk,
    CopyThunk,
    GemmThunk,
    KernelThunk,
    WhileThunk,
)
from xlapy.codegen.ir_array import minor_to_major
from xlapy.errors import ExecutionError
from xlapy.hlo.ir import HloModule
from xlapy.hlo.shape import Shape


@dataclass
class GpuProgram:
    """Everything a GPU executable is made of, none of it needing a device."""

    module: HloModule
    assignment: BufferAssignment
    thunks: list
    ptx: str
    arch: str
    llvm_ir: str
    kernels: list[str] = field(default_factory=list)
    from_cache: bool = False
    """Loaded from the disk cache (`program_cache`) rather than generated now."""
    cubin: bytes | None = None
    """The PTX linked by the CUDA driver for a device of `cubin_arch`, where one was here."""
    cubin_arch: str = ""


def run_thunks(thunks: list, machine) -> None:
    for thunk in thunks:
        if isinstance(thunk, KernelThunk):
            machine.launch(thunk)
        elif isinstance(thunk, GemmThunk):
            machine.gemm(thunk)
        elif isinstance(thunk, CopyThunk):
            machine.copy(thunk)
        elif isinstance(thunk, WhileThunk):
            while True:
                run_thunks(thunk.condition, machine)
                if not machine.read(thunk.predicate, np.dtype(bool)):
                    break
                run_thunks(thunk.body, machine)
        elif isinstance(thunk, ConditionalThunk):
            value = machine.read(thunk.selector, np.dtype(thunk.selector_type))
            run_thunks(thunk.branches[branch_number(value, len(thunk.branches))], machine)
        else:
            raise ExecutionError(f"unknown thunk {type(thunk).__name__}")


def branch_number(selector, branches: int) -> int:
    """XLA's rule: a pred picks branch 0 on true; an index out of range, the last."""
    if isinstance(selector, (bool, np.bool_)):
        return 0 if selector else 1
    number = int(selector)
    return number if 0 <= number < branches else branches - 1


def physical_axes(shape: Shape) -> list[int]:
    """The logical axes in memory order, major first."""
    return list(reversed(minor_to_major(shape)))


def to_physical(array: np.ndarray, shape: Shape) -> np.ndarray:
    """`array` (logical order) as the bytes of `shape`'s layout, C-contiguous."""
    return np.ascontiguousarray(np.transpose(array, physical_axes(shape)))


def from_physical(raw: np.ndarray, shape: Shape) -> np.ndarray:
    """The logical array of the bytes `raw` laid out as `shape`."""
    axes = physical_axes(shape)
    memory = raw.view(shape.dtype).reshape([shape.dimensions[a] for a in axes])
    return np.transpose(memory, np.argsort(axes)) if axes != sorted(axes) else memory


def parameter_leaves(module: HloModule, assignment: BufferAssignment, args: list):
    """(allocation index, value, leaf shape) for each parameter leaf."""
    entry = module.entry_computation
    for alloc in assignment.allocations:
        if alloc.kind != "parameter":
            continue
        param = entry.parameter(alloc.parameter_number)
        value = args[alloc.parameter_number]
        shape = param.shape
        for i in alloc.parameter_index or ():
            value, shape = value[i], shape.tuple_shapes[i]
        yield alloc.index, value, shape


def result_leaves(module: HloModule, assignment: BufferAssignment):
    """(leaf index, shape, slice) for each leaf of the entry's result."""
    root = module.entry_computation.root_instruction
    leaves = root.shape.leaves() if root.shape.is_tuple else [((), root.shape)]
    return [(tuple(index), shape, assignment.outputs.get(tuple(index)))
            for index, shape in leaves]


def assemble(root_shape: Shape, values: list):
    """The flat list `execute` returns: the leaves of a flat tuple, nested tuples as
    tuples, or the one array."""
    if not root_shape.is_tuple:
        return values
    it = iter(values)

    def build(shape):
        if shape.is_tuple:
            return tuple(build(s) for s in shape.tuple_shapes)
        return next(it)
    return [build(s) for s in root_shape.tuple_shapes]
