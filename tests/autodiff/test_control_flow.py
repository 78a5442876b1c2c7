"""Derivatives through while loops (fori_loop, scan, while_loop) and conditionals,
checked against finite differences, in both modes, eagerly and under jit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlapy
from tests.autodiff.check import check_grads
from xlapy import lax
from xlapy.errors import CompileError


def _rand(seed, *shape):
    return np.random.default_rng(seed).standard_normal(shape)


@given(steps=st.integers(0, 6), seed=st.integers(0, 2**16))
@settings(deadline=None, max_examples=8)
def test_fori_loop_with_static_bounds(steps, seed):
    def f(x, w):
        return lax.fori_loop(0, steps, lambda i, c: lax.add(lax.tanh(lax.mul(c, w)), x), x)
    check_grads(f, [_rand(seed, 3), _rand(seed + 1, 3)])


def test_fori_loop_using_its_index_and_a_closure():
    def f(x, w):
        def body(i, c):
            scale = lax.convert_element_type(i, np.float64)
            return lax.add(lax.mul(lax.sin(c), w), lax.mul(x, scale))
        return lax.fori_loop(2, 7, body, x)
    check_grads(f, [_rand(0, 4), _rand(1, 4)])


def test_scan_over_eight_steps():
    def f(xs, h0, w):
        def step(h, x):
            h = lax.tanh(lax.add(lax.mul(h, w), x))
            return h, lax.mul(h, h)
        h, ys = lax.scan(step, h0, xs)
        return h, ys
    check_grads(f, [_rand(0, 8, 3), _rand(1, 3), _rand(2, 3)])


def test_reverse_scan():
    def f(xs, h0):
        return lax.scan(lambda h, x: (lax.sin(lax.add(h, x)), h), h0, xs, reverse=True)
    check_grads(f, [_rand(3, 5, 2), _rand(4, 2)])


def test_nested_loops():
    def f(x):
        def outer(i, c):
            return lax.fori_loop(0, 3, lambda j, d: lax.mul(lax.cos(d), c), c)
        return lax.fori_loop(0, 2, outer, x)
    check_grads(f, [_rand(5, 3) * 0.5])


def test_second_derivative_through_a_loop():
    def f(x):
        return lax.fori_loop(0, 4, lambda i, c: lax.mul(lax.sin(c), x), x)

    def grad_sum(x):
        return xlapy.grad(lambda y: lax.reduce_sum(f(y), (0,)))(x)
    check_grads(grad_sum, [_rand(6, 3)])


def test_while_loop_with_a_value_dependent_condition_runs_in_forward_mode():
    def f(x):
        return lax.while_loop(lambda c: lax.lt(c[0], 10.0),
                              lambda c: (lax.add(lax.mul(c[0], 1.5), 1.0), lax.sin(c[1])),
                              x)
    x = (np.float64(0.5), np.array([0.3, 0.4]))
    check_grads(lambda a, b: f((a, b)), list(x), modes=("fwd",))


def test_while_loop_reverse_mode_eagerly_counts_its_iterations():
    """Outside jit the loop state is concrete, so its trip count is known."""
    def f(x):
        return lax.while_loop(lambda c: lax.lt(c[0], 5), lambda c: (c[0] + 1, lax.sin(c[1])),
                              (0, x))[1]
    g = xlapy.grad(lambda x: lax.reduce_sum(f(x), (0,)))(np.array([0.2, 0.7]))
    x = np.array([0.2, 0.7])
    expected = np.ones(2)
    for _ in range(5):
        expected = expected * np.cos(x)
        x = np.sin(x)
    np.testing.assert_allclose(np.asarray(g), expected)


def test_while_loop_with_a_traced_condition_is_refused_in_reverse_mode_under_jit():
    def f(x, n):
        return lax.while_loop(lambda c: lax.lt(c[0], n), lambda c: (c[0] + 1, lax.sin(c[1])),
                              (0, x))[1]
    loss = xlapy.jit(xlapy.grad(lambda x, n: lax.reduce_sum(f(x, n), (0,))))
    with pytest.raises(CompileError, match="trip count"):
        loss(np.array([0.2, 0.7]), np.int32(3))


@pytest.mark.parametrize("pred", [True, False])
def test_cond(pred):
    def f(x, y):
        return lax.cond(pred, lambda a, b: lax.mul(lax.sin(a), b),
                        lambda a, b: lax.exp(lax.sub(a, b)), x, y)
    check_grads(f, [_rand(7, 3), _rand(8, 3)])


@pytest.mark.parametrize("index", [0, 1, 2, 5])
def test_switch_with_a_closure(index):
    def f(x, w, i):
        return lax.switch(i, [lambda a: lax.sin(a), lambda a: lax.mul(a, w),
                              lambda a: lax.tanh(lax.mul(a, a))], x)
    check_grads(f, [_rand(9, 4), _rand(10, 4), np.int32(index)], wrt=(0, 1))


def test_cond_on_a_traced_predicate_inside_a_loop():
    def f(x):
        def body(i, c):
            return lax.cond(lax.gt(lax.reduce_sum(c, (0,)), 0.0),
                            lambda a: lax.mul(a, 0.5), lambda a: lax.sin(a), c)
        return lax.fori_loop(0, 3, body, x)
    check_grads(f, [_rand(11, 3)])
