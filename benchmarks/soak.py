"""Soak: the demo's compiled MNIST training step called 10^5 times, memory watched.

    python -m benchmarks.soak                      # 10^5 steps of softmax regression
    python -m benchmarks.soak --steps 20000 --model mlp --data-dir ~/mnist

A leak of a few hundred bytes per call (a result kept alive, a cache that
grows with every call, a ctypes object per execution) is invisible in a
test of ten calls and fatal in a training run of a million. The step is the
demo's (`xlapy.jit` of the model's `train_step`, params a dict, a fresh
batch from `datasets.batches` every call, the new params fed back), run for a
warm-up, then for `steps` more in `windows` windows. The process's resident
set (`/proc/self/statm`) is read after the warm-up and after each window; the
growth reported is the end's over the warm-up's, with the largest seen along
the way, plus what the executable and the jit keep (recycled outputs, cached
signatures, pending fallback errors) and Python's object count, so a leak
says where it is.

Data: MNIST's IDX files with `--data-dir`, else random MNIST-shaped images
(memory does not depend on the pixels).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import time
from dataclasses import asdict, dataclass, field

import numpy as np

import xlapy
from xlapy import datasets, models

_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class SoakResult:
    model: str
    steps: int
    warmup: int
    seconds: float
    rss_warm: int
    """Resident bytes after the warm-up."""
    rss_end: int
    rss_windows: list[int] = field(default_factory=list)
    """Resident bytes after each window."""
    objects_warm: int = 0
    objects_end: int = 0
    kept: dict = field(default_factory=dict)
    """What the jit and the executable hold at the end (entries, buffers)."""
    loss: float = float("nan")

    @property
    def growth(self) -> int:
        return self.rss_end - self.rss_warm

    @property
    def largest_growth(self) -> int:
        return max([w - self.rss_warm for w in self.rss_windows] or [0])

    def to_json(self) -> dict:
        return {**asdict(self), "growth": self.growth, "largest_growth": self.largest_growth}


def rss() -> int:
    """This process's resident set in bytes."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE


def synthetic(train: int = 2000, seed: int = 0) -> datasets.Dataset:
    rng = np.random.default_rng(seed)
    images = rng.random((train + 100, 784), dtype=np.float32)
    labels = rng.integers(0, 10, train + 100).astype(np.int32)
    return datasets.Dataset(images[:train], labels[:train], images[train:], labels[train:],
                            "random MNIST-shaped images")


def soak(steps: int = 100_000, warmup: int = 2000, model: str = "softmax",
         windows: int = 10, batch_size: int = 100, data_dir: str | None = None) -> SoakResult:
    """Run the compiled training step `warmup` + `steps` times, measuring as above."""
    module = {"softmax": models.softmax_regression, "mlp": models.mlp}[model]
    data = datasets.load(data_dir) if data_dir else synthetic()
    params = module.init(np.random.default_rng(0))
    lr = module.LR

    def step(params, batch):
        return module.train_step(params, batch, lr=lr)

    compiled = xlapy.jit(step, backend="cpu")
    batches = datasets.batches(data, batch_size, warmup + steps, seed=1)
    loss = None
    for _ in range(warmup):
        params, loss = compiled(params, next(batches))
    state = {"params": params, "loss": loss}

    def one_step():
        state["params"], state["loss"] = compiled(state["params"], next(batches))

    result = watch(one_step, steps, windows)
    result.model, result.warmup = model, warmup
    result.loss = float(state["loss"]) if state["loss"] is not None else float("nan")
    result.kept = _kept(compiled, state["params"], batch_size)
    return result


def watch(call, steps: int, windows: int = 10) -> SoakResult:
    """Call `call()` `steps` times (after its warm-up: the caller's), reading the
    resident set after each of `windows` windows."""
    gc.collect()
    result = SoakResult("", steps, 0, 0.0, rss(), 0, objects_warm=len(gc.get_objects()))
    start = time.perf_counter()
    per_window = max(1, steps // max(1, windows))
    done = 0
    while done < steps:
        count = min(per_window, steps - done)
        for _ in range(count):
            call()
        done += count
        result.rss_windows.append(rss())
    result.seconds = time.perf_counter() - start
    gc.collect()
    result.rss_end = rss()
    result.objects_end = len(gc.get_objects())
    return result


def _kept(compiled, params, batch_size: int) -> dict:
    """What the jit and its executable hold on to after the run."""
    args = (params, (np.zeros((batch_size, 784), np.float32),
                     np.zeros((batch_size, 10), np.float32)))
    executable = compiled.lower(*args).compile().executable
    return {"compilations": compiled.compile_count,
            "cached_signatures": len(compiled._cache),
            "recycled_outputs": len(executable._recycler._kept),
            "pending_errors": len(executable._errors),
            "temporaries_bytes": executable.assignment.temp_size}


def report(result: SoakResult) -> str:
    kib = 1024
    lines = [f"soak: {result.model} training step, {result.steps} steps after "
             f"{result.warmup} of warm-up, {result.seconds:.1f} s "
             f"({result.seconds / max(result.steps, 1) * 1e6:.0f} us/step), loss {result.loss:.4f}",
             f"RSS after warm-up {result.rss_warm / kib:,.0f} KiB, at the end "
             f"{result.rss_end / kib:,.0f} KiB: growth {result.growth / kib:+,.0f} KiB "
             f"(largest along the way {result.largest_growth / kib:+,.0f} KiB)",
             "RSS per window (KiB over warm-up): " + " ".join(
                 f"{(w - result.rss_warm) / kib:+.0f}" for w in result.rss_windows),
             f"Python objects: {result.objects_warm} after warm-up, {result.objects_end} at the "
             f"end ({result.objects_end - result.objects_warm:+d})",
             "kept: " + ", ".join(f"{k} {v}" for k, v in result.kept.items())]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000, help="measured steps (10^5)")
    parser.add_argument("--warmup", type=int, default=2000, help="steps before measuring (2000)")
    parser.add_argument("--model", choices=("softmax", "mlp"), default="softmax")
    parser.add_argument("--windows", type=int, default=10, help="RSS readings after warm-up")
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--data-dir", help="MNIST's IDX files (default: random images)")
    parser.add_argument("--json", help="also write the result here")
    args = parser.parse_args(argv)
    result = soak(args.steps, args.warmup, args.model, args.windows, args.batch_size,
                  args.data_dir)
    print(report(result))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result.to_json(), f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
