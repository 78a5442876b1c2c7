"""Reduce rules of the algebraic simplifier: HLO text in, HLO text out,
interpreter results equal (or, where a float reduction is reassociated as
XLA allows, close)."""

import numpy as np
import pytest

from tests.passes.algsimp_util import check, check_unchanged, hlo

REDUCERS = """
add_f32 {
  a0 = f32[] parameter(0)
  b0 = f32[] parameter(1)
  ROOT r0 = f32[] add(a0, b0)
}
add_s32 {
  a1 = s32[] parameter(0)
  b1 = s32[] parameter(1)
  ROOT r1 = s32[] add(a1, b1)
}
max_f32 {
  a2 = f32[] parameter(0)
  b2 = f32[] parameter(1)
  ROOT r2 = f32[] maximum(a2, b2)
}
sub_f32 {
  a3 = f32[] parameter(0)
  b3 = f32[] parameter(1)
  ROOT r3 = f32[] subtract(b3, a3)
}
or_pred {
  a4 = pred[] parameter(0)
  b4 = pred[] parameter(1)
  ROOT r4 = pred[] or(a4, b4)
}
"""


def module(body: str) -> str:
    return hlo(body, extra=REDUCERS)


CASES = [
    ("reduce_empty", """
  p = f32[3,0] parameter(0)
  z = f32[] constant(1)
  ROOT r = f32[3] reduce(p, z), dimensions={1}, to_apply=add_f32""", """
  p = f32[3,0] parameter(0)
  z = f32[] constant(1)
  ROOT r = f32[3] broadcast(z), dimensions={}"""),
    ("reduce_elementwise", """
  p = f32[3,1] parameter(0)
  i = f32[] parameter(1)
  ROOT r = f32[3] reduce(p, i), dimensions={1}, to_apply=add_f32""", """
  p = f32[3,1] parameter(0)
  i = f32[] parameter(1)
  ib = f32[3] broadcast(i), dimensions={}
  x = f32[3] reshape(p)
  ROOT r = f32[3] add(ib, x)"""),
    ("reduce_elementwise_no_dims_swapped_reducer", """
  p = f32[4] parameter(0)
  i = f32[] parameter(1)
  ROOT r = f32[4] reduce(p, i), dimensions={}, to_apply=sub_f32""", """
  p = f32[4] parameter(0)
  i = f32[] parameter(1)
  ib = f32[4] broadcast(i), dimensions={}
  ROOT r = f32[4] subtract(p, ib)"""),
    ("reduce_broadcast_sum", """
  p = s32[3] parameter(0)
  z = s32[] constant(5)
  b = s32[4,3,2] broadcast(p), dimensions={1}
  ROOT r = s32[3] reduce(b, z), dimensions={0,2}, to_apply=add_s32""", """
  p = s32[3] parameter(0)
  z = s32[] constant(5)
  zb = s32[3] broadcast(z), dimensions={}
  n = s32[] constant(8)
  nb = s32[3] broadcast(n), dimensions={}
  m = s32[3] multiply(p, nb)
  ROOT r = s32[3] add(zb, m)"""),
    ("reduce_broadcast_sum_keeps_new_dims", """
  p = s32[3] parameter(0)
  z = s32[] parameter(1)
  b = s32[3,4,2] broadcast(p), dimensions={0}
  ROOT r = s32[3,2] reduce(b, z), dimensions={1}, to_apply=add_s32""", """
  p = s32[3] parameter(0)
  z = s32[] parameter(1)
  zb = s32[3] broadcast(z), dimensions={}
  n = s32[] constant(4)
  nb = s32[3] broadcast(n), dimensions={}
  m = s32[3] multiply(p, nb)
  a = s32[3] add(zb, m)
  ROOT r = s32[3,2] broadcast(a), dimensions={0}"""),
    ("reduce_broadcast_idempotent", """
  p = f32[3] parameter(0)
  i = f32[] parameter(1)
  b = f32[2,3] broadcast(p), dimensions={1}
  ROOT r = f32[3] reduce(b, i), dimensions={0}, to_apply=max_f32""", """
  p = f32[3] parameter(0)
  i = f32[] parameter(1)
  ib = f32[3] broadcast(i), dimensions={}
  ROOT r = f32[3] maximum(ib, p)"""),
    ("reduce_broadcast_idempotent_pred", """
  p = pred[] parameter(0)
  i = pred[] parameter(1)
  b = pred[2,3] broadcast(p), dimensions={}
  ROOT r = pred[] reduce(b, i), dimensions={0,1}, to_apply=or_pred""", """
  p = pred[] parameter(0)
  i = pred[] parameter(1)
  ROOT r = pred[] or(i, p)"""),
    ("reduce_reduce", """
  p = s32[2,3,4] parameter(0)
  z = s32[] constant(0)
  a = s32[2,4] reduce(p, z), dimensions={1}, to_apply=add_s32
  ROOT r = s32[4] reduce(a, z), dimensions={0}, to_apply=add_s32""", """
  p = s32[2,3,4] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[4] reduce(p, z), dimensions={0,1}, to_apply=add_s32"""),
    ("reduce_reduce_max", """
  p = f32[2,3,4] parameter(0)
  i = f32[] constant(-inf)
  a = f32[3,4] reduce(p, i), dimensions={0}, to_apply=max_f32
  ROOT r = f32[3] reduce(a, i), dimensions={1}, to_apply=max_f32""", """
  p = f32[2,3,4] parameter(0)
  i = f32[] constant(-inf)
  ROOT r = f32[3] reduce(p, i), dimensions={0,2}, to_apply=max_f32"""),
    ("reduce_transpose", """
  p = s32[2,3,4] parameter(0)
  z = s32[] constant(0)
  t = s32[4,2,3] transpose(p), dimensions={2,0,1}
  ROOT r = s32[2] reduce(t, z), dimensions={0,2}, to_apply=add_s32""", """
  p = s32[2,3,4] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[2] reduce(p, z), dimensions={1,2}, to_apply=add_s32"""),
    ("reduce_reshape", """
  p = s32[2,3,4,5] parameter(0)
  z = s32[] constant(0)
  rs = s32[2,3,20] reshape(p)
  ROOT r = s32[20] reduce(rs, z), dimensions={0,1}, to_apply=add_s32""", """
  p = s32[2,3,4,5] parameter(0)
  z = s32[] constant(0)
  q0 = s32[4,5] reduce(p, z), dimensions={0,1}, to_apply=add_s32
  ROOT r = s32[20] reshape(q0)"""),
]


@pytest.mark.parametrize("name,before,after", CASES, ids=[c[0] for c in CASES])
def test_rule(name, before, after):
    check(module(before), module(after))


def test_reduce_broadcast_sum_float_rounding_is_within_xla_freedom():
    """n copies of x summed vs x * n: XLA rewrites float sums too; results agree
    to rounding."""
    check(module("""
  p = f32[3] parameter(0)
  z = f32[] constant(0)
  b = f32[3,1000] broadcast(p), dimensions={0}
  ROOT r = f32[3] reduce(b, z), dimensions={1}, to_apply=add_f32"""), module("""
  p = f32[3] parameter(0)
  n = f32[] constant(1000)
  nb = f32[3] broadcast(n), dimensions={}
  ROOT r = f32[3] multiply(p, nb)"""), rtol=1e-5)


def test_reduce_reduce_float_sum_reassociates():
    check(module("""
  p = f32[4,8,16] parameter(0)
  z = f32[] constant(0)
  a = f32[4,16] reduce(p, z), dimensions={1}, to_apply=add_f32
  ROOT r = f32[16] reduce(a, z), dimensions={0}, to_apply=add_f32"""), module("""
  p = f32[4,8,16] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[16] reduce(p, z), dimensions={0,1}, to_apply=add_f32"""), rtol=1e-5)


def test_reduce_elementwise_keeps_a_non_identity_init():
    check(module("""
  p = s32[2,1] parameter(0)
  i = s32[] constant(7)
  ROOT r = s32[2] reduce(p, i), dimensions={1}, to_apply=add_s32"""), module("""
  p = s32[2,1] parameter(0)
  i = s32[] constant(7)
  ib = s32[2] broadcast(i), dimensions={}
  x = s32[2] reshape(p)
  ROOT r = s32[2] add(ib, x)"""), inputs=[np.array([[1], [-3]], np.int32)])


@pytest.mark.parametrize("body", [
    # Merging two sums from 1 would add the init once instead of twice.
    """
  p = s32[2,3] parameter(0)
  o = s32[] constant(1)
  a = s32[2] reduce(p, o), dimensions={1}, to_apply=add_s32
  ROOT r = s32[] reduce(a, o), dimensions={0}, to_apply=add_s32""",
    # Different reducers.
    """
  p = f32[2,3] parameter(0)
  z = f32[] constant(0)
  i = f32[] constant(-inf)
  a = f32[2] reduce(p, z), dimensions={1}, to_apply=add_f32
  ROOT r = f32[] reduce(a, i), dimensions={0}, to_apply=max_f32""",
    # A reduced dim that the broadcast did not add.
    """
  p = s32[3] parameter(0)
  z = s32[] constant(0)
  b = s32[2,3] broadcast(p), dimensions={1}
  ROOT r = s32[2] reduce(b, z), dimensions={1}, to_apply=add_s32""",
    # The transpose reorders the kept dims: folding it would transpose the result.
    """
  p = s32[2,3,4] parameter(0)
  z = s32[] constant(0)
  t = s32[3,2,4] transpose(p), dimensions={1,0,2}
  ROOT r = s32[3,2] reduce(t, z), dimensions={2}, to_apply=add_s32""",
    # subtract is not associative: its reduce order must stay.
    """
  p = f32[2,3] parameter(0)
  z = f32[] constant(0)
  t = f32[3,2] transpose(p), dimensions={1,0}
  ROOT r = f32[3] reduce(t, z), dimensions={1}, to_apply=sub_f32""",
], ids=["non_identity_init", "different_reducers", "original_dim_reduced",
        "reordering_transpose", "non_associative_reducer"])
def test_rule_does_not_apply(body):
    check_unchanged(module(body))


def test_reduce_reshape_keeps_a_reshape_mixing_reduced_and_kept_dims():
    """[6,4] -> [4,6] mixes every dimension: the sums over its rows are not sums over
    any dimensions of the operand."""
    check_unchanged(module("""
  p = f32[6,4] parameter(0)
  z = f32[] constant(0)
  rs = f32[4,6] reshape(p)
  ROOT r = f32[6] reduce(rs, z), dimensions={0}, to_apply=add_f32"""))


def test_reduce_reshape_float_sums_are_close():
    """Attention's heads merged back and summed over batch and seq: the sum of the
    transpose (which reduce_transpose takes on in the next round)."""
    check(module("""
  p = f32[4,2,8,16] parameter(0)
  z = f32[] constant(0)
  t = f32[4,8,2,16] transpose(p), dimensions={0,2,1,3}
  rs = f32[4,8,32] reshape(t)
  ROOT r = f32[32] reduce(rs, z), dimensions={0,1}, to_apply=add_f32"""), module("""
  p = f32[4,2,8,16] parameter(0)
  t = f32[4,8,2,16] transpose(p), dimensions={0,2,1,3}
  z = f32[] constant(0)
  q0 = f32[2,16] reduce(t, z), dimensions={0,1}, to_apply=add_f32
  ROOT r = f32[32] reshape(q0)"""), rtol=1e-5)
