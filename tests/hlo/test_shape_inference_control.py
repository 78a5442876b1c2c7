"""Shape inference of tuples, control flow, async wrappers, host transfer,
tokens, random numbers, declared-shape ops and collectives."""

import re

import pytest

from tests.hlo.shape_inference_util import computation, infer, reducer
from xlapy.errors import ShapeError
from xlapy.hlo.attributes import FusionKind, IotaReplicaGroups, RandomDistribution, RngAlgorithm

STATE = "(s32[], f32[2])"
COND = computation("cond", [STATE], "pred[]")
BODY = computation("body", [STATE], STATE)
TRUE = computation("on_true", ["f32[2]"], "f32[3]")
FALSE = computation("on_false", ["s32[]"], "f32[3]")
WRAPPED = computation("wrapped", ["f32[2]"], "f32[3]")
FUSED = computation("fused", ["f32[2]", "f32[2]"], "f32[2]")
GROUPS4 = {"replica_groups": ((0, 1, 2, 3),)}
GROUPS2 = {"replica_groups": ((0, 1), (2, 3))}
ASYNC = "((f32[2]), f32[3], s32[])"
SEND_STATE = "(f32[2], u32[], token[])"

OK_CASES = [
    ("tuple", ["f32[2]", "s32[]", "token[]"], {}, None, "(f32[2], s32[], token[])"),
    ("tuple", [], {}, None, "()"),
    ("get-tuple-element", ["(f32[2], s32[])"], {"index": 1}, None, "s32[]"),
    ("opt-barrier", ["(f32[2], s32[])"], {}, None, "(f32[2], s32[])"),
    ("while", [STATE], {"condition": COND, "body": BODY}, None, STATE),
    ("conditional", ["pred[]", "f32[2]", "s32[]"],
     {"true_computation": TRUE, "false_computation": FALSE}, None, "f32[3]"),
    ("conditional", ["s32[]", "f32[2]", "s32[]", "f32[2]"],
     {"branch_computations": (TRUE, FALSE, TRUE)}, None, "f32[3]"),
    ("conditional", ["pred[]", "f32[2]", "s32[]"], {"branch_computations": (TRUE, FALSE)}, None,
     "f32[3]"),
    ("call", ["f32[2]"], {"to_apply": WRAPPED}, None, "f32[3]"),
    ("fusion", ["f32[2]", "f32[2]"], {"kind": FusionKind.LOOP, "calls": FUSED}, None, "f32[2]"),
    ("async-start", ["f32[2]"], {"calls": WRAPPED}, ASYNC, ASYNC),
    ("async-update", [ASYNC], {"calls": WRAPPED}, None, ASYNC),
    ("async-done", [ASYNC], {"calls": WRAPPED}, None, "f32[3]"),
    ("copy-start", ["f32[2,3]"], {}, None, "(f32[2,3], f32[2,3], u32[])"),
    ("copy-done", ["(f32[2,3], f32[2,3], u32[])"], {}, None, "f32[2,3]"),
    ("parameter", [], {}, "(f32[2], s32[])", "(f32[2], s32[])"),
    ("constant", [], {}, "f32[2]", "f32[2]"),
    ("custom-call", ["f32[2]"], {"custom_call_target": "TopK"}, "(f32[2], s32[2])",
     "(f32[2], s32[2])"),
    ("scan", ["f32[2]"], {}, "f32[2]", "f32[2]"),
    ("shuffle", ["f32[2]"], {}, "f32[2]", "f32[2]"),
    ("collective-reduce", ["f32[2]"], {}, "f32[2]", "f32[2]"),
    ("after-all", ["token[]", "token[]"], {}, None, "token[]"),
    ("after-all", [], {}, None, "token[]"),
    ("add-dependency", ["f32[2]", "token[]"], {}, None, "f32[2]"),
    ("rng", ["f32[]", "f32[]"], {"distribution": RandomDistribution.NORMAL}, "f32[2,3]",
     "f32[2,3]"),
    ("rng", ["s32[]", "s32[]"], {"distribution": RandomDistribution.UNIFORM}, "s32[4]", "s32[4]"),
    ("rng-bit-generator", ["u64[2]"], {"algorithm": RngAlgorithm.THREE_FRY},
     "(u64[2], u32[4,4])", "(u64[2], u32[4,4])"),
    ("rng-get-and-update-state", [], {}, None, "u64[2]"),
    ("infeed", ["token[]"], {}, "((f32[2], s32[]), token[])", "((f32[2], s32[]), token[])"),
    ("outfeed", ["f32[2]", "token[]"], {}, None, "token[]"),
    ("send", ["f32[2]", "token[]"], {"channel_id": 1}, None, SEND_STATE),
    ("send-done", [SEND_STATE], {}, None, "token[]"),
    ("recv", ["token[]"], {}, SEND_STATE, SEND_STATE),
    ("recv-done", [SEND_STATE], {}, None, "(f32[2], token[])"),
    ("all-reduce", ["f32[4]"], {"to_apply": reducer("f32")}, None, "f32[4]"),
    ("all-reduce", ["f32[4]", "f32[2,2]"], {"to_apply": reducer("f32"), **GROUPS2}, None,
     "(f32[4], f32[2,2])"),
    ("all-reduce-start", ["f32[4]"], {"to_apply": reducer("f32")}, None, "f32[4]"),
    ("all-reduce-done", ["f32[4]"], {}, None, "f32[4]"),
    ("all-gather", ["f32[2,3]"], {"dimensions": (0,), **GROUPS4}, None, "f32[8,3]"),
    ("all-gather", ["f32[2,3]"], {"dimensions": (1,), **GROUPS2}, None, "f32[2,6]"),
    ("all-gather", ["f32[2,3]"], {"dimensions": (0,),
                                  "replica_groups": IotaReplicaGroups((2, 4), (8,))}, None,
     "f32[8,3]"),
    ("all-gather", ["f32[2,3]"], {"dimensions": (0,)}, "f32[6,3]", "f32[6,3]"),
    ("all-gather", ["f32[2,3]"], {"dimensions": (0,)}, None, "f32[2,3]"),
    ("all-gather", ["f32[2]", "s32[3]"], {"dimensions": (0,), **GROUPS2}, None,
     "(f32[4], s32[6])"),
    ("all-gather-start", ["f32[2]"], {"dimensions": (0,), **GROUPS2}, None, "(f32[2], f32[4])"),
    ("all-gather-start", ["f32[2]"], {"dimensions": (0,)}, "(f32[2], f32[6])", "(f32[2], f32[6])"),
    ("all-gather-done", ["(f32[2], f32[4])"], {}, None, "f32[4]"),
    ("reduce-scatter", ["f32[8,3]"], {"dimensions": (0,), "to_apply": reducer("f32"), **GROUPS4},
     None, "f32[2,3]"),
    ("reduce-scatter", ["f32[8,3]"], {"dimensions": (0,), "to_apply": reducer("f32")},
     "f32[4,3]", "f32[4,3]"),
    ("all-to-all", ["f32[4,3]"], {"dimensions": (0,), **GROUPS2}, None, "f32[4,3]"),
    ("all-to-all", ["f32[2]", "f32[2]"], GROUPS2, None, "(f32[2], f32[2])"),
    ("collective-permute", ["f32[2]"], {"source_target_pairs": ((0, 1), (1, 0))}, None, "f32[2]"),
    ("collective-permute", ["f32[4]", "f32[8]", "(s32[])", "(s32[])"], {}, None, "f32[8]"),
    ("collective-permute-start", ["f32[2]"], {}, "(f32[2], f32[2], u32[], u32[])",
     "(f32[2], f32[2], u32[], u32[])"),
    ("collective-permute-done", ["(f32[2], f32[2], u32[], u32[])"], {}, None, "f32[2]"),
    ("collective-broadcast", ["f32[2]"], GROUPS2, None, "f32[2]"),
    ("ragged-all-to-all", ["f32[8,2]", "f32[8,2]", "s32[4]", "s32[4]", "s32[4]", "s32[4]"],
     {}, None, "f32[8,2]"),
    ("replica-id", [], {}, None, "u32[]"),
    ("partition-id", [], {}, None, "u32[]"),
]

ERROR_CASES = [
    ("tuple", ["f32[2]", 42], {}, None, "tuple: operand 1 is not a Shape: 42"),
    ("get-tuple-element", ["(f32[2], s32[])"], {"index": 2}, None,
     "index=2 is out of range for the 2-element tuple (f32[2], s32[])"),
    ("get-tuple-element", ["f32[2]"], {"index": 0}, None, "operand 0 must be a tuple"),
    ("opt-barrier", ["f32[2]", "f32[2]"], {}, None, "opt-barrier: expects 1 operand(s), got 2"),
    ("while", [STATE], {"condition": COND, "body": computation("b", [STATE], "(s32[], f32[3])")},
     None, "body computation b returns (s32[], f32[3]) but the loop state is (s32[], f32[2])"),
    ("while", [STATE], {"condition": computation("c", [STATE], "s32[]"), "body": BODY}, None,
     "condition computation c must return pred[], returns s32[]"),
    ("while", ["f32[2]"], {"condition": COND, "body": BODY}, None,
     "condition computation cond parameter 0 has shape (s32[], f32[2]) but receives f32[2]"),
    ("while", [STATE], {"body": BODY}, None, "while: needs the attribute condition"),
    ("conditional", ["pred[]", "f32[2]", "s32[]"],
     {"true_computation": TRUE, "false_computation": computation("f", ["s32[]"], "f32[4]")},
     None, "branch 1 (f) returns f32[4] but branch 0 (on_true) returns f32[3]"),
    ("conditional", ["s64[]", "f32[2]"], {"branch_computations": (TRUE,)}, None,
     "the branch selector (operand 0) must be pred[] or s32[], got s64[]"),
    ("conditional", ["s32[]", "f32[2]"], {"branch_computations": (TRUE, FALSE)}, None,
     "2 branches need 3 operands"),
    ("conditional", ["pred[]", "f32[2]", "f32[2]"],
     {"true_computation": TRUE, "false_computation": FALSE}, None,
     "branch 1 computation on_false parameter 0 has shape s32[] but receives f32[2]"),
    ("conditional", ["pred[]", "f32[2]", "s32[]", "f32[2]"],
     {"branch_computations": (TRUE, FALSE, TRUE)}, None, "a pred[] selector needs 2 branch"),
    ("call", ["s32[2]"], {"to_apply": WRAPPED}, None,
     "to_apply computation wrapped parameter 0 has shape f32[2] but receives s32[2]"),
    ("call", ["f32[2]"], {"to_apply": "wrapped"}, None, "attribute to_apply must be a computation"),
    ("fusion", ["f32[2]"], {"kind": FusionKind.LOOP, "calls": FUSED}, None,
     "calls computation fused takes 2 parameter(s) but is given 1 operand(s)"),
    ("async-start", ["f32[2]"], {"calls": WRAPPED}, "((f32[2]), f32[4], s32[])",
     "element 1 of the declared shape is f32[4], expected f32[3]"),
    ("async-update", ["f32[2]"], {}, None, "operand 0 must be an async state tuple"),
    ("async-done", [ASYNC], {"calls": FUSED}, None,
     "the async state holds result f32[3] but the wrapped computation returns f32[2]"),
    ("copy-start", ["f32[2]", "f32[2]"], {}, None, "copy-start: expects 1 operand(s), got 2"),
    ("copy-done", ["f32[2]"], {}, None, "operand 0 must be a tuple of at least 2 elements"),
    ("parameter", [], {}, None, "only the instruction's declared shape says so"),
    ("parameter", ["f32[]"], {}, "f32[]", "parameter: expects 0 operand(s), got 1"),
    ("constant", [], {}, None, "only the instruction's declared shape says so"),
    ("custom-call", ["f32[2]"], {}, None, "only the instruction's declared shape says so"),
    ("scan", ["f32[2]"], {}, None, "declared shape"),
    ("shuffle", ["f32[2]"], {}, None, "declared shape"),
    ("collective-reduce", ["f32[2]"], {}, None, "declared shape"),
    ("after-all", ["token[]", "f32[]"], {}, None, "operand 1 must be a token, but has shape f32[]"),
    ("add-dependency", ["f32[2]", "f32[2]"], {}, None, "operand 1 must be a token"),
    ("rng", ["s32[]", "s32[]"], {"distribution": RandomDistribution.NORMAL}, "s32[4]",
     "rng_normal needs a floating-point type, got s32"),
    ("rng", ["f32[]", "f32[]"], {"distribution": RandomDistribution.UNIFORM}, "f64[4]",
     "must share one element type"),
    ("rng", ["f32[2]", "f32[]"], {"distribution": RandomDistribution.UNIFORM}, "f32[4]",
     "a (operand 0) must be a scalar"),
    ("rng-bit-generator", ["u64[2]"], {}, "(u64[3], u32[4])",
     "the declared new state u64[3] must match the operand state u64[2]"),
    ("rng-get-and-update-state", ["u64[2]"], {}, None, "expects 0 operand(s), got 1"),
    ("infeed", ["f32[]"], {}, "(f32[2], token[])", "operand 0 must be a token"),
    ("infeed", ["token[]"], {}, "f32[2]", "the result must be (data, token)"),
    ("outfeed", ["f32[2]", "f32[2]"], {}, None, "operand 1 must be a token"),
    ("send", ["f32[2]", "s32[]"], {}, None, "operand 1 must be a token"),
    ("send-done", ["f32[2]"], {}, None, "operand 0 must be a tuple"),
    ("recv", ["token[]"], {}, "(f32[2], token[])", "the result must be (data, u32[], token)"),
    ("recv-done", ["token[]"], {}, None, "operand 0 must be a tuple"),
    ("all-reduce", ["s32[4]"], {"to_apply": reducer("f32")}, None,
     "accumulator parameter for input 0 is f32[], expected s32[]"),
    ("all-reduce", ["f32[4]", "s32[4]"], {"to_apply": reducer("f32")}, None,
     "operand 1 has element type s32 but the reducer reduces f32"),
    ("all-reduce", ["f32[4]"], {"to_apply": reducer("f32"), "replica_groups": ((0, 1), (1, 2))},
     None, "replica_groups names a replica more than once"),
    ("all-reduce-start", ["token[]"], {"to_apply": reducer("f32")}, None,
     "operand 0 must be an array"),
    ("all-reduce-done", ["f32[4]", "f32[4]"], {}, None, "expects 1 operand(s), got 2"),
    ("all-gather", ["f32[2,3]"], {"dimensions": (2,), **GROUPS4}, None,
     "all-gather dimension 2 is out of range for rank 2"),
    ("all-gather", ["f32[2,3]"], {"dimensions": (0,), "replica_groups": ((0, 1), (2,))}, None,
     "replica groups must all have the same size"),
    ("all-gather", ["f32[2,3]"], {"dimensions": (0,), "replica_groups": ((0, 1), ())}, None,
     "replica_groups holds an empty group"),
    ("all-gather-start", ["f32[2]"], {"dimensions": (1,)}, None, "out of range for rank 1"),
    ("all-gather-done", ["f32[4]"], {}, None, "operand 0 must be a tuple of at least 2 elements"),
    ("reduce-scatter", ["f32[6,3]"], {"dimensions": (0,), "to_apply": reducer("f32"), **GROUPS4},
     None, "operand 0 dimension 0 (size 6) is not divisible by the group size 4"),
    ("all-to-all", ["f32[5,3]"], {"dimensions": (0,), **GROUPS2}, None,
     "split dimension 0 (size 5) is not divisible by the group size 2"),
    ("all-to-all", ["f32[2]", "f32[2]", "f32[2]"], GROUPS2, None,
     "tuple all-to-all needs one operand per group member (2), got 3"),
    ("all-to-all", ["f32[2]", "f32[3]"], {}, None, "tuple all-to-all needs equal shapes"),
    ("collective-permute", ["token[]"], {}, None, "operand 0 must be an array"),
    ("collective-permute", ["f32[2]"], {"source_target_pairs": ((0, 1), (0, 2))}, None,
     "source 0 appears more than once in source_target_pairs"),
    ("collective-permute", ["f32[2]"], {"source_target_pairs": ((0, 1), (2, 1))}, None,
     "target 1 appears more than once"),
    ("collective-permute", ["f32[2]"], {"source_target_pairs": ((0, -1),)}, None,
     "source_target_pairs holds a negative id"),
    ("collective-permute-start", ["f32[2]"], {}, "(f32[2], f32[3], u32[], u32[])",
     "element 1 of the declared shape is f32[3], expected f32[2]"),
    ("collective-permute-done", ["f32[2]"], {}, None, "operand 0 must be a tuple"),
    ("collective-broadcast", ["(f32[2])"], {}, None, "operand 0 must be an array"),
    ("ragged-all-to-all", ["f32[8,2]", "f32[8,2]", "s32[4]", "s32[4]", "s32[4]", "s32[3]"],
     {}, None, "offset and size operands must share one shape: operand 5 is s32[3]"),
    ("replica-id", ["f32[]"], {}, None, "replica-id: expects 0 operand(s), got 1"),
    ("partition-id", ["f32[]"], {}, None, "partition-id: expects 0 operand(s), got 1"),
]


def case_id(case) -> str:
    return f"{case[0]}({', '.join(map(str, case[1]))})"


@pytest.mark.parametrize("case", OK_CASES, ids=case_id)
def test_ok(case):
    opcode, operands, attrs, declared, expected = case
    assert infer(opcode, *operands, declared=declared, **attrs) == expected


@pytest.mark.parametrize("case", ERROR_CASES, ids=case_id)
def test_error(case):
    opcode, operands, attrs, declared, message = case
    with pytest.raises(ShapeError, match=re.escape(message)):
        infer(opcode, *operands, declared=declared, **attrs)
