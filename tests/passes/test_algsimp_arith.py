"""Arithmetic rules of the algebraic simplifier: HLO text in, HLO text out,
same interpreter results before and after."""

import numpy as np
import pytest

from tests.passes.algsimp_util import check, check_unchanged, hlo

# (rule, before, after): entry bodies; parameters are named p, q.
CASES = [
    ("add_zero", """
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  zb = f32[4] broadcast(z), dimensions={}
  ROOT r = f32[4] add(p, zb)""", """
  ROOT p = f32[4] parameter(0)"""),
    ("add_zero_lhs", """
  p = s32[4] parameter(0)
  z = s32[4] constant({0, 0, 0, 0})
  ROOT r = s32[4] add(z, p)""", """
  ROOT p = s32[4] parameter(0)"""),
    ("add_negate", """
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  n = f32[4] negate(q)
  ROOT r = f32[4] add(p, n)""", """
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  ROOT r = f32[4] subtract(p, q)"""),
    ("add_negate_lhs", """
  p = s32[4] parameter(0)
  q = s32[4] parameter(1)
  n = s32[4] negate(p)
  ROOT r = s32[4] add(n, q)""", """
  p = s32[4] parameter(0)
  q = s32[4] parameter(1)
  ROOT r = s32[4] subtract(q, p)"""),
    ("subtract_zero", """
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  zb = f32[4] broadcast(z), dimensions={}
  ROOT r = f32[4] subtract(p, zb)""", """
  ROOT p = f32[4] parameter(0)"""),
    ("subtract_self", """
  p = s32[4] parameter(0)
  ROOT r = s32[4] subtract(p, p)""", """
  p = s32[4] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[4] broadcast(z), dimensions={}"""),
    ("subtract_negate", """
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  n = f32[4] negate(q)
  ROOT r = f32[4] subtract(p, n)""", """
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  ROOT r = f32[4] add(p, q)"""),
    ("multiply_one", """
  p = f32[4] parameter(0)
  o = f32[] constant(1)
  ob = f32[4] broadcast(o), dimensions={}
  ROOT r = f32[4] multiply(ob, p)""", """
  ROOT p = f32[4] parameter(0)"""),
    ("multiply_zero", """
  p = s32[4] parameter(0)
  z = s32[] constant(0)
  zb = s32[4] broadcast(z), dimensions={}
  ROOT r = s32[4] multiply(p, zb)""", """
  p = s32[4] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[4] broadcast(z), dimensions={}"""),
    ("multiply_minus_one", """
  p = f32[4] parameter(0)
  m = f32[] constant(-1)
  mb = f32[4] broadcast(m), dimensions={}
  ROOT r = f32[4] multiply(p, mb)""", """
  p = f32[4] parameter(0)
  ROOT r = f32[4] negate(p)"""),
    ("multiply_minus_one_int", """
  p = s8[4] parameter(0)
  m = s8[] constant(-1)
  mb = s8[4] broadcast(m), dimensions={}
  ROOT r = s8[4] multiply(mb, p)""", """
  p = s8[4] parameter(0)
  ROOT r = s8[4] negate(p)"""),
    ("multiply_negates", """
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  a = f32[4] negate(p)
  b = f32[4] negate(q)
  ROOT r = f32[4] multiply(a, b)""", """
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  ROOT r = f32[4] multiply(p, q)"""),
    ("divide_one", """
  p = s32[4] parameter(0)
  o = s32[] constant(1)
  ob = s32[4] broadcast(o), dimensions={}
  ROOT r = s32[4] divide(p, ob)""", """
  ROOT p = s32[4] parameter(0)"""),
    ("divide_power_of_two", """
  p = f32[4] parameter(0)
  c = f32[] constant(8)
  cb = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] divide(p, cb)""", """
  p = f32[4] parameter(0)
  c = f32[] constant(0.125)
  cb = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] multiply(p, cb)"""),
    ("divide_power_of_two_bf16", """
  p = bf16[4] parameter(0)
  c = bf16[] constant(-0.25)
  cb = bf16[4] broadcast(c), dimensions={}
  ROOT r = bf16[4] divide(p, cb)""", """
  p = bf16[4] parameter(0)
  c = bf16[] constant(-4)
  cb = bf16[4] broadcast(c), dimensions={}
  ROOT r = bf16[4] multiply(p, cb)"""),
    ("divide_unsigned_power_of_two", """
  p = u32[4] parameter(0)
  c = u32[] constant(16)
  cb = u32[4] broadcast(c), dimensions={}
  ROOT r = u32[4] divide(p, cb)""", """
  p = u32[4] parameter(0)
  c = u32[] constant(4)
  cb = u32[4] broadcast(c), dimensions={}
  ROOT r = u32[4] shift-right-logical(p, cb)"""),
    ("remainder_unsigned_power_of_two", """
  p = u8[4] parameter(0)
  c = u8[] constant(8)
  cb = u8[4] broadcast(c), dimensions={}
  ROOT r = u8[4] remainder(p, cb)""", """
  p = u8[4] parameter(0)
  c = u8[] constant(7)
  cb = u8[4] broadcast(c), dimensions={}
  ROOT r = u8[4] and(p, cb)"""),
    ("remainder_remainder", """
  p = s32[4] parameter(0)
  q = s32[4] parameter(1)
  a = s32[4] remainder(p, q)
  ROOT r = s32[4] remainder(a, q)""", """
  p = s32[4] parameter(0)
  q = s32[4] parameter(1)
  ROOT r = s32[4] remainder(p, q)"""),
    ("negate_negate", """
  p = f32[4] parameter(0)
  a = f32[4] negate(p)
  ROOT r = f32[4] negate(a)""", """
  ROOT p = f32[4] parameter(0)"""),
    ("power_zero", """
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  zb = f32[4] broadcast(z), dimensions={}
  ROOT r = f32[4] power(p, zb)""", """
  p = f32[4] parameter(0)
  o = f32[] constant(1)
  ROOT r = f32[4] broadcast(o), dimensions={}"""),
    ("power_one", """
  p = f32[4] parameter(0)
  o = f32[] constant(1)
  ob = f32[4] broadcast(o), dimensions={}
  ROOT r = f32[4] power(p, ob)""", """
  ROOT p = f32[4] parameter(0)"""),
    ("power_two", """
  p = f32[4] parameter(0)
  t = f32[] constant(2)
  tb = f32[4] broadcast(t), dimensions={}
  ROOT r = f32[4] power(p, tb)""", """
  p = f32[4] parameter(0)
  ROOT r = f32[4] multiply(p, p)"""),
    ("power_two_int", """
  p = s32[4] parameter(0)
  t = s32[] constant(2)
  tb = s32[4] broadcast(t), dimensions={}
  ROOT r = s32[4] power(p, tb)""", """
  p = s32[4] parameter(0)
  ROOT r = s32[4] multiply(p, p)"""),
    ("maximum_self", """
  p = f32[4] parameter(0)
  ROOT r = f32[4] maximum(p, p)""", """
  ROOT p = f32[4] parameter(0)"""),
    ("minimum_self", """
  p = s32[4] parameter(0)
  ROOT r = s32[4] minimum(p, p)""", """
  ROOT p = s32[4] parameter(0)"""),
    ("maximum_lowest", """
  p = f32[4] parameter(0)
  c = f32[] constant(-inf)
  cb = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] maximum(cb, p)""", """
  ROOT p = f32[4] parameter(0)"""),
    ("maximum_lowest_int", """
  p = s8[4] parameter(0)
  c = s8[] constant(-128)
  cb = s8[4] broadcast(c), dimensions={}
  ROOT r = s8[4] maximum(p, cb)""", """
  ROOT p = s8[4] parameter(0)"""),
    ("minimum_highest", """
  p = f32[4] parameter(0)
  c = f32[] constant(inf)
  cb = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] minimum(p, cb)""", """
  ROOT p = f32[4] parameter(0)"""),
    ("minimum_highest_unsigned", """
  p = u16[4] parameter(0)
  c = u16[] constant(65535)
  cb = u16[4] broadcast(c), dimensions={}
  ROOT r = u16[4] minimum(cb, p)""", """
  ROOT p = u16[4] parameter(0)"""),
]


@pytest.mark.parametrize("name,before,after", CASES, ids=[c[0] for c in CASES])
def test_rule(name, before, after):
    check(hlo(before), hlo(after))


# -- values XLA's semantics make special ----------------------------------------------------
def test_power_two_f64_within_an_ulp():
    before = hlo("""
  p = f64[64] parameter(0)
  t = f64[] constant(2)
  tb = f64[64] broadcast(t), dimensions={}
  ROOT r = f64[64] power(p, tb)""")
    check(before, hlo("""
  p = f64[64] parameter(0)
  ROOT r = f64[64] multiply(p, p)"""), rtol=1e-15)


def test_maximum_lowest_keeps_nan():
    before = hlo("""
  p = f32[3] parameter(0)
  c = f32[] constant(-inf)
  cb = f32[3] broadcast(c), dimensions={}
  ROOT r = f32[3] maximum(p, cb)""")
    check(before, hlo("  ROOT p = f32[3] parameter(0)"),
          inputs=[np.array([np.nan, -np.inf, 1], np.float32)])


def test_power_zero_of_nan_is_one():
    before = hlo("""
  p = f32[2] parameter(0)
  z = f32[] constant(0)
  zb = f32[2] broadcast(z), dimensions={}
  ROOT r = f32[2] power(p, zb)""")
    check(before, hlo("""
  p = f32[2] parameter(0)
  o = f32[] constant(1)
  ROOT r = f32[2] broadcast(o), dimensions={}"""), inputs=[np.array([np.nan, 0], np.float32)])


def test_unsigned_division_by_power_of_two_on_large_values():
    before = hlo("""
  p = u8[3] parameter(0)
  c = u8[] constant(4)
  cb = u8[3] broadcast(c), dimensions={}
  ROOT r = u8[3] divide(p, cb)""")
    check(before, hlo("""
  p = u8[3] parameter(0)
  c = u8[] constant(2)
  cb = u8[3] broadcast(c), dimensions={}
  ROOT r = u8[3] shift-right-logical(p, cb)"""), inputs=[np.array([255, 3, 128], np.uint8)])


@pytest.mark.parametrize("body", [
    # x * 0 and x - x are not 0 for floats (NaN, inf).
    """
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  zb = f32[4] broadcast(z), dimensions={}
  ROOT r = f32[4] multiply(p, zb)""",
    """
  p = f32[4] parameter(0)
  ROOT r = f32[4] subtract(p, p)""",
    # 1/3 is not exact: dividing by 3 stays a divide.
    """
  p = f32[4] parameter(0)
  c = f32[] constant(3)
  cb = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] divide(p, cb)""",
    # 1/2^-24 overflows f16: stays a divide.
    """
  p = f16[4] parameter(0)
  c = f16[] constant(5.96046448e-08)
  cb = f16[4] broadcast(c), dimensions={}
  ROOT r = f16[4] divide(p, cb)""",
    # Signed division by 2^k rounds toward zero; a shift would round down.
    """
  p = s32[4] parameter(0)
  c = s32[] constant(4)
  cb = s32[4] broadcast(c), dimensions={}
  ROOT r = s32[4] divide(p, cb)""",
    # max(x, lowest finite) is not x for x = -inf.
    """
  p = f32[4] parameter(0)
  c = f32[] constant(-3.40282347e+38)
  cb = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] maximum(p, cb)""",
    # x * -1 on unsigned stays (no negation of unsigned values).
    """
  p = u32[4] parameter(0)
  c = u32[] constant(4294967295)
  cb = u32[4] broadcast(c), dimensions={}
  ROOT r = u32[4] multiply(p, cb)""",
    # pow(x, 0.5) is not sqrt(x) for -0 and -inf: left alone.
    """
  p = f32[4] parameter(0)
  h = f32[] constant(0.5)
  hb = f32[4] broadcast(h), dimensions={}
  ROOT r = f32[4] power(p, hb)""",
    # exp(log(x)) is not x.
    """
  p = f32[4] parameter(0)
  l = f32[4] log(p)
  ROOT r = f32[4] exponential(l)""",
], ids=["mul_zero_float", "sub_self_float", "div_three", "div_overflowing_reciprocal",
        "signed_div_pow2", "max_lowest_finite", "mul_unsigned_max", "pow_half", "exp_log"])
def test_rule_does_not_apply(body):
    check_unchanged(hlo(body))


# -- edge values: wrapping, division by zero, infinities ---------------------------------
@pytest.mark.parametrize("t,values", [
    ("s32", [100000, -70000, 2**31 - 1, -2**31]),
    ("s64", [2**40 + 3, -(2**33) - 5, 2**63 - 1, -2**63]),
    ("u8", [255, 16, 17, 0]),
])
def test_power_two_wraps_like_a_multiply(t, values):
    dtype = {"s32": np.int32, "s64": np.int64, "u8": np.uint8}[t]
    check(hlo(f"""
  p = {t}[4] parameter(0)
  c = {t}[] constant(2)
  cb = {t}[4] broadcast(c), dimensions={{}}
  ROOT r = {t}[4] power(p, cb)"""), hlo(f"""
  p = {t}[4] parameter(0)
  ROOT r = {t}[4] multiply(p, p)"""), inputs=[np.array(values, dtype)])


def test_multiply_minus_one_wraps_the_minimum_like_negate():
    check(hlo("""
  p = s32[2] parameter(0)
  c = s32[] constant(-1)
  cb = s32[2] broadcast(c), dimensions={}
  ROOT r = s32[2] multiply(p, cb)"""), hlo("""
  p = s32[2] parameter(0)
  ROOT r = s32[2] negate(p)"""), inputs=[np.array([-2**31, 5], np.int32)])


@pytest.mark.parametrize("t,x,y", [
    ("s32", [-2**31, 7, -7, 5], [-1, 0, 3, -2]),
    ("f32", [np.inf, 7.5, -7.25, 5], [1, 0, np.inf, -2]),
])
def test_remainder_remainder_at_the_edges(t, x, y):
    dtype = {"s32": np.int32, "f32": np.float32}[t]
    check(hlo(f"""
  p = {t}[4] parameter(0)
  q = {t}[4] parameter(1)
  a = {t}[4] remainder(p, q)
  ROOT r = {t}[4] remainder(a, q)"""), hlo(f"""
  p = {t}[4] parameter(0)
  q = {t}[4] parameter(1)
  ROOT r = {t}[4] remainder(p, q)"""), inputs=[np.array(x, dtype), np.array(y, dtype)])


def test_division_by_a_power_of_two_at_the_edges():
    """inf, NaN, signed zeros and subnormal results divide and multiply alike."""
    x = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 1e-38, 3e38, -1.5e-45], np.float32)
    check(hlo("""
  p = f32[8] parameter(0)
  c = f32[] constant(1.70141183e+38)
  cb = f32[8] broadcast(c), dimensions={}
  ROOT r = f32[8] divide(p, cb)"""), hlo("""
  p = f32[8] parameter(0)
  c = f32[] constant(5.87747175e-39)
  cb = f32[8] broadcast(c), dimensions={}
  ROOT r = f32[8] multiply(p, cb)"""), inputs=[x])


def test_add_zero_keeps_a_negative_zero_as_xla_does():
    """The documented difference: -0 + 0 is +0, the rewrite keeps x = -0.
    The values are equal; only the sign of the zero differs."""
    module = check(hlo("""
  p = f32[2] parameter(0)
  z = f32[] constant(0)
  zb = f32[2] broadcast(z), dimensions={}
  ROOT r = f32[2] add(p, zb)"""), hlo("  ROOT p = f32[2] parameter(0)"),
        inputs=[np.array([-0.0, 1.0], np.float32)])
    import xlapy
    result = xlapy.execute(module, [np.array([-0.0, 1.0], np.float32)], backend="interpreter")
    assert np.signbit(result[0][0])
