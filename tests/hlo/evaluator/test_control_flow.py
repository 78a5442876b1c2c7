"""Interpreter control flow against hand-computed values: while, conditional
(pred and indexed, out-of-range index), call, fusion, custom-call, the
ordering/identity ops, batch normalisation (against NumPy and finite
differences) and rng."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.hlo.evaluator.util import run_op, scalar_computation
from xlapy.errors import ExecutionError
from xlapy.hlo.attributes import ComparisonDirection, RandomDistribution
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.evaluator import control_flow
from xlapy.hlo.evaluator.rules import TOKEN
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

ALL = ["pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
       "f16", "bf16", "f32", "f64", "c64", "c128"]
FLOATS = ["f16", "bf16", "f32", "f64"]


def dt(name: str) -> np.dtype:
    return PrimitiveType.from_text(name).numpy


def arr(name: str, dims=()) -> Shape:
    return Shape.array(name, dims)


def value_of(name: str, dims=(2, 3), seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name == "pred":
        return rng.random(dims) < 0.5
    real = rng.integers(0, 100, dims).astype(np.float64)
    value = real + 1j * real[::-1] if name[0] == "c" else real
    return value.astype(dt(name))


class Comp:
    """A small builder for hand-written computations."""

    def __init__(self, name: str):
        self.name = name
        self.instructions: list[HloInstruction] = []

    def add(self, opcode, shape, *operands, name="", **attrs) -> HloInstruction:
        shape = Shape.scalar(shape) if isinstance(shape, str) else shape
        instruction = HloInstruction(opcode, shape, operands, attrs,
                                     name=name or f"{self.name}.{len(self.instructions)}")
        self.instructions.append(instruction)
        return instruction

    def param(self, number: int, shape) -> HloInstruction:
        shape = Shape.scalar(shape) if isinstance(shape, str) else shape
        instruction = HloInstruction(Opcode.PARAMETER, shape, name=f"{self.name}.p{number}",
                                     parameter_number=number)
        self.instructions.append(instruction)
        return instruction

    def const(self, value, name: str) -> HloInstruction:
        instruction = HloInstruction(Opcode.CONSTANT, Shape.scalar(name),
                                     name=f"{self.name}.c{len(self.instructions)}",
                                     literal=np.array(value, dtype=dt(name)))
        self.instructions.append(instruction)
        return instruction

    def build(self, root) -> HloComputation:
        return HloComputation(self.name, self.instructions, root=root)


# -- while --------------------------------------------------------------------------------

STATE = Shape.tuple([arr("s32"), arr("f32", (3,))])


def counting_loop(limit: int):
    """while i < limit: (i, acc) = (i + 1, acc + broadcast(i))."""
    cond = Comp("cond")
    state = cond.param(0, STATE)
    i = cond.add(Opcode.GET_TUPLE_ELEMENT, "s32", state, index=0)
    condition = cond.build(cond.add(Opcode.COMPARE, "pred", i, cond.const(limit, "s32"),
                                    direction=ComparisonDirection.LT))
    body = Comp("body")
    state = body.param(0, STATE)
    i = body.add(Opcode.GET_TUPLE_ELEMENT, "s32", state, index=0)
    acc = body.add(Opcode.GET_TUPLE_ELEMENT, arr("f32", (3,)), state, index=1)
    as_float = body.add(Opcode.CONVERT, "f32", i)
    step = body.add(Opcode.BROADCAST, arr("f32", (3,)), as_float, dimensions=())
    new = body.add(Opcode.TUPLE, STATE, body.add(Opcode.ADD, "s32", i, body.const(1, "s32")),
                   body.add(Opcode.ADD, arr("f32", (3,)), acc, step))
    return condition, body.build(new)


@pytest.mark.parametrize("limit", [0, 1, 10])
def test_while_loop_computes_a_sum(limit):
    condition, body = counting_loop(limit)
    start = (np.int32(0), np.array([1, 2, 3], np.float32))
    i, acc = run_op("while", STATE, start, condition=condition, body=body)
    assert i == max(limit, 0)
    np.testing.assert_array_equal(acc, np.array([1, 2, 3]) + sum(range(limit)))


def test_while_never_entered_returns_init_unchanged():
    condition, body = counting_loop(-5)
    start = (np.int32(7), np.array([4, 5, 6], np.float32))
    i, acc = run_op("while", STATE, start, condition=condition, body=body)
    assert i == 7
    np.testing.assert_array_equal(acc, [4, 5, 6])


@pytest.mark.parametrize("name", ALL)
def test_while_call_and_conditional_carry_every_dtype(name):
    """Loop state, call arguments and branch results keep their type and bits."""
    x = value_of(name)
    state = Shape.tuple([arr("s32"), arr(name, x.shape)])
    cond = Comp("cond")
    i = cond.add(Opcode.GET_TUPLE_ELEMENT, "s32", cond.param(0, state), index=0)
    condition = cond.build(cond.add(Opcode.COMPARE, "pred", i, cond.const(3, "s32"),
                                    direction=ComparisonDirection.LT))
    body = Comp("body")
    p = body.param(0, state)
    i = body.add(Opcode.GET_TUPLE_ELEMENT, "s32", p, index=0)
    v = body.add(Opcode.GET_TUPLE_ELEMENT, arr(name, x.shape), p, index=1)
    loop_body = body.build(body.add(Opcode.TUPLE, state, body.add(
        Opcode.ADD, "s32", i, body.const(1, "s32")), v))
    count, carried = run_op("while", state, (np.int32(0), x), condition=condition,
                            body=loop_body)
    assert count == 3 and carried.dtype == x.dtype and carried.tobytes() == x.tobytes()

    keep = Comp("keep")
    keep_root = keep.param(0, arr(name, x.shape))
    identity = keep.build(keep_root)
    got = run_op("call", arr(name, x.shape), x, to_apply=identity)
    assert got.tobytes() == x.tobytes()
    other = value_of(name, seed=1)
    got = run_op("conditional", arr(name, x.shape), np.array(False), x, other,
                 true_computation=identity, false_computation=identity)
    assert got.dtype == x.dtype and got.tobytes() == other.tobytes()


# -- conditional --------------------------------------------------------------------------

def unary_branch(name: str, opcode: Opcode | None, constant=None) -> HloComputation:
    """x -> op(x, constant), or x -> x when opcode is None."""
    c = Comp(name)
    x = c.param(0, "s32")
    if opcode is None:
        return c.build(x)
    return c.build(c.add(opcode, "s32", x, c.const(constant, "s32")))


@pytest.mark.parametrize("pred,expected", [(True, 15), (False, 2)])
def test_conditional_on_pred(pred, expected):
    got = run_op("conditional", arr("s32"), np.array(pred), np.int32(5), np.int32(20),
                 true_computation=unary_branch("t", Opcode.MULTIPLY, 3),
                 false_computation=unary_branch("f", Opcode.SUBTRACT, 18))
    assert got == expected


@pytest.mark.parametrize("index,expected", [(0, 11), (1, 200), (2, 3), (3, 3), (-1, 3),
                                            (2**31 - 1, 3)])
def test_conditional_on_index_out_of_range_runs_last_branch(index, expected):
    branches = (unary_branch("b0", Opcode.ADD, 10), unary_branch("b1", Opcode.MULTIPLY, 100),
                unary_branch("b2", None))
    got = run_op("conditional", arr("s32"), np.int32(index), np.int32(1), np.int32(2),
                 np.int32(3), branch_computations=branches)
    assert got == expected


def test_conditional_pred_with_branch_list_picks_true_first():
    branches = (unary_branch("t", Opcode.ADD, 1), unary_branch("f", Opcode.ADD, 2))
    assert run_op("conditional", arr("s32"), np.array(True), np.int32(0), np.int32(0),
                  branch_computations=branches) == 1
    assert run_op("conditional", arr("s32"), np.array(False), np.int32(0), np.int32(0),
                  branch_computations=branches) == 2


# -- call, fusion, custom-call ------------------------------------------------------------

@pytest.mark.parametrize("opcode,key", [("call", "to_apply"), ("fusion", "calls")])
def test_call_and_fusion_run_their_computation(opcode, key):
    c = Comp("fused")
    a, b = c.param(0, arr("f32", (2,))), c.param(1, arr("f32", (2,)))
    callee = c.build(c.add(Opcode.MULTIPLY, arr("f32", (2,)),
                           c.add(Opcode.ADD, arr("f32", (2,)), a, b), b))
    x, y = np.array([1, 2], np.float32), np.array([3, 4], np.float32)
    got = run_op(opcode, arr("f32", (2,)), x, y, **{key: callee})
    np.testing.assert_array_equal(got, (x + y) * y)


def test_unknown_custom_call_target_is_named():
    with pytest.raises(ExecutionError, match="my_kernel"):
        run_op("custom-call", arr("f32", (2,)), np.zeros(2, np.float32),
               custom_call_target="my_kernel")


def test_sharding_custom_call_is_identity():
    x = np.arange(4, dtype=np.float32)
    got = run_op("custom-call", arr("f32", (4,)), x, custom_call_target="Sharding")
    np.testing.assert_array_equal(got, x)


def test_registered_custom_call_target_runs():
    def twice(instruction, operands, evaluator):
        return operands[0] * 2

    control_flow.register_custom_call("xlapy_test_twice", twice)
    try:
        got = run_op("custom-call", arr("s32", (2,)), np.array([1, 2], np.int32),
                     custom_call_target="xlapy_test_twice")
        np.testing.assert_array_equal(got, [2, 4])
        with pytest.raises(ValueError):
            control_flow.register_custom_call("xlapy_test_twice", twice)
    finally:
        del control_flow.CUSTOM_CALL_TARGETS["xlapy_test_twice"]


def test_topk_custom_call_through_dispatch():
    c = Comp("gt")
    cmp = c.build(c.add(Opcode.COMPARE, "pred", c.param(0, "f32"), c.param(1, "f32"),
                        direction=ComparisonDirection.GT))
    x = np.array([0.5, 3, -1, 3, 2], np.float32)
    values, indices = run_op("custom-call", Shape.tuple([arr("f32", (2,)), arr("s32", (2,))]),
                             x, custom_call_target="TopK", to_apply=cmp)
    np.testing.assert_array_equal(values, [3, 3])
    np.testing.assert_array_equal(indices, [1, 3])


# -- ordering and identities --------------------------------------------------------------

@pytest.mark.parametrize("name", ALL)
def test_identity_ops_every_dtype(name):
    x = value_of(name)
    got = run_op("opt-barrier", Shape.tuple([arr(name, x.shape), arr("s32")]), (x, np.int32(4)))
    assert got[0].tobytes() == x.tobytes() and got[1] == 4
    got = run_op("domain", arr(name, x.shape), x)
    assert got.dtype == x.dtype and got.tobytes() == x.tobytes()


def test_add_dependency_passes_its_first_operand_and_after_all_makes_a_token():
    c = Comp("entry")
    x = c.param(0, arr("f32", (2,)))
    token = c.add(Opcode.AFTER_ALL, Shape.token())
    root = c.add(Opcode.ADD_DEPENDENCY, arr("f32", (2,)), x, token)
    from xlapy.hlo.evaluator.evaluator import Evaluator

    evaluator = Evaluator()
    assert evaluator.call(c.build(token), [np.zeros(2, np.float32)]) is TOKEN
    got = evaluator.call(c.build(root), [np.array([1, 2], np.float32)])
    np.testing.assert_array_equal(got, [1, 2])


# -- batch normalisation ------------------------------------------------------------------

def numpy_batch_norm(x, scale, offset, epsilon, feature):
    axes = tuple(d for d in range(x.ndim) if d != feature)
    shape = [1] * x.ndim
    shape[feature] = -1
    wide = x.astype(np.float64)
    mean = wide.mean(axis=axes)
    var = wide.var(axis=axes)
    eps = float(np.float32(epsilon))
    y = ((wide - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
         * scale.astype(np.float64).reshape(shape) + offset.astype(np.float64).reshape(shape))
    return y, mean, var


TOL = {"f16": 2e-3, "bf16": 2e-2, "f32": 1e-5, "f64": 1e-12}


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("feature", [1, 3])
def test_batch_norm_training_and_inference(name, feature):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((2, 3, 4, 5)) * 3 + 1).astype(dt(name))
    channels = x.shape[feature]
    scale = rng.uniform(0.5, 2, channels).astype(dt(name))
    offset = rng.standard_normal(channels).astype(dt(name))
    shape = Shape.tuple([arr(name, x.shape), arr(name, (channels,)), arr(name, (channels,))])
    y, mean, var = run_op("batch-norm-training", shape, x, scale, offset, epsilon=0.001,
                          feature_index=feature)
    ey, emean, evar = numpy_batch_norm(x, scale, offset, 0.001, feature)
    tol = TOL[name]
    for got, expected in ((y, ey), (mean, emean), (var, evar)):
        assert got.dtype == dt(name)
        np.testing.assert_allclose(got.astype(np.float64), expected, rtol=tol, atol=tol)
    inferred = run_op("batch-norm-inference", arr(name, x.shape), x, scale, offset,
                      emean.astype(dt(name)), evar.astype(dt(name)), epsilon=0.001,
                      feature_index=feature)
    np.testing.assert_allclose(inferred.astype(np.float64), ey, rtol=tol * 10, atol=tol * 10)


def test_batch_norm_epsilon_is_an_f32():
    # var 0 and epsilon 0.1 (f32: 0.100000001490116...): y = x_centred / sqrt(eps_f32).
    x = np.array([[1.0], [1.0]], np.float64)
    got, _, _ = run_op("batch-norm-training",
                       Shape.tuple([arr("f64", (2, 1)), arr("f64", (1,)), arr("f64", (1,))]),
                       x, np.array([1.0]), np.array([5.0]), epsilon=0.1, feature_index=1)
    np.testing.assert_array_equal(got, [[5.0], [5.0]])
    y = run_op("batch-norm-inference", arr("f64", (1, 1)), np.array([[2.0]]), np.array([1.0]),
               np.array([0.0]), np.array([1.0]), np.array([0.0]), epsilon=0.1, feature_index=1)
    assert y[0, 0] == 1.0 / np.sqrt(float(np.float32(0.1)))


def test_batch_norm_grad_matches_finite_differences():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 2, 4))
    scale, offset = rng.uniform(0.5, 2, 2), rng.standard_normal(2)
    dy = rng.standard_normal(x.shape)
    eps, feature = 0.01, 1
    training = Shape.tuple([arr("f64", x.shape), arr("f64", (2,)), arr("f64", (2,))])

    def loss(x_, scale_, offset_):
        y, _, _ = run_op("batch-norm-training", training, x_, scale_, offset_, epsilon=eps,
                         feature_index=feature)
        return float((y * dy).sum())

    _, mean, var = run_op("batch-norm-training", training, x, scale, offset, epsilon=eps,
                          feature_index=feature)
    grads = run_op("batch-norm-grad", training, x, scale, mean, var, dy, epsilon=eps,
                   feature_index=feature)
    h = 1e-6
    for which, (point, grad) in enumerate(zip((x, scale, offset), grads)):
        numeric = np.zeros_like(point)
        for i in np.ndindex(*point.shape):
            up, down = point.copy(), point.copy()
            up[i] += h
            down[i] -= h
            args = [x, scale, offset]
            args[which] = up
            f_up = loss(*args)
            args[which] = down
            numeric[i] = (f_up - loss(*args)) / (2 * h)
        np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["f16", "bf16", "f32"])
def test_batch_norm_grad_narrow_types_round_once(name):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3)).astype(dt(name))
    dy = rng.standard_normal((4, 3)).astype(dt(name))
    scale = np.ones(3, dt(name))
    mean, var = x.astype(np.float64).mean(0), x.astype(np.float64).var(0)
    shape = Shape.tuple([arr(name, (4, 3)), arr(name, (3,)), arr(name, (3,))])
    gx, gs, go = run_op("batch-norm-grad", shape, x, scale, mean.astype(dt(name)),
                        var.astype(dt(name)), dy, epsilon=0.001, feature_index=1)
    np.testing.assert_allclose(go.astype(np.float64), dy.astype(np.float64).sum(0),
                               rtol=TOL[name], atol=TOL[name])
    assert gx.dtype == gs.dtype == dt(name)


# -- rng ----------------------------------------------------------------------------------

UNIFORM_TYPES = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"] + FLOATS


@pytest.mark.parametrize("name", UNIFORM_TYPES)
def test_rng_uniform_stays_in_half_open_interval(name):
    a, b = np.array(2, dt(name)), np.array(6, dt(name))
    got = run_op("rng", arr(name, (4000,)), a, b, distribution=RandomDistribution.UNIFORM)
    wide = got.astype(np.float64)
    assert got.dtype == dt(name)
    assert wide.min() >= 2 and wide.max() < 6
    assert abs(wide.mean() - (3.5 if name[0] in "su" else 4.0)) < 0.15
    if name[0] in "su":
        assert set(np.unique(wide)) == {2, 3, 4, 5}


def test_rng_uniform_narrow_float_never_reaches_b():
    # [1, 1.0078125) holds exactly one bf16 value, 1: rounding up would give b.
    a, b = np.array(1, ml_dtypes.bfloat16), np.array(1.0078125, ml_dtypes.bfloat16)
    got = run_op("rng", arr("bf16", (1000,)), a, b, distribution=RandomDistribution.UNIFORM)
    assert (got.astype(np.float32) == 1).all()


def test_rng_uniform_empty_interval_gives_a():
    got = run_op("rng", arr("s32", (5,)), np.int32(3), np.int32(3),
                 distribution=RandomDistribution.UNIFORM)
    np.testing.assert_array_equal(got, [3] * 5)


def test_rng_uniform_full_u64_range():
    hi = np.uint64(2**64 - 1)
    got = run_op("rng", arr("u64", (1000,)), np.uint64(0), hi,
                 distribution=RandomDistribution.UNIFORM)
    assert got.dtype == np.uint64 and got.max() > 2**62


@pytest.mark.parametrize("name", FLOATS)
def test_rng_normal_moments(name):
    got = run_op("rng", arr(name, (20000,)), np.array(3, dt(name)), np.array(2, dt(name)),
                 distribution=RandomDistribution.NORMAL)
    wide = got.astype(np.float64)
    assert got.dtype == dt(name)
    assert abs(wide.mean() - 3) < 0.1 and abs(wide.std() - 2) < 0.1


def test_rng_normal_rejects_integers():
    with pytest.raises(ExecutionError, match="float"):
        run_op("rng", arr("s32", (2,)), np.int32(0), np.int32(1),
               distribution=RandomDistribution.NORMAL)


def test_reducer_helper_sanity():
    # scalar_computation builds the reducers used elsewhere; make sure call runs one.
    got = run_op("call", arr("f32"), np.float32(2), np.float32(5),
                 to_apply=scalar_computation("maximum", np.float32))
    assert got == 5


# -- whole modules as JAX prints them -----------------------------------------------------

def execute_text(text: str, *args) -> list:
    """Parse, verify and run a module on the interpreter backend."""
    from xlapy.backends.interpreter import InterpreterBackend
    from xlapy.hlo import parse

    return InterpreterBackend().compile(parse(text)).execute(*args)


JAX_FORI_LOOP = """
HloModule jit_fori, entry_computation_layout={(s32[], f32[3]{0})->(f32[3]{0}, f32[3]{0})}

region_0.7 {
  arg_tuple.8 = (s32[], f32[3]{0}, f32[3]{0}, s32[]) parameter(0)
  get-tuple-element.9 = s32[] get-tuple-element(arg_tuple.8), index=0
  constant.15 = s32[] constant(1)
  add.16 = s32[] add(get-tuple-element.9, constant.15)
  get-tuple-element.10 = f32[3]{0} get-tuple-element(arg_tuple.8), index=1
  get-tuple-element.11 = f32[3]{0} get-tuple-element(arg_tuple.8), index=2
  multiply.17 = f32[3]{0} multiply(get-tuple-element.10, get-tuple-element.11)
  convert.18 = f32[] convert(get-tuple-element.9)
  broadcast.19 = f32[3]{0} broadcast(convert.18), dimensions={}
  add.20 = f32[3]{0} add(multiply.17, broadcast.19)
  constant.13 = f32[] constant(0.5)
  broadcast.14 = f32[3]{0} broadcast(constant.13), dimensions={}
  multiply.21 = f32[3]{0} multiply(get-tuple-element.11, broadcast.14)
  get-tuple-element.12 = s32[] get-tuple-element(arg_tuple.8), index=3
  ROOT tuple.22 = (s32[], f32[3]{0}, f32[3]{0}, s32[]) tuple(add.16, add.20, multiply.21, get-tuple-element.12)
}

region_1.23 {
  arg_tuple.24 = (s32[], f32[3]{0}, f32[3]{0}, s32[]) parameter(0)
  get-tuple-element.25 = s32[] get-tuple-element(arg_tuple.24), index=0
  get-tuple-element.28 = s32[] get-tuple-element(arg_tuple.24), index=3
  ROOT compare.29 = pred[] compare(get-tuple-element.25, get-tuple-element.28), direction=LT
}

ENTRY main.36 {
  constant.3 = s32[] constant(0)
  constant.4 = f32[] constant(0)
  broadcast.5 = f32[3]{0} broadcast(constant.4), dimensions={}
  Arg_1.2 = f32[3]{0} parameter(1)
  Arg_0.1 = s32[] parameter(0)
  tuple.6 = (s32[], f32[3]{0}, f32[3]{0}, s32[]) tuple(constant.3, broadcast.5, Arg_1.2, Arg_0.1)
  while.30 = (s32[], f32[3]{0}, f32[3]{0}, s32[]) while(tuple.6), condition=region_1.23, body=region_0.7
  get-tuple-element.32 = f32[3]{0} get-tuple-element(while.30), index=1
  get-tuple-element.33 = f32[3]{0} get-tuple-element(while.30), index=2
  ROOT tuple.35 = (f32[3]{0}, f32[3]{0}) tuple(get-tuple-element.32, get-tuple-element.33)
}
"""


@pytest.mark.parametrize("trips", [0, 1, 4])
def test_jax_fori_loop_module(trips):
    v = np.array([1.0, 2.0, -4.0], np.float32)
    acc, w = np.zeros(3, np.float32), v.copy()
    for i in range(trips):  # acc = acc * w + i; w = w * 0.5
        acc, w = acc * w + np.float32(i), w * np.float32(0.5)
    got_acc, got_w = execute_text(JAX_FORI_LOOP, np.int32(trips), v)
    np.testing.assert_array_equal(got_acc, acc)
    np.testing.assert_array_equal(got_w, w)


JAX_SWITCH = """
HloModule jit_switch, entry_computation_layout={(s32[], f32[3]{0})->f32[3]{0}}

region_0.6 {
  Arg_.7 = f32[3]{0} parameter(0)
  ROOT sine.8 = f32[3]{0} sine(Arg_.7)
}

region_1.9 {
  Arg_.10 = f32[3]{0} parameter(0)
  ROOT cosine.11 = f32[3]{0} cosine(Arg_.10)
}

region_2.12 {
  Arg_.13 = f32[3]{0} parameter(0)
  ROOT negate.14 = f32[3]{0} negate(Arg_.13)
}

ENTRY main.16 {
  Arg_0.1 = s32[] parameter(0)
  Arg_1.2 = f32[3]{0} parameter(1)
  ROOT conditional.15 = f32[3]{0} conditional(Arg_0.1, Arg_1.2, Arg_1.2, Arg_1.2), branch_computations={region_0.6, region_1.9, region_2.12}
}
"""


@pytest.mark.parametrize("index,fn", [(0, np.sin), (1, np.cos), (2, np.negative),
                                      (7, np.negative), (-3, np.negative)])
def test_jax_switch_module(index, fn):
    x = np.array([0.5, -1.0, 2.0], np.float32)
    (got,) = execute_text(JAX_SWITCH, np.int32(index), x)
    np.testing.assert_allclose(got, fn(x.astype(np.float64)).astype(np.float32), rtol=1e-6)
