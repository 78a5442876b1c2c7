"""Shape inference: the result shape of an HLO instruction from its opcode,
operand shapes and attributes, following XLA's ShapeInference and HloVerifier.

    infer_shape(opcode, operand_shapes, attrs, declared=None) -> Shape
    can_infer(opcode) -> bool
    check_shape(opcode, operand_shapes, attrs, declared) -> Shape

Results carry no layout (callers add one). Every failure is a ShapeError whose
message starts with the opcode and names the operand, attribute and rule.

Some results are not implied by operands and attributes alone; only the
instruction's declared shape says them: the element type of convert, the
dimensions of broadcast/reshape/iota, the data of infeed/recv, anything of
parameter/constant/custom-call. For those `can_infer` is False and
`infer_shape` needs `declared`, which it checks against the operands. Two more
uses of `declared`, as in XLA's verifier: dot/convolution take a wider
declared element type (preferred_element_type), and all-gather/reduce-scatter
without replica_groups read the group size off it. A verifier should pass
every instruction's shape as `declared` (or call `check_shape`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from xlapy.errors import ShapeError
from xlapy.hlo.opcode import VARIADIC, Opcode
from xlapy.hlo.shape import Shape
from xlapy.hlo.shape_inference import (  # noqa: F401 - importing registers the rules
    collectives,
    control,
    elementwise,
    gather_scatter,
    linalg,
    movement,
    reductions,
    sources,
)
from xlapy.hlo.shape_inference.query import DECLARED, RULES, Query, text


def can_infer(opcode: Opcode) -> bool:
    """True when operands and attributes alone determine the result shape."""
    return opcode in RULES and opcode not in DECLARED


def infer_shape(opcode: Opcode, operand_shapes: Iterable[Shape], attrs: Mapping[str, Any],
                declared: Shape | None = None) -> Shape:
    """The result shape (without layout) of `opcode` applied to `operand_shapes`
    with `attrs` (values typed as in attributes.py); ShapeError if none exists.

    `declared` is the instruction's own shape, needed where `can_infer` is False
    and used by a few rules as XLA does (see the module docstring)."""
    if not isinstance(opcode, Opcode):
        raise ShapeError(f"not an opcode: {opcode!r}")
    operands = list(operand_shapes)
    bad = [i for i, s in enumerate(operands) if not isinstance(s, Shape)]
    if bad:
        raise ShapeError(f"{opcode.value}: operand {bad[0]} is not a Shape: "
                         f"{operands[bad[0]]!r}")
    if declared is not None and not isinstance(declared, Shape):
        raise ShapeError(f"{opcode.value}: declared must be a Shape, got {declared!r}")
    query = Query(opcode, operands, dict(attrs or {}), declared)
    if opcode.arity != VARIADIC:
        query.count(opcode.arity)
    shape_rule = RULES.get(opcode)
    if shape_rule is None:
        query.fail("no shape rule for this opcode")
    try:
        return shape_rule(query).without_layout()
    except ShapeError:
        raise
    except Exception as error:
        # Malformed IR objects (say, an attribute of the wrong structure) must
        # still surface as a ShapeError, never as a crash.
        raise ShapeError(f"{opcode.value}: malformed operands or attributes "
                         f"({type(error).__name__}: {error})") from error


def check_shape(opcode: Opcode, operand_shapes: Iterable[Shape], attrs: Mapping[str, Any],
                declared: Shape) -> Shape:
    """Infer with `declared` and require it to be compatible (layouts ignored):
    the verifier's whole shape check for one instruction. Returns the inferred
    shape."""
    inferred = infer_shape(opcode, operand_shapes, attrs, declared)
    if not inferred.compatible(declared):
        raise ShapeError(f"{opcode.value}: declared shape {text(declared)} does not match "
                         f"the inferred shape {text(inferred)}")
    return inferred


__all__ = ["can_infer", "check_shape", "infer_shape"]
