"""Timelines of compiled executions, as Chrome traces.

`profile(fn, *args, runs=...)` compiles `fn` with `--xla_hlo_profile` (each
top-level instruction of the compiled module timed as it runs), runs it and
returns a `Timeline`: one event per kernel per run, each named after its HLO
instruction and carrying its opcode and the instruction's text.
`Timeline.write(path)` saves the Chrome trace format that chrome://tracing
and https://ui.perfetto.dev open — the `timeline.ctf.json` of XLA's seeds.

    timeline = xlapy.profiler.profile(step, params, batch, runs=10)
    timeline.write("timeline.ctf.json")
    print(timeline.summary())
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from xlapy.flags import flags_set
from xlapy.jit import JitFunction, jit


@dataclass
class Timeline:
    """The kernels of several runs of one compiled module, in run order."""

    module_name: str
    runs: list[tuple[int, int, list]] = field(default_factory=list)
    """(call start ns, call end ns, the run's ProfileEvents) per run."""
    texts: dict[str, str] = field(default_factory=dict)
    """instruction name -> its HLO text, for the event details."""

    def kernel_seconds(self) -> dict[str, float]:
        """Median seconds of each kernel over the runs, slowest first."""
        times = defaultdict(list)
        for _, _, events in self.runs:
            for e in events:
                times[e.name].append(e.seconds)
        medians = {name: sorted(t)[len(t) // 2] for name, t in times.items()}
        return dict(sorted(medians.items(), key=lambda kv: -kv[1]))

    def summary(self, top: int = 8) -> str:
        lines = [f"{'kernel':<32} {'median':>10}"]
        for name, seconds in list(self.kernel_seconds().items())[:top]:
            lines.append(f"{name:<32} {seconds * 1e6:8.1f} us")
        return "\n".join(lines)

    def chrome_trace(self) -> dict:
        """The trace as a JSON-able dict: a "call" event per run (the whole
        foreign call, Python's side included) over one event per kernel."""
        if not self.runs:
            return {"traceEvents": [], "displayTimeUnit": "ns"}
        origin = self.runs[0][0]
        pid = 1
        events = [{"name": "process_name", "ph": "M", "pid": pid,
                   "args": {"name": f"xlapy cpu: {self.module_name}"}},
                  {"name": "thread_name", "ph": "M", "pid": pid, "tid": 0,
                   "args": {"name": "calls"}},
                  {"name": "thread_name", "ph": "M", "pid": pid, "tid": 1,
                   "args": {"name": "kernels"}}]
        for number, (start, end, kernels) in enumerate(self.runs):
            events.append(_complete(f"run {number}", "call", start - origin, end - start, pid, 0,
                                    {"kernels": len(kernels)}))
            for e in kernels:
                events.append(_complete(e.name, e.opcode, e.start_ns - origin,
                                        e.end_ns - e.start_ns, pid, 1,
                                        {"opcode": e.opcode, "hlo": self.texts.get(e.name, "")}))
        return {"traceEvents": events, "displayTimeUnit": "ns"}

    def write(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.chrome_trace()))
        return path


def _complete(name, category, start_ns, duration_ns, pid, tid, args) -> dict:
    """A Chrome trace "complete" event; times in microseconds."""
    return {"name": name, "cat": category, "ph": "X", "ts": start_ns / 1e3,
            "dur": duration_ns / 1e3, "pid": pid, "tid": tid, "args": args}


def profile(fn, *args, runs: int = 10, backend: str | None = None) -> Timeline:
    """Compile `fn` for `args` with per-kernel timing and run it `runs` times
    (after one untimed warm-up run); the module and its results are discarded.

    `fn` is a Python function or a `jit`-wrapped one; its usual compilation
    cache is left alone (the profiled module is a compilation of its own).
    """
    wrapped = fn if isinstance(fn, JitFunction) else jit(fn, backend=backend)
    with flags_set("--xla_hlo_profile"):
        compiled = wrapped.lower(*args).compile()
    executable = compiled.executable
    if not hasattr(executable, "last_profile"):
        raise ValueError(f"the {executable.backend} backend cannot profile kernels; "
                         "use the cpu backend")
    texts = {i.name: i.to_text() for i in executable.module.entry_computation.instructions}
    timeline = Timeline(executable.module.name, texts=texts)
    compiled(*args)
    for _ in range(runs):
        start = time.monotonic_ns()
        compiled(*args)
        end = time.monotonic_ns()
        timeline.runs.append((start, end, executable.last_profile()))
    return timeline
