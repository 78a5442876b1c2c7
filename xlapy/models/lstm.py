"""An LSTM classifier over a sequence, scanned with xp.lax.scan.

Row-by-row MNIST by default: an image is 28 steps of 28 pixels, and the last
hidden state (128 units) is classified by a dense layer. The four gates share
one matrix product per step, packed [input, forget, cell, output]. `cell` is
one step on its own, plain enough for NumPy: the benchmarks time it.
"""

from __future__ import annotations

import numpy as np

from xlapy.models import lib
from xlapy.models.lib import XLAPY, ArrayLib

LR = 0.5


def init(rng: np.random.Generator, features: int = 28, hidden: int = 128, classes: int = 10):
    """{"wx": f32[features, 4h], "wh": f32[h, 4h], "b": f32[4h], "wy": f32[h, classes], "by"}.

    Glorot-scaled weights; the forget gate's bias starts at 1 so memory is kept
    early in training (Jozefowicz et al., 2015).
    """
    def glorot(shape):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / sum(shape))).astype(np.float32)

    bias = np.zeros(4 * hidden, np.float32)
    bias[hidden:2 * hidden] = 1.0
    return {"wx": glorot((features, 4 * hidden)), "wh": glorot((hidden, 4 * hidden)),
            "b": bias, "wy": glorot((hidden, classes)), "by": np.zeros(classes, np.float32)}


def cell(params, carry, x_t, xp: ArrayLib = XLAPY):
    """One step: carry (h, c) f32[batch, hidden] and x_t f32[batch, features] → new (h, c)."""
    h, c = carry
    gates = x_t @ params["wx"] + h @ params["wh"] + params["b"]
    i, f, g, o = xp.np.split(gates, 4, axis=-1)
    c = lib.sigmoid(f, xp) * c + lib.sigmoid(i, xp) * xp.np.tanh(g)
    h = lib.sigmoid(o, xp) * xp.np.tanh(c)
    return h, c


def initial_carry(params, batch: int, dtype=np.float32, xp: ArrayLib = XLAPY):
    hidden = params["wh"].shape[0]
    zeros = xp.np.zeros((batch, hidden), dtype)
    return zeros, zeros


def apply(params, x, xp: ArrayLib = XLAPY):
    """Logits f32[batch, classes] for x f32[batch, steps, features] (or anything that
    reshapes to it, such as flat or NHWC MNIST images)."""
    x = xp.np.reshape(x, (x.shape[0], -1, params["wx"].shape[0]))
    steps = xp.np.swapaxes(x, 0, 1)  # scan runs over the leading axis

    def step(carry, x_t):
        carry = cell(params, carry, x_t, xp)
        return carry, None

    (h, _), _ = xp.lax.scan(step, initial_carry(params, x.shape[0], x.dtype, xp), steps)
    return h @ params["wy"] + params["by"]


loss, train_step, accuracy = lib.classifier(apply, LR)
