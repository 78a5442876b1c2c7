"""Constant folding (XLA's HloConstantFolding, pass name "constant_folding").

An instruction whose operands are all constants (at least one a `constant`
itself, the others constants, iotas or broadcasts of constants, as XLA asks)
is evaluated at compile time by the interpreter's own rules and replaced by a
`constant` holding the result. Because the rules are the interpreter's, a
folded module gives exactly the interpreter's results. (XLA allows one
difference here, and so do we: on a compiled backend a folded value is the
host evaluator's, which may differ in the last ulp from what the device's own
transcendental functions would have computed.)

What is never folded, and why:
- `broadcast` and `iota` themselves: they are cheap to recompute and folding
  them would turn a scalar into a large literal (XLA's rule);
- results over MAX_RESULT_ELEMENTS elements, or operands over
  MAX_OPERAND_ELEMENTS in total: a folded literal lives in the module (and in
  every dump) and folding big arrays costs compile time (XLA bounds this at
  45M elements; ours is a Python evaluator, so the bound is lower);
- tuple-shaped results (no backend takes tuple constants; XLA's reason too),
  `tuple`, `parameter`, `constant`, tokens;
- anything with a side effect, `rng` and `rng-bit-generator` (a backend's
  random numbers are its own), `custom-call` (its meaning is the backend's),
  collectives, `replica-id`, `partition-id` (device-dependent), `while`
  (unbounded compile time), `fft` (slow to evaluate, XLA's rule),
  `opt-barrier` and `domain` (they exist to stop optimisation), and anything
  calling a computation that holds one of these;
- instructions inside fused computations (XLA folds only outside fusions) and
  dead instructions.

An instruction the interpreter cannot evaluate is left alone, as XLA skips
what its evaluator does not implement.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import XlapyError
from xlapy.hlo.evaluator.evaluator import Evaluator
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.mutation import NameUniquer, forward_operands
from xlapy.hlo.opcode import COLLECTIVE, Opcode
from xlapy.passes.dce import has_side_effect, remove_dead_operands
from xlapy.passes.pass_interface import Pass

MAX_RESULT_ELEMENTS = 65536
"""A folded literal is stored in the module and printed in every dump."""
MAX_OPERAND_ELEMENTS = 1 << 20
"""Bounds the compile time one fold may take in the Python evaluator."""

_NEVER_FOLDED = COLLECTIVE | {
    Opcode.PARAMETER, Opcode.CONSTANT, Opcode.TUPLE, Opcode.BROADCAST, Opcode.IOTA,
    Opcode.RNG, Opcode.RNG_BIT_GENERATOR, Opcode.RNG_GET_AND_UPDATE_STATE, Opcode.AFTER_ALL,
    Opcode.CUSTOM_CALL, Opcode.REPLICA_ID, Opcode.PARTITION_ID, Opcode.WHILE, Opcode.FFT,
    Opcode.OPTIMIZATION_BARRIER, Opcode.DOMAIN, Opcode.INFEED, Opcode.OUTFEED, Opcode.SEND,
    Opcode.SEND_DONE, Opcode.RECV, Opcode.RECV_DONE, Opcode.ASYNC_START, Opcode.ASYNC_UPDATE,
    Opcode.ASYNC_DONE, Opcode.COPY_START, Opcode.COPY_DONE,
}


class HloConstantFolding(Pass):
    """Replace instructions computable at compile time by their value."""

    name = "constant_folding"

    def run(self, module: HloModule) -> bool:
        folder = _Folder(module)
        fused = {id(i.attr("calls")) for c in module.computations for i in c.instructions
                 if i.opcode is Opcode.FUSION}
        changed = False
        for computation in module.computations:
            if id(computation) not in fused:
                changed |= folder.fold_computation(computation)
        return changed


class _Folder:
    def __init__(self, module: HloModule):
        self.names = NameUniquer(module)
        self.side_effects: dict[int, bool] = {}
        self.foldable_callee: dict[int, bool] = {}

    def fold_computation(self, computation: HloComputation) -> bool:
        """One walk in program order: users read the constants folded before them,
        so a chain of foldable ops folds in one run. Each constant goes just before
        the instruction it replaces; what the folds leave unused goes at the end."""
        users = computation.users()
        replacements: dict[int, HloInstruction] = {}
        folded: list[HloInstruction] = []
        order: list[HloInstruction] = []
        for instruction in computation.instructions:
            forward_operands(instruction, replacements)
            live = bool(users.get(id(instruction))) or \
                instruction is computation.root_instruction
            value = self.try_fold(instruction) if live else None
            if value is not None:
                constant = HloInstruction(Opcode.CONSTANT, instruction.shape, (),
                                          name=self.names("constant"), literal=value)
                constant.parent = computation
                order.append(constant)
                replacements[id(instruction)] = constant
                folded.append(instruction)
            order.append(instruction)
        if not folded:
            return False
        computation.instructions = order
        root = computation.root_instruction
        computation.root_instruction = replacements.get(id(root), root)
        remove_dead_operands(computation, folded)
        return True

    def try_fold(self, instruction: HloInstruction):
        """The instruction's value if it may and can be folded, else None."""
        if not self.may_fold(instruction):
            return None
        try:
            with np.errstate(all="ignore"):
                operands = [_constant_value(op) for op in instruction.operands]
                return Evaluator().evaluate(instruction, operands)
        except XlapyError:
            return None  # the interpreter cannot evaluate it: leave it to the backend

    def may_fold(self, instruction: HloInstruction) -> bool:
        shape = instruction.shape
        if not any(op.opcode is Opcode.CONSTANT for op in instruction.operands):
            return False  # XLA: op(broadcast, iota) is algsimp's to simplify, not ours
        if not all(_is_constant_like(op) for op in instruction.operands):
            return False
        if not shape.is_array or shape.is_dynamic or not self.foldable_op(instruction):
            return False
        operand_elements = sum(_elements(op.shape) for op in instruction.operands)
        return shape.element_count <= MAX_RESULT_ELEMENTS and \
            operand_elements <= MAX_OPERAND_ELEMENTS

    def foldable_op(self, instruction: HloInstruction) -> bool:
        """Not a never-folded op, and calls only computations free of them."""
        if instruction.opcode in _NEVER_FOLDED or has_side_effect(instruction, self.side_effects):
            return False
        for callee in instruction.called_computations:
            if id(callee) not in self.foldable_callee:
                self.foldable_callee[id(callee)] = False  # guards against recursion
                self.foldable_callee[id(callee)] = all(
                    i.opcode in (Opcode.PARAMETER, Opcode.CONSTANT, Opcode.TUPLE,
                                 Opcode.BROADCAST, Opcode.IOTA) or self.foldable_op(i)
                    for i in callee.instructions)
            if not self.foldable_callee[id(callee)]:
                return False
        return True


def _is_constant_like(instruction: HloInstruction) -> bool:
    """A constant with its literal, an iota, a broadcast of a constant, or a tuple of
    these: the operands XLA folds through."""
    op = instruction.opcode
    if op is Opcode.CONSTANT:
        return instruction.literal is not None
    if op is Opcode.IOTA:
        return True
    if op is Opcode.BROADCAST:
        return instruction.operands[0].opcode is Opcode.CONSTANT and \
            instruction.operands[0].literal is not None
    if op is Opcode.TUPLE:
        return all(_is_constant_like(o) for o in instruction.operands)
    return False


def _constant_value(instruction: HloInstruction):
    if instruction.opcode is Opcode.TUPLE:
        return tuple(_constant_value(o) for o in instruction.operands)
    operands = [_constant_value(o) for o in instruction.operands]
    return Evaluator().evaluate(instruction, operands)


def _elements(shape) -> int:
    if shape.is_tuple:
        return sum(_elements(s) for s in shape.tuple_shapes)
    return shape.element_count if shape.is_array else 0
