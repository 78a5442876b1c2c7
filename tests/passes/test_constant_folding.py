"""HloConstantFolding: folds with the interpreter's rules, within size bounds,
never folding what must stay (rng, side effects, broadcast/iota on their own)."""

import numpy as np
import pytest

from tests.passes.util import run_passes
from xlapy.hlo import parse
from xlapy.passes import constant_folding
from xlapy.passes.constant_folding import HloConstantFolding


def run_checked(text, interpret=True):
    """Fold `text` with the verifier on; results must stay bit-identical."""
    return run_passes([HloConstantFolding()], text, seed=3, interpret=interpret)


def entry(body, extra=""):
    return f"HloModule m\n{extra}\nENTRY main {{\n{body}\n}}\n"


def opcodes(module):
    return [i.opcode.value for i in module.entry_computation.instructions]


def test_a_chain_of_constants_folds_to_one_constant():
    module, changed = run_checked(entry("""
  a = f32[] constant(2)
  b = f32[] constant(3)
  s = f32[] add(a, b)
  m = f32[] multiply(s, s)
  ROOT n = f32[] negate(m)"""))
    assert changed
    assert module.to_text() == parse(entry("  ROOT constant.3 = f32[] constant(-25)")).to_text()


def test_folds_arrays_and_keeps_the_layout():
    module, changed = run_checked(entry("""
  x = f32[2,3] parameter(0)
  c = f32[3,2]{0,1} constant({{1, 2}, {3, 4}, {5, 6}})
  t = f32[2,3]{1,0} transpose(c), dimensions={1,0}
  ROOT r = f32[2,3] add(x, t)"""))
    assert changed
    folded = module.entry_computation.instructions[1]
    assert folded.opcode.value == "constant" and folded.shape.to_text() == "f32[2,3]{1,0}"
    np.testing.assert_array_equal(folded.literal, [[1, 3, 5], [2, 4, 6]])


def test_folded_values_are_the_interpreters_edge_cases_included():
    module, changed = run_checked(entry("""
  a = s32[3] constant({7, -8, -2147483648})
  z = s32[3] constant({0, 0, -1})
  d = s32[3] divide(a, z)
  r = s32[3] remainder(a, z)
  f = f32[] constant(0.1)
  e = f32[] exponential(f)
  ROOT t = (s32[3], s32[3], f32[]) tuple(d, r, e)"""))
    assert changed
    assert opcodes(module) == ["constant", "constant", "constant", "tuple"]


@pytest.mark.parametrize("body", [
    # broadcast and iota alone: cheap to recompute, would blow a scalar up
    """  c = f32[] constant(1)
  ROOT b = f32[64,64] broadcast(c), dimensions={}""",
    """  ROOT i = s32[64] iota(), iota_dimension=0""",
    # no operand is a constant itself (XLA: algsimp's job)
    """  i = s32[8] iota(), iota_dimension=0
  ROOT n = s32[8] negate(i)""",
    # rng is random, side effects must happen
    """  lo = f32[] constant(0)
  hi = f32[] constant(1)
  ROOT r = f32[4] rng(lo, hi), distribution=rng_uniform""",
    # tuple results are never folded (no backend takes tuple constants)
    """  k = f32[3] constant({3, 1, 2})
  v = s32[3] constant({0, 1, 2})
  ROOT s = (f32[3], s32[3]) sort(k, v), dimensions={0}, to_apply=less""",
])
def test_what_is_never_folded(body):
    extra = """
less {
  la = f32[] parameter(0)
  lb = f32[] parameter(1)
  lc = s32[] parameter(2)
  ld = s32[] parameter(3)
  ROOT lt = pred[] compare(la, lb), direction=LT
}"""
    module, changed = run_checked(entry(body, extra), interpret="rng" not in body)
    assert not changed


def test_custom_calls_and_calls_holding_rng_are_not_folded():
    module, changed = run_checked(entry("""
  c = f32[] constant(1)
  cc = f32[] custom-call(c), custom_call_target="whatever"
  k = f32[] call(c), to_apply=noisy
  ROOT t = (f32[], f32[]) tuple(cc, k)""", """
noisy {
  p = f32[] parameter(0)
  r = f32[] rng(p, p), distribution=rng_uniform
  ROOT s = f32[] add(p, r)
}"""), interpret=False)
    assert not changed


def test_operations_with_broadcast_constant_operands_fold():
    module, changed = run_checked(entry("""
  c = f32[3] constant({1, 2, 3})
  two = f32[] constant(2)
  b = f32[3] broadcast(two), dimensions={}
  ROOT m = f32[3] multiply(c, b)"""))
    assert changed
    np.testing.assert_array_equal(module.entry_computation.root_instruction.literal, [2, 4, 6])
    assert opcodes(module) == ["constant"]


def test_reduce_and_calls_of_constants_fold():
    module, changed = run_checked(entry("""
  c = f32[4] constant({1, 2, 3, 4})
  z = f32[] constant(0)
  r = f32[] reduce(c, z), dimensions={0}, to_apply=add
  ROOT k = f32[] call(r), to_apply=twice""", """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
twice {
  p = f32[] parameter(0)
  ROOT d = f32[] add(p, p)
}"""))
    assert changed
    assert float(module.entry_computation.root_instruction.literal) == 20.0


def test_results_over_the_size_limit_are_not_folded(monkeypatch):
    monkeypatch.setattr(constant_folding, "MAX_RESULT_ELEMENTS", 4)
    text = entry("""
  c = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  small = f32[2,2] slice(c), slice={[0:2], [0:2]}
  big = f32[3,2] transpose(c), dimensions={1,0}
  ROOT t = (f32[2,2], f32[3,2]) tuple(small, big)""")
    module, changed = run_checked(text)
    assert changed
    assert opcodes(module) == ["constant", "constant", "transpose", "tuple"]


def test_operands_over_the_limit_are_not_folded(monkeypatch):
    monkeypatch.setattr(constant_folding, "MAX_OPERAND_ELEMENTS", 5)
    module, changed = run_checked(entry("""
  c = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  z = f32[] constant(0)
  ROOT r = f32[] reduce(c, z), dimensions={0,1}, to_apply=add""", """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}"""))
    assert not changed


def test_dead_instructions_and_fused_computations_are_left_alone():
    module, changed = run_checked(entry("""
  x = f32[] parameter(0)
  c = f32[] constant(1)
  dead = f32[] negate(c)
  ROOT f = f32[] fusion(x), kind=kLoop, calls=fused""", """
fused {
  p = f32[] parameter(0)
  one = f32[] constant(1)
  two = f32[] add(one, one)
  ROOT m = f32[] multiply(p, two)
}"""))
    assert not changed


def test_folding_is_deterministic_and_idempotent():
    text = entry("""
  x = f32[3] parameter(0)
  a = f32[3] constant({1, 2, 3})
  b = f32[3] constant({4, 5, 6})
  s = f32[3] add(a, b)
  ROOT r = f32[3] multiply(x, s)""")
    first, _ = run_checked(text)
    second, _ = run_checked(text)
    assert first.to_text() == second.to_text()
    assert not HloConstantFolding().run(first)
