"""Defusion (XLA's Defuser, pass name "defuser").

Every `fusion` instruction is replaced by a copy of its fused computation,
so a module that arrives already fused — XLA's optimised output, with its
fusions, and single instructions XLA wraps in a fusion of their own (a
`wrapped_scatter`, say) — is one flat graph again and xlapy's own fusion
decides what runs together, with its own emitters. Results are exactly
unchanged: a fusion computes what its computation computes.
"""

from __future__ import annotations

from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.mutation import NameUniquer
from xlapy.hlo.opcode import Opcode
from xlapy.passes.call_inliner import inline_bodies
from xlapy.passes.dce import HloDCE
from xlapy.passes.pass_interface import Pass


class Defuser(Pass):
    """Replace each fusion by the body of its fused computation."""

    name = "defuser"

    def run(self, module: HloModule) -> bool:
        names = NameUniquer(module)
        fused = {id(i.attr("calls")) for c in module.computations for i in c.instructions
                 if i.opcode is Opcode.FUSION}
        changed = False
        for computation in list(module.computations):
            if id(computation) not in fused:   # fused computations die with their fusions
                changed |= _defuse(computation, names)
        if changed:
            HloDCE().run(module)
        return changed


def _defuse(computation: HloComputation, names: NameUniquer) -> bool:
    def body_of(instruction: HloInstruction):
        if instruction.opcode is not Opcode.FUSION:
            return None
        fused = instruction.attr("calls")
        _defuse(fused, names)   # nested fusions first
        return fused, False
    return inline_bodies(computation, body_of, names)
