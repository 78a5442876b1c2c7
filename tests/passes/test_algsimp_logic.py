"""Logic, select, compare and convert rules of the algebraic simplifier:
HLO text in, HLO text out, same interpreter results before and after."""

import numpy as np
import pytest

from tests.passes.algsimp_util import check, check_unchanged, hlo

CASES = [
    ("not_not", """
  p = pred[4] parameter(0)
  a = pred[4] not(p)
  ROOT r = pred[4] not(a)""", """
  ROOT p = pred[4] parameter(0)"""),
    ("not_not_int", """
  p = s32[4] parameter(0)
  a = s32[4] not(p)
  ROOT r = s32[4] not(a)""", """
  ROOT p = s32[4] parameter(0)"""),
    ("and_self", """
  p = pred[4] parameter(0)
  ROOT r = pred[4] and(p, p)""", """
  ROOT p = pred[4] parameter(0)"""),
    ("and_zero", """
  p = s32[4] parameter(0)
  z = s32[] constant(0)
  zb = s32[4] broadcast(z), dimensions={}
  ROOT r = s32[4] and(zb, p)""", """
  p = s32[4] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[4] broadcast(z), dimensions={}"""),
    ("and_ones", """
  p = u8[4] parameter(0)
  c = u8[] constant(255)
  cb = u8[4] broadcast(c), dimensions={}
  ROOT r = u8[4] and(p, cb)""", """
  ROOT p = u8[4] parameter(0)"""),
    ("and_true", """
  p = pred[4] parameter(0)
  c = pred[] constant(true)
  cb = pred[4] broadcast(c), dimensions={}
  ROOT r = pred[4] and(cb, p)""", """
  ROOT p = pred[4] parameter(0)"""),
    ("or_self", """
  p = s32[4] parameter(0)
  ROOT r = s32[4] or(p, p)""", """
  ROOT p = s32[4] parameter(0)"""),
    ("or_zero", """
  p = pred[4] parameter(0)
  c = pred[] constant(false)
  cb = pred[4] broadcast(c), dimensions={}
  ROOT r = pred[4] or(p, cb)""", """
  ROOT p = pred[4] parameter(0)"""),
    ("or_ones", """
  p = s16[4] parameter(0)
  c = s16[] constant(-1)
  cb = s16[4] broadcast(c), dimensions={}
  ROOT r = s16[4] or(p, cb)""", """
  p = s16[4] parameter(0)
  c = s16[] constant(-1)
  ROOT r = s16[4] broadcast(c), dimensions={}"""),
    ("xor_self", """
  p = u32[4] parameter(0)
  ROOT r = u32[4] xor(p, p)""", """
  p = u32[4] parameter(0)
  z = u32[] constant(0)
  ROOT r = u32[4] broadcast(z), dimensions={}"""),
    ("xor_zero", """
  p = s32[4] parameter(0)
  z = s32[] constant(0)
  zb = s32[4] broadcast(z), dimensions={}
  ROOT r = s32[4] xor(zb, p)""", """
  ROOT p = s32[4] parameter(0)"""),
    ("select_true", """
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  t = pred[] constant(true)
  tb = pred[4] broadcast(t), dimensions={}
  ROOT r = f32[4] select(tb, p, q)""", """
  ROOT p = f32[4] parameter(0)
  q = f32[4] parameter(1)"""),
    ("select_false", """
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  t = pred[4] constant({false, false, false, false})
  ROOT r = f32[4] select(t, p, q)""", """
  p = f32[4] parameter(0)
  ROOT q = f32[4] parameter(1)"""),
    ("select_same", """
  c = pred[4] parameter(0)
  p = f32[4] parameter(1)
  ROOT r = f32[4] select(c, p, p)""", """
  c = pred[4] parameter(0)
  ROOT p = f32[4] parameter(1)"""),
    ("select_not", """
  c = pred[4] parameter(0)
  p = f32[4] parameter(1)
  q = f32[4] parameter(2)
  n = pred[4] not(c)
  ROOT r = f32[4] select(n, p, q)""", """
  c = pred[4] parameter(0)
  p = f32[4] parameter(1)
  q = f32[4] parameter(2)
  ROOT r = f32[4] select(c, q, p)"""),
    ("compare_self_eq", """
  p = s32[4] parameter(0)
  ROOT r = pred[4] compare(p, p), direction=GE""", """
  p = s32[4] parameter(0)
  t = pred[] constant(true)
  ROOT r = pred[4] broadcast(t), dimensions={}"""),
    ("compare_self_lt", """
  p = u8[4] parameter(0)
  ROOT r = pred[4] compare(p, p), direction=LT""", """
  p = u8[4] parameter(0)
  f = pred[] constant(false)
  ROOT r = pred[4] broadcast(f), dimensions={}"""),
    ("compare_pred_eq_true", """
  p = pred[4] parameter(0)
  t = pred[] constant(true)
  tb = pred[4] broadcast(t), dimensions={}
  ROOT r = pred[4] compare(p, tb), direction=EQ""", """
  ROOT p = pred[4] parameter(0)"""),
    ("compare_pred_ne_false", """
  p = pred[4] parameter(0)
  f = pred[] constant(false)
  fb = pred[4] broadcast(f), dimensions={}
  ROOT r = pred[4] compare(fb, p), direction=NE""", """
  ROOT p = pred[4] parameter(0)"""),
    ("compare_unsigned_below_zero", """
  p = u32[4] parameter(0)
  z = u32[] constant(0)
  zb = u32[4] broadcast(z), dimensions={}
  ROOT r = pred[4] compare(p, zb), direction=LT""", """
  p = u32[4] parameter(0)
  f = pred[] constant(false)
  ROOT r = pred[4] broadcast(f), dimensions={}"""),
    ("compare_zero_le_unsigned", """
  p = u32[4] parameter(0)
  z = u32[] constant(0)
  zb = u32[4] broadcast(z), dimensions={}
  ROOT r = pred[4] compare(zb, p), direction=LE""", """
  p = u32[4] parameter(0)
  t = pred[] constant(true)
  ROOT r = pred[4] broadcast(t), dimensions={}"""),
    ("convert_same_type", """
  p = f32[4] parameter(0)
  ROOT r = f32[4] convert(p)""", """
  ROOT p = f32[4] parameter(0)"""),
    ("convert_round_trip", """
  p = f32[4] parameter(0)
  w = f64[4] convert(p)
  ROOT r = f32[4] convert(w)""", """
  ROOT p = f32[4] parameter(0)"""),
    ("convert_round_trip_int", """
  p = s8[4] parameter(0)
  w = f16[4] convert(p)
  ROOT r = s8[4] convert(w)""", """
  ROOT p = s8[4] parameter(0)"""),
    ("convert_round_trip_unsigned", """
  p = u16[4] parameter(0)
  w = s32[4] convert(p)
  ROOT r = u16[4] convert(w)""", """
  ROOT p = u16[4] parameter(0)"""),
    ("clamp_clamp", """
  lo = f32[] parameter(0)
  p = f32[4] parameter(1)
  hi = f32[] parameter(2)
  a = f32[4] clamp(lo, p, hi)
  ROOT r = f32[4] clamp(lo, a, hi)""", """
  lo = f32[] parameter(0)
  p = f32[4] parameter(1)
  hi = f32[] parameter(2)
  ROOT r = f32[4] clamp(lo, p, hi)"""),
    ("reduce_precision_noop", """
  p = bf16[4] parameter(0)
  ROOT r = bf16[4] reduce-precision(p), exponent_bits=8, mantissa_bits=7""", """
  ROOT p = bf16[4] parameter(0)"""),
]


@pytest.mark.parametrize("name,before,after", CASES, ids=[c[0] for c in CASES])
def test_rule(name, before, after):
    check(hlo(before), hlo(after))


def test_convert_round_trip_keeps_extremes():
    before = hlo("""
  p = s32[4] parameter(0)
  w = f64[4] convert(p)
  ROOT r = s32[4] convert(w)""")
    inputs = [np.array([-2**31, 2**31 - 1, 0, -1], np.int32)]
    check(before, hlo("  ROOT p = s32[4] parameter(0)"), inputs=inputs)


@pytest.mark.parametrize("body", [
    # f32 -> f16 loses values: the pair stays.
    """
  p = f32[4] parameter(0)
  w = f16[4] convert(p)
  ROOT r = f32[4] convert(w)""",
    # s32 -> f32 rounds large integers.
    """
  p = s32[4] parameter(0)
  w = f32[4] convert(p)
  ROOT r = s32[4] convert(w)""",
    # s8 -> u8 loses the sign.
    """
  p = s8[4] parameter(0)
  w = u8[4] convert(p)
  ROOT r = s8[4] convert(w)""",
    # x == x is false for NaN: floats keep the compare.
    """
  p = f32[4] parameter(0)
  ROOT r = pred[4] compare(p, p), direction=EQ""",
    # A reduce-precision that rounds.
    """
  p = f32[4] parameter(0)
  ROOT r = f32[4] reduce-precision(p), exponent_bits=8, mantissa_bits=7""",
], ids=["f32_f16_f32", "s32_f32_s32", "s8_u8_s8", "float_self_compare", "real_rounding"])
def test_rule_does_not_apply(body):
    check_unchanged(hlo(body))
