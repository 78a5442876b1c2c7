"""Round trips of XLA's HLO text: sample modules in XLA's exact format read and
print back character for character; parse(print(m)) == m in both forms; every
literal type survives bit for bit; random modules survive too."""

from __future__ import annotations

import math
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xlapy.hlo.attributes import OpMetadata, RawAttribute
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.literal_text import literal_to_text
from xlapy.hlo.opcode import ELEMENTWISE_BINARY, ELEMENTWISE_UNARY, Opcode
from xlapy.hlo.parser import parse_module
from xlapy.hlo.printer import module_to_text
from xlapy.hlo.shape import Shape

SAMPLES = sorted((Path(__file__).parent / "text_samples").glob("*.hlo"))
CORPUS = sorted((Path(__file__).parent / "corpus").glob("*.hlo"))


def assert_round_trips(module: HloModule) -> None:
    for short in (False, True):
        text = module_to_text(module, short=short)
        again = parse_module(text)
        assert again == module
        assert module_to_text(again, short=short) == text


def test_there_are_enough_samples():
    assert len(SAMPLES) >= 10


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_sample_prints_back_exactly(path):
    """Samples are written as XLA prints them: the long form as an XLA dump, the
    `_short` ones as jax's `as_text(dialect="hlo")`."""
    text = path.read_text()
    module = parse_module(text)
    assert module_to_text(module, short=path.stem.endswith("_short")) == text
    assert_round_trips(module)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_corpus_module_round_trips(path):
    assert_round_trips(parse_module(path.read_text()))


def test_samples_cover_the_features_they_promise():
    modules = {p.stem: parse_module(p.read_text()) for p in SAMPLES}
    opcodes = {i.opcode for m in modules.values() for c in m.computations for i in c}
    for op in ("fusion", "while", "conditional", "reduce", "convolution", "gather", "scatter",
               "sort", "reduce-window", "select-and-scatter", "custom-call", "all-reduce",
               "rng-bit-generator", "dot", "pad", "dynamic-update-slice", "async-start"):
        assert Opcode(op) in opcodes, op
    assert modules["stack_frames_short"].frame_tables.startswith("FileNames")
    variadic = modules["variadic_reduce_argmax_short"].entry_computation.instruction("reduce.20")
    assert variadic.shape.is_tuple and len(variadic.operands) == 4


# -- literals -----------------------------------------------------------------------------------
def constant_module(shape: Shape, value) -> HloModule:
    constant = HloInstruction(Opcode.CONSTANT, shape, name="c", literal=value)
    module = HloModule("literal")
    module.add_computation(HloComputation("e", [constant]), entry=True)
    return module


def parsed_literal(shape_text: str, literal_text: str):
    text = f"HloModule m\n\nENTRY e {{\n  ROOT c = {shape_text} constant({literal_text})\n}}\n"
    return parse_module(text).entry_computation.root_instruction.literal


_ARRAY_TYPES = [t for t in PrimitiveType if t.is_array_type]


@pytest.mark.parametrize("element_type", _ARRAY_TYPES, ids=lambda t: t.value)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_every_literal_type_round_trips_bit_for_bit(element_type, data):
    """Random bit patterns (NaNs with payloads, infinities, -0, subnormals) of each
    type print and parse back to the same bits, in arrays and as scalars."""
    dims = tuple(data.draw(st.lists(st.integers(0, 4), max_size=3), label="dims"))
    dtype = element_type.numpy
    count = math.prod(dims)
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1), label="seed"))
    raw = rng.integers(0, 256, count * dtype.itemsize, dtype=np.uint8)
    if element_type.bit_width < 8:
        raw = raw & ((1 << element_type.bit_width) - 1)
    if element_type is PrimitiveType.PRED:
        raw = raw & 1
    value = raw.view(dtype).reshape(dims)
    shape = Shape.array(element_type, dims).with_default_layout()
    module = constant_module(shape, value)
    assert_round_trips(module)
    if count:
        scalar = value.reshape(-1)[:1].reshape(())
        assert_round_trips(constant_module(Shape.scalar(element_type).with_default_layout(),
                                           scalar))


_NARROW_FLOATS = [t for t in PrimitiveType if t.is_float and t.numpy.itemsize <= 2]


@pytest.mark.parametrize("element_type", _NARROW_FLOATS, ids=lambda t: t.value)
def test_every_bit_pattern_of_narrow_floats_round_trips(element_type):
    """All 2^8 (2^16) encodings, NaNs and infinities included, as one array constant;
    the 8-bit ones also one scalar constant each (the token-by-token path)."""
    uint = np.uint8 if element_type.numpy.itemsize == 1 else np.uint16
    bits = np.arange(min(1 << element_type.bit_width, 1 << 16), dtype=uint)
    values = bits.view(element_type.numpy)
    module = constant_module(Shape.array(element_type, values.shape).with_default_layout(),
                             values)
    parsed = parse_module(module_to_text(module)).entry_computation.root_instruction.literal
    assert parsed.view(uint).tolist() == bits.tolist()
    if uint is np.uint8:
        scalars = HloComputation("e", [
            HloInstruction(Opcode.CONSTANT, Shape.scalar(element_type).with_default_layout(),
                           name=f"c{i}", literal=v) for i, v in enumerate(values)])
        module = HloModule("scalars")
        module.add_computation(scalars, entry=True)
        again = parse_module(module_to_text(module)).entry_computation.instructions
        assert [int(np.asarray(i.literal).reshape(1).view(uint)[0]) for i in again] == \
            bits.tolist()


@pytest.mark.parametrize("element_type", ["f32", "f64", "bf16", "s32", "u64", "pred",
                                          "f8e4m3fn"])
def test_fast_and_exact_literal_paths_agree(element_type, monkeypatch):
    from xlapy.hlo import literal_text

    t = PrimitiveType.from_text(element_type)
    rng = np.random.default_rng(7)
    raw = rng.integers(0, 256, 60 * t.numpy.itemsize, dtype=np.uint8)
    if t is PrimitiveType.PRED:
        raw &= 1
    values = raw.view(t.numpy).reshape(3, 4, 5)
    shape = Shape.array(t, values.shape).with_default_layout()
    text = module_to_text(constant_module(shape, values))
    fast = parse_module(text).entry_computation.root_instruction.literal
    monkeypatch.setattr(literal_text, "_parse_dense_fast", lambda stream, shape: None)
    exact = parse_module(text).entry_computation.root_instruction.literal
    assert fast.tobytes() == exact.tobytes() == values.tobytes()


@pytest.mark.parametrize("shape_text, literal_text, expected", [
    ("pred[4]", "{true, false, 0, 7}", np.array([True, False, False, True])),
    ("s8[2]", "{-128, 127}", np.array([-128, 127], np.int8)),
    ("s16[2]", "{-32768, 32767}", np.array([-32768, 32767], np.int16)),
    ("s32[]", "-42", np.int32(-42)),
    ("s64[1]", "{9223372036854775807}", np.array([2 ** 63 - 1], np.int64)),
    ("s64[]", "18446744073709551615", np.int64(-1)),  # XLA's lexer wraps to -1
    ("u8[2]", "{0, 255}", np.array([0, 255], np.uint8)),
    ("u16[1]", "{65535}", np.array([65535], np.uint16)),
    ("u32[1]", "{4294967295}", np.array([4294967295], np.uint32)),
    ("u64[2]", "{18446744073709551615, -1}", np.array([2 ** 64 - 1] * 2, np.uint64)),
    ("f16[2]", "{1.1, 65504}", np.array([1.1, 65504], np.float16)),
    ("bf16[2]", "{0.1, 3.38e38}", np.array([0.1, 3.38e38], ml_dtypes.bfloat16)),
    ("f32[3]", "{0.1, 1e-05, 16777217}", np.array([0.1, 1e-05, 16777216], np.float32)),
    ("f64[2]", "{0.1, 1e300}", np.array([0.1, 1e300])),
    ("c64[2]", "{(1, 2), (-inf, 0.5)}", np.array([1 + 2j, complex(-np.inf, 0.5)], np.complex64)),
    ("c128[]", "(1e-300, 2)", np.complex128(complex(1e-300, 2))),
    ("f8e4m3fn[2]", "{448, 0.1}", np.array([448, 0.1], ml_dtypes.float8_e4m3fn)),
    ("f8e5m2[2]", "{57344, -0.1}", np.array([57344, -0.1], ml_dtypes.float8_e5m2)),
    ("f8e4m3fnuz[1]", "{240}", np.array([240], ml_dtypes.float8_e4m3fnuz)),
    ("f8e4m3b11fnuz[1]", "{30}", np.array([30], ml_dtypes.float8_e4m3b11fnuz)),
    ("s4[3]", "{-8, 7, 0}", np.array([-8, 7, 0], ml_dtypes.int4)),
    ("u4[2]", "{0, 15}", np.array([0, 15], ml_dtypes.uint4)),
    ("f32[2,3]", "{ { 1, 2, 3 }, { 4, 5, 6 } }", np.arange(1, 7, dtype=np.float32).reshape(2, 3)),
    ("f32[2,3]", "{{1,2,3},{4,5,6}}", np.arange(1, 7, dtype=np.float32).reshape(2, 3)),
])
def test_literal_values(shape_text, literal_text, expected):
    value = parsed_literal(shape_text, literal_text)
    assert value.dtype == expected.dtype and value.shape == np.shape(expected)
    assert value.tobytes() == np.asarray(expected).tobytes()


def test_special_float_values_keep_their_bits():
    f32 = parsed_literal("f32[5]", "{-0, inf, -inf, nan(0x1), -nan}").view(np.uint32)
    assert f32.tolist() == [0x80000000, 0x7F800000, 0xFF800000, 0x7F800001, 0xFFC00000]
    f64 = parsed_literal("f64[]", "nan(0x8000000000000)").view(np.uint64)
    assert int(f64) == 0x7FF8000000000000
    c64 = parsed_literal("c64[]", "(nan(0x3), -0)").reshape(1).view(np.uint32)
    assert c64.tolist() == [0x7F800003, 0x80000000]


def test_tuple_constant_value():
    value = parsed_literal("(f32[2], (s32[], pred[]))", "( {1, 2}, ( 3, true ) )")
    assert value[0].tolist() == [1.0, 2.0] and value[0].dtype == np.float32
    assert value[1][0] == 3 and value[1][0].dtype == np.int32
    assert value[1][1].dtype == np.bool_ and bool(value[1][1])


def test_elided_constants_are_filled_as_xla_fills_them():
    """XLA writes a running u32 counter word by word (pred bytes masked to 0/1) and
    a running u8 counter into the `size % 4` bytes at `size / 4`, across the module."""
    text = ("HloModule m\n\nENTRY e {\n  a = s8[6] constant({...})\n  b = s32[2] constant({...})\n"
            "  c = pred[5] constant({...})\n  ROOT d = f32[2] constant({...})\n}\n")
    a, b, c, d = (i.literal for i in parse_module(text).entry_computation.instructions)
    assert a.tolist() == [0, 0, 1, 0, 0, 0]
    assert b.tolist() == [1, 2]
    assert c.tolist() == [True, False, False, False, False]
    assert d.view(np.uint32).tolist() == [4, 5]


def test_large_constants_take_the_fast_path_and_stay_exact():
    rng = np.random.default_rng(0)
    value = rng.standard_normal((300, 200)).astype(np.float32)
    value[0, :3] = [np.nan, -0.0, np.inf]
    shape = Shape.array("f32", value.shape).with_default_layout()
    text = literal_to_text(value, shape)
    parsed = parsed_literal("f32[300,200]", text)
    assert parsed.tobytes() == value.tobytes()
    ints = rng.integers(-2 ** 31, 2 ** 31, (500, 100), dtype=np.int64).astype(np.int32)
    parsed_ints = parsed_literal("s32[500,100]", literal_to_text(ints, Shape.array("s32", (500, 100))))
    assert (parsed_ints == ints).all()


# -- random modules -----------------------------------------------------------------------------
_NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,6}(\.[0-9]{1,3})?(-[a-z]{1,4})?", fullmatch=True)
_FLOAT_TYPES = ["f16", "bf16", "f32", "f64"]


@st.composite
def random_modules(draw):
    """A chain of elementwise ops on one random shape, with metadata, raw attributes
    and constants of the same shape."""
    element_type = draw(st.sampled_from(_FLOAT_TYPES))
    dims = tuple(draw(st.lists(st.integers(1, 3), max_size=3)))
    layout = tuple(draw(st.permutations(range(len(dims)))))
    shape = Shape.array(element_type, dims, layout)
    names = draw(st.lists(_NAME, min_size=8, max_size=8, unique=True))
    params = [HloInstruction(Opcode.PARAMETER, shape, name=names[i], parameter_number=i)
              for i in range(2)]
    values = list(params)
    unary = sorted((op for op in ELEMENTWISE_UNARY if op not in (
        Opcode.NOT, Opcode.POPCNT, Opcode.CLZ, Opcode.IMAG, Opcode.REAL, Opcode.IS_FINITE)),
        key=lambda op: op.value)
    binary = sorted((op for op in ELEMENTWISE_BINARY if op in (
        Opcode.ADD, Opcode.SUBTRACT, Opcode.MULTIPLY, Opcode.DIVIDE, Opcode.MAXIMUM,
        Opcode.MINIMUM, Opcode.POWER, Opcode.ATAN2, Opcode.REMAINDER)), key=lambda op: op.value)
    for name in names[2:]:
        attrs = {}
        if draw(st.booleans()):
            attrs["metadata"] = OpMetadata((("op_name", draw(st.text(max_size=12))),
                                            ("source_line", draw(st.integers(0, 99)))))
        if draw(st.booleans()):
            attrs["backend_config"] = RawAttribute('{"k":"' + draw(st.sampled_from(
                ["v", "}", "a,b", "{x}"])) + '"}')
        kind = draw(st.sampled_from(["unary", "binary", "constant"]))
        if kind == "constant":
            raw = draw(st.binary(min_size=shape.byte_size, max_size=shape.byte_size))
            literal = np.frombuffer(raw, shape.dtype).reshape(dims)
            values.append(HloInstruction(Opcode.CONSTANT, shape, name=name, attrs=attrs,
                                         literal=literal))
        elif kind == "unary":
            operand = draw(st.sampled_from(values))
            values.append(HloInstruction(draw(st.sampled_from(unary)), shape, [operand], attrs,
                                         name=name))
        else:
            lhs, rhs = draw(st.sampled_from(values)), draw(st.sampled_from(values))
            values.append(HloInstruction(draw(st.sampled_from(binary)), shape, [lhs, rhs],
                                         attrs, name=name))
    entry = HloComputation(draw(_NAME), values)
    module = HloModule(draw(_NAME))
    module.add_computation(entry, entry=True)
    return module


@settings(max_examples=60, deadline=None)
@given(random_modules())
def test_random_modules_round_trip(module):
    assert_round_trips(module)


# -- mutated text --------------------------------------------------------------------------------
_PIECES = ["{", "}", "(", ")", "[", "]", ",", "=", ":", "%", "-", ".", "0", "7", "x", "_", '"',
           "'", "/*", "*/", "//", "\n", " ", "<=", "?", "...", "nan", "-inf", "ROOT ", "ENTRY ",
           "->", "{...}", "f32[]", "(0x5)", "\\", "@"]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_mutated_text_parses_or_raises_parse_error(data):
    """Whatever the damage, the parser either reads a module (which then round
    trips) or raises ParseError; it never fails any other way."""
    from xlapy.errors import ParseError

    text = data.draw(st.sampled_from(SAMPLES)).read_text()
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(text)))
        edit = data.draw(st.sampled_from(["delete", "insert", "copy"]))
        if edit == "delete":
            text = text[:i] + text[i + data.draw(st.integers(1, 20)):]
        elif edit == "insert":
            text = text[:i] + data.draw(st.sampled_from(_PIECES)) + text[i:]
        else:
            j = data.draw(st.integers(0, len(text)))
            text = text[:i] + text[j:j + data.draw(st.integers(1, 30))] + text[i:]
    try:
        module = parse_module(text)
    except ParseError:
        return
    assert_round_trips(module)
