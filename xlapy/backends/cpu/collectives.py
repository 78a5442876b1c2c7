"""The collectives runtime of compiled CPU code: the generated code calls back
with a collective's number, and its operands are read from (and its result
written to) the buffers in place, the data moved over MPI by
`xlapy.hlo.collectives.run`, as XLA:CPU calls its collectives library.

Per instruction, what does not change between calls (the plan: group, order,
reduction; where each buffer lives) is worked out once per executable. An
all-reduce whose operand and result have their own buffers in the default
layout goes straight from one to the other, without a copy.

The code also reads `replica-id` and `partition-id` from a global of the
object (`codegen.generator.DEVICE_IDS`), which each run sets to this process's.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from xlapy.backends.cpu.fallback import read_value, write_value
from xlapy.codegen.generator import DEVICE_IDS
from xlapy.codegen.ir_array import minor_to_major
from xlapy.distributed import ops
from xlapy.distributed import world as mpi_world
from xlapy.errors import CompileError
from xlapy.hlo import collectives
from xlapy.hlo.collective_plan import CollectivePlan, Devices, plan
from xlapy.hlo.opcode import Opcode as Op


def device_ids_address(module, loaded) -> int | None:
    """Where the object keeps (replica id, partition id), when its code reads them."""
    reads = any(i.opcode in (Op.REPLICA_ID, Op.PARTITION_ID)
                for c in module.computations for i in c.instructions)
    if not reads:
        return None
    try:
        return loaded.global_address(DEVICE_IDS)
    except CompileError:   # every read was folded or dropped
        return None


def devices_of(executable) -> Devices:
    """This process's device of the executable's module (kept until MPI starts)."""
    world = mpi_world.world()
    known = executable.collective_plans.get("devices")
    if known is None or known[0] is not world:
        known = executable.collective_plans["devices"] = (
            world, collectives.devices_for(executable.module))
        if world is None and mpi_world.world() is not None:   # devices_for started MPI
            known = executable.collective_plans["devices"] = (mpi_world.world(), known[1])
    return known[1]


def write_device_ids(executable, address: int) -> None:
    """Set the object's device ids to this process's before a run."""
    devices = devices_of(executable)
    ids = (ctypes.c_uint32 * 2).from_address(address)
    ids[0], ids[1] = devices.replica, devices.partition


@dataclass(frozen=True)
class _Buffer:
    """Where one array lives: allocation, byte offset, and its flat shape."""

    allocation: int
    offset: int
    count: int
    dtype: np.dtype

    def __post_init__(self):
        object.__setattr__(self, "_bytes", ctypes.c_char * max(self.count * self.dtype.itemsize,
                                                               1))

    def view(self, table) -> np.ndarray:
        raw = self._bytes.from_address((table[self.allocation] or 0) + self.offset)
        return np.frombuffer(raw, self.dtype, self.count)


@dataclass(frozen=True)
class _Prepared:
    devices: Devices
    plan: CollectivePlan | None
    source: _Buffer | None = None
    target: _Buffer | None = None
    """Both set: an all-reduce done buffer to buffer."""


def _buffer(executable, instruction) -> _Buffer | None:
    """The buffer of an array value in the default layout, not a constant; else None."""
    shape = instruction.shape
    if not shape.is_array or minor_to_major(shape) != tuple(range(shape.rank - 1, -1, -1)):
        return None
    s = executable.assignment.slice_of(instruction)
    if s is None or executable.assignment.allocations[s.allocation].kind == "constant":
        return None
    return _Buffer(s.allocation, s.offset, shape.element_count, np.dtype(shape.dtype))


def _prepare(executable, instruction, devices: Devices) -> _Prepared:
    if instruction.opcode in (Op.ALL_REDUCE_DONE, Op.ALL_GATHER_DONE,
                              Op.COLLECTIVE_PERMUTE_DONE):
        return _Prepared(devices, None)
    p = plan(instruction, devices)
    if instruction.opcode is Op.ALL_REDUCE and len(instruction.operands) == 1:
        source = _buffer(executable, instruction.operands[0])
        target = _buffer(executable, instruction)
        if source is not None and target is not None and not (
                source.allocation == target.allocation and source.offset == target.offset):
            return _Prepared(devices, p, source, target)
    return _Prepared(devices, p)


def run_collective(executable, instruction, table_address: int) -> None:
    """Compute collective `instruction` of one run on its buffers."""
    devices = devices_of(executable)
    cache = executable.collective_plans
    prepared = cache.get(id(instruction))
    if prepared is None or prepared.devices is not devices:
        prepared = cache[id(instruction)] = _prepare(executable, instruction, devices)
    if prepared.source is not None:
        table = (ctypes.c_void_p * len(executable.assignment.allocations)).from_address(
            table_address)
        p = prepared.plan
        ops.all_reduce(collectives.world_of(p), p.group, prepared.source.view(table),
                       p.reduction, p.what, out=prepared.target.view(table))
        return
    operands = [read_value(executable, table_address, o) for o in instruction.operands]
    value = collectives.run(instruction, operands, devices, prepared.plan)
    write_value(executable, table_address, instruction, value)
