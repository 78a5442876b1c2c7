"""Structured control flow: eager (plain Python) and under jit (HLO while and
conditional with traced bodies) agree, closures over traced values included."""

import numpy as np
import pytest

import xlapy
from xlapy import lax
from xlapy.hlo import parse
from xlapy.hlo.opcode import Opcode


def both(fn, *args):
    """fn eagerly and under jit; asserts they agree and returns the value."""
    eager = fn(*args)
    jitted = xlapy.jit(fn)(*args)
    for e, j in zip(_leaves(eager), _leaves(jitted)):
        np.testing.assert_array_equal(np.asarray(e), np.asarray(j))
        assert np.asarray(e).dtype == np.asarray(j).dtype
    return jitted


def _leaves(x):
    from xlapy.core.pytree import tree_leaves

    return tree_leaves(x)


def opcodes(fn, *args):
    module = xlapy.jit(fn).lower(*args).module
    return [i.opcode for c in module.computations for i in c.instructions]


X = np.arange(4, dtype=np.float32)


def test_while_loop_doubles_until_bound():
    out = both(lambda x: lax.while_loop(lambda v: lax.lt(v, 100.0), lambda v: lax.mul(v, 2.0), x),
               np.float32(3))
    assert float(np.asarray(out)) == 192.0


def test_while_loop_with_tuple_state_and_closure():
    def f(x, w):
        def body(state):
            i, acc = state
            return lax.add(i, 1), lax.add(acc, w)   # closes over the argument w
        return lax.while_loop(lambda s: lax.lt(s[0], 3), body, (0, x))[1]

    out = both(f, X, np.full(4, 0.5, np.float32))
    np.testing.assert_array_equal(np.asarray(out), X + 1.5)
    assert Opcode.WHILE in opcodes(f, X, np.full(4, 0.5, np.float32))


def test_fori_loop_sums_indices():
    f = lambda x: lax.fori_loop(0, 5, lambda i, v: lax.add(v, lax.convert_element_type(i, np.float32)), x)  # noqa: E731,E501
    np.testing.assert_array_equal(np.asarray(both(f, X)), X + 10)


def test_nested_loops_capture_from_two_levels():
    def f(x, y):
        def outer(i, acc):
            return lax.fori_loop(0, 2, lambda j, a: lax.add(a, lax.mul(x, y)), acc)
        return lax.fori_loop(0, 3, outer, lax.mul(x, 0.0))

    out = both(f, X, np.float32(2))
    np.testing.assert_array_equal(np.asarray(out), X * 2 * 6)


def test_cond_both_branches_and_closure():
    def f(p, x, k):
        return lax.cond(p, lambda a: lax.mul(a, k), lambda a: lax.neg(a), x)

    np.testing.assert_array_equal(np.asarray(both(f, True, X, np.float32(3))), X * 3)
    np.testing.assert_array_equal(np.asarray(both(f, False, X, np.float32(3))), -X)


def test_switch_clamps_the_index():
    branches = [lambda a: a, lambda a: lax.neg(a), lambda a: lax.mul(a, a)]
    f = lambda i, x: lax.switch(i, branches, x)  # noqa: E731
    for i, expected in [(0, X), (1, -X), (2, X * X), (9, X * X), (-4, X)]:
        np.testing.assert_array_equal(np.asarray(both(f, i, X)), expected)


def test_cond_branches_must_agree():
    with pytest.raises(TypeError, match="branches"):
        xlapy.jit(lambda p, x: lax.cond(p, lambda a: a, lambda a: lax.convert_element_type(
            a, np.int32), x))(True, X)


def test_while_body_must_keep_the_carry_type():
    with pytest.raises(TypeError, match="carries"):
        xlapy.jit(lambda x: lax.while_loop(lambda v: lax.lt(v, 3.0),
                                           lambda v: lax.convert_element_type(v, np.int32),
                                           x))(np.float32(0))


def test_scan_cumulative_sum_and_reverse():
    def f(xs):
        return lax.scan(lambda c, x: (lax.add(c, x), lax.mul(c, 2.0)), np.float32(0), xs)

    carry, ys = both(f, X)
    assert float(np.asarray(carry)) == 6.0
    np.testing.assert_array_equal(np.asarray(ys), [0, 0, 2, 6])
    g = lambda xs: lax.scan(lambda c, x: (lax.add(c, x), c), np.float32(0), xs, reverse=True)  # noqa: E731,E501
    carry, ys = both(g, X)
    np.testing.assert_array_equal(np.asarray(ys), [6, 5, 3, 0])


def test_traced_module_round_trips_through_text():
    def f(x, w):
        return lax.fori_loop(0, 3, lambda i, v: lax.add(v, w), x)

    lowered = xlapy.jit(f).lower(X, X)
    module = parse(lowered.as_text())
    xlapy.hlo.verify(module)
    assert module == parse(module.to_text())
    (out,) = xlapy.execute(module, [X, X], backend="interpreter")
    np.testing.assert_array_equal(out, X * 4)
