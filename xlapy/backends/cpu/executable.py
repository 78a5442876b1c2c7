"""Running a compiled module: one foreign call per execution.

The allocation table is a ctypes array made once; each call fills in the
parameters' addresses and output buffers (fresh, or recycled from results the
caller has dropped: `output_recycler`), reuses the temporaries (allocated at
the first execution; a second set is made only when the executable is
re-entered from another thread), calls `xlapy_entry`, and hands the output
buffers back as NumPy arrays without copying. Parameters and results in a
non-row-major layout are transposed to and from their physical order on the
way. Large buffers are checked against the memory the process can still use
(`host_memory`) before they are allocated, so a module too big for the
machine raises MemoryError naming the buffer instead of being OOM-killed.

Under `--xlapy_cpu_guard_pages` every call instead runs on fenced copies
(`guarded_memory`): parameters copied in, outputs and temporaries fresh, all
unmapped after the results are copied out.
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from xlapy.analysis.buffer_assignment import BufferAssignment, human_bytes
from xlapy.backends.base import Executable
from xlapy.backends.cpu import host_memory
from xlapy.backends.cpu import options as _options  # noqa: F401  (declares the guard flag)
from xlapy.backends.cpu.codegen import COLLECTIVE_BASE
from xlapy.backends.cpu.collectives import device_ids_address, run_collective, write_device_ids
from xlapy.backends.cpu.fallback import run_fallback
from xlapy.backends.cpu.guarded_memory import POISON, GuardedBlock, alignment_of
from xlapy.backends.cpu.output_recycler import MIN_BYTES, OutputRecycler
from xlapy.backends.cpu.profiling import SYMBOL, ProfileEvent, read_events
from xlapy.codegen.ir_array import minor_to_major
from xlapy.distributed.world import CollectiveTimeout
from xlapy.errors import ExecutionError
from xlapy.flags import debug_options
from xlapy.hlo.ir import HloModule
from xlapy.hlo.shape import Shape

_ENTRY_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
_FALLBACK_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p)
_ALIGN = 64
_FRESH = OutputRecycler(keep=False)


def _aligned(nbytes: int) -> np.ndarray:
    raw = np.empty(nbytes + _ALIGN, np.uint8)
    start = (-raw.ctypes.data) % _ALIGN
    return raw[start:start + nbytes]


def _physical(shape: Shape) -> tuple[list[int], bool]:
    """(axes taking logical to physical order, whether that is the identity)."""
    axes = list(reversed(minor_to_major(shape)))
    return axes, axes == list(range(shape.rank))


class CpuExecutable(Executable):
    def __init__(self, module: HloModule, assignment: BufferAssignment, loaded,
                 fallbacks: list, backend: str = "cpu", compile_seconds: float = 0.0,
                 from_cache: bool = False, profiled: list | None = None,
                 guard_pages: bool | None = None, fallback_reasons: list | None = None,
                 collectives: list | None = None):
        super().__init__(module, backend)
        self.assignment = assignment
        self.fallbacks = fallbacks
        """The instructions the HLO evaluator computes, called back from the code."""
        self.fallback_reasons = list(fallback_reasons or [""] * len(fallbacks))
        """Why each of `fallbacks` does (see `backends/cpu/lowering.py`)."""
        self.collectives = list(collectives or [])
        """The collectives the code hands to the runtime (`backends/cpu/collectives.py`)."""
        self.collective_plans: dict = {}
        """id(collective) -> what its runtime calls reuse (backends/cpu/collectives.py)."""
        self._device_ids = device_ids_address(module, loaded)
        self.compile_seconds = compile_seconds
        self.from_cache = from_cache
        self._loaded = loaded
        self._entry = _ENTRY_TYPE(loaded.address("xlapy_entry"))
        self._fallback = _FALLBACK_TYPE(self._run_fallback)
        self._fallback_address = ctypes.cast(self._fallback, ctypes.c_void_p).value
        self._errors: dict[int, BaseException] = {}   # table address -> its call's error
        self._lock = threading.Lock()
        self.guard_pages = debug_options().xlapy_cpu_guard_pages if guard_pages is None \
            else guard_pages
        """Run on fenced copies of every buffer (`guarded_memory`); set at compile time."""
        allocations = assignment.allocations
        self._table_type = ctypes.c_void_p * max(len(allocations), 1)
        self._table = self._table_type()
        self._table_address = ctypes.addressof(self._table)
        self._addresses = [0] * len(allocations)
        entry = module.entry_computation
        self._params = []   # (allocation index, parameter number, leaf index, shape)
        self._outputs = []  # (allocation index, size)
        self._temps = []    # (allocation index, size): the arena, or one per temporary
        for alloc in allocations:
            if alloc.kind == "parameter":
                param = entry.parameter(alloc.parameter_number)
                leaf = param.shape.subshape(alloc.parameter_index) if alloc.parameter_index \
                    else param.shape
                self._params.append((alloc.index, alloc.parameter_number,
                                     tuple(alloc.parameter_index), leaf))
            elif alloc.kind == "temp":
                self._temps.append((alloc.index, alloc.size))
            elif alloc.kind == "output":
                self._outputs.append((alloc.index, alloc.size))
        self._arenas: dict[int, np.ndarray] | None = None   # allocated at the first run
        self._output_bytes = sum(size for _, size in self._outputs)
        self._results = self._result_plan(module, assignment)
        self._output_views = {i: _ViewPlan(shape, offset) for i, (_, shape, kind, _, offset)
                              in enumerate(self._results) if kind == "output"}
        root = module.entry_computation.root_instruction.shape
        self._root_shape = root
        self._flat_root = not root.is_tuple or not any(t.is_tuple for t in root.tuple_shapes)
        # small outputs share one block per call (one allocation); large ones are recycled
        self._small_outputs, self._large_outputs, block = [], [], 0
        for alloc, size in self._outputs:
            if size < MIN_BYTES:
                self._small_outputs.append((alloc, block))
                block += -(-size // _ALIGN) * _ALIGN
            else:
                self._large_outputs.append((alloc, size))
        self._small_block = block
        self._simple_params = None
        if all(not leaf and _physical(shape)[1] for _, _, leaf, shape in self._params):
            self._simple_params = [(alloc, number) for alloc, number, _, _ in self._params]
        self._single = self._single_output()
        if self._single is not None:
            _, dims, dtype = self._single
            self._single_bytes = int(np.prod(dims, dtype=np.int64)) * np.dtype(dtype).itemsize
        self._recycler = OutputRecycler()
        self._small = (self._simple_params is not None and self._single is not None
                       and self._single_bytes < MIN_BYTES and self._device_ids is None)
        """A call of plain arguments returning one small array (`_run_small`)."""
        self.profiled = profiled or []
        """The entry instructions whose start and end each execution records."""
        self._profile = loaded.global_address(SYMBOL) if self.profiled else None

    def last_profile(self) -> list[ProfileEvent]:
        """Each profiled instruction's run in the last execution (compiled with
        `--xla_hlo_profile`; else empty)."""
        if self._profile is None:
            return []
        return read_events(self._profile, self.profiled)

    # -- planning ---------------------------------------------------------------------
    def _result_plan(self, module, assignment):
        root = module.entry_computation.root_instruction
        leaves = root.shape.leaves() if root.shape.is_tuple else [((), root.shape)]
        plan = []
        for index, shape in leaves:
            s = assignment.outputs.get(tuple(index))
            if s is None:
                plan.append((index, shape, None, None, 0))
                continue
            alloc = assignment.allocations[s.allocation]
            plan.append((index, shape, alloc.kind, alloc.index, s.offset))
        return plan

    def _single_output(self):
        """The one output allocation that is exactly one row-major result, or None."""
        if len(self._results) != 1 or len(self._outputs) != 1:
            return None
        index, shape, kind, alloc, offset = self._results[0]
        if kind != "output" or offset != 0 or not _physical(shape)[1]:
            return None
        return alloc, shape.dimensions, shape.dtype

    # -- running ----------------------------------------------------------------------
    def execute(self, *arrays) -> list:
        return self.run(self.check_arguments(arrays))

    def run(self, args: list) -> list:
        """Execute on checked arguments (NumPy arrays of the right shapes/dtypes)."""
        if self.guard_pages:
            return self._run_guarded(args)
        if not self._lock.acquire(False):
            return self._reentrant(args)
        try:
            temps = self._arenas
            if temps is None:
                temps = self._arenas = self._new_temps(self._table)
            if self._small:
                return self._run_small(args)
            return self._run(args, self._table, self._table_address, temps)
        finally:
            self._lock.release()

    def _reentrant(self, args):
        table = self._table_type()
        return self._run(args, table, ctypes.addressof(table), self._new_temps(table))

    def _new_temps(self, table) -> dict[int, np.ndarray]:
        """Fresh temporaries, their addresses written into `table`; MemoryError naming
        them when the machine cannot hold them and this call's outputs."""
        if not self._temps:
            return {}
        total = sum(size for _, size in self._temps)
        what = f"{self.module.name}: the temporaries ({_allocation_names(self._temps)})"
        host_memory.require(total, what)
        if self._outputs:
            host_memory.require(total + self._output_bytes, f"{what} and the outputs "
                                f"({_allocation_names(self._outputs)})")
        temps = {}
        for index, size in self._temps:
            try:
                temps[index] = _aligned(size)
            except MemoryError:
                raise host_memory.allocation_failed(total, what) from None
            table[index] = temps[index].ctypes.data
        return temps

    def _run(self, args: list, table, table_address: int, temps: dict) -> list:
        keep = []   # buffer views that must outlive the call
        if self._simple_params is not None:
            _bind_plain(self._simple_params, args, table, keep)
        else:
            for alloc, number, leaf, shape in self._params:
                value = args[number]
                for i in leaf:
                    value = value[i]
                axes, identity = _physical(shape)
                if not identity:
                    value = np.transpose(value, axes)
                table[alloc] = _address(value, keep)
        single = self._single
        recycler = self._recycler if table is self._table else _FRESH
        if single is not None:
            alloc, dims, dtype = single
            if self._single_bytes < MIN_BYTES:     # the hot path of small calls
                out = np.empty(dims, dtype)
            else:
                out = recycler.buffer(alloc, self._single_bytes, self.module.name) \
                    .view(dtype).reshape(dims)
            table[alloc] = _address(out, keep)
            buffers = None
        else:
            buffers = {}   # allocation -> (array holding it, byte offset there)
            if self._small_outputs:
                if self._small_block >= host_memory.CHECK_FROM:
                    host_memory.require(self._small_block, f"{self.module.name}: the small "
                                        f"outputs ({_allocation_names(self._outputs)})")
                raw = np.empty(self._small_block + _ALIGN, np.uint8)
                view = _from_buffer(raw)
                keep.append(view)
                base = _addressof(view)
                shift = (-base) % _ALIGN
                for alloc, offset in self._small_outputs:
                    table[alloc] = base + shift + offset
                    buffers[alloc] = (raw, shift + offset)
            for alloc, size in self._large_outputs:
                buf = recycler.buffer(alloc, size, self.module.name)
                buffers[alloc] = (buf, 0)
                table[alloc] = _address(buf, keep)
        if self._device_ids is not None:
            write_device_ids(self, self._device_ids)
        self._entry(table_address, self._fallback_address)
        if self._errors:
            self._raise(table_address)
        if single is not None:
            return [out]
        views = self._output_views
        leaves = [views[i].of(*buffers[entry[3]]) if i in views
                  else self._result(entry, args, temps) for i, entry in enumerate(self._results)]
        return leaves if self._flat_root else _nest(self._root_shape, leaves)

    def _run_small(self, args: list) -> list:
        """`_run` for the commonest small call (plain parameters, one output under
        MIN_BYTES, no collectives), on this executable's own table: a tiny jitted
        function's dispatch is mostly this Python (~300 ns less than `_run`'s)."""
        table = self._table
        keep = []
        _bind_plain(self._simple_params, args, table, keep)
        alloc, dims, dtype = self._single
        out = np.empty(dims, dtype)
        table[alloc] = _address(out, keep)
        self._entry(self._table_address, self._fallback_address)
        if self._errors:
            self._raise(self._table_address)
        return [out]

    def _raise(self, table_address: int) -> None:
        """Raise what the fallback reported during the call on this table, if anything
        (MemoryError as itself: a kernel's scratch could not be allocated)."""
        error = self._errors.pop(table_address, None)
        if isinstance(error, MemoryError):
            raise MemoryError(f"{self.module.name}: {error}") from error
        if isinstance(error, CollectiveTimeout):
            raise CollectiveTimeout(f"{self.module.name}: {error}") from error
        if error is not None:
            raise ExecutionError(f"{self.module.name}: {error}") from error

    def _run_guarded(self, args: list) -> list:
        """One call on fenced buffers (`guarded_memory`); results are copies."""
        plan = [a for a in self.assignment.allocations if a.kind != "constant"]
        host_memory.require(sum(a.size for a in plan), f"{self.module.name}: the guarded "
                            f"copies of its buffers")
        table = self._table_type()
        table_address = ctypes.addressof(table)
        with GuardedBlock([(a.size, alignment_of(a)) for a in plan]) as block:
            buffers = {}
            for i, alloc in enumerate(plan):
                buffers[alloc.index] = block.array(i)
                table[alloc.index] = block.address(i)
                if alloc.kind != "parameter":
                    buffers[alloc.index][:] = POISON
            for alloc, number, leaf, shape in self._params:
                value = args[number]
                for i in leaf:
                    value = value[i]
                value = np.asarray(value, shape.dtype)
                axes, identity = _physical(shape)
                physical = np.ascontiguousarray(value if identity else np.transpose(value, axes))
                buffers[alloc][:] = physical.reshape(-1).view(np.uint8)
            if self._device_ids is not None:
                write_device_ids(self, self._device_ids)
            self._entry(table_address, self._fallback_address)
            if self._errors:
                self._raise(table_address)
            leaves = [self._result(entry, args, {}) if entry[2] == "constant"
                      else _view(buffers[entry[3]], entry[4], entry[1]).copy()
                      for entry in self._results]
        return leaves if self._flat_root else _nest(self._root_shape, leaves)

    def _result(self, entry, args, temps: dict):
        """A result that is not in an output buffer: (a bitcast of) a parameter or a
        constant, or a temporary."""
        index, shape, kind, alloc, offset = entry
        if kind in ("parameter", "constant"):
            # the result is (a bitcast of) a parameter or constant: its bytes, in the
            # result's own shape and layout, copied (results are the caller's to keep)
            a = self.assignment.allocations[alloc]
            if kind == "parameter":
                value = args[a.parameter_number]
                for i in a.parameter_index:
                    value = value[i]
                source = self.module.entry_computation.parameter(a.parameter_number).shape
                for i in a.parameter_index:
                    source = source.tuple_shapes[i]
            else:
                instruction = a.values[0].buffer.instruction
                value, source = instruction.literal, instruction.shape
            axes, _ = _physical(source)
            raw = np.ascontiguousarray(np.transpose(np.asarray(value, source.dtype), axes))
            return _view(raw.reshape(-1).view(np.uint8), offset, shape).copy()
        if kind == "temp":
            return _view(temps[alloc], offset, shape).copy()
        raise ExecutionError(f"{self.module.name}: result {index} has no buffer")

    # -- the interpreter fallback ---------------------------------------------------------
    def fallback_report(self) -> list[str]:
        """One line per instruction the evaluator computes: name, opcode, reason."""
        return [f"{i.name} ({i.opcode.value}): {why}"
                for i, why in zip(self.fallbacks, self.fallback_reasons)]

    def _run_fallback(self, number: int, table_address: int) -> None:
        """Called back from the generated code; errors are kept per call (its table's
        address), the first one only, and raised once the foreign call returns."""
        if number < 0:   # codegen.OUT_OF_MEMORY (-1), or -1 - size: a scratch malloc failed
            size = f" ({human_bytes(-1 - number)})" if number < -1 else ""
            self._errors.setdefault(table_address, MemoryError(
                f"a kernel could not allocate its scratch memory{size}"))
            return
        if number >= COLLECTIVE_BASE and table_address in self._errors:
            return   # a failed call meets no more peers: each could wait out the timeout
        try:
            if number >= COLLECTIVE_BASE:
                run_collective(self, self.collectives[number - COLLECTIVE_BASE], table_address)
            else:
                run_fallback(self, self.fallbacks[number], table_address)
        except BaseException as e:  # noqa: BLE001 - reported after the foreign call returns
            self._errors.setdefault(table_address, e)


def _allocation_names(allocations: list[tuple[int, int]], most: int = 3) -> str:
    """`allocation 3: 1.50GiB, ...`, the largest first (at most `most` named)."""
    largest = sorted(allocations, key=lambda a: -a[1])
    named = [f"allocation {index}: {human_bytes(size)}" for index, size in largest[:most]]
    if len(largest) > most:
        named.append(f"{len(largest) - most} more")
    return ", ".join(named)


_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def _bind_plain(params: list, args: list, table, keep: list) -> None:
    """Write the addresses of row-major, unnested parameters into `table`."""
    for alloc, number in params:
        try:
            view = _from_buffer(args[number])
            keep.append(view)
            table[alloc] = _addressof(view)
        except (TypeError, ValueError, BufferError):   # read-only or strided
            table[alloc] = _address(args[number], keep)


def _address(array: np.ndarray, keep: list) -> int:
    """The address of a C-contiguous copy of `array` (itself when it is one); what
    must stay alive until the call returns goes into `keep`."""
    try:
        view = ctypes.c_char.from_buffer(array)   # fast: contiguous and writable
        keep.append(view)
        return ctypes.addressof(view)
    except (TypeError, ValueError, BufferError):
        contiguous = np.ascontiguousarray(array)
        keep.append(contiguous)
        return contiguous.ctypes.data


def _nest(shape: Shape, leaves: list) -> list:
    """The root's results as the interpreter gives them: one entry per top-level
    element, nested tuples kept as tuples."""
    if not shape.is_tuple:
        return leaves
    it = iter(leaves)

    def build(s):
        return tuple(build(t) for t in s.tuple_shapes) if s.is_tuple else next(it)
    return [build(t) for t in shape.tuple_shapes]


class _ViewPlan:
    """How one result sits in its output buffer, worked out once: slicing it out per
    call is then a slice, a view and a reshape (and a transpose for other layouts)."""

    __slots__ = ("start", "stop", "dtype", "dims", "inverse")

    def __init__(self, shape: Shape, offset: int):
        axes, identity = _physical(shape)
        self.dtype = shape.dtype
        self.start = offset
        self.stop = offset + shape.element_count * self.dtype.itemsize
        self.dims = tuple(shape.dimensions[a] for a in axes)
        self.inverse = None if identity else tuple(int(a) for a in np.argsort(axes))

    def of(self, buffer: np.ndarray, base: int) -> np.ndarray:
        """The result, a view of `buffer` whose allocation starts at byte `base`."""
        value = np.ndarray(self.dims, self.dtype, buffer=buffer, offset=base + self.start)
        return value if self.inverse is None else value.transpose(self.inverse)


def _view(buffer: np.ndarray, offset: int, shape: Shape) -> np.ndarray:
    return _ViewPlan(shape, offset).of(buffer, 0)
