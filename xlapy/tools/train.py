"""`xlapy train`: data-parallel training across processes.

    mpiexec -n 2 xlapy train --model mlp --steps 20

Each of the N processes is one device of a 1-D mesh ("batch"). Every step
takes one global batch (the same in every process, from the same seed); each
process computes the loss and gradients of its 1/N of it, an all-reduce
averages them (`lax.pmean`, one exchange per step), and every process applies
the same SGD update. So the printed losses are those of one process on the
global batch, within float rounding: run it without mpiexec to compare. The
step is one `xlapy.shard_map`, compiled once.

Models: `mlp` (the demo's 784-128-10 perceptron on the offline handwritten
digits) and `encoder` (a transformer encoder layer regressing a random target).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import xlapy
from xlapy import datasets, distributed, lax, models
from xlapy.models import lib
from xlapy.sharding import P, make_mesh


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", choices=("mlp", "encoder"), default="mlp")
    parser.add_argument("--steps", type=int, default=20, help="SGD steps (20)")
    parser.add_argument("--batch-size", type=int, default=128,
                        help="the global batch: split over the processes (128)")
    parser.add_argument("--backend", default="cpu", help="cpu (default) or interpreter")
    parser.add_argument("--data-dir", help="MNIST's IDX files for the mlp (default: the "
                        "offline digits)")
    parser.add_argument("--synthetic", action="store_true",
                        help="train the mlp on synthetic MNIST-shaped clusters (no data needed)")
    parser.add_argument("--quiet", action="store_true", help="print the summary only")


def _mlp(args):
    params = models.mlp.init(np.random.default_rng(0))
    if args.synthetic:
        x, labels = models.data.clusters(np.random.default_rng(1), args.steps * args.batch_size)
        x, y = x / 4, lib.one_hot(labels, 10)   # a pixel-like scale
        batches = [(x[i:i + args.batch_size], y[i:i + args.batch_size])
                   for i in range(0, len(x), args.batch_size)]
    else:
        data = datasets.load(args.data_dir)
        batches = list(datasets.batches(data, args.batch_size, args.steps, seed=1))
    return params, batches, models.mlp.loss, models.mlp.LR


def _encoder(args):
    rng = np.random.default_rng(0)
    sizes = {"d_model": 64, "heads": 4, "ff": 256}
    params = models.encoder.init(rng, **sizes)
    shape = (args.batch_size, 16, sizes["d_model"])
    batches = [(rng.standard_normal(shape).astype(np.float32),
                rng.standard_normal(shape).astype(np.float32)) for _ in range(args.steps)]
    return params, batches, models.encoder.loss, models.encoder.LR


def data_parallel_step(loss, lr: float, mesh, backend: str):
    """The compiled step: (params, x, y) global -> (params, mean loss), each process
    computing on its block of the batch and averaging the gradients."""
    def local(params, x, y):
        value, grads = xlapy.value_and_grad(loss)(params, (x, y))
        value, grads = lax.pmean((value, grads), "batch")
        return lib.sgd(params, grads, lr), value
    step = xlapy.shard_map(local, mesh, in_specs=(P(), P("batch"), P("batch")),
                           out_specs=(P(), P()))
    step.backend = backend
    return step


def run(args: argparse.Namespace) -> int:
    n, rank = distributed.process_count(), distributed.process_index()
    if args.batch_size % n:
        raise ValueError(f"the global batch ({args.batch_size}) must split evenly over the "
                         f"{n} processes")
    params, batches, loss, lr = (_mlp if args.model == "mlp" else _encoder)(args)
    step = data_parallel_step(loss, lr, make_mesh((n,), ("batch",)), args.backend)
    say = print if rank == 0 else (lambda *a, **k: None)
    say(f"xlapy train: {args.model}, global batch {args.batch_size} over {n} process(es) "
        f"({args.batch_size // n} each), {args.steps} steps on {args.backend}")
    start = compiled = time.perf_counter()
    exchanged = 0.0
    for k, (x, y) in enumerate(batches):
        params, value = step(params, x, y)
        value = float(np.asarray(value))
        if k == 0:
            compiled = time.perf_counter()
            exchanged = distributed.collective_seconds()
        if not args.quiet:
            say(f"step {k:4d}  loss {value:.7f}", flush=True)
    end = time.perf_counter()
    steps = max(len(batches) - 1, 1)
    per_step = (end - compiled) / steps
    in_collectives = (distributed.collective_seconds() - exchanged) / steps
    say(f"first step (compile) {compiled - start:.2f} s; then {per_step * 1e3:.2f} ms/step, "
        f"{args.batch_size / per_step:.0f} examples/s; in collectives "
        f"{in_collectives * 1e3:.2f} ms/step ({100 * in_collectives / per_step:.0f}%)")
    return 0
