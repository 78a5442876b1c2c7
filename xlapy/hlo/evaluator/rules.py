"""The interpreter's rule table: one evaluation rule per opcode.

A rule is `rule(instruction, operands, evaluator) -> value`, where operands
are the operands' values (NumPy arrays, tuples of values for tuple shapes,
TOKEN for tokens) and `evaluator.call(computation, args)` runs a called
computation. A rule returns an array of exactly `instruction.shape`'s dtype
and dimensions; the evaluator checks this.
"""

from __future__ import annotations

from collections.abc import Callable

from xlapy.hlo.opcode import Opcode

Rule = Callable[..., object]
RULES: dict[Opcode, Rule] = {}


class _Token:
    """The value of a `token[]`: carries ordering only, no data."""

    def __repr__(self) -> str:
        return "TOKEN"


TOKEN = _Token()


def rule(*opcodes: Opcode) -> Callable[[Rule], Rule]:
    """Register the decorated function as the rule for `opcodes`."""

    def register(fn: Rule) -> Rule:
        for opcode in opcodes:
            if opcode in RULES:
                raise RuntimeError(f"two interpreter rules for {opcode.value}")
            RULES[opcode] = fn
        return fn

    return register


NOT_INTERPRETED: dict[Opcode, str] = {
    Opcode.ASYNC_START: "async wrappers appear only after scheduling passes",
    Opcode.ASYNC_UPDATE: "async wrappers appear only after scheduling passes",
    Opcode.ASYNC_DONE: "async wrappers appear only after scheduling passes",
    Opcode.INFEED: "host transfers need a host queue, which a single execution lacks",
    Opcode.OUTFEED: "host transfers need a host queue, which a single execution lacks",
    Opcode.SEND: "point-to-point transfers need a peer device",
    Opcode.SEND_DONE: "point-to-point transfers need a peer device",
    Opcode.RECV: "point-to-point transfers need a peer device",
    Opcode.RECV_DONE: "point-to-point transfers need a peer device",
    Opcode.RNG_GET_AND_UPDATE_STATE: "a pass-internal op with backend-owned state",
    Opcode.COLLECTIVE_REDUCE: "not yet specified in XLA's public semantics",
    Opcode.RAGGED_ALL_TO_ALL: "ragged collectives are not modelled yet",
    Opcode.RAGGED_DOT: "ragged dot dimension numbers are kept as raw text",
    Opcode.SCALED_DOT: "scaled dot dimension numbers are kept as raw text",
    Opcode.SCAN: "not yet specified in XLA's public semantics",
    Opcode.SHUFFLE: "not yet specified in XLA's public semantics",
    Opcode.DYNAMIC_RESHAPE: "dynamic shapes are not modelled",
    Opcode.SET_DIMENSION_SIZE: "dynamic shapes are not modelled",
}
"""Opcodes the interpreter deliberately does not evaluate, and why (said in the
error a module holding one gets)."""
