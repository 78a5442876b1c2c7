"""`xlapy bench --lazy`: eager code three ways, side by side in one run.

For the demo's softmax regression and MLP training steps and the encoder
layer's forward pass, written once: op by op (each operation run as Python
reaches it), lazily (`xlapy.jit_scope()`: recorded, run as cached compiled
clusters when the loss is read each step), and `xlapy.jit`. Also the cost of
recording one operation against running it eagerly, and how many clusters
were compiled after the warm-up steps (the target: none); the cost of common
calls inside a step that runs from its tape (indexing, updates, creation,
xlapy.nn, xlapy.lax) against running them eagerly; then eager code as users
write it (a decaying learning rate, minibatch slices, random noise, an RNN's
loop), lazily, beside the plain step.
"""

from __future__ import annotations

import contextlib
import gc
import time

import numpy as np

import xlapy
import xlapy.numpy as xnp
from xlapy import models
from xlapy.core import lazy
from xlapy.models import lib

BLOCKS = 5
"""Timed blocks of steps per mode: the figure is their median (one block of a
few dozen steps moved by 20% between runs)."""


def _per_step(step, args, steps: int, mode: str):
    """(seconds per call of `step(params, *rest)` -> (new params, loss), or ->
    loss for a forward pass (params None: they stay), reading the loss each
    time: the median over BLOCKS blocks of `steps` calls, after a warm-up of 3;
    compiles after the warm-up; the recording's share: (seconds per step until
    the loss is returned, operations recorded per step))."""
    scope = xlapy.jit_scope() if mode == "lazy" else contextlib.nullcontext()
    fn = xlapy.jit(step) if mode == "jit" else step
    params = args[0]
    recording = 0.0

    def run(count: int):
        nonlocal params, recording
        for _ in range(count):
            start = time.perf_counter()
            new_params, loss = fn(params, *args[1:])
            recording += time.perf_counter() - start
            params = params if new_params is None else new_params
            float(loss)

    with scope:
        run(3)   # the warm-up: compiles, caches
        gc.collect()   # (a full collection of the suite's heap is not a step's cost)
        compiles, operations = lazy.STATS.compiles, lazy.STATS.operations
        blocks, records = [], []
        for _ in range(BLOCKS):
            recording = 0.0
            start = time.perf_counter()
            run(steps)
            blocks.append((time.perf_counter() - start) / steps)
            records.append(recording / steps)
        operations = (lazy.STATS.operations - operations) / (BLOCKS * steps)
    return (sorted(blocks)[BLOCKS // 2], lazy.STATS.compiles - compiles,
            (sorted(records)[BLOCKS // 2], operations))


def _encoder_forward(params, x):
    """The layer's forward pass; its parameters are not an output (under `jit` they
    would be copied out every call, which the other two modes do not do)."""
    return None, models.encoder.apply(params, x).sum()


def _record_cost() -> list[tuple[str, float, float]]:
    a = xnp.asarray(np.ones((64, 64), np.float32))
    rows = []
    for name, fn in (("add", lambda: a + a), ("exp", lambda: xnp.exp(a)),
                     ("matmul", lambda: a @ a), ("sum", lambda: a.sum(axis=1))):
        times = {}
        for mode in ("eager", "lazy"):
            with (xlapy.jit_scope() if mode == "lazy" else contextlib.nullcontext()):
                keep = []
                lazy.STATE.cuts_held += 1   # only the recording is timed: no cluster runs
                try:
                    keep.append(fn())   # the first call learns the recipe: not timed
                    blocks = []         # the median of 5 blocks: one pause is not a figure
                    for _ in range(5):
                        start = time.perf_counter()
                        for _ in range(100):
                            keep.append(fn())
                        blocks.append((time.perf_counter() - start) / 100)
                    times[mode] = sorted(blocks)[2]
                finally:
                    lazy.STATE.cuts_held -= 1
                keep.clear()
                lazy.PENDING.clear()
        rows.append((name, times["eager"], times["lazy"]))
    return rows


_IDIOMS = (
    ("x + 1.0", lambda x, idx: x + 1.0),
    ("x[:, None]", lambda x, idx: x[:, None]),
    ("x.at[:, 0].set(0.0)", lambda x, idx: x.at[:, 0].set(0.0)),
    ("xnp.concatenate", lambda x, idx: xnp.concatenate([x, x])),
    ("xnp.take_along_axis", lambda x, idx: xnp.take_along_axis(x, idx, axis=1)),
    ("xnp.eye(16)", lambda x, idx: xnp.eye(16, dtype=np.float32)),
    ("xnp.linalg.norm", lambda x, idx: xnp.linalg.norm(x, axis=-1)),
    ("nn.softmax", lambda x, idx: xlapy.nn.softmax(x)),
    ("nn.gelu", lambda x, idx: xlapy.nn.gelu(x)),
    ("lax.erf", lambda x, idx: xlapy.lax.erf(x)),
)
CALLS = 20
"""Calls of an idiom per step (the step's own read is not the call's cost)."""


def _taped_calls(steps: int) -> list[tuple[str, float, float]]:
    """(call, eager seconds per call, lazy seconds per call in a step that runs
    from its tape) on f32[8, 16]: each step makes x, calls the idiom CALLS
    times and reads a sum; the median step's time of those calls, less an
    empty step's, over CALLS."""
    rng = np.random.default_rng(2)
    x0 = xnp.asarray(rng.standard_normal((8, 16)).astype(np.float32))
    idx = xnp.asarray(np.argsort(rng.standard_normal((8, 16)), axis=1).astype(np.int32))

    def per_call(fn, lazily: bool) -> float:
        gc.collect()
        times = []
        with xlapy.jit_scope() if lazily else contextlib.nullcontext():
            for _ in range(steps + 5):   # (the first steps learn, compile, tape)
                x = x0 * 1.0
                start = time.perf_counter()
                for _ in range(CALLS):
                    y = fn(x, idx)
                times.append(time.perf_counter() - start)
                float(xnp.sum(y))
        return sorted(times[5:])[steps // 2] / CALLS

    base = {mode: per_call(lambda x, idx: x, mode) for mode in (False, True)}
    return [(name, per_call(fn, False) - base[False], per_call(fn, True) - base[True])
            for name, fn in _IDIOMS]


def _patterns(steps: int) -> list[tuple[str, float, float, int]]:
    """(pattern, seconds per step, clusters per step, compiles after the warm-up) of
    eager training code written as users write it, lazily: the MLP step with a
    learning rate that changes every step, on minibatches sliced from a concrete
    dataset by offset, with noise drawn by xlapy.random; an RNN's forward pass.
    Each once cost a compile per step, a step learned again, or a cluster per
    two time steps; now each runs like the plain step."""
    rng = np.random.default_rng(1)
    x, labels = models.data.clusters(rng, 1000)
    data, targets = xnp.asarray((x / 4).astype(np.float32)), xnp.asarray(lib.one_hot(labels, 10))
    w, u = (xnp.asarray(rng.standard_normal(s).astype(np.float32) * 0.1) for s in ((32, 32),
                                                                                   (16, 32)))
    inputs = [xnp.asarray(rng.standard_normal((8, 16)).astype(np.float32)) for _ in range(20)]
    step = models.mlp.train_step

    def plain(state, i):
        state["p"], loss = step(state["p"], (data[:100], targets[:100]))
        return loss

    def schedule(state, i):
        state["p"], loss = step(state["p"], (data[:100], targets[:100]), lr=0.2 / (1 + 0.01 * i))
        return loss

    def minibatch(state, i):
        j = i % 10 * 100
        state["p"], loss = step(state["p"], (data[j:j + 100], targets[j:j + 100]))
        return loss

    def noise(state, i):
        state["key"], sub = xlapy.random.split(state["key"])
        noisy = data[:100] + xlapy.random.normal(sub, (100, 784)) * 0.01
        state["p"], loss = step(state["p"], (noisy, targets[:100]))
        return loss

    def rnn(state, i):
        h = xnp.zeros((8, 32), np.float32)
        for x_t in inputs:
            h = xnp.tanh(h @ w + x_t @ u)
        return h.sum()

    rows = []
    for name, body in (("same batch", plain), ("decaying rate", schedule),
                       ("batches X[j:j + 100]", minibatch), ("random noise", noise),
                       ("RNN forward, 20 steps", rnn)):
        state = {"p": models.mlp.init(np.random.default_rng(0)), "key": xlapy.random.PRNGKey(0)}
        with xlapy.jit_scope():
            for i in range(3):
                float(body(state, i))
            gc.collect()   # (not the earlier workloads' heap, ~40 ms, in 50 short steps)
            compiles, clusters = lazy.STATS.compiles, lazy.STATS.clusters
            start = time.perf_counter()
            for i in range(3, 3 + steps):
                float(body(state, i))
            seconds = (time.perf_counter() - start) / steps
        rows.append((name, seconds, (lazy.STATS.clusters - clusters) / steps,
                     lazy.STATS.compiles - compiles))
    return rows


def run(tiny: bool = False) -> int:
    steps = 5 if tiny else 50
    rng = np.random.default_rng(0)
    x, labels = models.data.clusters(rng, 100)
    batch = (x / 4, lib.one_hot(labels, 10))
    enc = models.encoder.init(rng, d_model=64, heads=4, ff=256)
    enc_x = rng.standard_normal((8, 16, 64)).astype(np.float32)
    workloads = [
        ("softmax regression step", models.softmax_regression.train_step,
         (models.softmax_regression.init(np.random.default_rng(0)), batch)),
        ("MLP 784-128-10 step", models.mlp.train_step, (models.mlp.init(np.random.default_rng(0)),
                                                        batch)),
        ("encoder forward 8x16x64", _encoder_forward, (enc, enc_x)),
    ]
    print(f"{'workload':<26} {'op by op ms':>12} {'lazy ms':>9} {'jit ms':>8} "
          f"{'op/lazy':>8} {'lazy/jit':>9} {'compiles after warm-up':>23}")
    recorded = []
    for name, step, args in workloads:
        eager, _, _ = _per_step(step, args, max(steps // 5, 2), "eager")
        lazy_s, compiles, recording = _per_step(step, args, steps, "lazy")
        jit_s, _, _ = _per_step(step, args, steps, "jit")
        recorded.append((name, lazy_s, *recording))
        print(f"{name:<26} {eager * 1e3:>12.3f} {lazy_s * 1e3:>9.3f} {jit_s * 1e3:>8.3f} "
              f"{eager / lazy_s:>7.1f}x {lazy_s / jit_s:>8.1f}x {compiles:>23}", flush=True)
    print(f"\n{'lazy step':<26} {'ops/step':>9} {'recording µs':>13} {'µs/op':>7} "
          f"{'run and read µs':>16}")
    for name, total, seconds, operations in recorded:   # (a step from its tape, Python's
        print(f"{name:<26} {operations:>9.0f} {seconds * 1e6:>13.1f} "   # whole share)
              f"{seconds * 1e6 / max(operations, 1):>7.2f} {(total - seconds) * 1e6:>16.1f}")
    print(f"\n{'operation (64x64 f32)':<22} {'eager µs/op':>12} {'recording µs/op':>16}"
          "   (a step not yet taped)")
    for name, eager, recording in _record_cost():
        print(f"{name:<22} {eager * 1e6:>12.1f} {recording * 1e6:>16.1f}")
    print(f"\n{'call in a taped step':<22} {'eager µs':>12} {'lazy µs':>16}   (f32[8, 16])")
    for name, eager, lazily in _taped_calls(steps):
        print(f"{name:<22} {eager * 1e6:>12.1f} {lazily * 1e6:>16.1f}")
    print(f"\n{'eager steps as written, lazily':<30} {'ms/step':>8} {'clusters/step':>14} "
          f"{'compiles after warm-up':>23}")
    for name, seconds, clusters, compiles in _patterns(steps):
        print(f"{name:<30} {seconds * 1e3:>8.3f} {clusters:>14.2f} {compiles:>23}")
    return 0
