"""Tests of the builder's core: naming, layouts, module assembly, sub-computations,
shared reducers, metadata, loose attributes, every elementwise method, and the
errors raised at the call that adds a bad op. Op families are in
test_builder_ops.py."""

from __future__ import annotations

import inspect
import keyword

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xlapy.errors import ShapeError, VerifierError, XlapyError
from xlapy.hlo.attributes import (
    ComparisonDirection,
    ComparisonType,
    ComputationLayout,
    OpMetadata,
)
from xlapy.hlo.builder import BuilderError, ComputationBuilder, ModuleBuilder
from xlapy.hlo.builder_ops import make_window
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import ELEMENTWISE_BINARY, ELEMENTWISE_UNARY, Opcode
from xlapy.hlo.shape import Layout, Shape
from xlapy.hlo.verifier import verify

from .builder_util import evaluate, round_trips

F32, S32, U32, PRED = PrimitiveType.F32, PrimitiveType.S32, PrimitiveType.U32, PrimitiveType.PRED
C64 = PrimitiveType.C64


def f32(*dims) -> Shape:
    return Shape.array(F32, dims)


# -- names, layouts, assembly -----------------------------------------------------------
def test_names_count_up_across_the_module_xla_style():
    mb = ModuleBuilder("jit_f")
    b = mb.computation("main")
    x = b.parameter(0, f32(3), "Arg_0")
    y = b.parameter(1, f32(3))
    s = b.add(x, y)
    body = b.subcomputation("region_0")
    assert [b.name, x.name, y.name, s.name, body.name] == \
        ["main.1", "Arg_0.2", "parameter.3", "add.4", "region_0.5"]
    assert b.get_tuple_element(b.tuple([s]), 0).name == "get-tuple-element.7"


def test_shapes_get_row_major_layouts_unless_given():
    b = ComputationBuilder("main")
    x = b.parameter(0, f32(2, 3, 4))
    y = b.parameter(1, Shape.array(F32, (2, 3), (0, 1)))
    assert x.shape.layout == Layout((2, 1, 0))
    assert y.shape.layout == Layout((0, 1))
    t = b.tuple([x, b.negate(y)])
    assert t.shape.tuple_shapes[1].layout == Layout((1, 0))
    assert b.constant(np.float32(1)).shape.layout == Layout(())


def test_module_holds_callees_first_and_entry_layout():
    mb = ModuleBuilder("m")
    add = mb.scalar_reducer(Opcode.ADD, F32)
    body = mb.computation("body")
    state = body.parameter(0, f32(4))
    body.broadcast(body.reduce(state, body.constant(np.float32(0)), [0], add), [4], [])
    cond = mb.computation("cond")
    cond.parameter(0, f32(4))
    cond.constant(False)
    b = mb.computation("main")
    x = b.parameter(0, f32(4))
    b.while_loop(cond, body, x)
    module = mb.build(b)
    names = [c.name for c in module.computations]
    assert names.index(add.name) < names.index(body.name) < names.index(b.name)
    assert module.entry_computation is module.computations[-1]
    assert module.attributes["entry_computation_layout"] == ComputationLayout(
        (Shape.array(F32, (4,), (0,)),), Shape.array(F32, (4,), (0,)))
    assert module.to_text().startswith(
        "HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}")


def test_scalar_reducers_and_comparators_are_shared_per_module():
    mb = ModuleBuilder("m")
    b = mb.computation("main")
    assert b.scalar_reducer(Opcode.ADD, F32) is mb.scalar_reducer(Opcode.ADD, "f32")
    assert b.scalar_reducer(Opcode.ADD, F32) is not b.scalar_reducer(Opcode.MAXIMUM, F32)
    assert b.scalar_comparator("LT", np.float32) is b.scalar_comparator(
        ComparisonDirection.LT, F32)
    x = b.parameter(0, f32(2, 3))
    zero = b.constant(np.float32(0))
    r1 = b.reduce(x, zero, [0], b.scalar_reducer(Opcode.ADD, F32))
    r2 = b.reduce(x, zero, [1], b.scalar_reducer(Opcode.ADD, F32))
    b.tuple([r1, r2])
    module = mb.build(b)
    assert r1.attrs["to_apply"] is r2.attrs["to_apply"]
    assert [c.name for c in module.computations] == ["add_f32.2", "main.1"]
    region = module.computations[0]
    assert [i.opcode for i in region.instructions] == [Opcode.PARAMETER] * 2 + [Opcode.ADD]


def test_subcomputation_builder_or_finished_computation_as_callee():
    mb = ModuleBuilder("m")
    double = mb.computation("double")
    p = double.parameter(0, f32(2))
    double.add(p, p)
    b = mb.computation("main")
    x = b.parameter(0, f32(2))
    first = b.call(double, [x])           # built at this call
    second = b.call(double.build(), [first])  # the same finished computation
    assert first.attrs["to_apply"] is second.attrs["to_apply"]
    module = mb.build(b)
    np.testing.assert_array_equal(evaluate(module, np.array([1, 2], np.float32)), [4, 8])


def test_standalone_builder_starts_its_own_module():
    b = ComputationBuilder("main")
    b.negate(b.parameter(0, f32(2)))
    module = b.module.build(b)
    assert module.name == "main"
    assert module.entry_computation.name == "main.1"
    np.testing.assert_array_equal(evaluate(module, np.array([1, -2], np.float32)), [-1, 2])


def test_build_with_an_explicit_root_and_twice():
    b = ComputationBuilder("main")
    x = b.parameter(0, f32(2))
    y = b.exp(x)
    b.log(y)
    computation = b.build(y)
    assert computation.root_instruction is y
    assert b.build() is computation
    with pytest.raises(BuilderError, match="already built with root exponential.3"):
        b.build(x)
    with pytest.raises(BuilderError, match="computation main.1 is already built"):
        b.negate(x)


def test_op_metadata_is_attached_last_until_cleared():
    b = ComputationBuilder("main")
    meta = OpMetadata((("op_name", "jit(f)/add"), ("source_line", 3)))
    x = b.parameter(0, f32(2))
    b.set_op_metadata(meta)
    s = b.compare(x, x, "LT")
    b.set_op_metadata(None)
    t = b.negate(x)
    assert list(s.attrs) == ["direction", "metadata"] and s.attrs["metadata"] is meta
    assert "metadata" not in t.attrs
    module = b.module.build(b)
    assert 'direction=LT, metadata={op_name="jit(f)/add" source_line=3}' in module.to_text()
    assert round_trips(module)


def test_constant_takes_numpy_values_and_dtypes():
    b = ComputationBuilder("main")
    c = b.constant([[1, 2], [3, 4]], PrimitiveType.BF16)
    assert c.shape.to_text(False) == "bf16[2,2]"
    assert c.literal.dtype == PrimitiveType.BF16.numpy
    assert b.constant(True).shape.to_text(False) == "pred[]"
    assert b.constant(np.arange(3, dtype=np.uint8)).shape.to_text(False) == "u8[3]"
    assert b.constant(2.5).shape.element_type is PrimitiveType.F64  # NumPy's default
    assert b.constant(1, "s32").literal.dtype == np.int32


# -- elementwise methods ----------------------------------------------------------------
_INTEGER_OPS = {Opcode.CLZ, Opcode.POPCNT, Opcode.NOT, Opcode.AND, Opcode.OR, Opcode.XOR,
                Opcode.SHIFT_LEFT, Opcode.SHIFT_RIGHT_ARITHMETIC, Opcode.SHIFT_RIGHT_LOGICAL,
                Opcode.MULHI}
_RESULT = {Opcode.IS_FINITE: "pred[3]", Opcode.COMPLEX: "c64[3]"}


def method_name(opcode: Opcode) -> str:
    name = opcode.name.lower()
    return name + "_" if keyword.iskeyword(name) else name


@pytest.mark.parametrize("opcode", sorted(ELEMENTWISE_UNARY | ELEMENTWISE_BINARY,
                                          key=lambda o: o.value), ids=lambda o: o.value)
def test_every_elementwise_opcode_has_a_method(opcode):
    element = S32 if opcode in _INTEGER_OPS else F32
    b = ComputationBuilder("main")
    x = b.parameter(0, Shape.array(element, (3,)))
    args = [x] if opcode in ELEMENTWISE_UNARY else [x, x]
    result = getattr(b, method_name(opcode))(*args)
    assert result.opcode is opcode and result.operands == args
    assert result.shape.to_text(False) == _RESULT.get(opcode, f"{element.value}[3]")
    verify(b.module.build(b))


def test_generic_unary_and_binary_and_complex_parts():
    b = ComputationBuilder("main")
    z = b.parameter(0, Shape.array(C64, (2,)))
    assert b.unary(Opcode.REAL, z).shape.to_text(False) == "f32[2]"
    assert b.imag(z).shape.to_text(False) == "f32[2]"
    x = b.parameter(1, f32(2))
    assert b.binary(Opcode.ATAN2, x, x).opcode is Opcode.ATAN2


def test_compare_prints_type_only_when_not_the_default():
    b = ComputationBuilder("main")
    x = b.parameter(0, f32(2))
    i = b.parameter(1, Shape.array(S32, (2,)))
    assert b.compare(x, x, "LT", ComparisonType.FLOAT).attrs == {
        "direction": ComparisonDirection.LT}
    assert b.compare(i, i, ComparisonDirection.GE, "SIGNED").attrs == {
        "direction": ComparisonDirection.GE}
    total = b.compare(x, x, "EQ", "TOTALORDER")
    assert total.attrs == {"direction": ComparisonDirection.EQ, "type": ComparisonType.TOTALORDER}
    assert total.shape.to_text(False) == "pred[2]"
    text = b.module.build(b).to_text()
    assert "direction=EQ, type=TOTALORDER" in text


def test_select_clamp_and_values():
    b = ComputationBuilder("main")
    x = b.parameter(0, f32(4))
    lo, hi = b.constant(np.float32(-1)), b.constant(np.float32(1))
    clamped = b.clamp(lo, x, hi)
    positive = b.compare(x, b.broadcast(b.constant(np.float32(0)), [4], []), "GT")
    b.select(positive, clamped, b.negate(x))
    module = b.module.build(b)
    got = evaluate(module, np.array([-3, -0.5, 0.5, 3], np.float32))
    np.testing.assert_array_equal(got, [3, 0.5, 0.5, 1])


# -- errors at the call that made them --------------------------------------------------
def test_operand_from_another_computation_is_rejected():
    mb = ModuleBuilder("m")
    body = mb.computation("body")
    inner = body.parameter(0, f32(2))
    b = mb.computation("main")
    x = b.parameter(0, f32(2))
    with pytest.raises(BuilderError, match=r"computation main.3: add\(parameter.4 f32\[2\], "
                                           r"parameter.2 f32\[2\]\): operand 1 \(parameter.2\) "
                                           "belongs to body.1"):
        b.add(x, inner)


def test_shape_errors_name_the_call():
    b = ComputationBuilder("main")
    x = b.parameter(0, f32(2))
    y = b.parameter(1, f32(3))
    with pytest.raises(ShapeError, match=r"computation main.1: add\(parameter.2 f32\[2\], "
                                         r"parameter.3 f32\[3\]\): add: .*f32\[3\].*f32\[2\]"):
        b.add(x, y)
    with pytest.raises(ShapeError, match=r"dot\(.*\): dot: lhs contracting dimension 0 "):
        b.dot(x, y, [0], [0])
    assert [i.name for i in b.build().instructions] == ["parameter.2", "parameter.3"]


def test_explicit_shape_is_checked_against_the_rule():
    b = ComputationBuilder("main")
    x = b.parameter(0, f32(2))
    with pytest.raises(ShapeError, match=r"declared shape f32\[3\] does not match the inferred "
                                         r"shape f32\[2\]"):
        b.add_instruction(Opcode.NEGATE, [x], f32(3))
    with pytest.raises(ShapeError, match=r"reshape.*cannot reshape f32\[2\]"):
        b.reshape(x, [3])


def test_ops_without_inference_need_a_shape():
    b = ComputationBuilder("main")
    x = b.parameter(0, f32(4))
    with pytest.raises(BuilderError, match="reshape needs an explicit shape"):
        b.add_instruction(Opcode.RESHAPE, [x])
    assert b.add_instruction(Opcode.RESHAPE, [x], f32(2, 2)).shape.to_text() == "f32[2,2]{1,0}"


def test_contract_errors_are_builder_errors():
    b = ComputationBuilder("main")
    x = b.parameter(0, f32(2))
    with pytest.raises(BuilderError, match=r"add\(.*\): has 1 operands but add takes 2"):
        b.add_instruction(Opcode.ADD, [x])
    with pytest.raises(BuilderError, match="missing required attribute direction"):
        b.add_instruction(Opcode.COMPARE, [x, x])
    with pytest.raises(BuilderError, match=r"attribute direction='SIDEWAYS': 'SIDEWAYS' is not "
                                           "a ComparisonDirection"):
        b.compare(x, x, "SIDEWAYS")
    with pytest.raises(BuilderError, match="operand 0 is a str, not an instruction"):
        b.negate("x")
    with pytest.raises(BuilderError, match="parameter 0 already exists"):
        b.parameter(0, f32(2))
    with pytest.raises(BuilderError, match="bad shape"):
        b.parameter(1, Shape.array(F32, (2,), (1,)))
    with pytest.raises(BuilderError, match="constant"):
        b.constant(object())
    with pytest.raises(BuilderError, match=r"add a parameter with parameter\(\)"):
        b.add_instruction(Opcode.PARAMETER, [], f32(2))


def test_build_rejects_a_foreign_root_and_numbering_gaps():
    mb = ModuleBuilder("m")
    other = mb.computation("other")
    stray = other.parameter(0, f32(1))
    b = mb.computation("main")
    b.parameter(1, f32(1))
    with pytest.raises(BuilderError, match="not an instruction of this computation"):
        b.build(stray)
    with pytest.raises(BuilderError, match=r"parameter numbers \[1\] are not 0..0"):
        b.build()
    with pytest.raises(BuilderError, match="has no instructions"):
        mb.computation("empty").build()
    with pytest.raises(BuilderError, match="the entry"):
        mb.build(stray)


def test_module_assembly_errors():
    mb = ModuleBuilder("m")
    with pytest.raises(BuilderError, match="is not a ComparisonDirection"):
        mb.scalar_comparator("SIDEWAYS", F32)
    with pytest.raises(BuilderError, match="reducer opcode 'add' is not an Opcode"):
        mb.scalar_reducer("add", F32)
    with pytest.raises(BuilderError, match="no HLO element type"):
        mb.scalar_reducer(Opcode.ADD, object)
    b = mb.computation("main")
    x = b.parameter(0, f32(2))
    clash = HloComputation("main.1", [HloInstruction(Opcode.PARAMETER, f32(2), name="q",
                                                     parameter_number=0)])
    b.call(clash, [x])
    with pytest.raises(BuilderError, match="already has a computation main.1"):
        mb.build(b)


def test_every_builder_error_is_an_xlapy_error():
    assert issubclass(BuilderError, XlapyError) and issubclass(ShapeError, XlapyError)
    assert not issubclass(BuilderError, VerifierError)


def test_loose_attribute_values_are_normalized():
    b = ComputationBuilder("main")
    x = b.parameter(0, f32(2, 3))
    t = b.add_instruction(Opcode.TRANSPOSE, [x], dimensions=np.array([1, 0]))
    assert t.attrs["dimensions"] == (1, 0) and t.shape.to_text(False) == "f32[3,2]"
    c = b.add_instruction(Opcode.COMPARE, [x, x], direction="NE", type="TOTALORDER")
    assert c.attrs == {"direction": ComparisonDirection.NE, "type": ComparisonType.TOTALORDER}
    region = b.subcomputation("r")
    p = region.parameter(0, Shape.scalar(F32))
    region.add(p, region.parameter(1, Shape.scalar(F32)))
    r = b.add_instruction(Opcode.REDUCE, [x, b.constant(np.float32(0))], dimensions=[0, 1],
                          to_apply=region)
    assert isinstance(r.attrs["to_apply"], HloComputation)
    assert isinstance(r, HloInstruction) and r.shape.to_text(False) == "f32[]"


# -- random programs --------------------------------------------------------------------
_UNARY_FLOAT = [Opcode.NEGATE, Opcode.EXP, Opcode.TANH, Opcode.ABS, Opcode.SIN, Opcode.FLOOR]
_BINARY_FLOAT = [Opcode.ADD, Opcode.MULTIPLY, Opcode.MAXIMUM, Opcode.SUBTRACT]


@settings(max_examples=40, deadline=None)
@given(dims=st.lists(st.integers(1, 4), min_size=0, max_size=3),
       steps=st.lists(st.tuples(st.sampled_from(_UNARY_FLOAT + _BINARY_FLOAT),
                                st.integers(0, 100), st.integers(0, 100)),
                      min_size=1, max_size=8),
       seed=st.integers(0, 2**16))
def test_random_elementwise_programs_verify_round_trip_and_match_numpy(dims, steps, seed):
    numpy_ops = {Opcode.NEGATE: np.negative, Opcode.EXP: np.exp, Opcode.TANH: np.tanh,
                 Opcode.ABS: np.abs, Opcode.SIN: np.sin, Opcode.FLOOR: np.floor,
                 Opcode.ADD: np.add, Opcode.MULTIPLY: np.multiply, Opcode.MAXIMUM: np.maximum,
                 Opcode.SUBTRACT: np.subtract}
    mb = ModuleBuilder("random")
    b = mb.computation("main")
    arg = np.random.default_rng(seed).uniform(-2, 2, dims).astype(np.float32)
    values = [b.parameter(0, Shape.array(F32, dims))]
    expected = [arg]
    for opcode, i, j in steps:
        a, c = i % len(values), j % len(values)
        if opcode in ELEMENTWISE_UNARY:
            values.append(b.unary(opcode, values[a]))
            expected.append(numpy_ops[opcode](expected[a]))
        else:
            values.append(b.binary(opcode, values[a], values[c]))
            expected.append(numpy_ops[opcode](expected[a], expected[c]))
    module = mb.build(b)
    assert round_trips(module)
    np.testing.assert_allclose(evaluate(module, arg), expected[-1], rtol=1e-5, atol=1e-6)


# -- robustness: any arguments give an instruction or an XlapyError, and a failed call
# leaves the computation as it was -------------------------------------------------------
_METHODS = sorted(name for name, member in inspect.getmembers(ComputationBuilder)
                  if callable(member) and not name.startswith("_")
                  and name not in {"build", "subcomputation", "set_op_metadata"})


def _argument_pool(mb: ModuleBuilder, b: ComputationBuilder) -> list:
    x = b.parameter(0, f32(2, 3))
    s = b.parameter(1, Shape.scalar(S32))
    stranger = mb.computation("other").parameter(0, f32(2))
    return [x, s, b.tuple([x, s]), stranger, "garbage", None, 3, -1, [0, 1], [[0, 1]], (),
            [x, x], [x, s], F32, "f32", f32(3, 2), mb.scalar_reducer(Opcode.ADD, F32),
            make_window([1, 1]), Opcode.ADD, "LT", 1.5, object(), [1, "a"], np.int64(1), True]


@settings(max_examples=300, deadline=None)
@given(method=st.sampled_from(_METHODS), picks=st.lists(st.integers(0, 24), min_size=12,
                                                        max_size=12),
       use_defaults=st.lists(st.booleans(), min_size=12, max_size=12))
def test_any_arguments_give_an_instruction_or_an_xlapy_error(method, picks, use_defaults):
    mb = ModuleBuilder("m")
    b = mb.computation("main")
    pool = _argument_pool(mb, b)
    bound = getattr(b, method)
    args, kwargs = [], {}
    for k, p in enumerate(inspect.signature(bound).parameters.values()):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or (
                p.default is not p.empty and use_defaults[k % 12]):
            continue
        value = pool[picks[k % 12]]
        if p.kind is p.KEYWORD_ONLY:
            kwargs[p.name] = value
        else:
            args.append(value)
    before = list(b._computation.instructions)
    try:
        result = bound(*args, **kwargs)
    except XlapyError:
        assert b._computation.instructions == before  # nothing half-added
        return
    assert isinstance(result, HloInstruction | HloComputation | Shape)
