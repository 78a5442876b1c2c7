"""The GPU program on a CUDA device: PTX loaded once, buffers placed, thunks run.

At the first run the PTX is loaded through the driver (which links it into a
cubin for this device), the constants are uploaded, and the temporary arena
is allocated once for the executable. Each run then uploads only arguments
that are not on the device already, takes its outputs from the caching
allocator, launches every kernel on the context's stream, and returns the
outputs as `DeviceArray`s: results stay on the device until NumPy asks.
"""

from __future__ import annotations

import numpy as np

from xlapy.backends.gpu import blas, driver
from xlapy.backends.gpu.device_array import DeviceArray, default_allocator
from xlapy.backends.gpu.program import (
    GpuProgram,
    assemble,
    from_physical,
    parameter_leaves,
    physical_axes,
    result_leaves,
    run_thunks,
    to_physical,
)
from xlapy.codegen.constants import literal_bytes
from xlapy.errors import ExecutionError


class DeviceMachine:
    def __init__(self, program: GpuProgram):
        self.program = program
        self.ctx = driver.context()
        self.allocator = default_allocator()
        self.loaded = self._load(program)
        self.functions = {name: self.loaded.function(name) for name in program.kernels}
        self.kept: dict[int, object] = {}   # allocation -> buffer held for the executable
        self.kinds = {a.index: a.kind for a in program.assignment.allocations}
        for alloc in program.assignment.allocations:
            if alloc.kind == "constant":
                instruction = alloc.values[0].buffer.instruction
                data = np.frombuffer(literal_bytes(instruction.literal, instruction.shape),
                                     np.uint8)
                buffer = self.allocator.allocate(max(alloc.size, 1))
                if data.size:
                    self.ctx.copy_to_device(buffer.ptr, data)
                self.kept[alloc.index] = buffer
            elif alloc.kind == "temp":
                self.kept[alloc.index] = self.allocator.allocate(max(alloc.size, 1))
        self.base: dict[int, int] = {}

    def _load(self, program: GpuProgram):
        """The program's cubin where it was linked for this device (from the disk cache,
        say), else its PTX, linked now; a cubin the driver refuses is linked again."""
        name = program.module.name
        if program.cubin is not None and program.cubin_arch == self.ctx.arch:
            try:
                return self.ctx.load_cubin(program.cubin, name)
            except ExecutionError:
                pass
        return self.ctx.load_ptx(program.ptx, name)

    # -- what run_thunks asks of a machine ------------------------------------------------
    def address(self, s) -> int:
        return self.base[s.allocation] + s.offset

    def launch(self, thunk) -> None:
        launch = thunk.launch
        self.ctx.launch(self.functions[thunk.kernel], (launch.grid, 1, 1), (launch.block, 1, 1),
                        0, [self.address(s) for s in thunk.arguments])

    def gemm(self, thunk) -> None:
        if not blas.gemm_available():
            self.launch(thunk.fallback)
            return
        m, n, k = thunk.m, thunk.n, thunk.k
        blas.gemm(self.ctx, m=m, n=n, k=k, a=self.address(thunk.lhs),
                  b=self.address(thunk.rhs), c=self.address(thunk.out),
                  dtype=np.dtype(thunk.dtype) if thunk.dtype != "bfloat16" else thunk.dtype,
                  trans_a=thunk.trans_a, trans_b=thunk.trans_b, batch=thunk.batch,
                  stride_a=m * k, stride_b=k * n, stride_c=m * n)

    def copy(self, thunk) -> None:
        moves = thunk.moves
        staging = None
        if thunk.staged:
            staging = self.allocator.allocate(sum(s.size for s, _ in moves))
            at = staging.ptr
            for source, _ in moves:
                self.ctx.copy_device(at, self.address(source), source.size)
                at += source.size
            at = staging.ptr
            for source, target in moves:
                self.ctx.copy_device(self.address(target), at, source.size)
                at += source.size
            return
        for source, target in moves:
            self.ctx.copy_device(self.address(target), self.address(source), source.size)

    def read(self, s, dtype: np.dtype):
        host = np.empty(1, dtype)
        self.ctx.copy_to_host(host, self.address(s))
        return host[0]

    # -- one execution ---------------------------------------------------------------------
    def run(self, args: list) -> list:
        program = self.program
        assignment = program.assignment
        held = dict(self.kept)
        self.base = {}
        for alloc in assignment.allocations:
            if alloc.kind == "output":
                held[alloc.index] = self.allocator.allocate(max(alloc.size, 1))
        for index, value, shape in parameter_leaves(program.module, assignment, args):
            if hasattr(value, "__cuda_array_interface__") and \
                    physical_axes(shape) == sorted(physical_axes(shape)):
                self.base[index] = int(value.__cuda_array_interface__["data"][0])
                held[index] = value
                continue
            data = to_physical(np.asarray(value), shape).view(np.uint8).reshape(-1)
            buffer = self.allocator.allocate(max(data.size, 1))
            if data.size:
                self.ctx.copy_to_device(buffer.ptr, data)
            held[index] = buffer
        for index, buffer in held.items():
            self.base.setdefault(index, buffer.ptr)
        run_thunks(program.thunks, self)
        values = [self._result(index, shape, s, held)
                  for index, shape, s in result_leaves(program.module, assignment)]
        return assemble(program.module.entry_computation.root_instruction.shape, values)

    def _result(self, index, shape, s, held):
        if s is None:
            raise ExecutionError(f"{self.program.module.name}: result {index} has no buffer")
        if physical_axes(shape) != sorted(physical_axes(shape)):
            host = np.empty(s.size, np.uint8)
            self.ctx.copy_to_host(host, self.address(s))
            return from_physical(host, shape).copy()
        alloc = self.program.assignment.allocations[s.allocation]
        if alloc.kind == "output" and s.offset == 0 and len(alloc.output_indices) <= 1:
            return DeviceArray(held[s.allocation], shape.dimensions, shape.dtype)
        buffer = self.allocator.allocate(max(s.size, 1))
        self.ctx.copy_device(buffer.ptr, self.address(s), s.size)
        return DeviceArray(buffer, shape.dimensions, shape.dtype)
