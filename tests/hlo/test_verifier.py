"""Tests of the HLO verifier: one small bad module per check, asserting the
message names the instruction and the rule; valid modules (built, hand-made and
the parsed corpus) pass; random corruptions never crash it."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xlapy.errors import VerifierError
from xlapy.hlo.attributes import (
    ComparisonDirection,
    ComputationLayout,
    FusionKind,
    RawAttribute,
    SliceRange,
)
from xlapy.hlo.builder import ModuleBuilder
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.parser import parse_module
from xlapy.hlo.shape import Layout, Shape
from xlapy.hlo.verifier import verify

F32, S32, PRED = PrimitiveType.F32, PrimitiveType.S32, PrimitiveType.PRED
CORPUS = pathlib.Path(__file__).parent / "corpus"


def f32(*dims) -> Shape:
    return Shape.array(F32, dims)


def param(number: int, shape: Shape, name: str = "") -> HloInstruction:
    return HloInstruction(Opcode.PARAMETER, shape, name=name or f"p{number}",
                          parameter_number=number)


def module_of(*computations: HloComputation, entry: HloComputation | None = None) -> HloModule:
    """Computations in the given order; the last is the entry unless `entry` says."""
    module = HloModule("m")
    entry = entry or computations[-1]
    for computation in computations:
        module.add_computation(computation, entry=computation is entry)
    return module


def add_module() -> tuple[HloModule, dict[str, HloInstruction]]:
    """main(x: f32[2], y: f32[2]) = add(x, y), built by hand."""
    x, y = param(0, f32(2), "x"), param(1, f32(2), "y")
    add = HloInstruction(Opcode.ADD, f32(2), [x, y], name="sum")
    return module_of(HloComputation("main", [x, y, add])), {"x": x, "y": y, "add": add}


def reducer(name: str = "add_f32", element=F32) -> HloComputation:
    scalar = Shape.scalar(element)
    a, b = param(0, scalar, f"{name}_a"), param(1, scalar, f"{name}_b")
    return HloComputation(name, [a, b, HloInstruction(Opcode.ADD, scalar, [a, b],
                                                      name=f"{name}_r")])


def reduce_module() -> tuple[HloModule, HloInstruction]:
    """main(x: f32[2,3]) = reduce(x, 0) over dim 1 with an add reducer."""
    region = reducer()
    x = param(0, f32(2, 3), "x")
    zero = HloInstruction(Opcode.CONSTANT, Shape.scalar(F32), name="zero",
                          literal=np.array(0, np.float32))
    red = HloInstruction(Opcode.REDUCE, f32(2), [x, zero],
                         {"dimensions": (1,), "to_apply": region}, name="red")
    return module_of(region, HloComputation("main", [x, zero, red])), red


def fails(module: HloModule, pattern: str) -> VerifierError:
    with pytest.raises(VerifierError, match=pattern) as info:
        verify(module)
    return info.value


# -- valid modules ----------------------------------------------------------------------
def test_valid_hand_made_modules_pass():
    verify(add_module()[0])
    verify(reduce_module()[0])


def test_valid_built_module_passes_and_names_are_unique():
    mb = ModuleBuilder("ok")
    b = mb.computation("main")
    x = b.parameter(0, f32(4, 3))
    w = b.parameter(1, f32(3, 5))
    h = b.dot(x, w, [1], [0])
    relu = b.maximum(h, b.broadcast(b.constant(np.float32(0)), [4, 5], []))
    total = b.reduce(relu, b.constant(np.float32(0)), [0, 1], b.scalar_reducer(Opcode.ADD, F32))
    b.tuple([relu, total])  # the last op added is the root
    module = mb.build(b)
    verify(module)
    names = [i.name for c in module.computations for i in c.instructions]
    assert len(names) == len(set(names))


def test_verify_rejects_a_non_module():
    with pytest.raises(VerifierError, match="expected an HloModule"):
        verify("HloModule m")


# -- module checks ----------------------------------------------------------------------
def test_module_without_entry():
    module, _ = add_module()
    module.entry_computation = None
    fails(module, "module m: no entry computation")


def test_entry_not_in_module():
    module, _ = add_module()
    module.entry_computation = HloComputation("elsewhere", [param(0, f32(1))])
    fails(module, "entry computation elsewhere is not one of the module's computations")


def test_duplicate_computation_names():
    module, _ = add_module()
    twin = HloComputation("main", [param(0, f32(1), "q")])
    module.computations.insert(0, twin)
    fails(module, "two computations are named main")


def test_called_computation_outside_module():
    module, red = reduce_module()
    module.computations.remove(red.attrs["to_apply"])
    fails(module, r"instruction red \(reduce\): calls computation add_f32, which is not in "
                  "the module")


def test_recursion_is_reported():
    p = param(0, f32(2), "cp")
    body = HloComputation("loop", [p])
    call = HloInstruction(Opcode.CALL, f32(2), [p], {"to_apply": body}, name="again")
    body.add_instruction(call)
    x = param(0, f32(2), "x")
    entry = HloComputation("main", [x, HloInstruction(Opcode.CALL, f32(2), [x],
                                                      {"to_apply": body}, name="c")])
    fails(module_of(body, entry), r"computation loop calls itself \(loop -> loop\)")


def test_callee_listed_after_caller():
    module, _ = reduce_module()
    module.computations.reverse()
    fails(module, "called computation add_f32 comes after its caller main in "
                  "module.computations; callees must come first")


def test_entry_layout_parameter_count():
    module, _ = add_module()
    module.attributes["entry_computation_layout"] = ComputationLayout((f32(2),), f32(2))
    fails(module, "entry_computation_layout has 1 parameters but entry computation main has 2")


def test_entry_layout_parameter_shape():
    module, _ = add_module()
    module.attributes["entry_computation_layout"] = ComputationLayout((f32(2), f32(3)), f32(2))
    fails(module, r"entry_computation_layout parameter 1 is f32\[3\] but parameter y is "
                  r"f32\[2\] \(element types or dimensions differ\)")


def test_entry_layout_layouts_must_agree_where_both_given():
    x = param(0, Shape.array(F32, (2, 3), (1, 0)), "x")
    neg = HloInstruction(Opcode.NEGATE, Shape.array(F32, (2, 3), (1, 0)), [x], name="neg")
    module = module_of(HloComputation("main", [x, neg]))
    module.attributes["entry_computation_layout"] = ComputationLayout(
        (Shape.array(F32, (2, 3), (1, 0)),), Shape.array(F32, (2, 3), (0, 1)))
    fails(module, r"result is f32\[2,3\]\{0,1\} but the root neg is f32\[2,3\]\{1,0\} "
                  r"\(layouts differ\)")
    module.attributes["entry_computation_layout"] = ComputationLayout((f32(2, 3),), f32(2, 3))
    verify(module)  # no layout on one side: only compatibility is checked


def test_entry_layout_shapes_must_be_well_formed():
    module, _ = add_module()
    bad = Shape.array(F32, (2,), (1,))
    module.attributes["entry_computation_layout"] = ComputationLayout((f32(2), bad), f32(2))
    fails(module, r"entry_computation_layout parameter 1 f32\[2\]\{1\}: layout \{1\} is not a "
                  "permutation of 0..0")


def test_entry_layout_of_wrong_type():
    module, _ = add_module()
    module.attributes["entry_computation_layout"] = RawAttribute("{(f32[2])->f32[2]}")
    fails(module, "entry_computation_layout is a RawAttribute, not a ComputationLayout")


# -- computation checks -----------------------------------------------------------------
def test_computation_without_root():
    module, _ = add_module()
    module.entry_computation.root_instruction = None
    fails(module, "computation main has no root instruction")


def test_root_not_among_instructions():
    module, _ = add_module()
    module.entry_computation.root_instruction = HloInstruction(Opcode.PARAMETER, f32(2),
                                                               name="ghost")
    fails(module, "computation main: root 'ghost' is not one of its instructions")


def test_duplicate_parameter_number():
    x, y = param(0, f32(2), "x"), param(0, f32(2), "y")
    module = module_of(HloComputation("main", [x, y]))
    fails(module, r"instruction y \(parameter\): parameter number 0 is also used by x")


def test_parameter_numbers_with_a_gap():
    x, y = param(0, f32(2), "x"), param(2, f32(2), "y")
    module = module_of(HloComputation("main", [x, y]))
    fails(module, r"parameter numbers \[0, 2\] are not 0..1 \(missing \[1\]\)")


def test_invalid_parameter_number():
    module = module_of(HloComputation("main", [param(-1, f32(2), "x")]))
    fails(module, "parameter number must be an int >= 0, got -1")


def test_instruction_names_unique_across_computations():
    module, red = reduce_module()
    red.operands[0].name = "add_f32_a"  # the reducer's first parameter has this name
    fails(module, "instruction name add_f32_a is used twice in the module")


def test_operand_from_another_computation():
    module, parts = add_module()
    stranger = param(0, f32(2), "stranger")
    HloComputation("other", [stranger])
    parts["add"].operands[1] = stranger
    fails(module, r"instruction sum \(add\): operand 1 \(stranger\) belongs to computation "
                  "other; operands must be in the same computation")


def test_operand_defined_after_its_user():
    module, parts = add_module()
    instructions = module.entry_computation.instructions
    instructions.remove(parts["y"])
    instructions.append(parts["y"])
    fails(module, r"operand 1 \(y\) comes later in the instruction list; operands must be "
                  r"defined before their users \(no cycles\)")


def test_cycle_through_itself():
    module, parts = add_module()
    parts["add"].operands[0] = parts["add"]
    fails(module, r"operand 0 is the instruction itself \(a cycle\)")


def test_instruction_listed_twice():
    module, parts = add_module()
    module.entry_computation.instructions.append(parts["add"])
    fails(module, "computation main: instruction sum is listed twice")


def test_opcode_must_be_an_opcode():
    module, parts = add_module()
    parts["add"].opcode = "add"
    fails(module, "computation main: instruction sum has opcode 'add', not an Opcode")


def test_instruction_parent_mismatch():
    module, parts = add_module()
    parts["x"].parent = HloComputation("elsewhere")
    fails(module, "instruction x is listed here but its parent is computation elsewhere")


# -- instruction checks -----------------------------------------------------------------
def test_fixed_arity():
    module, parts = add_module()
    parts["add"].operands.append(parts["x"])
    fails(module, r"in computation main, instruction sum \(add\): has 3 operands but add "
                  "takes 2")


def test_reduce_needs_an_even_operand_count():
    module, red = reduce_module()
    red.operands.append(red.operands[0])
    fails(module, r"has 3 operands but reduce takes N inputs then N init values")


def test_scatter_needs_an_odd_operand_count():
    x, i = param(0, f32(4), "x"), param(1, Shape.array(S32, (1, 1)), "i")
    region = reducer()
    scatter = HloInstruction(Opcode.SCATTER, f32(4), [x, i], {
        "update_window_dims": (), "inserted_window_dims": (0,),
        "scatter_dims_to_operand_dims": (0,), "index_vector_dim": 1, "to_apply": region},
        name="sc")
    fails(module_of(region, HloComputation("main", [x, i, scatter])),
          r"has 2 operands but scatter takes N inputs, the indices, then N updates")


def test_conditional_operand_count_follows_branches():
    b0, b1 = (HloComputation(f"b{k}", [param(0, f32(2), f"b{k}p")]) for k in range(2))
    index, a = param(0, Shape.scalar(S32), "index"), param(1, f32(2), "a")
    cond = HloInstruction(Opcode.CONDITIONAL, f32(2), [index, a],
                          {"branch_computations": (b0, b1)}, name="cond")
    fails(module_of(b0, b1, HloComputation("main", [index, a, cond])),
          r"has 2 operands but conditional takes the branch index plus one operand per "
          r"branch \(2\)")


def test_dynamic_slice_takes_one_index_per_dimension():
    x, i = param(0, f32(4, 4), "x"), param(1, Shape.scalar(S32), "i")
    ds = HloInstruction(Opcode.DYNAMIC_SLICE, f32(2, 2), [x, i],
                        {"dynamic_slice_sizes": (2, 2)}, name="ds")
    fails(module_of(HloComputation("main", [x, i, ds])),
          r"dynamic-slice takes 1 operand\(s\) plus one scalar start index per dimension of "
          r"operand 0 \(rank 2\): 3")


@pytest.mark.parametrize("opcode, attrs, missing", [
    (Opcode.COMPARE, {}, "direction"),
    (Opcode.GET_TUPLE_ELEMENT, {}, "index"),
    (Opcode.FUSION, {"kind": FusionKind.LOOP}, "calls"),
    (Opcode.WHILE, {"condition": reducer()}, "body"),
    (Opcode.REDUCE, {"dimensions": (0,)}, "to_apply"),
    (Opcode.BROADCAST, {}, "dimensions"),
])
def test_missing_required_attribute(opcode, attrs, missing):
    x = param(0, f32(2), "x")
    operands = [x] * max(opcode.arity, 1 if opcode is not Opcode.REDUCE else 2)
    bad = HloInstruction(opcode, f32(2), operands, attrs, name="bad")
    fails(module_of(HloComputation("main", [x, bad])),
          rf"instruction bad \({re.escape(opcode.value)}\): missing required attribute "
          rf"{missing}")


def test_conditional_needs_one_form_of_branches():
    b0 = HloComputation("b0", [param(0, f32(2), "b0p")])
    pred, a = param(0, Shape.scalar(PRED), "pred"), param(1, f32(2), "a")
    cond = HloInstruction(Opcode.CONDITIONAL, f32(2), [pred, a, a],
                          {"true_computation": b0}, name="cond")
    fails(module_of(b0, HloComputation("main", [pred, a, cond])),
          r"missing required attribute false_computation \(or branch_computations\)")


@pytest.mark.parametrize("name, value, expected", [
    ("dimensions", [1], "a tuple of ints"),
    ("to_apply", "add_f32", "an HloComputation"),
])
def test_attribute_of_the_wrong_type(name, value, expected):
    module, red = reduce_module()
    red.attrs[name] = value
    fails(module, rf"instruction red \(reduce\): attribute {name} must be {expected}, got")


def test_enum_attribute_of_the_wrong_type():
    x = param(0, f32(2), "x")
    cmp = HloInstruction(Opcode.COMPARE, Shape.array(PRED, (2,)), [x, x],
                         {"direction": "LT"}, name="cmp")
    fails(module_of(HloComputation("main", [x, cmp])),
          "attribute direction must be a ComparisonDirection, got str 'LT'")


def test_bool_is_not_an_int_attribute():
    t = param(0, Shape.tuple([f32(2)]), "t")
    gte = HloInstruction(Opcode.GET_TUPLE_ELEMENT, f32(2), [t], {"index": True}, name="g")
    fails(module_of(HloComputation("main", [t, gte])), "attribute index must be an int")


def test_unknown_attribute_must_be_raw():
    module, parts = add_module()
    parts["add"].attrs["sharding"] = "{replicated}"
    fails(module, "attribute sharding must be a RawAttribute")
    parts["add"].attrs["sharding"] = RawAttribute("{replicated}")
    verify(module)


@pytest.mark.parametrize("literal, problem", [
    (np.array([1, 2], np.float64), r"literal dtype float64 is not f32 \(float32\)"),
    (np.array([1, 2, 3], np.float32), r"literal dimensions \[3\] are not \[2\]"),
    (None, "expected a NumPy array, got NoneType"),
])
def test_constant_literal_must_match_shape(literal, problem):
    c = HloInstruction(Opcode.CONSTANT, f32(2), name="c", literal=literal)
    fails(module_of(HloComputation("main", [c])),
          rf"instruction c \(constant\): literal does not match shape f32\[2\]: {problem}")


def test_tuple_constant_literal():
    shape = Shape.tuple([f32(2), Shape.scalar(S32)])
    good = (np.zeros(2, np.float32), np.array(1, np.int32))
    verify(module_of(HloComputation("main", [HloInstruction(
        Opcode.CONSTANT, shape, name="c", literal=good)])))
    bad = (np.zeros(2, np.float32), np.array(1, np.int64))
    c = HloInstruction(Opcode.CONSTANT, shape, name="c", literal=bad)
    fails(module_of(HloComputation("main", [c])), r"dtype int64 at tuple index \[1\]")


def test_layout_must_be_a_permutation():
    x = param(0, Shape.array(F32, (2, 3), (1, 1)), "x")
    fails(module_of(HloComputation("main", [x])),
          r"instruction x \(parameter\): result shape f32\[2,3\]\{1,1\}: layout \{1,1\} is not "
          "a permutation of 0..1")


def test_negative_dimension_is_malformed():
    x = param(0, Shape(F32, (-1,)), "x")
    fails(module_of(HloComputation("main", [x])), r"dimensions \[-1\] must be ints >= 0")


def test_declared_shape_must_match_the_shape_rule():
    module, parts = add_module()
    parts["add"].shape = f32(3)
    err = fails(module, r"instruction sum \(add\): shape check failed: .*f32\[3\].*f32\[2\]")
    assert err.instruction is parts["add"]


def test_shape_error_becomes_verifier_error_naming_the_instruction():
    x, w = param(0, f32(2, 3), "x"), param(1, f32(4, 5), "w")
    dot = HloInstruction(Opcode.DOT, f32(2, 5), [x, w], {
        "lhs_contracting_dims": (1,), "rhs_contracting_dims": (0,)}, name="mm")
    err = fails(module_of(HloComputation("main", [x, w, dot])),
                r"in computation main, instruction mm \(dot\): shape check failed: dot: .*"
                r"contracting dimension 1 \(size 3\).*\(size 4\)")
    assert err.instruction is dot


def test_called_computation_signature_is_checked():
    """Reducer parameters must be scalars of the input's type (a shape-rule check)."""
    module, red = reduce_module()
    s32_region = reducer("add_s32", S32)
    module.computations.insert(0, s32_region)
    red.attrs["to_apply"] = s32_region
    fails(module, r"instruction red \(reduce\): shape check failed: .*add_s32")


def test_while_body_must_return_the_loop_state():
    state = f32(2)
    cp = param(0, state, "cp")
    cond = HloComputation("cond", [cp, HloInstruction(
        Opcode.CONSTANT, Shape.scalar(PRED), name="t", literal=np.array(True))])
    bp = param(0, state, "bp")
    body = HloComputation("body", [bp, HloInstruction(
        Opcode.SLICE, f32(1), [bp], {"slice": (SliceRange(0, 1),)}, name="shrink")])
    x = param(0, state, "x")
    loop = HloInstruction(Opcode.WHILE, state, [x], {"condition": cond, "body": body},
                          name="loop")
    fails(module_of(cond, body, HloComputation("main", [x, loop])),
          r"instruction loop \(while\): shape check failed: .*body")


def test_compare_direction_accepted_as_enum():
    x = param(0, f32(2), "x")
    cmp = HloInstruction(Opcode.COMPARE, Shape.array(PRED, (2,)), [x, x],
                         {"direction": ComparisonDirection.LT}, name="cmp")
    verify(module_of(HloComputation("main", [x, cmp])))


def test_malformed_containers_are_reported():
    module, parts = add_module()
    module.computations.insert(0, "main")
    fails(module, "module m: computations holds a str")
    module, parts = add_module()
    module.entry_computation.instructions.insert(0, 42)
    fails(module, "computation main: instructions holds a int")
    module, parts = add_module()
    parts["add"].operands[0] = None
    fails(module, r"instruction sum \(add\): operand 0 is a NoneType, not an HloInstruction")
    module, parts = add_module()
    parts["add"].attrs = [("direction", "LT")]
    fails(module, "attrs is a list, not a dict")
    module, parts = add_module()
    parts["add"].attrs[3] = RawAttribute("x")
    fails(module, "attribute name 3 is not a str")


def test_dynamic_dimension_flags_match_the_rank():
    x = param(0, Shape(F32, (2, 3), None, (), (True,)), "x")
    fails(module_of(HloComputation("main", [x])), "1 dynamic-dimension flags for rank 2")


def test_conditional_cannot_mix_both_forms_of_branches():
    b0 = HloComputation("b0", [param(0, f32(2), "b0p")])
    pred, a = param(0, Shape.scalar(PRED), "pred"), param(1, f32(2), "a")
    cond = HloInstruction(Opcode.CONDITIONAL, f32(2), [pred, a, a], {
        "true_computation": b0, "false_computation": b0, "branch_computations": (b0, b0)},
        name="cond")
    fails(module_of(b0, HloComputation("main", [pred, a, cond])),
          "has both branch_computations and true/false_computation")


def test_variadic_ops_need_an_operand():
    cat = HloInstruction(Opcode.CONCATENATE, f32(0), [], {"dimensions": (0,)}, name="cat")
    fails(module_of(HloComputation("main", [cat])),
          r"instruction cat \(concatenate\): has 0 operands but concatenate takes at least 1")


def test_a_token_constant_is_rejected():
    c = HloInstruction(Opcode.CONSTANT, Shape.token(), name="c", literal=np.zeros(()))
    fails(module_of(HloComputation("main", [c])), r"a constant cannot have shape token\[\]")


# -- real modules: the parsed corpus ----------------------------------------------------
@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.hlo")), ids=lambda p: p.stem)
def test_corpus_modules_verify(path):
    module = parse_module(path.read_text())
    verify(module)


# -- robustness: random corruptions raise VerifierError or pass, never crash -------------
_CORRUPTIONS = st.sampled_from([
    "drop_operand", "extra_operand", "swap_operands", "change_dims", "change_type",
    "drop_attr", "garbage_attr", "bad_layout", "tuple_shape", "self_operand", "none_shape",
    "none_operand", "attrs_not_dict", "drop_literal", "steal_operand", "rename_callee",
])
_FUZZ_SOURCES = ["reduce", "jax_softmax", "jax_fori_loop", "jax_scatter_add", "jax_switch",
                 "jax_argmax_variadic_reduce", "opt_while_conditional"]


def _fuzz_module(source: str) -> HloModule:
    if source == "reduce":
        return reduce_module()[0]
    return parse_module((CORPUS / f"{source}.hlo").read_text())


def _corrupt(module: HloModule, target: int, corruption: str, rng) -> None:
    instructions = [i for c in module.computations for i in c.instructions]
    victim = instructions[target % len(instructions)]
    other = instructions[int(rng.integers(len(instructions)))]
    array = isinstance(victim.shape, Shape) and victim.shape.is_array
    attrs = victim.attrs if isinstance(victim.attrs, dict) else {}
    if corruption == "drop_operand" and victim.operands:
        victim.operands.pop()
    elif corruption == "extra_operand":
        victim.operands.append(victim.operands[0] if victim.operands else victim)
    elif corruption == "swap_operands":
        victim.operands.reverse()
    elif corruption == "change_dims" and array:
        victim.shape = Shape.array(victim.shape.element_type,
                                   [int(d) for d in rng.integers(0, 4, rng.integers(0, 3))])
    elif corruption == "change_type" and array:
        victim.shape = victim.shape.with_element_type(PrimitiveType.S8)
    elif corruption == "drop_attr" and attrs:
        attrs.pop(list(attrs)[int(rng.integers(len(attrs)))])
    elif corruption == "garbage_attr":
        key = str(rng.choice(["dimensions", "to_apply", "index", "window", "slice", "body"]))
        attrs[key] = object()
    elif corruption == "bad_layout" and array:
        victim.shape = victim.shape.with_layout(Layout((7,) * victim.shape.rank))
    elif corruption == "tuple_shape":
        victim.shape = Shape.tuple([victim.shape, Shape.token()])
    elif corruption == "self_operand":
        victim.operands.insert(0, victim)
    elif corruption == "none_shape":
        victim.shape = None
    elif corruption == "none_operand":
        victim.operands.append(None)
    elif corruption == "attrs_not_dict":
        victim.attrs = [("index", 0)]
    elif corruption == "drop_literal":
        victim.literal = None
    elif corruption == "steal_operand":
        victim.operands.append(other)
    elif corruption == "rename_callee" and attrs and victim.called_computations:
        victim.called_computations[0].name = module.computations[-1].name


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=st.sampled_from(_FUZZ_SOURCES), target=st.integers(0, 200),
       corruption=_CORRUPTIONS, seed=st.integers(0, 2**16))
def test_random_corruptions_never_crash(source, target, corruption, seed):
    module = _fuzz_module(source)
    _corrupt(module, target, corruption, np.random.default_rng(seed))
    try:
        verify(module)
    except VerifierError:
        pass
