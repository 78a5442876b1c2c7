"""PyTorch versions of the suite's models, for its `torch eager` and
`torch.compile` peers.

Each is the xlapy model's math (xlapy/models) written with PyTorch's own
operations, as a PyTorch user would write it — `F.cross_entropy` on one-hot
targets, `F.layer_norm`, `F.gelu` (exact, with erf), `torch.softmax` — but
formula for formula the same: the same parameter trees (the NumPy arrays as
tensors through `torch.from_numpy`), the same loss, the same plain SGD update
p - lr·g returning new parameters. Attention stays written out (q·kᵀ,
softmax, ·v) as in encoder.attention; under `torch.compile` Inductor may
still match it to its fused attention. The suite's tests check every one
against xlapy and NumPy at small sizes.

Eager, gradients come from `torch.autograd.grad`. Compiled, from
`torch.func.grad_and_value` inside the compiled function, so the forward, the
backward and the SGD update are one Inductor graph, as a step is one module
under `jax.jit` and `xlapy.jit` (on the 784-512-10 MLP this ran 1.38 ms a
step against 1.66 ms for a compiled loss with `autograd.grad` outside it).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from xlapy.models import encoder
from xlapy.models.lib import tree_map

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # optional: PyTorch is a benchmark peer; the suite notes its absence
    torch = None
    F = None


def tensors(tree):
    """`tree` of NumPy arrays as CPU tensors (sharing memory where contiguous)."""
    return tree_map(lambda a: torch.from_numpy(np.ascontiguousarray(a)), tree)


def compiled(fn: Callable, compile: bool) -> Callable:
    """`torch.compile(fn)` (Inductor, the default backend) or `fn` itself."""
    return torch.compile(fn) if compile else fn


def value_and_grad(loss: Callable, compile: bool = False) -> Callable:
    """(params, *rest) -> (loss, {name: gradient}), as xlapy.value_and_grad."""
    if compile:
        return torch.compile(_func_value_and_grad(loss))

    def both(params, *rest):
        leaves = {k: p.detach().requires_grad_() for k, p in params.items()}   # views
        value = loss(leaves, *rest)
        grads = torch.autograd.grad(value, list(leaves.values()))
        return value.detach(), dict(zip(leaves, grads))
    return both


def _func_value_and_grad(loss: Callable) -> Callable:
    """value_and_grad through torch.func, which torch.compile traces whole."""
    transformed = torch.func.grad_and_value(loss)

    def both(params, *rest):
        grads, value = transformed(params, *rest)
        return value, grads
    return both


def sgd_step(loss: Callable, lr: float, compile: bool = False) -> Callable:
    """(params, batch) -> (params after one SGD step, loss before it): lib.sgd_step.
    Compiled, the gradient and the update are one graph, as under jax.jit."""
    grad_of = _func_value_and_grad(loss) if compile else value_and_grad(loss)

    def step(params, batch):
        value, grads = grad_of(params, *batch)
        with torch.no_grad():
            return {k: p - lr * grads[k] for k, p in params.items()}, value
    return torch.compile(step) if compile else step


# -- classifiers: softmax regression and the MLP -------------------------------------------

def softmax_regression_apply(params, x):
    return x @ params["w"] + params["b"]


def mlp_apply(params, x):
    hidden = torch.relu(x @ params["w1"] + params["b1"])
    return hidden @ params["w2"] + params["b2"]


def classifier_loss(apply: Callable) -> Callable:
    """lib.classifier's loss: mean softmax cross-entropy against one-hot labels."""
    def loss(params, x, one_hot):
        return F.cross_entropy(apply(params, x), one_hot)   # probabilities as targets
    return loss


# -- the encoder layer (xlapy.models.encoder) ----------------------------------------------

def _layer_norm(x, gamma, beta):
    """encoder.layer_norm: the biased variance, BERT's epsilon."""
    return F.layer_norm(x, x.shape[-1:], gamma, beta, eps=encoder.EPSILON)


def _heads(x, w, b):
    """[batch, seq, d] · [d, heads, head_dim] → [batch, heads, seq, head_dim]."""
    d, heads, head_dim = w.shape
    projected = x @ w.reshape(d, heads * head_dim) + b.reshape(-1)
    return projected.reshape(x.shape[0], x.shape[1], heads, head_dim).transpose(1, 2)


def _attention(params, x):
    q, k, v = (_heads(x, params["w" + n], params["b" + n]) for n in "qkv")
    scores = q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5
    mixed = torch.softmax(scores, dim=-1) @ v                      # [batch, heads, seq, hd]
    mixed = mixed.transpose(1, 2).reshape(x.shape[0], x.shape[1], -1)
    wo = params["wo"]
    return mixed @ wo.reshape(-1, wo.shape[-1]) + params["bo"]


def encoder_apply(params, x):
    """encoder.apply: post-layernorm attention and an exact-GELU MLP block."""
    y = _layer_norm(x + _attention(params, x), params["ln1_gamma"], params["ln1_beta"])
    inner = F.gelu(y @ params["w1"] + params["b1"])
    out = y + inner @ params["w2"] + params["b2"]
    return _layer_norm(out, params["ln2_gamma"], params["ln2_beta"])


def encoder_loss(params, batch):
    """encoder.loss: the mean squared error to the target."""
    x, target = batch
    error = encoder_apply(params, x) - target
    return torch.mean(error * error)


# -- the LSTM cell (xlapy.models.lstm) -----------------------------------------------------

def lstm_cell(params, carry, x_t):
    h, c = carry
    gates = x_t @ params["wx"] + h @ params["wh"] + params["b"]
    i, f, g, o = gates.chunk(4, dim=-1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c
