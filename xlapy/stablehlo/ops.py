"""The op table: StableHLO op kind -> lowering, one entry per op.

Elementwise ops map one to one onto HLO opcodes and are listed here; the
others live with their kind (ops_array, ops_control, chlo). An op missing
from `OPS` is a ParseError naming it.
"""

from __future__ import annotations

from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.stablehlo import chlo, ops_array, ops_control
from xlapy.stablehlo.context import OpContext

UNARY: dict[str, Opcode] = {
    "abs": Opcode.ABS, "cbrt": Opcode.CBRT, "ceil": Opcode.CEIL, "cosine": Opcode.COS,
    "count_leading_zeros": Opcode.CLZ, "exponential": Opcode.EXP,
    "exponential_minus_one": Opcode.EXPM1, "floor": Opcode.FLOOR, "imag": Opcode.IMAG,
    "is_finite": Opcode.IS_FINITE, "log": Opcode.LOG, "log_plus_one": Opcode.LOG1P,
    "logistic": Opcode.LOGISTIC, "negate": Opcode.NEGATE, "not": Opcode.NOT,
    "popcnt": Opcode.POPCNT, "real": Opcode.REAL, "round_nearest_afz": Opcode.ROUND_NEAREST_AFZ,
    "round_nearest_even": Opcode.ROUND_NEAREST_EVEN, "rsqrt": Opcode.RSQRT, "sign": Opcode.SIGN,
    "sine": Opcode.SIN, "sqrt": Opcode.SQRT, "tan": Opcode.TAN, "tanh": Opcode.TANH,
}

BINARY: dict[str, Opcode] = {
    "add": Opcode.ADD, "and": Opcode.AND, "atan2": Opcode.ATAN2, "complex": Opcode.COMPLEX,
    "divide": Opcode.DIVIDE, "maximum": Opcode.MAXIMUM, "minimum": Opcode.MINIMUM,
    "multiply": Opcode.MULTIPLY, "or": Opcode.OR, "power": Opcode.POWER,
    "remainder": Opcode.REMAINDER, "shift_left": Opcode.SHIFT_LEFT,
    "shift_right_arithmetic": Opcode.SHIFT_RIGHT_ARITHMETIC,
    "shift_right_logical": Opcode.SHIFT_RIGHT_LOGICAL, "subtract": Opcode.SUBTRACT,
    "xor": Opcode.XOR,
}


def _elementwise(opcode: Opcode, arity: int):
    def lower(ctx: OpContext) -> list[HloInstruction]:
        ctx.arity(arity)
        return [ctx.b.add_instruction(opcode, ctx.args)]
    return lower


OPS = {
    **{name: _elementwise(opcode, 1) for name, opcode in UNARY.items()},
    **{name: _elementwise(opcode, 2) for name, opcode in BINARY.items()},
    **ops_array.TABLE,
    **ops_control.TABLE,
    **chlo.TABLE,
}
"""Op kind (syntax.canonical_kind: `add`, `chlo.erf`, `call`) -> lowering."""
