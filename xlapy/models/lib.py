"""The array library a model runs on, and the numerics every model shares.

Each model is written once against an `ArrayLib`, so the same source runs as
eager xlapy, under `xlapy.jit`, under `jax.jit` (the benchmark peer) and, for
forward passes, as plain NumPy. `xlapy.lax` mirrors `jax.lax`'s signatures for
everything the models use (conv_general_dilated, reduce_window, scan, erf), so
no model branches on the library; a difference would be papered over here.

The shared helpers below use only `xp.np` (no `nn` module: NumPy has none), and
Python floats for constants, which are weakly typed in xlapy and JAX and keep
float32 models float32 (a NumPy scalar such as np.sqrt(2.0) would not).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import numpy as np

import xlapy
import xlapy.lax
import xlapy.numpy


@dataclass(frozen=True)
class ArrayLib:
    """A numpy-like namespace plus the few extras the models need.

    `lax` is None for NumPy (no convolution or scan there); `value_and_grad`
    is None where the library cannot differentiate; `jit` compiles a function
    (the identity for NumPy).
    """

    name: str
    np: ModuleType
    lax: ModuleType | None
    erf: Callable
    value_and_grad: Callable | None
    jit: Callable = lambda f: f

    def __repr__(self) -> str:
        return f"ArrayLib({self.name})"


def _numpy_erf() -> Callable:
    try:
        from scipy.special import erf  # optional: SciPy, for the NumPy peer
    except ImportError:  # scipy is a test extra; fall back to math.erf per element
        vector_erf = np.vectorize(math.erf, otypes=[np.float64])

        def erf(x):
            x = np.asarray(x)
            return vector_erf(x).astype(x.dtype if x.dtype.kind == "f" else np.float64)
    return erf


XLAPY = ArrayLib("xlapy", xlapy.numpy, xlapy.lax, xlapy.lax.erf, xlapy.value_and_grad,
                 xlapy.jit)
NUMPY = ArrayLib("numpy", np, None, _numpy_erf(), None)


@functools.cache
def jax_lib() -> ArrayLib | None:
    """JAX as an ArrayLib, or None where JAX is not installed (imported lazily)."""
    try:
        import jax  # optional: JAX, the benchmark peer
    except ImportError:
        return None
    return ArrayLib("jax", jax.numpy, jax.lax, jax.lax.erf, jax.value_and_grad, jax.jit)


def jit(fn: Callable, xp: ArrayLib = XLAPY, **static) -> Callable:
    """`fn` with `xp` and any hyperparameters (lr=...) bound, compiled by `xp.jit`:
    e.g. `jit(mlp.train_step, jax_lib(), lr=0.1)(params, batch)`."""
    return xp.jit(functools.partial(fn, xp=xp, **static))


# -- pytrees: params are tuples, lists or dicts of arrays ------------------------------------

def tree_map(fn: Callable, tree, *rest):
    """Apply fn leaf by leaf over trees of the same structure (tuples, lists, dicts)."""
    if isinstance(tree, dict):
        return {k: tree_map(fn, v, *(r[k] for r in rest)) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return type(tree)(tree_map(fn, *leaves) for leaves in zip(tree, *rest))
    return fn(tree, *rest)


def sgd(params, grads, lr: float):
    """One plain SGD update, p - lr·g, leaf by leaf."""
    return tree_map(lambda p, g: p - lr * g, params, grads)


def sgd_step(loss: Callable, params, batch, lr: float, xp: ArrayLib):
    """(params after one SGD step on loss(params, batch, xp), the loss before it)."""
    if xp.value_and_grad is None:
        raise ValueError(f"{xp.name} cannot differentiate; use the model's numpy_train_step")
    value, grads = xp.value_and_grad(functools.partial(loss, xp=xp))(params, batch)
    return sgd(params, grads, lr), value


def classifier(apply: Callable, default_lr: float):
    """(loss, train_step, accuracy) of a classifier whose `apply(params, x, xp)`
    gives logits: mean softmax cross-entropy against one-hot labels, one SGD
    step, and the fraction of argmaxes equal to integer labels."""
    def loss(params, batch, xp: ArrayLib = XLAPY):
        """Mean cross-entropy; batch = (inputs, one-hot labels)."""
        x, labels = batch
        return cross_entropy(apply(params, x, xp), labels, xp)

    def train_step(params, batch, lr: float = default_lr, xp: ArrayLib = XLAPY):
        """(params after one SGD step, loss before it)."""
        return sgd_step(loss, params, batch, lr, xp)

    def fraction_correct(params, images, labels_int, xp: ArrayLib = XLAPY) -> float:
        """Fraction of `images` whose largest logit is at their label."""
        return accuracy(apply(params, images, xp), labels_int)

    return loss, train_step, fraction_correct


# -- numerics written with xp.np only -------------------------------------------------------

def log_softmax(logits, xp: ArrayLib, axis: int = -1):
    """log softmax, shifted by the maximum so exp cannot overflow."""
    shifted = logits - xp.np.max(logits, axis=axis, keepdims=True)
    return shifted - xp.np.log(xp.np.sum(xp.np.exp(shifted), axis=axis, keepdims=True))


def softmax(logits, xp: ArrayLib, axis: int = -1):
    shifted = xp.np.exp(logits - xp.np.max(logits, axis=axis, keepdims=True))
    return shifted / xp.np.sum(shifted, axis=axis, keepdims=True)


def cross_entropy(logits, one_hot, xp: ArrayLib):
    """Mean softmax cross-entropy of [batch, classes] logits against one-hot labels."""
    return -xp.np.mean(xp.np.sum(one_hot * log_softmax(logits, xp), axis=-1))


def relu(x, xp: ArrayLib):
    return xp.np.maximum(x, 0.0)


def sigmoid(x, xp: ArrayLib):
    """The logistic function as tanh, which is stable at both ends for every library."""
    return 0.5 * xp.np.tanh(0.5 * x) + 0.5


def gelu(x, xp: ArrayLib):
    """Exact GELU, x·Φ(x) with erf, as BERT uses."""
    return 0.5 * x * (1.0 + xp.erf(x * 0.7071067811865476))


def accuracy(logits, labels) -> float:
    """Fraction of rows whose largest logit is at the integer label."""
    return float(np.mean(np.argmax(np.asarray(logits), axis=-1) == np.asarray(labels)))


def one_hot(labels, classes: int, dtype=np.float32) -> np.ndarray:
    return np.eye(classes, dtype=dtype)[np.asarray(labels)]
