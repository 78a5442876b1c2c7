"""Reshape, transpose, broadcast, iota, constant, copy and get-tuple-element
rules of the algebraic simplifier: HLO text in, HLO text out, same
interpreter results before and after."""

import numpy as np
import pytest

from tests.passes.algsimp_util import check, check_unchanged, hlo, run_pass

CASES = [
    ("reshape_noop", """
  p = f32[2,3] parameter(0)
  ROOT r = f32[2,3] reshape(p)""", """
  ROOT p = f32[2,3] parameter(0)"""),
    ("reshape_reshape", """
  p = f32[2,3,4] parameter(0)
  a = f32[6,4] reshape(p)
  ROOT r = f32[24] reshape(a)""", """
  p = f32[2,3,4] parameter(0)
  ROOT r = f32[24] reshape(p)"""),
    ("reshape_reshape_back", """
  p = f32[2,3] parameter(0)
  a = f32[6] reshape(p)
  ROOT r = f32[2,3] reshape(a)""", """
  ROOT p = f32[2,3] parameter(0)"""),
    ("reshape_scalar_broadcast", """
  p = f32[] parameter(0)
  a = f32[2,3] broadcast(p), dimensions={}
  ROOT r = f32[3,1,2] reshape(a)""", """
  p = f32[] parameter(0)
  ROOT r = f32[3,1,2] broadcast(p), dimensions={}"""),
    ("transpose_identity", """
  p = f32[2,3] parameter(0)
  ROOT r = f32[2,3] transpose(p), dimensions={0,1}""", """
  ROOT p = f32[2,3] parameter(0)"""),
    ("transpose_transpose", """
  p = f32[2,3,4] parameter(0)
  a = f32[3,4,2] transpose(p), dimensions={1,2,0}
  ROOT r = f32[4,2,3] transpose(a), dimensions={1,2,0}""", """
  p = f32[2,3,4] parameter(0)
  ROOT r = f32[4,2,3] transpose(p), dimensions={2,0,1}"""),
    ("transpose_transpose_inverse", """
  p = s32[2,3,4] parameter(0)
  a = s32[4,2,3] transpose(p), dimensions={2,0,1}
  ROOT r = s32[2,3,4] transpose(a), dimensions={1,2,0}""", """
  ROOT p = s32[2,3,4] parameter(0)"""),
    ("transpose_degenerate", """
  p = f32[2,1,3] parameter(0)
  ROOT r = f32[1,2,3] transpose(p), dimensions={1,0,2}""", """
  p = f32[2,1,3] parameter(0)
  ROOT r = f32[1,2,3] reshape(p)"""),
    ("broadcast_broadcast", """
  p = f32[3] parameter(0)
  a = f32[2,3] broadcast(p), dimensions={1}
  ROOT r = f32[2,5,3] broadcast(a), dimensions={0,2}""", """
  p = f32[3] parameter(0)
  ROOT r = f32[2,5,3] broadcast(p), dimensions={2}"""),
    ("broadcast_reshape", """
  p = f32[2,3] parameter(0)
  ROOT r = f32[2,1,3] broadcast(p), dimensions={0,2}""", """
  p = f32[2,3] parameter(0)
  ROOT r = f32[2,1,3] reshape(p)"""),
    ("broadcast_iota", """
  i = s32[3] iota(), iota_dimension=0
  ROOT r = s32[2,3] broadcast(i), dimensions={1}""", """
  ROOT r = s32[2,3] iota(), iota_dimension=1"""),
    ("iota_degenerate", """
  ROOT r = f32[1,4] iota(), iota_dimension=0""", """
  z = f32[] constant(0)
  ROOT r = f32[1,4] broadcast(z), dimensions={}"""),
    ("constant_uniform", """
  p = f32[2,2] parameter(0)
  c = f32[2,2] constant({{1.5, 1.5}, {1.5, 1.5}})
  ROOT r = f32[2,2] add(p, c)""", """
  p = f32[2,2] parameter(0)
  c = f32[] constant(1.5)
  b = f32[2,2] broadcast(c), dimensions={}
  ROOT r = f32[2,2] add(p, b)"""),
    ("copy_copy", """
  p = f32[2,3]{1,0} parameter(0)
  a = f32[2,3]{0,1} copy(p)
  ROOT r = f32[2,3]{1,0} copy(a)""", """
  p = f32[2,3] parameter(0)
  ROOT r = f32[2,3] copy(p)"""),
    ("copy_noop", """
  p = f32[2,3] parameter(0)
  a = f32[2,3] copy(p)
  ROOT r = f32[2,3] negate(a)""", """
  p = f32[2,3] parameter(0)
  ROOT r = f32[2,3] negate(p)"""),
    ("get_tuple_element_of_tuple", """
  p = f32[2] parameter(0)
  q = s32[3] parameter(1)
  t = (f32[2], s32[3]) tuple(p, q)
  ROOT r = s32[3] get-tuple-element(t), index=1""", """
  p = f32[2] parameter(0)
  ROOT q = s32[3] parameter(1)"""),
    ("sink_broadcast", """
  p = f32[4] parameter(0)
  one = f32[] constant(1)
  bo = f32[4,8] broadcast(one), dimensions={}
  bp = f32[4,8] broadcast(p), dimensions={0}
  ROOT r = f32[4,8] divide(bo, bp)""", """
  p = f32[4] parameter(0)
  one = f32[] constant(1)
  bo = f32[4] broadcast(one), dimensions={}
  d = f32[4] divide(bo, p)
  ROOT r = f32[4,8] broadcast(d), dimensions={0}"""),
    ("sink_broadcast_compare", """
  p = f32[3] parameter(0)
  q = f32[3] parameter(1)
  bp = f32[3,5] broadcast(p), dimensions={0}
  bq = f32[3,5] broadcast(q), dimensions={0}
  ROOT r = pred[3,5] compare(bp, bq), direction=LT""", """
  p = f32[3] parameter(0)
  q = f32[3] parameter(1)
  c = pred[3] compare(p, q), direction=LT
  ROOT r = pred[3,5] broadcast(c), dimensions={0}"""),
]


@pytest.mark.parametrize("name,before,after", CASES, ids=[c[0] for c in CASES])
def test_rule(name, before, after):
    check(hlo(before), hlo(after))


def test_constant_uniform_tells_signed_zeros_apart():
    check_unchanged(hlo("""
  p = f32[2] parameter(0)
  c = f32[2] constant({0, -0})
  ROOT r = f32[2] multiply(p, c)"""))


@pytest.mark.parametrize("body", [
    # Swapping two dims larger than 1 is a real transpose.
    """
  p = f32[2,1,3] parameter(0)
  ROOT r = f32[3,1,2] transpose(p), dimensions={2,1,0}""",
    # A broadcast that reorders dims (same element count) is not a reshape.
    """
  p = f32[2,3] parameter(0)
  ROOT r = f32[3,2] broadcast(p), dimensions={1,0}""",
    # The entry's root copy keeps the result in a buffer of its own.
    """
  p = f32[2,3] parameter(0)
  ROOT r = f32[2,3] copy(p)""",
    # A copy that changes the layout stays.
    """
  p = f32[2,3]{1,0} parameter(0)
  c = f32[2,3]{0,1} copy(p)
  ROOT r = f32[2,3]{1,0} negate(c)""",
    # A constant with different elements stays a constant.
    """
  p = s32[3] parameter(0)
  c = s32[3] constant({1, 2, 3})
  ROOT r = s32[3] add(p, c)""",
    # Broadcasts of one shape by different dims: no smaller op computes it.
    """
  p = f32[4] parameter(0)
  a = f32[4,4] broadcast(p), dimensions={0}
  b = f32[4,4] broadcast(p), dimensions={1}
  ROOT r = f32[4,4] add(a, b)""",
    # One operand is not a broadcast.
    """
  p = f32[4] parameter(0)
  q = f32[4,8] parameter(1)
  a = f32[4,8] broadcast(p), dimensions={0}
  ROOT r = f32[4,8] add(a, q)""",
], ids=["real_transpose", "transposing_broadcast", "root_copy", "layout_copy", "iota_constant",
        "broadcasts_by_other_dims", "not_all_broadcasts"])
def test_rule_does_not_apply(body):
    check_unchanged(hlo(body))


def test_root_keeps_its_layout():
    """Replacing the entry root by an instruction with another layout puts a copy
    in between, so entry_computation_layout still holds."""
    text = """HloModule m, entry_computation_layout={(f32[2,3]{0,1})->f32[2,3]{0,1}}
ENTRY e {
  p = f32[2,3]{0,1} parameter(0)
  t = f32[3,2]{1,0} transpose(p), dimensions={1,0}
  ROOT r = f32[2,3]{0,1} transpose(t), dimensions={1,0}
}
"""
    module, changed = run_pass(text)
    assert changed
    root = module.entry_computation.root_instruction
    assert root.shape.layout.minor_to_major == (0, 1)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    import xlapy
    assert np.array_equal(xlapy.execute(module, [x], backend="interpreter")[0], x)
