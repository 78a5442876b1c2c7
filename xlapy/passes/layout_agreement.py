"""LayoutAgreement: every buffer is read in the layout it was written in.

Layouts are physical: a program's values do not depend on them. But a
backend passes some buffers on without copying — tuple elements, loop
states, branch and fusion operands, results of called computations — and
reads each one with the layout of the shape at hand. A module may declare
two layouts for one buffer (a tuple whose element layout is not its
operand's, a loop whose init is laid out unlike the loop, a branch whose
parameter is not laid out as its operand); then a read disagrees with the
write and the values come out transposed. XLA's layout assignment settles
this; this pass does the part that aliasing needs:

- a tuple's, a get-tuple-element's, an add-dependency's and an
  optimization barrier's shape follow their operand (none has a buffer of
  its own);
- parameters of a called computation take the layout of what is passed in
  (a branch's operand, a call's or fusion's operands; for a while, the
  while's own shape, its init copied into it where it differs);
- the root of a while body, a branch or a call is copied into the shape
  its caller declares, and the entry's root into the shape it declared (the
  result layout is part of a compiled program's interface).

It runs last, after fusion, so every instruction it checks is the final one.
"""

from __future__ import annotations

from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.mutation import NameUniquer, add_before
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.passes.pass_interface import Pass

_PASS_ON = frozenset({Opcode.ADD_DEPENDENCY, Opcode.OPTIMIZATION_BARRIER, Opcode.DOMAIN})
"""Ops whose result is their first operand's buffer, as it is."""


def same_layout(a: Shape, b: Shape) -> bool:
    """Equal shapes, layouts included (a missing layout is the default one)."""
    return a.with_default_layout() == b.with_default_layout()


class LayoutAgreement(Pass):
    name = "layout-agreement"

    def run(self, module: HloModule) -> bool:
        self.names = NameUniquer(module)
        self.changed = False
        entry = module.entry_computation
        required = {id(entry): entry.root_instruction.shape}
        for computation in _callers_first(entry):
            for instruction in computation.post_order():
                self._agree(computation, instruction, required)
            shape = required.get(id(computation))
            root = computation.root_instruction
            if shape is not None and not same_layout(root.shape, shape):
                new = self._relaid(computation, root, shape, anchor=None)
                computation.root_instruction = new
                self.changed = True
        return self.changed

    def _agree(self, computation: HloComputation, instruction: HloInstruction,
               required: dict) -> None:
        op = instruction.opcode
        if op is Opcode.TUPLE:
            self._set(instruction, Shape.tuple([o.shape for o in instruction.operands]))
        elif op in _PASS_ON:
            self._set(instruction, instruction.operands[0].shape)
        elif op is Opcode.GET_TUPLE_ELEMENT:
            self._set(instruction,
                      instruction.operands[0].shape.tuple_shapes[instruction.attr("index")])
        elif op is Opcode.WHILE:
            init = instruction.operands[0]
            if not same_layout(init.shape, instruction.shape):
                relaid = self._relaid(computation, init, instruction.shape, anchor=instruction)
                instruction.operands = [relaid]
                self.changed = True
            for callee in (instruction.attr("body"), instruction.attr("condition")):
                self._set(callee.parameter(0), instruction.shape)
            required[id(instruction.attr("body"))] = instruction.shape
        elif op is Opcode.CONDITIONAL:
            for branch, operand in zip(_branches(instruction), instruction.operands[1:]):
                self._set(branch.parameter(0), operand.shape)
                required[id(branch)] = instruction.shape
        elif op in (Opcode.CALL, Opcode.FUSION):
            callee = instruction.called_computations[0]
            for parameter in callee.parameters:
                self._set(parameter, instruction.operands[parameter.parameter_number].shape)
            if op is Opcode.CALL:
                required[id(callee)] = instruction.shape

    def _set(self, instruction: HloInstruction, shape: Shape) -> None:
        if not same_layout(instruction.shape, shape):
            instruction.shape = shape
            self.changed = True

    def _relaid(self, computation: HloComputation, value: HloInstruction, shape: Shape,
                anchor: HloInstruction | None) -> HloInstruction:
        """`value` in layout `shape`: itself, a copy, or a tuple of its elements relaid.
        New instructions go before `anchor` (at the end when None)."""
        if same_layout(value.shape, shape) or shape.is_token:
            return value
        if shape.is_array:
            return self._add(computation, Opcode.COPY, shape, [value], anchor)
        if value.opcode is Opcode.TUPLE:
            parts = value.operands
        else:
            parts = [self._add(computation, Opcode.GET_TUPLE_ELEMENT, part, [value], anchor,
                               index=i) for i, part in enumerate(value.shape.tuple_shapes)]
        parts = [self._relaid(computation, part, target, anchor)
                 for part, target in zip(parts, shape.tuple_shapes)]
        return self._add(computation, Opcode.TUPLE, shape, parts, anchor)

    def _add(self, computation: HloComputation, opcode: Opcode, shape: Shape, operands,
             anchor: HloInstruction | None, **attrs) -> HloInstruction:
        made = HloInstruction(opcode, shape, operands, attrs,
                              name=self.names(operands[0].name))
        if anchor is None:
            made.parent = computation
            computation.instructions.append(made)
        else:
            add_before(computation, anchor, made)
        return made


def _branches(conditional: HloInstruction) -> list[HloComputation]:
    """A conditional's branches in operand order (the pred form: true, then false)."""
    branches = conditional.attr("branch_computations")
    if branches:
        return list(branches)
    return [conditional.attr("true_computation"), conditional.attr("false_computation")]


def _callers_first(entry: HloComputation) -> list[HloComputation]:
    """The entry and every computation it calls, each after its first caller."""
    order, seen = [entry], {id(entry)}
    for computation in order:
        for instruction in computation.instructions:
            for callee in instruction.called_computations:
                if id(callee) not in seen:
                    seen.add(id(callee))
                    order.append(callee)
    return order
