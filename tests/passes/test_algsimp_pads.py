"""Pad rules of the algebraic simplifier (a slice's gradient put back together):
HLO text in, HLO text out, same interpreter results."""

import pytest

from tests.passes.algsimp_util import check, check_unchanged, hlo

CASES = [
    ("select_masked_pad", """
  x = f32[1,4] parameter(0)
  t = pred[] constant(true)
  tb = pred[1,4] broadcast(t), dimensions={}
  f = pred[] constant(false)
  mask = pred[3,4] pad(tb, f), padding=1_1x0_0
  z = f32[] constant(0)
  placed = f32[3,4] pad(x, z), padding=1_1x0_0
  zb = f32[3,4] broadcast(z), dimensions={}
  ROOT r = f32[3,4] select(mask, placed, zb)""", """
  x = f32[1,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3,4] pad(x, z), padding=1_1x0_0"""),
    ("add_adjacent_pads", """
  a = f32[2,3] parameter(0)
  b = f32[2,5] parameter(1)
  z = f32[] constant(0)
  pa = f32[2,8] pad(a, z), padding=0_0x0_5
  pb = f32[2,8] pad(b, z), padding=0_0x3_0
  ROOT r = f32[2,8] add(pb, pa)""", """
  a = f32[2,3] parameter(0)
  b = f32[2,5] parameter(1)
  ROOT c = f32[2,8] concatenate(a, b), dimensions={1}"""),
    ("add_pads_with_a_gap", """
  a = s32[1,4] parameter(0)
  b = s32[2,4] parameter(1)
  z = s32[] constant(0)
  pa = s32[6,4] pad(a, z), padding=1_4x0_0
  pb = s32[6,4] pad(b, z), padding=3_1x0_0
  ROOT r = s32[6,4] add(pa, pb)""", """
  a = s32[1,4] parameter(0)
  z = s32[] constant(0)
  g = s32[1,4] broadcast(z), dimensions={}
  b = s32[2,4] parameter(1)
  c = s32[4,4] concatenate(a, g, b), dimensions={0}
  ROOT r = s32[6,4] pad(c, z), padding=1_1x0_0"""),
]


@pytest.mark.parametrize("name,before,after", CASES, ids=[c[0] for c in CASES])
def test_rule(name, before, after):
    check(hlo(before), hlo(after))


def test_the_gradient_of_three_slices_becomes_one_concatenation():
    """What the torch frontend gives for the gradient of q, k, v cut from one
    projection: three masked pads added up."""
    parts = []
    for k, padding in enumerate(("0_2", "1_1", "2_0")):
        parts.append(f"""
  x{k} = f32[1,4] parameter({k})
  m{k} = pred[3,4] pad(tb, f), padding={padding}x0_0
  p{k} = f32[3,4] pad(x{k}, z), padding={padding}x0_0
  sel{k} = f32[3,4] select(m{k}, p{k}, zb)""")
    check(hlo("""
  t = pred[] constant(true)
  tb = pred[1,4] broadcast(t), dimensions={}
  f = pred[] constant(false)
  z = f32[] constant(0)
  zb = f32[3,4] broadcast(z), dimensions={}""" + "".join(parts) + """
  a = f32[3,4] add(sel0, sel1)
  ROOT r = f32[3,4] add(a, sel2)"""), hlo("""
  x0 = f32[1,4] parameter(0)
  x1 = f32[1,4] parameter(1)
  x2 = f32[1,4] parameter(2)
  ROOT c = f32[3,4] concatenate(x0, x1, x2), dimensions={0}"""))


def _two_pads(n: int, padded: int, value: str, pad_a: str, pad_b: str) -> str:
    """The sum of two f32[n] parameters each padded to f32[padded] with `value`."""
    return f"""
  a = f32[{n}] parameter(0)
  b = f32[{n}] parameter(1)
  z = f32[] constant({value})
  pa = f32[{padded}] pad(a, z), padding={pad_a}
  pb = f32[{padded}] pad(b, z), padding={pad_b}
  ROOT r = f32[{padded}] add(pa, pb)"""


@pytest.mark.parametrize("body", [
    # Overlapping regions: the sum is not a concatenation.
    _two_pads(4, 6, "0", "0_2", "2_0"),
    # A nonzero padding value.
    _two_pads(2, 4, "1", "0_2", "2_0"),
    # -0 padding: -0 + x is x, but -0 + -0 outside is not +0... keep it.
    _two_pads(2, 4, "-0", "0_2", "2_0"),
    # Interior padding.
    _two_pads(2, 5, "0", "0_2_1", "3_0"),
    # The mask's region differs from the pad's.
    """
  x = f32[1,4] parameter(0)
  t = pred[] constant(true)
  tb = pred[1,4] broadcast(t), dimensions={}
  f = pred[] constant(false)
  mask = pred[3,4] pad(tb, f), padding=0_2x0_0
  z = f32[] constant(0)
  placed = f32[3,4] pad(x, z), padding=1_1x0_0
  zb = f32[3,4] broadcast(z), dimensions={}
  ROOT r = f32[3,4] select(mask, placed, zb)""",
    # The select's other value is not the padding value.
    """
  x = f32[1,4] parameter(0)
  y = f32[3,4] parameter(1)
  t = pred[] constant(true)
  tb = pred[1,4] broadcast(t), dimensions={}
  f = pred[] constant(false)
  mask = pred[3,4] pad(tb, f), padding=1_1x0_0
  z = f32[] constant(0)
  placed = f32[3,4] pad(x, z), padding=1_1x0_0
  ROOT r = f32[3,4] select(mask, placed, y)""",
])
def test_rule_does_not_apply(body):
    check_unchanged(hlo(body))
