"""Lazy mode's replay of learned xnp calls (`lazy_replay`) and grad's capture of
a recording from the pending graph (`lazy_capture`): a replayed call gives
what running it again would (new data, other scalars, keyword arrays, calls
returning their input), never freezes a value, and is not used for calls
that read data or return no pending array; grad of a captured loss equals
eager grad, and stop_gradient and custom_vjp keep their meaning."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlapy
import xlapy.lax as lax
import xlapy.nn as nn
import xlapy.numpy as xnp
from xlapy.core import lazy, lazy_replay, lazy_steps
from xlapy.core.lazy_replay import replayed


def _rand(seed, shape=(3, 4), dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _lazily(fn, *calls):
    """fn applied to each argument tuple inside one jit_scope, results as NumPy."""
    with xlapy.jit_scope():
        outs = [fn(*args) for args in calls]
    return [np.asarray(o) for o in outs]


_PROGRAMS = {
    "softmax": lambda x: xnp.exp(x - xnp.max(x, axis=-1, keepdims=True)) /
    xnp.sum(xnp.exp(x - xnp.max(x, axis=-1, keepdims=True)), axis=-1, keepdims=True),
    "affine": lambda x: 0.5 * x + 1.25,
    "mean_var": lambda x: xnp.var(x, axis=0) + xnp.mean(x),
    "matmul": lambda x: x @ x.T,
    "reshape": lambda x: xnp.transpose(xnp.reshape(x, (4, 3))) * 2.0,
    "concat": lambda x: xnp.concatenate([x, -x], axis=1),
    "clip": lambda x: xnp.clip(x, -0.5, 0.5),
    "where": lambda x: xnp.where(x > 0, x, 0.0),
    "cumsum": lambda x: xnp.cumsum(x, axis=1),
    "ints": lambda x: (xnp.asarray(x * 4).astype(np.int32) // 3) % 5,
}


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(_PROGRAMS)), seeds=st.lists(st.integers(0, 10**6),
                                                                 min_size=2, max_size=4))
def test_replayed_calls_equal_eager_on_new_data(name, seeds):
    """The first call learns, the others replay: each on its own data, as eager."""
    program = _PROGRAMS[name]
    inputs = [_rand(s) for s in seeds]
    got = _lazily(lambda a: program(xnp.asarray(a)), *[(a,) for a in inputs])
    for a, g in zip(inputs, got):
        want = np.asarray(program(xnp.asarray(a)))
        if want.dtype.kind in "iub":
            np.testing.assert_array_equal(g, want)
        else:
            np.testing.assert_allclose(g, want, rtol=2e-6, atol=1e-6)


def _counting(fn):
    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return fn(*args, **kwargs)
    return replayed(counted), calls


def test_a_replayed_call_does_not_run_its_python_again():
    scale, calls = _counting(lambda x, s: xnp.tanh(x) * s)
    with xlapy.jit_scope():
        outs = [scale(xnp.asarray(_rand(k)), 2.0) for k in range(5)]
        assert len(calls) == 1                       # learned once, then replayed
        scale(xnp.asarray(_rand(0)), 3.0)            # another scalar: another signature
        scale(xnp.asarray(_rand(0, (2, 2))), 2.0)    # another shape: another signature
        assert len(calls) == 3
    for k, out in enumerate(outs):
        np.testing.assert_allclose(np.asarray(out), np.tanh(_rand(k)) * 2.0, rtol=1e-6)


def test_a_python_scalar_beside_a_float_array_is_an_operand_not_a_signature():
    """`p - lr * g` with a learning rate that changes every step learns its calls
    once and matches its tape every step (it learned them again each step and
    never matched: an MLP step with a decaying rate ran 3.6 times slower); the
    scalar converts as promotion converts it, bit for bit, the sign of zero and
    power's exact int exponent included."""
    p, g = xnp.asarray(_rand(1)), xnp.asarray(_rand(2))
    rates = [0.1 / (1 + k) for k in range(8)]

    def step(p, lr):
        return p - lr * g

    eager = p
    for lr in rates:
        eager = step(eager, lr)
    with xlapy.jit_scope():
        got = p
        for k, lr in enumerate(rates):
            got = step(got, lr)
            float(got.sum())
            if k == 2:
                start = lazy.Stats(**vars(lazy.STATS))
        assert lazy.STATS.taped - start.taped == len(rates) - 3
        assert lazy.STATS.compiles == start.compiles
    np.testing.assert_array_equal(np.asarray(got), np.asarray(eager))

    half = xnp.asarray(_rand(3, dtype=np.float16))
    cases = [lambda: half * 0.1, lambda: 1e-3 + half, lambda: xnp.abs(g) * -0.0,
             lambda: xnp.abs(g) * 0.0, lambda: g ** 3, lambda: xnp.abs(g) ** 0.5, lambda: 3 / g,
             lambda: xnp.maximum(g, 0), lambda: g - 2 ** 40,
             lambda: xnp.where(g > 0, g, -0.0), lambda: xnp.where(g > 0, g, 0.0)]
    eager_values = [np.asarray(case()) for case in cases]
    with xlapy.jit_scope():
        lazy_values = [case() for case in cases for _ in range(2)]
    for want, got in zip([v for v in eager_values for _ in range(2)], lazy_values):
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_array_equal(np.signbit(np.asarray(got)), np.signbit(want))
        np.testing.assert_array_equal(np.asarray(got), want)


def test_indexing_a_pending_array_by_slices_is_replayed_and_by_an_int_stays_taped(
        monkeypatch):
    """`y[:, 1:3]`, `y[..., None]` of a pending `y` are learned once (a slice is
    spelled by its bounds) and equal eager; `y[i]`'s int is an operand (a 0-d
    int32 leaf, `_indexing.int_operands`), so a loop indexing by its step
    number matches its tape every step and parses no index once learned;
    negative ints wrap once, out-of-bounds ones clamp, as eagerly; a concrete
    array is sliced on the spot."""
    x = xnp.asarray(_rand(4, (5, 6)))
    indexes = [(slice(None), slice(1, 3)), (Ellipsis, None), (slice(None, None, -2),),
               (slice(1, None), Ellipsis, slice(None, 2))]
    eager = [np.asarray((x * 2.0)[index]) for index in indexes]
    with xlapy.jit_scope():
        y = x * 2.0
        before = len(lazy_replay._CACHE)
        got = [y[index] for index in indexes for _ in range(3)]
        learned = len(lazy_replay._CACHE) - before
        values = [np.asarray(g) for g in got]
        assert type(x[1:3]) is not lazy.LazyArray
    assert learned == len(indexes)
    for want, value in zip([e for e in eager for _ in range(3)], values):
        np.testing.assert_array_equal(value, want)

    from xlapy.numpy import _indexing
    reads = []
    original = _indexing._read
    monkeypatch.setattr(_indexing, "_read", lambda *a, **k: reads.append(a) or original(*a, **k))
    data = xnp.asarray(_rand(5, (4, 3)))
    with xlapy.jit_scope():
        rows = [float(((data * 2.0)[i % 4]).sum()) for i in range(5)]   # (a step per row)
        start = lazy.Stats(**vars(lazy.STATS))
        reads.clear()
        rows += [float(((data * 2.0)[i % 4]).sum()) for i in range(5, 9)]
        assert lazy.STATS.taped - start.taped == 4 and not reads
        edges = [np.asarray((data * 2.0)[index]) for index in (-1, -4, 7, -9, (2, slice(1, 3)),
                                                               (slice(None), -1))]
    np.testing.assert_allclose(rows, [2 * _rand(5, (4, 3))[i % 4].sum() for i in range(9)],
                               rtol=1e-5)
    for index, edge in zip((-1, -4, 7, -9, (2, slice(1, 3)), (slice(None), -1)), edges):
        np.testing.assert_array_equal(edge, np.asarray((data * 2.0)[index]))   # (eagerly)


def test_iterating_a_pending_array_is_replayed_by_its_ints(monkeypatch):
    """`key, sub = random.split(key)` every step: the items 0 and 1 are learned
    once and replayed (the index is not parsed again: `_read` is not called
    after the warm-up) and each step matches its tape; values equal eager's,
    and iterating a concrete array still slices it on the spot."""
    from xlapy.numpy import _indexing

    def step(key):
        key, sub = xlapy.random.split(key)
        return key, float(xlapy.random.normal(sub, (3,)).sum())

    key, eager = xlapy.random.PRNGKey(7), []
    for _ in range(6):
        key, value = step(key)
        eager.append(value)
    reads = []
    original = _indexing._read
    monkeypatch.setattr(_indexing, "_read", lambda *a, **k: reads.append(a) or original(*a, **k))
    key, lazily = xlapy.random.PRNGKey(7), []
    concrete = xnp.asarray(_rand(3, (2, 2)))
    with xlapy.jit_scope():
        for _ in range(3):
            key, value = step(key)
            lazily.append(value)
        reads.clear()
        start = lazy.Stats(**vars(lazy.STATS))
        for _ in range(3):
            key, value = step(key)
            lazily.append(value)
        assert lazy.STATS.taped - start.taped == 3 and not reads
        rows = [np.asarray(r) for r in xnp.asarray(_rand(2, (3, 4))) * 2.0]
        assert all(type(r) is not lazy.LazyArray for r in concrete)
    assert lazily == eager
    for row, want in zip(rows, _rand(2, (3, 4)) * 2.0):
        np.testing.assert_array_equal(row, want)


_INDEX_ARRAYS = {   # (a pending index: what an eager shortcut once computed to read)
    "x[idx]": lambda x, idx, i: x[idx],
    "x[-idx]": lambda x, idx, i: x[-idx],
    "x[idx, 1:3]": lambda x, idx, i: x[idx, 1:3],
    "x[i] (0-d)": lambda x, idx, i: x[i],
    "dynamic_slice": lambda x, idx, i: xlapy.lax.dynamic_slice(x, (i, 1), (2, 3)),
    "dynamic_slice(-i)": lambda x, idx, i: xlapy.lax.dynamic_slice(x, (-i, 1), (2, 3)),
}


@pytest.mark.parametrize("name", sorted(_INDEX_ARRAYS))
def test_indexing_by_a_pending_index_array_is_replayed_without_computing_it(name):
    """Indices that are pending (the step's own, or a concrete index's stand-in
    while a call is learned) are operands: learned once, replayed, and no
    cluster runs before the result is read (lax's calls are recorded as they
    are, not replayed); values equal eager's, negative indices wrapped once."""
    fn = _INDEX_ARRAYS[name]
    x = xnp.asarray(_rand(6, (5, 4)))
    idx = np.array([3, 1, 0], np.int32)
    eager = [np.asarray(fn(x, xnp.asarray(idx + k), xnp.asarray(np.int32(k + 1))))
             for k in range(3)]
    with xlapy.jit_scope():
        start = lazy.Stats(**vars(lazy.STATS))
        got, learned = [], []
        for k in range(3):
            got.append(fn(x * 1.0, xnp.asarray(idx) + k, xnp.asarray(np.int32(k + 1)) * 1))
            learned.append(len(lazy_replay._CACHE))
        assert lazy.STATS.clusters == start.clusters   # (nothing computed yet)
        if not name.startswith("dynamic"):   # (xnp's calls are replayed; lax's recorded)
            assert learned[0] == learned[-1]   # (the first step learned them all)
            assert all(r is not None for r in list(lazy_replay._CACHE.values())[-3:])
        values = [np.asarray(g) for g in got]
    for want, value in zip(eager, values):
        np.testing.assert_array_equal(value, want)


def test_index_updates_are_replayed_with_int_indices_as_operands(monkeypatch):
    """`x.at[i].set(v)`, `.add`, `.max`, `.divide` of a lazy array, by a loop's
    step number, a slice and an index array: learned once, then replayed (no
    scatter is planned again) with each step matching its tape; equal to eager."""
    from xlapy.numpy import _indexing
    scatters = []
    original = _indexing._scatter
    monkeypatch.setattr(_indexing, "_scatter",
                        lambda *a, **k: scatters.append(a) or original(*a, **k))
    x = xnp.asarray(_rand(8, (5, 4)))
    idx = xnp.asarray(np.array([4, 0, 4], np.int32))

    def step(x, i):
        y = (x * 2.0).at[i % 5].set(1.5).at[1:3].add(x[0] * 0.5)
        return xnp.sum(y.at[idx].max(0.25).at[-1].divide(4.0))

    eager = [float(step(x, i)) for i in range(8)]
    with xlapy.jit_scope():
        lazily = [float(step(x, i)) for i in range(4)]
        scatters.clear()
        start = lazy.Stats(**vars(lazy.STATS))
        lazily += [float(step(x, i)) for i in range(4, 8)]
        assert not scatters and lazy.STATS.taped - start.taped == 4
    np.testing.assert_allclose(lazily, eager, rtol=1e-6)


def test_creation_by_shape_and_dtype_is_replayed(monkeypatch):
    """xnp.zeros, ones, full and the _like forms inside a step: learned once per
    signature, then replayed (their Python does not run again); equal to eager."""
    from xlapy.numpy import _creation
    made = []
    original = _creation.full
    monkeypatch.setattr(_creation, "full", lambda *a, **k: made.append(a) or original(*a, **k))
    x = xnp.asarray(_rand(9, (3, 4)))

    def step(x):
        h = xnp.zeros((3, 4), np.float32) + xnp.ones_like(x) * 2.0 + xnp.full((4,), 0.5)
        return xnp.sum(h + xnp.zeros_like(x, dtype=np.float16).astype(np.float32))

    eager = [float(step(x * float(k))) for k in range(4)]
    with xlapy.jit_scope():
        lazily = [float(step(x * float(k))) for k in range(2)]
        made.clear()
        lazily += [float(step(x * float(k))) for k in range(2, 4)]
        assert not made
    assert lazily == eager


def test_ranges_and_matrices_are_replayed(monkeypatch):
    """arange, linspace, eye, tri, identity, tril and diag inside a step: learned
    once per signature, then replayed (`xnp.eye(16)` was ~90 µs a call recorded
    as it is); equal to eager."""
    from xlapy.numpy import _creation
    ran = []
    for helper in ("_static", "_interpolate", "_diagonal_offsets", "_triangle"):
        original = getattr(_creation, helper)
        monkeypatch.setattr(_creation, helper, lambda *a, original=original, name=helper:
                            ran.append(name) or original(*a))
    x = xnp.asarray(_rand(9, (4, 4)))

    def step(x):
        h = x @ xnp.eye(4, dtype=np.float32) + xnp.tri(4, k=-1) * xnp.arange(4, dtype=np.int32)
        h = h + xnp.linspace(0.0, 1.0, 4) + xnp.identity(4) + xnp.arange(1, 9, 2)
        return xnp.sum(xnp.tril(h, 1) + xnp.diag(xnp.diag(h)))

    eager = [float(step(x * float(k))) for k in range(5)]
    with xlapy.jit_scope():
        lazily = [float(step(x * float(k))) for k in range(3)]
        ran.clear()
        start = lazy.STATS.taped
        lazily += [float(step(x * float(k))) for k in range(3, 5)]
        assert not ran and lazy.STATS.taped - start == 2
    np.testing.assert_allclose(lazily, eager, rtol=1e-6)


def _steady_steps(step, seen: list, rtol: float, atol: float = 0.0) -> None:
    """`step` on five arrays, eagerly and lazily: the lazy steps after the first two
    add nothing to `seen` (what the test's counters fill) and run from their
    tape; every value equals eager's."""
    data = [xnp.asarray(_rand(k, (4, 6))) for k in range(5)]
    eager = [float(step(x)) for x in data]
    with xlapy.jit_scope():
        lazily = [float(step(x)) for x in data[:2]]
        seen.clear()
        start = lazy.STATS.taped
        lazily += [float(step(x)) for x in data[2:]]
        assert not seen and lazy.STATS.taped - start == 3
    np.testing.assert_allclose(lazily, eager, rtol=rtol, atol=atol)


_NN_CALLS = {
    "softmax": lambda x: nn.softmax(x),
    "log_softmax": lambda x: nn.log_softmax(x, axis=0),
    "gelu": lambda x: nn.gelu(x),
    "gelu erf": lambda x: nn.gelu(x, approximate=False),
    "silu": lambda x: nn.silu(x),
    "swish": lambda x: nn.swish(x),
    "logsumexp": lambda x: nn.logsumexp(x, axis=-1, keepdims=True),
    "leaky_relu": lambda x: nn.leaky_relu(x, 0.1),
    "one_hot": lambda x: nn.one_hot(xnp.argmax(x, axis=-1), 6),
    "standardize": lambda x: nn.standardize(x, axis=0),
}


@pytest.mark.parametrize("name", sorted(_NN_CALLS))
def test_nn_functions_are_replayed(name, monkeypatch):
    """xlapy.nn inside a step: learned once per signature and replayed, their
    Python (promotion, axes, shapes) not run again: `nn.softmax` cost ~20 µs a
    call recorded as it is, `gelu` ~35. Equal to eager on every step's data."""
    from xlapy.nn import _activations, _normalization
    ran = []
    for module, helper in ((_activations, "_inexact"), (_normalization, "_inexact"),
                           (_normalization, "canonicalize_axis")):
        original = getattr(module, helper)
        monkeypatch.setattr(module, helper, lambda *a, original=original:
                            ran.append(a) or original(*a))
    call = _NN_CALLS[name]
    _steady_steps(lambda x: xnp.sum(call(x) * x), ran, rtol=2e-6, atol=1e-6)


_SPD = lambda x: x[:, :4] @ x[:, :4].T + 4.0 * xnp.eye(4)   # noqa: E731
_STATIC_SHAPED = {
    "sort": lambda x: xnp.sort(x, axis=1),
    "argsort": lambda x: xnp.argsort(x, axis=1) * 1.0,
    "take_along_axis": lambda x: xnp.take_along_axis(x, xnp.argsort(x, axis=1), axis=1),
    "searchsorted": lambda x: xnp.searchsorted(xnp.sort(x[0]), x[1]) * 1.0,
    "median": lambda x: xnp.median(x, axis=0),
    "quantile": lambda x: xnp.quantile(x, 0.25, axis=1),
    "norm": lambda x: xnp.linalg.norm(x, axis=-1),
    "inv": lambda x: xnp.linalg.inv(_SPD(x)),
    "slogdet": lambda x: xnp.linalg.slogdet(_SPD(x)).logabsdet,   # (a named tuple)
}


@pytest.mark.parametrize("name", sorted(_STATIC_SHAPED))
def test_sorting_quantiles_take_and_linalg_are_replayed(name, monkeypatch):
    """Functions of static result shapes beyond the elementwise ones: learned once
    per signature, then replayed (a step's xnp.take_along_axis was ~450 µs a
    call recorded as it is, its index grid a NumPy constant no recipe could
    hold; xnp.linalg.norm ~20, xnp.argsort ~26); equal to eager."""
    learned = []
    original = lazy_replay._learn
    monkeypatch.setattr(lazy_replay, "_learn", lambda *a: learned.append(a[0]) or original(*a))
    call = _STATIC_SHAPED[name]
    _steady_steps(lambda x: xnp.sum(call(x)), learned, rtol=1e-5)
    recipes = [recipe for key, recipe in lazy_replay._CACHE.items()
               if getattr(key[0], "__name__", "") == name]
    assert recipes and None not in recipes   # (learned, and replayable)


def test_a_call_of_several_results_is_taped_with_its_container():
    """xnp.split's pieces (a list) and meshgrid's come from one node of several
    results: the step's plan makes it and hands back the same container (it had
    no plan: each call spelled its signature again, ~6 µs; now ~3.5)."""
    def step(x):
        first, second, third = xnp.split(x, 3, axis=1)
        gx, gy = xnp.meshgrid(xnp.arange(2.0), xnp.arange(4.0))
        return xnp.sum(first * third - second) + xnp.sum(gx * first + gy * second)

    data = [xnp.asarray(_rand(k, (4, 6))) for k in range(5)]
    eager = [float(step(x)) for x in data]
    with xlapy.jit_scope():
        lazily = [float(step(x)) for x in data[:2]]
        start = lazy.STATS.taped
        lazily += [float(step(x)) for x in data[2:]]
        assert lazy.STATS.taped - start == 3
        assert type(xnp.split(data[0], 3, axis=1)) is list
        plans = [p for _, tapes in lazy_steps.TAPES.values() for tape in tapes
                 for p in tape.calls if p is not None and p.container is not None]
        assert plans and all(p.container is list for p in plans)
    np.testing.assert_allclose(lazily, eager, rtol=1e-6)


def _lax_step(x):
    """An eager step written with jax.lax-style primitives."""
    h = lax.dot_general(x, x, (((1,), (1,)), ((), ())))
    h = h + lax.dot(x, lax.transpose(x, (1, 0)), precision=lax.Precision.HIGHEST)   # (an enum)
    h = lax.erf(h) + lax.broadcast_in_dim(lax.reduce_max(x, (1,)), (4, 4), (0,))
    h = lax.select(h > 0, lax.exp(-h), lax.transpose(h, (1, 0)))
    h = lax.concatenate([h, lax.slice(x, (0, 0), (4, 4))], 1)
    return xnp.sum(lax.convert_element_type(lax.reshape(h, (8, 4)), np.float16)
                   .astype(np.float32))


def test_lax_primitives_are_replayed(monkeypatch):
    """xlapy.lax calls inside a step: learned once per signature, then replayed
    without their checks and shape inference (5-25 µs a call recorded as they
    are, ~1.5 replayed); equal to eager."""
    from xlapy.lax import contraction, elementwise, reductions, reshaping
    bound = []
    for module in (contraction, elementwise, reductions, reshaping):
        original = module.bind
        monkeypatch.setattr(module, "bind", lambda *a, original=original, **k:
                            bound.append(a[0]) or original(*a, **k))
    _steady_steps(_lax_step, bound, rtol=1e-5)


def test_a_named_tuple_argument_is_spelled(monkeypatch):
    """`lax.conv_general_dilated(..., dimension_numbers=ConvDimensionNumbers(...))`,
    a named tuple as Flax passes it, is replayed (a signature could not spell it:
    the call was recorded as it is every time)."""
    from xlapy.lax import contraction
    bound = []
    original = contraction.bind
    monkeypatch.setattr(contraction, "bind", lambda *a, **k: bound.append(a[0]) or
                        original(*a, **k))
    kernel = xnp.asarray(_rand(5, (2, 1, 3, 3)))
    numbers = lax.conv_dimension_numbers((1, 1, 4, 6), (2, 1, 3, 3), ("NCHW", "OIHW", "NCHW"))

    def step(x):
        image = lax.reshape(x, (1, 1, 4, 6))
        return xnp.sum(lax.conv_general_dilated(image, kernel, (1, 1), "SAME",
                                                dimension_numbers=numbers) ** 2)

    _steady_steps(step, bound, rtol=1e-5)


def test_lax_is_replayed_for_users_and_called_as_it_is_by_xlapy_itself():
    """The wrapper is the public namespace's: xlapy.numpy, nn, random and autodiff
    call the primitives themselves (a wrapper per primitive made an eager
    xnp.mean ~6% slower); functions taking functions are not wrapped."""
    from xlapy.lax import primitives
    from xlapy.numpy import _reductions
    from xlapy.random import _threefry
    assert lax.exp.__wrapped_for_lazy__ is primitives.exp
    assert lax.dot_general.__wrapped_for_lazy__ is primitives.dot_general
    assert lax.scan is primitives.scan and lax.while_loop is primitives.while_loop
    assert _reductions.lax is primitives and _threefry.lax is primitives


def test_numpy_arguments_are_read_at_every_call():
    """A NumPy argument converted inside the call (float64 -> float32) is an
    argument of the recipe, not a constant frozen at the first call."""
    add, calls = _counting(lambda x, y: xnp.add(x, y))
    y = xnp.asarray(_rand(9))
    outs = _lazily(add, *[(_rand(k).astype(np.float64), y) for k in range(3)])
    assert len(calls) == 1
    for k, out in enumerate(outs):
        np.testing.assert_allclose(out, _rand(k) + _rand(9), rtol=1e-6)


def test_keyword_arrays_and_results_that_are_arguments():
    pick, _ = _counting(lambda x, *, other, take_other: other if take_other else x + 0.0)
    a, b = xnp.asarray(_rand(1)), xnp.asarray(_rand(2))
    with xlapy.jit_scope():
        outs = [pick(a, other=b, take_other=True), pick(b, other=a, take_other=True),
                pick(a, other=b, take_other=False)]
    np.testing.assert_array_equal(np.asarray(outs[0]), _rand(2))
    np.testing.assert_array_equal(np.asarray(outs[1]), _rand(1))
    np.testing.assert_array_equal(np.asarray(outs[2]), _rand(1))


def test_calls_that_read_data_or_return_no_pending_array_are_not_replayed():
    positive, calls = _counting(lambda x: x * 2.0 if float(x.sum()) > 0 else x * -2.0)
    shape_of, shape_calls = _counting(lambda x: x.shape)
    data = [np.abs(_rand(3)), -np.abs(_rand(4)), np.abs(_rand(5))]
    with xlapy.jit_scope():
        outs = [positive(xnp.asarray(d)) for d in data]
        shapes = [shape_of(xnp.asarray(d)) for d in data]
    assert len(calls) == 3 and len(shape_calls) == 3   # run every time
    for d, out in zip(data, outs):
        np.testing.assert_allclose(np.asarray(out), 2.0 * np.abs(d), rtol=1e-6)
    assert shapes == [(3, 4)] * 3


def test_replay_is_off_outside_lazy_mode_and_in_traces():
    double, calls = _counting(lambda x: x * 2.0)
    x = xnp.asarray(_rand(0))
    double(x)
    double(x)
    xlapy.jit(lambda x: double(double(x)))(x)
    assert len(calls) == 4 and not any(k[0] is double.__wrapped__
                                       for k in lazy_replay._CACHE)


def _loss(w, x):
    return xnp.mean(xnp.tanh(x @ w) ** 2)


def _nn_loss(w, x):
    """A loss through replayed xlapy.nn calls: autodiff differentiates their nodes."""
    h = nn.gelu(x @ w)
    return xnp.mean(nn.logsumexp(h, axis=-1) + nn.softmax(h)[:, 0] * nn.silu(h)[:, 1])


@pytest.mark.parametrize("loss", [_loss, _nn_loss])
def test_grad_of_a_captured_loss_equals_eager_grad(loss):
    w, x = _rand(1, (4, 3)), _rand(2, (5, 4))
    eager = [np.asarray(g) for g in xlapy.value_and_grad(loss)(xnp.asarray(w), x)]
    with xlapy.jit_scope():
        runs = [xlapy.value_and_grad(loss)(xnp.asarray(w), x) for _ in range(3)]
        got = [[np.asarray(v) for v in run] for run in runs]
    for run in got:
        for a, b in zip(run, eager):   # (a compiled exp, log and erf against NumPy's,
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)   # chained in float32)


def test_stop_gradient_and_custom_vjp_keep_their_meaning_lazily():
    @xlapy.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (xnp.clip(g, -0.1, 0.1),))

    def f(x):
        return xnp.sum(xlapy.stop_gradient(x) * x) + xnp.sum(clip_gradient(x) * 3.0)

    x = _rand(7, (6,))
    eager = np.asarray(xlapy.grad(f)(xnp.asarray(x)))
    with xlapy.jit_scope():
        lazy_grads = [np.asarray(xlapy.grad(f)(xnp.asarray(x))) for _ in range(2)]
    np.testing.assert_allclose(eager, x + 0.1, rtol=1e-6)
    for g in lazy_grads:
        np.testing.assert_allclose(g, eager, rtol=1e-6)
    assert not lazy.PENDING


def test_replayed_functions_pickle_by_name():
    """A wrapper is named as living where users reach it (`xlapy.numpy.add`), so
    pickle (multiprocessing, a saved config) finds the same object; named after
    the wrapped function's module it was "not the same object" there."""
    import pickle

    for fn in (xnp.add, xnp.sort, xnp.zeros, xnp.linalg.norm, nn.relu, nn.swish, nn.hard_swish,
               lax.exp, xlapy.random.normal):
        assert pickle.loads(pickle.dumps(fn)) is fn
