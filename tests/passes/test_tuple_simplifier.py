"""TupleSimplifier: get-tuple-element of tuple, and tuples rebuilding a tuple."""

import pytest

from tests.passes.util import run_passes
from xlapy.hlo import parse
from xlapy.passes.tuple_simplifier import TupleSimplifier


def run_checked(text):
    """Simplify tuples with the verifier on; results must stay bit-identical."""
    return run_passes([TupleSimplifier()], text, seed=4)


def entry(body):
    return f"HloModule m\nENTRY main {{\n{body}\n}}\n"


def test_element_of_a_tuple_is_forwarded_and_the_tuple_goes():
    module, changed = run_checked(entry("""
  x = f32[2] parameter(0)
  y = s32[] parameter(1)
  t = (f32[2], s32[]) tuple(x, y)
  g = f32[2] get-tuple-element(t), index=0
  ROOT n = f32[2] negate(g)"""))
    assert changed
    assert module.to_text() == parse(entry("""
  x = f32[2] parameter(0)
  y = s32[] parameter(1)
  ROOT n = f32[2] negate(x)""")).to_text()


def test_nested_chains_collapse_in_one_run():
    module, changed = run_checked(entry("""
  x = f32[2] parameter(0)
  y = f32[] parameter(1)
  inner = (f32[2], f32[]) tuple(x, y)
  outer = ((f32[2], f32[]), f32[2]) tuple(inner, x)
  g = (f32[2], f32[]) get-tuple-element(outer), index=0
  ROOT h = f32[] get-tuple-element(g), index=1"""))
    assert changed
    assert module.to_text() == parse(entry("""
  x = f32[2] parameter(0)
  ROOT y = f32[] parameter(1)""")).to_text()


def test_a_tuple_rebuilding_a_tuple_is_that_tuple():
    module, changed = run_checked(entry("""
  p = (f32[2], s32[]) parameter(0)
  a = f32[2] get-tuple-element(p), index=0
  b = s32[] get-tuple-element(p), index=1
  ROOT t = (f32[2], s32[]) tuple(a, b)"""))
    assert changed
    assert [i.name for i in module.entry_computation.instructions] == ["p"]


@pytest.mark.parametrize("body", [
    # elements swapped
    """  p = (f32[2], f32[2]) parameter(0)
  a = f32[2] get-tuple-element(p), index=1
  b = f32[2] get-tuple-element(p), index=0
  ROOT t = (f32[2], f32[2]) tuple(a, b)""",
    # only part of a larger tuple
    """  p = (f32[2], f32[2], f32[2]) parameter(0)
  a = f32[2] get-tuple-element(p), index=0
  b = f32[2] get-tuple-element(p), index=1
  ROOT t = (f32[2], f32[2]) tuple(a, b)""",
    # elements of two different tuples
    """  p = (f32[2], f32[2]) parameter(0)
  q = (f32[2], f32[2]) parameter(1)
  a = f32[2] get-tuple-element(p), index=0
  b = f32[2] get-tuple-element(q), index=1
  ROOT t = (f32[2], f32[2]) tuple(a, b)""",
    # a get-tuple-element of something that is not a tuple instruction
    """  p = (f32[2], f32[2]) parameter(0)
  ROOT a = f32[2] get-tuple-element(p), index=1""",
])
def test_what_is_left_alone(body):
    module, changed = run_checked(entry(body))
    assert not changed
    assert module.to_text() == parse(entry(body)).to_text()


def test_works_inside_called_computations_and_is_deterministic():
    text = """
HloModule m
body {
  b = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(b), index=0
  v = f32[] get-tuple-element(b), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  t = (s32[], f32[]) tuple(i2, v)
  again = f32[] get-tuple-element(t), index=1
  v2 = f32[] add(again, again)
  ROOT r = (s32[], f32[]) tuple(i2, v2)
}
cond {
  c = (s32[], f32[]) parameter(0)
  ci = s32[] get-tuple-element(c), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(ci, n), direction=LT
}
ENTRY main {
  x = f32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[]) tuple(zero, x)
  w = (s32[], f32[]) while(init), condition=cond, body=body
  ROOT out = f32[] get-tuple-element(w), index=1
}
"""
    first, changed = run_checked(text)
    assert changed
    assert [i.name for i in first.computation("body").instructions] == \
        ["b", "i", "v", "one", "i2", "v2", "r"]
    second, _ = run_checked(text)
    assert first.to_text() == second.to_text()
    assert not TupleSimplifier().run(first)
