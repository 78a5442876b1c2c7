"""Dot rules of the algebraic simplifier: transposes folded into dimension
numbers, dots without contraction as multiplies."""

import pytest

from tests.passes.algsimp_util import check, check_unchanged, hlo

CASES = [
    ("dot_transpose_lhs", """
  a = s32[3,2] parameter(0)
  b = s32[3,4] parameter(1)
  t = s32[2,3] transpose(a), dimensions={1,0}
  ROOT r = s32[2,4] dot(t, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}""", """
  a = s32[3,2] parameter(0)
  b = s32[3,4] parameter(1)
  ROOT r = s32[2,4] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}"""),
    ("dot_transpose_rhs", """
  a = s32[2,3] parameter(0)
  b = s32[4,3] parameter(1)
  t = s32[3,4] transpose(b), dimensions={1,0}
  ROOT r = s32[2,4] dot(a, t), lhs_contracting_dims={1}, rhs_contracting_dims={0}""", """
  a = s32[2,3] parameter(0)
  b = s32[4,3] parameter(1)
  ROOT r = s32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}"""),
    ("dot_transpose_both_batched", """
  a = s32[5,3,2] parameter(0)
  b = s32[3,5,4] parameter(1)
  ta = s32[2,5,3] transpose(a), dimensions={2,0,1}
  tb = s32[5,3,4] transpose(b), dimensions={1,0,2}
  ROOT r = s32[5,2,4] dot(ta, tb), lhs_batch_dims={1}, lhs_contracting_dims={2},
      rhs_batch_dims={0}, rhs_contracting_dims={1}""", """
  a = s32[5,3,2] parameter(0)
  b = s32[3,5,4] parameter(1)
  ROOT r = s32[5,2,4] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={1},
      rhs_batch_dims={1}, rhs_contracting_dims={0}"""),
    ("dot_transpose_multiple_contracting", """
  a = s32[2,3,4] parameter(0)
  b = s32[3,4,5] parameter(1)
  t = s32[2,4,3] transpose(a), dimensions={0,2,1}
  ROOT r = s32[2,5] dot(t, b), lhs_contracting_dims={2,1}, rhs_contracting_dims={0,1}""", """
  a = s32[2,3,4] parameter(0)
  b = s32[3,4,5] parameter(1)
  ROOT r = s32[2,5] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}"""),
    ("transpose_dot", """
  x = f32[100,24] parameter(0)
  g = f32[100,16] parameter(1)
  d = f32[16,24] dot(g, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT t = f32[24,16] transpose(d), dimensions={1,0}""", """
  x = f32[100,24] parameter(0)
  g = f32[100,16] parameter(1)
  ROOT r = f32[24,16] dot(x, g), lhs_contracting_dims={0}, rhs_contracting_dims={0}"""),
    ("transpose_dot_batched", """
  a = s32[4,2,7] parameter(0)
  b = s32[3,7,4] parameter(1)
  d = s32[4,2,3] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2},
      rhs_batch_dims={2}, rhs_contracting_dims={1}
  ROOT t = s32[4,3,2] transpose(d), dimensions={0,2,1}""", """
  a = s32[4,2,7] parameter(0)
  b = s32[3,7,4] parameter(1)
  ROOT r = s32[4,3,2] dot(b, a), lhs_batch_dims={2}, lhs_contracting_dims={1},
      rhs_batch_dims={0}, rhs_contracting_dims={2}"""),
    ("dot_outer", """
  a = f32[2] parameter(0)
  b = f32[3] parameter(1)
  ROOT r = f32[2,3] dot(a, b), lhs_contracting_dims={}, rhs_contracting_dims={}""", """
  a = f32[2] parameter(0)
  b = f32[3] parameter(1)
  ba = f32[2,3] broadcast(a), dimensions={0}
  bb = f32[2,3] broadcast(b), dimensions={1}
  ROOT r = f32[2,3] multiply(ba, bb)"""),
    ("dot_outer_scalar", """
  a = f32[] parameter(0)
  b = f32[3] parameter(1)
  ROOT r = f32[3] dot(a, b), lhs_contracting_dims={}, rhs_contracting_dims={}""", """
  a = f32[] parameter(0)
  b = f32[3] parameter(1)
  ba = f32[3] broadcast(a), dimensions={}
  ROOT r = f32[3] multiply(ba, b)"""),
    ("dot_outer_batched", """
  a = bf16[4,2] parameter(0)
  b = bf16[4,3] parameter(1)
  ROOT r = bf16[4,2,3] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={},
      rhs_batch_dims={0}, rhs_contracting_dims={}""", """
  a = bf16[4,2] parameter(0)
  b = bf16[4,3] parameter(1)
  ba = bf16[4,2,3] broadcast(a), dimensions={0,1}
  bb = bf16[4,2,3] broadcast(b), dimensions={0,2}
  ROOT r = bf16[4,2,3] multiply(ba, bb)"""),
]


@pytest.mark.parametrize("name,before,after", CASES, ids=[c[0] for c in CASES])
def test_rule(name, before, after):
    check(hlo(before), hlo(after))


def test_dot_transpose_float_results_agree():
    """f32 products summed in the same order: the interpreter's results agree."""
    check(hlo("""
  a = f32[8,16] parameter(0)
  b = f32[8,5] parameter(1)
  t = f32[16,8] transpose(a), dimensions={1,0}
  ROOT r = f32[16,5] dot(t, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"""), hlo("""
  a = f32[8,16] parameter(0)
  b = f32[8,5] parameter(1)
  ROOT r = f32[16,5] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}"""),
        rtol=1e-6)


@pytest.mark.parametrize("body", [
    # Folding would reorder the dims the dot keeps (the result would be transposed).
    """
  a = s32[2,3,4] parameter(0)
  b = s32[4,5] parameter(1)
  t = s32[3,2,4] transpose(a), dimensions={1,0,2}
  ROOT r = s32[3,2,5] dot(t, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}""",
    # A dot that widens its result type is not a multiply of the operands.
    """
  a = bf16[2] parameter(0)
  b = bf16[3] parameter(1)
  ROOT r = f32[2,3] dot(a, b), lhs_contracting_dims={}, rhs_contracting_dims={}""",
    # The dot has another user: swapping would compute the product twice.
    """
  x = s32[6,5] parameter(0)
  g = s32[6,3] parameter(1)
  d = s32[3,5] dot(g, x), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  t = s32[5,3] transpose(d), dimensions={1,0}
  ROOT r = (s32[5,3], s32[3,5]) tuple(t, d)""",
    # The transpose moves a batch dim: not the swapped dot's order.
    """
  a = s32[4,2,7] parameter(0)
  b = s32[4,7,3] parameter(1)
  d = s32[4,2,3] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2},
      rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT t = s32[3,4,2] transpose(d), dimensions={2,0,1}""",
], ids=["reordering_transpose", "widening_outer", "dot_used_twice", "batch_dim_moved"])
def test_rule_does_not_apply(body):
    check_unchanged(hlo(body))
