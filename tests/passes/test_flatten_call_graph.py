"""flatten-call-graph: each loop site runs its own copy of its body, same results."""

import numpy as np

import xlapy
from xlapy.hlo import parse
from xlapy.hlo.verifier import verify
from xlapy.passes.flatten_call_graph import FlattenCallGraph

# The shape JAX's threefry takes in x64 mode: several loops calling one body and one
# condition. The CPU backend laid the shared body out for one loop only, and both
# loops ran zero iterations (found by the JAX campaign, program 522: randint)
SHARED_LOOP = """HloModule shared_loop
body {
  s = (s64[], u32[]) parameter(0)
  i = s64[] get-tuple-element(s), index=0
  one = s64[] constant(1)
  n = s64[] add(i, one)
  v = u32[] get-tuple-element(s), index=1
  three = u32[] constant(3)
  m = u32[] multiply(v, three)
  ROOT t = (s64[], u32[]) tuple(n, m)
}
cond {
  st = (s64[], u32[]) parameter(0)
  k = s64[] get-tuple-element(st), index=0
  five = s64[] constant(5)
  ROOT lt = pred[] compare(k, five), direction=LT
}
inner {
  x = (s64[], u32[]) parameter(0)
  ROOT w = (s64[], u32[]) while(x), condition=cond, body=body
}
ENTRY main {
  a = s64[] parameter(0)
  b = u32[] parameter(1)
  c = s64[] parameter(2)
  init = (s64[], u32[]) tuple(a, b)
  w1 = (s64[], u32[]) while(init), condition=cond, body=body
  init2 = (s64[], u32[]) tuple(c, b)
  w2 = (s64[], u32[]) while(init2), condition=cond, body=body
  c1 = (s64[], u32[]) call(init), to_apply=inner
  c2 = (s64[], u32[]) call(init2), to_apply=inner
  ROOT r = ((s64[], u32[]), (s64[], u32[]), (s64[], u32[]), (s64[], u32[])) tuple(w1, w2, c1, c2)
}
"""
ARGS = [np.int64(0), np.uint32(7), np.int64(3)]


def test_each_site_gets_its_own_computations():
    module = parse(SHARED_LOOP)
    assert FlattenCallGraph().run(module)
    verify(module)
    sites = [c for i in module.entry_computation.instructions for c in i.called_computations]
    assert len(sites) == len({id(c) for c in sites}) == 6
    inner_loops = [i for c in module.computations for i in c.instructions
                   if i.opcode.value == "while" and c is not module.entry_computation]
    bodies = [i.attr("body") for i in inner_loops] + [i.attr("body") for i in
                                                      module.entry_computation.instructions
                                                      if i.opcode.value == "while"]
    assert len({id(b) for b in bodies}) == 4
    assert not FlattenCallGraph().run(module)   # already flat
    expected = xlapy.execute(SHARED_LOOP, ARGS, backend="interpreter")
    assert str(xlapy.execute(module, ARGS, backend="interpreter")) == str(expected)


def test_the_cpu_backend_runs_loops_that_share_a_body():
    expected = xlapy.execute(SHARED_LOOP, ARGS, backend="interpreter")
    actual = xlapy.execute(SHARED_LOOP, ARGS, backend="cpu")
    for e, a in zip(expected, actual):
        for x, y in zip(e, a):
            np.testing.assert_array_equal(y, x)
