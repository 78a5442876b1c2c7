"""How the CPU backend lowers each opcode, or why it cannot: one table.

Every opcode has an entry (`TABLE`): the emitter or kernel that computes it
natively, and when the HLO evaluator computes it instead, with the reason.
Code generation falls back to the evaluator only where the entry says so
(`fallback` non-empty); an emitter refusing any other instruction is a
`CompileError`. Each fallback is recorded on the executable with its reason
(`CpuExecutable.fallback_reasons`), logged once per process, written to the
dumps, and refused under `--xlapy_cpu_strict` (and ahead of time).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from xlapy.backends.cpu.kernels import (  # noqa: F401  (each family registers its kernels)
    convolution,
    dot,
    gather_scatter,
    in_place,
    linalg,
    rng,
    sort,
    windows,
)
from xlapy.backends.cpu.special_kernels import SPECIAL
from xlapy.codegen.tables import EMITTERS, GENERATORS
from xlapy.hlo.evaluator.rules import NOT_INTERPRETED
from xlapy.hlo.opcode import ELEMENTWISE
from xlapy.hlo.opcode import Opcode as Op


@dataclass(frozen=True)
class Lowering:
    native: str
    """The emitter or kernel that computes the opcode; "" when none does."""
    fallback: str = ""
    """When the evaluator computes it instead, and why; "" when it never does."""
    impossible: str = ""
    """Why neither compiled code nor the evaluator can run it; "" when one can."""


NO_CODE = frozenset({Op.PARAMETER, Op.CONSTANT, Op.GET_TUPLE_ELEMENT, Op.TUPLE,
                     Op.AFTER_ALL, Op.ADD_DEPENDENCY, Op.OPTIMIZATION_BARRIER, Op.DOMAIN})
"""Ops with no code of their own: buffers, aliases and bookkeeping."""

CONTROL_FLOW = frozenset({Op.WHILE, Op.CONDITIONAL, Op.CALL})


def needs_code(instruction, assignment) -> bool:
    """False for an op without code of its own (`NO_CODE`), and for a bitcast,
    reshape or copy that buffer assignment placed in its operand's own buffer:
    what both the CPU and the GPU backend skip when they walk a computation."""
    op = instruction.opcode
    if op in NO_CODE:
        return False
    if op in (Op.BITCAST, Op.RESHAPE, Op.COPY) and not instruction.shape.is_tuple:
        own = assignment.slice_of(instruction)
        return own is None or own != assignment.slice_of(instruction.operands[0])
    return True

LOOP_OPS = frozenset(ELEMENTWISE | {
    Op.BROADCAST, Op.TRANSPOSE, Op.RESHAPE, Op.SLICE, Op.PAD, Op.CONCATENATE, Op.REVERSE,
    Op.IOTA, Op.DYNAMIC_SLICE, Op.DYNAMIC_UPDATE_SLICE, Op.COPY, Op.REDUCE, Op.DOT,
    Op.BITCAST, Op.BITCAST_CONVERT, Op.MAP, Op.PARTITION_ID, Op.REPLICA_ID})
"""Ops compiled as a loop kernel over their output, by their element generator."""

COLLECTIVES = frozenset({
    Op.ALL_GATHER, Op.ALL_GATHER_START, Op.ALL_GATHER_DONE, Op.ALL_REDUCE,
    Op.ALL_REDUCE_START, Op.ALL_REDUCE_DONE, Op.ALL_TO_ALL, Op.COLLECTIVE_BROADCAST,
    Op.COLLECTIVE_PERMUTE, Op.COLLECTIVE_PERMUTE_START, Op.COLLECTIVE_PERMUTE_DONE,
    Op.REDUCE_SCATTER})
"""Ops the generated code hands to the collectives runtime (backends/cpu/collectives.py:
MPI between processes, on the buffers in place)."""

REFUSED_CASES = ("cases the emitters refuse: element types without native arithmetic "
                 "(sub-byte integers, the f8 and f4 formats), the complex ops "
                 "codegen/elemental_complex.py leaves out, a scalar computation holding a "
                 "non-elementwise op; the emitter's message is the recorded reason")
"""When a natively lowered op still runs in the evaluator."""

NO_NATIVE: dict[Op, str] = {
    **{op: "batch normalisation: XLA expands it into elementwise ops and reductions before "
           "code generation; xlapy's pipeline keeps it, and the evaluator computes it"
       for op in (Op.BATCH_NORM_GRAD, Op.BATCH_NORM_INFERENCE, Op.BATCH_NORM_TRAINING)},
    **{op: "an asynchronous copy pair: the evaluator copies" for op in (Op.COPY_START,
                                                                        Op.COPY_DONE)},
    Op.CUSTOM_CALL: "a custom call: its target is the evaluator's (or refused there)",
    Op.FFT: "no native FFT: the evaluator runs NumPy's",
    Op.GET_DIMENSION_SIZE: "a static dimension size: the evaluator returns it",
    Op.RNG: "the stateful `rng` op: the evaluator draws it (rng-bit-generator is native)",
    Op.TOPK: "the topk-decomposer pass rewrites it into a sort; left alone, the evaluator "
             "selects",
}
"""Opcodes no emitter computes, and why the evaluator does."""

_LOG = logging.getLogger("xlapy.backends.cpu")
_LOGGED: set[tuple[Op, str]] = set()


def _native(op: Op) -> str:
    if op in NO_CODE:
        return "no code: a buffer, an alias or bookkeeping"
    if op in CONTROL_FLOW:
        return "control flow, inline in the caller (backends/cpu/control_flow.py)"
    if op in COLLECTIVES:
        return "runtime entry: the collectives runtime over MPI (backends/cpu/collectives.py)"
    parts = []
    if op in SPECIAL:
        fn = SPECIAL[op]
        parts.append(f"kernel {fn.__module__.rpartition('.')[2]}.{fn.__name__}")
    if op is Op.FUSION:
        parts.append("loop kernel of the fused body's element generators")
    elif op in ELEMENTWISE and op in EMITTERS:
        parts.append("loop kernel, elemental emitter")
    elif op in LOOP_OPS and op in GENERATORS:
        parts.append("loop kernel, element generator")
    return "; else ".join(parts)


def _entry(op: Op) -> Lowering:
    if op in NOT_INTERPRETED:
        return Lowering("", impossible=NOT_INTERPRETED[op])
    native = _native(op)
    if native:
        refusable = not (op in NO_CODE or op in CONTROL_FLOW or op in COLLECTIVES)
        return Lowering(native, REFUSED_CASES if refusable else "")
    return Lowering("", NO_NATIVE.get(op, ""))


TABLE: dict[Op, Lowering] = {op: _entry(op) for op in Op}


def log_fallback(op: Op, reason: str) -> None:
    """Say once per process that `op` runs in the evaluator, and why."""
    key = (op, reason)
    if key not in _LOGGED:
        _LOGGED.add(key)
        _LOG.warning("the CPU backend runs %s in the HLO evaluator: %s", op.value, reason)
