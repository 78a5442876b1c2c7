"""Synthetic, learnable classification data shaped like MNIST.

Gaussian clusters: each class has a random centre and samples scatter around
it, so a linear model can separate them and the loss of every model falls
within a few SGD steps. Good for tests and benchmarks that need no download.
"""

from __future__ import annotations

import numpy as np


def clusters(rng: np.random.Generator, count: int, shape=(784,), classes: int = 10,
             separation: float = 1.0, noise: float = 1.0):
    """(inputs f32[count, *shape], integer labels [count]) from `classes` clusters."""
    centres = rng.standard_normal((classes, *shape)) * separation
    labels = rng.integers(0, classes, count)
    inputs = centres[labels] + rng.standard_normal((count, *shape)) * noise
    return inputs.astype(np.float32), labels
