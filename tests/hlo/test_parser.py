"""Tests of the HLO text parser: shapes, module structure, every attribute kind,
and malformed input (message, line and column)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xlapy.errors import ParseError, ShapeError
from xlapy.hlo import parser
from xlapy.hlo.attributes import (
    ComparisonDirection,
    ComparisonType,
    ComputationLayout,
    ConvolutionDimensionNumbers,
    FftType,
    FusionKind,
    InputOutputAlias,
    IotaReplicaGroups,
    OpMetadata,
    PaddingConfig,
    PaddingDimension,
    Precision,
    RandomDistribution,
    RawAttribute,
    RngAlgorithm,
    SliceRange,
    TriangularSolveTranspose,
    Window,
    WindowDimension,
)
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.parser import parse_module, parse_shape
from xlapy.hlo.shape import Layout, Shape

ADD = """add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}

"""


def module(*lines: str, header: str = "", before: str = "") -> str:
    body = "\n".join("  " + line for line in lines)
    return f"HloModule m{header}\n\n{before}ENTRY e {{\n{body}\n}}\n"


def root_of(*lines: str, **kwargs):
    return parse_module(module(*lines, **kwargs)).entry_computation.root_instruction


# -- shapes ---------------------------------------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ("f32[2,3]{1,0}", Shape.array("f32", (2, 3), (1, 0))),
    ("f32[2,3]{0,1}", Shape.array("f32", (2, 3), (0, 1))),
    ("f32[2,3]", Shape.array("f32", (2, 3), (1, 0))),
    ("f32[]", Shape.array("f32", (), ())),
    ("pred[0]", Shape.array("pred", (0,), (0,))),
    ("token[]", Shape.token()),
    ("(f32[], s32[4])", Shape.tuple([Shape.array("f32", (), ()), Shape.array("s32", (4,), (0,))])),
    ("()", Shape.tuple([])),
    ("((u8[1]), c64[])", Shape.tuple([Shape.tuple([Shape.array("u8", (1,), (0,))]),
                                      Shape.array("c64", (), ())])),
    ("f32[2,3]{1,0:T(8,128)}", Shape.array("f32", (2, 3), Layout((1, 0), "T(8,128)"))),
    ("f32[]{:S(1)}", Shape.array("f32", (), Layout((), "S(1)"))),
    ("bf16[4]{0:T(2)(1,2)E(16)}", Shape.array("bf16", (4,), Layout((0,), "T(2)(1,2)E(16)"))),
    ("(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[])",
     Shape.tuple([Shape.array("f32", (), ())] * 6)),
])
def test_parse_shape(text, expected):
    assert parse_shape(text) == expected


def test_dynamic_dimensions():
    shape = parse_shape("f32[<=4,3]{1,0}")
    assert shape.dimensions == (4, 3)
    assert shape.dynamic_dimensions == (True, False)
    assert shape.to_text() == "f32[<=4,3]{1,0}"


@pytest.mark.parametrize("text, message", [
    ("f32[2,3]{0}", "layout has 1 dimensions but the shape has rank 2"),
    ("f99[2]", "expected a shape but found 'f99'"),
    ("f32[?]", "unbounded dynamic dimensions '?' are not supported"),
    ("f32[-2]", "dimension size -2 is out of range"),
    ("f32[2", "expected ',' or ']' but found end of input"),
    ("f32[2] x", "expected the end of the shape but found 'x'"),
    ("token[2]", "token shapes have no dimensions"),
    ("f32[2]{0:T(2)", "unclosed layout"),
    ("(" * 200 + "f32[]" + ")" * 200, "shape is nested too deeply"),
])
def test_parse_shape_errors(text, message):
    with pytest.raises(ParseError, match=message.replace("[", r"\[").replace("(", r"\(")
                       .replace("?", r"\?")):
        parse_shape(text)


_TYPES = [t for t in PrimitiveType if t.is_array_type]


@st.composite
def shapes(draw, depth=0):
    if depth < 2 and draw(st.booleans()):
        return Shape.tuple(draw(st.lists(shapes(depth + 1), max_size=7)))
    dims = draw(st.lists(st.integers(0, 9), max_size=4))
    layout = draw(st.permutations(range(len(dims))))
    return Shape.array(draw(st.sampled_from(_TYPES)), dims, tuple(layout))


@given(shapes())
def test_shape_text_round_trips(shape):
    from xlapy.hlo.printer import shape_to_text

    assert parse_shape(shape_to_text(shape)) == shape
    assert parse_shape(shape.to_text()) == shape


# -- module structure -------------------------------------------------------------------------
def test_short_form_module_structure():
    m = parse_module(module("p = f32[] parameter(0)", "ROOT s = f32[] add(p, p)", before=ADD))
    assert m.name == "m"
    assert [c.name for c in m.computations] == ["add_f32", "e"]
    entry = m.entry_computation
    assert entry is m.computations[-1]
    p, s = entry.instructions
    assert p.parameter_number == 0 and p.shape == Shape.array("f32", (), ())
    assert s.opcode is Opcode.ADD and s.operands == [p, p]
    assert entry.root_instruction is s
    assert p.parent is entry and entry.parent is m


def test_long_form_with_signatures_and_operand_shapes():
    text = """HloModule m

%neg (x: f32[2]) -> f32[2] {
  ROOT %x = f32[2]{0} parameter(0)
}

ENTRY %main (a: f32[2]) -> f32[2] {
  %a = f32[2]{0} parameter(0)
  ROOT %c = f32[2]{0} call(f32[2]{0} %a), to_apply=%neg
}
"""
    m = parse_module(text)
    call = m.entry_computation.root_instruction
    assert call.attrs["to_apply"] is m.computation("neg")
    assert call.called_computations == [m.computation("neg")]


def test_entry_marker_and_defaults():
    text = ("HloModule m\n\nENTRY first {\n  ROOT c = s32[] constant(1)\n}\n\n"
            "other {\n  a = s32[] constant(2)\n  b = s32[] constant(3)\n}\n")
    m = parse_module(text)
    assert m.entry_computation.name == "first"
    assert [c.name for c in m.computations] == ["other", "first"]  # entry printed last
    assert m.computation("other").root_instruction.name == "b"  # no ROOT: the last one
    unmarked = parse_module("HloModule m\n\na {\n  ROOT c = s32[] constant(1)\n}\n\n"
                            "b {\n  ROOT c = s32[] constant(2)\n}\n")
    assert unmarked.entry_computation.name == "b"


def test_root_need_not_be_last():
    root = root_of("ROOT a = s32[] constant(1)", "b = s32[] constant(2)")
    assert root.name == "a"


def test_execution_thread():
    text = ("HloModule m\n\nhost {\n  ROOT p = f32[] parameter(0)\n}, execution_thread=\"host\""
            "\n\nmain2 {\n  ROOT p = f32[] parameter(0)\n}, execution_thread=\"main\"\n\n"
            "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    m = parse_module(text)
    assert m.computation("host").execution_thread == "host"
    assert m.computation("main2").execution_thread is None
    assert m.entry_computation.execution_thread is None


def test_module_header_attributes():
    header = (", is_scheduled=true, input_output_alias={ {0}: (1, {}, may-alias), {1}: "
              "(0, {2,1}, must-alias), {2}: (2, {}) }, buffer_donor={ (0, {}) }, "
              "entry_computation_layout={(f32[2]{0}, (s32[], f32[])) ->f32[2]}, "
              "allow_spmd_sharding_propagation_to_output={true}, replica_count=2, "
              "num_partitions=8, frontend_attributes={fingerprint=\"abc\"}")
    m = parse_module(module("ROOT p = f32[2] parameter(0)", header=header))
    assert list(m.attributes) == [
        "is_scheduled", "input_output_alias", "buffer_donor", "entry_computation_layout",
        "allow_spmd_sharding_propagation_to_output", "replica_count", "num_partitions",
        "frontend_attributes"]
    assert m.attributes["is_scheduled"] is True
    assert m.attributes["input_output_alias"] == (
        InputOutputAlias((0,), 1, (), "may-alias"), InputOutputAlias((1,), 0, (2, 1), "must-alias"),
        InputOutputAlias((2,), 2, (), ""))
    assert m.attributes["buffer_donor"] == RawAttribute("{ (0, {}) }")
    scalar = Shape.array("f32", (), ())
    assert m.attributes["entry_computation_layout"] == ComputationLayout(
        (Shape.array("f32", (2,), (0,)), Shape.tuple([Shape.array("s32", (), ()), scalar])),
        Shape.array("f32", (2,), (0,)))
    assert m.attributes["allow_spmd_sharding_propagation_to_output"] == RawAttribute("{true}")
    assert m.attributes["replica_count"] == 2 and m.attributes["num_partitions"] == 8
    assert m.attributes["frontend_attributes"] == RawAttribute('{fingerprint="abc"}')


FRAMES = """FileNames
1 "a.py"
2 "b \\"q\\".py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=0}
2 {file_location_id=1 parent_frame_id=1}"""


def test_frame_tables_kept_verbatim():
    m = parse_module(f"HloModule m\n\n{FRAMES}\n\n\nENTRY e {{\n  ROOT c = f32[] constant(1), "
                     "metadata={op_name=\"c\" stack_frame_id=2}\n}\n")
    assert m.frame_tables == FRAMES
    assert m.entry_computation.root_instruction.attrs["metadata"].get("stack_frame_id") == 2


@pytest.mark.parametrize("broken, message", [
    ("FunctionNames\n1 \"f\"", "expected 'FileLocations' but found 'StackFrames'"),
    ("line=3 end_line=3", "FileLocations entry is missing line="),
    ("parent_frame_id=1}", "StackFrames entry is missing parent_frame_id="),
])
def test_frame_table_errors(broken, message):
    mangled = {"FunctionNames\n1 \"f\"": FRAMES.replace("FileLocations\n1 {file_name_id=1 "
                                                        "function_name_id=1 line=3 end_line=3 "
                                                        "column=1 end_column=9}\n\n", ""),
               "line=3 end_line=3": FRAMES.replace("line=3 end_line=3", "end_line=3"),
               "parent_frame_id=1}": FRAMES.replace("parent_frame_id=1}", "}")}[broken]
    with pytest.raises(ParseError, match=message):
        parse_module(f"HloModule m\n\n{mangled}\n\nENTRY e {{\n  ROOT c = f32[] constant(1)\n}}\n")


# -- attributes -------------------------------------------------------------------------------
@pytest.mark.parametrize("line, key, expected", [
    ("ROOT g = f32[] get-tuple-element(t), index=1", "index", 1),
    ("ROOT b = f32[2,3] broadcast(x), dimensions={1}", "dimensions", (1,)),
    ("ROOT b = f32[2,3] broadcast(s), dimensions={}", "dimensions", ()),
    ("ROOT c = pred[2,3] compare(y, y), direction=LT, type=TOTALORDER", "type",
     ComparisonType.TOTALORDER),
    ("ROOT c = pred[2,3] compare(y, y), direction=GE", "direction", ComparisonDirection.GE),
    ("ROOT sl = f32[1,2] slice(y), slice={[0:2:2], [1:3]}", "slice",
     (SliceRange(0, 2, 2), SliceRange(1, 3))),
    ("ROOT p = f32[5,3] pad(y, s), padding=1_2_1x-1_1", "padding",
     PaddingConfig((PaddingDimension(1, 2, 1), PaddingDimension(-1, 1, 0)))),
    ("ROOT r = f32[2,3] reduce-precision(y), exponent_bits=5, mantissa_bits=10",
     "mantissa_bits", 10),
    ("ROOT d = f32[2,2] dot(y, y), lhs_contracting_dims={1}, rhs_contracting_dims={1}, "
     "operand_precision={DEFAULT,highest}", "operand_precision",
     (Precision.DEFAULT, Precision.HIGHEST)),
    ("ROOT c = f32[2,3] custom-call(y), custom_call_target=\"foo\\\"bar\"",
     "custom_call_target", 'foo"bar'),
    ("ROOT c = f32[2,3] custom-call(y), custom_call_target=\"f\", "
     "custom_call_has_side_effect=true", "custom_call_has_side_effect", True),
    ("ROOT c = f32[2,3] custom-call(y), custom_call_target=\"f\", "
     "operand_layout_constraints={f32[2,3]{0,1}}", "operand_layout_constraints",
     (Shape.array("f32", (2, 3), (0, 1)),)),
    ("ROOT b = (f32[2,3], f32[3], f32[3]) batch-norm-training(y, v, v), epsilon=0.001, "
     "feature_index=1", "epsilon", 0.001),
    ("ROOT f = c64[2,3] fft(z), fft_type=RFFT, fft_length={3}", "fft_type", FftType.RFFT),
    ("ROOT c = f32[2,2] cholesky(q), lower=true", "lower", True),
    ("ROOT ts = f32[2,2] triangular-solve(q, q), left_side=false, transpose_a=ADJOINT",
     "transpose_a", TriangularSolveTranspose.ADJOINT),
    ("ROOT r = f32[2,3] rng(s, s), distribution=rng_normal", "distribution",
     RandomDistribution.NORMAL),
    ("ROOT r = (u64[2], u32[4]) rng-bit-generator(k), algorithm=rng_philox", "algorithm",
     RngAlgorithm.PHILOX),
    ("ROOT d = f32[2,2] dot(y, y), lhs_contracting_dims={1}, rhs_contracting_dims={1}, "
     "algorithm=dot_bf16_bf16_f32", "algorithm", RawAttribute("dot_bf16_bf16_f32")),
    ("ROOT tk = (f32[2,1], s32[2,1]) topk(y), k=1, largest=false", "k", 1),
    ("ROOT a = f32[2,3] all-reduce(y), replica_groups={{0,1},{2,3}}, to_apply=add_f32",
     "replica_groups", ((0, 1), (2, 3))),
    ("ROOT a = f32[2,3] all-reduce(y), replica_groups={}, to_apply=add_f32",
     "replica_groups", ()),
    ("ROOT a = f32[4,3] all-gather(y), channel_id=7, replica_groups=[2,4]<=[4,2]T(1,0), "
     "dimensions={0}, use_global_device_ids=true", "replica_groups",
     IotaReplicaGroups((2, 4), (4, 2), (1, 0))),
    ("ROOT a = f32[4,3] all-gather(y), replica_groups=[1,2]<=[2], dimensions={0}",
     "replica_groups", IotaReplicaGroups((1, 2), (2,))),
    ("ROOT c = f32[2,3] collective-permute(y), source_target_pairs={{0,1},{1,0}}",
     "source_target_pairs", ((0, 1), (1, 0))),
    ("ROOT c = f32[2,3] collective-permute(y), source_target_pairs={{0,1}}, "
     "slice_sizes={{1,3}}", "slice_sizes", ((1, 3),)),
    ("ROOT so = f32[2,3] sort(y), dimensions={1}, is_stable=true, to_apply=lt",
     "is_stable", True),
    ("ROOT g = f32[2,3] gather(y, i), offset_dims={1}, collapsed_slice_dims={0}, "
     "start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}, indices_are_sorted=true",
     "slice_sizes", (1, 3)),
])
def test_typed_attributes(line, key, expected):
    lt = ("lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
          "  ROOT r = pred[] compare(a, b), direction=LT\n}\n\n")
    instruction = root_of("y = f32[2,3] parameter(0)", "x = f32[3] parameter(1)",
                          "s = f32[] parameter(2)", "t = (f32[], f32[]) parameter(3)",
                          "v = f32[3] parameter(4)", "z = f32[2,3] parameter(5)",
                          "q = f32[2,2] parameter(6)", "k = u64[2] parameter(7)",
                          "i = s32[2,1] parameter(8)", line, before=ADD + lt)
    assert instruction.attrs[key] == expected
    assert list(instruction.attrs)[-1] in line  # attributes keep their written order


def test_computation_attributes():
    text = module("p = s32[] parameter(0)", "x = f32[] parameter(1)",
                  "c = f32[] conditional(p, x, x), branch_computations={add_like, %neg}",
                  "ROOT f = f32[] fusion(c, x), kind=kLoop, calls=add_like",
                  before=("add_like {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                          "  ROOT r = f32[] add(a, b)\n}\n\n%neg (a: f32[]) -> f32[] {\n"
                          "  %a = f32[] parameter(0)\n  ROOT %n = f32[] negate(f32[] %a)\n}\n\n"))
    m = parse_module(text)
    conditional, fusion = m.entry_computation.instructions[2:]
    assert conditional.attrs["branch_computations"] == (m.computation("add_like"),
                                                        m.computation("neg"))
    assert fusion.attrs["kind"] is FusionKind.LOOP
    assert isinstance(fusion.attrs["calls"], HloComputation)


def test_window_and_dim_labels():
    conv = root_of("x = f32[1,9,9,2] parameter(0)", "k = f32[3,3,2,4] parameter(1)",
                   "ROOT c = f32[1,5,5,4] convolution(x, k), window={size=3x3 stride=2x2 "
                   "pad=1_1x0_-1 lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=1x0}, "
                   "dim_labels=b01f_01io->b01f, feature_group_count=1, batch_group_count=1")
    assert conv.attrs["window"] == Window((
        WindowDimension(3, 2, 1, 1, window_dilation=2, base_dilation=1, window_reversal=True),
        WindowDimension(3, 2, 0, -1, window_dilation=1, base_dilation=2)))
    assert conv.attrs["dim_labels"] == ConvolutionDimensionNumbers(0, 3, (1, 2), 2, 3, (0, 1),
                                                                   0, 3, (1, 2))
    one_d = root_of("x = f32[8] parameter(0)", "z = f32[] constant(0)",
                    "ROOT r = f32[4] reduce-window(x, z), window={size=2 stride=2 pad=0_1}, "
                    "to_apply=add_f32", before=ADD)
    assert one_d.attrs["window"] == Window((WindowDimension(2, 2, 0, 1),))
    scalar = root_of("x = f32[] parameter(0)", "ROOT r = f32[] reduce-window(x, x), window={}, "
                     "to_apply=add_f32", before=ADD)
    assert scalar.attrs["window"] == Window(())


def test_metadata():
    root = root_of('ROOT c = f32[] constant(1), metadata={op_type="Add" op_name="a/\\"b\\"\\n" '
                   'source_file="f\\303\\251.py" source_line=3, stack_frame_id=2 '
                   'preserve_layout=true}')
    assert root.attrs["metadata"] == OpMetadata((
        ("op_type", "Add"), ("op_name", 'a/"b"\n'), ("source_file", "f\u00e9.py"),
        ("source_line", 3), ("stack_frame_id", 2), ("preserve_layout", True)))
    raw = root_of('ROOT c = f32[] constant(1), metadata={op_name="x" profile_type={1,2}}')
    assert raw.attrs["metadata"] == RawAttribute('{op_name="x" profile_type={1,2}}')


@pytest.mark.parametrize("value", [
    '{replicated}',
    '{{maximal device=0}, {devices=[2,1]<=[2] last_tile_dim_replicate}}',
    '"opaque \\"config\\""',
    '{"operation_queue_id":"0","wait_on_operation_queues":[],"x":{"y":"}"}}',
    'API_VERSION_TYPED_FFI',
    '{{}: (0, {})}',
    '[2,2]<=[4]T(1,0)',
    's32[2]{0} {7, 11}',
    '( s32[1]{0} {4}, pred[] true )',
    'f32[2,4]{1,0}',
    '-1.5',
])
def test_unknown_attributes_are_kept_verbatim(value):
    root = root_of("p = f32[2] parameter(0)", f"ROOT c = f32[2] custom-call(p), foo={value}, "
                   "custom_call_target=\"x\"")
    assert root.attrs["foo"] == RawAttribute(value)
    assert root.attrs["custom_call_target"] == "x"


def test_control_predecessors_are_checked_and_kept():
    root = root_of("a = f32[] constant(1)", "b = f32[] constant(2)",
                   "ROOT c = f32[] add(a, b), control-predecessors={a, %b}")
    assert root.attrs["control-predecessors"] == RawAttribute("{a, %b}")
    with pytest.raises(ParseError, match="undefined control predecessor %zz"):
        root_of("a = f32[] constant(1)", "ROOT c = f32[] negate(a), control-predecessors={zz}")


# -- shape inference ----------------------------------------------------------------------
def test_omitted_shapes_are_inferred(monkeypatch):
    calls = []

    def infer_shape(opcode, operand_shapes, attrs):
        calls.append((opcode, operand_shapes, dict(attrs)))
        if opcode is Opcode.NEGATE:
            return Shape.array(operand_shapes[0].element_type, operand_shapes[0].dimensions)
        raise ShapeError("tuple: nope")

    monkeypatch.setattr(parser, "infer_shape", infer_shape)
    root = root_of("p = f32[2,3]{0,1} parameter(0)", "ROOT n = negate(p), metadata={}")
    assert root.shape == Shape.array("f32", (2, 3), (1, 0))  # default layout added
    assert calls[0][0] is Opcode.NEGATE and calls[0][2] == {"metadata": OpMetadata(())}
    with pytest.raises(ParseError) as info:
        root_of("p = f32[] parameter(0)", "ROOT t = tuple(p)")
    assert info.value.message == "cannot infer the result shape of tuple: tuple: nope"
    assert (info.value.line, info.value.column) == (5, 12)


def test_shape_is_required_where_xla_requires_it():
    for line in ("ROOT p = parameter(0)", "ROOT c = constant(1)", "ROOT i = iota(), "
                 "iota_dimension=0", "ROOT c = custom-call(), custom_call_target=\"x\""):
        with pytest.raises(ParseError, match="needs its result shape written"):
            root_of(line)


# -- malformed input ------------------------------------------------------------------------
BASE = ["p = f32[2] parameter(0)", "q = s32[] parameter(1)"]


@pytest.mark.parametrize("line, message, anchor", [
    ("ROOT x = f32[2] fooo(p)", "unknown opcode 'fooo'", "fooo"),
    ("ROOT x = f32[2] negate(r)", "undefined operand %r", "r)"),
    ("ROOT x = f32[2] custom-call-start(p)", "unknown opcode 'custom-call-start' (XLA's "
     "shorthand for an async custom-call, which xlapy does not read; write "
     "async-start/async-done with calls=)", "custom-call-start"),
    ("ROOT x = f32[2] negate(p, p)", "negate takes 1 operand but has 2", "negate"),
    ("ROOT x = f32[2] add(p)", "add takes 2 operands but has 1", "add"),
    ("ROOT x = f32[2] map(p), to_apply=%region_3", "unknown computation %region_3", "%region_3"),
    ("ROOT x = f32[2] constant({1, 2, 3})", "constant has 3 elements but shape f32[2]{0} needs 2",
     "{1"),
    ("ROOT x = f32[2,2] constant({{1, 2}, {3}})",
     "constant has 1 elements at index [1] but shape f32[2,2]{1,0} needs 2", "{3}"),
    ("ROOT x = f32[2] constant(1)",
     "constant of shape f32[2]{0} needs 1 levels of braces but this value is inside 0", "1)"),
    ("ROOT x = f32[] constant({1})",
     "constant of shape f32[] has more levels of braces than its rank 0", "{1}"),
    ("ROOT x = s32[] parameter(0,1)", "expected ')' but found ','", ",1"),
    ("p = f32[2] negate(p)", "instruction %p is already defined in this computation", "p ="),
    ("ROOT x = s8[] constant(128)", "value 128 is out of range for s8 (-128 to 127)", "128"),
    ("ROOT x = u8[2] constant({1, -1})", "value -1 is out of range for u8 (0 to 255)", "-1"),
    ("ROOT x = f16[] constant(70000)", "value 70000 is out of range for f16", "70000"),
    ("ROOT x = s32[] constant(1.5)", "expected an integer for element type s32 but found '1.5'",
     "1.5"),
    ("ROOT x = s32[] constant(true)",
     "expected an integer for element type s32 but found 'true'", "true"),
    ("ROOT x = pred[] constant(0.5)",
     "expected true, false or an integer for a pred constant but found '0.5'", "0.5"),
    ("ROOT x = f16[] constant(nan(0x400))",
     "NaN payload 0x400 is out of range for f16 (at most 0x3ff)", "nan"),
    ("ROOT x = f8e4m3fn[] constant(nan(0x1))", "f8e4m3fn does not support NaN payloads", "nan"),
    ("ROOT x = c64[] constant(1)",
     "expected '(' to start a complex value like (1, 2) but found '1'", "1)"),
    ("ROOT x = (f32[], f32[]) constant((1))",
     "tuple constant has 1 elements but shape (f32[], f32[]) needs 2", "(1)"),
    ("ROOT x = f32[2] constant({1, ...})", "'...' may only stand for a whole constant: write {...}",
     "..."),
    ("ROOT x = f32[2,2] negate(f32[3] p)",
     "operand %p is written with shape f32[3] but has shape f32[2]", "f32[3]"),
    ("ROOT x = f32[2] negate(p), metadata={}, metadata={}", "attribute metadata= appears twice",
     "metadata={}"),
    ("ROOT x = pred[2] compare(p, p), direction=LTE",
     "unknown direction 'LTE'; expected one of EQ, NE, LT, LE, GT, GE", "LTE"),
    ("ROOT x = f32[2] sort(p), dimensions=0", "expected '{' but found '0'", "0"),
    ("ROOT x = f32[2] reduce-window(p, p), window={size=2 bogus=1}", "unknown window field bogus=",
     "bogus"),
    ("ROOT x = f32[2] reduce-window(p, p), window={size=2x2 stride=1}",
     "window field stride= has 1 dimensions but size= has 2", "{size"),
    ("ROOT x = f32[2] convolution(p, p), dim_labels=b0f_0io->b1f",
     "dim_labels 'b0f_0io->b1f': 'b1f' must hold bf and 0..0 once each", "b0f"),
    ("ROOT x = f32[2] convolution(p, p), dim_labels=b01f_01io->b0f",
     "dim_labels 'b01f_01io->b0f': the three parts must have equal rank", "b01f"),
    ("ROOT x = f32[2] negate(p), metadata={op_name=\"x\" op_name=\"y\"}",
     "metadata field op_name= appears twice", "op_name=\"y"),
    ("ROOT x = f32[2] negate(p), backend_config=\"unterminated", "unterminated string",
     "\"unterminated"),
    ("ROOT x = f32[2] map(p), to_apply={ROOT y = f32[] constant(1)}",
     "inline computations are not supported in to_apply=; define the computation first and "
     "refer to it by name", "{ROOT"),
    ("ROOT x = f32[2] parameter(-1)", "parameter number must be >= 0", "-1"),
    ("ROOT x = f32[2] parameter(1)", "parameter number 1 is used twice", "1)"),
    ("ROOT x = f32[2] negate(p), replica_groups=[2]<=[2]",
     "iota replica groups need a [groups,size] shape, found 1 dimensions", "[2]<"),
    ("ROOT x = f32[2] dot(p, p), operand_precision={fastest}", "unknown precision 'fastest'",
     "fastest"),
    ("ROOT x = f32[2] negate(p), foo=,", "expected a value for foo= but found ','", ","),
    ("ROOT x = f32[2] negate(p), foo={a, (b}", "unbalanced '}'", "}"),
])
def test_errors_say_what_and_where(line, message, anchor):
    text = module(*BASE, line)
    with pytest.raises(ParseError) as info:
        parse_module(text)
    error = info.value
    assert error.message == message
    assert (error.line, error.column) == (6, ("  " + line).rindex(anchor) + 1)
    assert error.source_line == "  " + line


def test_parameter_numbers_must_be_contiguous():
    with pytest.raises(ParseError) as info:
        parse_module(module(*BASE, "ROOT x = f32[2] parameter(3)"))
    assert info.value.message == ("computation %e has parameters numbered 0, 1, 3; they must be "
                                  "numbered 0 to 2")
    assert (info.value.line, info.value.column) == (3, 7)


def test_two_roots():
    with pytest.raises(ParseError) as info:
        parse_module(module("ROOT a = f32[] constant(1)", "ROOT b = f32[] constant(2)"))
    assert info.value.message == "computation %e has more than one ROOT"
    assert (info.value.line, info.value.column) == (5, 3)


@pytest.mark.parametrize("text, message, line, column", [
    ("", "expected 'HloModule' but found end of input", 1, 1),
    ("HloModul m", "expected 'HloModule' but found 'HloModul'", 1, 1),
    ("HloModule m", "expected a computation but found end of input", 1, 12),
    ("HloModule m, is_scheduled=yes", "expected true or false for is_scheduled= but found 'yes'",
     1, 27),
    ("HloModule m, replica_count=1, replica_count=2",
     "module attribute replica_count= appears twice", 1, 31),
    ("HloModule m, input_output_alias={ {0}: (1, {}, maybe) }",
     "unknown alias kind 'maybe'; expected may-alias or must-alias", 1, 48),
    ("HloModule m\nENTRY a {\n  ROOT c = f32[] constant(1)\n}\nENTRY b {\n"
     "  ROOT c = f32[] constant(1)\n}", "only one computation may be marked ENTRY", 5, 1),
    ("HloModule m\na {\n  ROOT c = f32[] constant(1)\n}\na {\n  ROOT c = f32[] constant(1)\n}",
     "computation %a is already defined", 5, 1),
    ("HloModule m\nENTRY e {\n}", "computation %e has no instructions", 2, 7),
    ("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\n", "expected '}' to end computation "
     "%e but found end of input", 4, 1),
    ("HloModule m\nENTRY %e (p: f32[2]) -> f32[3] {\n  ROOT %p = f32[2] parameter(0)\n}",
     "computation %e returns f32[3] but its root %p has shape f32[2]", 2, 25),
    ("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\n}, foo=\"x\"",
     "unexpected attribute foo= after computation %e; only execution_thread= may follow", 4, 4),
    ("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n@",
     "unexpected character '@'", 5, 1),
    ("HloModule m\nENTRY e {\n  ROOT c = f32[] bogus-op()\n}", "unknown opcode 'bogus-op'",
     3, 18),
    ("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1) /* unterminated\n}",
     "unterminated comment", 3, 30),
])
def test_module_level_errors(text, message, line, column):
    with pytest.raises(ParseError) as info:
        parse_module(text)
    assert info.value.message == message
    assert (info.value.line, info.value.column) == (line, column)


def test_error_text_points_at_the_column():
    with pytest.raises(ParseError) as info:
        parse_module(module(*BASE, "ROOT x = f32[2] fooo(p)"))
    assert str(info.value) == ("line 6, column 19: unknown opcode 'fooo'\n"
                               "    ROOT x = f32[2] fooo(p)\n"
                               "                    ^")


def test_deep_nesting_is_an_error_not_a_crash():
    text = module("ROOT t = " + "(" * 5000 + "f32[]" + ")" * 5000 + " tuple()")
    with pytest.raises(ParseError):
        parse_module(text)
