"""Build one-instruction modules directly from IR objects and run them in the
interpreter, so rule tests need neither the parser nor the builder."""

from __future__ import annotations

import numpy as np

from xlapy.hlo.attributes import ComparisonDirection
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.evaluator.evaluator import Evaluator
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape


def shape_of(value) -> Shape:
    """The HLO shape of a NumPy value (a tuple of values gives a tuple shape)."""
    if isinstance(value, tuple):
        return Shape.tuple(shape_of(v) for v in value)
    array = np.asarray(value)
    return Shape.array(PrimitiveType.from_numpy(array.dtype), array.shape)


def scalar_computation(opcode: str | Opcode, dtype, name: str = "") -> HloComputation:
    """`(a, b) -> opcode(a, b)` on scalars of `dtype`: a reducer or comparator body."""
    opcode = Opcode(opcode) if isinstance(opcode, str) else opcode
    element = PrimitiveType.from_numpy(dtype)
    scalar = Shape.scalar(element)
    a = HloInstruction(Opcode.PARAMETER, scalar, name="a", parameter_number=0)
    b = HloInstruction(Opcode.PARAMETER, scalar, name="b", parameter_number=1)
    out = Shape.scalar(PrimitiveType.PRED) if opcode is Opcode.COMPARE else scalar
    attrs = {"direction": ComparisonDirection.LT} if opcode is Opcode.COMPARE else {}
    root = HloInstruction(opcode, out, [a, b], attrs, name="r")
    return HloComputation(name or f"{opcode.value}_{element.value}", [a, b, root])


def run_op(opcode: str | Opcode, result_shape: Shape | str, *inputs, operand_shapes=None,
           **attrs):
    """Evaluate `opcode(inputs...)` with `attrs` and return the value.

    `result_shape` may be a Shape or text like "f32[2,3]" (needs the parser);
    `operand_shapes` overrides the parameters' shapes (to give them layouts)."""
    opcode = Opcode(opcode) if isinstance(opcode, str) else opcode
    if isinstance(result_shape, str):
        from xlapy.hlo.parser import parse_shape

        result_shape = parse_shape(result_shape)
    shapes = operand_shapes or [shape_of(v) for v in inputs]
    params = [HloInstruction(Opcode.PARAMETER, s, name=f"p{i}", parameter_number=i)
              for i, s in enumerate(shapes)]
    root = HloInstruction(opcode, result_shape, params, attrs, name="result")
    computation = HloComputation("entry", params + [root])
    module = HloModule("test")
    for callee in root.called_computations:
        if callee.parent is None:
            module.add_computation(callee)
    module.add_computation(computation, entry=True)
    args = [v if isinstance(v, tuple) else np.asarray(v) for v in inputs]
    return Evaluator().call(computation, args)
