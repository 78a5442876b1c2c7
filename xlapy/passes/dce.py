"""Dead code elimination (XLA's HloDCE, pass name "dce").

Removes every instruction whose value reaches neither its computation's root
nor an instruction with a side effect, and every computation the entry no
longer calls. Like XLA it also trims fusions: outputs of a multi-output
fusion that no get-tuple-element reads are dropped from its tuple root, and
parameters a fused computation no longer reads are dropped together with the
fusion's operand, so that the producers feeding only them die too.

Never removed: parameters (they are the signature), the root, and anything
with a side effect (`has_side_effect`: send/recv, infeed/outfeed, rng,
side-effecting custom-calls, collectives that order themselves by channel or
layout, and any instruction calling a computation holding one). Results are
unchanged by construction: only values nothing observes are removed.

The side-effect test and the dead-operand cleanup are shared with the other
passes of this package (CSE, constant folding, tuple simplification).
"""

from __future__ import annotations

from collections.abc import Iterable

from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.mutation import NameUniquer, remove, replace_uses
from xlapy.hlo.opcode import SIDE_EFFECTING, Opcode
from xlapy.hlo.shape import Shape
from xlapy.passes.pass_interface import Pass

_ALWAYS_SIDE_EFFECTING = SIDE_EFFECTING | {
    Opcode.ALL_REDUCE_START, Opcode.ALL_REDUCE_DONE, Opcode.ALL_GATHER_START,
    Opcode.ALL_GATHER_DONE, Opcode.COLLECTIVE_BROADCAST, Opcode.COLLECTIVE_PERMUTE_START,
    Opcode.COLLECTIVE_PERMUTE_DONE,
}
_ORDERED_BY_CHANNEL = frozenset({
    Opcode.ALL_GATHER, Opcode.ALL_REDUCE, Opcode.ALL_TO_ALL, Opcode.REDUCE_SCATTER,
    Opcode.COLLECTIVE_PERMUTE,
})


def has_side_effect(instruction: HloInstruction, memo: dict[int, bool] | None = None) -> bool:
    """XLA's HasSideEffect: the op itself has one, or a computation it calls holds one.

    Collectives count when they carry a `channel_id` or `constrain_layout=true`
    (XLA: they then take part in a cross-program ordering); `memo` caches the
    answer per called computation across calls.
    """
    if _has_side_effect_itself(instruction):
        return True
    memo = {} if memo is None else memo
    for callee in instruction.called_computations:
        if id(callee) not in memo:
            memo[id(callee)] = False  # guards against (invalid) recursion
            memo[id(callee)] = any(has_side_effect(i, memo) for i in callee.instructions)
        if memo[id(callee)]:
            return True
    return False


def _has_side_effect_itself(instruction: HloInstruction) -> bool:
    op = instruction.opcode
    if op in _ALWAYS_SIDE_EFFECTING:
        return True
    if op is Opcode.CUSTOM_CALL:
        return bool(instruction.attr("custom_call_has_side_effect", False))
    if op in _ORDERED_BY_CHANNEL:
        return instruction.attr("channel_id") is not None or \
            bool(instruction.attr("constrain_layout", False))
    return False


def remove_dead_instructions(computation: HloComputation,
                             memo: dict[int, bool] | None = None) -> bool:
    """Drop every instruction that neither the root nor a side effect needs."""
    memo = {} if memo is None else memo
    keep = [computation.root_instruction] + [
        i for i in computation.instructions
        if i.opcode is Opcode.PARAMETER or has_side_effect(i, memo)]
    live: set[int] = set()
    stack = [i for i in keep if i is not None]
    while stack:
        instruction = stack.pop()
        if id(instruction) in live:
            continue
        live.add(id(instruction))
        stack.extend(op for op in instruction.operands if id(op) not in live)
    dead = [i for i in computation.instructions if id(i) not in live]
    remove(computation, dead)
    return bool(dead)


def remove_dead_operands(computation: HloComputation,
                         candidates: Iterable[HloInstruction]) -> None:
    """Remove those of `candidates` that nothing uses any more, then their operands
    that die with them (XLA's RemoveInstructionAndUnusedOperands), leaving the rest
    of the computation alone."""
    users = {k: len(v) for k, v in computation.users().items()}
    dead: list[HloInstruction] = []
    removed: set[int] = set()
    stack = list(candidates)
    while stack:
        instruction = stack.pop()
        if id(instruction) in removed or users.get(id(instruction), 0) > 0:
            continue
        if instruction is computation.root_instruction or \
                instruction.opcode is Opcode.PARAMETER or has_side_effect(instruction):
            continue
        removed.add(id(instruction))
        dead.append(instruction)
        for operand in dict.fromkeys(instruction.operands):
            users[id(operand)] -= 1
            stack.append(operand)
    remove(computation, dead)


def callers_of(module: HloModule) -> dict[int, list[HloInstruction]]:
    """id(computation) -> the instructions that call it, in module order."""
    callers: dict[int, list[HloInstruction]] = {id(c): [] for c in module.computations}
    for computation in module.computations:
        for instruction in computation.instructions:
            for callee in dict.fromkeys(instruction.called_computations):
                callers.setdefault(id(callee), []).append(instruction)
    return callers


def remove_unreachable_computations(module: HloModule) -> bool:
    """Drop computations the entry does not (transitively) call."""
    reachable: set[int] = set()
    stack = [module.entry_computation]
    while stack:
        computation = stack.pop()
        if id(computation) in reachable:
            continue
        reachable.add(id(computation))
        for instruction in computation.instructions:
            stack.extend(instruction.called_computations)
    kept = [c for c in module.computations if id(c) in reachable]
    changed = len(kept) != len(module.computations)
    module.computations = kept
    return changed


class HloDCE(Pass):
    """Dead instructions, unread fusion outputs and parameters, unused computations."""

    name = "dce"

    def run(self, module: HloModule) -> bool:
        changed = False
        while True:
            round_changed = self._one_round(module)
            if not round_changed:
                return changed
            changed = True

    def _one_round(self, module: HloModule) -> bool:
        """Callers before callees, so a fusion's dead get-tuple-elements are gone
        before its outputs are trimmed. Repeats only when trimming a fusion's
        parameters left producers outside it dead."""
        memo: dict[int, bool] = {}
        callers = callers_of(module)
        changed = False
        for computation in reversed(module.computations):
            changed |= remove_dead_instructions(computation, memo)
            changed |= _trim_fusion_outputs(module, computation, callers)
        trimmed = _trim_fusion_parameters(module)
        changed |= remove_unreachable_computations(module)
        return changed or trimmed


# -- fusions ------------------------------------------------------------------------------
def _trim_fusion_outputs(module: HloModule, computation: HloComputation,
                         callers: dict[int, list[HloInstruction]]) -> bool:
    fusions = [i for i in computation.instructions if i.opcode is Opcode.FUSION]
    if not fusions:
        return False
    users = computation.users()
    changed = False
    for fusion in fusions:
        changed |= _trim_outputs(module, computation, fusion, users[id(fusion)], callers)
    return changed


def _trim_outputs(module: HloModule, computation: HloComputation, fusion: HloInstruction,
                  users: list[HloInstruction],
                  callers: dict[int, list[HloInstruction]]) -> bool:
    """Drop the tuple outputs of a multi-output fusion that nothing reads."""
    fused = fusion.attr("calls")
    if fused is None or len(callers.get(id(fused), [])) != 1 or "output_to_operand_aliasing" \
            in fusion.attrs or fusion is computation.root_instruction:
        return False
    root = fused.root_instruction
    if root.opcode is not Opcode.TUPLE:
        return False
    if not users or any(u.opcode is not Opcode.GET_TUPLE_ELEMENT for u in users):
        return False
    used = {u.attr("index") for u in users}
    used |= {i for i, op in enumerate(root.operands) if has_side_effect(op)}
    if len(used) == len(root.operands):
        return False
    kept = sorted(used)
    if len(kept) == 1:
        fusion.shape = fusion.shape.tuple_shapes[kept[0]]
        fused.root_instruction = root.operands[kept[0]]
        for gte in users:
            replace_uses(computation, gte, fusion)
        remove(computation, users)
    else:
        fusion.shape = Shape.tuple(fusion.shape.tuple_shapes[i] for i in kept)
        new_root = HloInstruction(Opcode.TUPLE, fusion.shape, [root.operands[i] for i in kept],
                                  name=NameUniquer(module)("tuple"))
        fused.add_instruction(new_root)
        for gte in users:
            gte.attrs["index"] = kept.index(gte.attr("index"))
    remove_dead_instructions(fused)
    return True


def _trim_fusion_parameters(module: HloModule) -> bool:
    """Drop parameters a fused computation no longer reads, and the matching operands."""
    callers = callers_of(module)
    changed = False
    for computation in module.computations:
        for fusion in computation.instructions:
            if fusion.opcode is not Opcode.FUSION:
                continue
            fused = fusion.attr("calls")
            if fused is not None and len(callers.get(id(fused), [])) == 1:
                changed |= _trim_parameters(fusion, fused)
    return changed


def _trim_parameters(fusion: HloInstruction, fused: HloComputation) -> bool:
    used = {id(op) for i in fused.instructions for op in i.operands}
    used.add(id(fused.root_instruction))
    parameters = fused.parameters
    dead = [p for p in parameters if id(p) not in used]
    if not dead:
        return False
    kept_operands = []
    number = 0
    for parameter in parameters:
        if id(parameter) in used:
            kept_operands.append(fusion.operands[parameter.parameter_number])
            parameter.parameter_number = number
            number += 1
    fusion.operands = kept_operands
    remove(fused, dead)
    return True
