"""One caller per control-flow computation (XLA's FlattenCallGraph, "flatten-call-graph").

Buffer assignment gives a while loop one state buffer that is also the
parameter of its condition and body, and a conditional's branches read its
operands' buffers: a computation is laid out for the one instruction that
runs it. JAX reuses computations freely — every threefry loop of a program
calls the same body — so a body shared by two loops would be laid out for
one of them and read the other's state from the wrong place (both loops ran
zero iterations, or never stopped). This pass gives every `while`,
`conditional` and `call` site its own copy of the computations it runs,
nested ones included. Computations applied to scalars (reducers,
comparators, `map`, scatter combiners) are emitted inline at each use and
stay shared. Results are unchanged: copies compute what the original does.
"""

from __future__ import annotations

from xlapy.hlo.ir import HloComputation, HloModule
from xlapy.hlo.mutation import NameUniquer, clone_computation
from xlapy.hlo.opcode import Opcode
from xlapy.passes.pass_interface import Pass

_SEQUENTIAL_ATTRIBUTES = {
    Opcode.WHILE: ("condition", "body"),
    Opcode.CONDITIONAL: ("true_computation", "false_computation", "branch_computations"),
    Opcode.CALL: ("to_apply",),
}
"""Opcodes that run a computation as a step of the program, and the attributes naming it."""


class FlattenCallGraph(Pass):
    name = "flatten-call-graph"

    def run(self, module: HloModule) -> bool:
        names = NameUniquer(module)
        claimed: set[int] = set()
        changed = False
        queue = [module.entry_computation]
        while queue:
            computation = queue.pop()
            for instruction in computation.instructions:
                for key in _SEQUENTIAL_ATTRIBUTES.get(instruction.opcode, ()):
                    value = instruction.attrs.get(key)
                    if value is None:
                        continue
                    callees = list(value) if isinstance(value, tuple) else [value]
                    for i, callee in enumerate(callees):
                        if id(callee) in claimed:
                            callees[i] = _clone(module, callee, names)
                            changed = True
                        claimed.add(id(callees[i]))
                        queue.append(callees[i])
                    instruction.attrs[key] = tuple(callees) if isinstance(value, tuple) \
                        else callees[0]
        return changed


def _clone(module: HloModule, computation: HloComputation,
           names: NameUniquer) -> HloComputation:
    """A copy placed right after `computation` (after its callees, before its
    callers); what it calls stays shared until the walk reaches the copy."""
    clone = clone_computation(computation, names)
    clone.parent = module
    module.computations.insert(module.computations.index(computation) + 1, clone)
    return clone
