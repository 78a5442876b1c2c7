"""Where generated code goes: loop nests with one hoisting point per depth.

Every index component carries the depth of the innermost loop it depends on
(`Ix`). A value is emitted at the depth of its index, not where it is first
needed: in a row softmax the row's max and sum are computed once per row,
before the loop over the row's elements, although the element loop asks
for them. `Scope.at(depth)` positions the builder at that depth's hoisting
point; `Scope.loop(depth, ...)` opens a loop there.

A hoisting point is an unterminated block. Opening a loop at depth d puts
the loop's guard in a fresh block and leaves point d open, so code the loop
body hoists to depth d still lands in front of the loop; when the loop
closes, point d branches to the guard and moves to the loop's exit block.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import llvmlite.ir as ir

from xlapy.codegen import ir_types as T
from xlapy.codegen.loops import for_range

OUTSIDE = -1
"""Depth of values that depend on no loop of the kernel."""


@dataclass(frozen=True)
class Ix:
    """One index component: an i64 value and the loop depth it depends on."""

    value: ir.Value
    depth: int

    @staticmethod
    def const(value: int) -> Ix:
        return Ix(ir.Constant(T.I64, value), OUTSIDE)


def depth_of(index) -> int:
    return max((i.depth for i in index), default=OUTSIDE)


class Scope:
    def __init__(self, builder: ir.IRBuilder):
        self.b = builder
        self.depth = OUTSIDE
        self.points: dict[int, ir.Block] = {}
        self.allocas_block = builder.function.entry_basic_block

    def _point(self, depth: int) -> ir.Block:
        return self.b.block if depth == self.depth else self.points[depth]

    @contextlib.contextmanager
    def at(self, depth: int):
        """Emit at depth `depth` (≤ the current depth): the builder moves to that
        depth's hoisting point, and back afterwards."""
        depth = min(depth, self.depth)
        if depth == self.depth:
            yield self.b
            return
        saved_block, saved_depth, saved_points = self.b.block, self.depth, self.points
        self.b.position_at_end(saved_points[depth])
        self.depth = depth
        self.points = {k: v for k, v in saved_points.items() if k < depth}
        try:
            yield self.b
        finally:
            moved = self.points
            self.points = {**saved_points, **moved, depth: self.b.block}
            self.depth = saved_depth
            self.b.position_at_end(saved_block)

    @contextlib.contextmanager
    def loop(self, depth: int, start, stop, name: str = "i", step=1,
             interleave: int | None = None):
        """A loop opened at `depth` (≤ the current depth); yields its induction
        variable as an Ix of depth+1. Inside, the scope's depth is depth+1."""
        with self.at(depth):
            depth = self.depth
            b = self.b
            outer = dict(self.points)
            outer[depth] = b.block
            guard = b.function.append_basic_block(f"{name}.guard")
            b.position_at_end(guard)
            with for_range(b, start, stop, step, name=name, interleave=interleave) as iv:
                self.points = dict(outer)
                self.depth = depth + 1
                yield Ix(iv, depth + 1)
                moved = self.points
            exit_block = b.block
            with b.goto_block(moved[depth]):
                b.branch(guard)
            self.points = {k: v for k, v in moved.items() if k < depth}
            self.depth = depth
            b.position_at_end(exit_block)

    def alloca(self, t: ir.Type, name: str = "") -> ir.Value:
        """A stack slot in the function's entry block (promoted to registers by LLVM)."""
        with self.b.goto_block(self.allocas_block):
            self.b.position_at_start(self.allocas_block)
            return self.b.alloca(t, name=name)
