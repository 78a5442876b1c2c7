"""A BERT-style transformer encoder layer (post-layernorm, as BERT):

    y = LN(x + Attention(x));  out = LN(y + W2·GELU(W1·y + b1) + b2)

Multi-head self-attention with biases, exact erf GELU, layernorms with gamma
and beta. The head count travels with the params: the query/key/value weights
are stored f32[d_model, heads, head_dim] and the output weight
f32[heads, head_dim, d_model]. The loss is the mean squared error to a target,
enough to drive gradients through every weight. Forward runs on NumPy too.
"""

from __future__ import annotations

import numpy as np

from xlapy.models import lib
from xlapy.models.lib import XLAPY, ArrayLib

LR = 0.1  # the mean-squared error spreads over every element: its gradients are small
EPSILON = 1e-12  # BERT's layernorm epsilon


def init(rng: np.random.Generator, d_model: int = 256, heads: int = 4, ff: int = 1024):
    """Weights drawn N(0, 0.02²) as BERT does; biases and betas zero, gammas one."""
    if d_model % heads:
        raise ValueError(f"d_model {d_model} is not a multiple of heads {heads}")
    head_dim = d_model // heads

    def normal(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    def zeros(*shape):
        return np.zeros(shape, np.float32)

    return {"wq": normal(d_model, heads, head_dim), "bq": zeros(heads, head_dim),
            "wk": normal(d_model, heads, head_dim), "bk": zeros(heads, head_dim),
            "wv": normal(d_model, heads, head_dim), "bv": zeros(heads, head_dim),
            "wo": normal(heads, head_dim, d_model), "bo": zeros(d_model),
            "ln1_gamma": np.ones(d_model, np.float32), "ln1_beta": zeros(d_model),
            "w1": normal(d_model, ff), "b1": zeros(ff),
            "w2": normal(ff, d_model), "b2": zeros(d_model),
            "ln2_gamma": np.ones(d_model, np.float32), "ln2_beta": zeros(d_model)}


def layer_norm(x, gamma, beta, xp: ArrayLib):
    mean = xp.np.mean(x, axis=-1, keepdims=True)
    centred = x - mean
    variance = xp.np.mean(centred * centred, axis=-1, keepdims=True)
    return centred / xp.np.sqrt(variance + EPSILON) * gamma + beta


def _heads(x, w, b, xp):
    """[batch, seq, d] · [d, heads, head_dim] → [batch, heads, seq, head_dim]."""
    d, heads, head_dim = w.shape
    projected = x @ xp.np.reshape(w, (d, heads * head_dim)) + xp.np.reshape(b, (-1,))
    projected = xp.np.reshape(projected, (x.shape[0], x.shape[1], heads, head_dim))
    return xp.np.transpose(projected, (0, 2, 1, 3))


def attention(params, x, xp: ArrayLib = XLAPY):
    """Multi-head self-attention of x f32[batch, seq, d_model], no mask."""
    q, k, v = (_heads(x, params["w" + n], params["b" + n], xp) for n in "qkv")
    scores = q @ xp.np.swapaxes(k, -1, -2) * q.shape[-1] ** -0.5  # a Python float: stays f32
    mixed = lib.softmax(scores, xp) @ v                              # [batch, heads, seq, hd]
    mixed = xp.np.reshape(xp.np.transpose(mixed, (0, 2, 1, 3)), (x.shape[0], x.shape[1], -1))
    wo = params["wo"]
    return mixed @ xp.np.reshape(wo, (-1, wo.shape[-1])) + params["bo"]


def apply(params, x, xp: ArrayLib = XLAPY):
    """The layer's output f32[batch, seq, d_model] for x of the same shape."""
    y = layer_norm(x + attention(params, x, xp), params["ln1_gamma"], params["ln1_beta"], xp)
    inner = lib.gelu(y @ params["w1"] + params["b1"], xp)
    out = y + inner @ params["w2"] + params["b2"]
    return layer_norm(out, params["ln2_gamma"], params["ln2_beta"], xp)


def loss(params, batch, xp: ArrayLib = XLAPY):
    """Mean squared error to a target; batch = (x, target), both f32[batch, seq, d_model]."""
    x, target = batch
    error = apply(params, x, xp) - target
    return xp.np.mean(error * error)


def train_step(params, batch, lr: float = LR, xp: ArrayLib = XLAPY):
    """(params after one SGD step, loss before it)."""
    return lib.sgd_step(loss, params, batch, lr, xp)
