"""Derivatives of reduce, reduce-window and select-and-scatter: sums, products
(with zeros), max/min (JAX's tie conventions), pooling, cumulative ops, and a
second derivative of max pooling."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import xlapy
from xlapy import lax
from xlapy.errors import CompileError

from .check import check_grads

FEW = settings(max_examples=20)


@st.composite
def shape_and_axes(draw, max_rank=3):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=max_rank)))
    axes = tuple(sorted(draw(st.sets(st.integers(0, len(shape) - 1)))))
    return shape, axes


def _values(shape, seed):
    """Standard normal values: distinct almost surely, so max/min have no ties."""
    return np.random.default_rng(seed).standard_normal(shape)


# -- reduce -------------------------------------------------------------------------------

@FEW
@given(shape_and_axes(), st.integers(0, 2**16),
       st.sampled_from(["sum", "max", "min", "prod"]))
def test_reduce(shape_axes, seed, kind):
    shape, axes = shape_axes
    reduce = {"sum": lax.reduce_sum, "max": lax.reduce_max, "min": lax.reduce_min,
              "prod": lax.reduce_prod}[kind]
    check_grads(lambda x: reduce(x, axes), [_values(shape, seed)])


@pytest.mark.parametrize("zeros", [[(0, 1)], [(0, 1), (0, 2)], [(0, 1), (1, 1)], [(2, 3)]])
@pytest.mark.parametrize("axes", [(1,), (0,), (0, 1)])
def test_reduce_prod_with_zeros(zeros, axes):
    x = _values((3, 4), 1)
    for index in zeros:
        x[index] = 0.0
    check_grads(lambda v: lax.reduce_prod(v, axes), [x])


def test_reduce_prod_gradient_values_with_zeros():
    x = np.array([[2.0, 0.0, 3.0], [0.0, 5.0, 0.0], [1.0, 2.0, 4.0]])
    g = xlapy.grad(lambda v: lax.reduce_sum(lax.reduce_prod(v, (1,)), (0,)))(x)
    np.testing.assert_allclose(np.asarray(g), [[0, 6, 0], [0, 0, 0], [8, 4, 2]])


def test_reduce_max_ties_split_equally():
    """JAX: the cotangent is shared equally by every element equal to the max."""
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [5.0, 1.0, 1.0, 1.0]])
    g = xlapy.grad(lambda v: lax.reduce_sum(lax.reduce_max(v, (1,)), (0,)))(x)
    np.testing.assert_allclose(np.asarray(g), [[0, .5, .5, 0], [.25] * 4, [1, 0, 0, 0]])
    t = np.arange(12.0).reshape(3, 4)
    _, tangent = xlapy.jvp(lambda v: lax.reduce_max(v, (1,)), (x,), (t,))
    np.testing.assert_allclose(np.asarray(tangent), [1.5, 5.5, 8.0])
    g = xlapy.grad(lambda v: lax.reduce_sum(lax.reduce_min(v, (1,)), (0,)))(x)
    np.testing.assert_allclose(np.asarray(g), [[0, 0, 0, 1], [.25] * 4, [0, 1 / 3, 1 / 3, 1 / 3]])


def test_reduce_max_ties_dot_product():
    """Forward and reverse mode agree at ties (the dot-product test inside)."""
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    check_grads(lambda v: lax.reduce_max(v, (1,)), [x], modes=("rev",), eps=1e-12, rtol=1e9,
                atol=1e9)  # finite differences are meaningless at a kink
    _, pullback = xlapy.vjp(lambda v: lax.reduce_max(v, (1,)), x)
    u = np.array([1.0, 3.0])
    v = np.arange(6.0).reshape(2, 3)
    (ct,) = pullback(u)
    _, jv = xlapy.jvp(lambda w: lax.reduce_max(w, (1,)), (x,), (v,))
    assert np.isclose(np.vdot(np.asarray(jv), u), np.vdot(v, np.asarray(ct)))


def test_reduce_with_init_value():
    """A non-identity init takes part: in the sum once per output, in a max
    where it wins."""
    def f(x, c):
        return lax.reduce(x, c, lax.add, (0,))

    def g(x, c):
        return lax.reduce(x, c, lax.max, (1,))

    check_grads(f, [_values((3, 2), 3), np.array(0.7)])
    check_grads(g, [_values((3, 4), 4), np.array(0.1)])
    check_grads(lambda x, c: lax.reduce(x, c, lax.mul, (1,)),
                [_values((3, 4), 5), np.array(1.3)])


def test_argmax_differentiates_through_its_index():
    """argmax's variadic reduce is fine when only the index is used."""
    def f(x):
        index = lax.argmax(x, 1, np.int32)
        return lax.mul(lax.reduce_sum(x, (1,)), lax.convert_element_type(index, x.dtype))

    check_grads(f, [_values((3, 4), 6)])
    g = xlapy.grad(lambda x: lax.reduce_sum(lax.convert_element_type(
        lax.argmin(x, 0, np.int32), x.dtype), (0,)))(_values((3, 4), 7))
    np.testing.assert_array_equal(np.asarray(g), np.zeros((3, 4)))


def _max_with_index(x):
    def body(a, b):
        (va, ia), (vb, ib) = a, b
        pick = lax.ge(va, vb)
        return lax.select(pick, va, vb), lax.select(pick, ia, ib)

    index = lax.broadcasted_iota(np.int32, x.shape, 1)
    return lax.reduce((x, index), (np.array(-np.inf), np.int32(0)), body, (1,))


def test_variadic_reduce_value_output():
    """The value output of a variadic reduce: forward mode works (the reducer's
    own JVP), reverse mode is a clear CompileError."""
    x = _values((3, 4), 8)
    check_grads(lambda v: _max_with_index(v)[0], [x], modes=("fwd",))
    with pytest.raises(CompileError, match="variadic reduce"):
        xlapy.grad(lambda v: lax.reduce_sum(_max_with_index(v)[0], (0,)))(x)


# -- reduce-window ------------------------------------------------------------------------

@st.composite
def windows(draw):
    rank = draw(st.integers(1, 2))
    shape, sizes, strides, pads, base, dilation = [], [], [], [], [], []
    for _ in range(rank):
        size = draw(st.integers(1, 3))
        shape.append(draw(st.integers(1, 5)))
        sizes.append(size)
        strides.append(draw(st.integers(1, 3)))
        pads.append((draw(st.integers(0, 2)), draw(st.integers(0, 2))))
        base.append(draw(st.integers(1, 2)))
        dilation.append(draw(st.integers(1, 2)))
    shape = tuple(shape)
    out = lax.reduce_window_shape_tuple(shape, sizes, strides, pads, base, dilation)
    if 0 in out:
        pads = [(lo + s, hi + s) for (lo, hi), s in zip(pads, sizes)]
    return shape, (sizes, strides, pads, base, dilation)


@FEW
@given(windows(), st.integers(0, 2**16), st.sampled_from(["sum", "max", "min"]))
def test_reduce_window(shape_window, seed, kind):
    shape, (sizes, strides, pads, base, dilation) = shape_window
    reduce = {"sum": lax.reduce_window_sum, "max": lax.reduce_window_max,
              "min": lax.reduce_window_min}[kind]
    x = _values(shape, seed)
    y = np.asarray(reduce(x, sizes, strides, pads, base, dilation))
    assume(np.all(np.isfinite(y)))  # a max over padding and holes only is -inf
    check_grads(lambda v: reduce(v, sizes, strides, pads, base, dilation), [x])


def _max_pool(x, size, stride, padding):
    return lax.reduce_window_max(x, (1, size, size, 1), (1, stride, stride, 1), padding)


@pytest.mark.parametrize("size,stride,padding", [
    (2, 2, "VALID"), (3, 2, "SAME"), (3, 2, [(0, 0), (1, 1), (1, 1), (0, 0)])])
def test_max_pool(size, stride, padding):
    x = _values((2, 6, 5, 2), 9)
    check_grads(lambda v: _max_pool(v, size, stride, padding), [x])


def test_max_pool_gradient_is_xlas():
    """The gradient goes to the first maximum of each window (select GE)."""
    x = np.array([[1.0, 1.0, 0.0, 2.0], [1.0, 0.0, 2.0, 2.0]])[None, :, :, None]
    g = xlapy.grad(lambda v: lax.reduce_sum(_max_pool(v, 2, 2, "VALID"), (0, 1, 2, 3)))(x)
    np.testing.assert_array_equal(np.asarray(g)[0, :, :, 0], [[1, 0, 0, 1], [0, 0, 0, 0]])
    t = np.arange(8.0).reshape(x.shape)
    _, tangent = xlapy.jvp(lambda v: _max_pool(v, 2, 2, "VALID"), (x,), (t,))
    np.testing.assert_array_equal(np.asarray(tangent).ravel(), [0.0, 3.0])


def test_avg_pool():
    def avg_pool(x):
        return lax.div(lax.reduce_window_sum(x, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
                       np.array(9.0))

    check_grads(avg_pool, [_values((1, 7, 6, 3), 10)])


def test_reduce_window_init_value():
    """A non-identity init value of a windowed max wins where it beats the window."""
    def f(x, c):
        return lax.reduce_window(x, c, lax.max, (2,), (1,), [(1, 0)])

    check_grads(f, [np.array([0.3, -1.0, 0.8, -2.0, 1.5]), np.array(0.0)])
    check_grads(lambda x, c: lax.reduce_window(x, c, lax.add, (2,), (2,), "SAME"),
                [_values((5,), 11), np.array(0.5)])


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("cumulative", [lax.cumsum, lax.cummax, lax.cummin])
def test_cumulative(cumulative, reverse):
    check_grads(lambda v: cumulative(v, 1, reverse=reverse), [_values((3, 5), 12)])


def test_cumulative_forward_only():
    x = _values((3, 5), 12)
    check_grads(lambda v: lax.cumprod(v, 0), [x], modes=("fwd",))
    check_grads(lambda v: lax.cumlogsumexp(v, 1), [x], modes=("fwd",))
    with pytest.raises(CompileError, match="reverse rule"):
        xlapy.grad(lambda v: lax.reduce_sum(lax.cumprod(v, 0), (0, 1)))(x)


# -- select-and-scatter and second derivatives ---------------------------------------------

def test_select_and_scatter():
    x = _values((6, 5), 13)

    def f(source, init):
        return lax.select_and_scatter(x, lax.ge, (2, 3), (2, 1), "SAME", source,
                                      init, lax.add)

    source = _values(lax.reduce_window_shape_tuple((6, 5), (2, 3), (2, 1), "SAME"), 14)
    check_grads(f, [source, np.array(0.25)])


def test_max_pool_second_derivative():
    """grad of a function of the max-pool gradient: select-and-scatter's rules."""
    w = _values((1, 6, 6, 1), 15)

    def g(x):
        y = _max_pool(x, 3, 2, "SAME")
        return lax.reduce_sum(lax.mul(y, y), (0, 1, 2, 3))

    def f(x):
        return lax.reduce_sum(lax.mul(xlapy.grad(g)(x), w), (0, 1, 2, 3))

    x = _values((1, 6, 6, 1), 16)
    check_grads(f, [x])
    check_grads(xlapy.grad(g), [x])


def test_max_pool_third_derivative():
    """Reverse mode through select and gather (the second derivative's own
    gradient) is a select-and-scatter again."""
    w = _values((5, 6), 17)

    def g(x):
        y = lax.reduce_window_min(x, (2, 3), (1, 2), "SAME")
        return lax.reduce_sum(lax.mul(lax.mul(y, y), y), (0, 1))

    def f(x):
        return lax.reduce_sum(lax.mul(xlapy.grad(g)(x), w), (0, 1))

    check_grads(xlapy.grad(f), [_values((5, 6), 18)])
