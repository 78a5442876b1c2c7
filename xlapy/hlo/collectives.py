"""Running one collective instruction on this process's operand values: the
plan (`collective_plan`) says who takes part and how, `xlapy.distributed`
moves the data over MPI. The interpreter's rules and the CPU backend's
runtime entry both call `run`, so the two agree bit for bit.

A module for one device never touches MPI: every group is this process alone.
"""

from __future__ import annotations

import numpy as np

from xlapy.distributed import ops
from xlapy.distributed import world as mpi_world
from xlapy.errors import ExecutionError
from xlapy.hlo.collective_plan import CollectivePlan, Devices, module_devices, plan
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode as Op


def devices_for(module) -> Devices:
    """This process's device of `module`: under `mpiexec` (MPI started on first
    use) its rank; in a lone process a one-device module's only device."""
    world = mpi_world.world()
    count = (module.attributes.get("replica_count", 1) *
             module.attributes.get("num_partitions", 1)) if module is not None else 1
    if world is None and isinstance(count, int) and count > 1 and mpi_world.launched_by_mpi():
        world = mpi_world.initialize()
    if world is None:
        return module_devices(module, 0, 1)
    return module_devices(module, world.rank, world.size)


def world_of(p: CollectivePlan):
    """The MPI world `p` runs in (None for a group of this process alone)."""
    if len(p.group) == 1:
        return mpi_world.world()   # unused: groups of one are answered locally
    world = mpi_world.world()
    if world is None:
        raise ExecutionError(f"{p.what}: the group {p.group} spans processes, but MPI is "
                             "not initialised (call xlapy.distributed.initialize())")
    return world


def run(instruction: HloInstruction, operands: list, devices: Devices,
        planned: CollectivePlan | None = None):
    """The value of collective `instruction` on this device, from its operands'
    values (NumPy arrays; a tuple for several); `planned` is its plan if known."""
    op = instruction.opcode
    if op in (Op.ALL_REDUCE_DONE, Op.ALL_GATHER_DONE, Op.COLLECTIVE_PERMUTE_DONE):
        return operands[0] if op is Op.ALL_REDUCE_DONE else operands[0][1]
    p = planned or plan(instruction, devices)
    world = world_of(p)
    if op in (Op.ALL_REDUCE, Op.ALL_REDUCE_START):
        values = _all_reduce(world, p, [np.asarray(x) for x in operands])
    elif op in (Op.ALL_GATHER, Op.ALL_GATHER_START):
        values = [ops.all_gather(world, p.group, np.asarray(x), p.dimension or 0, p.what)
                  for x in operands]
        if op is Op.ALL_GATHER_START:
            return _one_or_tuple(operands), _one_or_tuple(values)
    elif op is Op.REDUCE_SCATTER:
        values = [ops.reduce_scatter(world, p.group, p.index, np.asarray(x), p.dimension or 0,
                                     p.reduction, p.what) for x in operands]
    elif op is Op.ALL_TO_ALL:
        values = _all_to_all(world, p, operands)
    elif op is Op.COLLECTIVE_BROADCAST:
        values = [ops.broadcast(world, p.group, np.asarray(x), 0, p.what) for x in operands]
    elif op in (Op.COLLECTIVE_PERMUTE, Op.COLLECTIVE_PERMUTE_START):
        if len(operands) != 1:
            raise ExecutionError(f"{p.what}: collective-permute with {len(operands)} operands "
                                 "(the in-place form) is not supported")
        value = ops.permute(world, p.group, np.asarray(operands[0]), list(p.targets),
                            p.source, p.what)
        if op is Op.COLLECTIVE_PERMUTE_START:
            context = [np.zeros(s.dimensions, s.dtype)
                       for s in instruction.shape.tuple_shapes[2:]]
            return (operands[0], value, *context)
        return value
    else:
        raise ExecutionError(f"{instruction.name}: {op.value} is not a collective xlapy runs")
    return tuple(values) if instruction.shape.is_tuple else values[0]


def _all_reduce(world, p: CollectivePlan, operands: list) -> list:
    """Several operands of one dtype travel as one buffer: one exchange, not many."""
    if len(operands) == 1 or len({x.dtype for x in operands}) != 1:
        return [ops.all_reduce(world, p.group, x, p.reduction, p.what) for x in operands]
    flat = ops.all_reduce(world, p.group, np.concatenate([x.reshape(-1) for x in operands]),
                          p.reduction, p.what)
    bounds = np.cumsum([x.size for x in operands])[:-1]
    return [part.reshape(x.shape) for part, x in zip(np.split(flat, bounds), operands)]


def _all_to_all(world, p: CollectivePlan, operands: list) -> list:
    count = len(p.group)
    if p.dimension is None:   # tuple form: operand i goes to member i
        return ops.all_to_all(world, p.group, [np.asarray(x) for x in operands], p.what)
    (operand,) = operands
    chunks = np.split(np.asarray(operand), count, axis=p.dimension)
    received = ops.all_to_all(world, p.group, chunks, p.what)
    return [np.concatenate(received, axis=p.dimension)]


def _one_or_tuple(values):
    values = list(values)
    return values[0] if len(values) == 1 else tuple(values)


def device_id(instruction: HloInstruction, devices: Devices) -> np.ndarray:
    """replica-id or partition-id on this device, as u32[]."""
    value = devices.replica if instruction.opcode is Op.REPLICA_ID else devices.partition
    return np.asarray(value, np.uint32)
