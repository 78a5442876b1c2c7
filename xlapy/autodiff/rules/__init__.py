"""Differentiation rules, one per opcode, kept as tables beside the op table.

- `VJP[op](node, ct) -> [cotangent per operand]`: reverse mode. `ct` has the
  result's structure (None for zero); an entry may be None for zero, and is
  ignored for operands that are not active (`node.active`).
- `VJP_FORWARD[op](node) -> (result, residuals)`: for the few ops whose
  reverse rule needs the forward pass computed differently (a while loop
  stacking its carries); others get their plain value.
- `JVP[op](node, tangents) -> tangent`: forward mode; `tangents` matches the
  operands (None for zero) and `node.result` holds the value. For ops in
  `JVP_JOINT` the rule returns (result, tangent) itself.
- `NON_DIFFERENTIABLE[op]`: why the op's result carries no derivative (its
  values are integers, booleans or random bits, or are piecewise constant).

Rules are written with `xlapy.lax` on Arrays, so under a trace each rule
emits HLO through the builder and with no trace it runs at once.
tests/test_op_table.py checks every opcode is in exactly one place.
"""

from __future__ import annotations

from collections.abc import Callable

from xlapy.errors import CompileError
from xlapy.hlo.opcode import Opcode

VJP: dict[Opcode, Callable] = {}
VJP_FORWARD: dict[Opcode, Callable] = {}
JVP: dict[Opcode, Callable] = {}
JVP_JOINT: set[Opcode] = set()
NON_DIFFERENTIABLE: dict[Opcode, str] = {}


def vjp(*opcodes: Opcode):
    def register(fn):
        for op in opcodes:
            VJP[op] = fn
        return fn
    return register


def vjp_forward(*opcodes: Opcode):
    def register(fn):
        for op in opcodes:
            VJP_FORWARD[op] = fn
        return fn
    return register


def jvp(*opcodes: Opcode, joint: bool = False):
    def register(fn):
        for op in opcodes:
            JVP[op] = fn
            if joint:
                JVP_JOINT.add(op)
        return fn
    return register


def non_differentiable(reason: str, *opcodes: Opcode) -> None:
    for op in opcodes:
        NON_DIFFERENTIABLE[op] = reason


def no_rule(instruction, mode: str):
    """The error for differentiating an op that has no rule in `mode`."""
    op = instruction.opcode
    why = nondifferentiable.UNSUPPORTED.get(op, f"no {mode}-mode rule for this opcode")
    return CompileError(f"cannot differentiate {op.value} ({instruction.name}) in {mode} "
                        f"mode: {why}")


# the rule modules register themselves on import
from xlapy.autodiff.rules import (  # noqa: E402,F401
    collectives,
    contraction,
    control_flow,
    elementwise,
    indexing,
    linalg,
    nondifferentiable,
    reductions,
    sorting,
    structural,
    windows,
)
