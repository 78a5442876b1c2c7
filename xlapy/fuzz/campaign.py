"""Differential campaigns: many programs, every execution sandboxed, one tally.

Two campaigns share this runner:

- `jax`: random JAX programs (`jax_programs`), lowered by JAX to HLO twice
  (unoptimised, and as XLA's CPU compiler optimised it), each text run by
  xlapy's interpreter and its CPU backend and compared with JAX's own
  result. JAX runs in a sandboxed worker too (`jax_jobs`): XLA can crash.
- `hlo`: xlapy's own random HLO programs (`hlo_programs`), compiled for the
  CPU (under guard pages by default) and compared with the interpreter.

Each execution is one job in a `Sandbox` worker with a timeout, so a hang
or a crash is a counted outcome with its program saved, never a stuck or
dead campaign. Outcomes: ok, mismatch (numbers differ), error (an exception:
a compile error on a valid program is a failure too), hang, crash.
Failures are written to `out_dir` as HLO text + arguments (.npz) + a note,
ready for `xlapy fuzz reduce`.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

import numpy as np

from xlapy.fuzz import jax_jobs, jobs
from xlapy.fuzz.compare import mismatch
from xlapy.fuzz.hlo_programs import arguments, random_program
from xlapy.fuzz.sandbox import Sandbox
from xlapy.hlo import parse

OUTCOMES = ("ok", "mismatch", "error", "hang", "crash", "xla_differs", "xla_crash")
FAILURES = ("mismatch", "error", "hang", "crash")
"""xla_differs is not one: XLA's compiled program disagreed with XLA's own op-by-op
result, and xlapy agreed with the op-by-op one (an XLA bug, kept for the record);
nor is xla_crash: JAX or XLA crashed or hung drawing or lowering the program, in
its sandboxed worker, before xlapy saw it."""


@dataclass
class Execution:
    program: int
    form: str
    backend: str
    outcome: str
    detail: str = ""
    seconds: float = 0.0


@dataclass
class Summary:
    campaign: str
    programs: int = 0
    executions: int = 0
    outcomes: Counter = field(default_factory=Counter)
    by_route: dict = field(default_factory=dict)
    failures: list = field(default_factory=list)
    seconds: float = 0.0
    generation_skipped: int = 0

    def add(self, execution: Execution) -> None:
        self.executions += 1
        self.outcomes[execution.outcome] += 1
        route = f"{execution.form}/{execution.backend}"
        self.by_route.setdefault(route, Counter())[execution.outcome] += 1
        if execution.outcome != "ok":
            self.failures.append(execution)

    @property
    def failed(self) -> int:
        return sum(self.outcomes[o] for o in FAILURES)

    def table(self) -> str:
        lines = [f"{self.campaign} campaign: {self.programs} programs, {self.executions} "
                 f"executions in {self.seconds:.0f} s"
                 + (f" ({self.generation_skipped} programs JAX itself could not lower)"
                    if self.generation_skipped else ""),
                 f"{'route':28s}" + "".join(f"{o:>12s}" for o in OUTCOMES)]
        for route, counts in sorted(self.by_route.items()):
            lines.append(f"{route:28s}" + "".join(f"{counts[o]:>12d}" for o in OUTCOMES))
        lines.append(f"{'total':28s}" + "".join(f"{self.outcomes[o]:>12d}" for o in OUTCOMES))
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"campaign": self.campaign, "programs": self.programs,
                "executions": self.executions, "outcomes": dict(self.outcomes),
                "by_route": {k: dict(v) for k, v in self.by_route.items()},
                "seconds": self.seconds, "generation_skipped": self.generation_skipped,
                "failures": [asdict(f) for f in self.failures]}


class _Workers:
    """One sandbox per worker thread; jobs go to whichever thread is free."""

    def __init__(self, count: int, environment: dict[str, str]):
        self._local = threading.local()
        self._environment = environment
        self._boxes: list[Sandbox] = []
        self._lock = threading.Lock()
        self.pool = ThreadPoolExecutor(count)

    def sandbox(self) -> Sandbox:
        box = getattr(self._local, "box", None)
        if box is None:
            box = self._local.box = Sandbox(self._environment)
            with self._lock:
                self._boxes.append(box)
        return box

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        for box in self._boxes:
            box.close()


def _save(out_dir: Path | None, name: str, text: str, args: list, note: str) -> None:
    if out_dir is None:
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{name}.hlo").write_text(text)
    np.savez(out_dir / f"{name}.npz", *args)
    (out_dir / f"{name}.txt").write_text(note)


def _verdict(outcome, route: tuple[int, str, str], timeout: float) -> Execution:
    program, form, backend = route
    if outcome.status == "ok":
        problem = outcome.value
        return Execution(program, form, backend, "mismatch" if problem else "ok",
                         problem or "", outcome.seconds)
    status = {"error": "error", "hang": "hang", "crash": "crash"}[outcome.status]
    return Execution(program, form, backend, status, outcome.error, outcome.seconds)


def _environment(guard_pages: bool) -> dict[str, str]:
    flags = "--xlapy_cpu_cache_dir=off"
    if guard_pages:
        flags += " --xlapy_cpu_guard_pages"
    return {"XLAPY_FLAGS": flags}


def _run(name: str, numbers: range, jobs_for, workers: int, guard_pages: bool,
         out_dir, log, every: int) -> Summary:
    """The loop both campaigns share: `jobs_for(number, pool, out)` gives the jobs of
    program `number` (callables returning an Execution; None: no program), which
    run on the worker threads while the next program is drawn."""
    out = Path(out_dir) if out_dir else None
    summary = Summary(name)
    start = time.perf_counter()
    pool = _Workers(workers, _environment(guard_pages))
    pending = []
    try:
        for number in numbers:
            program_jobs = jobs_for(number, pool, out)
            if program_jobs is None:
                summary.generation_skipped += 1
                continue
            summary.programs += 1
            pending += [pool.pool.submit(job) for job in program_jobs]
            pending = _drain(pending, summary, log, limit=4 * workers)
            if summary.programs % every == 0:
                _progress(summary, start, log)
        _drain(pending, summary, log, limit=0)
    finally:
        pool.close()
    summary.seconds = time.perf_counter() - start
    _write_summary(out, summary)
    return summary


def run_jax_campaign(count: int, seed: int = 0, workers: int = 2, timeout: float = 120.0,
                     out_dir: str | Path | None = None, log=print,
                     guard_pages: bool = False) -> Summary:
    """`count` random JAX programs from `seed` on; see the module docstring."""
    def run(pool, out, number, form, backend, lowered, program):
        text, expected = lowered[form], lowered["expected"]
        job = (jobs.against_expected, text, program.arguments, backend, expected)
        outcome = pool.sandbox().run(*job, timeout=timeout)
        execution = _verdict(outcome, (number, form, backend), timeout)
        if execution.outcome == "mismatch":
            execution = _second_opinion(execution, pool, program, job, expected, timeout)
        if execution.outcome != "ok":
            _save(out, f"jax-{number}-{form}-{backend}", text, program.arguments,
                  f"{execution.outcome}: {execution.detail}\n\n{program.describe()}")
        return execution

    def jobs_for(number, pool, out):
        outcome = pool.sandbox().run(jax_jobs.draw, number, timeout=timeout)
        if outcome.status == "error":  # JAX's own limits are not ours to count
            log(f"  program {number}: JAX could not make it: {outcome.error}")
            return None
        if not outcome.ok:   # XLA crashed or hung on its own program
            crashed = Execution(number, "lowering", "xla", "xla_crash", outcome.error,
                                outcome.seconds)
            return [lambda: crashed]
        program, lowered = outcome.value
        return [partial(run, pool, out, number, form, backend, lowered, program)
                for form in ("unoptimized", "optimized") for backend in ("interpreter", "cpu")]

    return _run("jax", range(seed, seed + count), jobs_for, workers, guard_pages, out_dir,
                log, every=100)


def _second_opinion(execution: Execution, pool: _Workers, program, job, expected,
                    timeout: float) -> Execution:
    """A module whose results miss XLA's may be right: XLA's optimiser can change what
    a program computes (the unoptimised text then differs), and XLA's code for its
    own optimised module can be wrong (an in-place dynamic-update-slice reading
    what it already overwrote: the optimised text, run faithfully, differs too).
    When JAX op by op (each operation compiled alone) disagrees with JAX's
    whole-program result and xlapy agrees with op by op, the execution is
    `xla_differs`, not a failure."""
    opinion = pool.sandbox().run(jax_jobs.op_by_op, program, timeout=timeout)
    if not opinion.ok:   # no second opinion to be had
        return execution
    eager = opinion.value
    if mismatch(expected, eager) is None:
        return execution   # XLA agrees with itself: the mismatch is ours
    outcome = pool.sandbox().run(job[0], *job[1:4], eager, timeout=timeout)
    if outcome.ok and outcome.value is None:
        return Execution(execution.program, execution.form, execution.backend,
                         "xla_differs", "XLA's compiled program differs from XLA op by op; "
                         "xlapy agrees with op by op. " + execution.detail, execution.seconds)
    return execution


def run_hlo_campaign(count: int, seed: int = 0, workers: int = 2, timeout: float = 60.0,
                     out_dir: str | Path | None = None, log=print,
                     guard_pages: bool = True) -> Summary:
    """`count` of xlapy's random HLO programs from `seed` on, CPU vs interpreter."""
    def run(pool, out, number, text, args):
        outcome = pool.sandbox().run(jobs.against_interpreter, text, args, "cpu",
                                     timeout=timeout)
        execution = _verdict(outcome, (number, "hlo", "cpu"), timeout)
        if execution.outcome != "ok":
            _save(out, f"hlo-{number}", text, args, f"{execution.outcome}: {execution.detail}")
        return execution

    def jobs_for(number, pool, out):
        text = random_program(number)
        return [partial(run, pool, out, number, text, arguments(parse(text), number))]

    return _run("hlo", range(seed, seed + count), jobs_for, workers, guard_pages, out_dir,
                log, every=500)


def _drain(pending: list, summary: Summary, log, limit: int) -> list:
    """Wait until at most `limit` jobs are pending, tallying finished ones in order."""
    while len(pending) > limit or (pending and pending[0].done()):
        execution = pending.pop(0).result()
        summary.add(execution)
        if execution.outcome != "ok":
            log(f"  program {execution.program} {execution.form}/{execution.backend}: "
                f"{execution.outcome}: {_first_line(execution.detail)}")
    return pending


def _progress(summary: Summary, start: float, log) -> None:
    elapsed = time.perf_counter() - start
    counts = ", ".join(f"{o} {summary.outcomes[o]}" for o in OUTCOMES)
    log(f"{summary.programs} programs, {summary.executions} executions, {elapsed:.0f} s: "
        f"{counts}")


def _write_summary(out: Path | None, summary: Summary) -> None:
    if out is None:
        return
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{summary.campaign}-summary.json").write_text(json.dumps(summary.to_json(),
                                                                     indent=1))


def _first_line(text: str) -> str:
    return text.splitlines()[0][:200] if text else ""
