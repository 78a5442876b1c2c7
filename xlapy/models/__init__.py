"""A small model zoo, each model written once for xlapy, JAX and NumPy.

Models (one module each):
    softmax_regression  the seeds' MNIST softmax regression, logits = x·W + b
    mlp                 784 → 128 (ReLU) → 10
    lenet               LeNet-style CNN on NHWC images (conv, max pool via xp.lax)
    lstm                LSTM over rows of an image with xp.lax.scan
    encoder             BERT-style transformer encoder layer (attention, GELU, layernorm)

Shared API (params are dicts of float32 NumPy arrays, pytrees for xlapy and JAX):
    init(rng, <sizes>) -> params
    apply(params, x, xp=XLAPY) -> outputs (logits, or the encoder's activations)
    loss(params, batch, xp=XLAPY) -> scalar; batch = (inputs, one-hot labels or target)
    train_step(params, batch, lr=LR, xp=XLAPY) -> (new params, loss); plain SGD
    accuracy(params, images, labels_int, xp=XLAPY) -> float (classifiers)
softmax_regression and mlp also have numpy_train_step(params, batch, lr), the
hand-derived NumPy backpropagation; lstm has cell(params, (h, c), x_t, xp).

`xp` is an ArrayLib: XLAPY, NUMPY (forward passes only) or jax_lib() (None
without JAX). `lib.jit(model.train_step, xp, lr=...)` compiles with xp's jit.
"""

from xlapy.models import data, encoder, lenet, lib, lstm, mlp, softmax_regression
from xlapy.models.lib import NUMPY, XLAPY, ArrayLib, jax_lib

__all__ = ["ArrayLib", "NUMPY", "XLAPY", "data", "encoder", "jax_lib", "lenet", "lib", "lstm",
           "mlp", "softmax_regression"]
