"""xlapy.models.lib: the ArrayLibs, the pytree helper and the shared numerics."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import xlapy
from xlapy.models import NUMPY, XLAPY, ArrayLib, jax_lib, lib


def test_tree_map_keeps_structure():
    tree = {"a": (1.0, [2.0, 3.0]), "b": {"c": 4.0}}
    other = {"a": (10.0, [20.0, 30.0]), "b": {"c": 40.0}}
    assert lib.tree_map(lambda x, y: x + y, tree, other) == {"a": (11.0, [22.0, 33.0]),
                                                             "b": {"c": 44.0}}


def test_sgd_is_p_minus_lr_g():
    params = {"w": np.ones(3, np.float32), "b": (np.zeros(2, np.float32),)}
    grads = {"w": np.full(3, 2.0, np.float32), "b": (np.ones(2, np.float32),)}
    new = lib.sgd(params, grads, 0.25)
    np.testing.assert_array_equal(new["w"], 0.5)
    np.testing.assert_array_equal(new["b"][0], -0.25)
    assert new["w"].dtype == np.float32  # a Python float learning rate keeps float32


@pytest.mark.parametrize("xp", [XLAPY, NUMPY], ids=repr)
def test_log_softmax_is_stable(xp):
    logits = np.array([[1e4, 0.0, -1e4], [-50.0, -50.0, -50.0]], np.float32)
    got = np.asarray(lib.log_softmax(logits, xp))
    assert got.dtype == np.float32 and np.all(np.isfinite(got))
    np.testing.assert_allclose(got[0], [0.0, -1e4, -2e4], rtol=1e-6)
    np.testing.assert_allclose(got[1], -math.log(3.0), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(lib.softmax(logits, xp)).sum(-1), 1.0, rtol=1e-6)


@settings(max_examples=10)
@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=3, max_side=5),
                  elements=st.floats(-30, 30, width=32)))
def test_numerics_match_xlapy_nn(x):
    """The hand-written helpers equal xlapy.nn's, for NumPy and xlapy alike."""
    pairs = [(lib.log_softmax, xlapy.nn.log_softmax), (lib.softmax, xlapy.nn.softmax),
             (lib.relu, xlapy.nn.relu), (lib.sigmoid, xlapy.nn.sigmoid),
             (lib.gelu, lambda v: xlapy.nn.gelu(v, approximate=False))]
    for ours, theirs in pairs:
        want = np.asarray(theirs(x))
        for xp in (XLAPY, NUMPY):
            got = np.asarray(ours(x, xp))
            assert got.dtype == np.float32, (ours.__name__, xp)
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-7,
                                       err_msg=f"{ours.__name__} on {xp}")


def test_numpy_erf_without_scipy(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.special", None)  # import fails
    erf = lib._numpy_erf()
    x = np.linspace(-3, 3, 13, dtype=np.float32)
    got = erf(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [math.erf(v) for v in x], rtol=1e-6, atol=1e-7)


def test_cross_entropy_and_accuracy():
    logits = np.array([[2.0, 0.0], [0.0, 3.0], [1.0, 0.0]], np.float32)
    labels = np.array([0, 1, 1])
    want = -np.mean(np.log(np.exp(logits[[0, 1, 2], labels]) / np.exp(logits).sum(-1)))
    for xp in (XLAPY, NUMPY):
        got = lib.cross_entropy(logits, lib.one_hot(labels, 2), xp)
        np.testing.assert_allclose(float(got), want, rtol=1e-6)
    assert lib.accuracy(logits, labels) == pytest.approx(2 / 3)


def test_array_libs():
    assert XLAPY.np is xlapy.numpy and XLAPY.lax is xlapy.lax and XLAPY.jit is xlapy.jit
    assert NUMPY.np is np and NUMPY.lax is None and NUMPY.value_and_grad is None
    f = NUMPY.jit(abs)
    assert f is abs
    assert repr(XLAPY) == "ArrayLib(xlapy)"
    assert isinstance(NUMPY, ArrayLib)


def test_jax_lib_without_jax(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax", None)
    jax_lib.cache_clear()
    try:
        assert jax_lib() is None
    finally:
        jax_lib.cache_clear()


def test_jax_lib_with_jax():
    jax = pytest.importorskip("jax")
    jx = jax_lib()
    assert jx.np is jax.numpy and jx.lax is jax.lax and jx.jit is jax.jit


def test_lax_signatures_agree_with_jax():
    """One call site serves both libraries: the parameters the models pass match."""
    import inspect

    jax = pytest.importorskip("jax")
    for name in ("conv_general_dilated", "reduce_window", "scan", "erf", "max"):
        ours = list(inspect.signature(getattr(xlapy.lax, name)).parameters)
        theirs = list(inspect.signature(getattr(jax.lax, name)).parameters)
        assert theirs[:len(ours)] == ours, name
