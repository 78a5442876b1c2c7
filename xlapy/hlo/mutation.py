"""Editing HLO in place: the few primitives every pass needs.

Passes rewrite computations by creating instructions, redirecting uses and
dropping what became dead. These helpers keep the invariants the verifier
checks: unique names across the module and instructions in a valid order.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule

_SUFFIX = re.compile(r"\.(\d+)$")


class NameUniquer:
    """Hands out `base.N` names not yet used anywhere in a module."""

    def __init__(self, module: HloModule):
        self.used = {i.name for c in module.computations for i in c.instructions}
        self.used |= {c.name for c in module.computations}
        numbers = [int(m.group(1)) for n in self.used if (m := _SUFFIX.search(n))]
        self._counter = itertools.count(max(numbers, default=0) + 1)

    def __call__(self, base: str) -> str:
        base = _SUFFIX.sub("", base) or "instruction"
        while True:
            name = f"{base}.{next(self._counter)}"
            if name not in self.used:
                self.used.add(name)
                return name


def add_before(computation: HloComputation, anchor: HloInstruction,
               instruction: HloInstruction) -> HloInstruction:
    """Insert `instruction` just before `anchor` (so its operands, defined
    before the anchor, stay before it). The root is unchanged."""
    instruction.parent = computation
    computation.instructions.insert(computation.instructions.index(anchor), instruction)
    return instruction


def replace_uses(computation: HloComputation, old: HloInstruction,
                 new: HloInstruction) -> None:
    """Every use of `old` in `computation` (and the root) now uses `new`.

    `new` must be defined before the first user of `old`; call `sort` if unsure.
    """
    for instruction in computation.instructions:
        if instruction is new:
            continue
        if any(op is old for op in instruction.operands):
            instruction.operands = [new if op is old else op for op in instruction.operands]
    if computation.root_instruction is old:
        computation.root_instruction = new


def remove(computation: HloComputation, dead: Iterable[HloInstruction]) -> None:
    """Drop instructions (the caller guarantees nothing uses them)."""
    dead_ids = {id(i) for i in dead}
    computation.instructions = [i for i in computation.instructions if id(i) not in dead_ids]


def sort(computation: HloComputation) -> None:
    """Reorder into a valid order (operands first), keeping the existing order
    wherever it is already valid."""
    position = {id(i): n for n, i in enumerate(computation.instructions)}
    placed: set[int] = set()
    order: list[HloInstruction] = []

    def place(instruction: HloInstruction) -> None:
        stack = [(instruction, False)]
        while stack:
            node, ready = stack.pop()
            if id(node) in placed:
                continue
            if ready:
                placed.add(id(node))
                order.append(node)
                continue
            stack.append((node, True))
            for op in sorted(node.operands, key=lambda o: -position.get(id(o), 0)):
                if id(op) not in placed:
                    stack.append((op, False))

    for instruction in computation.instructions:
        place(instruction)
    computation.instructions = order


def forward_operands(instruction: HloInstruction, replacements: dict[int, HloInstruction]) -> None:
    """Point `instruction` at the replacements of its operands (id(old) -> new).

    The passes that rewrite many instructions walk a computation once in order,
    forwarding each instruction's operands as they reach it, instead of calling
    `mutation.replace_uses` (a scan of the whole computation) per rewrite; this
    keeps them linear on large modules. The caller forwards the root at the end.
    """
    if replacements and any(id(op) in replacements for op in instruction.operands):
        instruction.operands = [replacements.get(id(op), op) for op in instruction.operands]


def users_of(computation: HloComputation) -> dict[int, list[HloInstruction]]:
    """id(instruction) -> its users in program order (each user once)."""
    return computation.users()


def clone_computation(computation: HloComputation, names: NameUniquer,
                      extra: Iterable[HloInstruction] = ()) -> HloComputation:
    """A copy of `computation` with fresh instruction and computation names (the
    computations it calls stay shared), plus `extra` instructions (new parameters,
    say) appended; not yet in any module."""
    copies: dict[int, HloInstruction] = {}
    for instruction in computation.instructions:
        copies[id(instruction)] = HloInstruction(
            instruction.opcode, instruction.shape,
            [copies[id(o)] for o in instruction.operands], dict(instruction.attrs),
            name=names(instruction.name), literal=instruction.literal,
            parameter_number=instruction.parameter_number)
    return HloComputation(names(computation.name), [*copies.values(), *extra],
                          root=copies[id(computation.root_instruction)],
                          execution_thread=computation.execution_thread)
