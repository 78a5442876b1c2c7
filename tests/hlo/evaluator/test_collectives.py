"""Interpreter collectives on a single device (one replica, one partition):
each is the identity on its data, collective-permute gives zeros unless
replica 0 sends to itself, and anything naming another device is an error."""

from __future__ import annotations

import numpy as np
import pytest

from tests.hlo.evaluator.util import run_op, scalar_computation, shape_of
from xlapy.errors import ExecutionError
from xlapy.hlo.attributes import IotaReplicaGroups
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.evaluator.evaluator import Evaluator
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

ALL = ["pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
       "f16", "bf16", "f32", "f64", "c64", "c128"]
IDENTITY_OPS = ["all-reduce", "all-reduce-start", "all-gather", "reduce-scatter", "all-to-all",
                "collective-broadcast"]


def dt(name: str) -> np.dtype:
    return PrimitiveType.from_text(name).numpy


def value_of(name: str, dims=(2, 3), seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name == "pred":
        return rng.random(dims) < 0.5
    real = rng.integers(1, 100, dims).astype(np.float64)
    return (real + 1j * real[::-1] if name[0] == "c" else real).astype(dt(name))


def reducer_attrs(opcode: str, name: str) -> dict:
    if opcode in ("all-reduce", "all-reduce-start", "reduce-scatter"):
        return {"to_apply": scalar_computation("or" if name == "pred" else "add", dt(name))}
    if opcode == "all-gather":
        return {"dimensions": (0,)}
    return {}


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("opcode", IDENTITY_OPS)
def test_single_device_collectives_are_identity(opcode, name):
    x = value_of(name)
    got = run_op(opcode, shape_of(x), x, replica_groups=((0,),), **reducer_attrs(opcode, name))
    assert got.dtype == x.dtype and got.tobytes() == x.tobytes()


@pytest.mark.parametrize("opcode", ["all-reduce", "all-gather", "reduce-scatter", "all-to-all"])
def test_variadic_collectives_return_a_tuple(opcode):
    x, y = value_of("f32"), value_of("s32", (4,))
    got = run_op(opcode, shape_of((x, y)), x, y, **reducer_attrs(opcode, "f32"))
    assert isinstance(got, tuple)
    np.testing.assert_array_equal(got[0], x)
    np.testing.assert_array_equal(got[1], y)


@pytest.mark.parametrize("groups", [(), ((0,),), IotaReplicaGroups((1, 1), (1,))])
def test_replica_groups_naming_only_device_zero_are_accepted(groups):
    x = value_of("f32")
    got = run_op("all-reduce", shape_of(x), x, replica_groups=groups,
                 to_apply=scalar_computation("add", np.float32))
    np.testing.assert_array_equal(got, x)


@pytest.mark.parametrize("groups", [((0, 1),), ((0,), (1,)), IotaReplicaGroups((1, 2), (2,))])
@pytest.mark.parametrize("opcode", IDENTITY_OPS)
def test_groups_with_other_devices_raise(opcode, groups):
    x = value_of("f32")
    with pytest.raises(ExecutionError, match="replica group"):
        run_op(opcode, shape_of(x), x, replica_groups=groups, **reducer_attrs(opcode, "f32"))


def run_in_module(opcode: str, x: np.ndarray, module_attributes: dict, **attrs):
    param = HloInstruction(Opcode.PARAMETER, shape_of(x), name="p0", parameter_number=0)
    root = HloInstruction(Opcode(opcode), shape_of(x), [param], attrs, name="result")
    computation = HloComputation("entry", [param, root])
    module = HloModule("multi")
    module.attributes.update(module_attributes)
    for callee in root.called_computations:
        module.add_computation(callee)
    module.add_computation(computation, entry=True)
    return Evaluator().call(computation, [x])


@pytest.mark.parametrize("key", ["replica_count", "num_partitions"])
def test_modules_for_several_devices_raise(key):
    x = value_of("f32")
    with pytest.raises(ExecutionError, match=key):
        run_in_module("all-reduce", x, {key: 2}, to_apply=scalar_computation("add", np.float32))
    got = run_in_module("all-reduce", x, {key: 1}, to_apply=scalar_computation("add", np.float32))
    np.testing.assert_array_equal(got, x)


@pytest.mark.parametrize("name", ALL)
def test_collective_permute_to_self_copies(name):
    x = value_of(name)
    got = run_op("collective-permute", shape_of(x), x, source_target_pairs=((0, 0),))
    assert got.tobytes() == x.tobytes()


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("pairs", [(), ((0, 1),), ((0, 1), (1, 2))])
def test_collective_permute_without_a_source_gives_zeros(name, pairs):
    x = value_of(name)
    got = run_op("collective-permute", shape_of(x), x, source_target_pairs=pairs)
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, np.zeros_like(x))


def test_collective_permute_from_a_missing_replica_raises():
    x = value_of("f32")
    with pytest.raises(ExecutionError, match="replica 1"):
        run_op("collective-permute", shape_of(x), x, source_target_pairs=((1, 0),))


def evaluate_pair(start_op: str, done_op: str, start_shape: Shape, x, **attrs):
    """start -> done in one computation; returns (start value, done value)."""
    param = HloInstruction(Opcode.PARAMETER, shape_of(x), name="p0", parameter_number=0)
    start = HloInstruction(Opcode(start_op), start_shape, [param], attrs, name="start")
    done = HloInstruction(Opcode(done_op), shape_of(x), [start], name="done")
    root = HloInstruction(Opcode.TUPLE, Shape.tuple([start_shape, shape_of(x)]), [start, done],
                          name="root")
    return Evaluator().call(HloComputation("entry", [param, start, done, root]), [x])


def test_all_reduce_start_done():
    x = value_of("f32")
    start, done = evaluate_pair("all-reduce-start", "all-reduce-done", shape_of(x), x,
                                to_apply=scalar_computation("add", np.float32))
    np.testing.assert_array_equal(start, x)
    np.testing.assert_array_equal(done, x)


def test_all_gather_start_done():
    x = value_of("s32")
    start, done = evaluate_pair("all-gather-start", "all-gather-done", shape_of((x, x)), x,
                                dimensions=(0,))
    np.testing.assert_array_equal(start[0], x)
    np.testing.assert_array_equal(start[1], x)
    np.testing.assert_array_equal(done, x)


@pytest.mark.parametrize("pairs,copies", [(((0, 0),), True), (((0, 1),), False)])
def test_collective_permute_start_done(pairs, copies):
    x = value_of("f32")
    shape = Shape.tuple([shape_of(x), shape_of(x), Shape.scalar("u32"), Shape.scalar("u32")])
    start, done = evaluate_pair("collective-permute-start", "collective-permute-done", shape, x,
                                source_target_pairs=pairs)
    np.testing.assert_array_equal(start[0], x)
    np.testing.assert_array_equal(done, x if copies else np.zeros_like(x))
    assert start[2] == 0 and start[3].dtype == np.uint32


@pytest.mark.parametrize("opcode", ["replica-id", "partition-id"])
def test_replica_and_partition_id_are_u32_zero(opcode):
    got = run_op(opcode, Shape.scalar("u32"))
    assert got.dtype == np.uint32 and got.shape == () and got == 0
