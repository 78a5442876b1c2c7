"""Interpreter reduce-window and select-and-scatter against NumPy, the
definition computed one output element at a time and hand-computed values:
pooling, padding, dilation, cumulative windows as scans, and the max-pool
gradient, for every dtype."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.hlo.evaluator.reduction_util import (
    ALL,
    FLOATS,
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
    jax_arg_body,
    sample,
    sequential_fold,
    window,
)
from tests.hlo.evaluator.util import run_op, scalar_computation
from xlapy.hlo.attributes import Window, WindowDimension
from xlapy.hlo.evaluator import reductions
from xlapy.hlo.evaluator.scalar_function import ScalarFunction
from xlapy.hlo.ir import HloComputation
from xlapy.hlo.shape import Shape

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
