"""A LeNet-style CNN on NHWC images f32[batch, 28, 28, 1].

conv 5×5 (SAME) → ReLU → 2×2 max pool → conv 5×5 (VALID) → ReLU → 2×2 max pool
→ dense → ReLU → dense. With the defaults that is LeNet-5's 6 and 16 filters:
28 → 28 → 14 → 10 → 5, so 5·5·16 = 400 features into a 120-unit layer.
Convolution and pooling come from xp.lax, so there is no NumPy peer.
"""

from __future__ import annotations

import numpy as np

from xlapy.models import lib
from xlapy.models.lib import XLAPY, ArrayLib

LR = 0.1
KERNEL = 5
DIMENSIONS = ("NHWC", "HWIO", "NHWC")


def _flat_size(size: int, filters2: int) -> int:
    after_pools = ((size // 2) - (KERNEL - 1)) // 2
    if after_pools < 1:
        raise ValueError(f"images of {size}×{size} are too small for LeNet")
    return after_pools * after_pools * filters2


def init(rng: np.random.Generator, size: int = 28, channels: int = 1, filters=(6, 16),
         hidden: int = 120, classes: int = 10):
    """Conv kernels HWIO and dense weights, He-initialised (Glorot for the logits); biases zero."""
    f1, f2 = filters
    flat = _flat_size(size, f2)

    def he(shape, fan_in):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    return {"conv1": he((KERNEL, KERNEL, channels, f1), KERNEL * KERNEL * channels),
            "conv1_b": np.zeros(f1, np.float32),
            "conv2": he((KERNEL, KERNEL, f1, f2), KERNEL * KERNEL * f1),
            "conv2_b": np.zeros(f2, np.float32),
            "w1": he((flat, hidden), flat), "b1": np.zeros(hidden, np.float32),
            "w2": he((hidden, classes), (hidden + classes) / 2),  # Glorot: unit-scale logits
            "b2": np.zeros(classes, np.float32)}


def _conv_relu_pool(x, kernel, bias, padding, xp):
    conv = xp.lax.conv_general_dilated(x, kernel, (1, 1), padding, dimension_numbers=DIMENSIONS)
    act = lib.relu(conv + bias, xp)
    return xp.lax.reduce_window(act, -np.inf, xp.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def apply(params, x, xp: ArrayLib = XLAPY):
    """Logits f32[batch, classes] for images f32[batch, size, size, channels]."""
    x = _conv_relu_pool(x, params["conv1"], params["conv1_b"], "SAME", xp)
    x = _conv_relu_pool(x, params["conv2"], params["conv2_b"], "VALID", xp)
    x = xp.np.reshape(x, (x.shape[0], -1))
    hidden = lib.relu(x @ params["w1"] + params["b1"], xp)
    return hidden @ params["w2"] + params["b2"]


loss, train_step, accuracy = lib.classifier(apply, LR)
