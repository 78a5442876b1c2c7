"""Tiny instances of every model in xlapy.models: params and a learnable batch.

Sizes are small so the interpreter runs each step in milliseconds; the data are
Gaussian class clusters (or, for the encoder, a smooth function of the input),
so a few SGD steps visibly lower the loss.
"""

from __future__ import annotations

import numpy as np

from xlapy.models import data, encoder, lenet, lib, lstm, mlp, softmax_regression

CLASSES = 4


def _classification(rng, count, shape, scale=1.0):
    x, labels = data.clusters(rng, count, shape, CLASSES, separation=scale, noise=scale)
    return x, lib.one_hot(labels, CLASSES), labels


def softmax_regression_problem(rng, batch=16, features=12):
    return softmax_regression.init(rng, features, CLASSES), _classification(rng, batch, (features,))


def mlp_problem(rng, batch=16, features=12, hidden=8):
    return mlp.init(rng, features, hidden, CLASSES), _classification(rng, batch, (features,))


def lenet_problem(rng, batch=8, size=16):
    params = lenet.init(rng, size, channels=1, filters=(4, 6), hidden=16, classes=CLASSES)
    return params, _classification(rng, batch, (size, size, 1), scale=0.3)  # pixel-sized


def lstm_problem(rng, batch=8, steps=5, features=3, hidden=6):
    return (lstm.init(rng, features, hidden, CLASSES),
            _classification(rng, batch, (steps, features)))


def encoder_problem(rng, batch=2, seq=5, d_model=8, heads=2, ff=12):
    params = encoder.init(rng, d_model, heads, ff)
    params = lib.tree_map(lambda p: p + np.float32(0.3) * rng.standard_normal(p.shape,
                                                                               np.float32),
                          params)  # N(0, 0.02²) alone barely mixes the tokens at these sizes
    x = rng.standard_normal((batch, seq, d_model)).astype(np.float32)
    mixing = rng.standard_normal((d_model, d_model)).astype(np.float32) / np.float32(d_model)
    target = np.tanh(x @ mixing + np.roll(x, 1, axis=1))
    return params, (x, target, None)


PROBLEMS = {
    "softmax_regression": (softmax_regression, softmax_regression_problem),
    "mlp": (mlp, mlp_problem),
    "lenet": (lenet, lenet_problem),
    "lstm": (lstm, lstm_problem),
    "encoder": (encoder, encoder_problem),
}


def problem(name: str, seed: int = 0, dtype=np.float32, **sizes):
    """(module, params, batch, integer labels or None) for the named model."""
    module, make = PROBLEMS[name]
    params, (x, y, labels) = make(np.random.default_rng(seed), **sizes)
    params = lib.tree_map(lambda p: np.asarray(p, dtype), params)
    return module, params, (np.asarray(x, dtype), np.asarray(y, dtype)), labels


def assert_trees_close(got, want, rtol, atol=0.0, what=""):
    if isinstance(want, (dict, tuple, list)):
        assert type(got) is type(want), (what, type(got), type(want))
    if isinstance(want, dict):
        assert sorted(got) == sorted(want), what
        for key in want:
            assert_trees_close(got[key], want[key], rtol, atol, f"{what}[{key!r}]")
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want), what
        for i, (g, w) in enumerate(zip(got, want)):
            assert_trees_close(g, w, rtol, atol, f"{what}[{i}]")
    else:
        got, want = np.asarray(got), np.asarray(want)
        assert got.shape == want.shape, (what, got.shape, want.shape)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=what)
