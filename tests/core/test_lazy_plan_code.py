"""A tape's call plans compiled to Python (`lazy_plan_code`) decide as the
generic path does: every compiled call below is checked against
`TapeRun.arguments` on the same arguments (accepted or refused alike, the
same operands, the same leaves gathered), over steps that match their tape
and steps that leave it in each way an argument can differ."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy
import xlapy.numpy as xnp
from xlapy.core import lazy_plan_code, lazy_steps
from xlapy.core.lazy_graph import Node


def _same_operand(a, b) -> bool:
    if type(a) is tuple and len(a) == 2 and type(a[0]) is Node:
        return type(b) is tuple and a[0] is b[0] and a[1] == b[1]
    return a is b


@pytest.fixture
def checked(monkeypatch):
    """Fresh tapes whose compiled plans each run beside the generic check;
    the list of (accepted, refused) counts fills as they run."""
    counts = [0, 0]
    original = lazy_plan_code.compiled

    def compiled(plan):
        fast = original(plan)
        if fast is None:
            return None

        def both(args, run):
            saved = list(run.leaves)
            given = run.arguments(args, plan.checks)
            generic_leaves, run.leaves[:] = list(run.leaves), saved
            made = fast(args, run)
            assert (made is None) == (given is None), (plan.checks, args)
            if made is None:
                counts[1] += 1
                return None
            counts[0] += 1
            assert all(a is b for a, b in zip(run.leaves, generic_leaves))
            operands = made._node.operands
            if plan.plain:
                assert len(operands) == len(given)
                assert all(_same_operand(a, b) for a, b in zip(operands, given))
            return made

        return both

    monkeypatch.setattr(lazy_plan_code, "compiled", compiled)
    monkeypatch.setattr(lazy_plan_code, "USES_BEFORE_COMPILING", 0)
    monkeypatch.setattr(lazy_steps, "TAPES", {})
    return counts


def _step(w, x, lr, scale, u=None, v=None):
    """Each argument is first read after the step's first operation (the first
    is matched as any node is, not by its plan)."""
    h = x @ xnp.tanh(w) * lr + scale
    h = xnp.maximum(h, 0.0) - xnp.mean(h, axis=-1, keepdims=True)
    if u is not None:
        h = h + u * v   # (one leaf twice on the tape; two values in a step that differs)
    return xnp.sum(h * h)


def test_compiled_plans_decide_as_the_generic_path(checked):
    rng = np.random.default_rng(0)
    w = xnp.asarray(rng.standard_normal((4, 4)).astype(np.float32))
    x = xnp.asarray(rng.standard_normal((3, 4)).astype(np.float32))
    x_np = np.asarray(x)
    other_w = xnp.asarray(rng.standard_normal((4, 4)).astype(np.float32))
    u = xnp.asarray(rng.standard_normal(4).astype(np.float32))
    u2 = xnp.asarray(np.asarray(u))
    weak_scale = xnp.asarray(2.0)   # (a weakly typed 0-d array)
    strong_scale = xnp.asarray(np.float32(2.0))
    expected, seen = [], []
    variants = [
        (w, x, 0.5, weak_scale), (w, x, 0.5, weak_scale),   # the tape is made, then matched
        (w, x, 0.25, weak_scale),         # another learning rate: a scalar operand
        (other_w, x, 0.5, weak_scale),    # another leaf value
        (w, x_np, 0.5, weak_scale),       # a NumPy argument where an xlapy array was
        (w, x, 0.5, strong_scale),        # another weak type
        (w, x[:2], 0.5, weak_scale),      # another shape
        (w, x, -0.0, weak_scale),         # a zero (its sign counts)
        (w, x, 0.5, weak_scale, u, u), (w, x, 0.5, weak_scale, u, u),
        (w, x, 0.5, weak_scale, u, u2),   # two values where the tape had one
        (w, x, 0.5, weak_scale),
    ]
    for args in variants:
        with xlapy.jit_scope():
            for _ in range(3):
                seen.append(float(_step(*args)))
        expected.append(float(_step(*(np.asarray(a) if isinstance(a, xlapy.Array) else a
                                       for a in args))))
    np.testing.assert_allclose(np.array(seen).reshape(len(variants), 3),
                               np.repeat(np.array(expected)[:, None], 3, axis=1), rtol=2e-6)
    accepted, refused = checked
    assert accepted > 20 and refused > 0


def _reshaped(x, shape, axes):
    """A shape and axes as tuples (or lists) of scalars: plan checks of kind 4."""
    return xnp.sum(xnp.transpose(xnp.reshape(x * 2.0, shape), axes) * 3.0)


def test_compiled_plans_of_shapes_and_axes_decide_as_the_generic_path(checked):
    x = xnp.asarray(np.arange(12, dtype=np.float32))
    variants = [
        ((3, 4), (1, 0)), ((3, 4), (1, 0)),    # the tape is made, then matched
        ([3, 4], (1, 0)),                      # a list where the tape had a tuple
        ((np.int64(3), 4), (1, 0)),            # an element of another type
        ((4, 3), (1, 0)),                      # another shape
        ((3, 4), (0, 1)),                      # other axes
        ((2, 3, 2), (2, 0, 1)),                # another length
        ((3, 4), (1, 0)),
    ]
    for shape, axes in variants:
        with xlapy.jit_scope():
            seen = [float(_reshaped(x, type(shape)(list(shape)), axes))   # (equal, not the
                    for _ in range(3)]                                    # same object)
        expected = float(np.sum(np.transpose(np.reshape(np.arange(12, dtype=np.float32) * 2,
                                                        shape), axes) * 3))
        assert seen == [expected] * 3
    accepted, refused = checked
    assert accepted > 10 and refused > 0


_AN_INDEX = (slice(0, 2), None, slice(None, None, 3))


def test_compiled_plans_of_slices_decide_as_the_generic_path(checked):
    """An index of slices, None and Ellipsis (plan checks of kind 6): equal
    indices match, another bound or another kind of entry do not."""
    x = xnp.asarray(np.arange(24, dtype=np.float32).reshape(4, 6))
    variants = [
        lambda: (slice(1, 3), None), lambda: (slice(1, 3), None),   # made, then matched
        lambda: _AN_INDEX, lambda: _AN_INDEX,   # one object every call: taken as it is
        lambda: (slice(1, 4), None),                                 # another bound
        lambda: (slice(1, 3), Ellipsis),                             # another entry
        lambda: (slice(None, 3), slice(None, None, 2)),
        lambda: (slice(1, 3), None),
    ]
    for index in variants:
        with xlapy.jit_scope():
            seen = [float(xnp.sum((x * 2.0)[index()] * 3.0)) for _ in range(3)]
        expected = float(np.sum((np.arange(24, dtype=np.float32).reshape(4, 6) * 2)[index()] * 3))
        assert seen == [expected] * 3
    accepted, refused = checked
    assert accepted > 5 and refused > 0


def test_compiled_plans_of_lists_of_arrays_decide_as_the_generic_path(checked):
    """A list or tuple of arrays (plan checks of kind 7, concatenate's): the same
    handles and leaves match; swapped, another container, another length,
    another leaf or a NumPy array in it do not."""
    rng = np.random.default_rng(5)
    x, y = (xnp.asarray(rng.standard_normal((2, 3)).astype(np.float32)) for _ in range(2))
    raw = np.asarray(x)
    same = lambda h: [h, x]   # noqa: E731
    variants = [same, same,   # the tape is made, then matched; each other one follows it
                lambda h: (h, x), same,         # a tuple where the tape had a list
                lambda h: [x, h], same,         # swapped
                lambda h: [h, x, h], same,      # another length
                lambda h: [h, y], same,         # another leaf where x was
                lambda h: [h, raw], same]       # a NumPy array where x was
    for joined in variants:
        with xlapy.jit_scope():
            seen = [float(xnp.sum(xnp.concatenate(joined(xnp.tanh(x * 2.0))) * 3.0))
                    for _ in range(3)]
        h = np.tanh(np.asarray(x) * 2)
        want = float(np.sum(np.concatenate([np.asarray(a) if a is not None else h for a in
                                            joined(None)]).astype(np.float32) * 3))
        np.testing.assert_allclose(seen, [want] * 3, rtol=1e-6)
    accepted, refused = checked
    assert accepted > 5 and refused > 0
    assert any(callable(p.fast) and any(c[0] == 7 for c in p.checks) for p in _plans())


def test_compiled_plans_of_indices_mixing_slices_and_ints_decide_as_the_generic_path(checked):
    """`x[:, i]` and `x.at[:, i].set(v)` of a pending x: the ints become operands
    (`_indexing.int_operands`), so the index is a tuple of a slice and an array
    (plan checks of kind 7 holding kinds 6 and 1); another int is another leaf
    value and matches, another slice or the entries swapped do not."""
    x = xnp.asarray(np.arange(24, dtype=np.float32).reshape(4, 6))
    same = lambda: (slice(None), 1)   # noqa: E731
    variants = [same, same,
                lambda: (slice(None), 2), same,     # another int: another leaf value
                lambda: (slice(1, 3), 1), same,     # another slice
                lambda: (1, slice(None)), same]     # the entries swapped
    for index in variants:
        with xlapy.jit_scope():
            seen = [(float(xnp.sum((x * 2.0)[index()] * 3.0)),
                     float(xnp.sum((x * 2.0).at[index()].set(-1.0) * 3.0))) for _ in range(3)]
        doubled = np.arange(24, dtype=np.float32).reshape(4, 6) * 2
        updated = doubled.copy()
        updated[index()] = -1.0
        assert seen == [(float(np.sum(doubled[index()] * 3)), float(np.sum(updated * 3)))] * 3
    accepted, refused = checked
    assert accepted > 5 and refused > 0
    assert any(callable(p.fast) and any(c[0] == 7 for c in p.checks) for p in _plans())


def _plans() -> list:
    """The plans of the tapes kept, but each tape's first (its node begins the run
    before any call is matched: that plan is never used)."""
    return [p for _, tapes in lazy_steps.TAPES.values() for tape in tapes
            for p in tape.calls[1:] if p is not None]


def test_a_plan_is_compiled_once_it_has_been_used_a_few_times(monkeypatch):
    """The step's plans are all written out (none left to the generic path), but
    only after USES_BEFORE_COMPILING taped calls each: a tape used once costs no
    compile."""
    monkeypatch.setattr(lazy_steps, "TAPES", {})
    w = xnp.asarray(np.ones((4, 4), np.float32))
    x = xnp.asarray(np.ones((3, 4), np.float32))
    with xlapy.jit_scope():
        for _ in range(3):
            float(_step(w, x, 0.5, 1.0))
        assert _plans() and all(type(p.fast) is int for p in _plans())
        for _ in range(lazy_plan_code.USES_BEFORE_COMPILING + 1):
            float(_step(w, x, 0.5, 1.0))
    assert all(callable(p.fast) for p in _plans())
