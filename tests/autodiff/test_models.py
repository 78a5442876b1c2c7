"""Gradients of whole models, against backpropagation derived by hand in NumPy
(models_numpy.py) and, where JAX is installed, against jax.grad; and the
seeds' MNIST softmax regression trained by SGD under jit.

Each model is written once over a namespace of (numpy, lax, nn) so the xlapy
and JAX versions are the same code.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlapy
import xlapy.numpy as xnp
from tests.autodiff import models_numpy as ref

XLAPY = SimpleNamespace(np=xnp, lax=xlapy.lax, nn=xlapy.nn)


# -- the models, over ops = (np, lax, nn) ---------------------------------------------------

def cross_entropy(ops, logits, labels):
    """Mean softmax cross-entropy with one-hot labels, as the seeds' MNIST loss."""
    return -ops.np.sum(ops.nn.log_softmax(logits) * labels) / logits.shape[0]


def softmax_regression(ops, params, x, labels):
    w, b = params
    return cross_entropy(ops, x @ w + b, labels)


def mlp(ops, params, x, labels):
    w1, b1, w2, b2 = params
    hidden = ops.nn.relu(x @ w1 + b1)
    return cross_entropy(ops, hidden @ w2 + b2, labels)


def cnn(ops, params, x, labels):
    kernel, conv_b, w, b = params
    conv = ops.lax.conv_general_dilated(x, kernel, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    act = ops.nn.relu(conv + conv_b)
    pooled = ops.lax.reduce_window(act, -np.inf, ops.lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                                   "VALID")
    flat = ops.np.reshape(pooled, (pooled.shape[0], -1))
    return cross_entropy(ops, flat @ w + b, labels)


def _split_heads(ops, t, heads):
    b, s, d = t.shape
    return ops.np.transpose(ops.np.reshape(t, (b, s, heads, d // heads)), (0, 2, 1, 3))


def attention(ops, params, x, target, heads=2):
    """Residual multi-head self-attention; mean ½‖y - target‖² per position."""
    wq, wk, wv, wo, bo = params
    q, k, v = (_split_heads(ops, x @ w, heads) for w in (wq, wk, wv))
    scores = q @ ops.np.swapaxes(k, -1, -2) * q.shape[-1] ** -0.5  # a weak Python float
    mixed = ops.nn.softmax(scores, axis=-1) @ v
    mixed = ops.np.reshape(ops.np.transpose(mixed, (0, 2, 1, 3)), x.shape)
    y = x + mixed @ wo + bo
    return 0.5 * ops.np.sum((y - target) ** 2) / (x.shape[0] * x.shape[1])


def lstm(ops, params, xs, labels, output_penalty=0.0):
    """An LSTM over xs (steps, batch, features) with lax.scan; cross-entropy
    on the final hidden state, plus output_penalty·½‖h_t‖² averaged over
    every step's output."""
    wx, wh, b, wy, by = params
    zeros = ops.np.zeros((xs.shape[1], wh.shape[0]), xs.dtype)

    def step(carry, x):
        h, c = carry
        zi, zf, zg, zo = ops.np.split(x @ wx + h @ wh + b, 4, axis=-1)
        c = ops.nn.sigmoid(zf) * c + ops.nn.sigmoid(zi) * ops.np.tanh(zg)
        h = ops.nn.sigmoid(zo) * ops.np.tanh(c)
        return (h, c), h

    (h, _), outputs = ops.lax.scan(step, (zeros, zeros), xs)
    loss = cross_entropy(ops, h @ wy + by, labels)
    if output_penalty:
        count = xs.shape[0] * xs.shape[1]
        loss = loss + output_penalty * 0.5 * ops.np.sum(outputs ** 2) / count
    return loss


# -- problems: parameters and data, with the hand-derived reference --------------------------

def _one_hot(rng, batch, classes):
    return np.eye(classes)[rng.integers(0, classes, batch)]


def _normal(rng, shape, scale=1.0):
    return rng.standard_normal(shape) * scale


def softmax_regression_problem(rng, batch=6, features=12, classes=5):
    params = (_normal(rng, (features, classes), 0.3), _normal(rng, (classes,), 0.1))
    return params, (_normal(rng, (batch, features)), _one_hot(rng, batch, classes))


def mlp_problem(rng, batch=6, features=10, hidden=8, classes=4):
    params = (_normal(rng, (features, hidden), 0.4), _normal(rng, (hidden,), 0.1),
              _normal(rng, (hidden, classes), 0.4), _normal(rng, (classes,), 0.1))
    return params, (_normal(rng, (batch, features)), _one_hot(rng, batch, classes))


def cnn_problem(rng, batch=2, size=6, channels=2, filters=3, classes=4, kernel=3):
    pooled = (size // 2) ** 2 * filters
    params = (_normal(rng, (kernel, kernel, channels, filters), 0.4), _normal(rng, (filters,), 0.1),
              _normal(rng, (pooled, classes), 0.3), _normal(rng, (classes,), 0.1))
    return params, (_normal(rng, (batch, size, size, channels)), _one_hot(rng, batch, classes))


def attention_problem(rng, batch=2, seq=4, dim=6):
    params = tuple(_normal(rng, (dim, dim), 0.4) for _ in range(4)) + (_normal(rng, (dim,), 0.1),)
    return params, (_normal(rng, (batch, seq, dim)), _normal(rng, (batch, seq, dim)))


def lstm_problem(rng, steps=8, batch=3, features=4, hidden=5, classes=3):
    params = (_normal(rng, (features, 4 * hidden), 0.4), _normal(rng, (hidden, 4 * hidden), 0.4),
              _normal(rng, (4 * hidden,), 0.1), _normal(rng, (hidden, classes), 0.5),
              _normal(rng, (classes,), 0.1))
    return params, (_normal(rng, (steps, batch, features)), _one_hot(rng, batch, classes))


MODELS = {
    "softmax_regression": (softmax_regression, softmax_regression_problem,
                           ref.softmax_regression_grads),
    "mlp": (mlp, mlp_problem, ref.mlp_grads),
    "cnn": (cnn, cnn_problem, ref.cnn_grads),
    "attention": (attention, attention_problem,
                  functools.partial(ref.attention_grads, heads=2)),
    "lstm": (lstm, lstm_problem, ref.lstm_grads),
    "lstm_all_outputs": (functools.partial(lstm, output_penalty=0.7), lstm_problem,
                         functools.partial(ref.lstm_grads, output_penalty=0.7)),
}


def _problem(name, seed=0, dtype=np.float64):
    model, make, reference = MODELS[name]
    params, data = make(np.random.default_rng(seed))
    params = tuple(np.asarray(p, dtype) for p in params)
    data = tuple(np.asarray(d, dtype) for d in data)
    return model, params, data, reference


def _assert_grads_close(got, want, rtol, atol, what):
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert tuple(np.shape(g)) == w.shape, f"{what}: gradient {i} has shape {np.shape(g)}"
        np.testing.assert_allclose(np.asarray(g, np.float64), w, rtol=rtol, atol=atol,
                                   err_msg=f"{what}: gradient {i}")


# -- against hand-derived NumPy backpropagation -----------------------------------------------

@pytest.mark.parametrize("name", list(MODELS))
def test_grad_matches_numpy(name):
    model, params, data, reference = _problem(name)
    want_loss, want = reference(params, *data)
    loss_fn = functools.partial(model, XLAPY)
    value, grads = xlapy.value_and_grad(loss_fn)(params, *data)
    np.testing.assert_allclose(float(value), want_loss, rtol=1e-10)
    _assert_grads_close(grads, want, 1e-6, 1e-10, f"eager grad({name})")
    jitted = xlapy.jit(xlapy.grad(loss_fn))(params, *data)
    _assert_grads_close(jitted, want, 1e-6, 1e-10, f"jit(grad({name}))")
    for g, e in zip(jitted, grads):
        assert np.asarray(g).dtype == np.float64
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", list(MODELS))
def test_grad_float32(name):
    """float32 in, float32 gradients out, close to the float64 derivation."""
    model, params, data, reference = _problem(name, seed=1, dtype=np.float32)
    _, want = reference(*[tuple(np.asarray(a, np.float64) for a in params)],
                        *[np.asarray(d, np.float64) for d in data])
    grads = xlapy.jit(xlapy.grad(functools.partial(model, XLAPY)))(params, *data)
    for g in grads:
        assert np.asarray(g).dtype == np.float32
    _assert_grads_close(grads, want, 2e-4, 2e-5, f"float32 jit(grad({name}))")


def test_softmax_regression_at_mnist_shapes():
    """The seeds' example at its own sizes: 784 pixels, 10 classes, batch 128, float32."""
    rng = np.random.default_rng(3)
    params = (np.float32(0.01) * rng.standard_normal((784, 10), np.float32),
              np.zeros(10, np.float32))
    x = rng.random((128, 784), np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]
    _, want = ref.softmax_regression_grads(tuple(p.astype(np.float64) for p in params),
                                           x.astype(np.float64), labels.astype(np.float64))
    grads = xlapy.jit(xlapy.grad(functools.partial(softmax_regression, XLAPY)))(params, x, labels)
    _assert_grads_close(grads, want, 1e-4, 1e-6, "jit(grad(softmax_regression)) at MNIST sizes")


@settings(max_examples=6)
@given(batch=st.integers(1, 5), features=st.integers(1, 7), hidden=st.integers(1, 6),
       classes=st.integers(2, 5), seed=st.integers(0, 2 ** 16))
def test_mlp_random_shapes(batch, features, hidden, classes, seed):
    params, data = mlp_problem(np.random.default_rng(seed), batch, features, hidden, classes)
    _, want = ref.mlp_grads(params, *data)
    grads = xlapy.grad(functools.partial(mlp, XLAPY))(params, *data)
    _assert_grads_close(grads, want, 1e-6, 1e-10, "grad(mlp)")


@settings(max_examples=4)
@given(batch=st.integers(1, 3), size=st.sampled_from([2, 4, 6]), channels=st.integers(1, 3),
       filters=st.integers(1, 3), kernel=st.integers(1, 4), seed=st.integers(0, 2 ** 16))
def test_cnn_random_shapes(batch, size, channels, filters, kernel, seed):
    """Odd and even kernels (SAME pads an even one more on the high side)."""
    params, data = cnn_problem(np.random.default_rng(seed), batch, size, channels, filters,
                               3, kernel)
    _, want = ref.cnn_grads(params, *data)
    grads = xlapy.grad(functools.partial(cnn, XLAPY))(params, *data)
    _assert_grads_close(grads, want, 1e-6, 1e-10, "grad(cnn)")


# -- against jax.grad, where JAX is installed -------------------------------------------------

@pytest.fixture(scope="module")
def jax_ops():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, SimpleNamespace(np=jax.numpy, lax=jax.lax, nn=jax.nn)


@pytest.mark.parametrize("name", list(MODELS))
def test_grad_matches_jax(name, jax_ops):
    jax, ops = jax_ops
    model, params, data, _ = _problem(name, seed=2)
    want = jax.grad(functools.partial(model, ops))(params, *data)
    got = xlapy.jit(xlapy.grad(functools.partial(model, XLAPY)))(params, *data)
    _assert_grads_close(got, [np.asarray(w) for w in want], 1e-9, 1e-12,
                        f"jit(grad({name})) against jax.grad")


# -- SGD training: the seeds' MNIST softmax regression on separable clusters -------------------

def _clusters(rng, count=1000, features=64, classes=10):
    """Ten Gaussian clusters in 64 dimensions, far enough apart to separate."""
    centres = rng.standard_normal((classes, features)) * 0.5
    labels = rng.integers(0, classes, count)
    x = centres[labels] + rng.standard_normal((count, features))
    return x.astype(np.float32), np.eye(classes, dtype=np.float32)[labels]


def _accuracy(params, x, labels):
    w, b = (np.asarray(p) for p in params)
    return float(np.mean(np.argmax(x @ w + b, axis=1) == np.argmax(labels, axis=1)))


def test_sgd_trains_softmax_regression():
    x, labels = _clusters(np.random.default_rng(0))
    loss_fn = functools.partial(softmax_regression, XLAPY)

    @xlapy.jit
    def step(params, x, labels):
        grads = xlapy.grad(loss_fn)(params, x, labels)
        return tuple(p - 0.5 * g for p, g in zip(params, grads))

    params = (np.zeros((64, 10), np.float32), np.zeros(10, np.float32))
    loss0, acc0 = float(loss_fn(params, x, labels)), _accuracy(params, x, labels)
    for i in range(100):
        batch = slice(100 * (i % 10), 100 * (i % 10 + 1))
        params = step(params, x[batch], labels[batch])
    assert all(np.asarray(p).dtype == np.float32 for p in params)
    loss1, acc1 = float(loss_fn(params, x, labels)), _accuracy(params, x, labels)
    assert acc0 < 0.2, acc0
    assert acc1 > 0.9, acc1
    assert loss1 < loss0 / 10, (loss0, loss1)
