"""Shape rules of element-by-element ops: unary and binary arithmetic, compare,
select, clamp, the converts, reduce-precision and map.

HLO has no implicit broadcasting: operands of a binary op have equal
dimensions and (without mixed precision, XLA's verifier default) equal element
types. The element types each op accepts follow XLA's ShapeInference.
"""

from __future__ import annotations

from xlapy.hlo.attributes import ComparisonDirection, ComparisonType
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.hlo.shape_inference.query import Query, array, braces, rule, text

Op = Opcode
P = PrimitiveType

# -- element-type classes, named the way error messages say them ----------------------
_ANY = ("any array", lambda t: True)
_NUMBER = ("an integral, floating-point or complex",
           lambda t: t.is_integral or t.is_floating_or_complex)
_ARITHMETIC = ("a non-pred", lambda t: not t.is_pred)
_FLOAT = ("a floating-point", lambda t: t.is_float)
_FLOAT_OR_COMPLEX = ("a floating-point or complex", lambda t: t.is_floating_or_complex)
_INTEGRAL = ("an integral", lambda t: t.is_integral)
_PRED_OR_INTEGRAL = ("a pred or integral", lambda t: t.is_pred or t.is_integral)
_SIGNED = ("a signed integral or floating-point", lambda t: t.is_signed_int or t.is_float)
_SIGNED_OR_COMPLEX = ("a signed integral, floating-point or complex",
                      lambda t: t.is_signed_int or t.is_floating_or_complex)


def _component(t: PrimitiveType) -> PrimitiveType:
    return t.component_type


def _same(t: PrimitiveType) -> PrimitiveType:
    return t


def _pred(t: PrimitiveType) -> PrimitiveType:
    return P.PRED


_UNARY = {
    **{op: (_FLOAT, _same) for op in (Op.FLOOR, Op.CEIL, Op.ROUND_NEAREST_AFZ,
                                      Op.ROUND_NEAREST_EVEN, Op.ERF)},
    **{op: (_FLOAT_OR_COMPLEX, _same) for op in (
        Op.COS, Op.SIN, Op.TAN, Op.EXP, Op.EXPM1, Op.LOG, Op.LOG1P, Op.LOGISTIC, Op.RSQRT,
        Op.SQRT, Op.CBRT, Op.TANH, Op.ACOS, Op.ACOSH, Op.ASIN, Op.ASINH, Op.ATAN, Op.ATANH,
        Op.COSH, Op.SINH)},
    Op.REAL: (_FLOAT_OR_COMPLEX, _component),
    Op.IMAG: (_FLOAT_OR_COMPLEX, _component),
    Op.ABS: (_SIGNED_OR_COMPLEX, _component),
    Op.CLZ: (_INTEGRAL, _same),
    Op.POPCNT: (_INTEGRAL, _same),
    Op.NEGATE: (_NUMBER, _same),
    Op.SIGN: (_SIGNED_OR_COMPLEX, _same),
    Op.NOT: (_PRED_OR_INTEGRAL, _same),
    Op.IS_FINITE: (_FLOAT, _pred),
}
"""opcode -> ((accepted class name, predicate), result element type)."""

_BINARY = {
    **{op: _ANY for op in (Op.ADD, Op.MULTIPLY, Op.MAXIMUM, Op.MINIMUM, Op.COMPARE)},
    **{op: _ARITHMETIC for op in (Op.SUBTRACT, Op.DIVIDE, Op.REMAINDER, Op.POWER, Op.ATAN2)},
    **{op: _INTEGRAL for op in (Op.SHIFT_LEFT, Op.SHIFT_RIGHT_ARITHMETIC,
                                Op.SHIFT_RIGHT_LOGICAL, Op.MULHI)},
    **{op: _PRED_OR_INTEGRAL for op in (Op.AND, Op.OR, Op.XOR)},
    Op.COMPLEX: ("an f32 or f64", lambda t: t in (P.F32, P.F64)),
}
"""opcode -> the element types both operands may have."""


def _check_class(q: Query, i: int, shape: Shape, accepted) -> None:
    description, accepts = accepted
    if not accepts(shape.element_type):
        q.fail(f"operand {i} has element type {shape.element_type.value}; "
               f"{q.name} needs {description} element type")


@rule(*_UNARY)
def _unary(q: Query) -> Shape:
    q.count(1)
    operand = q.array(0)
    accepted, result_type = _UNARY[q.opcode]
    _check_class(q, 0, operand, accepted)
    return operand.with_element_type(result_type(operand.element_type)).without_layout()


@rule(Op.COPY, Op.DOMAIN)
def _copy(q: Query) -> Shape:
    q.count(1)
    return q.operands[0].without_layout()


def same_dims_and_type(q: Query, i: int, j: int, what: str) -> None:
    """Operands i and j must have equal dimensions and element types."""
    a, b = q.array(i), q.array(j)
    if a.dimensions != b.dimensions:
        q.fail(f"operand {j} has shape {text(b)} but operand {i} has {text(a)}; "
               f"{what} need equal dimensions")
    if a.element_type is not b.element_type:
        q.fail(f"operand {j} has element type {b.element_type.value} but operand {i} has "
               f"{a.element_type.value}; {what} need equal element types")


_COMPARISON_TYPES = {
    ComparisonType.FLOAT: lambda t: t.is_floating_or_complex,
    ComparisonType.TOTALORDER: lambda t: t.is_floating_or_complex,
    ComparisonType.SIGNED: lambda t: t.is_signed_int,
    ComparisonType.UNSIGNED: lambda t: t.is_unsigned_int or t.is_pred,
}


@rule(*_BINARY)
def _binary(q: Query) -> Shape:
    q.count(2)
    same_dims_and_type(q, 0, 1, "binary elementwise ops")
    lhs, rhs = q.operands
    element = lhs.element_type
    _check_class(q, 0, lhs, _BINARY[q.opcode])
    if q.opcode is Op.COMPLEX:
        element = P.C64 if element is P.F32 else P.C128
    if q.opcode is Op.COMPARE:
        q.typed("direction", ComparisonDirection)
        comparison = q.typed("type", ComparisonType, None)
        if comparison is not None and not _COMPARISON_TYPES[comparison](element):
            q.fail(f"type={comparison.value} cannot compare {element.value} values")
        element = P.PRED
    # A dimension is a bound (dynamic) in the result if it is one in either operand.
    dynamic = [a or b for a, b in zip(lhs.dynamic_dimensions or (False,) * lhs.rank,
                                      rhs.dynamic_dimensions or (False,) * rhs.rank)]
    return array(element, lhs.dimensions, dynamic)


@rule(Op.SELECT)
def _select(q: Query) -> Shape:
    q.count(3)
    pred = q.array(0, "the predicate (operand 0)")
    same_dims_and_type(q, 1, 2, "select's on-true and on-false operands")
    on_true = q.operands[1]
    if pred.element_type is not P.PRED:
        q.fail(f"the predicate (operand 0) has element type {pred.element_type.value}, not pred")
    if pred.rank and pred.dimensions != on_true.dimensions:
        q.fail(f"the predicate {text(pred)} must be a scalar or have the dimensions of "
               f"the selected operands {text(on_true)}")
    return on_true.without_layout()


@rule(Op.CLAMP)
def _clamp(q: Query) -> Shape:
    q.count(3)
    operand = q.array(1)
    for i, role in ((0, "min"), (2, "max")):
        bound = q.array(i, f"{role} (operand {i})")
        if bound.element_type is not operand.element_type:
            q.fail(f"{role} (operand {i}) has element type {bound.element_type.value} but the "
                   f"operand has {operand.element_type.value}")
        if bound.rank and bound.dimensions != operand.dimensions:
            q.fail(f"{role} (operand {i}) has shape {text(bound)}; it must be a scalar or "
                   f"match the operand {text(operand)}")
    return operand.without_layout()


@rule(Op.CONVERT, declared=True)
def _convert(q: Query) -> Shape:
    q.count(1)
    operand = q.array(0)
    result = q.declared_array("the target element type is given by the result shape:")
    return array(result.element_type, operand.dimensions, operand.dynamic_dimensions)


@rule(Op.BITCAST_CONVERT, declared=True)
def _bitcast_convert(q: Query) -> Shape:
    """Equal widths keep the dimensions; narrow -> wide drops a last dimension of
    size wide/narrow; wide -> narrow appends one."""
    q.count(1)
    operand = q.array(0)
    new = q.declared_array("the target element type is given by the result shape:").element_type
    old = operand.element_type
    if old.is_complex != new.is_complex:
        q.fail(f"cannot bitcast between complex and real types: {old.value} -> {new.value}")
    old_bits, new_bits = old.bit_width, new.bit_width
    if max(old_bits, new_bits) % min(old_bits, new_bits):
        q.fail(f"cannot bitcast {old.value} ({old_bits} bits) to {new.value} ({new_bits} "
               f"bits): one width must divide the other")
    dims = list(operand.dimensions)
    if old_bits > new_bits:
        dims.append(old_bits // new_bits)
    elif old_bits < new_bits:
        ratio = new_bits // old_bits
        if not dims or dims[-1] != ratio:
            q.fail(f"bitcasting {text(operand)} to the wider {new.value} needs a last "
                   f"dimension of size {ratio} (= {new_bits}/{old_bits} bits)")
        dims.pop()
    return array(new, dims)


@rule(Op.STOCHASTIC_CONVERT, declared=True)
def _stochastic_convert(q: Query) -> Shape:
    q.count(2)
    operand = q.array(0)
    random = q.array(1, "the random bits (operand 1)")
    result = q.declared_array("the target element type is given by the result shape:")
    if not operand.element_type.is_float:
        q.fail(f"operand 0 must be floating-point, got {operand.element_type.value}")
    if not random.element_type.is_unsigned_int:
        q.fail(f"the random bits (operand 1) must be unsigned integers, got "
               f"{random.element_type.value}")
    if random.element_type.bit_width != operand.element_type.bit_width:
        q.fail(f"the random bits {random.element_type.value} must be as wide as the operand "
               f"{operand.element_type.value}")
    if random.dimensions != operand.dimensions:
        q.fail(f"the random bits {text(random)} must have the operand's dimensions "
               f"{text(operand)}")
    return array(result.element_type, operand.dimensions)


@rule(Op.REDUCE_PRECISION)
def _reduce_precision(q: Query) -> Shape:
    q.count(1)
    operand = q.array(0)
    _check_class(q, 0, operand, _FLOAT)
    exponent_bits, mantissa_bits = q.integer("exponent_bits"), q.integer("mantissa_bits")
    if exponent_bits < 1:
        q.fail(f"exponent_bits={exponent_bits} must be at least 1")
    if mantissa_bits < 0:
        q.fail(f"mantissa_bits={mantissa_bits} must not be negative")
    return operand.without_layout()


@rule(Op.MAP)
def _map(q: Query) -> Shape:
    """`to_apply` maps scalars (one per operand) to a scalar, over all dimensions."""
    q.count_at_least(1)
    operands = q.arrays()
    first = operands[0]
    for i, shape in enumerate(operands[1:], 1):
        if shape.dimensions != first.dimensions:
            q.fail(f"operand {i} has shape {text(shape)} but operand 0 has {text(first)}; "
                   f"map needs equal dimensions")
    dims = q.integers("dimensions", tuple(range(first.rank)))
    if dims != tuple(range(first.rank)):
        q.fail(f"dimensions={braces(dims)} must be all dimensions in order, "
               f"{braces(range(first.rank))}")
    computation = q.computation("to_apply")
    params, result = q.signature(computation, "to_apply")
    if len(params) != len(operands):
        q.fail(f"to_apply computation {computation.name} takes {len(params)} parameter(s) "
               f"but map has {len(operands)} operand(s)")
    for i, (param, shape) in enumerate(zip(params, operands)):
        if not param.is_scalar or param.element_type is not shape.element_type:
            q.fail(f"to_apply parameter {i} has shape {text(param)}; it must be a "
                   f"{shape.element_type.value}[] scalar like operand {i}'s elements")
    if not result.is_scalar:
        q.fail(f"to_apply computation {computation.name} must return a scalar, "
               f"returns {text(result)}")
    return array(result.element_type, first.dimensions)

