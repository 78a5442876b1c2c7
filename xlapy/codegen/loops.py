"""Loops in LLVM IR, in the shape LLVM's loop vectoriser recognises.

`for_range` emits a counted loop with the induction variable as a phi in
the header, the test at the bottom (a loop that may run zero times is
guarded once in front) and a single latch, so LoopVectorize, LICM and the
unroller all see a canonical loop. A module may ask for a number of
interleaved vectors per vectorised loop (`LOOP_INTERLEAVE`, the CPU backend's
four); a loop may ask for its own (`interleave`), as LLVM's
`llvm.loop.interleave.count` hint on the latch.
"""

from __future__ import annotations

import contextlib

import llvmlite.ir as ir

I64 = ir.IntType(64)


LOOP_INTERLEAVE = "xlapy_loop_interleave"
"""Module attribute: the interleave count every `for_range` loop of it is hinted."""


def const(value: int) -> ir.Constant:
    return ir.Constant(I64, value)


class _LoopId(ir.values.MDValue):
    """A loop's metadata node: its first operand is itself (LLVM's rule), so it is
    compared and hashed by identity."""

    __hash__ = object.__hash__

    def __eq__(self, other):
        return self is other


def _hint_interleave(builder: ir.IRBuilder, latch: ir.Instruction, count: int) -> None:
    module = builder.module
    hint = module.add_metadata([ir.MetaDataString(module, "llvm.loop.interleave.count"),
                                ir.Constant(ir.IntType(32), count)])
    loop_id = _LoopId(module, [], name=str(len(module.metadata)))
    loop_id.operands = (loop_id, hint)
    latch.set_metadata("llvm.loop", loop_id)


@contextlib.contextmanager
def for_range(builder: ir.IRBuilder, start, stop, step=1, name: str = "i",
              interleave: int | None = None):
    """`for i in range(start, stop, step)` (step > 0): yields the induction variable;
    the builder is positioned inside the body and, on exit, after the loop.
    `interleave`: vectors per iteration once vectorised (else the module's)."""
    start = const(start) if isinstance(start, int) else start
    stop = const(stop) if isinstance(stop, int) else stop
    step = const(step) if isinstance(step, int) else step
    fn = builder.function
    pre = builder.block
    body = fn.append_basic_block(f"{name}.body")
    done = fn.append_basic_block(f"{name}.done")
    builder.cbranch(builder.icmp_signed("<", start, stop), body, done)
    builder.position_at_end(body)
    index = builder.phi(I64, name=name)
    index.add_incoming(start, pre)
    yield index
    following = builder.add(index, step, name=f"{name}.next", flags=("nsw",))
    index.add_incoming(following, builder.block)
    latch = builder.cbranch(builder.icmp_signed("<", following, stop), body, done)
    count = interleave or getattr(builder.module, LOOP_INTERLEAVE, None)
    if count:
        _hint_interleave(builder, latch, count)
    builder.position_at_end(done)


class Accumulator:
    """A loop-carried value: read `.value` in the body, `set` the next one; after
    the loop `.result` is the final value (or the initial one if it never ran)."""

    def __init__(self, builder: ir.IRBuilder, initial: ir.Value, name: str = "acc"):
        self._builder = builder
        self._initial = initial
        self._pre = builder.block
        self._phi: ir.PhiInstr | None = None
        self._next = None
        self.name = name

    def enter(self) -> None:
        """Call first thing in the loop body."""
        b = self._builder
        block = b.block
        with b.goto_block(block):
            b.position_at_start(block)
            self._phi = b.phi(self._initial.type, name=self.name)
        self._phi.add_incoming(self._initial, self._pre)

    @property
    def value(self) -> ir.Value:
        return self._phi

    def set(self, value: ir.Value) -> None:
        self._next = value

    def close(self) -> None:
        """Call last thing in the loop body (before leaving the `for_range` block)."""
        self._latch = self._builder.block
        self._phi.add_incoming(self._next, self._latch)

    def result(self, builder: ir.IRBuilder) -> ir.Value:
        """After the loop: the value out of the loop (a phi on the exit edge)."""
        out = builder.phi(self._initial.type, name=f"{self.name}.out")
        out.add_incoming(self._initial, self._pre)
        out.add_incoming(self._next, self._latch)
        return out
