"""Who takes part in a collective, in what order, and what it computes: XLA's
semantics of `replica_groups`, `channel_id` and `use_global_device_ids`, read
off one instruction for one device.

A module with `replica_count=R` and `num_partitions=P` runs on R*P devices;
device (replica r, partition p) is number p*R + r, as XLA's default device
assignment numbers them, and in xlapy a device is an MPI process of that rank.
The group mode decides what the ids in `replica_groups` mean (XLA's
`CollectiveOpGroupMode`):

- cross-replica (no channel_id): replica ids; the group runs within each partition;
- cross-partition (all-to-all, collective-permute, collective-broadcast with a
  channel_id): partition ids, within each replica;
- cross-replica-and-partition (channel_id, use_global_device_ids false): replica
  ids, each standing for every partition of that replica;
- flattened ids (channel_id and use_global_device_ids): r*P + p.

No groups means one group of every replica (partition, device) of the mode.
"""

from __future__ import annotations

from dataclasses import dataclass

from xlapy.errors import ExecutionError
from xlapy.hlo.attributes import IotaReplicaGroups
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import Opcode as Op

REDUCTIONS = {Op.ADD: "sum", Op.MULTIPLY: "product", Op.MINIMUM: "min", Op.MAXIMUM: "max",
              Op.AND: "and", Op.OR: "or"}
"""The reducer computations a collective accepts, by their root's opcode."""

CROSS_PARTITION_WITH_CHANNEL = frozenset({
    Op.ALL_TO_ALL, Op.COLLECTIVE_PERMUTE, Op.COLLECTIVE_PERMUTE_START,
    Op.COLLECTIVE_BROADCAST})
"""Ops whose channel_id makes them cross-partition (the others: replica and partition)."""


@dataclass(frozen=True)
class Devices:
    """The devices a module runs on, and which one this process is."""

    replica_count: int = 1
    partition_count: int = 1
    device: int = 0
    process: int = 0
    """This process's MPI rank (a one-device module runs in every process alike)."""

    @property
    def count(self) -> int:
        return self.replica_count * self.partition_count

    @property
    def replica(self) -> int:
        return self.device % self.replica_count

    @property
    def partition(self) -> int:
        return self.device // self.replica_count

    def device_of(self, replica: int, partition: int) -> int:
        return partition * self.replica_count + replica

    def rank_of(self, device: int) -> int:
        return device if self.count > 1 else self.process


def module_devices(module, process: int, process_count: int) -> Devices:
    """The Devices of `module` for process `process` of `process_count`: one device
    per process, so a module for N devices needs exactly N processes."""
    attributes = module.attributes if module is not None else {}
    replicas = attributes.get("replica_count", 1)
    partitions = attributes.get("num_partitions", 1)
    if not isinstance(replicas, int) or not isinstance(partitions, int) or \
            replicas < 1 or partitions < 1:
        raise ExecutionError(f"module {module.name}: replica_count={replicas} and "
                             f"num_partitions={partitions} must be positive integers")
    count = replicas * partitions
    if count == 1:
        return Devices(process=process)
    if count != process_count:
        launch = ("it runs in one process" if process_count == 1 else
                  f"the MPI job has {process_count} processes")
        raise ExecutionError(
            f"module {module.name} has replica_count={replicas} and num_partitions="
            f"{partitions}: it runs on {count} devices, one per process, but {launch}; "
            f"launch it with mpiexec -n {count} (see xlapy.distributed)")
    return Devices(replicas, partitions, process, process)


@dataclass(frozen=True)
class CollectivePlan:
    """One device's part in one collective."""

    what: str
    """The instruction, for messages: `name (opcode)`."""
    group: tuple[int, ...]
    """The participating processes' ranks, in XLA's participant order."""
    index: int
    """This device's position in `group`."""
    reduction: str = ""
    dimension: int | None = None
    targets: tuple[int, ...] = ()
    """collective-permute: the positions in `group` this device sends to."""
    source: int | None = None
    """collective-permute: the position this device receives from (None: zeros)."""


def _groups(instruction: HloInstruction) -> tuple[tuple[int, ...], ...]:
    groups = instruction.attrs.get("replica_groups", ())
    if isinstance(groups, IotaReplicaGroups):
        groups = groups.groups()
    return tuple(tuple(g) for g in groups or ())


def _mode(instruction: HloInstruction) -> str:
    channel = instruction.attrs.get("channel_id") is not None
    if not channel:
        return "cross-replica"
    if instruction.opcode in CROSS_PARTITION_WITH_CHANNEL:
        return "cross-partition"
    if instruction.attrs.get("use_global_device_ids"):
        return "flattened"
    return "cross-replica-and-partition"


def _space(mode: str, devices: Devices) -> tuple[int, int]:
    """(how many ids the mode's groups range over, this device's id among them)."""
    if mode in ("cross-replica", "cross-replica-and-partition"):
        return devices.replica_count, devices.replica
    if mode == "cross-partition":
        return devices.partition_count, devices.partition
    return devices.count, devices.replica * devices.partition_count + devices.partition


def _participants(mode: str, ids: tuple[int, ...], devices: Devices) -> list[int]:
    """The device numbers the ids of one group stand for, in participant order."""
    if mode == "cross-replica":
        return [devices.device_of(r, devices.partition) for r in ids]
    if mode == "cross-partition":
        return [devices.device_of(devices.replica, p) for p in ids]
    if mode == "cross-replica-and-partition":
        return [devices.device_of(r, p) for r in ids for p in range(devices.partition_count)]
    parts = devices.partition_count
    return [devices.device_of(i // parts, i % parts) for i in ids]


def plan(instruction: HloInstruction, devices: Devices) -> CollectivePlan:
    """This device's part in `instruction` (any collective opcode but its -done)."""
    what = f"{instruction.name} ({instruction.opcode.value})"
    mode = _mode(instruction)
    size, me = _space(mode, devices)
    op = instruction.opcode
    if op in (Op.COLLECTIVE_PERMUTE, Op.COLLECTIVE_PERMUTE_START):
        return _permute_plan(instruction, what, mode, size, me, devices)
    groups = _groups(instruction) or (tuple(range(size)),)
    for group in groups:
        bad = [i for i in group if not 0 <= i < size]
        if bad:
            raise ExecutionError(f"{what}: replica group {_spell(group)} names id {bad[0]}, "
                                 f"but the {mode} ids of this module run from 0 to {size - 1}")
    mine = next((g for g in groups if me in g), None)
    if mine is None:
        raise ExecutionError(f"{what}: no replica group holds this device's {mode} id {me} "
                             f"(groups {', '.join(map(_spell, groups))})")
    participants = _participants(mode, mine, devices)
    ranks = tuple(devices.rank_of(d) for d in participants)
    fields = {}
    if instruction.attrs.get("to_apply") is not None:
        fields["reduction"] = reduction_of(instruction)
    dims = instruction.attrs.get("dimensions")
    if dims:
        fields["dimension"] = dims[0]
    elif "split_dimension" in instruction.attrs:
        fields["dimension"] = instruction.attrs["split_dimension"]
    return CollectivePlan(what, ranks, participants.index(devices.device), **fields)


def _permute_plan(instruction, what, mode, size, me, devices) -> CollectivePlan:
    """All the mode's devices form the group; pairs name positions in it."""
    pairs = instruction.attrs.get("source_target_pairs", ())
    noun = "partition" if mode == "cross-partition" else "replica"
    for source, target in pairs:
        if target == me and not 0 <= source < size:
            raise ExecutionError(f"{what}: {noun} {source} sends to {noun} {me}, but the "
                                 f"module has {size} {noun}(s)")
    participants = _participants(mode, tuple(range(size)), devices)
    ranks = tuple(devices.rank_of(d) for d in participants)
    targets = tuple(t for s, t in pairs if s == me and 0 <= t < size)
    sources = [s for s, t in pairs if t == me]
    return CollectivePlan(what, ranks, me, targets=targets,
                          source=sources[0] if sources else None)


def reduction_of(instruction: HloInstruction) -> str:
    """The reduction the instruction's computation performs ("sum", ...), checked:
    its root must be one of REDUCTIONS applied to its two parameters."""
    computation: HloComputation = instruction.attrs["to_apply"]
    root = computation.root_instruction
    params = [i for i in computation.instructions if i.opcode is Op.PARAMETER]
    operands_are_params = len(params) == 2 and len(root.operands) == 2 and \
        {id(o) for o in root.operands} == {id(p) for p in params}
    if root.opcode not in REDUCTIONS or not operands_are_params:
        raise ExecutionError(
            f"{instruction.name} ({instruction.opcode.value}): its computation "
            f"{computation.name} must apply one of {', '.join(o.value for o in REDUCTIONS)} "
            f"to its two parameters; got {root.opcode.value}")
    return REDUCTIONS[root.opcode]


def _spell(group) -> str:
    return "{" + ",".join(map(str, group)) + "}"
