"""Interpreter reductions against NumPy and hand-computed values: reduce (fast
and general paths, variadic argmax), reduce-window (pooling, padding, dilation),
select-and-scatter (max-pool gradient), map, sort and topk, for every dtype."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.backends.interpreter.util import run_op, scalar_computation
from xlapy.backends.interpreter import reductions
from xlapy.hlo.attributes import ComparisonDirection, ComparisonType, Window, WindowDimension
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

ALL = ["pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
       "f16", "bf16", "f32", "f64", "c64", "c128"]
INTS = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]
FLOATS = ["f16", "bf16", "f32", "f64"]
REAL = INTS + FLOATS
TOLERANCE = {"f16": 2e-3, "bf16": 1e-2, "f32": 1e-5, "f64": 1e-12, "c64": 1e-5, "c128": 1e-12}


def dt(name: str) -> np.dtype:
    return PrimitiveType.from_text(name).numpy


def arr(name: str, dims=()) -> Shape:
    return Shape.array(name, dims)


def sample(name: str, dims, seed: int = 0, small: bool = False) -> np.ndarray:
    """Random values of an HLO type; `small` keeps sums and products in range."""
    rng = np.random.default_rng(seed)
    dtype = dt(name)
    if name == "pred":
        return rng.random(dims) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = (0, 4) if small else (info.min, info.max)
        return rng.integers(low, high, dims, dtype=dtype, endpoint=True)
    scale = 1.0 if small else 10.0
    real = (rng.standard_normal(dims) * scale).astype(np.float32)
    if dtype.kind == "c":
        return (real + 1j * rng.standard_normal(dims)).astype(dtype)
    return real.astype(dtype)


def close(actual, expected, name: str) -> None:
    expected = np.asarray(expected)
    assert actual.dtype == dt(name) and actual.shape == expected.shape
    if name in TOLERANCE:
        tol = TOLERANCE[name]
        np.testing.assert_allclose(actual.astype(np.complex128), expected.astype(np.complex128),
                                   rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(actual, expected)


class Body:
    """A tiny builder for scalar computations written out by hand."""

    def __init__(self, name: str):
        self.name = name
        self.instructions: list[HloInstruction] = []

    def _add(self, instruction: HloInstruction) -> HloInstruction:
        instruction.name = instruction.name or f"v{len(self.instructions)}"
        self.instructions.append(instruction)
        return instruction

    def param(self, number: int, name: str) -> HloInstruction:
        return self._add(HloInstruction(Opcode.PARAMETER, Shape.scalar(name),
                                        name=f"p{number}", parameter_number=number))

    def const(self, value, name: str) -> HloInstruction:
        return self._add(HloInstruction(Opcode.CONSTANT, Shape.scalar(name),
                                        literal=np.array(value, dtype=dt(name))))

    def op(self, opcode: Opcode, shape: Shape | str, *operands, **attrs) -> HloInstruction:
        shape = Shape.scalar(shape) if isinstance(shape, str) else shape
        return self._add(HloInstruction(opcode, shape, operands, attrs))

    def compare(self, a, b, direction: str, type_: str | None = None) -> HloInstruction:
        attrs = {"direction": ComparisonDirection(direction)}
        if type_:
            attrs["type"] = ComparisonType(type_)
        return self.op(Opcode.COMPARE, "pred", a, b, **attrs)

    def build(self, root: HloInstruction) -> HloComputation:
        return HloComputation(self.name, self.instructions, root=root)


def window(*dims: WindowDimension) -> Window:
    return Window(tuple(dims))


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


@pytest.mark.parametrize("name", ["s32", "u8", "f32", "f64", "bf16", "c64"])
def test_reduce_general_body_folds_in_order(name):
    x = sample(name, (3, 4), seed=3, small=True)
    init = sample(name, (), seed=4, small=True)
    got = run_op("reduce", arr(name, (3,)), x, init, dimensions=(1,), to_apply=affine_body(name))
    expected = []
    for row in x:
        acc = init
        for v in row:
            acc = (acc * np.array(2, dtype=acc.dtype) + v).astype(dt(name))
        expected.append(acc)
    close(got, np.array(expected, dtype=dt(name)), name)


def test_reduce_general_body_multiple_dims_row_major():
    x = np.arange(24, dtype=np.int64).reshape(2, 3, 4) % 5
    got = run_op("reduce", arr("s64", (3,)), x, np.int64(1), dimensions=(2, 0),
                 to_apply=affine_body("s64"))
    for j in range(3):
        acc = 1
        for v in x[:, j, :].reshape(-1):  # reduced dims in row-major order (0 then 2)
            acc = acc * 2 + int(v)
        assert got[j] == acc


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


# -- sort ---------------------------------------------------------------------------------

def less_than(name: str, direction="LT", type_=None, params=(0, 1), count=2) -> HloComputation:
    b = Body(f"cmp_{name}")
    ps = [b.param(i, name) for i in range(count)]
    return b.build(b.compare(ps[params[0]], ps[params[1]], direction, type_))


@pytest.mark.parametrize("name", ["pred"] + REAL)
@pytest.mark.parametrize("direction", ["LT", "GT"])
def test_sort_one_operand_every_dtype(name, direction):
    x = sample(name, (3, 10), seed=14, small=name in INTS[:1])
    got = run_op("sort", arr(name, (3, 10)), x, dimensions=(1,), is_stable=True,
                 to_apply=less_than(name, direction))
    expected = np.sort(x.astype(np.float64), axis=1)
    if direction == "GT":
        expected = expected[:, ::-1]
    np.testing.assert_array_equal(got.astype(np.float64), expected)


def test_sort_along_dimension_zero():
    x = np.array([[3, 1], [1, 2], [2, 0]], dtype=np.int32)
    got = run_op("sort", arr("s32", (3, 2)), x, dimensions=(0,), to_apply=less_than("s32"))
    np.testing.assert_array_equal(got, [[1, 0], [2, 1], [3, 2]])


def test_sort_multiple_operands_docs_example():
    # operation_semantics.md: keys [3, 1] carry [42, 50] and [-3.0, 1.1] along.
    keys = np.array([3, 1], dtype=np.int32)
    b = Body("cmp3")
    ps = [b.param(i, n) for i, n in enumerate(["s32", "s32", "s32", "s32", "f32", "f32"])]
    cmp = b.build(b.compare(ps[0], ps[1], "LT"))
    shape = Shape.tuple([arr("s32", (2,)), arr("s32", (2,)), arr("f32", (2,))])
    k, v, w = run_op("sort", shape, keys, np.array([42, 50], np.int32),
                     np.array([-3.0, 1.1], np.float32), dimensions=(0,), to_apply=cmp)
    np.testing.assert_array_equal(k, [1, 3])
    np.testing.assert_array_equal(v, [50, 42])
    np.testing.assert_array_equal(w, np.array([1.1, -3.0], np.float32))


@pytest.mark.parametrize("direction", ["LT", "GT"])
@pytest.mark.parametrize("swapped", [False, True])
def test_sort_is_stable_with_payload(direction, swapped):
    keys = np.array([2, 1, 2, 0, 1, 2, 0], dtype=np.int8)
    payload = np.arange(7, dtype=np.int32)
    b = Body("cmp")
    ps = [b.param(0, "s8"), b.param(1, "s8"), b.param(2, "s32"), b.param(3, "s32")]
    lhs, rhs = (ps[1], ps[0]) if swapped else (ps[0], ps[1])  # compare(rhs, lhs) flips order
    cmp = b.build(b.compare(lhs, rhs, direction))
    shape = Shape.tuple([arr("s8", (7,)), arr("s32", (7,))])
    k, p = run_op("sort", shape, keys, payload, dimensions=(0,), is_stable=True, to_apply=cmp)
    descending = (direction == "GT") != swapped
    order = np.argsort(-keys.astype(int) if descending else keys, kind="stable")
    np.testing.assert_array_equal(p, order)
    np.testing.assert_array_equal(k, keys[order])


@pytest.mark.parametrize("name", ["f16", "bf16", "f32", "f64"])
def test_sort_totalorder_places_nans_and_signed_zeros(name):
    nan = np.float32(np.nan)
    x = np.array([1.0, -nan, 0.0, -np.inf, nan, -0.0, np.inf, -1.0], dtype=np.float32)
    x = x.astype(dt(name))
    got = run_op("sort", arr(name, (8,)), x, dimensions=(0,),
                 to_apply=less_than(name, "LT", "TOTALORDER"))
    bits = got.astype(np.float32)
    assert np.isnan(bits[0]) and np.signbit(bits[0])
    np.testing.assert_array_equal(bits[1:7], [-np.inf, -1, 0, 0, 1, np.inf])
    assert np.signbit(bits[3]) and not np.signbit(bits[4])  # -0 before +0
    assert np.isnan(bits[7]) and not np.signbit(bits[7])
    down = run_op("sort", arr(name, (8,)), x, dimensions=(0,),
                  to_apply=less_than(name, "GT", "TOTALORDER"))
    assert down.tobytes() == got[::-1].tobytes()


def lexicographic(name0: str, name1: str) -> HloComputation:
    """(k0, k1) less-than: k0 first, k1 breaks ties (a general-path comparator)."""
    b = Body("lex")
    a0, b0, a1, b1 = b.param(0, name0), b.param(1, name0), b.param(2, name1), b.param(3, name1)
    lt0, eq0, lt1 = b.compare(a0, b0, "LT"), b.compare(a0, b0, "EQ"), b.compare(a1, b1, "LT")
    return b.build(b.op(Opcode.OR, "pred", lt0, b.op(Opcode.AND, "pred", eq0, lt1)))


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(0, 3), n=st.integers(0, 40), seed=st.integers(0, 1000))
def test_sort_general_comparator_matches_lexsort(rows, n, seed):
    rng = np.random.default_rng(seed)
    k0 = rng.integers(0, 4, (rows, n)).astype(np.int32)
    k1 = rng.standard_normal((rows, n)).astype(np.float32)
    shape = Shape.tuple([arr("s32", (rows, n)), arr("f32", (rows, n))])
    a, b = run_op("sort", shape, k0, k1, dimensions=(1,), is_stable=True,
                  to_apply=lexicographic("s32", "f32"))
    order = np.lexsort((k1, k0), axis=-1) if n else np.zeros((rows, 0), int)
    np.testing.assert_array_equal(a, np.take_along_axis(k0, order, -1))
    np.testing.assert_array_equal(b, np.take_along_axis(k1, order, -1))


def test_sort_general_comparator_is_stable():
    # Only k0 decides (k1 always equal), through the general path.
    k0 = np.array([1, 0, 1, 0, 1], dtype=np.int32)
    k1 = np.zeros(5, dtype=np.float32)
    payload = np.arange(5, dtype=np.int32)
    b = Body("lex3")
    ps = [b.param(i, n) for i, n in enumerate(["s32", "s32", "f32", "f32", "s32", "s32"])]
    lt0, eq0 = b.compare(ps[0], ps[1], "LT"), b.compare(ps[0], ps[1], "EQ")
    cmp = b.build(b.op(Opcode.OR, "pred", lt0,
                       b.op(Opcode.AND, "pred", eq0, b.compare(ps[2], ps[3], "LT"))))
    shape = Shape.tuple([arr("s32", (5,)), arr("f32", (5,)), arr("s32", (5,))])
    _, _, p = run_op("sort", shape, k0, k1, payload, dimensions=(0,), is_stable=True,
                     to_apply=cmp)
    np.testing.assert_array_equal(p, [1, 3, 0, 2, 4])


def test_sort_float_compare_with_nans_keeps_every_element():
    # FLOAT LT leaves NaN unordered (no strict weak order): the result is
    # implementation-defined, but it must still be a permutation of the input.
    x = np.array([3, np.nan, 1, np.nan, 2, 0, np.nan, 5], dtype=np.float32)
    got = run_op("sort", arr("f32", (8,)), x, dimensions=(0,), to_apply=less_than("f32"))
    assert np.isnan(got).sum() == 3
    np.testing.assert_array_equal(np.sort(got[~np.isnan(got)]), [0, 1, 2, 3, 5])


def test_merge_sort_falls_back_when_positions_collide():
    # A comparator that is no order at all ("less" always true) makes the vectorised
    # merge collide; the Python fallback still returns a permutation.
    rows = [np.arange(6).reshape(1, 6)]
    perm = reductions._merge_sort(lambda lhs, rhs: np.ones(lhs[0].shape, bool), rows)
    assert sorted(perm[0].tolist()) == list(range(6))


# -- topk ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["pred"] + REAL)
@pytest.mark.parametrize("largest", [True, False])
def test_topk_every_dtype(name, largest):
    x = sample(name, (3, 12), seed=15, small=True)  # ties: lower index first
    shape = Shape.tuple([arr(name, (3, 4)), arr("s32", (3, 4))])
    values, indices = run_op("topk", shape, x, k=4, largest=largest)
    wide = x.astype(np.float64)
    order = np.argsort(-wide if largest else wide, axis=-1, kind="stable")[:, :4]
    np.testing.assert_array_equal(indices, order)
    np.testing.assert_array_equal(values, np.take_along_axis(x, order, -1))
    assert indices.dtype == np.int32


def test_topk_nan_ordering_is_total_order():
    nan = np.float32(np.nan)
    x = np.array([1, nan, -nan, 5, -np.inf, 5], dtype=np.float32)
    shape = Shape.tuple([arr("f32", (6,)), arr("s32", (6,))])
    _, top = run_op("topk", shape, x, k=6, largest=True)
    np.testing.assert_array_equal(top, [1, 3, 5, 0, 4, 2])  # +NaN first, -NaN last
    _, bottom = run_op("topk", shape, x, k=6, largest=False)
    np.testing.assert_array_equal(bottom, [2, 4, 0, 3, 5, 1])


@pytest.mark.parametrize("params", [2, 4])
def test_topk_custom_call_follows_its_comparator(params):
    x = np.array([[3, 1, 4, 1, 5, 9, 2, 6], [5, 3, 5, 8, 9, 7, 9, 3]], dtype=np.float32)
    b = Body("gt")
    ps = [b.param(i, "f32" if i < 2 else "s32") for i in range(params)]
    cmp = b.build(b.compare(ps[0], ps[1], "GT", "TOTALORDER"))
    shape = Shape.tuple([arr("f32", (2, 3)), arr("s32", (2, 3))])
    values, indices = run_op("custom-call", shape, x, custom_call_target="TopK", to_apply=cmp)
    np.testing.assert_array_equal(values, [[9, 6, 5], [9, 9, 8]])
    np.testing.assert_array_equal(indices, [[5, 7, 4], [4, 6, 3]])


# -- whole modules as JAX and XLA print them ----------------------------------------------

def execute_text(text: str, *args) -> list:
    """Parse, verify and run a module on the interpreter backend."""
    from xlapy.backends.interpreter import InterpreterBackend
    from xlapy.hlo import parse

    return InterpreterBackend().compile(parse(text)).execute(*args)


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


JAX_SORT_KEY_VALUE = """
HloModule jit_sort_kv, entry_computation_layout={(f32[7]{0}, s32[7]{0})->(f32[7]{0}, s32[7]{0})}

region_0.3 {
  Arg_2.6 = s32[] parameter(2)
  Arg_3.7 = s32[] parameter(3)
  Arg_0.4 = f32[] parameter(0)
  compare.12 = pred[] compare(Arg_0.4, Arg_0.4), direction=NE
  constant.8 = f32[] constant(nan)
  constant.9 = f32[] constant(0)
  compare.10 = pred[] compare(Arg_0.4, constant.9), direction=EQ
  select.11 = f32[] select(compare.10, constant.9, Arg_0.4)
  select.13 = f32[] select(compare.12, constant.8, select.11)
  Arg_1.5 = f32[] parameter(1)
  compare.16 = pred[] compare(Arg_1.5, Arg_1.5), direction=NE
  compare.14 = pred[] compare(Arg_1.5, constant.9), direction=EQ
  select.15 = f32[] select(compare.14, constant.9, Arg_1.5)
  select.17 = f32[] select(compare.16, constant.8, select.15)
  ROOT compare.18 = pred[] compare(select.13, select.17), direction=LT, type=TOTALORDER
}

ENTRY main.23 {
  Arg_0.1 = f32[7]{0} parameter(0)
  Arg_1.2 = s32[7]{0} parameter(1)
  ROOT sort.19 = (f32[7]{0}, s32[7]{0}) sort(Arg_0.1, Arg_1.2), dimensions={0}, is_stable=true, to_apply=region_0.3
}
"""


def test_jax_sort_comparator_module():
    # JAX canonicalises NaN and -0 before a TOTALORDER compare: -0 and 0 tie (stable),
    # NaNs of either sign go last, in input order.
    keys = np.array([3, np.nan, -0.0, 0.0, -np.inf, 1, -np.nan], np.float32)
    got_keys, got_values = execute_text(JAX_SORT_KEY_VALUE, keys, np.arange(7, dtype=np.int32))
    np.testing.assert_array_equal(got_values, [4, 2, 3, 5, 0, 1, 6])
    np.testing.assert_array_equal(got_keys, keys[[4, 2, 3, 5, 0, 1, 6]])


XLA_TOPK_CUSTOM_CALL = """
HloModule topk_custom_call, entry_computation_layout={(f32[3,8]{1,0})->(f32[3,3]{1,0}, s32[3,3]{1,0})}

%compare.1 (p.0.lhs.2: f32[], p.0.rhs.3: f32[], p.1.lhs.4: s32[], p.1.rhs.5: s32[]) -> pred[] {
  %p.1.lhs.4 = s32[] parameter(2)
  %p.1.rhs.5 = s32[] parameter(3)
  %p.0.lhs.2 = f32[] parameter(0)
  %p.0.rhs.3 = f32[] parameter(1)
  ROOT %compare.6 = pred[] compare(f32[] %p.0.lhs.2, f32[] %p.0.rhs.3), direction=GT, type=TOTALORDER
}

ENTRY %main.12 (Arg_0.7: f32[3,8]) -> (f32[3,3], s32[3,3]) {
  %Arg_0.7 = f32[3,8]{1,0} parameter(0)
  ROOT %custom-call.8 = (f32[3,3]{1,0}, s32[3,3]{1,0}) custom-call(f32[3,8]{1,0} %Arg_0.7), custom_call_target="TopK", called_computations={%compare.1}
}
"""


def test_xla_topk_custom_call_module():
    x = np.array([[3, 1, 4, 1, 5, 9, 2, 6], [np.nan, 0, 1, np.nan, 2, 3, 4, 5],
                  [1, 1, 1, 1, 1, 1, 1, 1]], np.float32)
    values, indices = execute_text(XLA_TOPK_CUSTOM_CALL, x)
    np.testing.assert_array_equal(indices, [[5, 7, 4], [0, 3, 7], [0, 1, 2]])
    np.testing.assert_array_equal(values, np.take_along_axis(x, indices, 1))


def test_long_variadic_argmax_combines_pairwise_correctly():
    # 3000 > the sequential limit: the tuple-valued body is combined pairwise.
    x = np.random.default_rng(16).integers(0, 50, (2, 3000)).astype(np.float32)
    index = np.broadcast_to(np.arange(3000, dtype=np.int32), x.shape).copy()
    shape = Shape.tuple([arr("f32", (2,)), arr("s32", (2,))])
    values, indices = run_op("reduce", shape, x, index, np.float32(-np.inf), np.int32(-1),
                             dimensions=(1,), to_apply=argmax_body("f32"))
    np.testing.assert_array_equal(indices, np.argmax(x, axis=1))
    np.testing.assert_array_equal(values, x.max(axis=1))
