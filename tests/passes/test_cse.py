"""HloCSE: HLO text in, HLO text out; merges only what computes the same value."""

import pytest

from tests.passes.util import run_passes
from xlapy.hlo import parse
from xlapy.passes.cse import HloCSE


def run_checked(text, interpret=True):
    """CSE with the verifier on; results must stay bit-identical."""
    return run_passes([HloCSE()], text, seed=2, interpret=interpret)


def entry_names(module):
    return [i.name for i in module.entry_computation.instructions]


def entry(body, extra=""):
    return f"HloModule m\n{extra}\nENTRY main {{\n{body}\n}}\n"


def test_identical_instructions_merge_and_chains_collapse_in_one_run():
    module, changed = run_checked(entry("""
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  a = f32[4] add(x, y)
  e = f32[4] exponential(a)
  a2 = f32[4] add(x, y)
  e2 = f32[4] exponential(a2)
  ROOT r = f32[4] multiply(e, e2)"""))
    assert changed
    assert module.to_text() == parse(entry("""
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  a = f32[4] add(x, y)
  e = f32[4] exponential(a)
  ROOT r = f32[4] multiply(e, e)""")).to_text()


def test_commutative_operands_in_any_order():
    module, changed = run_checked(entry("""
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  a = f32[4] add(x, y)
  b = f32[4] add(y, x)
  m = f32[4] multiply(a, b)
  m2 = f32[4] multiply(b, a)
  d1 = f32[4] subtract(x, y)
  d2 = f32[4] subtract(y, x)
  mx = f32[4] maximum(d1, d2)
  mx2 = f32[4] maximum(d2, d1)
  ROOT t = (f32[4], f32[4], f32[4], f32[4]) tuple(m, m2, mx, mx2)"""))
    assert changed
    assert entry_names(module) == ["x", "y", "a", "m", "d1", "d2", "mx", "t"]


@pytest.mark.parametrize("first, second, merged", [
    ("f32[] constant(1)", "f32[] constant(1)", True),
    ("f32[] constant(0)", "f32[] constant(-0)", False),       # bit for bit: -0 is not 0
    ("f32[2] constant({1, 2})", "f32[2] constant({1, 2})", True),
    ("f32[2] constant({1, 2})", "f32[2] constant({2, 1})", False),
    ("f32[] constant(nan)", "f32[] constant(nan)", True),     # same bits
    ("f32[2,1]{1,0} constant({{1}, {2}})", "f32[2,1]{0,1} constant({{1}, {2}})", False),
])
def test_constants_merge_by_value(first, second, merged):
    module, changed = run_checked(entry(f"""
  c1 = {first}
  c2 = {second}
  ROOT t = ({first.split(' ')[0]}, {second.split(' ')[0]}) tuple(c1, c2)"""))
    assert changed is merged
    assert ("c2" not in entry_names(module)) is merged


def test_constants_of_different_types_stay_apart():
    module, changed = run_checked(entry("""
  c1 = f32[] constant(1)
  c2 = s32[] constant(1)
  ROOT t = (f32[], s32[]) tuple(c1, c2)"""))
    assert not changed


@pytest.mark.parametrize("a, b", [
    ("f32[2,3] broadcast(x), dimensions={0}", "f32[2,3] broadcast(y), dimensions={0}"),
    ("f32[2,2] broadcast(x), dimensions={1}", "f32[2,2] broadcast(x), dimensions={0}"),
    ("pred[2] compare(x, y), direction=LT", "pred[2] compare(x, y), direction=GT"),
    ("f32[1] slice(x), slice={[0:1]}", "f32[1] slice(x), slice={[1:2]}"),
    ("f32[2] subtract(x, y)", "f32[2] subtract(y, x)"),
    ("s32[2] convert(x)", "s32[2] bitcast-convert(x)"),
])
def test_attributes_operands_and_opcodes_are_compared_in_full(a, b):
    module, changed = run_checked(entry(f"""
  x = f32[2] parameter(0)
  y = f32[2] parameter(1)
  a = {a}
  b = {b}
  ROOT t = ({a.split(' ')[0]}, {b.split(' ')[0]}) tuple(a, b)"""))
    assert not changed


def test_metadata_is_ignored_and_the_first_keeps_its_own():
    module, changed = run_checked(entry("""
  x = f32[2] parameter(0)
  a = f32[2] negate(x), metadata={op_name="first" source_line=1}
  b = f32[2] negate(x), metadata={op_name="second" source_line=2}
  ROOT t = (f32[2], f32[2]) tuple(a, b)"""))
    assert changed
    assert 'op_name="first"' in module.to_text() and "second" not in module.to_text()


def test_side_effects_and_parameters_are_never_merged():
    module, changed = run_checked(entry("""
  x = f32[] parameter(0)
  x2 = f32[] parameter(1)
  r1 = f32[3] rng(x, x2), distribution=rng_uniform
  r2 = f32[3] rng(x, x2), distribution=rng_uniform
  c1 = f32[] custom-call(x), custom_call_target="t", custom_call_has_side_effect=true
  c2 = f32[] custom-call(x), custom_call_target="t", custom_call_has_side_effect=true
  p1 = f32[] custom-call(x), custom_call_target="t"
  p2 = f32[] custom-call(x), custom_call_target="t"
  ROOT t = (f32[3], f32[3], f32[], f32[], f32[], f32[]) tuple(r1, r2, c1, c2, p1, p2)"""),
        interpret=False)
    assert changed
    assert entry_names(module) == ["x", "x2", "r1", "r2", "c1", "c2", "p1", "t"]


def test_iotas_merge_by_dimension():
    module, changed = run_checked(entry("""
  i1 = s32[2,3] iota(), iota_dimension=0
  i2 = s32[2,3] iota(), iota_dimension=0
  i3 = s32[2,3] iota(), iota_dimension=1
  ROOT t = (s32[2,3], s32[2,3], s32[2,3]) tuple(i1, i2, i3)"""))
    assert changed
    assert entry_names(module) == ["i1", "i3", "t"]


REDUCERS = """
region_0 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
region_1 {
  a.1 = f32[] parameter(0)
  b.1 = f32[] parameter(1)
  ROOT s.1 = f32[] add(a.1, b.1)
}
region_2 {
  a.2 = f32[] parameter(0)
  b.2 = f32[] parameter(1)
  ROOT s.2 = f32[] maximum(a.2, b.2)
}
"""


def test_called_computations_compare_by_structure():
    module, changed = run_checked(entry("""
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  r0 = f32[] reduce(x, z), dimensions={0}, to_apply=region_0
  r1 = f32[] reduce(x, z), dimensions={0}, to_apply=region_1
  r2 = f32[] reduce(x, z), dimensions={0}, to_apply=region_2
  ROOT t = (f32[], f32[], f32[]) tuple(r0, r1, r2)""", REDUCERS))
    assert changed
    assert entry_names(module) == ["x", "z", "r0", "r2", "t"]


def test_instructions_of_different_computations_stay_apart():
    text = entry("""
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  s = f32[] add(x, y)
  ROOT c = f32[] call(x, y), to_apply=callee""", """
callee {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT sum = f32[] add(p, q)
}""")
    module, changed = run_checked(text)
    assert not changed


def test_cse_is_deterministic():
    text = entry("""
  x = f32[4] parameter(0)
  c1 = f32[] constant(2)
  c2 = f32[] constant(2)
  b1 = f32[4] broadcast(c1), dimensions={}
  b2 = f32[4] broadcast(c2), dimensions={}
  m1 = f32[4] multiply(x, b1)
  m2 = f32[4] multiply(b2, x)
  ROOT r = f32[4] add(m1, m2)""")
    first, _ = run_checked(text)
    second, _ = run_checked(text)
    assert first.to_text() == second.to_text()
    assert entry_names(first) == ["x", "c1", "b1", "m1", "r"]
    assert not HloCSE().run(first)
