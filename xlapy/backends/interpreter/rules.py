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
