"""The random programs with collectives (`xlapy.fuzz.collective_programs`), checked
in one process: the same seed makes the same program and inputs (every process of
a job must build the same one, or their collectives never meet), every program
verifies, and 300 seeds spread over the opcodes, group modes, device layouts and
element types the generator promises. Running them takes MPI:
tests/distributed/test_random_collective_programs.py."""

from __future__ import annotations

import collections
import functools

import numpy as np
import pytest

from xlapy.fuzz.collective_programs import collective_program
from xlapy.hlo import parse, verify
from xlapy.hlo.opcode import Opcode as Op

SEEDS = range(300)
COLLECTIVE_OPS = (
    Op.ALL_REDUCE, Op.ALL_REDUCE_START, Op.ALL_REDUCE_DONE, Op.ALL_GATHER, Op.ALL_GATHER_START,
    Op.ALL_GATHER_DONE, Op.REDUCE_SCATTER, Op.ALL_TO_ALL, Op.COLLECTIVE_PERMUTE,
    Op.COLLECTIVE_PERMUTE_START, Op.COLLECTIVE_PERMUTE_DONE, Op.COLLECTIVE_BROADCAST)
MOVING = (Op.ALL_TO_ALL, Op.COLLECTIVE_PERMUTE, Op.COLLECTIVE_PERMUTE_START,
          Op.COLLECTIVE_BROADCAST)
"""Their channel_id makes them cross-partition (XLA's CollectiveOpGroupMode)."""


def _mode(i) -> str:
    if i.attrs.get("channel_id") is None:
        return "cross-replica"
    if i.opcode in MOVING:
        return "cross-partition"
    return "flattened" if i.attrs.get("use_global_device_ids") else \
        "cross-replica-and-partition"


@functools.cache
def _census(devices: int) -> collections.Counter:
    """What the programs for `devices` devices hold, counted over SEEDS: each key
    once per program that has it."""
    counts: collections.Counter = collections.Counter()
    for seed in SEEDS:
        module = parse(collective_program(seed, devices)[0])
        seen = {("split", module.attributes.get("replica_count", 1),
                 module.attributes.get("num_partitions", 1))}
        for computation in module.computations:
            for i in computation.instructions:
                seen.add(i.opcode)
                if i.opcode not in COLLECTIVE_OPS or i.opcode.value.endswith("-done"):
                    continue
                seen.add(("mode", i.opcode, _mode(i)))
                seen.add(("type", (i.shape.tuple_shapes[0] if i.shape.is_tuple
                                   else i.shape).element_type.value))
                if len(i.operands) > 1:
                    seen.add(("variadic", i.opcode))
                if computation.name.startswith("body"):
                    seen.add("in a loop body")
                groups = i.attrs.get("replica_groups")
                seen.add(("groups", type(groups).__name__ if groups else "none"))
                if groups and not hasattr(groups, "groups") and \
                        len({len(g) for g in groups}) > 1:
                    seen.add("uneven groups")
        counts.update(seen)
    return counts


def test_a_seed_makes_the_same_program_and_inputs_every_time():
    for seed in (0, 7, 123):
        for devices in (2, 4):
            text, inputs_for = collective_program(seed, devices)
            again, inputs_again = collective_program(seed, devices)
            assert text == again
            for device in range(devices):
                for a, b in zip(inputs_for(device), inputs_again(device), strict=True):
                    np.testing.assert_array_equal(a, b)


def test_each_device_gets_its_own_inputs():
    differ = 0
    for seed in range(20):
        _, inputs_for = collective_program(seed, 2)
        differ += any(not np.array_equal(a, b)
                      for a, b in zip(inputs_for(0), inputs_for(1), strict=True))
    assert differ >= 18


@pytest.mark.parametrize("devices", [2, 4])
def test_every_program_verifies_and_has_inputs_for_its_devices(devices):
    for seed in SEEDS:
        text, inputs_for = collective_program(seed, devices)
        module = parse(text)
        verify(module)
        replicas = module.attributes.get("replica_count", 1)
        partitions = module.attributes.get("num_partitions", 1)
        assert replicas * partitions == devices, seed
        shapes = [p.shape for p in module.entry_computation.parameters]
        for shape, value in zip(shapes, inputs_for(devices - 1), strict=True):
            assert value.shape == tuple(shape.dimensions) and value.dtype == shape.dtype


@pytest.mark.parametrize("devices", [2, 4])
def test_the_programs_spread_over_ops_modes_and_types(devices):
    counts = _census(devices)
    wanted = [*COLLECTIVE_OPS, Op.REPLICA_ID, Op.PARTITION_ID, Op.WHILE, Op.DOT, Op.REDUCE,
              Op.BROADCAST, Op.RESHAPE, Op.TRANSPOSE, Op.SLICE, Op.DYNAMIC_SLICE,
              ("split", devices, 1), ("split", 1, devices), "in a loop body",
              ("groups", "none"), ("groups", "tuple"), ("groups", "IotaReplicaGroups"),
              *[("variadic", op) for op in (Op.ALL_REDUCE, Op.ALL_GATHER, Op.REDUCE_SCATTER,
                                            Op.ALL_TO_ALL)],
              *[("type", t) for t in ("f32", "s32", "pred", "bf16")]]
    for op in (Op.ALL_REDUCE, Op.ALL_GATHER, Op.REDUCE_SCATTER):
        wanted += [("mode", op, m) for m in ("cross-replica", "cross-replica-and-partition",
                                            "flattened")]
    for op in (Op.ALL_TO_ALL, Op.COLLECTIVE_PERMUTE, Op.COLLECTIVE_BROADCAST):
        wanted += [("mode", op, m) for m in ("cross-replica", "cross-partition")]
    if devices == 4:
        wanted += [("split", 2, 2), "uneven groups"]
    assert {str(w): counts[w] for w in wanted if counts[w] < 5} == {}
