"""What the compile report shows, gathered by compiling the module once more
with a hook on every pass: the user's source lines behind each instruction,
the passes that changed the module (a diff each, and its time), the fusion
decisions with their reasons, the compiled module's kernels with their cost
and the floor this machine puts under them (and, profiled, their measured
time), the values live over the schedule, and the lowering fallbacks."""

from __future__ import annotations

import copy
import difflib
import functools
import linecache
import re
import time
from dataclasses import dataclass, field

import numpy as np

from xlapy.analysis.cost_analysis import (
    BYTES,
    FLOPS,
    TRANSCENDENTALS,
    instruction_costs,
    shape_size,
)
from xlapy.backends import get_backend
from xlapy.flags import debug_options, flags_set
from xlapy.hlo.ir import HloInstruction, HloModule
from xlapy.hlo.opcode import Opcode
from xlapy.passes.default_pipeline import default_pipeline
from xlapy.passes.pipeline import PassEvent, RunOptions

_METADATA = re.compile(r", metadata=\{[^}]*\}")
_NO_KERNEL = frozenset({Opcode.PARAMETER, Opcode.CONSTANT, Opcode.TUPLE,
                        Opcode.GET_TUPLE_ELEMENT, Opcode.BITCAST, Opcode.AFTER_ALL})


@dataclass
class PassStep:
    pipeline: str
    name: str
    seconds: float
    diff: list[str]            # unified diff lines against the previous stage


@dataclass
class Kernel:
    name: str
    opcode: str
    text: str
    fused: list[str]           # the opcodes inside a fusion
    flops: float
    bytes: float
    floor_seconds: float
    measured_seconds: float | None = None


@dataclass
class Value:
    name: str
    size: int
    start: int                 # schedule positions, first and last alive
    end: int
    kind: str                  # "parameter", "output" or "temporary"


@dataclass
class ReportData:
    module_name: str
    backend: str
    original_text: str
    optimized_text: str
    sources: list[tuple[str, int, str, list[str]]] = field(default_factory=list)
    """(file, line, the line's code, the instructions it produced)."""
    passes: list[PassStep] = field(default_factory=list)
    compile_seconds: float = 0.0
    decisions: list[tuple[str, str, str, str]] = field(default_factory=list)
    """(pass, producer, consumer, reason)."""
    nodes: list[tuple[str, str, str]] = field(default_factory=list)
    """The compiled entry computation: (name, opcode, label)."""
    edges: list[tuple[str, str]] = field(default_factory=list)
    values: list[Value] = field(default_factory=list)
    kernels: list[Kernel] = field(default_factory=list)
    machine: tuple[float, float] = (0.0, 0.0)
    """Measured here: (FLOP/s of a float32 matrix product, bytes/s of a large copy)."""
    profiled: bool = False
    fallbacks: list[tuple[str, str]] = field(default_factory=list)
    assignment_text: str = ""

    @property
    def peak(self) -> tuple[int, int]:
        """(bytes live at the worst point of the schedule, that position)."""
        length = max((v.end for v in self.values), default=-1) + 1
        live = [0] * max(length, 1)
        for v in self.values:
            for t in range(v.start, v.end + 1):
                live[t] += v.size
        at = int(np.argmax(live))
        return live[at], at


def collect(module: HloModule, backend: str = "cpu", arguments: list | None = None,
            profile_runs: int = 0) -> ReportData:
    """Compile `module` (left as it is) and gather everything the report shows."""
    data = ReportData(module.name, backend, module.to_text(), "")
    data.sources = _sources(module)
    optimized = _optimized(module, data)
    data.optimized_text = optimized.to_text()
    _graph(optimized, data)
    _values(optimized, data)
    flags = f"--xla_hlo_profile={str(profile_runs > 0).lower()}"
    with flags_set(flags):
        executable = get_backend(backend).compile(optimized)
    data.fallbacks = [(i.name, why) for i, why in zip(getattr(executable, "fallbacks", []),
                                                       getattr(executable, "fallback_reasons",
                                                               []))]
    assignment = getattr(executable, "assignment", None)
    data.assignment_text = assignment.to_text() if assignment is not None else ""
    data.machine = machine_rates()
    data.kernels = _kernels(optimized, data.machine)
    if profile_runs > 0 and hasattr(executable, "last_profile") and arguments is not None:
        _measure(executable, arguments, profile_runs, data)
    return data


def _sources(module: HloModule) -> list:
    by_line: dict[tuple[str, int], list[str]] = {}
    for computation in module.computations:
        for instruction in computation.instructions:
            metadata = instruction.attrs.get("metadata") or {}
            file, line = metadata.get("source_file"), metadata.get("source_line")
            if file and line:
                text = _METADATA.sub("", instruction.to_text())
                by_line.setdefault((str(file), int(line)), []).append(text)
    return [(file, line, linecache.getline(file, line).rstrip() or "(source not found)", hlo)
            for (file, line), hlo in sorted(by_line.items())]


def _optimized(module: HloModule, data: ReportData) -> HloModule:
    """A copy through the default pipeline, each changed pass's diff and time kept."""
    optimized = copy.deepcopy(module)
    previous = [optimized.to_text().splitlines(), time.perf_counter()]

    def hook(event: PassEvent) -> None:
        now = time.perf_counter()
        seconds, previous[1] = now - previous[1], now
        if event.pass_ is None:
            return
        decisions = getattr(event.pass_, "decisions", None) or ()
        for decision in decisions:
            parts = [getattr(p, "name", None) or str(p) for p in decision] \
                if isinstance(decision, tuple) else [str(decision)]
            parts = (parts + ["", "", ""])[:3]
            data.decisions.append((event.after, *parts))
        if not event.changed:
            return
        text = event.module.to_text().splitlines()
        diff = list(difflib.unified_diff(previous[0], text, "before", f"after {event.after}",
                                         n=1, lineterm=""))
        previous[0] = text
        data.passes.append(PassStep(event.pipeline, event.after, seconds, diff))
        previous[1] = time.perf_counter()   # (not the diff's time)

    start = time.perf_counter()
    options = RunOptions.from_flags(debug_options(), hooks=(hook,))
    default_pipeline().run_with(optimized, options)
    data.compile_seconds = time.perf_counter() - start
    return optimized


def _graph(module: HloModule, data: ReportData) -> None:
    entry = module.entry_computation
    for instruction in entry.instructions:
        if instruction.opcode is Opcode.CONSTANT:
            continue
        data.nodes.append((instruction.name, instruction.opcode.value, kernel_label(instruction,
                                                                                    unique=True)))
        for operand in dict.fromkeys(instruction.operands):
            if operand.opcode is not Opcode.CONSTANT:
                data.edges.append((operand.name, instruction.name))


def _values(module: HloModule, data: ReportData) -> None:
    """Each value of the entry computation alive from its definition to its last use
    (parameters from the start, outputs to the end), in schedule order."""
    entry = module.entry_computation
    order = {id(i): k for k, i in enumerate(entry.instructions)}
    last = {id(i): order[id(i)] for i in entry.instructions}
    for instruction in entry.instructions:
        for operand in instruction.operands:
            last[id(operand)] = max(last[id(operand)], order[id(instruction)])
    outputs = {id(entry.root_instruction)} | {id(o) for o in entry.root_instruction.operands
                                             if entry.root_instruction.opcode is Opcode.TUPLE}
    end = len(entry.instructions) - 1
    for instruction in entry.instructions:
        if not instruction.shape.is_array or instruction.opcode in (
                Opcode.GET_TUPLE_ELEMENT, Opcode.BITCAST, Opcode.CONSTANT):
            continue
        kind = "parameter" if instruction.opcode is Opcode.PARAMETER else \
            "output" if id(instruction) in outputs else "temporary"
        start = 0 if kind == "parameter" else order[id(instruction)]
        stop = end if kind == "output" else last[id(instruction)]
        data.values.append(Value(instruction.name, shape_size(instruction.shape), start, stop,
                                 kind))


def _kernels(module: HloModule, machine: tuple[float, float]) -> list[Kernel]:
    flop_rate, byte_rate = machine
    kernels = []
    for instruction in module.entry_computation.instructions:
        if instruction.opcode in _NO_KERNEL:
            continue
        costs = instruction_costs(instruction)
        flops = costs.get(FLOPS, 0.0) + costs.get(TRANSCENDENTALS, 0.0)
        moved = costs.get(BYTES, 0.0)
        floor = max(flops / flop_rate if flop_rate else 0.0,
                    moved / byte_rate if byte_rate else 0.0)
        kernels.append(Kernel(instruction.name, instruction.opcode.value,
                              _short(instruction), _fused(instruction), flops, moved, floor))
    return kernels


def _fused(instruction: HloInstruction) -> list[str]:
    if instruction.opcode is not Opcode.FUSION:
        return []
    body = instruction.called_computations[0]
    return [i.opcode.value for i in body.instructions if i.opcode is not Opcode.PARAMETER]


def kernel_label(instruction: HloInstruction, unique: bool = False) -> str:
    """`kLoop: exponential, multiply, tanh` for a fusion (its kind and fused opcodes,
    each once with `unique`), else the opcode."""
    if instruction.opcode is not Opcode.FUSION:
        return instruction.opcode.value
    ops = _fused(instruction)
    kind = instruction.attrs.get("kind")
    return f"{getattr(kind, 'value', kind)}: {', '.join(dict.fromkeys(ops) if unique else ops)}"


def _short(instruction: HloInstruction) -> str:
    text = instruction.to_text()
    return text if len(text) <= 160 else text[:157] + "..."


def _measure(executable, arguments: list, runs: int, data: ReportData) -> None:
    times: dict[str, list[float]] = {}
    executable.execute(*arguments)   # warm
    for _ in range(runs):
        executable.execute(*arguments)
        for event in executable.last_profile():
            times.setdefault(event.name, []).append(event.seconds)
    for kernel in data.kernels:
        if kernel.name in times:
            samples = sorted(times[kernel.name])
            kernel.measured_seconds = samples[len(samples) // 2]
    data.profiled = True


@functools.cache
def machine_rates() -> tuple[float, float]:
    """(FLOP/s, bytes/s) this machine reaches with NumPy: a 512³ float32 matrix
    product and a 32 MiB copy, best of five (measured once per process)."""
    a = np.ones((512, 512), np.float32)
    flops = _best(lambda: a @ a)
    source = np.ones(8 << 20, np.float32)
    target = np.empty_like(source)
    copy = _best(lambda: np.copyto(target, source))
    return 2 * 512 ** 3 / flops, 2 * source.nbytes / copy


def _best(fn) -> float:
    fn()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best
