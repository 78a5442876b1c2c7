"""HloDCE: HLO text in, HLO text out; results unchanged; side effects kept."""

import numpy as np
import pytest

import xlapy
from tests.passes.util import run_passes
from xlapy.hlo import parse, verify
from xlapy.hlo.fake_data import fake_arguments
from xlapy.passes.dce import HloDCE, has_side_effect, remove_dead_operands


def run_checked(p, text, interpret=True):
    """Run pass `p` on `text` with the verifier on; results must stay bit-identical."""
    return run_passes([p], text, seed=1, interpret=interpret)


def same_text(module, expected):
    assert module.to_text() == parse(expected).to_text()


def test_removes_dead_chains_keeps_parameters():
    module, changed = run_checked(HloDCE(), """
HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  unused = f32[4] parameter(1)
  e = f32[4] exponential(x)
  dead1 = f32[4] negate(e)
  dead2 = f32[4] multiply(dead1, unused)
  ROOT r = f32[4] add(e, x)
}
""")
    assert changed
    same_text(module, """
HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  unused = f32[4] parameter(1)
  e = f32[4] exponential(x)
  ROOT r = f32[4] add(e, x)
}
""")


def test_nothing_dead_is_no_change_and_text_is_identical():
    text = """
HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  ROOT r = f32[4] add(x, x)
}
"""
    module, changed = run_checked(HloDCE(), text)
    assert not changed
    same_text(module, text)


def test_keeps_side_effects_and_what_they_read():
    module, changed = run_checked(HloDCE(), """
HloModule m
ENTRY main {
  x = f32[] parameter(0)
  lo = f32[] constant(0)
  hi = f32[] negate(x)
  r = f32[3] rng(lo, hi), distribution=rng_uniform
  cc = f32[] custom-call(x), custom_call_target="log_it", custom_call_has_side_effect=true
  pure = f32[] custom-call(x), custom_call_target="pure_thing"
  ROOT y = f32[] add(x, x)
}
""", interpret=False)
    assert changed
    names = [i.name for i in module.entry_computation.instructions]
    assert names == ["x", "lo", "hi", "r", "cc", "y"]


def test_removes_unused_computations_and_keeps_called_ones():
    module, changed = run_checked(HloDCE(), """
HloModule m
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max_f32 {
  a.1 = f32[] parameter(0)
  b.1 = f32[] parameter(1)
  ROOT s.1 = f32[] maximum(a.1, b.1)
}
ENTRY main {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  dead = f32[] reduce(x, z), dimensions={0}, to_apply=max_f32
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add_f32
}
""")
    assert changed
    assert [c.name for c in module.computations] == ["add_f32", "main"]


def test_dead_instructions_inside_called_computations():
    module, changed = run_checked(HloDCE(), """
HloModule m
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  junk = f32[] multiply(a, b)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add_f32
}
""")
    assert changed
    assert [i.name for i in module.computation("add_f32").instructions] == ["a", "b", "s"]


WHILE = """
HloModule m
cond {
  c = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(c), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  b = (s32[], f32[]) parameter(0)
  i.1 = s32[] get-tuple-element(b), index=0
  v = f32[] get-tuple-element(b), index=1
  one = s32[] constant(1)
  i.2 = s32[] add(i.1, one)
  v.1 = f32[] add(v, v)
  %EFFECT
  ROOT t = (s32[], f32[]) tuple(i.2, v.1)
}
ENTRY main {
  x = f32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[]) tuple(zero, x)
  w = (s32[], f32[]) while(init), condition=cond, body=body
  ROOT y = f32[] negate(x)
}
"""


def test_dead_pure_while_is_removed():
    module, changed = run_checked(HloDCE(), WHILE.replace("%EFFECT", ""))
    assert changed
    assert [c.name for c in module.computations] == ["main"]
    assert [i.name for i in module.entry_computation.instructions] == ["x", "y"]


def test_dead_while_with_a_side_effect_in_its_body_is_kept():
    effect = 'log = f32[] custom-call(v), custom_call_target="log", custom_call_has_side_effect=true'
    module, changed = run_checked(HloDCE(), WHILE.replace("%EFFECT", effect), interpret=False)
    assert not changed
    assert "w" in [i.name for i in module.entry_computation.instructions]


MULTI_OUTPUT = """
HloModule m
fused_computation {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  p2 = f32[4] parameter(2)
  e = f32[4] exponential(p0)
  n = f32[4] negate(p1)
  s = f32[4] sine(p2)
  ROOT t = (f32[4], f32[4], f32[4]) tuple(e, n, s)
}
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  z = f32[4] parameter(2)
  zz = f32[4] multiply(z, z)
  f = (f32[4], f32[4], f32[4]) fusion(x, y, zz), kind=kLoop, calls=fused_computation
  %USES
}
"""


def test_unread_multi_output_fusion_outputs_are_dropped():
    module, changed = run_checked(HloDCE(), MULTI_OUTPUT.replace("%USES", """
  g0 = f32[4] get-tuple-element(f), index=0
  g2 = f32[4] get-tuple-element(f), index=2
  ROOT r = f32[4] add(g0, g2)"""))
    assert changed
    same_text(module, """
HloModule m
fused_computation {
  p0 = f32[4] parameter(0)
  p2 = f32[4] parameter(1)
  e = f32[4] exponential(p0)
  s = f32[4] sine(p2)
  ROOT tuple.1 = (f32[4], f32[4]) tuple(e, s)
}
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  z = f32[4] parameter(2)
  zz = f32[4] multiply(z, z)
  f = (f32[4], f32[4]) fusion(x, zz), kind=kLoop, calls=fused_computation
  g0 = f32[4] get-tuple-element(f), index=0
  g2 = f32[4] get-tuple-element(f), index=1
  ROOT r = f32[4] add(g0, g2)
}
""")


def test_a_single_read_output_turns_the_fusion_into_a_plain_one():
    module, changed = run_checked(HloDCE(), MULTI_OUTPUT.replace("%USES", """
  g1 = f32[4] get-tuple-element(f), index=1
  ROOT r = f32[4] abs(g1)"""))
    assert changed
    same_text(module, """
HloModule m
fused_computation {
  p1 = f32[4] parameter(0)
  ROOT n = f32[4] negate(p1)
}
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  z = f32[4] parameter(2)
  f = f32[4] fusion(y), kind=kLoop, calls=fused_computation
  ROOT r = f32[4] abs(f)
}
""")


def test_fusion_read_whole_is_left_alone():
    module, changed = run_checked(HloDCE(), MULTI_OUTPUT.replace("%USES", "ROOT r = (f32[4], f32[4], f32[4]) copy(f)"))
    assert not changed


def test_dce_is_deterministic_and_idempotent():
    text = MULTI_OUTPUT.replace("%USES", """
  g0 = f32[4] get-tuple-element(f), index=0
  dead = f32[4] add(g0, g0)
  ROOT r = f32[4] negate(g0)""")
    first, _ = run_checked(HloDCE(), text)
    second, _ = run_checked(HloDCE(), text)
    assert first.to_text() == second.to_text()
    assert not HloDCE().run(first)


def test_has_side_effect():
    text = """
HloModule m
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY main {
  x = f32[4] parameter(0)
  a = f32[4] all-reduce(x), replica_groups={}, to_apply=add
  b = f32[4] all-reduce(x), channel_id=1, replica_groups={}, to_apply=add
  c = f32[4] custom-call(x), custom_call_target="t", custom_call_has_side_effect=true
  ROOT d = f32[4] custom-call(x), custom_call_target="t"
}
"""
    module = parse(text)
    effects = {i.name: has_side_effect(i) for i in module.entry_computation.instructions}
    assert effects == {"x": False, "a": False, "b": True, "c": True, "d": False}


def test_remove_dead_operands_only_touches_what_dies():
    module = parse("""
HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  unrelated = f32[4] sine(x)
  e = f32[4] exponential(x)
  n = f32[4] negate(e)
  ROOT r = f32[4] abs(x)
}
""")
    computation = module.entry_computation
    remove_dead_operands(computation, [computation.instruction("n")])
    assert [i.name for i in computation.instructions] == ["x", "unrelated", "r"]
    verify(module)


@pytest.mark.parametrize("seed", [0, 1])
def test_results_unchanged_on_random_arguments(seed):
    text = MULTI_OUTPUT.replace("%USES", """
  g0 = f32[4] get-tuple-element(f), index=0
  g2 = f32[4] get-tuple-element(f), index=2
  ROOT r = f32[4] add(g0, g2)""")
    module = parse(text)
    args = fake_arguments(module, seed)
    before = xlapy.execute(parse(text), args, backend="interpreter")
    HloDCE().run(module)
    verify(module)
    np.testing.assert_array_equal(before[0], xlapy.execute(module, args, backend="interpreter")[0])
