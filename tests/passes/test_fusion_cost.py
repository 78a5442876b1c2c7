"""The fusion cost model on its own: what ops cost, how consumers read operands, and
the decision (with its reason) for each rule."""

from __future__ import annotations

import pytest

from tests.passes.test_fusion import module
from xlapy.hlo import parse
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.passes.fusion_cost import (
    ROOT,
    FusionDecision,
    FusionOptions,
    consumer_uses,
    effectively_at_most_unary,
    is_always_duplicable,
    is_expensive,
    reuses_operand,
    should_fuse,
)
from xlapy.passes.fusion_utils import FusionNames, create_fusion, fuse_producer


def entry(body: str) -> HloComputation:
    return parse(module(body)).entry_computation


def users_of(computation: HloComputation):
    users = computation.users()
    return lambda i: users.get(id(i), [])


def decide(computation: HloComputation, consumer: str, producer: str,
           **options) -> FusionDecision:
    c = computation.instruction(consumer)
    index = next(k for k, op in enumerate(c.operands) if op.name == producer)
    return should_fuse(c, index, users_of(computation), FusionOptions(**options))


def fuse(computation: HloComputation, consumer: str, *producers: str) -> HloInstruction:
    """Make `consumer` a fusion and pull `producers` into it, in order."""
    names = FusionNames(computation.parent)
    fusion = create_fusion(computation.instruction(consumer), names)
    for producer in producers:
        fuse_producer(fusion, computation.instruction(producer), names)
    return fusion


# -- decisions -----------------------------------------------------------------------------
def test_decision_is_truthy_and_explains_itself():
    yes, no = FusionDecision.allow("a into b (kLoop)"), FusionDecision.forbid("too big")
    assert yes and not no
    assert yes.explain() == "fused: a into b (kLoop)"
    assert no.explain() == "not fused: too big"


# -- what ops cost -------------------------------------------------------------------------
COSTS = entry("""\
  x = f32[4] parameter(0)
  i = s32[4] parameter(1)
  z = c64[4] parameter(2)
  add = f32[4] add(x, x)
  exp = f32[4] exponential(x)
  sin = f32[4] sine(x)
  fdiv = f32[4] divide(x, x)
  three = s32[] constant(3)
  b3 = s32[4] broadcast(three), dimensions={}
  idiv = s32[4] divide(i, b3)
  idiv2 = s32[4] divide(i, i)
  abs = f32[4] abs(x)
  cabs = f32[4] abs(z)
  bf = bf16[4] convert(x)
  wide = f64[4] convert(x)
  t = f32[4] transpose(x), dimensions={0}
  ROOT r = f32[4] negate(x)""")


@pytest.mark.parametrize("name, expensive", [
    ("add", False), ("exp", True), ("sin", True), ("fdiv", True), ("idiv", False),
    ("idiv2", True), ("abs", False), ("cabs", True), ("bf", True), ("wide", False),
    ("t", False), ("b3", False), ("three", False),
])
def test_is_expensive(name, expensive):
    assert is_expensive(COSTS.instruction(name)) is expensive


def test_always_duplicable_broadcasts_and_widening_converts():
    assert is_always_duplicable(COSTS.instruction("b3"))
    assert is_always_duplicable(COSTS.instruction("wide"))
    assert not is_always_duplicable(COSTS.instruction("bf"))
    assert not is_always_duplicable(COSTS.instruction("add"))


def test_effectively_at_most_unary():
    c = entry("""\
  x = f32[4,8] parameter(0)
  y = f32[4,8] parameter(1)
  v = f32[8] parameter(2)
  bv = f32[4,8] broadcast(v), dimensions={1}
  two = f32[] constant(2)
  a = f32[4,8] add(x, y)
  b = f32[4,8] add(x, bv)
  ROOT r = (f32[4,8], f32[4,8]) tuple(a, b)""")
    assert not effectively_at_most_unary(c.instruction("a"))
    assert effectively_at_most_unary(c.instruction("b"))
    assert effectively_at_most_unary(c.instruction("bv"))


def test_which_ops_read_an_element_more_than_once():
    c = entry("""\
  x = f32[4] parameter(0)
  s = f32[] parameter(1)
  b = f32[4,3] broadcast(x), dimensions={0}
  same = f32[4] broadcast(x), dimensions={0}
  zero = f32[] constant(0)
  p = f32[6] pad(x, zero), padding=1_1
  w1 = f32[2] reduce-window(x, zero), window={size=2 stride=2}, to_apply=add_f32
  w2 = f32[3] reduce-window(x, zero), window={size=2}, to_apply=add_f32
  r = f32[] reduce(x, zero), dimensions={0}, to_apply=add_f32
  ROOT t = (f32[4,3], f32[4], f32[6], f32[2], f32[3], f32[]) tuple(b, same, p, w1, w2, r)""")
    assert reuses_operand(c.instruction("b"), 0)
    assert not reuses_operand(c.instruction("same"), 0)
    assert not reuses_operand(c.instruction("p"), 0) and reuses_operand(c.instruction("p"), 1)
    assert not reuses_operand(c.instruction("w1"), 0)
    assert reuses_operand(c.instruction("w2"), 0)
    assert not reuses_operand(c.instruction("r"), 0)


def test_a_fusion_reads_a_parameter_once_per_indexing_and_phase():
    c = entry("""\
  x = f32[4,4] parameter(0)
  t = f32[4,4] transpose(x), dimensions={1,0}
  a = f32[4,4] add(x, t)
  zero = f32[] constant(0)
  s = f32[4] reduce(a, zero), dimensions={1}, to_apply=add_f32
  b = f32[4,4] broadcast(s), dimensions={0}
  ROOT m = f32[4,4] multiply(a, b)""")
    fusion = fuse(c, "m", "b", "s", "zero", "a", "t")
    [x_use] = consumer_uses(fusion)
    # x is read at its index and transposed, once for the reduce and once for the root
    assert x_use.emissions == 4
    assert {phase if phase == ROOT else phase.name for phase, _ in x_use.contexts} == \
        {ROOT, "s"}
    assert x_use.reusers == []  # the broadcast reads the reduce's scratch, not x


# -- the rules, one by one -----------------------------------------------------------------
RULES = entry("""\
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  v = f32[4] parameter(2)
  d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e1 = f32[8,4] exponential(d)
  e2 = f32[8,4] tanh(d)
  ev = f32[4] exponential(v)
  bv = f32[8,4] broadcast(ev), dimensions={1}
  n = f32[8,4] negate(bv)
  zero = f32[] constant(0)
  r = f32[8] reduce(x, zero), dimensions={1}, to_apply=add_f32
  rb = f32[8,4] broadcast(r), dimensions={0}
  rr = f32[8,4] subtract(d, rb)
  cat = f32[8,64] concatenate(x, x, x, x), dimensions={1}
  big = f32[9,16] concatenate(x, x, x, x, x, x, x, x, x), dimensions={0}
  nb = f32[9,16] negate(big)
  ROOT t = (f32[8,4], f32[8,4], f32[8,4], f32[8,4], f32[8,64], f32[9,16]) tuple(e1, e2, n, rr, cat, nb)""")


@pytest.mark.parametrize("consumer, producer, reason", [
    ("r", "x", "not fused: x: parameters are the computation's inputs and stay outside "
                "fusions"),
    ("t", "e1", "not fused: t (tuple) cannot take fused producers"),
    ("e1", "d", "not fused: would duplicate an expensive producer (d) into 3 consumers"),
    ("bv", "ev", "not fused: ev is expensive and bv reads each of its elements more than "
                 "once (through bv); fusing would recompute it for every read"),
    ("r", "zero", "not fused: a constant alone (zero) does not make a fusion worth a kernel"),
    ("nb", "big", "not fused: big concatenates 9 operands (a fused concatenate of more than "
                  "8 is a deep select tree)"),
    ("rb", "r", "not fused: rb reads each element of r more than once (through rb); a "
                "reduction is fused where it is read once or broadcast back over the minor "
                "dimensions it reduced (a row's value, computed once per row; a column's "
                "would be recomputed for every element)"),
])
def test_refusals_carry_their_reason(consumer, producer, reason):
    assert decide(RULES, consumer, producer).explain() == reason


def test_cheap_producers_are_fused_with_the_kind_they_make():
    assert decide(RULES, "n", "bv").explain() == "fused: bv into n (kLoop)"
    assert decide(RULES, "t", "cat").explain() == "not fused: t (tuple) cannot take fused " \
                                                  "producers"


def test_reduction_diamond_and_its_switch():
    c = entry("""\
  x = f32[8,16] parameter(0)
  zero = f32[] constant(0)
  r = f32[8] reduce(x, zero), dimensions={1}, to_apply=add_f32
  rb = f32[8,16] broadcast(r), dimensions={0}
  ROOT rr = f32[8,16] subtract(x, rb)""")
    fusion = fuse(c, "rr", "rb")
    index = fusion.operands.index(c.instruction("r"))
    users = users_of(c)
    allowed = should_fuse(fusion, index, users, FusionOptions())
    assert allowed.explain() == "fused: r into fusion, broadcast back over its rows " \
                                "(reduction diamond) (kInput)"
    refused = should_fuse(fusion, index, users, FusionOptions(fuse_reduction_diamonds=False))
    assert not refused


def test_output_fusion_needs_an_elementwise_epilogue_of_the_dot_shape():
    c = entry("""\
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[4,8] transpose(d), dimensions={1,0}
  ROOT n = f32[4,8] negate(t)""")
    assert decide(c, "t", "d").explain() == "not fused: d (dot) fuses only into an " \
        "elementwise epilogue, not into t (transpose)"
    assert decide(c, "n", "t").explain() == "fused: t into n (kLoop)"
    off = decide(parse(module(DOT_TANH)).entry_computation, "e", "d", fuse_dot_epilogues=False)
    assert off.explain() == "not fused: d (dot) is not fused (output fusion is off)"


DOT_TANH = """\
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT e = f32[8,4] tanh(d)"""


def test_code_duplication_is_bounded():
    # each level reads the one below twice at different indices: 2**k emissions
    lines = ["  x = f32[4,4] parameter(0)", "  l0 = f32[4,4] negate(x)"]
    for k in range(1, 6):
        lines.append(f"  t{k} = f32[4,4] transpose(l{k - 1}), dimensions={{1,0}}")
        lines.append(f"  l{k} = f32[4,4] add(l{k - 1}, t{k})")
    lines[-1] = lines[-1].replace("  l5", "  ROOT l5")
    c = entry("\n".join(lines))
    names = ["t5", "l4", "t4", "l3", "t3", "l2", "t2", "l1", "t1"]
    fusion = fuse(c, "l5", *names)
    index = fusion.operands.index(c.instruction("l0"))
    decision = should_fuse(fusion, index, users_of(c))
    assert decision.explain() == "not fused: l0 would be emitted more than 15 times in " \
                                 "fusion (code duplication)"
