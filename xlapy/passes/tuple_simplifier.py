"""Tuple simplification (XLA's TupleSimplifier, pass name "tuple-simplifier").

Two rewrites, both exact (they only re-route values):

    get-tuple-element(tuple(a0, ..., an), i)               -> ai
    tuple(get-tuple-element(t, 0), ..., get-tuple-element(t, n)) -> t
        (t's shape has exactly those n+1 elements)

Instructions are visited operands first, so a chain of get-tuple-elements
through nested tuples collapses in one run. What a rewrite leaves unused is
removed with it; other dead code is DCE's.
"""

from __future__ import annotations

from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.mutation import forward_operands
from xlapy.hlo.opcode import Opcode
from xlapy.passes.dce import remove_dead_operands
from xlapy.passes.pass_interface import Pass


class TupleSimplifier(Pass):
    """Forward tuple elements to their readers; drop tuples that rebuild a tuple."""

    name = "tuple-simplifier"

    def run(self, module: HloModule) -> bool:
        changed = False
        for computation in module.computations:
            changed |= _simplify(computation)
        return changed


def _simplify(computation: HloComputation) -> bool:
    """One walk in program order, forwarding each instruction's operands first, so
    the inner link of a chain is already resolved when the outer one is reached."""
    replacements: dict[int, HloInstruction] = {}
    replaced: list[HloInstruction] = []
    for instruction in computation.instructions:
        forward_operands(instruction, replacements)
        replacement = _replacement(instruction)
        if replacement is not None:
            replacements[id(instruction)] = replacement
            replaced.append(instruction)
    if not replaced:
        return False
    root = computation.root_instruction
    computation.root_instruction = replacements.get(id(root), root)
    remove_dead_operands(computation, replaced)
    return True


def _replacement(instruction: HloInstruction) -> HloInstruction | None:
    if instruction.opcode is Opcode.GET_TUPLE_ELEMENT:
        return _element_of_tuple(instruction)
    if instruction.opcode is Opcode.TUPLE:
        return _rebuilt_tuple(instruction)
    return None


def _element_of_tuple(gte: HloInstruction) -> HloInstruction | None:
    # get-tuple-element(tuple(a0, ..., an), i) -> ai
    source = gte.operands[0]
    if source.opcode is not Opcode.TUPLE:
        return None
    element = source.operands[gte.attr("index")]
    return element if element.shape.compatible(gte.shape) else None


def _rebuilt_tuple(tuple_: HloInstruction) -> HloInstruction | None:
    # tuple(get-tuple-element(t, 0), ..., get-tuple-element(t, n)) -> t
    source = None
    for position, operand in enumerate(tuple_.operands):
        if operand.opcode is not Opcode.GET_TUPLE_ELEMENT or operand.attr("index") != position:
            return None
        if source is None:
            source = operand.operands[0]
        elif operand.operands[0] is not source:
            return None
    if source is None or not source.shape.compatible(tuple_.shape):
        return None
    return source
