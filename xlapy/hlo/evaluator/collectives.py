"""Interpreter rules for collectives and device ids.

A module for one device computes each collective as XLA does on one device
(all-reduce of one value, all-gather of one shard, ...). A module for N
devices runs in each of N MPI processes (`xlapy.distributed`), and each rule
exchanges data with the other processes through `xlapy.hlo.collectives.run`,
the same code the CPU backend's runtime entry calls. Run in a lone process,
such a module fails with an error saying how to launch it.
"""

from __future__ import annotations

from xlapy.hlo import collectives
from xlapy.hlo.evaluator.rules import rule
from xlapy.hlo.opcode import Opcode


def _module(instruction):
    return instruction.parent.parent if instruction.parent is not None else None


@rule(Opcode.ALL_REDUCE, Opcode.ALL_REDUCE_START, Opcode.ALL_REDUCE_DONE, Opcode.ALL_GATHER,
      Opcode.ALL_GATHER_START, Opcode.ALL_GATHER_DONE, Opcode.REDUCE_SCATTER,
      Opcode.ALL_TO_ALL, Opcode.COLLECTIVE_BROADCAST, Opcode.COLLECTIVE_PERMUTE,
      Opcode.COLLECTIVE_PERMUTE_START, Opcode.COLLECTIVE_PERMUTE_DONE)
def _collective(instruction, operands, evaluator):
    devices = collectives.devices_for(_module(instruction))
    return collectives.run(instruction, list(operands), devices)


@rule(Opcode.REPLICA_ID, Opcode.PARTITION_ID)
def _device_id(instruction, operands, evaluator):
    return collectives.device_id(instruction, collectives.devices_for(_module(instruction)))
