"""Tests of the HLO text printer: XLA's exact spelling of modules, instructions,
attributes, shapes and literals, checked on IR built directly (no parser)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from xlapy.hlo.attributes import (
    ComparisonDirection,
    ComputationLayout,
    ConvolutionDimensionNumbers,
    FusionKind,
    InputOutputAlias,
    IotaReplicaGroups,
    OpMetadata,
    PaddingConfig,
    PaddingDimension,
    Precision,
    RawAttribute,
    SliceRange,
    Window,
    WindowDimension,
)
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.literal_text import format_float, literal_to_text
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.parser import parse_module
from xlapy.hlo.printer import (
    attribute_to_text,
    computation_to_text,
    instruction_to_text,
    module_to_text,
    shape_to_text,
)
from xlapy.hlo.shape import Layout, Shape

F32 = Shape.array("f32", (), ())
V2 = Shape.array("f32", (2,), (0,))


def param(number: int, shape: Shape, name: str) -> HloInstruction:
    return HloInstruction(Opcode.PARAMETER, shape, name=name, parameter_number=number)


def adder() -> HloComputation:
    a, b = param(0, F32, "a"), param(1, F32, "b")
    return HloComputation("add", [a, b, HloInstruction(Opcode.ADD, F32, [a, b], name="r")])


def small_module() -> HloModule:
    add = adder()
    x = param(0, Shape.array("f32", (2, 3), (1, 0)), "x")
    zero = HloInstruction(Opcode.CONSTANT, F32, name="zero", literal=np.float32(0))
    reduce = HloInstruction(Opcode.REDUCE, V2, [x, zero],
                            {"dimensions": (1,), "to_apply": add,
                             "metadata": OpMetadata((("op_name", "sum"), ("source_line", 4)))},
                            name="reduce.1")
    entry = HloComputation("main", [x, zero, reduce])
    module = HloModule("jit_f")
    module.attributes["entry_computation_layout"] = ComputationLayout(
        (Shape.array("f32", (2, 3), (1, 0)),), V2)
    module.add_computation(add)
    module.add_computation(entry, entry=True)
    return module


def test_long_form_module():
    assert module_to_text(small_module()) == """\
HloModule jit_f, entry_computation_layout={(f32[2,3]{1,0})->f32[2]{0}}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %r = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (x: f32[2,3]) -> f32[2] {
  %x = f32[2,3]{1,0} parameter(0)
  %zero = f32[] constant(0)
  ROOT %reduce.1 = f32[2]{0} reduce(f32[2,3]{1,0} %x, f32[] %zero), dimensions={1}, \
to_apply=%add, metadata={op_name="sum" source_line=4}
}
"""


def test_short_form_module():
    assert module_to_text(small_module(), short=True) == """\
HloModule jit_f, entry_computation_layout={(f32[2,3]{1,0})->f32[2]{0}}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}

ENTRY main {
  x = f32[2,3]{1,0} parameter(0)
  zero = f32[] constant(0)
  ROOT reduce.1 = f32[2]{0} reduce(x, zero), dimensions={1}, to_apply=add, \
metadata={op_name="sum" source_line=4}
}
"""


def test_to_text_hooks_on_the_ir_use_the_printer():
    module = small_module()
    assert module.to_text() == module_to_text(module)
    assert str(module) == module_to_text(module)
    root = module.entry_computation.root_instruction
    assert root.to_text(short=True).startswith("reduce.1 = f32[2]{0} reduce(x, zero)")


def test_operands_and_tuples_get_index_markers_every_fifth():
    xs = [param(i, F32, f"p{i}") for i in range(6)]
    shape = Shape.tuple([F32] * 6)
    tuple_ = HloInstruction(Opcode.TUPLE, shape, xs, name="t")
    assert instruction_to_text(tuple_) == (
        "%t = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[]) tuple(f32[] %p0, f32[] %p1, "
        "f32[] %p2, f32[] %p3, f32[] %p4, /*index=5*/f32[] %p5)")
    assert instruction_to_text(tuple_, short=True) == (
        "t = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[]) tuple(p0, p1, p2, p3, p4, p5)")


def test_signature_prints_shapes_without_layouts_and_params_in_number_order():
    p1 = param(1, Shape.array("s32", (4,), (0,)), "second")
    p0 = param(0, Shape.tuple([Shape.array("f32", (2, 2), (0, 1)), F32]), "first")
    computation = HloComputation("c", [p1, p0, HloInstruction(Opcode.TUPLE, Shape.tuple([]),
                                                              name="t")])
    assert computation_to_text(computation).splitlines()[0] == (
        "%c (first: (f32[2,2], f32[]), second: s32[4]) -> () {")
    computation.execution_thread = "host"
    assert computation_to_text(computation, short=True).endswith('}, execution_thread="host"')


def test_shapes():
    assert shape_to_text(Shape.array("f32", (), ())) == "f32[]"
    assert shape_to_text(Shape.array("f32", (2, 3), (0, 1))) == "f32[2,3]{0,1}"
    assert shape_to_text(Shape.array("f32", (2, 3), (0, 1)), layout=False) == "f32[2,3]"
    assert shape_to_text(Shape.array("f32", (8,), Layout((0,), "T(128)S(1)"))) == \
        "f32[8]{0:T(128)S(1)}"
    assert shape_to_text(Shape.tuple([])) == "()"
    assert shape_to_text(Shape.token()) == "token[]"
    dynamic = Shape(PrimitiveType.S32, (4, 2), Layout((1, 0)), (), (True, False))
    assert shape_to_text(dynamic) == "s32[<=4,2]{1,0}"


@pytest.mark.parametrize("opcode, name, value, text", [
    ("broadcast", "dimensions", (), "{}"),
    ("transpose", "dimensions", (1, 0, 2), "{1,0,2}"),
    ("get-tuple-element", "index", 3, "3"),
    ("sort", "is_stable", True, "true"),
    ("batch-norm-training", "epsilon", 0.001, "0.001"),
    ("batch-norm-training", "epsilon", 1.0000001, "1.0000001"),
    ("custom-call", "custom_call_target", 'a"b\n', '"a\\"b\\n"'),
    ("compare", "direction", ComparisonDirection.LT, "LT"),
    ("fusion", "kind", FusionKind.INPUT, "kInput"),
    ("all-reduce", "replica_groups", ((0, 1), (2, 3)), "{{0,1},{2,3}}"),
    ("all-reduce", "replica_groups", (), "{}"),
    ("all-gather", "replica_groups", IotaReplicaGroups((2, 2), (4,)), "[2,2]<=[4]"),
    ("collective-permute", "source_target_pairs", ((0, 1), (1, 0)), "{{0,1},{1,0}}"),
    ("slice", "slice", (SliceRange(0, 2), SliceRange(1, 7, 3)), "{[0:2], [1:7:3]}"),
    ("pad", "padding", PaddingConfig((PaddingDimension(0, 0), PaddingDimension(-1, 2))),
     "0_0x-1_2"),
    ("pad", "padding", PaddingConfig((PaddingDimension(0, 0), PaddingDimension(1, 2, 1))),
     "0_0_0x1_2_1"),
    ("dot", "operand_precision", (Precision.DEFAULT, Precision.HIGHEST), "{default,highest}"),
    ("convolution", "window", Window((WindowDimension(3, 2, 1, 1), WindowDimension(3, 2, 0, 1))),
     "{size=3x3 stride=2x2 pad=1_1x0_1}"),
    ("convolution", "dim_labels", ConvolutionDimensionNumbers.from_text("b01f_01io->b01f"),
     "b01f_01io->b01f"),
    ("custom-call", "operand_layout_constraints", (Shape.array("f32", (2,), (0,)), F32),
     "{f32[2]{0}, f32[]}"),
    ("custom-call", "api_version", RawAttribute("API_VERSION_TYPED_FFI"), "API_VERSION_TYPED_FFI"),
    ("add", "metadata", OpMetadata((("op_type", "add"), ("op_name", "it's"), ("stack_frame_id", 7),
                                    ("preserve_layout", True))),
     "{op_type=\"add\" op_name=\"it\\'s\" stack_frame_id=7 preserve_layout=true}"),
])
def test_attribute_spelling(opcode, name, value, text):
    assert attribute_to_text(opcode, name, value) == text


def test_computation_attributes_follow_the_form():
    add = adder()
    assert attribute_to_text("reduce", "to_apply", add) == "%add"
    assert attribute_to_text("reduce", "to_apply", add, short=True) == "add"
    assert attribute_to_text("conditional", "branch_computations", (add, add)) == "{%add, %add}"


def test_names_that_would_not_read_back_keep_their_percent_in_short_form():
    x = param(0, F32, "pred")
    neg = HloInstruction(Opcode.NEGATE, F32, [x], name="nan")
    assert instruction_to_text(neg, short=True) == "%nan = f32[] negate(%pred)"


def test_module_header_attributes():
    module = small_module()
    module.attributes = {
        "is_scheduled": True,
        "input_output_alias": (InputOutputAlias((0,), 1, (), "may-alias"),
                               InputOutputAlias((1, 2), 0, (3,), "")),
        "entry_computation_layout": ComputationLayout((F32,) * 6, Shape.tuple([V2, F32])),
        "num_partitions": 4,
        "frontend_attributes": RawAttribute('{a="b"}'),
    }
    header = module_to_text(module).splitlines()[0]
    assert header == (
        "HloModule jit_f, is_scheduled=true, input_output_alias={ {0}: (1, {}, may-alias), "
        "{1,2}: (0, {3}) }, entry_computation_layout={(f32[], f32[], f32[], f32[], f32[], "
        "/*index=5*/f32[])->(f32[2]{0}, f32[])}, num_partitions=4, frontend_attributes={a=\"b\"}")


def test_frame_tables_print_after_the_header():
    module = small_module()
    module.frame_tables = "FileNames\n1 \"a.py\"\n\nFunctionNames\n1 \"f\"\n\nFileLocations\n" \
                          "1 {file_name_id=1 function_name_id=1 line=1 end_line=1 column=1 " \
                          "end_column=2}\n\nStackFrames\n1 {file_location_id=1 parent_frame_id=0}"
    text = module_to_text(module)
    assert text.split("\n\n\n")[0].endswith("StackFrames\n1 {file_location_id=1 parent_frame_id=0}")
    assert parse_module(text).frame_tables == module.frame_tables


# -- literals ---------------------------------------------------------------------------------
@pytest.mark.parametrize("value, dims, text", [
    ([1, 2, 3], (3,), "{1, 2, 3}"),
    ([], (0,), "{}"),
    ([[1, 2], [3, 4]], (2, 2), "{ { 1, 2 }, { 3, 4 } }"),
    ([[1], [2]], (2, 1), "{ {1}, {2} }"),
    ([[[1, -2, 1]]], (1, 1, 3), "{ { { 1, -2, 1 } } }"),
    (np.zeros((2, 0)), (2, 0), "{ {}, {} }"),
    (np.zeros((2, 0, 4, 3)), (2, 0, 4, 3), "{ { /*i0=0*/ }, { /*i0=1*/ } }"),
    ([[[[-1]], [[4.1]]], [[[2]], [[4.4]]]], (2, 2, 1, 1),
     "{ { /*i0=0*/ { /*i1=0*/ {-1} }, { /*i1=1*/ {4.1} } }, "
     "{ /*i0=1*/ { /*i1=0*/ {2} }, { /*i1=1*/ {4.4} } } }"),
])
def test_array_literal_layout(value, dims, text):
    shape = Shape.array("f32", dims)
    assert literal_to_text(np.asarray(value, np.float32).reshape(dims), shape) == text


def test_pred_literals_print_as_words_when_scalar_and_digits_in_arrays():
    assert literal_to_text(np.bool_(True), Shape.scalar("pred")) == "true"
    assert literal_to_text(np.array([[True, False]]), Shape.array("pred", (1, 2))) == "{ { 1, 0 } }"


def test_tuple_and_complex_literals():
    shape = Shape.tuple([Shape.array("c64", (2,)), Shape.scalar("s8"), Shape.tuple([])])
    value = (np.array([1 + 2j, complex(0, -0.5)], np.complex64), np.int8(-3), ())
    assert literal_to_text(value, shape) == "( {(1, 2), (0, -0.5)}, -3, (  ) )"


@pytest.mark.parametrize("value, element_type, text", [
    (0.1, "f32", "0.1"),
    (1e-05, "f32", "1e-05"),
    (16777217.0, "f32", "16777216"),
    (3.4028235e38, "f32", "3.40282347e+38"),
    (float(np.nextafter(np.float32(0.1), np.float32(1))), "f32", "0.100000009"),
    (1.0 / 3.0, "f64", "0.33333333333333331"),
    (0.25, "f64", "0.25"),
    (-0.0, "f32", "-0"),
    (float("inf"), "bf16", "inf"),
    (float("-inf"), "f16", "-inf"),
    (1.1, "f16", "1.0996"),
    (0.1, "bf16", "0.1001"),
    (448.0, "f8e4m3fn", "448"),
    (57344.0, "f8e5m2", "5.7e+04"),
    (0.5, "f4e2m1fn", "0.5"),
])
def test_float_spelling(value, element_type, text):
    assert format_float(value, PrimitiveType.from_text(element_type)) == text


@pytest.mark.parametrize("bits, dtype, element_type, text", [
    (0x7FC00000, np.uint32, "f32", "nan"),
    (0xFFC00000, np.uint32, "f32", "-nan"),
    (0x7F800001, np.uint32, "f32", "nan(0x1)"),
    (0xFFC00005, np.uint32, "f32", "-nan(0x400005)"),
    (0x7FF0000000000002, np.uint64, "f64", "nan(0x2)"),
    (0x7E01, np.uint16, "f16", "nan(0x201)"),
    (0x7FC1, np.uint16, "bf16", "nan(0x41)"),
    (0x7F, np.uint8, "f8e4m3fn", "nan"),
    (0x7D, np.uint8, "f8e5m2", "nan(0x1)"),
])
def test_nan_spelling_keeps_sign_and_payload(bits, dtype, element_type, text):
    t = PrimitiveType.from_text(element_type)
    value = np.array([bits], dtype).view(t.numpy)[0]
    assert format_float(value, t) == text


def test_bfloat16_and_narrow_ints_in_arrays():
    bf16 = np.array([1.5, -2.0, 65280.0], ml_dtypes.bfloat16)
    assert literal_to_text(bf16, Shape.array("bf16", (3,))) == "{1.5, -2, 6.528e+04}"
    s4 = np.array([-8, 7], ml_dtypes.int4)
    assert literal_to_text(s4, Shape.array("s4", (2,))) == "{-8, 7}"
    u64 = np.array([2 ** 64 - 1], np.uint64)
    assert literal_to_text(u64, Shape.array("u64", (1,))) == "{18446744073709551615}"
