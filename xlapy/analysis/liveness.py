"""Liveness of logical buffers over a module's schedule.

One small analysis playing the parts of XLA's TuplePointsToAnalysis,
HloAliasAnalysis and HloLiveRange: which memory each instruction output is,
and when in the schedule that memory is first written and last read. Buffer
assignment and the memory scheduler are built on it.

The model, and why:

* A **logical buffer** is one array's memory. Tuples are not memory: every
  array leaf of a tuple-shaped output is its own buffer (XLA also allocates a
  small pointer table per tuple; we leave those out, they are bytes).
* Instructions that only forward memory define nothing: `get-tuple-element`,
  `tuple`, `bitcast`, `domain`, `add-dependency`, `opt-barrier`, and a
  `reshape` between row-major layouts (XLA rewrites exactly those into
  bitcasts after layout assignment; `bitcast_reshapes=False` turns this off).
  Entry parameters and constants define buffers of their own kinds, which
  buffer assignment keeps out of the temporary arena.
* Only computations reached through control flow (`call`, `while`,
  `conditional`) hold buffers. Fusion bodies, reducers, comparators and other
  applied computations never allocate: a fusion's outputs are buffers of the
  fusion instruction (XLA: thread-local or in registers).
* The schedule is each computation's instruction order (a scheduled module
  prints its sequence). Control flow is flattened as XLA's HloLiveRange does:
  a control-flow instruction takes a start time, then its called computations
  run, then it takes an end time. A value is live from the start time of its
  earliest definition to the time of its last read, inclusive; an operand and
  the output of one instruction are live at the same time.
* Sharing across computations follows XLA's alias analysis where it is safe
  without copy insertion, and copies otherwise (conservative, never wrong):
  a `while` owns its loop state, which is also its body's and condition's
  parameter (live from the loop's start to the last read of its result); the
  body root is copied into the state at the end of each iteration and the
  init operand into it at the start (buffer assignment may place a body root
  leaf in the state's own memory when the state leaf is dead from the write of
  that leaf on, so the copy is a no-op; here the root leaf stays a buffer of
  its own, live within the body). A `call`'s result is its callee's root
  and the callee's parameters are the call's operands; a `conditional`'s
  branch parameters are its operands and its result is a copy of the taken
  branch's root. A computation called from several places gets copies in and
  out instead of aliases (XLA would flatten the call graph first).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

Index = tuple[int, ...]
Source = tuple[HloInstruction, Index]
"""A defining position: the instruction that writes a buffer, and the leaf index."""

FORWARDING = frozenset({
    Opcode.BITCAST, Opcode.GET_TUPLE_ELEMENT, Opcode.TUPLE, Opcode.DOMAIN,
    Opcode.ADD_DEPENDENCY, Opcode.OPTIMIZATION_BARRIER,
})
"""Ops whose output is (part of) an operand's memory, never new memory."""

CONTROL_FLOW_OPS = frozenset({Opcode.CALL, Opcode.WHILE, Opcode.CONDITIONAL})
"""Ops whose called computations run in the schedule and so hold buffers."""


class BufferKind(enum.Enum):
    """Where a buffer's memory comes from; only TEMP buffers share the arena."""

    PARAMETER = "parameter"
    CONSTANT = "constant"
    OUTPUT = "output"
    TEMP = "temp"


# -- per computation: which buffers each output leaf is ----------------------------------
def is_bitcast_reshape(instruction: HloInstruction) -> bool:
    """A reshape that only reinterprets bytes: both sides row-major (or unlaid-out)."""
    return (instruction.opcode is Opcode.RESHAPE and _row_major(instruction.shape)
            and _row_major(instruction.operands[0].shape))


def _row_major(shape: Shape) -> bool:
    layout = shape.layout
    return layout is None or (not layout.extras
                              and layout.minor_to_major == tuple(range(shape.rank - 1, -1, -1)))


def forwards(instruction: HloInstruction, bitcast_reshapes: bool = True) -> bool:
    """True when `instruction` defines no memory of its own."""
    return instruction.opcode in FORWARDING or (bitcast_reshapes
                                                and is_bitcast_reshape(instruction))


def has_storage(shape: Shape) -> bool:
    """Array leaves are memory; tokens and opaque values are not."""
    return shape.is_array


def points_to(computation: HloComputation,
              bitcast_reshapes: bool = True) -> dict[HloInstruction, dict[Index, Source]]:
    """For each instruction, leaf index -> the defining position of its memory.

    Local to the computation: parameters and control-flow results define
    their own buffers here; `Liveness` joins them across computations.
    """
    result: dict[HloInstruction, dict[Index, Source]] = {}
    for instruction in computation.instructions:
        result[instruction] = _points_to_one(instruction, result, bitcast_reshapes)
    return result


def _points_to_one(instruction: HloInstruction, known: dict, bitcast_reshapes: bool) -> dict:
    op = instruction.opcode
    if op is Opcode.GET_TUPLE_ELEMENT:
        i = instruction.attr("index")
        inner = known[instruction.operands[0]]
        return {index[1:]: source for index, source in inner.items() if index[:1] == (i,)}
    if op is Opcode.TUPLE:
        return {(i,) + index: source for i, operand in enumerate(instruction.operands)
                for index, source in known[operand].items()}
    if forwards(instruction, bitcast_reshapes):
        return dict(known[instruction.operands[0]])
    return {index: (instruction, index) for index, leaf in instruction.shape.leaves()
            if has_storage(leaf)}


def source_size(source: Source) -> int:
    instruction, index = source
    return instruction.shape.subshape(index).byte_size


# -- the module-wide analysis ------------------------------------------------------------
@dataclass(eq=False)
class LogicalBuffer:
    """One array's memory and its live range [start, end] in schedule time.

    `defining` is the earliest write (instruction, leaf index); `positions` every
    instruction output that is this memory; `parameter` (number, index) for an
    entry parameter; `live_out` when the entry's result holds it.
    """

    id: int
    defining: Source
    shape: Shape
    size: int
    kind: BufferKind
    start: int
    end: int
    live_out: bool = False
    parameter: tuple[int, Index] | None = None
    positions: list[Source] = field(default_factory=list)

    @property
    def instruction(self) -> HloInstruction:
        return self.defining[0]

    @property
    def index(self) -> Index:
        return self.defining[1]

    def overlaps(self, other: LogicalBuffer) -> bool:
        """Live at a common time (so they may not share memory)."""
        return self.start <= other.end and other.start <= self.end

    def short_name(self) -> str:
        """XLA's HloValue spelling: `<id name{index}>`."""
        index = "{" + ",".join(map(str, self.index)) + "}" if self.index else ""
        return f"<{self.id} {self.instruction.name}{index}>"

    def __repr__(self) -> str:
        return (f"<LogicalBuffer {self.short_name()} {self.kind.value} size={self.size} "
                f"live=[{self.start},{self.end}]>")


class _UnionFind:
    def __init__(self):
        self.parent: dict = {}

    def find(self, key):
        self.parent.setdefault(key, key)
        root = key
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[key] != root:
            self.parent[key], key = root, self.parent[key]
        return root

    def union(self, a, b) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


class Liveness:
    """Logical buffers of a module and their live ranges over its schedule.

    `sequence[t]` is the instruction running at time t (a control-flow
    instruction appears at its start and at its end); `end_time` is one past
    the last instruction, where the entry's results are read.
    """

    def __init__(self, module: HloModule, *, bitcast_reshapes: bool = True):
        self.module = module
        self.bitcast_reshapes = bitcast_reshapes
        self.sequence: list[HloInstruction] = []
        self.computations: list[HloComputation] = []
        self._times: dict[HloInstruction, tuple[int, int]] = {}
        self._sites: dict[HloComputation, int] = {}
        self._last_time: dict[HloComputation, int] = {}
        self._flatten(module.entry_computation)
        self.end_time = len(self.sequence)
        self._points_to = {c: points_to(c, bitcast_reshapes) for c in self.computations}
        groups = self._join_computations()
        self.buffers: list[LogicalBuffer] = []
        self._at: dict[Source, LogicalBuffer] = {}
        self._build_buffers(groups)

    # -- queries ---------------------------------------------------------------------------
    def buffer_at(self, instruction: HloInstruction, index: Index = ()) -> LogicalBuffer | None:
        """The buffer holding leaf `index` of `instruction`'s output (None: no memory)."""
        return self._at.get((instruction, tuple(index)))

    def leaf_buffers(self, instruction: HloInstruction) -> list[tuple[Index, LogicalBuffer]]:
        """(leaf index, buffer) for every array leaf of `instruction`'s output."""
        pts = self._points_to[instruction.parent][instruction]
        return [(index, self._at[(instruction, index)]) for index in pts]

    def defined_by(self, instruction: HloInstruction) -> list[LogicalBuffer]:
        """Buffers whose earliest write is `instruction`."""
        return [b for b in self.buffers if b.instruction is instruction]

    def times(self, instruction: HloInstruction) -> tuple[int, int]:
        """(start, end) of `instruction` in schedule time; equal unless control flow."""
        return self._times[instruction]

    def holds_buffers(self, computation: HloComputation) -> bool:
        return computation in self._points_to

    def last_time(self, computation: HloComputation) -> int:
        """When a computation run by control flow ends (its root is read then)."""
        return self._last_time[computation]

    def read_times(self, buffer: LogicalBuffer, first: int, last: int) -> list[int]:
        """Times in [first, last] at which `buffer`'s bytes are read: by an instruction
        computing from its operands (forwarding ones only pass the memory on), or as
        the root of a called computation ending then (copied out or taken over by the
        caller). Buffer assignment asks it whether a value is still needed."""
        ending: dict[int, list[HloComputation]] = {}
        for computation, time in self._last_time.items():
            ending.setdefault(time, []).append(computation)
        times = []
        for time in range(max(first, 0), min(last, self.end_time - 1) + 1):
            instruction = self.sequence[time]
            readers = [] if forwards(instruction, self.bitcast_reshapes) \
                else list(instruction.operands)
            readers += [c.root_instruction for c in ending.get(time, ())]
            if any(leaf is buffer for reader in readers for _, leaf in self.leaf_buffers(reader)):
                times.append(time)
        return times

    def peak_live_bytes(self, kinds=(BufferKind.TEMP,)) -> int:
        """Most bytes of the given kinds live at one time, no fragmentation counted."""
        delta = [0] * (self.end_time + 2)
        for b in self.buffers:
            if b.kind in kinds:
                delta[b.start] += b.size
                delta[b.end + 1] -= b.size
        peak = live = 0
        for d in delta:
            live += d
            peak = max(peak, live)
        return peak

    # -- building: times -------------------------------------------------------------------
    def _flatten(self, computation: HloComputation) -> None:
        if computation not in self._sites:
            self.computations.append(computation)
        self._sites[computation] = self._sites.get(computation, 0) + 1
        for instruction in computation.instructions:
            start = self._tick(instruction)
            if instruction.opcode in CONTROL_FLOW_OPS:
                for callee in _control_flow_callees(instruction):
                    self._flatten(callee)
                    self._last_time[callee] = len(self.sequence) - 1
                end = self._tick(instruction)
            else:
                end = start
            old = self._times.get(instruction)
            self._times[instruction] = (start, end) if old is None else (old[0], end)

    def _tick(self, instruction: HloInstruction) -> int:
        self.sequence.append(instruction)
        return len(self.sequence) - 1

    # -- building: which sources are one buffer --------------------------------------------
    def _join_computations(self) -> _UnionFind:
        uf = _UnionFind()
        for computation in self.computations:
            for pts in self._points_to[computation].values():
                for source in pts.values():
                    uf.find(source)
        for computation in self.computations:
            for instruction in computation.instructions:
                if instruction.opcode in CONTROL_FLOW_OPS:
                    self._join_control_flow(instruction, uf)
        return uf

    def _join_control_flow(self, instruction: HloInstruction, uf: _UnionFind) -> None:
        op = instruction.opcode
        own = self._points_to[instruction.parent]
        if op is Opcode.WHILE:
            for callee in _control_flow_callees(instruction):
                if self._sites[callee] == 1:
                    self._join(uf, self._pts(callee.parameter(0)), own[instruction])
        elif op is Opcode.CALL:
            callee = _control_flow_callees(instruction)[0]
            if self._sites[callee] == 1:
                for param, operand in zip(callee.parameters, instruction.operands):
                    self._join(uf, self._pts(param), own[operand])
                self._join(uf, self._pts(callee.root_instruction), own[instruction])
        elif op is Opcode.CONDITIONAL:
            for branch, operand in zip(_control_flow_callees(instruction),
                                       instruction.operands[1:]):
                if self._sites[branch] == 1 and branch.num_parameters == 1:
                    self._join(uf, self._pts(branch.parameter(0)), own[operand])

    def _pts(self, instruction: HloInstruction) -> dict[Index, Source]:
        return self._points_to[instruction.parent][instruction]

    @staticmethod
    def _join(uf: _UnionFind, a: dict[Index, Source], b: dict[Index, Source]) -> None:
        for index, source in a.items():
            if index in b:
                uf.union(b[index], source)

    # -- building: live ranges -------------------------------------------------------------
    def _build_buffers(self, uf: _UnionFind) -> None:
        defs: dict = {}
        uses: dict = {}

        def define(source: Source, time: int) -> None:
            root = uf.find(source)
            defs[root] = min(defs.get(root, time), time)

        def use(source: Source, time: int) -> None:
            root = uf.find(source)
            uses[root] = max(uses.get(root, time), time)

        for computation in self.computations:
            self._collect(computation, define, use)
        entry = self.module.entry_computation
        live_out = {uf.find(s) for s in self._pts(entry.root_instruction).values()}
        for source in self._pts(entry.root_instruction).values():
            use(source, self.end_time)
        members: dict = {}
        for computation in self.computations:
            for instruction, pts in self._points_to[computation].items():
                for index, source in pts.items():
                    members.setdefault(uf.find(source), []).append((instruction, index))
        order = sorted(defs, key=lambda root: (defs[root], _order_key(root)))
        for number, root in enumerate(order):
            self._make_buffer(number, members[root], defs[root],
                              max(uses.get(root, defs[root]), defs[root]), root in live_out)

    def _collect(self, computation: HloComputation, define, use) -> None:
        pts = self._points_to[computation]
        for instruction in computation.instructions:
            start, end = self._times[instruction]
            for source in pts[instruction].values():
                if source[0] is instruction:
                    define(source, start)
            read_at = start if instruction.opcode is Opcode.WHILE else end
            for operand in instruction.operands:
                for source in pts[operand].values():
                    use(source, read_at)
            if instruction.opcode in CONTROL_FLOW_OPS:
                for source in pts[instruction].values():
                    use(source, end)  # written back at the end (loop state, branch result)
                for callee in _control_flow_callees(instruction):
                    for source in self._pts(callee.root_instruction).values():
                        use(source, self._last_time[callee])  # read as the callee ends

    def _make_buffer(self, number: int, positions: list[Source], start: int, end: int,
                     live_out: bool) -> None:
        sources = {p for p in positions if self._pts(p[0])[p[1]] == p}  # defined, not forwarded
        first = min(sources, key=lambda s: (self._times[s[0]][0], _order_key(s)))
        kind, parameter = self._kind_of(sources, live_out)
        size = max(source_size(s) for s in sources)
        buffer = LogicalBuffer(number, first, first[0].shape.subshape(first[1]), size, kind,
                               start, end, live_out, parameter, positions)
        self.buffers.append(buffer)
        for position in positions:
            self._at[position] = buffer

    def _kind_of(self, sources, live_out: bool):
        entry = self.module.entry_computation
        for instruction, index in sorted(sources, key=_order_key):
            if instruction.opcode is Opcode.PARAMETER and instruction.parent is entry:
                return BufferKind.PARAMETER, (instruction.parameter_number, index)
        if any(i.opcode is Opcode.CONSTANT for i, _ in sources):
            return BufferKind.CONSTANT, None
        return (BufferKind.OUTPUT if live_out else BufferKind.TEMP), None


def _order_key(source: Source) -> tuple:
    return (source[0].name, source[1])


def _control_flow_callees(instruction: HloInstruction) -> list[HloComputation]:
    """Called computations in execution order: a while's condition before its body."""
    op = instruction.opcode
    if op is Opcode.WHILE:
        return [instruction.attr("condition"), instruction.attr("body")]
    if op is Opcode.CALL:
        return [instruction.attr("to_apply")]
    return list(instruction.called_computations)


# -- the scheduler's measure -------------------------------------------------------------
def sequence_memory(computation: HloComputation, order: list[HloInstruction], *,
                    callee_bytes: dict[HloComputation, int] | None = None,
                    bitcast_reshapes: bool = True) -> int:
    """Peak bytes live while `computation` runs in `order`, without fragmentation.

    XLA's HeapSimulator::MinimumMemoryForComputation, as the memory scheduler
    uses it to compare candidate orders: parameters and constants are left out
    (they are not temporaries), results stay live to the end, and an
    instruction calling computations also holds the largest of their peaks
    (`callee_bytes`) while it runs.
    """
    callee_bytes = callee_bytes or {}
    pts = points_to(computation, bitcast_reshapes)
    remaining: dict[Source, int] = {}
    reads: dict[HloInstruction, set[Source]] = {}
    for instruction in computation.instructions:
        reads[instruction] = {s for op in instruction.operands for s in pts[op].values()}
        for source in reads[instruction]:
            remaining[source] = remaining.get(source, 0) + 1
    for source in pts[computation.root_instruction].values():
        remaining[source] = remaining.get(source, 0) + 1
    live = peak = 0
    for instruction in order:
        defined = [s for s in pts[instruction].values()
                   if s[0] is instruction and not _ignored(instruction)]
        live += sum(source_size(s) for s in defined)
        extra = max((callee_bytes.get(c, 0) for c in instruction.called_computations),
                    default=0)
        peak = max(peak, live + extra)
        for source in reads[instruction]:
            remaining[source] -= 1
            if remaining[source] == 0 and not _ignored(source[0]):
                live -= source_size(source)
        live -= sum(source_size(s) for s in defined if not remaining.get(s))
    return peak


def _ignored(instruction: HloInstruction) -> bool:
    return instruction.opcode in (Opcode.PARAMETER, Opcode.CONSTANT)
