"""Call inlining (XLA's CallInliner, pass name "call-inliner").

Every `call` is replaced by a copy of the computation it calls: the callee's
parameters become the call's operands and the call's users read the copied
root. Fusion and the other passes see one flat graph per computation, which
is why XLA inlines calls before optimising (JAX emits a `call` for every
`jax.named_call`, `custom_jvp` and nested `jit`).

Callees are inlined before their callers, so a copied body holds no calls.
A callee with a single call site keeps its instruction names (the callee then
dies, so they stay unique); copies of a callee called from several places get
fresh `name.N` names. Afterwards DCE removes the callees nothing calls any
more, as XLA runs HloDCE.

Not inlined (as XLA): calls marked `is_composite=true` (a composite keeps its
body as its decomposition) and calls running on another execution thread.
With `single_call_site=True` only callees called from exactly one place are
inlined (XLA's CallInliner(single_call_site)).

Results are exactly unchanged: the same instructions run on the same values.
"""

from __future__ import annotations

from xlapy.hlo.attributes import RawAttribute
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.mutation import NameUniquer, forward_operands
from xlapy.hlo.opcode import Opcode
from xlapy.passes.dce import HloDCE, callers_of
from xlapy.passes.pass_interface import Pass


class CallInliner(Pass):
    """Replace each `call` by the body of the computation it calls."""

    name = "call-inliner"

    def __init__(self, single_call_site: bool = False):
        self.single_call_site = single_call_site

    def run(self, module: HloModule) -> bool:
        names = NameUniquer(module)
        call_sites = {key: len(users) for key, users in callers_of(module).items()}
        changed = False
        for computation in list(module.computations):  # callees first
            changed |= self._inline_calls(computation, names, call_sites)
        if changed:
            HloDCE().run(module)  # the callees that are now unused
        return changed

    def _inline_calls(self, computation: HloComputation, names: NameUniquer,
                      call_sites: dict[int, int]) -> bool:
        def callee_of(instruction):
            callee = instruction.attr("to_apply") if instruction.opcode is Opcode.CALL \
                else None
            single = call_sites.get(id(callee), 0) == 1
            if not _inlinable(instruction, callee) or (self.single_call_site and not single):
                return None
            return callee, single
        return inline_bodies(computation, callee_of, names)


def inline_bodies(computation: HloComputation, body_of, names: NameUniquer) -> bool:
    """One walk: each instruction for which `body_of(instruction)` gives (computation,
    keep_names) is replaced in place by a copy of that computation's body, and later
    instructions read the copied root instead. True when anything was replaced."""
    replacements: dict[int, HloInstruction] = {}
    order: list[HloInstruction] = []
    for instruction in computation.instructions:
        forward_operands(instruction, replacements)
        body = body_of(instruction)
        if body is None:
            order.append(instruction)
            continue
        callee, keep_names = body
        replacements[id(instruction)] = copy_body(callee, instruction.operands, order, names,
                                                  keep_names=keep_names)
    if not replacements:
        return False
    for instruction in order:
        instruction.parent = computation
    computation.instructions = order
    root = computation.root_instruction
    computation.root_instruction = replacements.get(id(root), root)
    return True


def _inlinable(call: HloInstruction, callee: HloComputation | None) -> bool:
    if callee is None:
        return False
    composite = call.attr("is_composite")
    if composite is True or (isinstance(composite, RawAttribute) and composite.text == "true"):
        return False
    return callee.execution_thread in (None, "main")


def copy_body(callee: HloComputation, arguments: list[HloInstruction],
              out: list[HloInstruction], names: NameUniquer,
              keep_names: bool = False) -> HloInstruction:
    """Append copies of `callee`'s instructions to `out`, its parameters read as
    `arguments`; returns what stands for the callee's root (a copy, or an argument
    when the callee returns a parameter). Copies keep the callee's names when
    `keep_names` (the callee is about to die), else get fresh `name.N` names."""
    copies: dict[int, HloInstruction] = {}
    for instruction in callee.instructions:
        if instruction.opcode is Opcode.PARAMETER:
            copies[id(instruction)] = arguments[instruction.parameter_number]
            continue
        copy = HloInstruction(
            instruction.opcode, instruction.shape,
            [copies[id(op)] for op in instruction.operands], dict(instruction.attrs),
            name=instruction.name if keep_names else names(instruction.name),
            literal=instruction.literal)
        out.append(copy)
        copies[id(instruction)] = copy
    return copies[id(callee.root_instruction)]
