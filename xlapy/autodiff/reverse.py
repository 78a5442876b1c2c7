"""Reverse mode: the VJP of an HLO computation.

The forward half replays the computation (tape.Replay), keeping a Node for
every instruction that depends on a differentiated input; the backward half
walks the nodes in reverse, asking each opcode's rule for its operands'
cotangents and summing them per value. Cotangents are keyed by the identity
of the Array they belong to; None stands for zero all the way through, so
branches that do not depend on the inputs cost nothing.
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
from xlapy.core.array import Array
from xlapy.errors import CompileError
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.lax import primitives as lax


class ReverseReplay(Replay):
    """The forward half: values, plus the tape of nodes to differentiate."""

    def __init__(self, active_args: list[bool], precomputed=None):
        super().__init__(precomputed)
        self.active: set[int] = set()   # ids of Arrays that depend on an active input
        self.nodes: list[Node] = []
        self._active_args = active_args
        self._keep: list = []           # keeps every keyed Array alive

    def start(self, computation: HloComputation, args: list) -> tuple[list, Any]:
        args = [fresh(a) for a in args]
        for arg, active in zip(args, self._active_args):
            for leaf in leaves(arg) if active else ():
                if is_differentiable_type(leaf.dtype):
                    self.active.add(id(leaf))
        self._keep.append(args)
        return args, self.run(computation, args)

    def is_active(self, x) -> bool:
        return any(id(leaf) in self.active for leaf in leaves(x))

    def apply(self, instruction: HloInstruction, operands: list):
        active = tuple(self.is_active(o) for o in operands)
        if not any(active):
            return self.primal(instruction, operands)
        opcode = instruction.opcode
        if opcode in rules.NON_DIFFERENTIABLE:
            return fresh(self.primal(instruction, operands))
        if opcode not in rules.VJP:
            raise rules.no_rule(instruction, "reverse")
        node = Node(instruction, operands, None, active)
        forward = rules.VJP_FORWARD.get(opcode)
        if forward is not None:
            node.result, node.residuals = forward(node)
        else:
            node.result = self.primal(instruction, operands)
        self._record(node)
        return node.result

    def _record(self, node: Node) -> None:
        node.result = fresh(node.result)
        for leaf in leaves(node.result):
            if is_differentiable_type(leaf.dtype):
                self.active.add(id(leaf))
        self.nodes.append(node)
        self._keep.append(node)

    def custom(self, instruction: HloInstruction, operands: list):
        key = frontend_attribute(instruction, CUSTOM_VJP)
        active = tuple(self.is_active(o) for o in operands)
        if not any(active):
            return self.primal(instruction, operands)
        if key is not None:
            rule = custom.custom_vjp_rule(key)
        else:
            rule = custom.custom_jvp_as_vjp_rule(frontend_attribute(instruction, CUSTOM_JVP))
        if rule is None:  # a module from elsewhere: differentiate the body itself
            return super().custom(instruction, operands)
        node = Node(instruction, operands, None, active, rule=rule)
        node.result, node.residuals = rule.forward(node)
        self._record(node)
        return node.result


def backward(replay: ReverseReplay, outputs: Any, cotangents: Any) -> dict[int, Array]:
    """Cotangents of every active value, seeded with `cotangents` for `outputs`
    (matching structures, None for zero)."""
    cts: dict[int, Array] = {}
    for out, ct in zip(leaves(outputs), leaves(cotangents)):
        if ct is not None and id(out) in replay.active:
            _accumulate(cts, out, ct)
    for node in reversed(replay.nodes):
        ct = _gather(cts, node.result)
        if all(c is None for c in leaves(ct)):
            continue
        rule = node.rule.backward if node.rule is not None else rules.VJP[node.opcode]
        try:
            operand_cts = rule(node, ct)
        except CompileError:
            raise
        except (TypeError, ValueError) as e:
            raise CompileError(f"differentiating {node.opcode.value} "
                               f"({node.instruction.name}): {e}") from e
        for operand, active, oct in zip(node.operands, node.active, operand_cts):
            if active and oct is not None:
                _distribute(cts, operand, oct, node)
    return cts


def _gather(cts: dict, result):
    if isinstance(result, tuple):
        return tuple(_gather(cts, r) for r in result)
    return cts.get(id(result))


def _distribute(cts: dict, operand, ct, node: Node) -> None:
    if isinstance(operand, (tuple, list)):
        for o, c in zip(operand, ct):
            if c is not None:
                _distribute(cts, o, c, node)
        return
    if not is_differentiable_type(operand.dtype):
        return
    if tuple(ct.shape) != tuple(operand.shape) or ct.dtype != operand.dtype:
        raise CompileError(
            f"the {node.opcode.value} rule gave a cotangent of {ct.dtype}{list(ct.shape)} "
            f"for an operand of {operand.dtype}{list(operand.shape)} "
            f"({node.instruction.name})")
    _accumulate(cts, operand, ct)


def _accumulate(cts: dict, value, ct) -> None:
    previous = cts.get(id(value))
    cts[id(value)] = ct if previous is None else lax.add(previous, ct)


def vjp_computation(computation: HloComputation, args: list, active: list[bool] | None = None,
                    precomputed=None):
    """Replay `computation` on `args` (Arrays); returns (outputs, pullback) where
    `pullback(cotangents)` gives one cotangent per argument (None for zero)."""
    if active is None:
        active = [True] * len(args)
    replay = ReverseReplay(active, precomputed)
    keyed_args, outputs = replay.start(computation, args)

    def pullback(cotangents):
        cts = backward(replay, outputs, cotangents)
        return [_gather(cts, a) for a in keyed_args]

    return outputs, pullback
