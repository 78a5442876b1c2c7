"""Scalar computations (reducers, comparators, map bodies) emitted inline.

A reducer is a tiny computation over scalars; it is emitted where it is
used, on compute-form values, with the same elemental emitter as fused
code. Tuples (variadic reducers) are Python tuples of values.
"""

from __future__ import annotations

from xlapy.codegen import elemental, elemental_extra
from xlapy.codegen import ir_types as T
from xlapy.errors import CompileError
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.ir import HloComputation
from xlapy.hlo.opcode import ELEMENTWISE
from xlapy.hlo.opcode import Opcode as Op

_PASS_THROUGH = frozenset({Op.COPY, Op.RESHAPE, Op.BITCAST, Op.BROADCAST, Op.CONVERT})


def emit_scalar_computation(b, computation: HloComputation, args: list):
    """The root value of `computation` applied to `args` (one per parameter)."""
    values = {}
    for instruction in computation.post_order():
        op = instruction.opcode
        if op is Op.PARAMETER:
            values[instruction] = args[instruction.parameter_number]
        elif op is Op.CONSTANT:
            literal = instruction.literal
            if instruction.shape.is_tuple or getattr(literal, "size", 1) != 1:
                raise CompileError(f"{instruction.name}: non-scalar constant in a scalar "
                                   "computation")
            values[instruction] = T.constant(instruction.shape.element_type,
                                             literal.reshape(()).item())
        elif op is Op.TUPLE:
            values[instruction] = tuple(values[o] for o in instruction.operands)
        elif op is Op.GET_TUPLE_ELEMENT:
            values[instruction] = values[instruction.operands[0]][instruction.attr("index")]
        elif op in ELEMENTWISE:
            values[instruction] = elemental.emit_elementwise(
                b, instruction, [values[o] for o in instruction.operands],
                [o.shape.element_type for o in instruction.operands])
        elif op in _PASS_THROUGH and instruction.shape.rank == 0 and \
                instruction.operands[0].shape.rank == 0:
            values[instruction] = _pass_through(b, instruction, values[instruction.operands[0]])
        else:
            raise CompileError(f"{instruction.name}: {op.value} in scalar computation "
                               f"{computation.name} is not supported by the CPU backend")
    return values[computation.root_instruction]


def _pass_through(b, instruction, value):
    """A scalar copy/reshape/broadcast is the value itself; a convert converts; a
    bitcast between element types of one width reinterprets the bits."""
    source, target = instruction.operands[0].shape.element_type, instruction.shape.element_type
    if instruction.opcode is Op.CONVERT:
        return elemental.convert(b, value, source, target)
    if source is not target:   # a bitcast (XLA's optimised sort comparators have them)
        if source.bit_width != target.bit_width or source is P.PRED or target is P.PRED:
            raise CompileError(f"{instruction.name}: bitcast from {source.value} to "
                               f"{target.value} changes the element width")
        return elemental_extra.from_bits(b, elemental_extra.to_bits(b, value, source), target)
    return value


def simple_reducer(computation: HloComputation):
    """The opcode of a reducer that is one commutative op of its two parameters
    (add, multiply, maximum, minimum, and, or), else None."""
    root = computation.root_instruction
    params = computation.parameters
    if len(params) != 2 or root.opcode not in (Op.ADD, Op.MULTIPLY, Op.MAXIMUM, Op.MINIMUM,
                                                Op.AND, Op.OR):
        return None
    if sorted(id(o) for o in root.operands) != sorted(id(p) for p in params):
        return None
    return root.opcode
