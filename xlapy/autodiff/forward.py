"""Forward mode: the JVP of an HLO computation.

One replay carries a tangent beside every value (None for zero); each
instruction whose operands have a tangent asks its opcode's JVP rule for the
result's tangent. Linear ops reuse the op itself on tangents, so most rules
are one line (see rules.linear).
"""

from __future__ import annotations

from typing import Any

from xlapy.autodiff import custom, rules
from xlapy.autodiff.tape import (
    CUSTOM_JVP,
    CUSTOM_VJP,
    Node,
    Replay,
    fresh,
    frontend_attribute,
    is_differentiable_type,
    leaves,
)
from xlapy.errors import CompileError
from xlapy.hlo.ir import HloComputation, HloInstruction


class ForwardReplay(Replay):
    def __init__(self, precomputed=None):
        super().__init__(precomputed)
        self.tangents: dict[int, Any] = {}
        self._keep: list = []  # tangents are keyed by id(value): keep the values alive

    def tangent(self, x):
        if isinstance(x, (tuple, list)):
            return tuple(self.tangent(v) for v in x)
        return self.tangents.get(id(x))

    def set_tangent(self, result, tangent) -> None:
        if isinstance(result, tuple):
            for r, t in zip(result, tangent if tangent is not None else [None] * len(result)):
                self.set_tangent(r, t)
            return
        if tangent is not None and is_differentiable_type(result.dtype):
            if tuple(tangent.shape) != tuple(result.shape) or tangent.dtype != result.dtype:
                raise CompileError(f"a JVP rule gave a tangent of {tangent.dtype}"
                                   f"{list(tangent.shape)} for {result.dtype}"
                                   f"{list(result.shape)}")
            self.tangents[id(result)] = tangent
            self._keep.append((result, tangent))

    def apply(self, instruction: HloInstruction, operands: list):
        tangents = [self.tangent(o) for o in operands]
        if all(t is None for t in leaves(tangents)):
            return self.primal(instruction, operands)
        opcode = instruction.opcode
        if opcode in rules.NON_DIFFERENTIABLE:
            return fresh(self.primal(instruction, operands))
        rule = rules.JVP.get(opcode)
        if rule is None:
            raise rules.no_rule(instruction, "forward")
        node = Node(instruction, operands, None,
                    tuple(any(t is not None for t in leaves(t)) for t in tangents))
        if opcode in rules.JVP_JOINT:  # the rule computes value and tangent together
            node.result, tangent = rule(node, tangents)
        else:
            node.result = self.primal(instruction, operands)
            tangent = rule(node, tangents)
        node.result = fresh(node.result)
        self.set_tangent(node.result, tangent)
        return node.result

    def custom(self, instruction: HloInstruction, operands: list):
        tangents = [self.tangent(o) for o in operands]
        if all(t is None for t in leaves(tangents)):
            return self.primal(instruction, operands)
        if frontend_attribute(instruction, CUSTOM_VJP) is not None:
            raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp "
                            "function; use custom_jvp, or reverse mode")
        rule = custom.custom_jvp_rule(frontend_attribute(instruction, CUSTOM_JVP))
        if rule is None:
            return super().custom(instruction, operands)
        result, tangent = rule(operands, tangents)
        result = fresh(result)
        self.set_tangent(result, tangent)
        return result


def jvp_computation(computation: HloComputation, args: list, tangents: list,
                    precomputed=None):
    """(outputs, output tangents) of `computation` at `args` along `tangents`
    (None entries are zero)."""
    replay = ForwardReplay(precomputed)
    args = [fresh(a) for a in args]
    for arg, tangent in zip(args, tangents):
        replay.set_tangent(arg, tangent)
    outputs = replay.run(computation, args)
    return outputs, replay.tangent(outputs)
