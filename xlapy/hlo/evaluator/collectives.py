"""Interpreter rules for collectives, with single-program semantics: one
replica and one partition.

With a single participant every collective is the identity on its data
(all-reduce of one value, all-gather of one shard, ...), except that
collective-permute yields zeros unless replica 0 sends to itself. Each rule
first checks that the instruction names no other participant, so a program
written for several devices fails loudly instead of computing nonsense.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ExecutionError
from xlapy.hlo.attributes import IotaReplicaGroups
from xlapy.hlo.evaluator.rules import rule
from xlapy.hlo.opcode import Opcode


def check_single_participant(instruction) -> None:
    """Raise ExecutionError unless the module runs one replica and one partition
    and every replica group is {0}."""
    module = instruction.parent.parent if instruction.parent is not None else None
    attributes = module.attributes if module is not None else {}
    for key in ("replica_count", "num_partitions"):
        count = attributes.get(key, 1)
        if isinstance(count, int) and count > 1:
            raise ExecutionError(f"{instruction.name} ({instruction.opcode.value}): the "
                                 f"interpreter runs one replica and one partition, but the "
                                 f"module has {key}={count}")
    groups = instruction.attrs.get("replica_groups", ())
    if isinstance(groups, IotaReplicaGroups):
        groups = groups.groups()
    if not isinstance(groups, tuple):
        raise ExecutionError(f"{instruction.name}: cannot read replica_groups {groups!r}")
    for group in groups:
        if tuple(group) != (0,):
            raise ExecutionError(f"{instruction.name} ({instruction.opcode.value}): replica "
                                 f"group {{{','.join(map(str, group))}}} names a device other "
                                 "than 0, but the interpreter runs a single device")


def _operand_value(operands):
    """The data of a collective: its one operand, or a tuple of several."""
    return operands[0] if len(operands) == 1 else tuple(operands)


@rule(Opcode.ALL_REDUCE, Opcode.ALL_REDUCE_START, Opcode.ALL_GATHER, Opcode.REDUCE_SCATTER,
      Opcode.ALL_TO_ALL, Opcode.COLLECTIVE_BROADCAST)
def _identity_collective(instruction, operands, evaluator):
    """One participant: the reduction, gather, scatter (shard_count 1) or
    exchange of a single value is that value."""
    check_single_participant(instruction)
    return _operand_value(operands)


@rule(Opcode.ALL_REDUCE_DONE)
def _all_reduce_done(instruction, operands, evaluator):
    return operands[0]


@rule(Opcode.ALL_GATHER_START)
def _all_gather_start(instruction, operands, evaluator):
    """The start's value is (operands, results); with one participant they agree."""
    check_single_participant(instruction)
    value = _operand_value(operands)
    return value, value


@rule(Opcode.ALL_GATHER_DONE)
def _all_gather_done(instruction, operands, evaluator):
    return operands[0][1]


def _permuted(instruction, operand):
    """collective-permute's result on replica 0: its own data when the pair
    {0,0} is listed, zeros when nobody sends to it."""
    pairs = instruction.attrs.get("source_target_pairs", ())
    sources = [source for source, target in pairs if target == 0]
    if not sources:
        return _zeros_like(operand)
    if sources != [0]:
        raise ExecutionError(f"{instruction.name}: replica {sources[0]} sends to replica 0, "
                             "but the interpreter runs a single replica")
    return operand


def _zeros_like(value):
    if isinstance(value, tuple):
        return tuple(_zeros_like(v) for v in value)
    return np.zeros_like(value)


@rule(Opcode.COLLECTIVE_PERMUTE)
def _collective_permute(instruction, operands, evaluator):
    check_single_participant(instruction)
    if len(operands) != 1:
        raise ExecutionError(f"{instruction.name}: the interpreter supports collective-permute "
                             f"with one operand, not {len(operands)}")
    return _permuted(instruction, operands[0])


@rule(Opcode.COLLECTIVE_PERMUTE_START)
def _collective_permute_start(instruction, operands, evaluator):
    """(operand, result, context scalars...): the context words are zeros."""
    check_single_participant(instruction)
    if len(operands) != 1:
        raise ExecutionError(f"{instruction.name}: the interpreter supports "
                             f"collective-permute-start with one operand, not {len(operands)}")
    context = [np.zeros(s.dimensions, s.dtype) for s in instruction.shape.tuple_shapes[2:]]
    return (operands[0], _permuted(instruction, operands[0]), *context)


@rule(Opcode.COLLECTIVE_PERMUTE_DONE)
def _collective_permute_done(instruction, operands, evaluator):
    return operands[0][1]


@rule(Opcode.REPLICA_ID, Opcode.PARTITION_ID)
def _device_id(instruction, operands, evaluator):
    return np.zeros((), dtype=np.uint32)
