"""Row stashes: an expensive value a reduction reads, kept for the rest of the row.

A row softmax reduces `e = exp(x - max)` along the row and then divides the
same `e` by the sum. Fusion computes values where they are needed, so the
division would compute `exp` a second time for every element, and a softmax
is bound by its exponentials, not its memory. When the reduction's input is
expensive (a transcendental function in its expression), is read again
outside the reduction, and the row is short enough, the reduction's loop
stores each element of it into a row buffer on the stack (it stays in L1);
a later read of the input in the same row loads from there instead.

A stash belongs to one emission of the reduction: it is read only at indices
whose kept components are the very values the reduction was emitted for (the
same row of the same loop iteration), so a buffer is never read for another
row. The reduction's loop covers the whole reduced dimension before anything
in its row reads the stash: its code is hoisted to the row's depth, in front
of the row's inner loops.
"""

from __future__ import annotations

from dataclasses import dataclass

import llvmlite.ir as ir

from xlapy.codegen import ir_types as T
from xlapy.codegen.scope import depth_of
from xlapy.hlo.opcode import Opcode as Op

MAX_ELEMENTS = 4096
"""Longest row stashed (16 KiB of f32 on the stack: within L1 with its input)."""

EXPENSIVE = frozenset({Op.EXP, Op.EXPM1, Op.LOG, Op.LOG1P, Op.TANH, Op.LOGISTIC, Op.POWER,
                       Op.ERF, Op.SIN, Op.COS, Op.TAN, Op.ATAN2, Op.CBRT})
"""Operations costing tens of instructions per element: worth a store and a load."""

_CHEAP_STOPS = frozenset({Op.PARAMETER, Op.CONSTANT, Op.REDUCE, Op.IOTA})
"""Where the search for an expensive operation stops: loads, constants, and other
reductions (read once per row, not per element)."""


@dataclass
class Stash:
    dim: int               # the reduced dimension of the input
    kept: tuple            # identities of the input's other index components
    extent: int
    scope: object
    buffer: ir.Value | None = None   # [extent x value type] on the stack, at the first store

    def store(self, b: ir.IRBuilder, value, position: ir.Value) -> None:
        if not isinstance(value, ir.Value) or isinstance(value.type, ir.BaseStructType):
            return   # a complex pair: not stashed, recomputed where read
        if self.buffer is None:
            self.buffer = self.scope.alloca(ir.ArrayType(value.type, self.extent),
                                            name="row.stash")
        b.store(value, b.gep(self.buffer, [ir.Constant(T.I32, 0), position]))


def plan(g, reduce, inputs, reduced: list[int], override, full_kept: tuple):
    """A Stash for the single input of `reduce` if it is worth keeping (see the
    module's docstring), else None; `register` it once the reduction's loop is
    emitted (a read inside that loop must not find a half-filled row).
    `full_kept` are the input's index components outside the reduced dimension."""
    if len(inputs) != 1 or len(reduced) != 1 or override is not None \
            or not getattr(g.kernel, "row_stash", False):   # a GPU thread has no room
        return None
    source = inputs[0]
    extent = source.shape.dimensions[reduced[0]]
    if extent > MAX_ELEMENTS or not _read_elsewhere(g, source, reduce) \
            or not _expensive(g, source):
        return None
    return Stash(reduced[0], _identity(full_kept), extent, g.scope)


def register(g, source, stash: Stash) -> None:
    g.stashes.setdefault(id(source), []).append(stash)


def lookup(g, instruction, index):
    """The stashed value of `instruction` at `index`, loaded; None if no stash holds
    this row."""
    for stash in g.stashes.get(id(instruction), ()):
        if stash.buffer is None:
            continue
        kept = tuple(ix for d, ix in enumerate(index) if d != stash.dim)
        if _identity(kept) == stash.kept:
            with g.scope.at(depth_of(index)):
                b = g.b
                return b.load(b.gep(stash.buffer, [ir.Constant(T.I32, 0),
                                                   index[stash.dim].value]))
    return None


def _identity(components) -> tuple:
    return tuple(("c", ix.value.constant) if isinstance(ix.value, ir.Constant) else id(ix.value)
                 for ix in components)


def _read_elsewhere(g, source, reduce) -> bool:
    """Whether another instruction of the fused computation reads `source`."""
    computation = source.parent
    if computation is None:
        return False
    users = g.users_in(computation).get(id(source), ())
    return any(user is not reduce for user in users) or computation.root_instruction is source


def _expensive(g, instruction, seen=None) -> bool:
    seen = set() if seen is None else seen
    if id(instruction) in seen or instruction.opcode in _CHEAP_STOPS:
        return False
    seen.add(id(instruction))
    if instruction.opcode in EXPENSIVE:
        return True
    return any(_expensive(g, o, seen) for o in instruction.operands)
