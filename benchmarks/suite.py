"""`xlapy bench`: every workload, every available peer, one process, one table.

    xlapy bench                          # the whole suite (under 10 minutes)
    xlapy bench dot mnist --json r.json  # some workloads; machine-readable results
    xlapy bench --plot speedups.png      # bar chart of speed-ups (matplotlib)

The machine's limits are measured first, in the same run. Compilation uses
an on-disk cache of its own (a fresh directory), so "cold" is a real first
compile and "from disk cache" a second process's experience. The runtime
library (thread pool, GEMMs) stays in the user's cache, built once per
machine as an installed library would be; its build is timed on its own, in
a child process with an empty cache (`runtime_build.py`). Inductor gets a
fresh cache directory too, so torch.compile's compile times are as cold (JAX
keeps no persistent cache unless asked to).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import sys
import tempfile
import time

import numpy as np

import xlapy
from benchmarks import machine, memory_budget, runtime_build
from benchmarks.harness import PEERS, Result, Timing, quiet, table, time_in_turns
from benchmarks.workloads import WORKLOADS
from xlapy.backends.cpu.options import CpuOptions
from xlapy.flags import debug_options, flags_set

COMPILING_PEERS = ("jax jit", "torch.compile")
"""Peers whose first call compiles: the compile is reported beside xlapy's."""


def run_workload(workload, limits, *, tiny: bool = False, budget: float = 20.0,
                 min_time: float = 0.05) -> Result:
    result = Result(workload.name, workload.title, workload.unit)
    result.compile_cold, result.compile_cached = _compile_times(workload, tiny)
    built = workload.build(tiny)
    runnable = {p: fn for p, fn in built.peers.items() if callable(fn)}
    first_calls: dict[str, float] = {}
    rounds: dict[str, list[float]] = {}
    seconds = time_in_turns(runnable, min_time=min_time, budget=budget, first_calls=first_calls,
                            rounds_out=rounds)
    result.rounds = {p: [s / built.steps.get(p, 1) for s in samples]
                     for p, samples in rounds.items()}
    result.peer_compile = {p: max(first_calls[p] - seconds[p], 0.0)
                           for p in COMPILING_PEERS if p in first_calls}
    if "xlapy jit" in seconds:   # as the peers': the first call less a timed one
        one_call = seconds["xlapy jit"] / built.steps.get("xlapy jit", 1)
        result.compile_cold = max(result.compile_cold - one_call, 0.0)
        result.compile_cached = max(result.compile_cached - one_call, 0.0)
    for peer in PEERS:
        entry = built.peers.get(peer)
        if callable(entry):
            result.timings.append(Timing(peer, seconds[peer] / built.steps.get(peer, 1)))
        else:
            result.timings.append(Timing(peer, None, entry or "not part of this workload"))
    if limits is not None:
        result.floor_seconds, result.floor_note = _floor(built, limits)
    steps = {p: n for p, n in built.steps.items() if n != 1}
    if steps:
        result.notes.append("per step; steps per timed run: " +
                            ", ".join(f"{p} {n}" for p, n in steps.items()))
    return result


def _floor(built, limits) -> tuple[float, str]:
    """The least time this machine needs for one step: its arguments read and
    results written once at the memory bandwidth, or its flops (the optimised
    module's cost analysis) at BLAS's rate, whichever is longer."""
    compiled = xlapy.jit(built.jit_fn).lower(*built.jit_args).compile()
    memory = compiled.memory_analysis()
    moved = memory.argument_size_in_bytes + memory.output_size_in_bytes
    return limits.floor(moved, compiled.cost_analysis().get("flops", 0.0))


def _runtime_library(runtime_dir: str | None, out) -> dict[str, float]:
    """The runtime library's build (a child process, empty cache) and its load in
    this process (from the user's cache; a build too the first time on a machine)."""
    from xlapy.backends.cpu import builtins, runtime_library

    threads = CpuOptions.from_flags().threads
    built = runtime_build.build_seconds(threads)
    start = time.perf_counter()
    runtime_library.ensure_pool()
    builtins.ensure()
    for dtype in runtime_library.FAST_GEMM_TYPES:
        runtime_library.ensure_gemm(dtype, threads)
    here = time.perf_counter() - start
    print(f"runtime library (thread pool, builtins, f32/f64 GEMM): built in {built['ready']:.2f} s "
          f"once per machine (a fresh process with an empty cache); this process had it ready "
          f"in {here:.2f} s from {runtime_dir or 'a fresh cache'}", file=out)
    return {"build_seconds": built["ready"], "ready_seconds": here}


def _compile_times(workload, tiny: bool) -> tuple[float, float]:
    """(cold, from the on-disk cache) seconds of a fresh jit's first call: trace,
    optimise, LLVM (or the cache) and one run (`run_workload` takes the run off)."""
    times = []
    for _ in range(2):
        built = workload.build(tiny)
        quiet()
        start = time.perf_counter()
        xlapy.jit(built.jit_fn)(*built.jit_args)
        times.append(time.perf_counter() - start)
    return times[0], times[1]


def run(names: list[str] | None = None, *, tiny: bool = False, memory_budget_bytes: int = 2 ** 30,
        budget: float = 20.0, out=sys.stdout) -> dict:
    """Run the suite; prints as it goes and returns the JSON-able report."""
    chosen = [w for w in WORKLOADS if not names or w.name in names]
    unknown = set(names or ()) - {w.name for w in WORKLOADS} - {"memory"}
    if unknown:
        raise ValueError(f"unknown workload(s) {', '.join(sorted(unknown))}; known: "
                         f"{', '.join(w.name for w in WORKLOADS)}, memory")
    report = {"python": platform.python_version(), "numpy": np.__version__,
              "peers": _peer_versions()}
    started = time.perf_counter()
    runtime_dir = runtime_build.runtime_directory(debug_options().xlapy_cpu_cache_dir)
    with tempfile.TemporaryDirectory(prefix="xlapy-bench-cache-") as cache, \
            flags_set(f"--xlapy_cpu_cache_dir={cache} "
                      f"--xlapy_cpu_runtime_cache_dir={runtime_dir or cache}"), \
            _fresh_inductor_cache():
        report["runtime_library"] = _runtime_library(runtime_dir, out)
        limits = machine.measure(elements=1 << (12 if tiny else 25), gemm=32 if tiny else 2048,
                                 budget=0.2 if tiny else 3.0)
        print(f"machine: {limits.describe()}", file=out)
        print("peers: " + ", ".join(f"{k} {v}" for k, v in report["peers"].items()), file=out)
        report["machine"] = limits.to_json()
        results = []
        for workload in chosen:
            print(f"  running {workload.name} ...", file=out, flush=True)
            results.append(run_workload(workload, limits, tiny=tiny, budget=budget,
                                        min_time=0.005 if tiny else 0.05))
        report["workloads"] = [r.to_json() for r in results]
        print("\n" + table(results), file=out)
        if not names or "memory" in names:
            fits = memory_budget.largest_batches(memory_budget_bytes, tiny=tiny)
            report["memory"] = {"budget_bytes": memory_budget_bytes,
                                "fits": [f.to_json() for f in fits]}
            print("\n" + memory_budget.report(fits, memory_budget_bytes), file=out)
    report["seconds"] = time.perf_counter() - started
    print(f"\nsuite finished in {report['seconds']:.0f} s", file=out)
    report["results"] = results
    return report


@contextlib.contextmanager
def _fresh_inductor_cache():
    """TORCHINDUCTOR_CACHE_DIR set to a fresh directory (Inductor reads it at
    each lookup), then restored."""
    key = "TORCHINDUCTOR_CACHE_DIR"
    before = os.environ.get(key)
    with tempfile.TemporaryDirectory(prefix="xlapy-bench-inductor-") as directory:
        os.environ[key] = directory
        try:
            yield
        finally:
            if before is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = before


def _peer_versions() -> dict[str, str]:
    versions = {"numpy": np.__version__, "xlapy": xlapy.__version__}
    for module in ("jax", "torch"):
        try:
            versions[module] = __import__(module).__version__
        except ImportError:
            versions[module] = "not installed"
    return versions


def write_json(report: dict, path: str) -> None:
    data = {k: v for k, v in report.items() if k != "results"}
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
