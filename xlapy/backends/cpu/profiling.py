"""Per-instruction timestamps of one execution: XLA's `--xla_hlo_profile`.

With the flag set, the entry function reads CLOCK_MONOTONIC (the clock of
Python's `time.monotonic_ns`) before and after each top-level instruction of
the entry computation — a fusion, a GEMM, a whole `while` loop — and stores
the pair into a global array of the object, `xlapy_profile`. After a call
the executable reads the array back as `ProfileEvent`s, which
`xlapy.profiler` writes as a Chrome trace. The clock costs ~20 ns a read, so
profiling changes the timings of microsecond kernels only.

Executions of one executable from several threads at once share the array:
the events then mix; profile from one thread.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import llvmlite.ir as ir

from xlapy.backends.cpu.kernels.heap import libc
from xlapy.codegen import ir_types as T

SYMBOL = "xlapy_profile"
_CLOCK_MONOTONIC = 1   # Linux's and glibc's value
_TIMESPEC = ir.LiteralStructType([T.I64, T.I64])


@dataclass(frozen=True)
class ProfileEvent:
    """One instruction's run: its name, opcode and monotonic start/end in ns."""

    name: str
    opcode: str
    start_ns: int
    end_ns: int

    @property
    def seconds(self) -> float:
        return (self.end_ns - self.start_ns) * 1e-9


class ProfileCounters:
    """Emits the timestamp stores around each profiled instruction of the entry."""

    def __init__(self, module: ir.Module, entry_builder: ir.IRBuilder, slots: int):
        self._module = module
        self._b = entry_builder
        t = ir.ArrayType(T.I64, max(2 * slots, 1))
        self._global = ir.GlobalVariable(module, t, SYMBOL)
        self._global.initializer = ir.Constant(t, None)
        self._global.align = 64
        self.names: list[str] = []
        with entry_builder.goto_entry_block():
            entry_builder.position_at_start(entry_builder.function.entry_basic_block)
            self._timespec = entry_builder.alloca(_TIMESPEC)

    def begin(self, name: str) -> int:
        """Store the start time of the instruction `name`; returns its slot."""
        slot = len(self.names)
        self.names.append(name)
        self._store(2 * slot)
        return slot

    def end(self, slot: int) -> None:
        self._store(2 * slot + 1)

    def _store(self, index: int) -> None:
        b = self._b
        clock = libc(self._module, "clock_gettime", T.I32, [T.I32, T.I8P])
        b.call(clock, [ir.Constant(T.I32, _CLOCK_MONOTONIC), b.bitcast(self._timespec, T.I8P)])
        zero = ir.Constant(T.I32, 0)
        seconds = b.load(b.gep(self._timespec, [zero, zero]))
        nanos = b.load(b.gep(self._timespec, [zero, ir.Constant(T.I32, 1)]))
        now = b.add(b.mul(seconds, ir.Constant(T.I64, 1_000_000_000)), nanos)
        slot = b.gep(self._global, [ir.Constant(T.I64, 0), ir.Constant(T.I64, index)])
        b.store(now, slot, align=8)


def read_events(address: int, instructions: list) -> list[ProfileEvent]:
    """The events of the last execution from the counters at `address` (none
    before the first execution)."""
    counters = (ctypes.c_int64 * (2 * len(instructions))).from_address(address)
    events = []
    for i, instruction in enumerate(instructions):
        start, end = counters[2 * i], counters[2 * i + 1]
        if start and end >= start:
            events.append(ProfileEvent(instruction.name, instruction.opcode.value, start, end))
    return events
