"""A two-layer perceptron for MNIST: 784 → hidden (ReLU) → 10.

He initialisation for the ReLU layer and Glorot for the output layer keep the
activations' scale steady, so plain SGD at LR trains it from the first step.
`numpy_train_step` is the hand-derived backpropagation: the NumPy peer.
"""

from __future__ import annotations

import numpy as np

from xlapy.models import lib
from xlapy.models.lib import XLAPY, ArrayLib

LR = 0.2


def init(rng: np.random.Generator, features: int = 784, hidden: int = 128, classes: int = 10):
    """{"w1": f32[features, hidden], "b1", "w2": f32[hidden, classes], "b2"}."""
    w1 = rng.standard_normal((features, hidden)) * np.sqrt(2.0 / features)
    w2 = rng.standard_normal((hidden, classes)) * np.sqrt(2.0 / (hidden + classes))
    return {"w1": w1.astype(np.float32), "b1": np.zeros(hidden, np.float32),
            "w2": w2.astype(np.float32), "b2": np.zeros(classes, np.float32)}


def apply(params, x, xp: ArrayLib = XLAPY):
    """Logits f32[batch, classes] for inputs f32[batch, features]."""
    hidden = lib.relu(x @ params["w1"] + params["b1"], xp)
    return hidden @ params["w2"] + params["b2"]


loss, train_step, accuracy = lib.classifier(apply, LR)


def numpy_train_step(params, batch, lr: float = LR):
    """train_step in NumPy with backpropagation written out layer by layer."""
    x, labels = batch
    pre = x @ params["w1"] + params["b1"]
    hidden = np.maximum(pre, 0.0)
    log_probs = lib.log_softmax(hidden @ params["w2"] + params["b2"], lib.NUMPY)
    value = -np.mean(np.sum(labels * log_probs, axis=-1))
    d_logits = (np.exp(log_probs) - labels) / x.shape[0]
    d_pre = (d_logits @ params["w2"].T) * (pre > 0)
    grads = {"w1": x.T @ d_pre, "b1": d_pre.sum(axis=0),
             "w2": hidden.T @ d_logits, "b2": d_logits.sum(axis=0)}
    return lib.sgd(params, grads, lr), value
