"""The builder's elementwise op methods, mixed into `builder.ComputationBuilder`:
one method per elementwise opcode, plus compare, select, clamp and the
conversions.

A compare prints `type=` only when it differs from the operands' default, as
XLA does.
"""

from __future__ import annotations

from xlapy.hlo.attributes import ComparisonDirection, ComparisonType
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

H = HloInstruction


def default_comparison_type(element_type: PrimitiveType) -> ComparisonType:
    """The comparison XLA assumes (and does not print) for operands of `element_type`."""
    if element_type.is_floating_or_complex:
        return ComparisonType.FLOAT
    if element_type.is_signed_int:
        return ComparisonType.SIGNED
    return ComparisonType.UNSIGNED


class ElementwiseOps:
    """One method per elementwise opcode, named after it (`not_`, `and_`, `or_` avoid
    Python keywords), plus the generic `unary` and `binary`."""

    def unary(self, opcode: Opcode, x: H) -> H:
        return self.add_instruction(opcode, [x])

    def binary(self, opcode: Opcode, x: H, y: H) -> H:
        return self.add_instruction(opcode, [x, y])

    # unary
    def abs(self, x: H) -> H:
        return self.unary(Opcode.ABS, x)

    def acos(self, x: H) -> H:
        return self.unary(Opcode.ACOS, x)

    def acosh(self, x: H) -> H:
        return self.unary(Opcode.ACOSH, x)

    def asin(self, x: H) -> H:
        return self.unary(Opcode.ASIN, x)

    def asinh(self, x: H) -> H:
        return self.unary(Opcode.ASINH, x)

    def atan(self, x: H) -> H:
        return self.unary(Opcode.ATAN, x)

    def atanh(self, x: H) -> H:
        return self.unary(Opcode.ATANH, x)

    def cbrt(self, x: H) -> H:
        return self.unary(Opcode.CBRT, x)

    def ceil(self, x: H) -> H:
        return self.unary(Opcode.CEIL, x)

    def clz(self, x: H) -> H:
        return self.unary(Opcode.CLZ, x)

    def cos(self, x: H) -> H:
        return self.unary(Opcode.COS, x)

    def cosh(self, x: H) -> H:
        return self.unary(Opcode.COSH, x)

    def erf(self, x: H) -> H:
        return self.unary(Opcode.ERF, x)

    def exp(self, x: H) -> H:
        return self.unary(Opcode.EXP, x)

    def expm1(self, x: H) -> H:
        return self.unary(Opcode.EXPM1, x)

    def floor(self, x: H) -> H:
        return self.unary(Opcode.FLOOR, x)

    def imag(self, x: H) -> H:
        return self.unary(Opcode.IMAG, x)

    def is_finite(self, x: H) -> H:
        return self.unary(Opcode.IS_FINITE, x)

    def log(self, x: H) -> H:
        return self.unary(Opcode.LOG, x)

    def log1p(self, x: H) -> H:
        return self.unary(Opcode.LOG1P, x)

    def logistic(self, x: H) -> H:
        return self.unary(Opcode.LOGISTIC, x)

    def negate(self, x: H) -> H:
        return self.unary(Opcode.NEGATE, x)

    def not_(self, x: H) -> H:
        return self.unary(Opcode.NOT, x)

    def popcnt(self, x: H) -> H:
        return self.unary(Opcode.POPCNT, x)

    def real(self, x: H) -> H:
        return self.unary(Opcode.REAL, x)

    def round_nearest_afz(self, x: H) -> H:
        return self.unary(Opcode.ROUND_NEAREST_AFZ, x)

    def round_nearest_even(self, x: H) -> H:
        return self.unary(Opcode.ROUND_NEAREST_EVEN, x)

    def rsqrt(self, x: H) -> H:
        return self.unary(Opcode.RSQRT, x)

    def sign(self, x: H) -> H:
        return self.unary(Opcode.SIGN, x)

    def sin(self, x: H) -> H:
        return self.unary(Opcode.SIN, x)

    def sinh(self, x: H) -> H:
        return self.unary(Opcode.SINH, x)

    def sqrt(self, x: H) -> H:
        return self.unary(Opcode.SQRT, x)

    def tan(self, x: H) -> H:
        return self.unary(Opcode.TAN, x)

    def tanh(self, x: H) -> H:
        return self.unary(Opcode.TANH, x)

    # binary
    def add(self, x: H, y: H) -> H:
        return self.binary(Opcode.ADD, x, y)

    def and_(self, x: H, y: H) -> H:
        return self.binary(Opcode.AND, x, y)

    def atan2(self, x: H, y: H) -> H:
        return self.binary(Opcode.ATAN2, x, y)

    def complex(self, real: H, imag: H) -> H:
        return self.binary(Opcode.COMPLEX, real, imag)

    def divide(self, x: H, y: H) -> H:
        return self.binary(Opcode.DIVIDE, x, y)

    def maximum(self, x: H, y: H) -> H:
        return self.binary(Opcode.MAXIMUM, x, y)

    def minimum(self, x: H, y: H) -> H:
        return self.binary(Opcode.MINIMUM, x, y)

    def mulhi(self, x: H, y: H) -> H:
        return self.binary(Opcode.MULHI, x, y)

    def multiply(self, x: H, y: H) -> H:
        return self.binary(Opcode.MULTIPLY, x, y)

    def or_(self, x: H, y: H) -> H:
        return self.binary(Opcode.OR, x, y)

    def power(self, x: H, y: H) -> H:
        return self.binary(Opcode.POWER, x, y)

    def remainder(self, x: H, y: H) -> H:
        return self.binary(Opcode.REMAINDER, x, y)

    def shift_left(self, x: H, y: H) -> H:
        return self.binary(Opcode.SHIFT_LEFT, x, y)

    def shift_right_arithmetic(self, x: H, y: H) -> H:
        return self.binary(Opcode.SHIFT_RIGHT_ARITHMETIC, x, y)

    def shift_right_logical(self, x: H, y: H) -> H:
        return self.binary(Opcode.SHIFT_RIGHT_LOGICAL, x, y)

    def subtract(self, x: H, y: H) -> H:
        return self.binary(Opcode.SUBTRACT, x, y)

    def xor(self, x: H, y: H) -> H:
        return self.binary(Opcode.XOR, x, y)

    # elementwise with attributes or a target type
    def compare(self, x: H, y: H, direction: ComparisonDirection | str,
                comparison_type: ComparisonType | str | None = None) -> H:
        """`direction` is a ComparisonDirection or its spelling ("LT"); `type=` is
        printed only when it differs from the operands' default (as XLA does)."""
        attrs = {"direction": direction}
        if comparison_type is not None:
            kind = self._enum(ComparisonType, comparison_type, "compare: comparison_type")
            if kind is not default_comparison_type(self._shape_of(x).element_type):
                attrs["type"] = kind
        return self.add_instruction(Opcode.COMPARE, [x, y], **attrs)

    def select(self, pred: H, on_true: H, on_false: H) -> H:
        return self.add_instruction(Opcode.SELECT, [pred, on_true, on_false])

    def clamp(self, low: H, x: H, high: H) -> H:
        """XLA's operand order: clamp(min, operand, max)."""
        return self.add_instruction(Opcode.CLAMP, [low, x, high])

    def convert(self, x: H, element_type: PrimitiveType | str) -> H:
        shape = Shape.array(self._element_type(element_type), self._shape_of(x).dimensions)
        return self.add_instruction(Opcode.CONVERT, [x], shape)

    def bitcast_convert(self, x: H, element_type: PrimitiveType | str) -> H:
        """Reinterpret bits; a wider or narrower type drops or appends the last dim."""
        wanted = Shape.array(self._element_type(element_type), self._shape_of(x).dimensions)
        shape = self.infer_shape(Opcode.BITCAST_CONVERT, [x], wanted)
        return self.add_instruction(Opcode.BITCAST_CONVERT, [x], shape)

    def reduce_precision(self, x: H, exponent_bits: int, mantissa_bits: int) -> H:
        return self.add_instruction(Opcode.REDUCE_PRECISION, [x], exponent_bits=exponent_bits,
                                    mantissa_bits=mantissa_bits)
