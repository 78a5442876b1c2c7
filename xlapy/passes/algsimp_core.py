"""What every rule table of the algebraic simplifier shares: the `Rewriter`
a rule builds its replacement with, and the matchers rules test operands
with (uniform constants, scalar reducers, identity elements, value-preserving
conversions).

A rule is a function `rule(instruction, rewriter) -> replacement | None`.
It returns an existing instruction (an operand, an operand's operand) or a
new one it built with the rewriter, and it must decide before building:
a rule that returns None leaves the computation untouched. The replacement
has the instruction's dimensions and element type; the driver
(`algebraic_simplifier.py`) redirects the uses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np

from xlapy.hlo import shape_inference
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.mutation import NameUniquer, add_before
from xlapy.hlo.opcode import ELEMENTWISE_BINARY, Opcode
from xlapy.hlo.shape import Shape

Op = Opcode
P = PrimitiveType


class Rewriter:
    """Adds the instructions of a replacement just before the instruction being
    simplified (the anchor), so every operand they use is already defined and
    the instruction order stays valid. New instructions get module-unique
    names and the anchor's metadata, as XLA's SetupDerivedInstruction does."""

    def __init__(self, computation: HloComputation, names: NameUniquer):
        self.computation = computation
        self.names = names
        self.anchor: HloInstruction | None = None
        self.replacing_root = False
        """True while the instruction being simplified stands for the root."""
        self.created: set[int] = set()

    def add(self, opcode: Opcode, operands: Sequence[HloInstruction],
            shape: Shape | None = None, **attrs: Any) -> HloInstruction:
        """`opcode(operands)` with `attrs`. The shape is inferred; `shape` is
        required where only a declared shape says it (broadcast, reshape,
        convert, iota) and is checked against the operands either way."""
        operands = list(operands)
        inferred = shape_inference.infer_shape(opcode, [op.shape for op in operands], attrs,
                                               shape)
        if shape is not None and not inferred.compatible(shape):
            raise ValueError(f"algsimp built {opcode.value} with shape {shape} but its "
                             f"operands give {inferred}")
        result = (shape if shape is not None else inferred).with_default_layout()
        instruction = HloInstruction(opcode, result, operands, attrs,
                                     name=self.names(opcode.value))
        return self._insert(instruction)

    def constant(self, value: Any, element_type: PrimitiveType) -> HloInstruction:
        """A scalar constant holding `value` converted to `element_type`
        (integers wrap, as a convert would); a rank-0 array of the element
        type's dtype is used bit for bit."""
        if isinstance(value, np.ndarray) and value.shape == () \
                and value.dtype == element_type.numpy:
            literal = value.copy()
        else:
            literal = literal_of(value, element_type)
        shape = Shape.scalar(element_type).with_default_layout()
        instruction = HloInstruction(Op.CONSTANT, shape, literal=literal,
                                     name=self.names("constant"))
        return self._insert(instruction)

    def full(self, value: Any, shape: Shape) -> HloInstruction:
        """An array of `shape` holding `value` everywhere: a scalar constant,
        broadcast when `shape` has dimensions (never a large literal)."""
        scalar = self.constant(value, shape.element_type)
        return self.broadcast(scalar, shape, ())

    def broadcast(self, operand: HloInstruction, shape: Shape,
                  dimensions: Sequence[int]) -> HloInstruction:
        """`operand` broadcast to `shape`; the operand itself when nothing changes."""
        if operand.shape.dimensions == shape.dimensions and tuple(dimensions) == tuple(
                range(operand.shape.rank)):
            return operand
        return self.add(Op.BROADCAST, [operand], shape, dimensions=tuple(dimensions))

    def reshape(self, operand: HloInstruction, shape: Shape) -> HloInstruction:
        """`operand` with the dimensions of `shape`; the operand itself when equal."""
        if operand.shape.dimensions == shape.dimensions:
            return operand
        return self.add(Op.RESHAPE, [operand], shape)

    def _insert(self, instruction: HloInstruction) -> HloInstruction:
        metadata = self.anchor.attrs.get("metadata") if self.anchor is not None else None
        if metadata is not None:
            instruction.attrs["metadata"] = metadata
        add_before(self.computation, self.anchor, instruction)
        self.created.add(id(instruction))
        return instruction


Rule = Callable[[HloInstruction, Rewriter], "HloInstruction | None"]
"""A rewrite: the replacement of an instruction, or None when it does not apply."""


# -- literals ------------------------------------------------------------------------------
def literal_of(value: Any, element_type: PrimitiveType) -> np.ndarray:
    """`value` as a rank-0 literal of `element_type`; integers wrap to the width."""
    dtype = element_type.numpy
    if element_type.is_pred:
        return np.array(bool(value))
    if element_type.is_integral:
        two_complement = np.array(int(value) % (1 << 64), dtype=np.uint64)
        return two_complement.astype(dtype)
    with np.errstate(all="ignore"):
        return np.array(value).astype(dtype)


def python_value(value: Any, element_type: PrimitiveType) -> Any:
    """A NumPy scalar of `element_type` as a Python bool, int, float or complex."""
    if element_type.is_pred:
        return bool(value)
    if element_type.is_integral:
        return int(value)
    if element_type.is_complex:
        return complex(value)
    return float(value)


# -- matching constants -----------------------------------------------------------------
def uniform_value(instruction: HloInstruction) -> Any:
    """The one value every element of `instruction` holds, when it is a constant
    (looking through broadcasts) whose elements are all equal; else None.
    Returned as a Python value (bool, int, float, complex)."""
    while instruction.opcode is Op.BROADCAST:
        instruction = instruction.operands[0]
    if instruction.opcode is not Op.CONSTANT or not instruction.shape.is_array:
        return None
    literal = np.asarray(instruction.literal)
    if literal.size == 0:
        return None
    first = literal.reshape(-1)[0]
    if literal.size > 1 and not np.all(literal == first):
        return None
    return python_value(first, instruction.shape.element_type)


def is_all(instruction: HloInstruction, value: Any) -> bool:
    """Every element of `instruction` is a constant equal to `value` (XLA's IsAll:
    -0.0 counts as 0, a NaN constant matches nothing)."""
    held = uniform_value(instruction)
    return held is not None and held == value


def is_all_ones(instruction: HloInstruction) -> bool:
    """Every bit of every element is set: true for pred, -1 or the unsigned max."""
    element_type = instruction.shape.element_type
    if element_type.is_pred:
        return is_all(instruction, True)
    if not element_type.is_integral:
        return False
    return is_all(instruction, -1 if element_type.is_signed_int else highest(element_type))


# -- element-type facts --------------------------------------------------------------------
def has_infinity(element_type: PrimitiveType) -> bool:
    with np.errstate(all="ignore"):
        return bool(np.isinf(np.array(np.inf, np.float32).astype(element_type.numpy)))


def lowest(element_type: PrimitiveType) -> Any:
    """The value `maximum` never beats: -inf, the lowest finite float of a type
    without infinities, the integer minimum, false."""
    if element_type.is_pred:
        return False
    if element_type.is_integral:
        return int(ml_dtypes.iinfo(element_type.numpy).min)
    if has_infinity(element_type):
        return -np.inf
    return float(ml_dtypes.finfo(element_type.numpy).min)


def highest(element_type: PrimitiveType) -> Any:
    """The value `minimum` never beats (the mirror of `lowest`)."""
    if element_type.is_pred:
        return True
    if element_type.is_integral:
        return int(ml_dtypes.iinfo(element_type.numpy).max)
    if has_infinity(element_type):
        return np.inf
    return float(ml_dtypes.finfo(element_type.numpy).max)


def is_real(element_type: PrimitiveType) -> bool:
    """Signed integers and real floats: the types where negation is plain arithmetic."""
    return element_type.is_signed_int or element_type.is_float


def preserves_values(source: PrimitiveType, target: PrimitiveType) -> bool:
    """Every value of `source` converts to `target` exactly, so converting back
    gives it again (XLA's primitive_util::CastPreservesValues)."""
    if source is target:
        return True
    if source.is_pred:
        return target.is_integral or target.is_float or target.is_complex
    if target.is_pred or not target.is_array_type:
        return False
    if source.is_integral:
        return _integer_fits(source, target)
    if source.is_float and (target.is_float or target.is_complex):
        return _float_fits(source, target.component_type)
    if source.is_complex and target.is_complex:
        return _float_fits(source.component_type, target.component_type)
    return False


def _integer_fits(source: PrimitiveType, target: PrimitiveType) -> bool:
    magnitude_bits = source.bit_width - (1 if source.is_signed_int else 0)
    if target.is_integral:
        if source.is_signed_int and target.is_unsigned_int:
            return False
        target_bits = target.bit_width - (1 if target.is_signed_int else 0)
        return target_bits >= magnitude_bits
    if target.is_float or target.is_complex:
        info = ml_dtypes.finfo(target.component_type.numpy)
        return info.nmant + 1 >= magnitude_bits and float(info.max) >= 2.0 ** magnitude_bits
    return False


def _float_fits(source: PrimitiveType, target: PrimitiveType) -> bool:
    if not (source.is_float and target.is_float):
        return False
    a, b = ml_dtypes.finfo(source.numpy), ml_dtypes.finfo(target.numpy)

    def signed_zero(t):
        return bool(np.signbit(np.array(-0.0, np.float32).astype(t.numpy)))

    def has_nan(t):
        return bool(np.isnan(np.array(np.nan, np.float32).astype(t.numpy)))

    def has_negative(t):
        return float(ml_dtypes.finfo(t.numpy).min) < 0

    return (b.nmant >= a.nmant and float(b.max) >= float(a.max)
            and float(b.smallest_subnormal) <= float(a.smallest_subnormal)
            and (has_negative(target) or not has_negative(source))
            and (has_infinity(target) or not has_infinity(source))
            and (has_nan(target) or not has_nan(source))
            and (signed_zero(target) or not signed_zero(source)))


# -- reducers -------------------------------------------------------------------------------
def scalar_binary_op(computation: HloComputation) -> tuple[Opcode, bool] | None:
    """(op, swapped) when `computation` is `op(p0, p1)` (swapped: `op(p1, p0)`) on
    two scalar parameters, for an elementwise binary op; else None."""
    root = computation.root_instruction
    params = computation.parameters
    if len(params) != 2 or root is None or root.opcode not in ELEMENTWISE_BINARY:
        return None
    if not all(p.shape.is_scalar for p in params) or not root.shape.is_scalar:
        return None
    if root.operands == params:
        return root.opcode, False
    if root.operands == params[::-1]:
        return root.opcode, True
    return None


def is_identity(opcode: Opcode, init: HloInstruction) -> bool:
    """`init` is a constant e with op(e, x) = x for every x of its type."""
    element_type = init.shape.element_type
    if opcode in (Op.ADD, Op.OR, Op.XOR):
        return is_all(init, 0)
    if opcode is Op.MULTIPLY:
        return is_all(init, 1)
    if opcode is Op.AND:
        return is_all_ones(init)
    if opcode is Op.MAXIMUM:
        return is_all(init, lowest(element_type))
    if opcode is Op.MINIMUM:
        return is_all(init, highest(element_type))
    return False
