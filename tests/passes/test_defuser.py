"""defuser: a fused module (XLA's optimised output) becomes one flat graph, same results."""

import numpy as np

import xlapy
from xlapy.hlo import parse
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.verifier import verify
from xlapy.passes.defuser import Defuser

# XLA:CPU's form of `x.at[rows].max(u)`: the scatter wrapped in a fusion of its own,
# beside a loop fusion; the CPU backend could emit neither as one kernel
WRAPPED_SCATTER = """
HloModule wrapped
region_max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
fused_update {
  p = f32[4,3] parameter(0)
  one = f32[] constant(1)
  ones = f32[2,3] broadcast(one), dimensions={}
  head = f32[2,3] slice(p), slice={[0:2], [0:3]}
  ROOT u = f32[2,3] add(head, ones)
}
wrapped_scatter_computation {
  operand = f32[4,3] parameter(0)
  rows = s32[2,1] parameter(1)
  updates = f32[2,3] parameter(2)
  ROOT s = f32[4,3] scatter(operand, rows, updates), update_window_dims={1},
    inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
    to_apply=region_max
}
ENTRY main {
  x = f32[4,3] parameter(0)
  at = s32[2,1] constant({ {3}, {7} })
  update = f32[2,3] fusion(x), kind=kLoop, calls=fused_update
  ROOT wrapped_scatter = f32[4,3] fusion(x, at, update), kind=kLoop,
    calls=wrapped_scatter_computation
}
"""


def test_defused_module_is_flat_and_computes_the_same():
    x = np.arange(12, dtype=np.float32).reshape(4, 3) - 5
    expected = xlapy.execute(WRAPPED_SCATTER, [x], backend="interpreter")
    module = parse(WRAPPED_SCATTER)
    assert Defuser().run(module)
    verify(module)
    ops = {i.opcode for c in module.computations for i in c.instructions}
    assert Opcode.FUSION not in ops and Opcode.SCATTER in ops
    assert [c.name for c in module.computations] == ["region_max", "main"]
    np.testing.assert_array_equal(xlapy.execute(module, [x], backend="interpreter")[0],
                                  expected[0])


def test_the_cpu_backend_compiles_xla_fusions_without_the_interpreter():
    x = np.arange(12, dtype=np.float32).reshape(4, 3) - 5
    executable = xlapy.compile(parse(WRAPPED_SCATTER), backend="cpu")
    assert not executable.fallbacks
    np.testing.assert_array_equal(executable.execute(x)[0],
                                  xlapy.execute(WRAPPED_SCATTER, [x], backend="interpreter")[0])


def test_no_fusion_no_change():
    module = parse("HloModule m\nENTRY e {\n  ROOT x = f32[2] parameter(0)\n}")
    assert not Defuser().run(module)
