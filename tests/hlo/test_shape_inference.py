"""Shape inference as a whole: the public contract (infer_shape, can_infer,
check_shape), a rule for every opcode with tested successes and failures, and
robustness against malformed input. Per-family cases live in the sibling
test_shape_inference_*.py files."""

import pytest

from tests.hlo import (
    test_shape_inference_control,
    test_shape_inference_elementwise,
    test_shape_inference_linalg,
    test_shape_inference_movement,
)
from tests.hlo.shape_inference_util import S, T, computation, infer, reducer
from xlapy.errors import ShapeError
from xlapy.hlo.attributes import (
    ComparisonDirection,
    ConvolutionDimensionNumbers,
    PaddingConfig,
    PaddingDimension,
    RawAttribute,
    Window,
    WindowDimension,
)
from xlapy.hlo.ir import HloComputation
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Layout, Shape
from xlapy.hlo.shape_inference import can_infer, check_shape, infer_shape

FAMILIES = [test_shape_inference_control, test_shape_inference_elementwise,
            test_shape_inference_linalg, test_shape_inference_movement]


def _opcodes(table: str) -> set[Opcode]:
    return {Opcode.from_text(case[0]) for family in FAMILIES for case in getattr(family, table)}


def test_every_opcode_has_a_tested_success():
    missing = set(Opcode) - _opcodes("OK_CASES")
    assert not missing, sorted(op.value for op in missing)


def test_every_opcode_has_a_tested_failure():
    missing = set(Opcode) - _opcodes("ERROR_CASES")
    assert not missing, sorted(op.value for op in missing)


@pytest.mark.parametrize("opcode", list(Opcode), ids=str)
def test_every_opcode_has_a_rule(opcode):
    # A missing rule would say "no shape rule"; any other ShapeError is a real check.
    try:
        infer_shape(opcode, [], {})
    except ShapeError as error:
        assert "no shape rule" not in str(error)
        assert str(error).startswith(opcode.value + ": ")


@pytest.mark.parametrize("opcode, expected", [
    (Opcode.ADD, True), (Opcode.DOT, True), (Opcode.GATHER, True), (Opcode.WHILE, True),
    (Opcode.FUSION, True), (Opcode.ALL_GATHER, True), (Opcode.TOPK, True),
    (Opcode.PARAMETER, False), (Opcode.CONSTANT, False), (Opcode.IOTA, False),
    (Opcode.BROADCAST, False), (Opcode.RESHAPE, False), (Opcode.CONVERT, False),
    (Opcode.BITCAST, False), (Opcode.BITCAST_CONVERT, False), (Opcode.CUSTOM_CALL, False),
    (Opcode.RNG, False), (Opcode.RNG_BIT_GENERATOR, False), (Opcode.INFEED, False),
    (Opcode.RECV, False),
])
def test_can_infer(opcode, expected):
    assert can_infer(opcode) is expected


def test_can_infer_matches_needing_a_declared_shape():
    # Where can_infer is True, no successful test case needed a declared shape for ops
    # other than dot/convolution/collectives (which only use it as XLA does).
    for family in FAMILIES:
        for opcode, _, _, declared, _ in family.OK_CASES:
            op = Opcode.from_text(opcode)
            if not can_infer(op):
                assert declared is not None, opcode


def test_results_have_no_layout():
    lhs = Shape.array("f32", (2, 3), layout=(0, 1))
    rhs = Shape.array("f32", (2, 3), layout=(1, 0))
    result = infer_shape(Opcode.ADD, [lhs, rhs], {})
    assert result.layout is None and result.compatible(S("f32[2,3]"))
    pair = infer_shape(Opcode.TUPLE, [lhs, Shape.tuple([rhs])], {})
    assert all(leaf.layout is None for _, leaf in pair.leaves())
    declared = Shape.array("f32", (6,), layout=Layout((0,)))
    assert infer_shape(Opcode.RESHAPE, [lhs], {}, declared).layout is None


def test_check_shape_accepts_compatible_and_rejects_mismatch():
    f32 = S("f32[2,3]")
    assert T(check_shape(Opcode.ADD, [f32, f32], {}, f32.with_default_layout())) == "f32[2,3]"
    with pytest.raises(ShapeError, match=r"add: declared shape f32\[3,2\] does not match the "
                                         r"inferred shape f32\[2,3\]"):
        check_shape(Opcode.ADD, [f32, f32], {}, S("f32[3,2]"))
    with pytest.raises(ShapeError, match=r"declared shape f32\[3\] does not match the inferred "
                                         r"shape s32\[3\]"):
        check_shape(Opcode.BROADCAST, [S("s32[3]")], {"dimensions": (0,)}, S("f32[3]"))
    convert = check_shape(Opcode.CONVERT, [S("s32[2]")], {}, S("f16[2]"))
    assert T(convert) == "f16[2]"
    with pytest.raises(ShapeError, match="does not match"):
        check_shape(Opcode.CONVERT, [S("s32[2]")], {}, S("f16[3]"))


def test_dot_uses_declared_type_only_when_declared():
    attrs = {"lhs_contracting_dims": (1,), "rhs_contracting_dims": (0,)}
    assert infer("dot", "bf16[2,3]", "bf16[3,4]", **attrs) == "bf16[2,4]"
    assert infer("dot", "bf16[2,3]", "bf16[3,4]", declared="f32[2,4]", **attrs) == "f32[2,4]"


def test_arguments_that_are_not_ir_objects():
    with pytest.raises(ShapeError, match="not an opcode"):
        infer_shape("add", [S("f32[]"), S("f32[]")], {})
    with pytest.raises(ShapeError, match="declared must be a Shape"):
        infer_shape(Opcode.CONVERT, [S("f32[]")], {}, "f32[]")
    with pytest.raises(ShapeError, match=r"operand 0 is not a Shape"):
        infer_shape(Opcode.ADD, [(2, 3), S("f32[2,3]")], {})


@pytest.mark.parametrize("opcode, operands, attrs", [
    (Opcode.TRANSPOSE, ["f32[2,3]"], {"dimensions": (True, 0)}),
    (Opcode.TRANSPOSE, ["f32[2,3]"], {"dimensions": "1,0"}),
    (Opcode.SLICE, ["f32[2]"], {"slice": ((0, 1),)}),
    (Opcode.PAD, ["f32[2]", "f32[]"], {"padding": PaddingConfig((PaddingDimension("1"),))}),
    (Opcode.REDUCE, ["f32[2]", "f32[]"], {"dimensions": (0,), "to_apply": RawAttribute("%r")}),
    (Opcode.REDUCE, ["f32[2]", "f32[]"], {"dimensions": (0,), "to_apply": HloComputation("e")}),
    (Opcode.REDUCE_WINDOW, ["f32[4]", "f32[]"],
     {"window": Window((WindowDimension(None),)), "to_apply": reducer()}),
    (Opcode.CONVOLUTION, ["f32[1,4,1]", "f32[2,1,1]"],
     {"dim_labels": ConvolutionDimensionNumbers(0, 2, (7,), 1, 2, (0,), 0, 2, (1,)),
      "window": Window((WindowDimension(2),))}),
    (Opcode.GET_TUPLE_ELEMENT, ["(f32[])"], {"index": "0"}),
    (Opcode.COMPARE, ["f32[]", "f32[]"], {"direction": ComparisonDirection.LT, "type": "FLOAT"}),
    (Opcode.ALL_GATHER, ["f32[2]"], {"dimensions": (0,), "replica_groups": RawAttribute("{}")}),
    (Opcode.CALL, ["f32[]"], {"to_apply": computation("c", ["f32[]", "f32[]"], "f32[]")}),
])
def test_malformed_attributes_raise_shape_errors(opcode, operands, attrs):
    with pytest.raises(ShapeError, match="^" + opcode.value + ": "):
        infer_shape(opcode, [S(o) for o in operands], attrs)
