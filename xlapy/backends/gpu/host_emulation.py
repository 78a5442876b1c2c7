"""The GPU program run on the host CPU: the thunks and buffer plan as they are,
the kernels compiled for the host from the same emitters (`target.HostEmulation`).

Each launch walks a small grid (at most 3 blocks of 4 threads; one thread for
kernels that synchronise), so grid-stride loops wrap, several threads share a
kernel and every index computation runs. Buffers nobody wrote yet hold a
poison pattern, so a kernel reading memory it should not shows as a wrong
result. This is the GPU backend's test oracle where no GPU exists; it is not
fast, and it is not a second runtime.

It runs the program's own thunks (those the device runs, perhaps read back
from the disk cache), after checking that the host kernels it compiled are
launched by the very same thunks: a thunk program that does not match its
module is an error here, not a silently different run.
"""

from __future__ import annotations

import ctypes

import numpy as np

from xlapy.backends.cpu.llvm_target import LoadedObject, compile_to_object
from xlapy.backends.gpu.emitter import GpuEmitter
from xlapy.backends.gpu.program import (
    GpuProgram,
    assemble,
    from_physical,
    parameter_leaves,
    result_leaves,
    run_thunks,
    to_physical,
)
from xlapy.backends.gpu.target import HostEmulation, launcher_name
from xlapy.codegen.constants import literal_bytes
from xlapy.errors import ExecutionError

_LAUNCH = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32)
MAX_BLOCKS = 3
MAX_THREADS = 4
POISON = 0xA5


class HostMachine:
    def __init__(self, program: GpuProgram):
        self.program = program
        emitter = GpuEmitter(program.module, program.assignment, HostEmulation(),
                             name=program.module.name)
        if emitter.emit() != program.thunks or emitter.kernel_names != program.kernels:
            raise ExecutionError(f"{program.module.name}: the program's thunks are not the "
                                 "ones its module generates; cannot emulate them")
        self.thunks = program.thunks
        self._loaded = LoadedObject(compile_to_object(emitter.llmod, 2))
        self._launchers = {name: _LAUNCH(self._loaded.address(launcher_name(name)))
                           for name in emitter.kernel_names}
        self._memory: list[np.ndarray] = []

    # -- what run_thunks asks of a machine ------------------------------------------------
    def address(self, s) -> int:
        return self._memory[s.allocation].ctypes.data + s.offset

    def bytes_of(self, s) -> np.ndarray:
        return self._memory[s.allocation][s.offset:s.offset + s.size]

    def launch(self, thunk) -> None:
        table = (ctypes.c_void_p * max(1, len(thunk.arguments)))(
            *[self.address(s) for s in thunk.arguments])
        launch = thunk.launch
        grid = min(launch.grid, MAX_BLOCKS)
        block = 1 if launch.barriers else min(launch.block, MAX_THREADS)
        self._launchers[thunk.kernel](ctypes.addressof(table), grid, block)

    def gemm(self, thunk) -> None:
        self.launch(thunk.fallback)

    def copy(self, thunk) -> None:
        data = [self.bytes_of(source).copy() for source, _ in thunk.moves]
        for (_, target), chunk in zip(thunk.moves, data):
            self.bytes_of(target)[:] = chunk

    def read(self, s, dtype: np.dtype):
        return self.bytes_of(s).view(dtype)[0]

    # -- one execution ---------------------------------------------------------------------
    def run(self, args: list) -> list:
        assignment = self.program.assignment
        self._memory = []
        for alloc in assignment.allocations:
            memory = _aligned(alloc.size)
            if alloc.kind == "constant":
                instruction = alloc.values[0].buffer.instruction
                data = literal_bytes(instruction.literal, instruction.shape)
                memory[:len(data)] = np.frombuffer(data, np.uint8)
            else:
                memory[:] = POISON
            self._memory.append(memory)
        for index, value, shape in parameter_leaves(self.program.module, assignment, args):
            data = to_physical(np.asarray(value), shape).view(np.uint8).reshape(-1)
            self._memory[index][:data.size] = data
        run_thunks(self.thunks, self)
        values = []
        for index, shape, s in result_leaves(self.program.module, assignment):
            if s is None:
                raise ExecutionError(f"{self.program.module.name}: result {index} has no "
                                     "buffer")
            values.append(from_physical(self.bytes_of(s).copy(), shape).copy())
        return assemble(self.program.module.entry_computation.root_instruction.shape, values)


def _aligned(nbytes: int) -> np.ndarray:
    raw = np.empty(max(nbytes, 1) + 64, np.uint8)
    start = (-raw.ctypes.data) % 64
    return raw[start:start + max(nbytes, 1)]
