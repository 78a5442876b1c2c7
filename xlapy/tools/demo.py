"""`xlapy demo`: the main job — train on handwritten digits with and without the compiler.

The seeds' `mnist_softmax_xla` model (softmax regression, SGD with learning
rate 0.5, batches of 100) is trained three times on the same batches: op by
op, each NumPy-style operation dispatched on its own as Python reaches it;
the same code auto-clustered (`--xla_auto_jit=2`: operations recorded and
run as compiled clusters, as TensorFlow's auto-clustering does); and as one
compiled step (`xlapy.jit`: traced once into HLO, fused, buffers assigned,
native code). A 2-layer MLP follows the same way. The demo prints held-out
accuracy and time per step of each mode, the speed-ups, and what the
compiler made of the step: its kernels, its peak temporary memory, the HLO
dumps (XLA's file names) and a per-kernel timeline for chrome://tracing.

Data: MNIST's IDX files with `--data-dir`; without it, the handwritten
digits scikit-learn ships inside its package, so the demo runs offline.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import xlapy
from xlapy import datasets, models, profiler
from xlapy.analysis import kernel_count
from xlapy.core import lazy
from xlapy.flags import flags_set
from xlapy.tools.progress import Progress


@dataclass
class Mode:
    """One training run: its final parameters, accuracy and time per step."""

    params: object
    accuracy: float
    step_seconds: float
    loss: float
    compiles: int = 0


@dataclass
class Model:
    title: str
    module: object
    learning_rate: float
    sizes: dict


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", help="directory of MNIST's IDX files (gzipped or not); "
                        "default: scikit-learn's handwritten digits, offline")
    parser.add_argument("--steps", type=int, default=1000, help="SGD steps per model (1000)")
    parser.add_argument("--batch-size", type=int, default=100, help="examples per step (100)")
    parser.add_argument("--hidden", type=int, default=128, help="the MLP's hidden units (128)")
    parser.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "xlapy-demo"),
                        help="directory for the HLO dumps and the timeline")
    parser.add_argument("--timeline", help="where to write the Chrome trace of the compiled "
                        "step (default: OUT/timeline.ctf.json)")
    parser.add_argument("--show-hlo", action="store_true",
                        help="print the optimised HLO of each compiled step")
    parser.add_argument("--backend", default="cpu", help="backend of the compiled step (cpu)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    data = datasets.load(args.data_dir)
    print(f"data: {data.description}")
    out = Path(args.out)
    timeline_path = Path(args.timeline) if args.timeline else out / "timeline.ctf.json"
    zoo = [Model("softmax regression", models.softmax_regression, models.softmax_regression.LR, {}),
           Model(f"MLP 784-{args.hidden}-10", models.mlp, models.mlp.LR,
                 {"hidden": args.hidden})]
    rows = []
    for number, model in enumerate(zoo):
        print(f"\n{model.title}: {args.steps} SGD steps of {args.batch_size}, "
              f"learning rate {model.learning_rate}")
        rows.append(_train_both(model, data, args, out / f"dumps_{number}",
                                timeline_path if number == 0 else None))
    _print_summary(rows, timeline_path, out)
    print(f"\ndemo finished in {time.perf_counter() - start:.1f} s")
    return 0


def _train_both(model: Model, data, args, dump_dir: Path, timeline_path: Path | None) -> dict:
    rng = np.random.default_rng(0)
    initial = model.module.init(rng, **model.sizes)
    lr = model.learning_rate

    def step(params, batch):
        return model.module.train_step(params, batch, lr=lr)

    batches = list(datasets.batches(data, args.batch_size, args.steps, seed=1))
    eager = _train(step, initial, batches, f"{model.title}, op by op", args)
    with flags_set("--xla_auto_jit=2"):   # the same eager code, recorded and clustered
        warm, _ = step(initial, batches[0])   # warm-up: two steps compile their clusters
        float(step(warm, batches[1])[1])
        compiles = lazy.STATS.compiles
        clustered = _train(step, initial, batches, f"{model.title}, auto-clustered", args)
        clustered.compiles = lazy.STATS.compiles - compiles
    compiled_step = xlapy.jit(step, backend=args.backend)
    with flags_set(f"--xla_dump_to={dump_dir}"):
        compile_start = time.perf_counter()
        compiled_step(initial, batches[0])
        compile_seconds = time.perf_counter() - compile_start
    jitted = _train(compiled_step, initial, batches, f"{model.title}, compiled", args)
    for mode in (eager, clustered, jitted):
        mode.accuracy = float(model.module.accuracy(mode.params, data.test_images,
                                                    data.test_labels))
    compiled = compiled_step.lower(initial, batches[0]).compile()
    if args.show_hlo:
        print(compiled.as_text())
    row = {"model": model.title, "eager": eager, "clustered": clustered, "jit": jitted,
           "compile_seconds": compile_seconds,
           "kernels": kernel_count(compiled.executable.module),
           "temp_bytes": compiled.memory_analysis().temp_size_in_bytes,
           "dumps": dump_dir}
    if timeline_path is not None and args.backend == "cpu":
        timeline = profiler.profile(compiled_step, initial, batches[0], runs=20)
        row["timeline"] = timeline.write(timeline_path)
        row["slowest"] = next(iter(timeline.kernel_seconds().items()), None)
    return row


def _train(step, params, batches, label: str, args) -> Mode:
    bar = Progress(label, len(batches), enabled=not args.no_progress)
    loss = float("nan")
    start = time.perf_counter()
    for i, batch in enumerate(batches):
        params, loss_value = step(params, batch)
        if i % 50 == 0 or i == len(batches) - 1:    # reading the loss waits for the step
            loss = float(loss_value)
            bar.update(i + 1, loss)
    seconds = (time.perf_counter() - start) / max(len(batches), 1)
    bar.close(loss)
    return Mode(params, float("nan"), seconds, loss)


def _print_summary(rows: list[dict], timeline_path: Path, out: Path) -> None:
    print(f"\n{'model':<22} {'mode':<10} {'accuracy':>9} {'ms/step':>9} {'speed-up':>9}")
    for row in rows:
        eager, jitted = row["eager"], row["jit"]
        print(f"{row['model']:<22} {'op by op':<10} {eager.accuracy:9.2%} "
              f"{eager.step_seconds * 1e3:9.3f}")
        for name, mode in (("clustered", row["clustered"]), ("compiled", jitted)):
            print(f"{'':<22} {name:<10} {mode.accuracy:9.2%} {mode.step_seconds * 1e3:9.3f} "
                  f"{eager.step_seconds / mode.step_seconds:8.1f}x")
    print("\nclustered: the op-by-op code under XLAPY_FLAGS=--xla_auto_jit=2, recorded and "
          "run as compiled clusters;\n  clusters compiled after two warm-up steps: "
          + ", ".join(f"{row['model']} {row['clustered'].compiles}" for row in rows))
    for row in rows:
        print(f"\n{row['model']}, compiled step: {row['kernels']} kernels, peak temporary "
              f"memory {_bytes(row['temp_bytes'])}, compiled in {row['compile_seconds']:.2f} s")
        print(f"  HLO dumps (XLA's file names): {row['dumps']}")
        if "timeline" in row:
            print(f"  timeline, one event per kernel of 20 steps: {row['timeline']}"
                  "  (open in chrome://tracing or ui.perfetto.dev)")
            if row["slowest"]:
                name, seconds = row["slowest"]
                print(f"  slowest kernel: {name}, {seconds * 1e6:.1f} us per step")


def _bytes(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    return f"{n / 1024:.1f} KiB" if n < 1 << 20 else f"{n / (1 << 20):.1f} MiB"
