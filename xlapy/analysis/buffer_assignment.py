"""Buffer assignment: where every instruction output lives, as plain data.

XLA's BufferAssigner in miniature (`xla/service/buffer_assignment.h`): from
the liveness of a scheduled module it builds allocations and gives each
instruction output a slice (allocation, offset, size) of one.

* Every entry parameter leaf is its own allocation, every constant too
  (XLA emits those as read-only globals), every result leaf that is not a
  parameter or constant another ("maybe-live-out"). Temporaries go, largest
  first, into a result's allocation when they fit and are dead before the
  result is written (XLA's MaybeAssignBuffer); the rest share one arena
  ("preallocated-temp") packed by the heap simulator, so a temporary's
  bytes are reused once it is dead. With `separate_temps` (the CPU
  backend's guard-page mode) every temporary instead gets an allocation of
  its own, of exactly its size, and none is placed in a result's: an
  executable can then fence each one, and a kernel overrunning one
  temporary faults instead of writing into the next.
* An output may be written over a dead operand, as XLA's "can share buffer"
  rule allows: an elementwise op (or a loop fusion reading that operand only
  elementwise), a dynamic-update-slice or a scatter over its operand 0, when
  the operand is a temporary of the same byte size and layout whose last
  read is this instruction; a while loop's state starts in its dead init
  value. Reading element i before writing element i keeps results exact.
  When the output is a result, the operand lives in the result's allocation.
* A while body's root leaf i may be written straight into the loop state
  (leaf i), as XLA's copy insertion leaves it when no copy is needed: when
  it is written by such an in-place instruction over `get-tuple-element(
  param, i)` (through bitcasts), the state leaf is read by nothing after that
  instruction in the body, and the root holds that value at leaf i only. The
  copy back at the end of the iteration is then a no-op, so a scan storing
  one row per step touches the row, not the array. Otherwise it stays a copy.
* Donated parameters (`input_output_alias`) hold their aliased output: it
  is written straight into the parameter's allocation when the parameter is
  no longer read by then (or is read elementwise by the very instruction
  that writes it); otherwise the output is computed into a temporary and
  copied over at the end, as XLA's copy insertion would arrange.

The result is data to read, print (`to_text`, in the spirit of XLA's
`*-buffer-assignment.txt` dump) and sum up (`memory_analysis`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xlapy.analysis.heap_simulator import ALIGNMENT, BufferInterval, HeapResult, best_fit_heap
from xlapy.analysis.liveness import BufferKind, Index, Liveness, LogicalBuffer, forwards
from xlapy.hlo.attributes import InputOutputAlias
from xlapy.hlo.ir import HloInstruction, HloModule
from xlapy.hlo.opcode import ELEMENTWISE, Opcode
from xlapy.hlo.shape import Shape


@dataclass(frozen=True)
class Slice:
    """`size` bytes at `offset` in allocation number `allocation`."""

    allocation: int
    offset: int
    size: int


@dataclass(frozen=True)
class AssignedValue:
    buffer: LogicalBuffer
    offset: int
    size: int


@dataclass
class Allocation:
    """One block of memory. `kind` is "parameter", "constant", "output" or "temp";
    `output_indices` the entry result leaves it holds when the module returns."""

    index: int
    kind: str
    size: int
    parameter_number: int | None = None
    parameter_index: Index = ()
    output_indices: list[Index] = field(default_factory=list)
    values: list[AssignedValue] = field(default_factory=list)


@dataclass(frozen=True)
class Donation:
    """How one `input_output_alias` entry was honoured: "in-place" (the output is
    written into the parameter's memory) or "copy" (computed elsewhere, copied
    over at the end)."""

    alias: InputOutputAlias
    how: str


@dataclass
class BufferAssignment:
    """Allocations and a slice for every buffer and instruction output."""

    module: HloModule
    liveness: Liveness
    alignment: int
    allocations: list[Allocation]
    buffer_slices: dict[int, Slice]
    outputs: dict[Index, Slice]
    shared: list[tuple[HloInstruction, LogicalBuffer, LogicalBuffer]]
    """(instruction, its output buffer, the operand buffer it overwrites): a dead
    operand, or a while's state leaf written by its body (see `in_loop_state`)."""
    donations: list[Donation]
    heap: HeapResult | None
    in_loop_state: set[int] = field(default_factory=set)
    """Ids of while-body root buffers that live in their loop's state memory."""

    def slice_of(self, instruction: HloInstruction, index: Index = ()) -> Slice | None:
        """The slice holding leaf `index` of `instruction`'s output (None: no memory,
        e.g. inside a fusion body)."""
        if instruction.parent is None or not self.liveness.holds_buffers(instruction.parent):
            return None
        buffer = self.liveness.buffer_at(instruction, index)
        return None if buffer is None else self.buffer_slices[buffer.id]

    def allocations_of(self, kind: str) -> list[Allocation]:
        return [a for a in self.allocations if a.kind == kind]

    @property
    def temp_allocation(self) -> Allocation | None:
        """The first temporary allocation: the arena (the only one, unless the module
        was assigned with `separate_temps`)."""
        temps = self.allocations_of("temp")
        return temps[0] if temps else None

    @property
    def temp_size(self) -> int:
        return sum(a.size for a in self.allocations_of("temp"))

    def to_text(self) -> str:
        """XLA's `buffer-assignment.txt` in spirit: each allocation with its index,
        size, kind and the values it holds (offset, size, shape, live range), the
        total, the outputs written over an operand (dead, or a loop state), then each
        value's positions."""
        lines = [f"BufferAssignment for module {self.module.name} "
                 f"(alignment {self.alignment}):"]
        for alloc in self.allocations:
            lines.append(_allocation_header(alloc, self.module))
            for value in sorted(alloc.values, key=lambda v: (v.offset, v.buffer.id)):
                b = value.buffer
                lines.append(f" value: {b.short_name()} (size={value.size},offset={value.offset})"
                             f": {b.shape.to_text()} live=[{b.start},{b.end}]")
        total = sum(a.size for a in self.allocations)
        lines += ["", f"Total bytes used: {total} ({human_bytes(total)})"]
        if self.shared:
            lines += ["", "Outputs written over an operand (dead, or their loop state):"]
            lines += [f" {i.name}: {out.short_name()} over {old.short_name()}"
                      + (" (loop state)" if out.id in self.in_loop_state else "")
                      for i, out, old in self.shared]
        for donation in self.donations:
            a = donation.alias
            index = "{" + ",".join(map(str, a.output_index)) + "}"
            lines.append(f"Donated: output {index} <- parameter {a.parameter_number} "
                         f"({donation.how})")
        lines += ["", "Used values:"]
        for b in self.liveness.buffers:
            lines.append(f"{b.short_name()} {b.kind.value} live=[{b.start},{b.end}]")
            lines.append(" positions:")
            lines += [f"  {i.name}" + (_index_text(idx) if idx else "") for i, idx in b.positions]
        return "\n".join(lines) + "\n"


def assign_buffers(module: HloModule, *, alignment: int = ALIGNMENT,
                   bitcast_reshapes: bool = True, in_place: bool = True,
                   liveness: Liveness | None = None,
                   separate_temps: bool = False) -> BufferAssignment:
    """Assign every buffer of `module` (scheduled or not: its instruction order is
    taken as the schedule) to an allocation. `separate_temps`: one allocation per
    temporary (values written in place over it share it), none in a result's
    allocation and no arena; memory is then not reused between temporaries."""
    liveness = liveness or Liveness(module, bitcast_reshapes=bitcast_reshapes)
    return _Assigner(module, liveness, alignment, in_place, separate_temps).run()


# -- which operands an output may overwrite ------------------------------------------------
def overwritable_operands(instruction: HloInstruction) -> list[int]:
    """Operand numbers whose memory `instruction`'s array output may reuse, given the
    operand is dead afterwards (XLA's CanShareOperandBufferWithUser)."""
    shape = instruction.shape
    if not shape.is_array:
        return []
    op = instruction.opcode
    if op in ELEMENTWISE:
        numbers = range(len(instruction.operands))
    elif op is Opcode.DYNAMIC_UPDATE_SLICE or (op is Opcode.SCATTER
                                               and len(instruction.operands) == 3):
        numbers = [0]
    elif op is Opcode.FUSION:
        numbers = [i for i in range(len(instruction.operands))
                   if _fusion_reads_elementwise(instruction, i)]
    else:
        return []
    return [i for i in numbers if _same_array(instruction.operands[i].shape, shape)]


def _same_array(a: Shape, b: Shape) -> bool:
    return (a.is_array and a.dimensions == b.dimensions and a.byte_size == b.byte_size
            and _layout(a) == _layout(b))


def _layout(shape: Shape) -> tuple[int, ...]:
    if shape.layout is None:
        return tuple(range(shape.rank - 1, -1, -1))
    return shape.layout.minor_to_major


def _fusion_reads_elementwise(fusion: HloInstruction, number: int) -> bool:
    """Every path from fused parameter `number` to the root is elementwise at the
    root's dimensions, so output element i needs only that parameter's element i."""
    computation = fusion.attr("calls")
    root = computation.root_instruction
    if not root.shape.is_array:
        return False
    users = computation.users()
    stack, seen = [computation.parameter(number)], set()
    while stack:
        node = stack.pop()
        if node is root or id(node) in seen:
            continue
        seen.add(id(node))
        for user in users.get(id(node), []):
            if user.opcode not in ELEMENTWISE or user.shape.dimensions != root.shape.dimensions:
                return False
            stack.append(user)
    return True


# -- the assigner ---------------------------------------------------------------------------
class _Assigner:
    def __init__(self, module: HloModule, liveness: Liveness, alignment: int, in_place: bool,
                 separate_temps: bool = False):
        self.module = module
        self.liveness = liveness
        self.alignment = alignment
        self.in_place = in_place
        self.separate_temps = separate_temps
        self.kind = {b.id: b.kind for b in liveness.buffers}
        self.end = {b.id: b.end for b in liveness.buffers}
        self.into_parameter: dict[int, LogicalBuffer] = {}
        self.donations: list[Donation] = []
        self.shared: list = []
        self.slot = {b.id: b.id for b in liveness.buffers}
        self.consumed: set[int] = set()  # buffers an output already took over
        self.hosted: dict[int, LogicalBuffer] = {}  # temp slot -> the result holding it
        self.in_state: set[int] = set()  # body root buffers living in their loop state

    def run(self) -> BufferAssignment:
        self._donate()
        if self.in_place:
            self._write_loop_states_in_place()
            self._share_dead_operands()
        if not self.separate_temps:
            self._reuse_results()
        allocations, slices, heap = self._allocate()
        outputs = self._outputs(allocations, slices)
        return BufferAssignment(self.module, self.liveness, self.alignment, allocations, slices,
                                outputs, self.shared, self.donations, heap, set(self.in_state))

    # -- donated parameters --------------------------------------------------------------
    def _donate(self) -> None:
        entry = self.module.entry_computation
        for alias in self.module.attributes.get("input_output_alias", ()) or ():
            out = self.liveness.buffer_at(entry.root_instruction, alias.output_index)
            param = self.liveness.buffer_at(entry.parameter(alias.parameter_number),
                                            alias.parameter_index)
            if out is None or param is None:
                continue
            if out is param or self._writes_over(out, param):
                if out is not param:
                    self.into_parameter[out.id] = param
                self.donations.append(Donation(alias, "in-place"))
                continue
            if self.kind[out.id] is BufferKind.OUTPUT and out.id not in self.into_parameter:
                self.kind[out.id] = BufferKind.TEMP  # computed here, copied over at the end
                self.end[out.id] = self.liveness.end_time
            self.donations.append(Donation(alias, "copy"))

    def _writes_over(self, out: LogicalBuffer, param: LogicalBuffer) -> bool:
        if self.kind[out.id] is not BufferKind.OUTPUT or out.id in self.into_parameter:
            return False
        if param in self.into_parameter.values() or out.size > param.size:
            return False
        if param.end < out.start:
            return True
        return param.end == out.start and self._overwritable(out.instruction, param)

    # -- in-place outputs ----------------------------------------------------------------
    def _share_dead_operands(self) -> None:
        for time, instruction in enumerate(self.liveness.sequence):
            start, end = self.liveness.times(instruction)
            if instruction.opcode is Opcode.WHILE and time == start:
                self._share_loop_init(instruction, time)
            if (start, end) != (time, time):
                continue
            out = self.liveness.buffer_at(instruction, ())
            if out is None or not self._may_take_over(out, instruction):
                continue
            for candidate in self._dead_operands(instruction, time):
                if candidate.size == out.size:
                    self._take_over(instruction, out, candidate)
                    break

    def _share_loop_init(self, loop: HloInstruction, time: int) -> None:
        """A while's state starts in its init value's memory when nothing reads the
        init afterwards (XLA aliases them; the copy-in is then a no-op)."""
        init = loop.operands[0]
        for index, state in self.liveness.leaf_buffers(loop):
            old = self.liveness.buffer_at(init, index)
            if old is None or not self._may_take_over(state, loop) or old.id in self.consumed \
                    or old.id in self.in_state:
                continue
            if self.kind[old.id] is BufferKind.TEMP and self.end[old.id] == time \
                    and old.size == state.size:
                self._take_over(loop, state, old)

    def _may_take_over(self, buffer: LogicalBuffer, instruction: HloInstruction) -> bool:
        """`buffer` is written first by `instruction` and is a temporary or an output
        not already living in a loop state."""
        kind = self.kind[buffer.id]
        return buffer.instruction is instruction and buffer.id not in self.into_parameter \
            and buffer.id not in self.in_state \
            and (kind is BufferKind.TEMP or kind is BufferKind.OUTPUT)

    def _take_over(self, instruction: HloInstruction, out: LogicalBuffer,
                   old: LogicalBuffer) -> None:
        """`out` is written over the dead temporary `old`: they share a slot of the
        arena, or, when `out` is a result, `old` lives in the result's allocation (as
        XLA lets a maybe-live-out allocation hold the values it is written over)."""
        self.consumed.add(old.id)
        if self.kind[out.id] is BufferKind.OUTPUT:
            self.hosted[self._find(old.id)] = out
        else:
            self.slot[self._find(out.id)] = self._find(old.id)
        self.shared.append((instruction, out, old))

    def _dead_operands(self, instruction: HloInstruction, time: int) -> list[LogicalBuffer]:
        """Temporaries read last by `instruction` at operands it may overwrite."""
        result = []
        for number in overwritable_operands(instruction):
            buffer = self.liveness.buffer_at(instruction.operands[number], ())
            if buffer is None or buffer in result or buffer.id in self.consumed \
                    or buffer.id in self.in_state or self.kind[buffer.id] is not BufferKind.TEMP:
                continue
            if self.end[buffer.id] == time and self._overwritable(instruction, buffer):
                result.append(buffer)
        return result

    def _overwritable(self, instruction: HloInstruction, buffer: LogicalBuffer) -> bool:
        """Every operand leaf of `instruction` that is `buffer` is an overwritable operand."""
        allowed = set(overwritable_operands(instruction))
        for number, operand in enumerate(instruction.operands):
            for index, leaf in self.liveness.leaf_buffers(operand):
                if leaf is buffer and (number not in allowed or index != ()):
                    return False
        return any(self.liveness.buffer_at(instruction.operands[n], ()) is buffer
                   for n in allowed)

    # -- while bodies writing their loop state in place ---------------------------------------
    def _write_loop_states_in_place(self) -> None:
        for time, instruction in enumerate(self.liveness.sequence):
            if instruction.opcode is not Opcode.WHILE \
                    or time != self.liveness.times(instruction)[0]:
                continue
            for index, state in self.liveness.leaf_buffers(instruction):
                out = self._state_writer(instruction, index, state)
                if out is not None:
                    self._into_state(out, state)

    def _state_writer(self, loop: HloInstruction, index: Index,
                      state: LogicalBuffer) -> LogicalBuffer | None:
        """The body root's leaf `index` when it may be written into `state` (the loop's
        leaf `index`, also the body parameter's): written in the body by one instruction
        that may overwrite its `state` operand, read last there, and held by that root
        leaf alone. None when unsure: the copy back stays."""
        live, body = self.liveness, loop.attr("body")
        if body is None or body is loop.attr("condition") \
                or live.buffer_at(body.parameter(0), index) is not state \
                or self.kind[state.id] not in (BufferKind.TEMP, BufferKind.OUTPUT):
            return None
        root = body.root_instruction
        out = live.buffer_at(root, index)
        if out is None or out is state or self.kind[out.id] is not BufferKind.TEMP \
                or out.size != state.size or out.id in self.consumed:
            return None
        if [i for i, b in live.leaf_buffers(root) if b is out] != [index]:
            return None  # the root holds that value twice
        writer = out.instruction
        others = [i for i, _ in out.positions if i is not writer and i.parent is body]
        if writer.parent is not body or out.index != () \
                or not all(forwards(i, live.bitcast_reshapes) for i in others):
            return None  # written by anything else, or defined outside the body
        if not self._overwritable(writer, state):
            return None
        time, _ = live.times(writer)
        return None if live.read_times(state, time + 1, live.last_time(body)) else out

    def _into_state(self, out: LogicalBuffer, state: LogicalBuffer) -> None:
        """`out` lives in `state`'s memory: its arena slot, or the result or donated
        parameter allocation holding `state`."""
        self.in_state.add(out.id)
        if self.kind[state.id] is BufferKind.OUTPUT:
            self.hosted[self._find(out.id)] = state
        else:
            self.slot[self._find(out.id)] = self._find(state.id)
        self.shared.append((out.instruction, out, state))

    # -- temporaries in a result's allocation ------------------------------------------------
    def _reuse_results(self) -> None:
        """Like XLA's MaybeAssignBuffer: a temporary (largest first) goes into the
        first result allocation that is big enough and holds nothing live at the same
        time, at offset 0; only the rest are packed into the arena."""
        results = [b for b in self.liveness.buffers
                   if self.kind[b.id] is BufferKind.OUTPUT and b.id not in self.into_parameter]
        busy = {r.id: [(r.start, self.end[r.id])] for r in results}
        slots = self._temp_slots()
        for slot, members in slots.items():
            if slot in self.hosted and self.hosted[slot].id in busy:
                busy[self.hosted[slot].id].append(self._span(members))
        free = [(slot, members) for slot, members in slots.items() if slot not in self.hosted]
        free.sort(key=lambda item: (-max(b.size for b in item[1]), self._span(item[1]), item[0]))
        for slot, members in free:
            size, (low, high) = max(b.size for b in members), self._span(members)
            for result in results:
                if size <= result.size and all(high < s or e < low for s, e in busy[result.id]):
                    self.hosted[slot] = result
                    busy[result.id].append((low, high))
                    break

    def _temp_slots(self) -> dict[int, list[LogicalBuffer]]:
        slots: dict[int, list[LogicalBuffer]] = {}
        for buffer in self.liveness.buffers:
            if self.kind[buffer.id] is BufferKind.TEMP:
                slots.setdefault(self._find(buffer.id), []).append(buffer)
        return slots

    def _span(self, members: list[LogicalBuffer]) -> tuple[int, int]:
        return min(b.start for b in members), max(self.end[b.id] for b in members)

    def _find(self, buffer_id: int) -> int:
        while self.slot[buffer_id] != buffer_id:
            buffer_id = self.slot[buffer_id]
        return buffer_id

    # -- allocations -----------------------------------------------------------------------
    def _allocate(self):
        allocations: list[Allocation] = []
        slices: dict[int, Slice] = {}
        buffers = self.liveness.buffers
        params = sorted((b for b in buffers if self.kind[b.id] is BufferKind.PARAMETER),
                        key=lambda b: b.parameter)
        for buffer in params:
            alloc = self._new(allocations, "parameter", buffer.size, buffer)
            alloc.parameter_number, alloc.parameter_index = buffer.parameter
        for buffer in buffers:
            if self.kind[buffer.id] is BufferKind.CONSTANT:
                self._new(allocations, "constant", buffer.size, buffer)
        for buffer in buffers:
            if self.kind[buffer.id] is BufferKind.OUTPUT and buffer.id not in self.into_parameter:
                self._new(allocations, "output", buffer.size, buffer)
        for alloc in allocations:
            for value in alloc.values:
                slices[value.buffer.id] = Slice(alloc.index, 0, value.size)
        for out_id, param in self.into_parameter.items():
            alloc = allocations[slices[param.id].allocation]
            out = buffers[out_id]
            alloc.values.append(AssignedValue(out, 0, out.size))
            slices[out_id] = Slice(alloc.index, 0, out.size)
        for buffer in buffers:
            host = self.hosted.get(self._find(buffer.id))
            if host is not None and self.kind[buffer.id] is BufferKind.TEMP:
                alloc = allocations[slices[host.id].allocation]
                alloc.values.append(AssignedValue(buffer, 0, buffer.size))
                slices[buffer.id] = Slice(alloc.index, 0, buffer.size)
        heap = self._pack_temps(allocations, slices)
        return allocations, slices, heap

    @staticmethod
    def _new(allocations: list[Allocation], kind: str, size: int,
             buffer: LogicalBuffer) -> Allocation:
        alloc = Allocation(len(allocations), kind, size)
        alloc.values.append(AssignedValue(buffer, 0, buffer.size))
        allocations.append(alloc)
        return alloc

    def _pack_temps(self, allocations: list[Allocation], slices: dict[int, Slice]):
        slots = {slot: members for slot, members in self._temp_slots().items()
                 if slot not in self.hosted}
        if not slots:
            return None
        if self.separate_temps:
            self._separate_temps(allocations, slices, slots)
            return None
        temps = [b for members in slots.values() for b in members]
        intervals = [BufferInterval(slot, max(b.size for b in members), *self._span(members))
                     for slot, members in slots.items()]
        heap = best_fit_heap(intervals, alignment=self.alignment)
        alloc = Allocation(len(allocations), "temp", heap.heap_size)
        allocations.append(alloc)
        for buffer in temps:
            offset = heap.offsets[self._find(buffer.id)]
            alloc.values.append(AssignedValue(buffer, offset, buffer.size))
            slices[buffer.id] = Slice(alloc.index, offset, buffer.size)
        return heap

    @staticmethod
    def _separate_temps(allocations: list[Allocation], slices: dict[int, Slice],
                        slots: dict[int, list[LogicalBuffer]]) -> None:
        """One "temp" allocation per slot (the buffers of a slot are written in place
        over each other, so all have the slot's size)."""
        for members in slots.values():
            alloc = Allocation(len(allocations), "temp", max(b.size for b in members))
            allocations.append(alloc)
            for buffer in members:
                alloc.values.append(AssignedValue(buffer, 0, buffer.size))
                slices[buffer.id] = Slice(alloc.index, 0, buffer.size)

    def _outputs(self, allocations: list[Allocation], slices: dict[int, Slice]):
        entry = self.module.entry_computation
        outputs: dict[Index, Slice] = {}
        for index, buffer in self.liveness.leaf_buffers(entry.root_instruction):
            outputs[index] = slices[buffer.id]
        for donation in self.donations:
            alias = donation.alias
            param = self.liveness.buffer_at(entry.parameter(alias.parameter_number),
                                            alias.parameter_index)
            outputs[tuple(alias.output_index)] = slices[param.id]
        for index, slice_ in outputs.items():
            allocations[slice_.allocation].output_indices.append(index)
        return outputs


# -- printing -------------------------------------------------------------------------------
def _allocation_header(alloc: Allocation, module: HloModule) -> str:
    text = f"allocation {alloc.index}: size {alloc.size}"
    if alloc.kind == "parameter":
        param = module.entry_computation.parameter(alloc.parameter_number)
        text += (f", parameter {alloc.parameter_number}, shape |{param.shape.to_text(False)}|"
                 f" at ShapeIndex {_index_text(alloc.parameter_index)}")
    elif alloc.kind == "constant":
        text += ", constant"
    elif alloc.kind == "temp":
        text += ", preallocated-temp"
    if alloc.output_indices:
        text += ", maybe-live-out, output " + " ".join(_index_text(i)
                                                       for i in sorted(alloc.output_indices))
    return text + ":"


def _index_text(index: Index) -> str:
    return "{" + ",".join(map(str, index)) + "}"


def human_bytes(n: int) -> str:
    """XLA's HumanReadableNumBytes: 512B, 1.50KiB, 2.00MiB."""
    if n < 1024:
        return f"{n}B"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        n /= 1024
        if n < 1024 or unit == "TiB":
            return f"{n:.2f}{unit}"
    return f"{n}B"
