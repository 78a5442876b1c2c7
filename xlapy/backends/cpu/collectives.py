"""The collectives runtime of compiled CPU code: the generated code calls back
with a collective's number, and its operands are read from (and its result
written to) the buffers in place, the data moved over MPI by
`xlapy.hlo.collectives.run`, as XLA:CPU calls its collectives library. An
all-reduce of contiguous buffers goes straight from the operand's buffer to
the result's, without a copy.

The code also reads `replica-id` and `partition-id` from a global of the
object (`codegen.generator.DEVICE_IDS`), which each run sets to this process's.
"""

from __future__ import annotations

import ctypes

import numpy as np

from xlapy.backends.cpu.fallback import buffer_view, read_value, write_value
from xlapy.codegen.generator import DEVICE_IDS
from xlapy.distributed import ops
from xlapy.errors import CompileError
from xlapy.hlo import collectives
from xlapy.hlo.collective_plan import plan
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


def write_device_ids(executable, address: int) -> None:
    """Set the object's device ids to this process's before a run."""
    devices = collectives.devices_for(executable.module)
    ids = (ctypes.c_uint32 * 2).from_address(address)
    ids[0], ids[1] = devices.replica, devices.partition


def run_collective(executable, instruction, table_address: int) -> None:
    """Compute collective `instruction` of one run on its buffers."""
    devices = collectives.devices_for(executable.module)
    if instruction.opcode is Op.ALL_REDUCE and len(instruction.operands) == 1 and \
            _all_reduce_in_place(executable, instruction, table_address, devices):
        return
    operands = [read_value(executable, table_address, o) for o in instruction.operands]
    value = collectives.run(instruction, operands, devices)
    write_value(executable, table_address, instruction, value)


def _all_reduce_in_place(executable, instruction, table_address, devices) -> bool:
    """An all-reduce from the operand's buffer into the result's: True when done."""
    (operand,) = instruction.operands
    source = buffer_view(executable, table_address, operand)
    target = buffer_view(executable, table_address, instruction)
    if source is None or target is None or not source.flags.c_contiguous or \
            not target.flags.c_contiguous or np.shares_memory(source, target):
        return False
    p = plan(instruction, devices)
    ops.all_reduce(collectives.world_of(p), p.group, source, p.reduction, p.what, out=target)
    return True
