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
from xlapy.core.pytree import tree_leaves
from xlapy.models import XLAPY


@dataclass
class BatchFit:
    mode: str
    batches: tuple[int, int]
    bytes: tuple[int, int]
    per_example: float
    fixed: float
    largest_batch: int
    measured_at_largest: int | None = None
    """The bytes measured at `largest_batch` itself (None where not measured)."""

    def to_json(self) -> dict:
        return asdict(self)


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
    return sum(leaf.nbytes for leaf in tree_leaves(args)) + peak - before + preallocated


def _measure(mode: str, batch: int, tiny: bool) -> int:
    params, data = encoder_inputs(tiny, batch)
    fn = encoder_loss_and_grad(XLAPY)
    if mode == "op by op":
        return step_bytes(fn, (params, data))
    compiled = xlapy.jit(fn).lower(params, data).compile()
    return step_bytes(compiled, (params, data),
                      compiled.memory_analysis().temp_size_in_bytes)


MAX_CHECKED_BATCH = 1024
"""The fit is checked by a run at the batch it predicts, up to this size."""


def largest_batches(budget: int, tiny: bool = False) -> list[BatchFit]:
    """Fit bytes = fixed + per_example * batch for both modes; solve for `budget`,
    then measure a step at that batch to check the fit."""
    small, large = (1, 2) if tiny else (2, 4)
    fits = []
    for mode in ("op by op", "compiled"):
        a, b = _measure(mode, small, tiny), _measure(mode, large, tiny)
        per_example = max((b - a) / (large - small), 1.0)
        fixed = a - per_example * small
        fit = BatchFit(mode, (small, large), (a, b), per_example, fixed,
                       max(0, int((budget - fixed) // per_example)))
        if 0 < fit.largest_batch <= MAX_CHECKED_BATCH and not tiny:
            _check(fit, budget, tiny)
        fits.append(fit)
    return fits


def _check(fit: BatchFit, budget: int, tiny: bool) -> None:
    """Measure at the predicted batch; where memory grows slower than the two small
    batches said (buffer reuse improves with size), refit through the measured
    point once and keep the larger batch if it is measured to fit too."""
    batch = fit.largest_batch
    measured = _measure(fit.mode, batch, tiny)
    while measured > budget and batch > 1:     # the line was optimistic: step back
        batch = max(1, batch * budget // measured)
        measured = _measure(fit.mode, batch, tiny)
    large, at_large = fit.batches[1], fit.bytes[1]
    if batch > large and measured < budget:
        slope = max((measured - at_large) / (batch - large), 1.0)
        better = min(int(batch + (budget - measured) // slope), MAX_CHECKED_BATCH)
        if better > batch:
            again = _measure(fit.mode, better, tiny)
            if again <= budget:
                batch, measured = better, again
    fit.largest_batch, fit.measured_at_largest = batch, measured


def report(fits: list[BatchFit], budget: int) -> str:
    lines = [f"encoder layer training step (fwd+bwd, seq 128, d 256), memory budget "
             f"{budget / 2 ** 20:.0f} MiB:"]
    for f in fits:
        line = (f"  {f.mode:<9} {f.per_example / 2 ** 20:8.2f} MiB per example + "
                f"{f.fixed / 2 ** 20:6.1f} MiB fixed -> largest batch {f.largest_batch}")
        if f.measured_at_largest is not None:
            line += f" (measured there: {f.measured_at_largest / 2 ** 20:.0f} MiB)"
        lines.append(line)
    eager, compiled = fits
    if eager.largest_batch:
        lines.append(f"  the compiler fits {compiled.largest_batch / eager.largest_batch:.1f}x "
                     "the batch")
    return "\n".join(lines)
