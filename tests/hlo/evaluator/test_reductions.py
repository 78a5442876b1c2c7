"""Interpreter reductions against NumPy and hand-computed values: reduce (fast
and general paths, the pairwise tree, variadic argmax against the sequential
fold), reduce-window (pooling, padding, dilation, cumulative windows as
scans), select-and-scatter (max-pool gradient) and map, for every dtype."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.hlo.evaluator.reduction_util import (
    ALL,
    FLOATS,
    INTS,
    REAL,
    Body,
    arr,
    close,
    dt,
    execute_text,
    sample,
    window,
)
from tests.hlo.evaluator.util import run_op, scalar_computation
from xlapy.hlo.attributes import Window, WindowDimension
from xlapy.hlo.evaluator import reductions
from xlapy.hlo.evaluator.evaluator import Evaluator
from xlapy.hlo.evaluator.scalar_function import ScalarFunction
from xlapy.hlo.ir import HloComputation
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

# -- reduce: fast path --------------------------------------------------------------------

NUMPY_REDUCERS = {
    "add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
}
PRED_REDUCERS = {"add": np.logical_or, "multiply": np.logical_and, "maximum": np.logical_or,
                 "minimum": np.logical_and, "and": np.logical_and, "or": np.logical_or,
                 "xor": np.logical_xor}


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

def affine_body(name: str) -> HloComputation:
    """f(acc, x) = acc * 2 + x: not associative, so it shows the fold order."""
    b = Body(f"affine_{name}")
    acc, x = b.param(0, name), b.param(1, name)
    two = b.const(2, name)
    return b.build(b.op(Opcode.ADD, name, b.op(Opcode.MULTIPLY, name, acc, two), x))


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


def concat_body() -> HloComputation:
    """(a, 10^len a) ⊕ (b, 10^len b) = (a·10^len b + b, 10^len a · 10^len b): digit
    strings concatenated, associative but not commutative, so the result spells
    out the order in which elements were combined."""
    b = Body("concat")
    a, pa, x, px = (b.param(i, "s64") for i in range(4))
    joined = b.op(Opcode.ADD, "s64", b.op(Opcode.MULTIPLY, "s64", a, px), x)
    scale = b.op(Opcode.MULTIPLY, "s64", pa, px)
    return b.build(b.op(Opcode.TUPLE, Shape.tuple([Shape.scalar("s64")] * 2), joined, scale))


def digits_of(values) -> int:
    return int("".join(str(int(v)) for v in values) or "0")


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


def argmax_body(name: str) -> HloComputation:
    """JAX's argmax reducer: the larger value wins, ties keep the lower index."""
    b = Body(f"argmax_{name}")
    av, ai, xv, xi = b.param(0, name), b.param(1, "s32"), b.param(2, name), b.param(3, "s32")
    gt = b.compare(xv, av, "GT")
    eq = b.compare(xv, av, "EQ")
    lower = b.compare(xi, ai, "LT")
    take = b.op(Opcode.OR, "pred", gt, b.op(Opcode.AND, "pred", eq, lower))
    return b.build(b.op(Opcode.TUPLE, Shape.tuple([Shape.scalar(name), Shape.scalar("s32")]),
                        b.op(Opcode.SELECT, name, take, xv, av),
                        b.op(Opcode.SELECT, "s32", take, xi, ai)))


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


def jax_arg_body(name: str, direction: str) -> HloComputation:
    """JAX's argmax (GT) / argmin (LT) reducer: NaN wins, then the better value,
    and among equal values the lower index."""
    b = Body(f"jax_arg{direction}_{name}")
    av, ai, xv, xi = b.param(0, name), b.param(1, "s32"), b.param(2, name), b.param(3, "s32")
    pick_value = b.op(Opcode.OR, "pred", b.compare(av, xv, direction), b.compare(av, av, "NE"))
    tie = b.op(Opcode.AND, "pred", b.compare(av, xv, "EQ"), b.compare(ai, xi, "LT"))
    pick_index = b.op(Opcode.OR, "pred", pick_value, tie)
    return b.build(b.op(Opcode.TUPLE, Shape.tuple([Shape.scalar(name), Shape.scalar("s32")]),
                        b.op(Opcode.SELECT, name, pick_value, av, xv),
                        b.op(Opcode.SELECT, "s32", pick_index, ai, xi)))


def sequential_fold(body: HloComputation, inputs: list, inits: list) -> list:
    """The old definition: init, then each element of the last axis in order, one
    body evaluation per element. Returns the running values (one array per
    output, shaped like the inputs); the reduction is the last of them."""
    evaluator = Evaluator()
    running = [np.empty(inputs[0].shape, dtype=np.asarray(init).dtype) for init in inits]
    for row in np.ndindex(*inputs[0].shape[:-1]):
        accs = list(inits)
        for k in range(inputs[0].shape[-1]):
            value = evaluator.call(body, [*accs, *(np.asarray(x[row + (k,)]) for x in inputs)])
            accs = list(value) if isinstance(value, tuple) else [value]
            for out, acc in zip(running, accs):
                out[row + (k,)] = acc
    return running


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


# -- reduce-window ------------------------------------------------------------------------

def reference_reduce_window(x, init, fn, win: Window, out_shape):
    """The definition, one output element at a time: init, then every element of
    the window that is neither padding nor a base-dilation hole, in order."""
    out = np.empty(out_shape, dtype=x.dtype)
    dims = win.dimensions
    for o in np.ndindex(*out_shape):
        acc = init
        for k in np.ndindex(*(d.size for d in dims)):
            index = []
            for i, d in enumerate(dims):
                pos = o[i] * d.stride + k[i] * d.window_dilation - d.padding_low
                if pos < 0 or pos % d.base_dilation or pos // d.base_dilation >= x.shape[i]:
                    break
                index.append(pos // d.base_dilation)
            else:
                acc = fn(acc, x[tuple(index)])
        out[o] = acc
    return out


def out_extent(n, d: WindowDimension) -> int:
    base = (n - 1) * d.base_dilation + 1 + d.padding_low + d.padding_high if n else 0
    span = (d.size - 1) * d.window_dilation + 1
    return max(0, (base - span) // d.stride + 1) if base >= span else 0


def test_max_pool_matches_numpy_sliding_windows():
    x = np.random.default_rng(7).standard_normal((2, 6, 8)).astype(np.float32)
    win = window(WindowDimension(1), WindowDimension(2, 2), WindowDimension(2, 2))
    got = run_op("reduce-window", arr("f32", (2, 3, 4)), x, np.float32(-np.inf), window=win,
                 to_apply=scalar_computation("maximum", np.float32))
    expected = x.reshape(2, 3, 2, 4, 2).max(axis=(2, 4))
    np.testing.assert_array_equal(got, expected)


def test_avg_pool_same_padding_matches_numpy():
    x = np.random.default_rng(8).standard_normal((5, 5)).astype(np.float64)
    win = window(WindowDimension(3, 1, 1, 1), WindowDimension(3, 1, 1, 1))
    got = run_op("reduce-window", arr("f64", (5, 5)), x, np.float64(0), window=win,
                 to_apply=scalar_computation("add", np.float64))
    padded = np.pad(x, 1)
    expected = np.lib.stride_tricks.sliding_window_view(padded, (3, 3)).sum(axis=(2, 3))
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_reduce_window_padding_contributes_nothing_but_init():
    # XLA skips padding: with init 1 and add, each window is 1 + its real elements.
    x = np.array([10, 20, 30], dtype=np.int32)
    win = window(WindowDimension(3, 1, 2, 2))
    got = run_op("reduce-window", arr("s32", (5,)), x, np.int32(1), window=win,
                 to_apply=scalar_computation("add", np.int32))
    np.testing.assert_array_equal(got, [11, 31, 61, 51, 31])


def test_reduce_window_docs_min_example():
    # operation_semantics.md: min over [10000, 1000, 100, 10, 1], window 3, stride 2.
    x = np.array([10000, 1000, 100, 10, 1], dtype=np.float32)
    big = np.float32(np.finfo(np.float32).max)
    valid = run_op("reduce-window", arr("f32", (2,)), x, big, window=window(WindowDimension(3, 2)),
                   to_apply=scalar_computation("minimum", np.float32))
    same = run_op("reduce-window", arr("f32", (3,)), x, big,
                  window=window(WindowDimension(3, 2, 1, 1)),
                  to_apply=scalar_computation("minimum", np.float32))
    np.testing.assert_array_equal(valid, [100, 1])
    np.testing.assert_array_equal(same, [1000, 10, 1])


@pytest.mark.parametrize("name", ALL)
def test_reduce_window_sum_every_dtype(name):
    x = sample(name, (4, 5), seed=9, small=True)
    win = window(WindowDimension(2, 1, 1, 0, 1, 2), WindowDimension(2, 2, 0, 1, 2, 1))
    out = tuple(out_extent(n, d) for n, d in zip(x.shape, win.dimensions))
    op = "add"
    init = np.array(0 if name != "pred" else False, dtype=dt(name))
    got = run_op("reduce-window", arr(name, out), x, init, window=win,
                 to_apply=scalar_computation(op, dt(name)))
    if name == "pred":
        fn = np.logical_or
    elif name in ("f16", "bf16"):
        def fn(a, b):
            return np.float32(a) + np.float32(b)
    else:
        fn = np.add
    expected = reference_reduce_window(x, init, fn, win, out)
    close(got, expected.astype(dt(name)), name)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_reduce_window_random_windows_match_definition(data):
    rank = data.draw(st.integers(1, 3))
    dims_in, dims_win = [], []
    for _ in range(rank):
        dims_in.append(data.draw(st.integers(0, 5)))
        dims_win.append(WindowDimension(
            size=data.draw(st.integers(1, 3)), stride=data.draw(st.integers(1, 3)),
            padding_low=data.draw(st.integers(0, 2)), padding_high=data.draw(st.integers(0, 2)),
            window_dilation=data.draw(st.integers(1, 2)), base_dilation=data.draw(st.integers(1, 3))))
    win = Window(tuple(dims_win))
    x = np.random.default_rng(len(dims_in)).integers(-50, 50, dims_in).astype(np.int32)
    out = tuple(out_extent(n, d) for n, d in zip(dims_in, dims_win))
    general = data.draw(st.booleans())
    # A cumulative window is a scan, which reassociates the non-associative affine body.
    assume(not general or reductions.cumulative_axis(win, dims_in) is None)
    body = affine_body("s32") if general else scalar_computation("maximum", np.int32)
    fn = (lambda a, b: np.int32(a * 2 + b)) if general else max
    got = run_op("reduce-window", arr("s32", out), x, np.int32(-3), window=win, to_apply=body)
    np.testing.assert_array_equal(got, reference_reduce_window(x, np.int32(-3), fn, win, out))


def test_variadic_reduce_window_argmax_pool():
    x = np.array([[1, 5, 2, 2], [7, 0, 2, 9]], dtype=np.float32)
    index = np.arange(8, dtype=np.int32).reshape(2, 4)
    win = window(WindowDimension(2, 2), WindowDimension(2, 2))
    shape = Shape.tuple([arr("f32", (1, 2)), arr("s32", (1, 2))])
    values, indices = run_op("reduce-window", shape, x, index, np.float32(-np.inf),
                             np.int32(-1), window=win, to_apply=argmax_body("f32"))
    np.testing.assert_array_equal(values, [[7, 9]])
    np.testing.assert_array_equal(indices, [[4, 7]])


# -- reduce-window: cumulative windows ----------------------------------------------------

def cumulative_window(shape, axis: int, reverse: bool) -> Window:
    n = shape[axis]
    pads = (0, n - 1) if reverse else (n - 1, 0)
    return Window(tuple(WindowDimension(n, 1, *pads) if d == axis else WindowDimension(1, 1)
                        for d in range(len(shape))))


def test_cumulative_axis_recognises_only_running_windows():
    assert reductions.cumulative_axis(cumulative_window((3, 5), 1, False), (3, 5)) == (1, False)
    assert reductions.cumulative_axis(cumulative_window((3, 5), 0, True), (3, 5)) == (0, True)
    assert reductions.cumulative_axis(window(WindowDimension(5, 1, 3, 0)), (5,)) is None
    assert reductions.cumulative_axis(window(WindowDimension(5, 2, 4, 0)), (5,)) is None
    assert reductions.cumulative_axis(window(WindowDimension(5, 1, 4, 0, 2)), (5,)) is None
    assert reductions.cumulative_axis(window(WindowDimension(4, 1, 3, 0)), (5,)) is None
    assert reductions.cumulative_axis(window(WindowDimension(1, 1)), (1,)) is None
    both = window(WindowDimension(3, 1, 2, 0), WindowDimension(4, 1, 3, 0))
    assert reductions.cumulative_axis(both, (3, 4)) is None


def cumulative_cases():
    for op in ["add", "multiply", "maximum", "minimum"]:
        for name in ["s8", "u16", "s64", "f16", "bf16", "f32", "f64"]:
            yield op, name
    for op in ["and", "or", "xor"]:
        for name in ["pred", "u8", "s32"]:
            yield op, name
    yield "add", "c64"


@pytest.mark.parametrize("op,name", list(cumulative_cases()))
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_window_is_the_running_fold(op, name, axis, reverse):
    x = sample(name, (4, 6), seed=21, small=op == "multiply")
    if name in FLOATS:
        x[1, 2] = x[3, 0] = np.nan  # max/min propagate NaN onward
    init = sample(name, (), seed=22, small=True)  # not an identity: applied exactly once
    win = cumulative_window(x.shape, axis, reverse)
    got = run_op("reduce-window", arr(name, x.shape), x, init, window=win,
                 to_apply=scalar_computation(op, dt(name)))
    ufunc = (PRED_REDUCERS if name == "pred" else NUMPY_REDUCERS)[op]
    narrow = name in ("f16", "bf16")  # computed in f32, rounded once

    def fn(a, b):
        return ufunc(np.float32(a), np.float32(b)) if narrow else ufunc(a, b)

    with np.errstate(all="ignore"):
        expected = reference_reduce_window(x, init, fn, win, x.shape)
    if reverse and name in FLOATS + ["c64"] and op in ("add", "multiply"):
        close(got, expected, name)  # the scan runs from the far end: rounding may differ
    else:
        assert got.tobytes() == expected.tobytes()


def test_cumulative_window_of_a_general_body_is_an_order_keeping_scan():
    # The concatenating body is associative but not commutative: the log-step scan
    # must combine every prefix (suffix) in order, init once on the left.
    digits = np.random.default_rng(23).integers(1, 10, (2, 11)).astype(np.int64)
    tens = np.full(digits.shape, 10, np.int64)
    shape = Shape.tuple([arr("s64", digits.shape)] * 2)
    for reverse in (False, True):
        win = cumulative_window(digits.shape, 1, reverse)
        got, scale = run_op("reduce-window", shape, digits, tens, np.int64(7), np.int64(10),
                            window=win, to_apply=concat_body())
        for r, i in np.ndindex(*digits.shape):
            covered = digits[r, i:] if reverse else digits[r, :i + 1]
            assert got[r, i] == digits_of([7, *covered])
            assert scale[r, i] == 10 ** (len(covered) + 1)


def test_running_argmax_window_equals_sequential_fold():
    x = np.random.default_rng(24).choice(np.array([0, 1, 2, np.nan]), (3, 40)).astype(np.float32)
    index = np.broadcast_to(np.arange(40, dtype=np.int32), x.shape).copy()
    body = jax_arg_body("f32", "GT")
    shape = Shape.tuple([arr("f32", x.shape), arr("s32", x.shape)])
    values, indices = run_op("reduce-window", shape, x, index, np.float32(-np.inf),
                             np.int32(0), window=cumulative_window(x.shape, 1, False),
                             to_apply=body)
    want = sequential_fold(body, [x, index], [np.float32(-np.inf), np.int32(0)])
    assert values.tobytes() == want[0].tobytes()
    np.testing.assert_array_equal(indices, want[1])


def test_long_cumulative_windows_are_fast(monkeypatch):
    calls = []
    original = ScalarFunction.__call__
    monkeypatch.setattr(ScalarFunction, "__call__",
                        lambda self, *args: calls.append(1) or original(self, *args))
    x = np.random.default_rng(25).standard_normal((100, 1000)).astype(np.float32)
    win = cumulative_window(x.shape, 1, False)
    got = run_op("reduce-window", arr("f32", x.shape), x, np.float32(0), window=win,
                 to_apply=scalar_computation("add", np.float32))
    np.testing.assert_array_equal(got, np.cumsum(x, axis=1, dtype=np.float32))
    assert not calls  # a single add: NumPy's accumulate, no body walk
    ones = np.ones((2, 1000), np.int64)
    shape = Shape.tuple([arr("s64", ones.shape)] * 2)
    run_op("reduce-window", shape, ones, ones, np.int64(0), np.int64(1),
           window=cumulative_window(ones.shape, 1, True), to_apply=concat_body())
    assert len(calls) == 11  # ceil(log2(1000)) scan steps, then init ⊕ each running value


# -- select-and-scatter -------------------------------------------------------------------

def reference_select_and_scatter(x, source, init, win: Window, select_first_max=True):
    """Max-pool gradient by hand: in each window the first maximum (GE keeps the
    earlier element) receives the window's source value, summed."""
    out = np.full(x.shape, init, dtype=x.dtype)
    dims = win.dimensions
    for o in np.ndindex(*source.shape):
        best = None
        for k in np.ndindex(*(d.size for d in dims)):
            pos = tuple(o[i] * d.stride + k[i] - d.padding_low for i, d in enumerate(dims))
            if any(p < 0 or p >= n for p, n in zip(pos, x.shape)):
                continue
            if best is None or not (x[best] >= x[pos]):
                best = pos
        if best is not None:
            out[best] = out[best] + source[o]
    return out


def ge_select(name: str) -> HloComputation:
    b = Body(f"ge_{name}")
    return b.build(b.compare(b.param(0, name), b.param(1, name), "GE"))


@pytest.mark.parametrize("name", REAL)
def test_select_and_scatter_is_max_pool_gradient(name):
    x = sample(name, (5, 6), seed=10, small=True)  # small: ties decide by scan order
    win = window(WindowDimension(3, 2, 1, 1), WindowDimension(2, 1))  # overlapping windows
    out = tuple(out_extent(n, d) for n, d in zip(x.shape, win.dimensions))
    source = sample(name, out, seed=11, small=True)
    init = np.array(1, dtype=dt(name))
    got = run_op("select-and-scatter", arr(name, x.shape), x, source, init, window=win,
                 select=ge_select(name), scatter=scalar_computation("add", dt(name)))
    expected = reference_select_and_scatter(x, source, init, win)
    close(got, expected, name)


def test_select_and_scatter_hand_example():
    # Two overlapping windows of size 3 over [1, 9, 3, 9, 2]: GE keeps the first 9.
    x = np.array([1, 9, 3, 9, 2], dtype=np.float32)
    source = np.array([2, 6], dtype=np.float32)
    got = run_op("select-and-scatter", arr("f32", (5,)), x, source, np.float32(0),
                 window=window(WindowDimension(3, 2)), select=ge_select("f32"),
                 scatter=scalar_computation("add", np.float32))
    np.testing.assert_array_equal(got, [0, 2, 0, 6, 0])


def test_select_and_scatter_strict_gt_select_takes_last_maximum():
    # select(a, b) = a > b is false on ties, so a later equal element replaces it.
    b = Body("gt")
    gt = b.build(b.compare(b.param(0, "s32"), b.param(1, "s32"), "GT"))
    x = np.array([4, 4, 4], dtype=np.int32)
    got = run_op("select-and-scatter", arr("s32", (3,)), x, np.array([5], np.int32),
                 np.int32(0), window=window(WindowDimension(3)), select=gt,
                 scatter=scalar_computation("add", np.int32))
    np.testing.assert_array_equal(got, [0, 0, 5])


def test_select_and_scatter_applies_scatter_in_source_order():
    # scatter(current, s) = current * 2 + s is order-sensitive; every window picks
    # element 2 (the max), so the result is ((0*2+1)*2+2)*2+3 = 11.
    x = np.array([0, 1, 9, 1, 0], dtype=np.int32)
    source = np.array([1, 2, 3], dtype=np.int32)
    got = run_op("select-and-scatter", arr("s32", (5,)), x, source, np.int32(0),
                 window=window(WindowDimension(3)), select=ge_select("s32"),
                 scatter=affine_body("s32"))
    np.testing.assert_array_equal(got, [0, 0, 11, 0, 0])


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
