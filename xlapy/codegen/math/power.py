"""pow (C99/NumPy special cases), rsqrt and cbrt.

f64 pow needs log(x) to about 2^-64 relative (y·log x reaches ±745, and its
absolute error becomes the relative error of the result), so `log_dd`
evaluates log as a double-double; f32 pow (in double) gets by with the plain
double log.
"""

from __future__ import annotations

from xlapy.codegen.math.common import INF, NAN, Lanes
from xlapy.codegen.math.exp_log import (
    LN2_HI,
    LN2_LO,
    exp_kernel,
    log_core,
    log_decompose,
)

TWO_THIRDS_HI = 0.6666666666666666
TWO_THIRDS_LO = 3.700743415417188e-17
# Q(z) with 2·atanh(s) = 2s + (2/3)s³ + s⁵·Q(s²), |s| <= 0.1716.
POW_Q_F64 = (0.3999999999999998, 0.2857142857144511, 0.22222222217536672,
             0.18181818870289115, 0.15384556872731472, 0.1333631735299315,
             0.11674819831500015, 0.1198900227416583)   # 2^-66.3
# cbrt(m) on [1, 8], relative error 2^-7.6: the start of the Halley iterations.
CBRT0 = (0.6816837712742545, 0.36452829700634654, -0.04331016247262621,
         0.002313223652037255)


def rsqrt(v: Lanes, x, is_f32: bool):
    """1/sqrt(x), as the interpreter computes it (in double, then rounded): results
    are bit-identical to it; measured error f32 0.50 ULP, f64 1.49 ULP (two
    roundings).
    rsqrt(±0) = ±inf, rsqrt(<0) = NaN, rsqrt(inf) = 0."""
    return v.div(v.c(1.0), v.sqrt(x))


def log_dd(v: Lanes, a):
    """log(a) as a double-double (hi, lo), relative error ~2^-66, for finite a > 0.

    With a = 2^k·m, f = m - 1, s = f/(2 + f): log m = s·(2 + z·(2/3 + z·Q(z))),
    z = s². s and every product of the first two terms are carried as
    double-doubles (`two_prod`), the tail z·Q(z) (<= 0.012 of 2/3) in double."""
    k, f = log_decompose(v, a)
    two = v.c(2.0)
    d, d_lo = v.fast_two_sum(two, f)
    s = v.div(f, d)
    p, p_lo = v.two_prod(s, d)
    s_lo = v.div(v.sub(v.sub(v.sub(f, p), p_lo), v.mul(s, d_lo)), d)
    z, z_lo = v.two_prod(s, s)
    z_lo = v.add(z_lo, v.mul(v.add(s, s), s_lo))
    c, c_lo = v.fast_two_sum(v.c(TWO_THIRDS_HI), v.mul(z, v.horner(z, POW_Q_F64)))
    c_lo = v.add(c_lo, v.c(TWO_THIRDS_LO))
    w, w_lo = v.two_prod(z, c)
    w_lo = v.add(w_lo, v.add(v.mul(z, c_lo), v.mul(z_lo, c)))
    q, q_lo = v.fast_two_sum(two, w)
    q_lo = v.add(q_lo, w_lo)
    lg, lg_lo = v.two_prod(s, q)
    lg_lo = v.add(lg_lo, v.add(v.mul(s, q_lo), v.mul(s_lo, q)))
    hi, hi_lo = v.fast_two_sum(v.mul(k, v.c(LN2_HI)), lg)
    return hi, v.add(hi_lo, v.add(lg_lo, v.mul(k, v.c(LN2_LO))))


def _log_abs(v: Lanes, a, is_f32: bool):
    """log|x| as (hi, lo) with exact ±inf at 0 and inf (lo = 0 there)."""
    if is_f32:
        k, f = log_decompose(v, a, subnormals=False)
        hi, lo = log_core(v, k, f, v.c(-0.0), True), v.c(0.0)
    else:
        hi, lo = log_dd(v, a)
    special = v.b.or_(v.eq(a, v.c(0.0)), v.eq(a, v.c(INF)))
    hi = v.select(v.eq(a, v.c(0.0)), v.c(-INF), v.select(v.eq(a, v.c(INF)), v.c(INF), hi))
    hi = v.select(v.isnan(a), a, hi)
    return hi, v.select(special, v.c(0.0), lo)


def pow_(v: Lanes, x, y, is_f32: bool):
    """x**y as C99 pow and NumPy: |x|**y = exp(y·log|x|) with log and the product in
    double-double for f64, the sign from x when y is an odd integer, NaN for a
    finite negative x and non-integer y, pow(x, ±0) = 1 and pow(1, y) = 1 even
    for NaN, pow(-1, ±inf) = 1, zeros and infinities per C99 Annex F; overflow
    gives inf and underflow rounds through the subnormals.
    Measured error: f32 0.51 ULP, f64 0.75 ULP."""
    b = v.b
    a = v.fabs(x)
    lg, lg_lo = _log_abs(v, a, is_f32)
    t = v.mul(y, lg)
    if is_f32:
        magnitude = exp_kernel(v, t, True)
    else:
        _, t_lo = v.two_prod(y, lg)
        t_lo = v.add(t_lo, v.mul(y, lg_lo))
        # Past |t| = 1000 the result is 0 or inf anyway; a huge y (x = -1) makes NaN.
        keep = v.b.and_(v.lt(v.fabs(t), v.c(1000.0)), v.lt(v.fabs(t_lo), v.c(1.0)))
        t_lo = v.select(keep, t_lo, v.c(0.0))
        magnitude = exp_kernel(v, t, False, t_lo)
    is_int = v.eq(v.floor(y), y)
    odd = v.eq(v.sub(y, v.mul(v.c(2.0), v.floor(v.mul(v.c(0.5), y)))), v.c(1.0))
    result = v.copysign(magnitude, v.select(odd, x, v.c(1.0)))
    finite_negative = b.and_(v.lt(x, v.c(0.0)), v.gt(x, v.c(-INF)))
    result = v.select(b.and_(finite_negative, b.not_(is_int)), v.c(NAN), result)
    one = b.or_(v.eq(y, v.c(0.0)), v.eq(x, v.c(1.0)))
    one = b.or_(one, b.and_(v.eq(a, v.c(1.0)), v.eq(v.fabs(y), v.c(INF))))
    return v.select(one, v.c(1.0), result)


def cbrt(v: Lanes, x, is_f32: bool):
    """Cube root: |x| = 2^(3q + r)·m, m in [1, 2), r in {0, 1, 2}; cbrt(m·2^r) from
    a cubic start and two Halley steps (cubic convergence: 2^-7.6 -> 2^-21 ->
    below 2^-60), the last written as a correction so it rounds once.
    cbrt(±0) = ±0, cbrt(±inf) = ±inf. Measured error: f32 0.50 ULP, f64 0.96 ULP."""
    b = v.b
    a = v.fabs(x)
    tiny = v.lt(a, v.c(2.2250738585072014e-308))
    scaled = v.select(tiny, v.mul(a, v.c(2.0 ** 54)), a)
    bits = v.bits(scaled)
    exponent = v.to_float(b.sub(b.ashr(bits, v.ci(52)), v.ci(1023)))
    exponent = v.sub(exponent, v.select(tiny, v.c(54.0), v.c(0.0)))
    q = v.floor(v.mul(v.add(exponent, v.c(0.5)), v.c(1.0 / 3.0)))   # exponent integral
    r = v.sub(exponent, v.mul(q, v.c(3.0)))
    m = v.from_bits(b.or_(b.and_(bits, v.ci((1 << 52) - 1)), v.ci(1023 << 52)))
    m = v.mul(m, v.pow2(v.to_int(r)))
    y0 = v.horner(m, CBRT0)
    y1 = _halley(v, y0, m)
    y3 = v.mul(v.mul(y1, y1), y1)
    correction = v.div(v.mul(y1, v.sub(m, y3)), v.add(v.add(y3, y3), m))
    root = v.mul(v.add(y1, correction), v.pow2(v.to_int(q)))
    exact = b.or_(v.eq(a, v.c(0.0)), v.b.fcmp_unordered("==", a, v.c(INF)))
    root = v.select(exact, a, root)
    return v.copysign(root, x)


def _halley(v: Lanes, y, m):
    """One Halley step for y³ = m: y·(y³ + 2m)/(2y³ + m)."""
    y3 = v.mul(v.mul(y, y), y)
    return v.div(v.mul(y, v.add(y3, v.add(m, m))), v.add(v.add(y3, y3), m))
