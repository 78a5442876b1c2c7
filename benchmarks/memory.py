"""Kernels and peak temporary memory with and without the optimisation pipeline.

The modules are XLA's own text, as JAX lowers them (benchmarks/data/, made by
`jax.jit(f).lower(...).as_text(dialect="hlo")`): the seeds' MNIST training
step and a BERT-style encoder layer, forward and training step (forward +
backward + SGD). "Op by op" is the same HLO run instruction by instruction
with no buffer reuse: every instruction's output allocated. "Pipeline" is the
optimised module's buffer assignment (fusion, scheduling, best-fit reuse).
"""

from __future__ import annotations

import copy
import time
from pathlib import Path

from xlapy.analysis import kernel_count, memory_analysis, no_reuse_bytes
from xlapy.hlo import parse
from xlapy.passes.default_pipeline import optimize

DATA = Path(__file__).with_name("data")
MODULES = ["mnist_train_step", "encoder_layer_forward", "encoder_layer_train_step"]

def measure(name: str) -> dict:
    module = parse((DATA / f"{name}.hlo").read_text())
    optimized = copy.deepcopy(module)
    start = time.perf_counter()
    optimize(optimized)
    seconds = time.perf_counter() - start
    analysis = memory_analysis(optimized)
    return {"name": name, "kernels_before": kernel_count(module),
            "kernels_after": kernel_count(optimized),
            "temp_before": no_reuse_bytes(module), "temp_after": analysis.temp_size_in_bytes,
            "pipeline_seconds": seconds}


def main() -> None:
    print("kernels and peak temporary bytes: op by op (no reuse) vs the pipeline")
    print(f"{'module':28} {'kernels':>15} {'temp bytes op by op':>20} {'pipeline':>12} "
          f"{'ratio':>7} {'opt time':>9}")
    for name in MODULES:
        m = measure(name)
        ratio = m["temp_before"] / max(m["temp_after"], 1)
        print(f"{name:28} {m['kernels_before']:>6} -> {m['kernels_after']:<6} "
              f"{m['temp_before']:>20,} {m['temp_after']:>12,} {ratio:>6.1f}x "
              f"{m['pipeline_seconds']:>8.2f}s")


if __name__ == "__main__":
    main()
