"""Applying a scalar computation (a reducer, comparator, combiner or mapped
function) to whole arrays at once.

XLA's reducers, comparators, scatter combiners and mapped functions are
scalar computations. `ScalarFunction` walks such a body with the ordinary
rules on arrays (every op in it is elementwise), and falls back to one
`evaluator.call` per element when the body holds anything else.
"""

from __future__ import annotations

import numpy as np

from xlapy.backends.interpreter.rules import RULES
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import ELEMENTWISE, Opcode
from xlapy.hlo.shape import Shape

_TABLE_OPS = frozenset({Opcode.CONSTANT, Opcode.TUPLE, Opcode.GET_TUPLE_ELEMENT})
_SCALAR_IDENTITIES = frozenset({
    Opcode.BROADCAST, Opcode.RESHAPE, Opcode.COPY, Opcode.BITCAST, Opcode.TRANSPOSE,
})
"""Movement ops that are the identity when operand and result are both scalars."""


class _NotVectorisable(Exception):
    """The body holds an op that cannot run on whole arrays."""


class ScalarFunction:
    """A scalar computation applied element by element to arrays.

    `fn(*args)` takes one array per parameter (all of one shape, or 0-d) and
    returns the computation's value at every index: an array of that shape, or
    a tuple of them for a tuple-shaped root.
    """

    def __init__(self, evaluator, computation: HloComputation):
        self.evaluator = evaluator
        self.computation = computation
        self.vectorise = True
        self._twins: dict[tuple, HloInstruction] = {}

    def __call__(self, *args):
        args = [np.asarray(a) for a in args]
        batch = np.broadcast_shapes(*(a.shape for a in args)) if args else ()
        if self.vectorise:
            try:
                value = self._walk(self.computation, args, batch)
                return _broadcast_value(value, batch)
            except Exception:  # a body op or rule that needs scalars: go element by element
                self.vectorise = False
        return self._per_element(args, batch)

    def _walk(self, computation: HloComputation, args, batch):
        values: dict[int, object] = {}
        for instruction in computation.post_order():
            if instruction.opcode is Opcode.PARAMETER:
                values[id(instruction)] = args[instruction.parameter_number]
                continue
            operands = [values[id(op)] for op in instruction.operands]
            values[id(instruction)] = self._step(instruction, operands, batch)
        return values[id(computation.root_instruction)]

    def _step(self, instruction, operands, batch):
        op = instruction.opcode
        if op is Opcode.CALL:
            return self._walk(instruction.attrs["to_apply"], operands, batch)
        if op in _SCALAR_IDENTITIES:
            if not (instruction.shape.is_scalar and instruction.operands[0].shape.is_scalar):
                raise _NotVectorisable(op.value)
            return operands[0]
        if op is Opcode.BITCAST_CONVERT and (
                instruction.shape.element_type.bit_width
                != instruction.operands[0].shape.element_type.bit_width):
            raise _NotVectorisable(op.value)
        fn = RULES.get(op)
        if fn is None or not (op in ELEMENTWISE or op in _TABLE_OPS
                              or op is Opcode.BITCAST_CONVERT):
            raise _NotVectorisable(op.value)
        if op in _TABLE_OPS:
            if any(not leaf.is_scalar for _, leaf in instruction.shape.leaves()):
                raise _NotVectorisable(op.value)
            return fn(instruction, operands, self.evaluator)
        if any(isinstance(v, tuple) for v in operands):
            raise _NotVectorisable(op.value)
        batched = any(np.ndim(v) for v in operands)
        if batched:
            operands = [np.broadcast_to(v, batch) for v in operands]
            instruction = self._batched(instruction, batch)
        value = np.asarray(fn(instruction, operands, self.evaluator))
        if value.dtype != instruction.shape.dtype or value.shape != (batch if batched else ()):
            raise _NotVectorisable(op.value)
        return value

    def _batched(self, instruction: HloInstruction, batch) -> HloInstruction:
        """A stand-in for a scalar instruction with `batch` dims, so that its rule
        sees the shape of the arrays it is given."""
        key = (id(instruction), batch)
        twin = self._twins.get(key)
        if twin is None:
            shape = Shape.array(instruction.shape.element_type, batch)
            twin = HloInstruction(instruction.opcode, shape, instruction.operands,
                                  instruction.attrs, name=instruction.name)
            twin.parent = instruction.parent
            self._twins[key] = twin
        return twin

    def _per_element(self, args, batch):
        shape = self.computation.root_instruction.shape
        leaves = shape.tuple_shapes if shape.is_tuple else (shape,)
        outs = [np.empty(batch, dtype=leaf.dtype) for leaf in leaves]
        full = [np.broadcast_to(a, batch) for a in args]
        for index in np.ndindex(*batch):
            value = self.evaluator.call(self.computation, [np.asarray(a[index]) for a in full])
            for out, v in zip(outs, value if shape.is_tuple else (value,)):
                out[index] = v
        return tuple(outs) if shape.is_tuple else outs[0]


def _broadcast_value(value, batch):
    if isinstance(value, tuple):
        return tuple(_broadcast_value(v, batch) for v in value)
    return np.array(np.broadcast_to(value, batch))


def as_list(value) -> list:
    """A tuple value's elements, or a single value as a one-element list."""
    return list(value) if isinstance(value, tuple) else [value]
