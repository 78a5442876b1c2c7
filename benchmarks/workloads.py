"""The suite's workloads, each as one callable per peer on the same inputs.

A builder takes `tiny` (the tests' sizes) and returns a `Built`: the peers'
callables (or a note saying why a peer cannot run it), how many steps one
call of each performs (training runs call many steps at once), and the
single-step function xlapy compiles, from which compile times and the
floor's bytes and flops (the optimised module's cost analysis) come.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

import xlapy
import xlapy.numpy as xnp
from benchmarks import torch_peers
from xlapy.models import NUMPY, XLAPY, encoder, jax_lib, lstm, mlp, softmax_regression
from xlapy.models.lib import tree_map


def _on(convert, tree):
    """`tree` with every array made the peer's own kind once, before timing: xlapy
    arrays for eager xlapy (NumPy arrays would run NumPy's operators), device
    arrays for JAX (else each call copies its inputs in)."""
    return tree_map(convert, tree)


def _jax():
    try:
        import jax
        import jax.numpy as jnp
        import jax.scipy.special as jsp
    except ImportError:
        return None
    return jax, jnp, jsp


def _torch():
    """The torch module, or None where PyTorch is not installed."""
    return torch_peers.torch


NO_JAX = "JAX not installed (pip install 'xlapy[bench]')"
NO_TORCH = "PyTorch not installed"
TORCH_PEERS = ("torch eager", "torch.compile")


@dataclass
class Built:
    peers: dict[str, Callable[[], object] | str]
    """peer -> a callable running the workload once, or a note why it cannot."""
    jit_fn: Callable
    jit_args: tuple
    steps: dict[str, int] = field(default_factory=dict)
    """peer -> steps one call performs (1 when absent)."""


@dataclass(frozen=True)
class Workload:
    name: str
    title: str
    unit: str
    build: Callable[[bool], Built]


def _standard_peers(make: Callable, args: tuple, torch_fn: Callable | None = None) -> Built:
    """NumPy, xlapy eager, xlapy jit and JAX peers of `make(np_like, erf)`, a
    function written once for every NumPy-like namespace; PyTorch's from `torch_fn`."""
    np_erf = NUMPY.erf
    jitted = xlapy.jit(make(xnp, xlapy.lax.erf))
    eager_args = _on(xnp.asarray, args)
    peers = {"numpy": lambda: make(np, np_erf)(*args),
             "xlapy eager": lambda: make(xnp, xlapy.lax.erf)(*eager_args),
             "xlapy jit": lambda: jitted(*args)}
    found = _jax()
    if found:
        jax, jnp, jsp = found
        jax_fn = jax.jit(make(jnp, jsp.erf))
        jax_args = _on(jnp.asarray, args)
        peers["jax jit"] = lambda: jax.block_until_ready(jax_fn(*jax_args))
    else:
        peers["jax jit"] = NO_JAX
    torch = _torch()
    if torch is None or torch_fn is None:
        note = NO_TORCH if torch is None else "no PyTorch version of this workload"
        peers.update(dict.fromkeys(TORCH_PEERS, note))
    else:
        _torch_peers(peers, lambda compile: torch_peers.compiled(
            lambda *a: torch_fn(torch, *a), compile), args)
    return Built(peers, make(xnp, xlapy.lax.erf), args)


def _torch_peers(peers: dict, make: Callable[[bool], Callable], args: tuple) -> None:
    """PyTorch eager and torch.compile peers of `make(compile)(*args)` on tensors."""
    if _torch() is None:
        peers.update(dict.fromkeys(TORCH_PEERS, NO_TORCH))
        return
    tensors = torch_peers.tensors(args)
    eager, compiled = make(False), make(True)
    peers["torch eager"] = lambda: eager(*tensors)
    peers["torch.compile"] = lambda: compiled(*tensors)


def _random(tiny: bool, *shapes):
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal(s).astype(np.float32) for s in shapes)


# -- elementwise and reductions ----------------------------------------------------------
def _sum(tiny):
    n = 1 << (10 if tiny else 24)
    return _standard_peers(lambda xp, erf: lambda x, y, z: xp.sum(x + y * z),
                           _random(tiny, n, n, n), lambda t, x, y, z: t.sum(x + y * z))


def _softmax_fn(xp, erf):
    def softmax(x):
        e = xp.exp(x - xp.max(x, axis=1, keepdims=True))
        return e / xp.sum(e, axis=1, keepdims=True)
    return softmax


def _softmax(tiny):
    return _standard_peers(_softmax_fn, _random(tiny, (8, 10) if tiny else (4096, 1000)),
                           lambda t, x: t.softmax(x, dim=1))


def _layernorm_fn(xp, erf):
    def layernorm(x):
        m = xp.mean(x, axis=1, keepdims=True)
        v = xp.mean((x - m) * (x - m), axis=1, keepdims=True)
        return (x - m) / xp.sqrt(v + 1e-5)
    return layernorm


def _layernorm(tiny):
    shape = (8, 16) if tiny else (8192, 1024)
    return _standard_peers(_layernorm_fn, _random(tiny, shape),
                           lambda t, x: t.nn.functional.layer_norm(x, x.shape[1:], eps=1e-5))


def _chain_fn(xp, erf):
    def chain(x):
        t = xp.tanh(x)
        s = 1 / (1 + xp.exp(-t))
        return 0.5 * s * (1 + erf(s * 0.7071067811865476))
    return chain


def _chain(tiny):
    def torch_chain(t, x):
        s = t.sigmoid(t.tanh(x))
        return 0.5 * s * (1 + t.erf(s * 0.7071067811865476))
    return _standard_peers(_chain_fn, _random(tiny, 1 << (10 if tiny else 24)), torch_chain)


# -- matrix products ---------------------------------------------------------------------
def _dot(tiny):
    n = 16 if tiny else 1024
    return _standard_peers(lambda xp, erf: lambda a, b: a @ b, _random(tiny, (n, n), (n, n)),
                           lambda t, a, b: a @ b)


def _dense(tiny):
    batch, d = (4, 8) if tiny else (256, 1024)
    args = _random(tiny, (batch, d), (d, d), (d,))
    return _standard_peers(lambda xp, erf: lambda x, w, b: xp.maximum(x @ w + b, 0.0), args,
                           lambda t, x, w, b: t.relu(x @ w + b))


def _dispatch(tiny):
    x = np.ones(4, np.float32)
    return _standard_peers(lambda xp, erf: lambda a: a * 2 + 1, (x,), lambda t, a: a * 2 + 1)


# -- training ----------------------------------------------------------------------------
def _digits(tiny: bool, batch: int, steps: int):
    """[steps] batches of (images, one-hot labels): scikit-learn's digits at 28x28,
    or Gaussian clusters without scikit-learn (and at the tests' sizes)."""
    from xlapy import datasets

    if not tiny:
        try:
            return list(datasets.batches(datasets.load(), batch, steps, seed=1))
        except datasets.DatasetError:
            pass
    from xlapy.models.data import clusters

    rng = np.random.default_rng(0)
    images, labels = clusters(rng, batch * steps)
    onehot = np.eye(10, dtype=np.float32)[labels]
    return [(images[i * batch:(i + 1) * batch], onehot[i * batch:(i + 1) * batch])
            for i in range(steps)]


def _training(model, torch_apply: Callable, tiny: bool, sizes: dict, *, batch: int, steps: int,
              eager_steps: int) -> Built:
    """SGD on digit batches: NumPy's hand-written backprop, eager xlapy, xlapy jit,
    JAX jit, PyTorch eager and torch.compile (`torch_apply`, the model in torch ops);
    one call trains over all batches (fewer for the eager peers)."""
    steps = 4 if tiny else steps
    eager_steps = min(eager_steps, steps)
    batches = _digits(tiny, 8 if tiny else batch, steps)
    params = model.init(np.random.default_rng(0), **sizes)
    lr = model.LR

    def step(p, batch):
        return model.train_step(p, batch, lr=lr)

    def train(step_fn, count, convert=None):
        start = params if convert is None else convert(params)
        data = batches[:count] if convert is None else convert(batches[:count])

        def run():
            p = start
            for batch in data:
                p, loss = step_fn(p, batch)
            return p, loss                  # the tests compare both with every peer's
        return run

    jitted = xlapy.jit(step)
    peers = {"numpy": train(lambda p, b: model.numpy_train_step(p, b, lr), steps),
             "xlapy eager": train(step, eager_steps, lambda t: _on(xnp.asarray, t)),
             "xlapy jit": train(jitted, steps)}
    jx = jax_lib()
    if jx is None:
        peers["jax jit"] = NO_JAX
    else:
        import jax

        jax_step = jax.jit(lambda p, b: model.train_step(p, b, lr=lr, xp=jx))
        run = train(jax_step, steps, lambda t: _on(jx.np.asarray, t))
        peers["jax jit"] = lambda: jax.block_until_ready(run())
    if _torch() is None:
        peers.update(dict.fromkeys(TORCH_PEERS, NO_TORCH))
    else:
        loss = torch_peers.classifier_loss(torch_apply)
        peers["torch eager"] = train(torch_peers.sgd_step(loss, lr), eager_steps,
                                     torch_peers.tensors)
        peers["torch.compile"] = train(torch_peers.sgd_step(loss, lr, compile=True), steps,
                                       torch_peers.tensors)
    counts = {"numpy": steps, "xlapy eager": eager_steps, "xlapy jit": steps, "jax jit": steps,
              "torch eager": eager_steps, "torch.compile": steps}
    return Built(peers, step, (params, batches[0]), counts)


def _mnist(tiny):
    return _training(softmax_regression, torch_peers.softmax_regression_apply, tiny, {},
                     batch=100, steps=1000, eager_steps=100)


def _mlp(tiny):
    return _training(mlp, torch_peers.mlp_apply, tiny, {"hidden": 8 if tiny else 512},
                     batch=128, steps=200, eager_steps=50)


# -- encoder layer and LSTM ---------------------------------------------------------------
def encoder_inputs(tiny: bool, batch: int | None = None):
    sizes = {"d_model": 8, "heads": 2, "ff": 16} if tiny else {}
    seq = 4 if tiny else 128
    batch = batch or (1 if tiny else 8)
    params = encoder.init(np.random.default_rng(0), **sizes)
    x, target = _random(tiny, (batch, seq, params["w1"].shape[0]),
                        (batch, seq, params["w1"].shape[0]))
    return params, (x, target)


def _library_peers(fn_of_lib: Callable, args: tuple, torch_make: Callable[[bool], Callable],
                   numpy_note: str | None = None) -> Built:
    """Peers of `fn_of_lib(xp)(*args)` for the models' ArrayLibs; PyTorch's run
    `torch_make(compile)`, the model written in torch ops (torch_peers)."""
    jitted = xlapy.jit(fn_of_lib(XLAPY))
    eager_args = _on(xnp.asarray, args)
    peers = {"numpy": numpy_note or (lambda: fn_of_lib(NUMPY)(*args)),
             "xlapy eager": lambda: fn_of_lib(XLAPY)(*eager_args),
             "xlapy jit": lambda: jitted(*args)}
    jx = jax_lib()
    if jx is None:
        peers["jax jit"] = NO_JAX
    else:
        import jax

        jax_fn = jax.jit(fn_of_lib(jx))
        jax_args = _on(jx.np.asarray, args)
        peers["jax jit"] = lambda: jax.block_until_ready(jax_fn(*jax_args))
    _torch_peers(peers, torch_make, args)
    return Built(peers, fn_of_lib(XLAPY), args)


def _encoder_forward(tiny):
    params, (x, _) = encoder_inputs(tiny)
    return _library_peers(lambda xp: lambda p, v: encoder.apply(p, v, xp), (params, x),
                          lambda compile: torch_peers.compiled(torch_peers.encoder_apply, compile))


def encoder_loss_and_grad(xp):
    return xp.value_and_grad(lambda p, batch: encoder.loss(p, batch, xp))


def _encoder_backward(tiny):
    params, batch = encoder_inputs(tiny)
    return _library_peers(encoder_loss_and_grad, (params, batch),
                          lambda compile: torch_peers.value_and_grad(torch_peers.encoder_loss,
                                                                     compile),
                          numpy_note="NumPy has no automatic differentiation")


def _lstm_step(tiny):
    batch, features, hidden = (2, 4, 4) if tiny else (128, 256, 256)
    params = lstm.init(np.random.default_rng(0), features=features, hidden=hidden)
    h, c, x = _random(tiny, (batch, hidden), (batch, hidden), (batch, features))
    return _library_peers(lambda xp: lambda p, carry, v: lstm.cell(p, carry, v, xp),
                          (params, (h, c), x),
                          lambda compile: torch_peers.compiled(torch_peers.lstm_cell, compile))


WORKLOADS = [
    Workload("sum", "sum(x + y*z), 2^24 f32", "call", _sum),
    Workload("softmax", "softmax rows, 4096x1000 f32", "call", _softmax),
    Workload("layernorm", "layernorm rows, 8192x1024 f32", "call", _layernorm),
    Workload("chain", "tanh, sigmoid, GELU(erf), 2^24", "call", _chain),
    Workload("dot", "dot 1024x1024x1024 f32", "call", _dot),
    Workload("dense", "relu(x@W + b), 256x1024x1024", "call", _dense),
    Workload("dispatch", "dispatch: x*2+1 on f32[4]", "call", _dispatch),
    Workload("mnist", "MNIST softmax regression, SGD", "step", _mnist),
    Workload("mlp", "MLP 784-512-10, SGD, batch 128", "step", _mlp),
    Workload("encoder_fwd", "encoder layer forward 8x128x256", "call", _encoder_forward),
    Workload("encoder_train", "encoder layer fwd+bwd 8x128x256", "call", _encoder_backward),
    Workload("lstm_step", "LSTM cell step 128x256->256", "call", _lstm_step),
]
