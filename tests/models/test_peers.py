"""The benchmark peers compute what xlapy computes: the hand-written NumPy steps,
the NUMPY forward passes and, where JAX is installed, the same model code under
jax.jit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.models.problems import PROBLEMS, assert_trees_close, problem
from xlapy import config
from xlapy.models import NUMPY, XLAPY, encoder, jax_lib, lib, lstm, mlp, softmax_regression

MODELS = list(PROBLEMS)


# -- hand-written NumPy backpropagation ----------------------------------------------------

@settings(max_examples=8)
@given(name=st.sampled_from(["softmax_regression", "mlp"]), batch=st.integers(1, 9),
       features=st.integers(1, 9), seed=st.integers(0, 2 ** 16))
def test_numpy_train_step_matches(name, batch, features, seed):
    module, params, data, _ = problem(name, seed, batch=batch, features=features)
    if name == "softmax_regression":  # from zeros every gradient is symmetric: perturb first
        params = lib.tree_map(lambda p: p + np.float32(0.1), params)
    want_params, want_loss = module.train_step(params, data, lr=0.3)
    got_params, got_loss = module.numpy_train_step(params, data, lr=0.3)
    assert all(p.dtype == np.float32 for p in got_params.values())
    np.testing.assert_allclose(got_loss, float(want_loss), rtol=1e-5)
    assert_trees_close(got_params, want_params, rtol=1e-5, atol=1e-6, what=name)


@pytest.mark.parametrize("module", [softmax_regression, mlp])
def test_numpy_train_step_float64(module):
    """In float64 (with x64) the hand derivation and xlapy's autodiff agree to rounding."""
    _, params, data, _ = problem(module.__name__.rsplit(".", 1)[1], seed=3, dtype=np.float64)
    with config.enable_x64(True):
        want_params, want_loss = module.train_step(params, data)
    got_params, got_loss = module.numpy_train_step(params, data)
    np.testing.assert_allclose(got_loss, float(want_loss), rtol=1e-12)
    assert_trees_close(got_params, want_params, rtol=1e-10, atol=1e-13)


def test_numpy_cannot_train_through_train_step():
    _, params, data, _ = problem("mlp")
    with pytest.raises(ValueError, match="numpy_train_step"):
        mlp.train_step(params, data, xp=NUMPY)


# -- NumPy forward passes --------------------------------------------------------------------

@pytest.mark.parametrize("name", ["softmax_regression", "mlp", "encoder"])
def test_numpy_forward_matches(name):
    module, params, (x, y), _ = problem(name, seed=4)
    got = module.apply(params, x, NUMPY)
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    np.testing.assert_allclose(got, np.asarray(module.apply(params, x)), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(module.loss(params, (x, y), NUMPY),
                               float(module.loss(params, (x, y))), rtol=1e-5)


@settings(max_examples=6)
@given(batch=st.integers(1, 3), seq=st.integers(1, 6), heads=st.integers(1, 3),
       head_dim=st.integers(1, 4), ff=st.integers(1, 6), seed=st.integers(0, 2 ** 16))
def test_numpy_encoder_random_shapes(batch, seq, heads, head_dim, ff, seed):
    _, params, (x, _), _ = problem("encoder", seed, batch=batch, seq=seq,
                                   d_model=heads * head_dim, heads=heads, ff=ff)
    np.testing.assert_allclose(encoder.apply(params, x, NUMPY),
                               np.asarray(encoder.apply(params, x)), rtol=1e-4, atol=1e-5)


def test_numpy_lstm_cell_matches():
    """One step in NumPy equals xlapy's, and unrolling it in NumPy equals the scan."""
    _, params, (x, _), _ = problem("lstm", seed=5)
    carry = lstm.initial_carry(params, x.shape[0], xp=NUMPY)
    for t in range(x.shape[1]):
        want = lstm.cell(params, carry, x[:, t], XLAPY)
        carry = lstm.cell(params, carry, x[:, t], NUMPY)
        assert all(isinstance(c, np.ndarray) and c.dtype == np.float32 for c in carry)
        assert_trees_close(carry, tuple(np.asarray(w) for w in want), rtol=1e-5, atol=1e-6)
    logits = carry[0] @ params["wy"] + params["by"]
    np.testing.assert_allclose(logits, np.asarray(lstm.apply(params, x)), rtol=1e-5, atol=1e-5)


# -- JAX runs the same code ------------------------------------------------------------------

@pytest.fixture(scope="module")
def jax_xp():
    pytest.importorskip("jax")
    return jax_lib()


@pytest.mark.parametrize("name", MODELS)
def test_jax_train_step_matches(name, jax_xp):
    module, params, data, _ = problem(name, seed=6)
    want_params, want_loss = lib.jit(module.train_step, XLAPY)(params, data)
    got_params, got_loss = lib.jit(module.train_step, jax_xp)(params, data)
    np.testing.assert_allclose(float(got_loss), float(want_loss), rtol=1e-5)
    got_params = lib.tree_map(np.asarray, got_params)
    assert all(p.dtype == np.float32 for p in got_params.values())
    assert_trees_close(got_params, want_params, rtol=1e-4, atol=1e-5, what=name)


@pytest.mark.parametrize("name", MODELS)
def test_jax_forward_matches(name, jax_xp):
    module, params, (x, _), _ = problem(name, seed=7)
    got = np.asarray(jax_xp.jit(module.apply, static_argnums=2)(params, x, jax_xp))
    np.testing.assert_allclose(got, np.asarray(module.apply(params, x)), rtol=1e-4, atol=1e-5)


def test_jax_lstm_cell_matches(jax_xp):
    _, params, (x, _), _ = problem("lstm", seed=8)
    carry = lstm.initial_carry(params, x.shape[0], xp=NUMPY)
    want = lstm.cell(params, carry, x[:, 0], XLAPY)
    got = lstm.cell(params, carry, x[:, 0], jax_xp)
    assert_trees_close(tuple(np.asarray(g) for g in got), tuple(np.asarray(w) for w in want),
                       rtol=1e-5, atol=1e-6)
