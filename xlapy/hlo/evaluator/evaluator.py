"""Walks a computation in order and applies each opcode's rule.

Correct rather than fast: this is the oracle every compiled backend is
checked against, so each value is checked against its instruction's shape.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ExecutionError, XlapyError
from xlapy.hlo.evaluator.rules import NOT_INTERPRETED, RULES, TOKEN
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

# Importing the rule modules fills RULES; each registers the opcodes it owns.
from xlapy.hlo.evaluator import (  # noqa: E402,F401  isort: skip
    binary, collectives, control_flow, convert, convolution, elementwise, indexing, linalg,
    movement, reductions, rng,
)


class Evaluator:
    """Evaluates computations of one module; `call` is how rules run callees.

    An evaluator remembers each computation's evaluation order, so keep one
    per executable (the module must not change while it is in use)."""

    def __init__(self):
        self._orders: dict[int, tuple[HloComputation, list[HloInstruction], int]] = {}

    def _order(self, computation: HloComputation):
        cached = self._orders.get(id(computation))
        if cached is None or cached[0] is not computation:
            cached = (computation, computation.post_order(), computation.num_parameters)
            self._orders[id(computation)] = cached
        return cached[1], cached[2]

    def call(self, computation: HloComputation, args) -> object:
        """The root value of `computation` applied to `args` (one per parameter)."""
        order, num_parameters = self._order(computation)
        if len(args) != num_parameters:
            raise ExecutionError(f"computation {computation.name} takes "
                                 f"{num_parameters} arguments, got {len(args)}")
        values: dict[int, object] = {}
        for instruction in order:
            if instruction.opcode is Opcode.PARAMETER:
                values[id(instruction)] = args[instruction.parameter_number]
                continue
            operands = [values[id(op)] for op in instruction.operands]
            values[id(instruction)] = self.evaluate(instruction, operands)
        return values[id(computation.root_instruction)]

    def evaluate(self, instruction: HloInstruction, operands: list) -> object:
        """One instruction's value from its operands' values."""
        fn = RULES.get(instruction.opcode)
        if fn is None:
            why = NOT_INTERPRETED.get(instruction.opcode, "no rule")
            raise ExecutionError(f"the interpreter cannot evaluate {instruction.opcode.value} "
                                 f"(instruction {instruction.name}): {why}")
        try:
            value = fn(instruction, operands, self)
        except XlapyError:
            raise
        except Exception as e:  # a rule's bug or an input it rejects: say where
            raise ExecutionError(f"evaluating {instruction.name} ({instruction.opcode.value}): "
                                 f"{type(e).__name__}: {e}") from e
        return conform(value, instruction.shape, instruction.name)


def conform(value, shape: Shape, name: str):
    """`value` as exactly `shape` (0-d results become arrays); else an error."""
    if shape.is_tuple:
        if not isinstance(value, tuple) or len(value) != len(shape.tuple_shapes):
            raise ExecutionError(f"{name}: rule returned {type(value).__name__}, "
                                 f"expected a tuple for {shape}")
        return tuple(conform(v, s, name) for v, s in zip(value, shape.tuple_shapes))
    if shape.is_token:
        return TOKEN
    array = np.asarray(value)
    if array.dtype != shape.dtype or array.shape != shape.dimensions:
        raise ExecutionError(f"{name}: rule returned {array.dtype}{list(array.shape)}, "
                             f"expected {shape.to_text(False)}")
    return array
