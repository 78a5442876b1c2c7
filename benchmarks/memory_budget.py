"""The largest encoder-layer training batch a memory budget holds, with and
without the compiler — how XLA's seeds report BERT's batch-size gain.

One training step's memory is measured the same way for both modes: the
bytes NumPy and Python allocate (tracemalloc sees every NumPy buffer) at the
step's peak, above what was live before it, plus the arguments (weights and
the batch). The compiled step's temporary arena is allocated once when it is
loaded, before the step: its size is added from the buffer assignment. Op by
op, every intermediate the backward pass needs stays alive until it is used;
compiled, fusion keeps most of them out of memory and buffer assignment
shares the rest. Memory grows linearly with the batch, so two measured
batches give bytes per example and the fixed part; the largest batch is
where the line meets the budget.
"""

from __future__ import annotations

import gc
import tracemalloc
from dataclasses import asdict, dataclass

import xlapy
from benchmarks.workloads import encoder_inputs, encoder_loss_and_grad
from xlapy.models import XLAPY
from xlapy.models.lib import tree_map


@dataclass
class BatchFit:
    mode: str
    batches: tuple[int, int]
    bytes: tuple[int, int]
    per_example: float
    fixed: float
    largest_batch: int

    def to_json(self) -> dict:
        return asdict(self)


def _argument_bytes(args) -> int:
    total = 0

    def add(leaf):
        nonlocal total
        total += leaf.nbytes
    tree_map(add, args)
    return total


def step_bytes(step, args, preallocated: int = 0) -> int:
    """Arguments + the traced peak of one call of `step` (warmed up first) +
    `preallocated` bytes the step holds from before the call."""
    step(*args)
    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        result = step(*args)
        _, peak = tracemalloc.get_traced_memory()
        del result
    finally:
        tracemalloc.stop()
    return _argument_bytes(args) + peak - before + preallocated


def _measure(mode: str, batch: int, tiny: bool) -> int:
    params, data = encoder_inputs(tiny, batch)
    fn = encoder_loss_and_grad(XLAPY)
    if mode == "op by op":
        return step_bytes(fn, (params, data))
    compiled = xlapy.jit(fn).lower(params, data).compile()
    return step_bytes(compiled, (params, data),
                      compiled.memory_analysis().temp_size_in_bytes)


def largest_batches(budget: int, tiny: bool = False) -> list[BatchFit]:
    """Fit bytes = fixed + per_example * batch for both modes; solve for `budget`."""
    small, large = (1, 2) if tiny else (2, 4)
    fits = []
    for mode in ("op by op", "compiled"):
        a, b = _measure(mode, small, tiny), _measure(mode, large, tiny)
        per_example = max((b - a) / (large - small), 1.0)
        fixed = a - per_example * small
        fits.append(BatchFit(mode, (small, large), (a, b), per_example, fixed,
                             max(0, int((budget - fixed) // per_example))))
    return fits


def report(fits: list[BatchFit], budget: int) -> str:
    lines = [f"encoder layer training step (fwd+bwd, seq 128, d 256), memory budget "
             f"{budget / 2 ** 20:.0f} MiB:"]
    for f in fits:
        lines.append(f"  {f.mode:<9} {f.per_example / 2 ** 20:8.2f} MiB per example + "
                     f"{f.fixed / 2 ** 20:6.1f} MiB fixed -> largest batch {f.largest_batch}")
    eager, compiled = fits
    if eager.largest_batch:
        lines.append(f"  the compiler fits {compiled.largest_batch / eager.largest_batch:.1f}x "
                     "the batch")
    return "\n".join(lines)
