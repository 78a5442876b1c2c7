"""lax.reduce_window (and its monoid helpers), select_and_scatter_add and the
cumulative reductions: against NumPy references, eagerly and under jit."""

import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xlapy
from tests.frontend_util import both
from xlapy import lax
from xlapy.core import lazy
from xlapy.hlo.opcode import Opcode
from xlapy.lax import windows as lax_windows

BF16 = np.dtype(ml_dtypes.bfloat16)
RTOL = {np.dtype(np.float16): 2e-3, BF16: 2e-2, np.dtype(np.float32): 2e-6,
        np.dtype(np.float64): 1e-13}




def assert_matches(actual, expected, dtype=None):
    actual, expected = np.asarray(actual), np.asarray(expected)
    dtype = np.dtype(dtype or expected.dtype)
    assert actual.dtype == dtype, (actual.dtype, dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if dtype in RTOL:
        np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64),
                                   rtol=RTOL[dtype], atol=RTOL[dtype])
    else:
        np.testing.assert_array_equal(actual, expected)


def check(fn, args, expected):
    expected = expected if isinstance(expected, (tuple, list)) else [expected]
    eager, jitted = both(fn, *args)
    for e, j, want in zip(eager, jitted, expected):
        assert_matches(e, want)
        assert_matches(j, want)
        assert_matches(j, e)


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -5, 6, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


# -- a NumPy reference --------------------------------------------------------------------

def windows(shape, sizes, strides, pads, base=None, dilation=None):
    """For each output index, the base indices its window covers (holes and
    padding left out)."""
    rank = len(shape)
    base = base or (1,) * rank
    dilation = dilation or (1,) * rank
    out_shape = []
    for n, w, s, (lo, hi), b, d in zip(shape, sizes, strides, pads, base, dilation):
        padded = lo + hi + ((n - 1) * b + 1 if n else 0)
        span = (w - 1) * d + 1
        out_shape.append(0 if span > padded else (padded - span) // s + 1)
    result = {}
    for out in itertools.product(*(range(n) for n in out_shape)):
        covered = []
        for offset in itertools.product(*(range(w) for w in sizes)):
            index = []
            for o, k, s, (lo, _), b, d, n in zip(out, offset, strides, pads, base, dilation,
                                                  shape):
                p = o * s + k * d - lo
                if p < 0 or p % b or p // b >= n:
                    break
                index.append(p // b)
            else:
                covered.append(tuple(index))
        result[out] = covered
    return tuple(out_shape), result


def ref_reduce_window(x, init, op, sizes, strides, pads, base=None, dilation=None):
    out_shape, covering = windows(x.shape, sizes, strides, pads, base, dilation)
    out = np.empty(out_shape, x.dtype)
    for index, covered in covering.items():
        acc = x.dtype.type(init)
        for i in covered:
            acc = op(acc, x[i])
        out[index] = acc
    return out


# -- reduce-window ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16])
def test_max_pool(dtype):
    x = sample((2, 6, 6), dtype)
    expected = x.reshape(2, 3, 2, 3, 2).max(axis=(2, 4))
    check(lambda x: (lax.reduce_window_max(x, (1, 2, 2), (1, 2, 2), "VALID"),
                     lax.reduce_window(x, -np.inf if dtype != np.int32 else np.int32(-99),
                                       lax.max, (1, 2, 2), (1, 2, 2))),
          [x], [expected, expected])


def test_avg_pool_same_padding():
    x = sample((5, 7), np.float32)
    pads = ((1, 1), (1, 1))
    sums = ref_reduce_window(x, 0, np.add, (3, 3), (1, 1), pads)
    counts = ref_reduce_window(np.ones_like(x), 0, np.add, (3, 3), (1, 1), pads)

    def avg_pool(x, ones):
        total = lax.reduce_window_sum(x, (3, 3), (1, 1), "SAME")
        return lax.div(total, lax.reduce_window_sum(ones, (3, 3), (1, 1), "SAME"))

    check(avg_pool, [x, np.ones_like(x)], sums / counts)


@pytest.mark.parametrize("padding,expected", [
    ("SAME", ((0, 1), (1, 1))), ("SAME_LOWER", ((1, 0), (1, 1))), ("VALID", ((0, 0), (0, 0))),
])
def test_string_padding(padding, expected):
    x = sample((5, 6), np.float32)
    want = ref_reduce_window(x, -np.inf, np.maximum, (2, 3), (2, 1), expected)
    check(lambda x: lax.reduce_window_max(x, (2, 3), (2, 1), padding), [x], want)
    assert lax.reduce_window_shape_tuple((5, 6), (2, 3), (2, 1), padding) == want.shape


def test_dilations_and_strides():
    x = sample((7, 5), np.int32)
    args = ((2, 2), (2, 1), ((1, 2), (0, 1)), (2, 1), (1, 2))
    want = ref_reduce_window(x, 0, np.add, *args)
    check(lambda x: lax.reduce_window_sum(x, *args[:3], base_dilation=args[3],
                                          window_dilation=args[4]), [x], want)


def test_reduce_window_prod_min_and_custom():
    x = sample((4, 5), np.float64, seed=2)
    check(lambda x: (lax.reduce_window_prod(x, (2, 2), (1, 1), "VALID"),
                     lax.reduce_window_min(x, (2, 3), (1, 2), ((1, 0), (0, 0))),
                     lax.reduce_window(x, 0.0, lambda a, b: lax.add(a, lax.abs(b)), (3, 1),
                                       (1, 1), "VALID")),
          [x], [ref_reduce_window(x, 1, np.multiply, (2, 2), (1, 1), ((0, 0), (0, 0))),
                ref_reduce_window(x, np.inf, np.minimum, (2, 3), (1, 2), ((1, 0), (0, 0))),
                ref_reduce_window(x, 0, lambda a, b: a + abs(b), (3, 1), (1, 1),
                                  ((0, 0), (0, 0)))])


def test_variadic_reduce_window_argmax_pool():
    x = sample((4, 6), np.float32, seed=5)
    index = np.arange(x.size, dtype=np.int32).reshape(x.shape)

    def pick(acc, v):
        take = lax.gt(v[0], acc[0])
        return lax.select(take, v[0], acc[0]), lax.select(take, v[1], acc[1])

    def fn(x, index):
        return lax.reduce_window((x, index), (-np.inf, np.int32(-1)), pick, (2, 2), (2, 2))

    flat_windows = x.reshape(2, 2, 3, 2).transpose(0, 2, 1, 3).reshape(2, 3, 4)
    windows_index = index.reshape(2, 2, 3, 2).transpose(0, 2, 1, 3).reshape(2, 3, 4)
    first = flat_windows.argmax(-1)
    check(fn, [x, index], [flat_windows.max(-1),
                           np.take_along_axis(windows_index, first[..., None], -1)[..., 0]])


def test_reduce_window_errors():
    x = np.zeros((3, 3), np.float32)
    with pytest.raises(ValueError, match="window_strides"):
        lax.reduce_window_sum(x, (2, 2), (1,), "VALID")
    with pytest.raises(ValueError, match="unknown padding"):
        lax.reduce_window_sum(x, (2, 2), (1, 1), "FULL")
    with pytest.raises(TypeError, match="bool"):
        lax.reduce_window_sum(np.zeros(3, bool), (2,), (1,), "VALID")


# -- select-and-scatter -------------------------------------------------------------------

def ref_max_pool_grad(x, g, sizes, strides, pads, select=np.greater_equal):
    """Each window's gradient goes to its first maximum (row-major), as XLA's
    select-and-scatter with `ge` picks it."""
    _, covering = windows(x.shape, sizes, strides, pads)
    out = np.zeros_like(x)
    for index, covered in covering.items():
        chosen = covered[0]
        for i in covered[1:]:
            if not select(x[chosen], x[i]):
                chosen = i
        out[chosen] += g[index]
    return out


@pytest.mark.parametrize("sizes,strides,padding,pads", [
    ((2, 2), (2, 2), "VALID", ((0, 0), (0, 0))),
    ((3, 3), (1, 1), "SAME", ((1, 1), (1, 1))),
    ((3, 2), (2, 1), ((1, 0), (0, 1)), ((1, 0), (0, 1))),
])
def test_max_pool_gradient(sizes, strides, padding, pads):
    x = sample((6, 6), np.float32, seed=7)
    x[0, :3] = x[0, 0]  # ties: the first maximum takes the gradient
    out_shape = lax.reduce_window_shape_tuple(x.shape, sizes, strides, pads)
    g = sample(out_shape, np.float32, seed=8)
    check(lambda g, x: lax.select_and_scatter_add(g, x, lax.ge, sizes, strides, padding),
          [g, x], ref_max_pool_grad(x, g, sizes, strides, pads))


def test_min_pool_gradient_integers():
    x = sample((5, 4), np.int32, seed=9)
    g = np.arange(1, 13, dtype=np.int32).reshape(4, 3)
    check(lambda g, x: lax.select_and_scatter_add(g, x, lax.le, (2, 2), (1, 1), "VALID"),
          [g, x], ref_max_pool_grad(x, g, (2, 2), (1, 1), ((0, 0), (0, 0)), np.less_equal))


def test_select_and_scatter_hlo():
    text = xlapy.jit(lambda g, x: lax.select_and_scatter_add(g, x, lax.ge, (2,), (2,), "VALID")
                     ).lower(np.zeros(2, np.float32), np.zeros(4, np.float32)).as_text()
    assert "select-and-scatter(" in text and "direction=GE" in text
    xlapy.hlo.parse(text)


# -- cumulative reductions ----------------------------------------------------------------

def _reverse(fn):
    return lambda x, axis: np.flip(fn(np.flip(x, axis), axis), axis)


CUMULATIVE = {
    "cumsum": lambda x, axis: np.cumsum(x, axis, dtype=x.dtype),
    "cumprod": lambda x, axis: np.cumprod(x, axis, dtype=x.dtype),
    "cummax": lambda x, axis: np.maximum.accumulate(x, axis),
    "cummin": lambda x, axis: np.minimum.accumulate(x, axis),
}


@pytest.mark.parametrize("name", sorted(CUMULATIVE))
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative(name, dtype, reverse):
    x = sample((3, 5), dtype, seed=11)
    ref = CUMULATIVE[name]
    ref = _reverse(ref) if reverse else ref
    fn = getattr(lax, name)
    check(lambda x: (fn(x, 0, reverse), fn(x, axis=1, reverse=reverse)), [x],
          [ref(x, 0), ref(x, 1)])


@pytest.mark.parametrize("name", sorted(CUMULATIVE))
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_long_axis(name, reverse):
    # eagerly and under jit one reduce-window, which the interpreter runs as a scan
    x = sample((3, 150), np.int32, seed=15)
    x = np.where(x == 0, 1, x).astype(np.int32) if name == "cumprod" else x
    ref = _reverse(CUMULATIVE[name]) if reverse else CUMULATIVE[name]
    fn = getattr(lax, name)
    check(lambda x: fn(x, 1, reverse), [x], ref(x, 1))
    y = sample((150, 2), np.float32, seed=16)
    check(lambda y: fn(y, 0, reverse), [y], ref(y.astype(np.float64), 0).astype(np.float32)
          if name != "cumprod" else ref(y, 0))


@pytest.mark.parametrize("dtype", [np.float16, BF16])
def test_cumsum_long_axis_narrow_floats(dtype):
    x = sample((2, 100), np.float32, seed=18).astype(dtype)
    check(lambda x: lax.cumsum(x, 1), [x], np.cumsum(x.astype(np.float32), 1).astype(dtype))


def test_cumlogsumexp_long_axis():
    x = sample((2, 200), np.float32, seed=17) * 10
    check(lambda x: lax.cumlogsumexp(x, 1, reverse=True), [x],
          _reverse(lambda x, a: np.logaddexp.accumulate(x, a))(x.astype(np.float64), 1)
          .astype(np.float32))


@pytest.mark.parametrize("name", sorted(CUMULATIVE) + ["cumlogsumexp"])
def test_eager_cumulative_runs_the_reduce_window_that_jit_emits(monkeypatch, name):
    # No eager-only scan: one reduce-window, bit for bit the jitted result.
    bound = []
    original = lax_windows.bind

    def record(opcode, operands, *args, **kwargs):
        bound.append((opcode, len(operands)))
        return original(opcode, operands, *args, **kwargs)

    monkeypatch.setattr(lax_windows, "bind", record)
    x = sample((20, 700), np.float32, seed=19)
    fn = getattr(lax, name)
    for reverse in (False, True):
        bound.clear()
        eager = np.asarray(fn(x, 1, reverse))
        assert [op for op, _ in bound] == [Opcode.REDUCE_WINDOW]
        jitted = xlapy.jit(fn, static_argnums=(1, 2))(x, 1, reverse)
        if lazy.active():   # (pytest --lazy: "eager" is a compiled cluster, summed its own way)
            np.testing.assert_allclose(np.asarray(jitted), eager, rtol=1e-5, atol=1e-4)
        else:
            assert np.asarray(jitted).tobytes() == eager.tobytes()


def test_cumsum_integers_are_exact():
    x = np.full(50, 2**24 + 1, np.int32)
    check(lambda x: lax.cumsum(x), [x], np.cumsum(x, dtype=np.int32))
    wrap = np.array([2**31 - 1, 1, 1], np.int32)
    check(lambda x: lax.cumsum(x), [wrap], np.array([2**31 - 1, -2**31, -2**31 + 1], np.int32))


@pytest.mark.parametrize("dtype", [np.float16, BF16])
def test_cumsum_narrow_floats(dtype):
    x = sample((2, 8), np.float32, seed=12).astype(dtype)
    check(lambda x: lax.cumsum(x, 1), [x], np.cumsum(x.astype(np.float32), 1).astype(dtype))


def test_cumulative_nan_and_3d():
    x = np.array([[1.0, np.nan, 0.5, 3.0]], np.float32)
    check(lambda x: (lax.cummax(x, 1), lax.cummin(x, 1, reverse=True)), [x],
          [np.array([[1, np.nan, np.nan, np.nan]], np.float32),
           np.array([[np.nan, np.nan, 0.5, 3.0]], np.float32)])
    y = sample((2, 3, 4), np.float64, seed=13)
    check(lambda y: lax.cumsum(y, -1), [y], np.cumsum(y, -1))


@pytest.mark.parametrize("reverse", [False, True])
def test_cumlogsumexp(reverse):
    x = sample((3, 6), np.float32, seed=14) * 30
    x[0, 2] = -np.inf
    x[1, :] = -np.inf
    ref = lambda x, axis: np.logaddexp.accumulate(x.astype(np.float64), axis).astype(np.float32)  # noqa: E731
    ref = _reverse(ref) if reverse else ref
    check(lambda x: lax.cumlogsumexp(x, 1, reverse), [x], ref(x, 1))


def test_cumulative_lowering_and_edges():
    text = xlapy.jit(lambda x: lax.cumsum(x, 1, reverse=True)).lower(
        np.zeros((2, 4), np.int32)).as_text()
    assert "reduce-window(" in text and "pad=0_0x0_3" in text and "size=1x4" in text
    empty = np.zeros((0, 3), np.float32)
    assert np.asarray(lax.cumsum(empty, 0)).shape == (0, 3)
    with pytest.raises(TypeError, match="bool"):
        lax.cumsum(np.zeros(3, bool))
    with pytest.raises(TypeError, match="int32"):
        lax.cumlogsumexp(np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="out of bounds"):
        lax.cumsum(np.zeros(3), 1)


# -- hypothesis ---------------------------------------------------------------------------

@st.composite
def window_configs(draw):
    rank = draw(st.integers(1, 2))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(rank))
    sizes = tuple(draw(st.integers(1, 3)) for _ in range(rank))
    strides = tuple(draw(st.integers(1, 3)) for _ in range(rank))
    pads = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(rank))
    base = tuple(draw(st.integers(1, 2)) for _ in range(rank))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(rank))
    return shape, sizes, strides, pads, base, dilation


@given(window_configs(), st.integers(0, 2**16))
def test_reduce_window_fuzz(config, seed):
    shape, sizes, strides, pads, base, dilation = config
    x = sample(shape, np.int32, seed)
    want_sum = ref_reduce_window(x, 0, np.add, sizes, strides, pads, base, dilation)
    want_max = ref_reduce_window(x, -100, max, sizes, strides, pads, base, dilation)

    def fn(x):
        return (lax.reduce_window_sum(x, sizes, strides, pads, base, dilation),
                lax.reduce_window(x, np.int32(-100), lax.max, sizes, strides, pads, base,
                                  dilation))

    check(fn, [x], [want_sum, want_max])
