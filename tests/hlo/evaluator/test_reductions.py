"""Interpreter reductions against NumPy and hand-computed values: reduce (fast
and general paths, the pairwise tree, variadic argmax against the sequential
fold) and map, for every dtype. Reduce-window and select-and-scatter are in
test_reduce_window.py."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hlo.evaluator.reduction_util import (
    ALL,
    FLOATS,
    INTS,
    NUMPY_REDUCERS,
    PRED_REDUCERS,
    REAL,
    Body,
    affine_body,
    argmax_body,
    arr,
    close,
    concat_body,
    digits_of,
    dt,
    execute_text,
    jax_arg_body,
    sample,
    sequential_fold,
)
from tests.hlo.evaluator.util import run_op, scalar_computation
from xlapy.hlo.evaluator.scalar_function import ScalarFunction
from xlapy.hlo.ir import HloComputation
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

# -- reduce: fast path --------------------------------------------------------------------


def reducer_cases():
    for name in ALL:
        ops = ["add", "multiply"]
        if name not in ("c64", "c128"):
            ops += ["maximum", "minimum"]
        if name == "pred" or name in INTS:
            ops += ["and", "or", "xor"]
        for op in ops:
            yield name, op


@pytest.mark.parametrize("name,op", list(reducer_cases()))
def test_reduce_fast_path_every_dtype(name, op):
    x = sample(name, (3, 4, 5), seed=1, small=True)
    init = sample(name, (), seed=2, small=True)
    shape = arr(name, (4,))
    got = run_op("reduce", shape, x, init, dimensions=(0, 2),
                 to_apply=scalar_computation(op, dt(name)))
    if name == "pred":
        ufunc = PRED_REDUCERS[op]
        expected = ufunc(init, ufunc.reduce(x, axis=(0, 2)))
    else:
        wide = np.float64 if name in FLOATS else (np.complex128 if name[0] == "c" else dt(name))
        ufunc = NUMPY_REDUCERS[op]
        expected = ufunc(init.astype(wide), ufunc.reduce(x.astype(wide), axis=(0, 2)))
    close(got, np.asarray(expected).astype(dt(name)), name)


def test_reduce_integer_sum_wraps():
    x = np.array([100, 100, 100], dtype=np.int8)
    got = run_op("reduce", arr("s8"), x, np.int8(0), dimensions=(0,),
                 to_apply=scalar_computation("add", np.int8))
    assert got == np.int8(44)  # 300 mod 256


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_reduce_max_min_propagate_nan(op):
    x = np.array([[1.0, np.nan, 3.0], [1.0, 2.0, 3.0]], dtype=np.float32)
    got = run_op("reduce", arr("f32", (2,)), x, np.float32(0), dimensions=(1,),
                 to_apply=scalar_computation(op, np.float32))
    assert np.isnan(got[0]) and got[1] == (3.0 if op == "maximum" else 0.0)
    got = run_op("reduce", arr("f32", (2,)), x[1:].repeat(2, 0), np.float32(np.nan),
                 dimensions=(1,), to_apply=scalar_computation(op, np.float32))
    assert np.isnan(got).all()  # a NaN init propagates too


def test_reduce_folds_init_once_and_empty_gives_init():
    x = np.array([1, 2, 3], dtype=np.int32)
    got = run_op("reduce", arr("s32"), x, np.int32(10), dimensions=(0,),
                 to_apply=scalar_computation("add", np.int32))
    assert got == 16
    empty = np.zeros((0, 2), dtype=np.float32)
    got = run_op("reduce", arr("f32", (2,)), empty, np.float32(-7), dimensions=(0,),
                 to_apply=scalar_computation("maximum", np.float32))
    np.testing.assert_array_equal(got, [-7, -7])


def test_reduce_no_dimensions_is_elementwise_with_init():
    x = np.array([[1, 2], [3, 4]], dtype=np.float32)
    got = run_op("reduce", arr("f32", (2, 2)), x, np.float32(0.5), dimensions=(),
                 to_apply=scalar_computation("add", np.float32))
    np.testing.assert_array_equal(got, x + 0.5)


def test_reduce_bf16_sum_is_rounded_once():
    # 1 + 1024 * 2^-8: a bf16 running sum would stall at 2 (its step there is 2^-6);
    # the interpreter sums in f32 and rounds once.
    x = np.full(1024, 2.0 ** -8, dtype=ml_dtypes.bfloat16)
    got = run_op("reduce", arr("bf16"), x, np.array(1, ml_dtypes.bfloat16), dimensions=(0,),
                 to_apply=scalar_computation("add", ml_dtypes.bfloat16))
    assert float(got) == 5.0


# -- reduce: general path -----------------------------------------------------------------


def tree_fold(values: list, f):
    """The interpreter's documented association: neighbours combined pairwise,
    the earlier on the left, an odd last element moving up a level as it is."""
    while len(values) > 1:
        pairs = [f(values[i], values[i + 1]) for i in range(0, len(values) - 1, 2)]
        values = pairs + values[len(pairs) * 2:]
    return values[0]


@pytest.mark.parametrize("name", ["s32", "u8", "f32", "f64", "bf16", "c64"])
@pytest.mark.parametrize("length", [1, 4, 5, 7])
def test_reduce_general_body_combines_as_a_pairwise_tree(name, length):
    # XLA lets a reduce reassociate: init ⊕ tree(x), never a sequential fold.
    x = sample(name, (3, length), seed=3, small=True)
    init = sample(name, (), seed=4, small=True)
    got = run_op("reduce", arr(name, (3,)), x, init, dimensions=(1,), to_apply=affine_body(name))

    def f(acc, v):
        return (acc * np.array(2, dtype=dt(name)) + v).astype(dt(name))

    expected = [f(init, tree_fold(list(row), f)) for row in x]
    close(got, np.array(expected, dtype=dt(name)), name)


def test_reduce_general_body_multiple_dims_row_major():
    x = (np.arange(24, dtype=np.int64).reshape(2, 3, 4) % 9) + 1
    tens = np.full(x.shape, 10, np.int64)
    shape = Shape.tuple([arr("s64", (3,))] * 2)
    got, scale = run_op("reduce", shape, x, tens, np.int64(0), np.int64(1), dimensions=(2, 0),
                        to_apply=concat_body())
    for j in range(3):  # reduced dims in row-major order (0 then 2)
        assert got[j] == digits_of(x[:, j, :].reshape(-1))
        assert scale[j] == 10 ** 8


def select_max_body(name: str) -> HloComputation:
    b = Body(f"select_max_{name}")
    acc, x = b.param(0, name), b.param(1, name)
    return b.build(b.op(Opcode.SELECT, name, b.compare(acc, x, "GE"), acc, x))


def test_reduce_long_general_fold_is_correct():
    x = np.random.default_rng(5).standard_normal((2, 5000)).astype(np.float32)
    got = run_op("reduce", arr("f32", (2,)), x, np.float32(-np.inf), dimensions=(1,),
                 to_apply=select_max_body("f32"))
    np.testing.assert_array_equal(got, x.max(axis=1))


def test_reduce_body_with_non_elementwise_op_runs_per_element():
    # f(a, b) = reshape(broadcast(a + b, [1]) -> [1]) -> []: the broadcast to f32[1]
    # cannot run on whole arrays, so each element is evaluated on its own.
    b = Body("roundabout_add")
    p0, p1 = b.param(0, "f32"), b.param(1, "f32")
    total = b.op(Opcode.ADD, "f32", p0, p1)
    wide = b.op(Opcode.BROADCAST, arr("f32", (1,)), total, dimensions=())
    body = b.build(b.op(Opcode.RESHAPE, "f32", wide))
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = run_op("reduce", arr("f32", (3,)), x, np.float32(1), dimensions=(1,), to_apply=body)
    np.testing.assert_array_equal(got, x.sum(axis=1) + 1)


@pytest.mark.parametrize("name", REAL)
def test_variadic_reduce_argmax(name):
    x = sample(name, (4, 9), seed=6, small=True)  # small ints: many ties
    index = np.broadcast_to(np.arange(9, dtype=np.int32), (4, 9)).copy()
    low = np.array(-np.inf if name in FLOATS else np.iinfo(dt(name)).min).astype(dt(name))
    shape = Shape.tuple([arr(name, (4,)), arr("s32", (4,))])
    values, indices = run_op("reduce", shape, x, index, low, np.int32(-1), dimensions=(1,),
                             to_apply=argmax_body(name))
    np.testing.assert_array_equal(indices, np.argmax(x.astype(np.float64), axis=1))
    np.testing.assert_array_equal(values, x.max(axis=1))


def test_variadic_reduce_sum_and_product_together():
    b = Body("sum_prod")
    a0, a1, x0, x1 = (b.param(i, "s32") for i in range(4))
    t = Shape.tuple([Shape.scalar("s32")] * 2)
    body = b.build(b.op(Opcode.TUPLE, t, b.op(Opcode.ADD, "s32", a0, x0),
                        b.op(Opcode.MULTIPLY, "s32", a1, x1)))
    x = np.arange(1, 7, dtype=np.int32).reshape(2, 3)
    s, p = run_op("reduce", Shape.tuple([arr("s32", (3,))] * 2), x, x, np.int32(0),
                  np.int32(1), dimensions=(0,), to_apply=body)
    np.testing.assert_array_equal(s, [5, 7, 9])
    np.testing.assert_array_equal(p, [4, 10, 18])


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(["f32", "bf16", "s8"]), direction=st.sampled_from(["GT", "LT"]),
       rows=st.integers(1, 3), n=st.integers(1, 50), seed=st.integers(0, 2**16))
def test_tree_of_selection_reducer_equals_sequential_fold(name, direction, rows, n, seed):
    # A selection under a total order (NaN first, then value, then lower index) is
    # associative: the pairwise tree picks exactly what the sequential fold picks.
    rng = np.random.default_rng(seed)
    pool = [-2.0, 0.0, 1.0, 3.0] + ([np.nan, -np.inf] if name in FLOATS else [])
    x = rng.choice(np.array(pool), (rows, n)).astype(dt(name))
    index = np.broadcast_to(np.arange(n, dtype=np.int32), x.shape).copy()
    init = np.array(np.inf if direction == "LT" else -np.inf).astype(dt(name)) \
        if name in FLOATS else np.array(127 if direction == "LT" else -128, dt(name))
    body = jax_arg_body(name, direction)
    shape = Shape.tuple([arr(name, (rows,)), arr("s32", (rows,))])
    got = run_op("reduce", shape, x, index, init, np.int32(0), dimensions=(1,), to_apply=body)
    want = [w[:, -1] for w in sequential_fold(body, [x, index], [init, np.int32(0)])]
    assert got[0].tobytes() == want[0].tobytes()
    np.testing.assert_array_equal(got[1], want[1])


def test_argmax_of_1000_is_ten_vectorised_steps(monkeypatch):
    calls = []
    original = ScalarFunction.__call__
    monkeypatch.setattr(ScalarFunction, "__call__",
                        lambda self, *args: calls.append(1) or original(self, *args))
    x = np.random.default_rng(8).integers(0, 30, 1000).astype(np.float32)
    x[[17, 400]] = np.nan
    shape = Shape.tuple([arr("f32"), arr("s32")])
    values, index = run_op("reduce", shape, x, np.arange(1000, dtype=np.int32),
                           np.float32(-np.inf), np.int32(0), dimensions=(0,),
                           to_apply=jax_arg_body("f32", "GT"))
    assert int(index) == 17 and np.isnan(values)
    assert len(calls) == 11  # ceil(log2(1000)) tree levels, then init ⊕ total


# -- map ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL)
def test_map_binary_every_dtype(name):
    x, y = sample(name, (2, 3), seed=12, small=True), sample(name, (2, 3), seed=13, small=True)
    op = "or" if name == "pred" else "add"
    got = run_op("map", arr(name, (2, 3)), x, y, dimensions=(0, 1),
                 to_apply=scalar_computation(op, dt(name)))
    wide = {"c": np.complex128, "f": np.float64}.get(np.dtype(dt(name)).kind, dt(name))
    expected = (x | y) if name == "pred" else (x.astype(wide) + y.astype(wide)).astype(dt(name))
    close(got, expected, name)


def test_map_three_operands_mixed_types():
    b = Body("fma_select")
    p, a, c = b.param(0, "pred"), b.param(1, "f32"), b.param(2, "f32")
    body = b.build(b.op(Opcode.SELECT, "f32", p, b.op(Opcode.MULTIPLY, "f32", a, c), c))
    pred = np.array([True, False, True])
    a_, c_ = np.array([1, 2, 3], np.float32), np.array([4, 5, 6], np.float32)
    got = run_op("map", arr("f32", (3,)), pred, a_, c_, dimensions=(0,), to_apply=body)
    np.testing.assert_array_equal(got, [4, 5, 18])


def test_map_constant_body_broadcasts():
    b = Body("seven")
    b.param(0, "s32")
    body = b.build(b.const(7, "s32"))
    got = run_op("map", arr("s32", (2, 2)), np.zeros((2, 2), np.int32), dimensions=(0, 1),
                 to_apply=body)
    np.testing.assert_array_equal(got, np.full((2, 2), 7))


# -- whole modules as JAX prints them -------------------------------------------------

JAX_ARGMAX = """
HloModule jit_argmax, entry_computation_layout={(f32[3,4]{1,0})->s32[3]{0}}

region_0.2 {
  Arg_0.3 = f32[] parameter(0)
  Arg_2.5 = f32[] parameter(2)
  compare.7 = pred[] compare(Arg_0.3, Arg_2.5), direction=GT
  compare.8 = pred[] compare(Arg_0.3, Arg_0.3), direction=NE
  or.9 = pred[] or(compare.7, compare.8)
  select.14 = f32[] select(or.9, Arg_0.3, Arg_2.5)
  compare.10 = pred[] compare(Arg_0.3, Arg_2.5), direction=EQ
  Arg_1.4 = s32[] parameter(1)
  Arg_3.6 = s32[] parameter(3)
  compare.11 = pred[] compare(Arg_1.4, Arg_3.6), direction=LT
  and.12 = pred[] and(compare.10, compare.11)
  or.13 = pred[] or(or.9, and.12)
  select.15 = s32[] select(or.13, Arg_1.4, Arg_3.6)
  ROOT tuple.16 = (f32[], s32[]) tuple(select.14, select.15)
}

ENTRY main.27 {
  Arg_0.18 = f32[3,4]{1,0} parameter(0)
  iota.21 = s32[4]{0} iota(), iota_dimension=0
  broadcast.22 = s32[3,4]{1,0} broadcast(iota.21), dimensions={1}
  constant.20 = f32[] constant(-inf)
  constant.19 = s32[] constant(0)
  reduce.23 = (f32[3]{0}, s32[3]{0}) reduce(Arg_0.18, broadcast.22, constant.20, constant.19), dimensions={1}, to_apply=region_0.2
  ROOT get-tuple-element.25 = s32[3]{0} get-tuple-element(reduce.23), index=1
}
"""


def test_jax_argmax_module_picks_first_max_and_first_nan():
    x = np.array([[1, 3, 3, 0], [np.nan, 1, np.nan, 2], [-1, -1, -2, -5]], np.float32)
    (got,) = execute_text(JAX_ARGMAX, x)
    np.testing.assert_array_equal(got, [1, 0, 0])


def test_long_variadic_argmax_combines_pairwise_correctly():
    # 3000 > the sequential limit: the tuple-valued body is combined pairwise.
    x = np.random.default_rng(16).integers(0, 50, (2, 3000)).astype(np.float32)
    index = np.broadcast_to(np.arange(3000, dtype=np.int32), x.shape).copy()
    shape = Shape.tuple([arr("f32", (2,)), arr("s32", (2,))])
    values, indices = run_op("reduce", shape, x, index, np.float32(-np.inf), np.int32(-1),
                             dimensions=(1,), to_apply=argmax_body("f32"))
    np.testing.assert_array_equal(indices, np.argmax(x, axis=1))
    np.testing.assert_array_equal(values, x.max(axis=1))
