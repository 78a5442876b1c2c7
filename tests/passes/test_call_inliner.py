"""CallInliner: calls replaced by their callee's body, callees removed after."""

from tests.passes.util import run_passes
from xlapy.hlo import parse
from xlapy.passes.call_inliner import CallInliner


def run_checked(text, p=None):
    """Inline with the verifier on; results must stay bit-identical."""
    return run_passes([p or CallInliner()], text, seed=5)


def opcodes(computation):
    return [i.opcode.value for i in computation.instructions]


SINGLE = """
HloModule m
relu {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  zb = f32[4] broadcast(z), dimensions={}
  ROOT r = f32[4] maximum(p, zb)
}
ENTRY main {
  x = f32[4] parameter(0)
  e = f32[4] exponential(x)
  c = f32[4] call(e), to_apply=relu
  ROOT out = f32[4] negate(c)
}
"""


def test_a_single_call_site_keeps_the_callees_names():
    module, changed = run_checked(SINGLE)
    assert changed
    assert module.to_text() == parse("""
HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  e = f32[4] exponential(x)
  z = f32[] constant(0)
  zb = f32[4] broadcast(z), dimensions={}
  r = f32[4] maximum(e, zb)
  ROOT out = f32[4] negate(r)
}
""").to_text()


def test_several_call_sites_get_fresh_names_and_the_callee_goes():
    module, changed = run_checked("""
HloModule m
square {
  p = f32[4] parameter(0)
  ROOT s = f32[4] multiply(p, p)
}
ENTRY main {
  x = f32[4] parameter(0)
  a = f32[4] call(x), to_apply=square
  ROOT b = f32[4] call(a), to_apply=square
}
""")
    assert changed
    assert [c.name for c in module.computations] == ["main"]
    names = [i.name for i in module.entry_computation.instructions]
    assert names[0] == "x" and len(set(names)) == 3 and all(n.startswith("s.") for n in names[1:])
    assert opcodes(module.entry_computation) == ["parameter", "multiply", "multiply"]


def test_nested_calls_and_a_callee_returning_its_parameter():
    module, changed = run_checked("""
HloModule m
identity {
  q = f32[4] parameter(0)
  ROOT q2 = f32[4] parameter(1)
}
inner {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  ROOT i = f32[4] call(p, n), to_apply=identity
}
ENTRY main {
  x = f32[4] parameter(0)
  ROOT c = f32[4] call(x), to_apply=inner
}
""")
    assert changed
    assert [c.name for c in module.computations] == ["main"]
    assert opcodes(module.entry_computation) == ["parameter", "negate"]


def test_reducers_stay_and_composites_are_not_inlined():
    module, changed = run_checked("""
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
total {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
}
composite_body {
  cp = f32[] parameter(0)
  ROOT cn = f32[] negate(cp)
}
ENTRY main {
  x = f32[4] parameter(0)
  t = f32[] call(x), to_apply=total
  ROOT k = f32[] call(t), to_apply=composite_body, is_composite=true
}
""")
    assert changed
    assert [c.name for c in module.computations] == ["add", "composite_body", "main"]
    assert opcodes(module.entry_computation) == ["parameter", "constant", "reduce", "call"]


def test_single_call_site_mode_skips_shared_callees():
    text = """
HloModule m
square {
  p = f32[4] parameter(0)
  ROOT s = f32[4] multiply(p, p)
}
once {
  o = f32[4] parameter(0)
  ROOT on = f32[4] negate(o)
}
ENTRY main {
  x = f32[4] parameter(0)
  a = f32[4] call(x), to_apply=square
  b = f32[4] call(a), to_apply=square
  ROOT c = f32[4] call(b), to_apply=once
}
"""
    module, changed = run_checked(text, CallInliner(single_call_site=True))
    assert changed
    assert [c.name for c in module.computations] == ["square", "main"]
    assert opcodes(module.entry_computation) == ["parameter", "call", "call", "negate"]


def test_inlining_is_deterministic():
    first, _ = run_checked(SINGLE)
    second, _ = run_checked(SINGLE)
    assert first.to_text() == second.to_text()
    assert not CallInliner().run(first)
