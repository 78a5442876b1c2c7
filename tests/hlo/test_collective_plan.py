"""XLA's participant semantics, read off one instruction for one device, without
MPI: every group mode, empty and explicit groups, iota groups, permute pairs,
the reducer check, and the device-count check."""

from __future__ import annotations

import pytest

from xlapy.errors import ExecutionError
from xlapy.hlo import parse
from xlapy.hlo.collective_plan import Devices, module_devices, plan

REDUCER = """red {
  red.a = f32[] parameter(0)
  red.b = f32[] parameter(1)
  ROOT red.c = f32[] OP(red.a, red.b)
}
"""


def instruction(line: str, replicas=1, partitions=1, op="add"):
    text = (f"HloModule m, replica_count={replicas}, num_partitions={partitions}\n"
            + REDUCER.replace("OP", op) + "ENTRY e {\n  x = f32[4] parameter(0)\n"
            f"  ROOT r = {line}\n}}\n")
    return parse(text).entry_computation.root_instruction


def devices(replicas, partitions, device):
    return Devices(replicas, partitions, device, device)


@pytest.mark.parametrize("device, group, index", [(0, (0, 1), 0), (1, (0, 1), 1), (2, (2, 3), 0),
                                                  (3, (2, 3), 1)])
def test_cross_replica_groups_run_within_each_partition(device, group, index):
    # R=2, P=2: device = p*2 + r; replicas {0,1} of my partition
    p = plan(instruction("f32[4] all-reduce(x), replica_groups={{0,1}}, to_apply=red", 2, 2),
             devices(2, 2, device))
    assert (p.group, p.index, p.reduction) == (group, index, "sum")


def test_a_channel_makes_all_reduce_span_replicas_and_partitions():
    p = plan(instruction("f32[4] all-reduce(x), channel_id=1, replica_groups={{1},{0}}, "
                         "to_apply=red", 2, 2), devices(2, 2, 1))
    assert p.group == (1, 3)   # replica 1 in every partition, replica-major
    p = plan(instruction("f32[4] all-reduce(x), channel_id=1, replica_groups={{0,1}}, "
                         "to_apply=red", 2, 2), devices(2, 2, 3))
    assert p.group == (0, 2, 1, 3) and p.index == 3


def test_flattened_ids_are_replica_times_partitions_plus_partition():
    # flattened id f = r*P + p; device = p*R + r
    p = plan(instruction("f32[4] all-reduce(x), channel_id=1, use_global_device_ids=true, "
                         "replica_groups={{0,3},{1,2}}, to_apply=red", 2, 2), devices(2, 2, 2))
    # device 2 = (r=0, p=1) = flattened 1, in {1,2}: flattened 2 = (r=1, p=0) = device 1
    assert p.group == (2, 1) and p.index == 0


def test_cross_partition_all_to_all_and_empty_groups():
    p = plan(instruction("f32[4] all-to-all(x), channel_id=2, dimensions={0}", 1, 4),
             devices(1, 4, 2))
    assert p.group == (0, 1, 2, 3) and p.index == 2 and p.dimension == 0
    p = plan(instruction("f32[4] all-to-all(x), dimensions={0}", 4, 1), devices(4, 1, 1))
    assert p.group == (0, 1, 2, 3)


def test_iota_replica_groups():
    p = plan(instruction("f32[4] all-reduce(x), replica_groups=[2,2]<=[2,2]T(1,0), "
                         "to_apply=red", 4, 1), devices(4, 1, 1))
    assert p.group == (1, 3)


def test_collective_permute_sources_and_targets():
    line = "f32[4] collective-permute(x), source_target_pairs={{0,1},{1,2},{2,0},{0,3}}"
    p = plan(instruction(line, 4, 1), devices(4, 1, 0))
    assert p.targets == (1, 3) and p.source == 2
    p = plan(instruction(line, 4, 1), devices(4, 1, 3))
    assert p.targets == () and p.source == 0


@pytest.mark.parametrize("op, reduction", [("add", "sum"), ("multiply", "product"),
                                           ("minimum", "min"), ("maximum", "max")])
def test_the_reducer_is_read_and_checked(op, reduction):
    line = "f32[4] all-reduce(x), replica_groups={}, to_apply=red"
    assert plan(instruction(line, op=op), Devices()).reduction == reduction
    with pytest.raises(ExecutionError, match="must apply one of"):
        plan(instruction(line, op="subtract"), Devices())


def test_a_device_in_no_group_and_ids_out_of_range_raise():
    with pytest.raises(ExecutionError, match="no replica group holds"):
        plan(instruction("f32[4] all-reduce(x), replica_groups={{0},{1}}, to_apply=red", 4, 1),
             devices(4, 1, 3))
    with pytest.raises(ExecutionError, match="names id 5"):
        plan(instruction("f32[4] all-reduce(x), replica_groups={{0,5}}, to_apply=red", 2, 1),
             devices(2, 1, 0))


def test_a_module_for_several_devices_needs_as_many_processes():
    module = parse("HloModule m, replica_count=2, num_partitions=2\nENTRY e {\n"
                   "  ROOT x = f32[] parameter(0)\n}\n")
    with pytest.raises(ExecutionError, match="mpiexec -n 4"):
        module_devices(module, 0, 1)
    with pytest.raises(ExecutionError, match="the MPI job has 2 processes"):
        module_devices(module, 0, 2)
    d = module_devices(module, 3, 4)
    assert (d.replica, d.partition) == (1, 1)
