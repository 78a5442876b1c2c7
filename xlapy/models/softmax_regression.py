"""Softmax regression, the seeds' mnist_softmax_xla: logits = x·W + b.

Parameters start at zero as in TensorFlow's MNIST tutorial (the loss is convex,
so symmetry does no harm). `numpy_train_step` is the same SGD step with the
gradient derived by hand: the op-by-op NumPy peer for benchmarks.
"""

from __future__ import annotations

import numpy as np

from xlapy.models import lib
from xlapy.models.lib import XLAPY, ArrayLib

LR = 0.5


def init(rng: np.random.Generator | None = None, features: int = 784, classes: int = 10):
    """{"w": f32[features, classes], "b": f32[classes]}, all zeros (rng is unused)."""
    return {"w": np.zeros((features, classes), np.float32), "b": np.zeros(classes, np.float32)}


def apply(params, x, xp: ArrayLib = XLAPY):
    """Logits f32[batch, classes] for inputs f32[batch, features]."""
    return x @ params["w"] + params["b"]


loss, train_step, accuracy = lib.classifier(apply, LR)


def numpy_train_step(params, batch, lr: float = LR):
    """train_step in NumPy with the gradient written out: d loss/d logits = (p - y)/batch."""
    x, labels = batch
    log_probs = lib.log_softmax(apply(params, x, lib.NUMPY), lib.NUMPY)
    value = -np.mean(np.sum(labels * log_probs, axis=-1))
    d_logits = (np.exp(log_probs) - labels) / x.shape[0]
    grads = {"w": x.T @ d_logits, "b": d_logits.sum(axis=0)}
    return lib.sgd(params, grads, lr), value
