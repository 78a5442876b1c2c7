"""Every model in xlapy.models: shapes, jit against eager, SGD lowering the loss,
and gradients against central finite differences in float64."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlapy
from tests.models.problems import PROBLEMS, assert_trees_close, problem
from xlapy import config
from xlapy.models import XLAPY, encoder, lenet, lib, lstm, mlp, softmax_regression

MODELS = list(PROBLEMS)
CLASSIFIERS = [name for name in MODELS if name != "encoder"]


def _is_f32(tree) -> bool:
    leaves = []
    lib.tree_map(leaves.append, tree)
    return all(np.asarray(leaf).dtype == np.float32 for leaf in leaves)


# -- shapes --------------------------------------------------------------------------------

def test_default_sizes():
    """The documented defaults: MNIST-shaped classifiers, a BERT-base-like encoder slice."""
    rng = np.random.default_rng(0)
    shapes = {name: {k: v.shape for k, v in module.init(rng).items()}
              for name, (module, _) in PROBLEMS.items()}
    assert shapes["softmax_regression"] == {"w": (784, 10), "b": (10,)}
    assert shapes["mlp"] == {"w1": (784, 128), "b1": (128,), "w2": (128, 10), "b2": (10,)}
    assert shapes["lenet"]["conv1"] == (5, 5, 1, 6)
    assert shapes["lenet"]["conv2"] == (5, 5, 6, 16)
    assert shapes["lenet"]["w1"] == (400, 120) and shapes["lenet"]["w2"] == (120, 10)
    assert shapes["lstm"]["wx"] == (28, 512) and shapes["lstm"]["wh"] == (128, 512)
    assert shapes["encoder"]["wq"] == (256, 4, 64) and shapes["encoder"]["wo"] == (4, 64, 256)
    assert shapes["encoder"]["w1"] == (256, 1024)
    for name, (module, _) in PROBLEMS.items():
        assert _is_f32(module.init(rng)), name


@pytest.mark.parametrize("name", MODELS)
def test_output_shapes(name):
    module, params, (x, y), _ = problem(name)
    out = module.apply(params, x)
    assert out.shape == (y.shape if name == "encoder" else (x.shape[0], y.shape[1]))
    assert np.asarray(out).dtype == np.float32
    value = module.loss(params, (x, y))
    assert np.shape(value) == () and np.asarray(value).dtype == np.float32


def test_mnist_shapes():
    """Each classifier at MNIST's own input shapes, batch 2."""
    rng = np.random.default_rng(0)
    flat = rng.random((2, 784), np.float32)
    for module, x in ((softmax_regression, flat), (mlp, flat), (lstm, flat),
                      (lenet, flat.reshape(2, 28, 28, 1))):
        assert module.apply(module.init(rng), x).shape == (2, 10), module.__name__


def test_encoder_default_shape():
    params = encoder.init(np.random.default_rng(0))
    x = np.random.default_rng(1).standard_normal((1, 128, 256)).astype(np.float32)
    out = np.asarray(encoder.apply(params, x))
    assert out.shape == (1, 128, 256) and out.dtype == np.float32
    # post-layernorm output: each position has mean 0 and variance 1 (gamma 1, beta 0)
    np.testing.assert_allclose(out.mean(-1), 0.0, atol=1e-5)
    np.testing.assert_allclose(out.var(-1), 1.0, rtol=1e-4)


@settings(max_examples=6)
@given(size=st.integers(12, 20), batch=st.integers(1, 3), f1=st.integers(1, 3),
       f2=st.integers(1, 3), seed=st.integers(0, 2 ** 16))
def test_lenet_image_sizes(size, batch, f1, f2, seed):
    """Any image at least 12 pixels wide: the flattened size follows the pools."""
    rng = np.random.default_rng(seed)
    params = lenet.init(rng, size, channels=2, filters=(f1, f2), hidden=5, classes=3)
    x = rng.standard_normal((batch, size, size, 2)).astype(np.float32)
    assert lenet.apply(params, x).shape == (batch, 3)


def test_lenet_rejects_small_images():
    with pytest.raises(ValueError, match="too small"):
        lenet.init(np.random.default_rng(0), size=10)


def test_encoder_rejects_uneven_heads():
    with pytest.raises(ValueError, match="multiple of heads"):
        encoder.init(np.random.default_rng(0), d_model=10, heads=4)


# -- jit against eager, and training --------------------------------------------------------

@pytest.mark.parametrize("name", MODELS)
def test_jit_matches_eager(name, monkeypatch):
    """The compiled step (on the CPU backend, as the demo and benchmarks run it) equals the
    op-by-op step (on the interpreter, the oracle)."""
    module, params, batch, _ = problem(name)
    eager_params, eager_loss = module.train_step(params, batch)
    monkeypatch.setenv("XLAPY_DEFAULT_BACKEND", "cpu")
    jit_params, jit_loss = lib.jit(module.train_step, XLAPY)(params, batch)
    assert _is_f32(jit_params) and _is_f32(eager_params)
    np.testing.assert_allclose(float(jit_loss), float(eager_loss), rtol=1e-5)
    assert_trees_close(jit_params, eager_params, rtol=1e-5, atol=1e-6, what=name)


@pytest.mark.parametrize("name", MODELS)
def test_sgd_lowers_loss(name, monkeypatch):
    monkeypatch.setenv("XLAPY_DEFAULT_BACKEND", "cpu")
    module, params, batch, labels = problem(name)
    step = lib.jit(module.train_step, XLAPY)
    losses = []
    for _ in range(30):
        params, value = step(params, batch)
        losses.append(float(value))
    final = float(module.loss(params, batch))
    assert all(np.isfinite(losses)), losses
    assert final < 0.5 * losses[0], (losses[0], final)
    if labels is not None:
        assert module.accuracy(params, batch[0], labels) >= 0.9


# -- gradients against finite differences in float64 ----------------------------------------

def _directional_check(module, params, batch, seed=0, eps=1e-6):
    """⟨grad, v⟩ against (L(p + εv) - L(p - εv)) / 2ε, one random direction per leaf,
    in float64 (so with x64)."""
    with config.enable_x64(True):
        _directional_check_x64(module, params, batch, seed, eps)


def _directional_check_x64(module, params, batch, seed, eps):
    grads = xlapy.grad(module.loss)(params, batch)
    assert sorted(grads) == sorted(params)
    rng = np.random.default_rng(seed)
    for key, leaf in params.items():
        g = np.asarray(grads[key])
        assert g.dtype == np.float64 and g.shape == leaf.shape, key
        v = rng.standard_normal(leaf.shape)
        shifted = [dict(params, **{key: leaf + sign * eps * v}) for sign in (1.0, -1.0)]
        plus, minus = (float(module.loss(p, batch)) for p in shifted)
        numeric = (plus - minus) / (2 * eps)
        np.testing.assert_allclose(np.sum(g * v), numeric, rtol=1e-6, atol=1e-9, err_msg=key)


@pytest.mark.parametrize("name", MODELS)
def test_grad_matches_finite_differences(name):
    module, params, batch, _ = problem(name, seed=1, dtype=np.float64)
    _directional_check(module, params, batch)


@settings(max_examples=5)
@given(batch=st.integers(1, 4), steps=st.integers(1, 4), features=st.integers(1, 4),
       hidden=st.integers(1, 4), seed=st.integers(0, 2 ** 16))
def test_lstm_grad_random_shapes(batch, steps, features, hidden, seed):
    module, params, data, _ = problem("lstm", seed, np.float64, batch=batch, steps=steps,
                                      features=features, hidden=hidden)
    _directional_check(module, params, data, seed)


@settings(max_examples=5)
@given(batch=st.integers(1, 3), seq=st.integers(1, 4), heads=st.integers(1, 3),
       head_dim=st.integers(1, 3), seed=st.integers(0, 2 ** 16))
def test_encoder_grad_random_shapes(batch, seq, heads, head_dim, seed):
    module, params, data, _ = problem("encoder", seed, np.float64, batch=batch, seq=seq,
                                      d_model=heads * head_dim, heads=heads, ff=3)
    _directional_check(module, params, data, seed)
