"""Shape inference of elementwise ops: element-type rules per opcode, equal
dimensions, compare/select/clamp, the converts, reduce-precision and map."""

import re

import pytest

from tests.hlo.shape_inference_util import computation, infer
from xlapy.errors import ShapeError
from xlapy.hlo.attributes import ComparisonDirection, ComparisonType

LT = {"direction": ComparisonDirection.LT}

FLOAT_ONLY = ["floor", "ceil", "round-nearest-afz", "round-nearest-even", "erf"]
FLOAT_OR_COMPLEX = ["cosine", "sine", "tan", "exponential", "exponential-minus-one", "log",
                    "log-plus-one", "logistic", "rsqrt", "sqrt", "cbrt", "tanh", "acos", "acosh",
                    "asin", "asinh", "atan", "atanh", "cosh", "sinh"]
NOT_PRED = ["subtract", "divide", "remainder", "power", "atan2"]
INTEGRAL = ["shift-left", "shift-right-arithmetic", "shift-right-logical", "mulhi"]
LOGICAL = ["and", "or", "xor"]

# (opcode, operands, attrs, declared, expected result)
OK_CASES = [
    *[(op, ["f32[2,3]"], {}, None, "f32[2,3]") for op in FLOAT_ONLY],
    ("floor", ["bf16[4]"], {}, None, "bf16[4]"),
    *[(op, ["f64[3]"], {}, None, "f64[3]") for op in FLOAT_OR_COMPLEX],
    *[(op, ["c64[3]"], {}, None, "c64[3]") for op in FLOAT_OR_COMPLEX],
    ("real", ["c64[2]"], {}, None, "f32[2]"),
    ("real", ["f32[2]"], {}, None, "f32[2]"),
    ("imag", ["c128[2,2]"], {}, None, "f64[2,2]"),
    ("abs", ["c64[2]"], {}, None, "f32[2]"),
    ("abs", ["s8[3]"], {}, None, "s8[3]"),
    ("abs", ["f16[]"], {}, None, "f16[]"),
    ("count-leading-zeros", ["u32[4]"], {}, None, "u32[4]"),
    ("popcnt", ["s64[4]"], {}, None, "s64[4]"),
    ("negate", ["s32[2]"], {}, None, "s32[2]"),
    ("negate", ["u8[2]"], {}, None, "u8[2]"),
    ("negate", ["c64[2]"], {}, None, "c64[2]"),
    ("sign", ["s32[2]"], {}, None, "s32[2]"),
    ("sign", ["c128[]"], {}, None, "c128[]"),
    ("not", ["pred[2]"], {}, None, "pred[2]"),
    ("not", ["u16[2]"], {}, None, "u16[2]"),
    ("is-finite", ["f32[2,3]"], {}, None, "pred[2,3]"),
    ("copy", ["(f32[2], token[])"], {}, None, "(f32[2], token[])"),
    ("domain", ["f32[2]"], {}, None, "f32[2]"),
    *[(op, ["f32[2,3]", "f32[2,3]"], {}, None, "f32[2,3]")
      for op in ["add", "multiply", "maximum", "minimum", *NOT_PRED]],
    ("add", ["pred[2]", "pred[2]"], {}, None, "pred[2]"),
    ("maximum", ["c64[]", "c64[]"], {}, None, "c64[]"),
    *[(op, ["s32[4]", "s32[4]"], {}, None, "s32[4]") for op in INTEGRAL + LOGICAL + NOT_PRED],
    *[(op, ["pred[4]", "pred[4]"], {}, None, "pred[4]") for op in LOGICAL],
    ("complex", ["f32[3]", "f32[3]"], {}, None, "c64[3]"),
    ("complex", ["f64[]", "f64[]"], {}, None, "c128[]"),
    ("compare", ["f32[2,3]", "f32[2,3]"], LT, None, "pred[2,3]"),
    ("compare", ["s32[2]", "s32[2]"], {**LT, "type": ComparisonType.SIGNED}, None, "pred[2]"),
    ("compare", ["u8[2]", "u8[2]"], {**LT, "type": ComparisonType.UNSIGNED}, None, "pred[2]"),
    ("compare", ["pred[]", "pred[]"], {**LT, "type": ComparisonType.UNSIGNED}, None, "pred[]"),
    ("compare", ["f32[2]", "f32[2]"], {**LT, "type": ComparisonType.TOTALORDER}, None, "pred[2]"),
    ("select", ["pred[2,3]", "f32[2,3]", "f32[2,3]"], {}, None, "f32[2,3]"),
    ("select", ["pred[]", "s32[2,3]", "s32[2,3]"], {}, None, "s32[2,3]"),
    ("clamp", ["f32[2]", "f32[2]", "f32[2]"], {}, None, "f32[2]"),
    ("clamp", ["f32[]", "f32[2,3]", "f32[]"], {}, None, "f32[2,3]"),
    ("clamp", ["s32[]", "s32[4]", "s32[4]"], {}, None, "s32[4]"),
    ("convert", ["s32[2,3]"], {}, "f32[2,3]", "f32[2,3]"),
    ("convert", ["f32[2]"], {}, "pred[2]", "pred[2]"),
    ("bitcast-convert", ["f32[2]"], {}, "s32[2]", "s32[2]"),
    ("bitcast-convert", ["f32[2]"], {}, "u8[2,4]", "u8[2,4]"),
    ("bitcast-convert", ["u8[2,4]"], {}, "f32[2]", "f32[2]"),
    ("bitcast-convert", ["u16[3,2]"], {}, "f32[3]", "f32[3]"),
    ("bitcast-convert", ["f64[]"], {}, "s16[4]", "s16[4]"),
    ("bitcast-convert", ["c64[3]"], {}, "c64[3]", "c64[3]"),
    ("stochastic-convert", ["f32[4]", "u32[4]"], {}, "bf16[4]", "bf16[4]"),
    ("reduce-precision", ["f32[3]"], {"exponent_bits": 5, "mantissa_bits": 10}, None, "f32[3]"),
    ("reduce-precision", ["bf16[]"], {"exponent_bits": 1, "mantissa_bits": 0}, None, "bf16[]"),
    ("map", ["f32[2,3]", "f32[2,3]"],
     {"to_apply": computation("m", ["f32[]", "f32[]"], "f32[]")}, None, "f32[2,3]"),
    ("map", ["f32[4]"], {"dimensions": (0,), "to_apply": computation("m", ["f32[]"], "s32[]")},
     None, "s32[4]"),
]

# (opcode, operands, attrs, declared, substring of the error message)
ERROR_CASES = [
    *[(op, ["s32[2]"], {}, None, f"{op}: operand 0 has element type s32; {op} needs a "
       "floating-point element type") for op in FLOAT_ONLY],
    ("is-finite", ["c64[2]"], {}, None, "needs a floating-point element type"),
    *[(op, ["s32[2]"], {}, None, "needs a floating-point or complex element type")
      for op in FLOAT_OR_COMPLEX],
    ("real", ["s32[2]"], {}, None, "needs a floating-point or complex element type"),
    ("imag", ["pred[2]"], {}, None, "needs a floating-point or complex element type"),
    ("abs", ["u32[2]"], {}, None, "abs needs a signed integral, floating-point or complex"),
    ("sign", ["u8[2]"], {}, None, "sign needs a signed integral, floating-point or complex"),
    ("count-leading-zeros", ["f32[2]"], {}, None, "needs an integral element type"),
    ("popcnt", ["pred[2]"], {}, None, "needs an integral element type"),
    ("negate", ["pred[2]"], {}, None, "needs an integral, floating-point or complex"),
    ("not", ["f32[2]"], {}, None, "not needs a pred or integral element type"),
    ("exponential", ["(f32[2])"], {}, None, "operand 0 must be an array, but has shape (f32[2])"),
    ("copy", ["f32[2]", "f32[2]"], {}, None, "copy: expects 1 operand(s), got 2"),
    ("domain", [], {}, None, "domain: expects 1 operand(s), got 0"),
    ("add", ["f32[2]", "f32[3]"], {}, None, "add: operand 1 has shape f32[3] but operand 0 has "
     "f32[2]; binary elementwise ops need equal dimensions"),
    ("add", ["f32[]", "f32[3]"], {}, None, "need equal dimensions"),
    ("multiply", ["f32[2]", "f16[2]"], {}, None, "multiply: operand 1 has element type f16 but "
     "operand 0 has f32; binary elementwise ops need equal element types"),
    ("maximum", ["f32[2]", "token[]"], {}, None, "operand 1 must be an array"),
    ("minimum", ["s32[2]", "u32[2]"], {}, None, "need equal element types"),
    *[(op, ["pred[2]", "pred[2]"], {}, None, f"{op} needs a non-pred element type")
      for op in NOT_PRED],
    *[(op, ["f32[2]", "f32[2]"], {}, None, f"{op} needs an integral element type")
      for op in INTEGRAL],
    *[(op, ["f32[2]", "f32[2]"], {}, None, f"{op} needs a pred or integral element type")
      for op in LOGICAL],
    ("complex", ["s32[2]", "s32[2]"], {}, None, "complex needs an f32 or f64 element type"),
    ("complex", ["f32[2]", "f64[2]"], {}, None, "need equal element types"),
    ("compare", ["f32[2]", "f32[2]"], {}, None, "compare: needs the attribute direction"),
    ("compare", ["f32[2]", "f32[2]"], {"direction": "LT"}, None,
     "attribute direction must be one of EQ, NE"),
    ("compare", ["f32[2]", "f32[2]"], {**LT, "type": ComparisonType.SIGNED}, None,
     "type=SIGNED cannot compare f32 values"),
    ("compare", ["s32[2]", "s32[2]"], {**LT, "type": ComparisonType.UNSIGNED}, None,
     "type=UNSIGNED cannot compare s32 values"),
    ("select", ["s32[2]", "f32[2]", "f32[2]"], {}, None,
     "the predicate (operand 0) has element type s32, not pred"),
    ("select", ["pred[3]", "f32[2,3]", "f32[2,3]"], {}, None,
     "the predicate pred[3] must be a scalar or have the dimensions of the selected operands"),
    ("select", ["pred[2]", "f32[2]", "s32[2]"], {}, None, "need equal element types"),
    ("clamp", ["f32[3]", "f32[2]", "f32[2]"], {}, None,
     "min (operand 0) has shape f32[3]; it must be a scalar or match the operand f32[2]"),
    ("clamp", ["f32[]", "f32[2]", "s32[]"], {}, None,
     "max (operand 2) has element type s32 but the operand has f32"),
    ("convert", ["s32[2]"], {}, None, "convert: the target element type is given by the result "
     "shape: only the instruction's declared shape says so"),
    ("convert", ["s32[2]"], {}, "(f32[2])", "the result must be an array"),
    ("convert", ["token[]"], {}, "f32[]", "operand 0 must be an array"),
    ("bitcast-convert", ["u8[2,3]"], {}, "f32[2]", "bitcasting u8[2,3] to the wider f32 needs a "
     "last dimension of size 4"),
    ("bitcast-convert", ["u8[]"], {}, "s16[]", "needs a last dimension of size 2"),
    ("bitcast-convert", ["f64[2]"], {}, "c64[2]", "cannot bitcast between complex and real"),
    ("bitcast-convert", ["f32[2]"], {}, "f6e2m3fn[2]", "one width must divide the other"),
    ("stochastic-convert", ["f32[4]", "u16[4]"], {}, "bf16[4]", "must be as wide as the operand"),
    ("stochastic-convert", ["s32[4]", "u32[4]"], {}, "bf16[4]", "must be floating-point"),
    ("stochastic-convert", ["f32[4]", "s32[4]"], {}, "bf16[4]", "must be unsigned integers"),
    ("stochastic-convert", ["f32[4]", "u32[3]"], {}, "bf16[4]", "operand's dimensions"),
    ("reduce-precision", ["f32[3]"], {"exponent_bits": 0, "mantissa_bits": 3}, None,
     "exponent_bits=0 must be at least 1"),
    ("reduce-precision", ["f32[3]"], {"exponent_bits": 8, "mantissa_bits": -1}, None,
     "mantissa_bits=-1 must not be negative"),
    ("reduce-precision", ["s32[3]"], {"exponent_bits": 8, "mantissa_bits": 3}, None,
     "needs a floating-point element type"),
    ("reduce-precision", ["f32[3]"], {"mantissa_bits": 3}, None,
     "needs the attribute exponent_bits"),
    ("map", ["f32[2]", "f32[2]"], {"to_apply": computation("m", ["f32[]"], "f32[]")}, None,
     "to_apply computation m takes 1 parameter(s) but map has 2 operand(s)"),
    ("map", ["f32[2]", "f32[3]"], {"to_apply": computation("m", ["f32[]"] * 2, "f32[]")}, None,
     "map needs equal dimensions"),
    ("map", ["f32[2]"], {"to_apply": computation("m", ["s32[]"], "f32[]")}, None,
     "to_apply parameter 0 has shape s32[]; it must be a f32[] scalar"),
    ("map", ["f32[2]"], {"to_apply": computation("m", ["f32[]"], "f32[2]")}, None,
     "must return a scalar"),
    ("map", ["f32[2,2]"], {"dimensions": (1, 0), "to_apply": computation("m", ["f32[]"], "f32[]")},
     None, "dimensions={1,0} must be all dimensions in order"),
]


def case_id(case) -> str:
    return f"{case[0]}({', '.join(case[1])})"


@pytest.mark.parametrize("case", OK_CASES, ids=case_id)
def test_ok(case):
    opcode, operands, attrs, declared, expected = case
    assert infer(opcode, *operands, declared=declared, **attrs) == expected


@pytest.mark.parametrize("case", ERROR_CASES, ids=case_id)
def test_error(case):
    opcode, operands, attrs, declared, message = case
    with pytest.raises(ShapeError, match=re.escape(message)):
        infer(opcode, *operands, declared=declared, **attrs)


def test_elementwise_keeps_dynamic_dimensions():
    assert infer("exponential", "f32[<=4,2]") == "f32[<=4,2]"
    assert infer("convert", "s32[<=4]", declared="f32[4]") == "f32[<=4]"
    assert infer("add", "f32[4,<=3]", "f32[<=4,3]") == "f32[<=4,<=3]"
    assert infer("compare", "s32[<=4]", "s32[4]", direction=ComparisonDirection.EQ) == "pred[<=4]"
