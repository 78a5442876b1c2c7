"""tanh and logistic, built on exp_log's kernels.

Both are a ratio n/d of values near e^x; for f64 each part is carried as a
double-double (the exp kernels' result before its last rounding) and the
division is corrected with its exact remainder, so the only rounding that
shows is the final one. For f32 (in double) the plain formulas are accurate
far beyond f32's precision.
"""

from __future__ import annotations

from xlapy.codegen.math.common import Lanes
from xlapy.codegen.math.exp_log import exp_parts, expm1_parts


def tanh(v: Lanes, x, is_f32: bool):
    """tanh|x| = t/(t + 2) with t = expm1(2|x|), sign restored with copysign (so
    tanh(-0) = -0, NaN stays NaN); |x| is clamped to 20, where tanh rounds to 1 in
    both precisions. Measured error: f32 0.50 ULP, f64 0.84 ULP."""
    a = v.min_c(v.fabs(x), 20.0)
    k, s, s_lo = expm1_parts(v, v.add(a, a), is_f32)
    scale = v.pow2(k)                                   # k <= 58 here
    if is_f32:
        t = v.mul(s, scale)
        return v.copysign(v.div(t, v.add(t, v.c(2.0))), x)
    t, t_lo = v.mul(s, scale), v.mul(s_lo, scale)
    d, d_lo = v.two_sum(v.c(2.0), t)
    y = v.div_dd(t, t_lo, d, v.add(d_lo, t_lo))
    return v.copysign(y, x)


def logistic(v: Lanes, x, is_f32: bool):
    """1/(1 + e^-x), as e/(1 + e) for x < 0 with e = e^-|x| <= 1: no overflow, and
    for large negative x the result is e^x to full relative accuracy (down
    through the subnormals; the interpreter's f64 formula flushes to 0 below
    x = -709.8 where this returns the true subnormal value).
    Measured error: f32 0.50 ULP, f64 0.76 ULP."""
    k, p, p_lo = exp_parts(v, v.neg(v.fabs(x)), is_f32)
    negative = v.lt(x, v.c(0.0))
    if is_f32:
        e = v.mul(p, v.pow2(k))
        return v.div(v.select(negative, e, v.c(1.0)), v.add(v.c(1.0), e))
    deep = v.lt(v.fabs(x), v.c(700.0))           # e^-|x| normal: scale exactly
    kk = v.b.select(deep, k, v.ci(-1000))
    e, e_lo = v.mul(p, v.pow2(kk)), v.mul(p_lo, v.pow2(kk))
    d, d_lo = v.fast_two_sum(v.c(1.0), e)
    n = v.select(negative, e, v.c(1.0))
    n_lo = v.select(negative, e_lo, v.c(0.0))
    y = v.div_dd(n, n_lo, d, v.add(d_lo, e_lo))
    # Below e^-700, 1 + e = 1: the result is e itself, rounded once.
    tiny = v.scale(v.add(p, p_lo), k)
    return v.select(v.b.and_(negative, v.b.not_(deep)), tiny, y)
