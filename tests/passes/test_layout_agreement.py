"""layout-agreement: a buffer passed on uncopied is read in the layout it was
written in (tuples, loop states, branch operands and results, add-dependency and
optimization barriers, the entry's result). Each case read transposed before."""

import numpy as np
import pytest

import xlapy
from xlapy.hlo import parse
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.verifier import verify
from xlapy.passes.layout_agreement import LayoutAgreement, same_layout

COMPUTATIONS = """
body {
  bp = (s32[], f32[2,3]) parameter(0)
  bi = s32[] get-tuple-element(bp), index=0
  bx = f32[2,3] get-tuple-element(bp), index=1
  one = s32[] constant(1)
  bj = s32[] add(bi, one)
  bn = f32[2,3] negate(bx)
  ROOT br = (s32[], f32[2,3]) tuple(bj, bn)
}
cond {
  cp = (s32[], f32[2,3]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(ci, three), direction=LT
}
negated {
  a = f32[2,3] parameter(0)
  ROOT n = f32[2,3] negate(a)
}
transposed {
  a2 = f32[2,3] parameter(0)
  ROOT n2 = f32[2,3]{0,1} copy(a2)
}
"""

CASES = {
    # the root tuple declares {1,0}; its element is {0,1}
    "result tuple": "c = f32[2,3]{0,1} copy(p)\n  ROOT t = (f32[2,3]) tuple(c)",
    # the init holds a {0,1} buffer, the body gives one back
    "loop state": "c = f32[2,3]{0,1} copy(p)\n  z = s32[] constant(0)\n"
                  "  t = (s32[], f32[2,3]) tuple(z, c)\n"
                  "  w = (s32[], f32[2,3]) while(t), condition=cond, body=body\n"
                  "  ROOT g = f32[2,3] get-tuple-element(w), index=1",
    # a {0,1} operand into a branch whose parameter says {1,0}
    "branch operand": "c = f32[2,3]{0,1} copy(p)\n  i = s32[] constant(0)\n"
                      "  ROOT k = f32[2,3] conditional(i, c, c), "
                      "branch_computations={negated, transposed}",
    # passed on by add-dependency and by an optimization barrier
    "add-dependency": "c = f32[2,3]{0,1} copy(p)\n  tk = token[] after-all()\n"
                      "  ROOT d = f32[2,3] add-dependency(c, tk)",
    "opt-barrier": "c = f32[2,3]{0,1} copy(p)\n  t = (f32[2,3]{0,1}) tuple(c)\n"
                   "  b = (f32[2,3]) opt-barrier(t)\n"
                   "  ROOT g = f32[2,3] get-tuple-element(b), index=0",
    # a branch whose root is {0,1} under a conditional that says {1,0}
    "branch result": "i = s32[] parameter(1)\n"
                     "  k = f32[2,3] conditional(i, p, p), "
                     "branch_computations={negated, transposed}\n"
                     "  ROOT e = f32[2,3] negate(k)",
}


def _text(body: str) -> str:
    return f"HloModule layouts\n{COMPUTATIONS}\nENTRY main {{\n  p = f32[2,3] parameter(0)\n" \
           f"  {body}\n}}\n"


@pytest.mark.parametrize("name", list(CASES))
def test_the_cpu_reads_each_buffer_in_its_layout(name):
    text = _text(CASES[name])
    args = [np.arange(6, dtype=np.float32).reshape(2, 3)]
    if "parameter(1)" in text:
        args.append(np.int32(1))
    expected = xlapy.execute(text, args, backend="interpreter")
    actual = xlapy.execute(text, args, backend="cpu")
    for e, a in zip(expected, actual):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(e))


def test_tuples_follow_their_operands_and_the_entry_keeps_its_result_layout():
    module = parse(_text(CASES["result tuple"]))
    declared = module.entry_computation.root_instruction.shape
    assert LayoutAgreement().run(module)
    verify(module)
    root = module.entry_computation.root_instruction
    assert same_layout(root.shape, declared)
    assert root.operands[0].opcode is Opcode.COPY
    for instruction in module.entry_computation.instructions:
        if instruction.opcode is Opcode.TUPLE:
            assert all(same_layout(s, o.shape) for s, o in
                       zip(instruction.shape.tuple_shapes, instruction.operands))


def test_a_loop_agrees_with_its_init_body_and_condition():
    module = parse(_text(CASES["loop state"]))
    assert LayoutAgreement().run(module)
    verify(module)
    loop = next(i for i in module.entry_computation.instructions if i.opcode is Opcode.WHILE)
    body, condition = loop.attr("body"), loop.attr("condition")
    for shape in (loop.operands[0].shape, body.parameter(0).shape,
                  body.root_instruction.shape, condition.parameter(0).shape):
        assert same_layout(shape, loop.shape)


def test_nothing_changes_where_layouts_agree():
    module = parse(_text("ROOT t = (f32[2,3], f32[2,3]) tuple(p, p)"))
    assert not LayoutAgreement().run(module)
