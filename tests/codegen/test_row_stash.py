"""Row stashes (xlapy/codegen/row_stash.py): a reduction's expensive input kept for
its row is used where it should be (a softmax computes each exponential once)
and nowhere it would be wrong, the CPU backend agreeing with the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlapy
import xlapy.numpy as xnp
from xlapy.codegen import row_stash
from xlapy.fuzz.compare import assert_matches
from xlapy.hlo import parse


@pytest.fixture
def stashes(monkeypatch):
    """Counts of stashes registered and of reads served from one, while compiling."""
    counts = {"kept": 0, "read": 0}
    register, lookup = row_stash.register, row_stash.lookup

    def counting_register(g, source, stash):
        counts["kept"] += 1
        register(g, source, stash)

    def counting_lookup(g, instruction, index):
        value = lookup(g, instruction, index)
        counts["read"] += value is not None
        return value

    monkeypatch.setattr(row_stash, "register", counting_register)
    monkeypatch.setattr(row_stash, "lookup", counting_lookup)
    return counts


def _agree(fn, *args):
    """The CPU backend (compiled afresh, no disk cache) and the interpreter agree on
    `fn`'s HLO; the CPU's results."""
    text = xlapy.jit(fn).lower(*args).as_text()
    expected = xlapy.execute(parse(text), list(args), backend="interpreter")
    executable = xlapy.compile(parse(text), backend="cpu")
    actual = executable.execute(*args)
    assert_matches(expected, actual, text)
    return actual


def _softmax(x, axis=-1):
    e = xnp.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _normal(*dims, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(dims).astype(dtype)


@pytest.fixture(autouse=True)
def _no_disk_cache(monkeypatch):
    monkeypatch.setenv("XLAPY_FLAGS", "--xlapy_cpu_cache_dir=off")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,axis", [((64, 100), -1), ((3, 5, 33), -1), ((40, 7), 0),
                                        ((6, 50, 4), 1)])
def test_softmax_computes_each_exponential_once(stashes, shape, axis, dtype):
    x = _normal(*shape, dtype=dtype)
    (out,) = _agree(lambda x: _softmax(x, axis), x)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=axis, keepdims=True),
                               rtol=1e-5 if dtype == np.float32 else 1e-12)
    if axis == -1:
        assert stashes["kept"] >= 1 and stashes["read"] >= 1
    else:   # a reduction over an outer axis is a kernel of its own (fusion_cost)
        assert stashes["read"] == 0


def test_the_row_is_read_in_another_order(stashes):
    x = _normal(16, 40)

    def fn(x):
        e = xnp.exp(x)
        return e[:, ::-1] / e.sum(axis=1, keepdims=True)

    (out,) = _agree(fn, x)
    np.testing.assert_allclose(out, np.exp(x)[:, ::-1] / np.exp(x).sum(1, keepdims=True),
                               rtol=1e-5)
    assert stashes["read"] >= 1


def test_two_reductions_and_an_elementwise_use_of_one_input(stashes):
    x = _normal(12, 30)

    def fn(x):
        t = xnp.tanh(x) * 3
        return t / t.sum(axis=1, keepdims=True) + t.max(axis=1, keepdims=True) * t

    (out,) = _agree(fn, x)
    t = np.tanh(x) * 3
    np.testing.assert_allclose(out, t / t.sum(1, keepdims=True) + t.max(1, keepdims=True) * t,
                               rtol=1e-4, atol=1e-4)
    assert stashes["read"] >= 1


def test_an_input_only_the_reduction_reads_is_not_kept(stashes):
    x = _normal(8, 20)
    (out,) = _agree(lambda x: x / xnp.exp(x).sum(axis=1, keepdims=True), x)
    np.testing.assert_allclose(out, x / np.exp(x).sum(1, keepdims=True), rtol=1e-5)
    assert stashes["kept"] == 0


def test_cheap_inputs_are_recomputed(stashes):
    x = _normal(8, 20)
    (out,) = _agree(lambda x: (x * 2) / (x * 2).sum(axis=1, keepdims=True), x)
    np.testing.assert_allclose(out, (x * 2) / (x * 2).sum(1, keepdims=True), rtol=1e-5)
    assert stashes["kept"] == 0


def test_rows_longer_than_the_stash_are_recomputed(stashes):
    x = _normal(2, row_stash.MAX_ELEMENTS + 1)
    (out,) = _agree(_softmax, x)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5)
    assert stashes["kept"] == 0


def test_a_reduction_over_two_dimensions_is_not_stashed(stashes):
    x = _normal(4, 6, 5)
    (out,) = _agree(lambda x: (lambda e: e / e.sum(axis=(1, 2), keepdims=True))(xnp.exp(x)), x)
    e = np.exp(x)
    np.testing.assert_allclose(out, e / e.sum((1, 2), keepdims=True), rtol=1e-5)
    assert stashes["kept"] == 0


def test_big_enough_for_the_parallel_path():
    x = _normal(4096, 300, seed=3)
    (out,) = _agree(_softmax, x)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(1, keepdims=True), rtol=1e-5)


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 9), cols=st.integers(1, 70), axis=st.sampled_from([0, 1]),
       reverse=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_random_softmax_like_kernels_match_the_interpreter(rows, cols, axis, reverse, seed):
    x = _normal(rows, cols, seed=seed)

    def fn(x):
        e = xnp.exp(x - x.max(axis=axis, keepdims=True))
        read = e[::-1] if reverse else e
        return read * xnp.log(e.sum(axis=axis, keepdims=True)) + e / e.sum(axis=axis,
                                                                            keepdims=True)

    _agree(fn, x)
