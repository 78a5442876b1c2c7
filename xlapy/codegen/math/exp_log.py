"""exp, expm1, log and log1p, branch-free, on the `Lanes` double arithmetic.

f32 arguments are evaluated in double with shorter polynomials (see
`common.in_double`; the backend's f32 loops use `float32.py` instead, and
pow's f32 path these), f64 ones in double with double-length tails where an
error would otherwise show. The polynomial coefficients are minimax fits made
by `fit.py` (the problems are listed in `_fits.py`).
"""

from __future__ import annotations

from xlapy.codegen.math.common import INF, NAN, Lanes, bits_of_double

LN2_HI = 0.6931471805598903
"""ln 2 to 42 bits: k·LN2_HI is exact for |k| < 2^11 (every exponent k)."""
LN2_LO = 5.497923018708371e-14
"""ln 2 - LN2_HI."""
INV_LN2 = 1.4426950408889634

# (e^r - 1 - r)/r² on |r| <= 0.3466; weighted for expm1's relative error.
EXPM1_F64 = (0.5000000000000001, 0.1666666666666667, 0.041666666666652294,
             0.008333333333326155, 0.0013888888895596157, 0.00019841269874760266,
             2.480157453931481e-05, 2.7557255467977787e-06, 2.7567926688531865e-07,
             2.510519164397847e-08, 1.7687719945491427e-09)   # 2^-56.2
EXPM1_F32 = (0.5000000053049701, 0.16666666902463897, 0.04166632701689775,
             0.00833322000809381, 0.0013943206663167168, 0.00019962168417877668)  # 2^-31.8

# P(z), z = s², with log(1+f) = f - f²/2 + s·(f²/2 + z·P(z)), s = f/(2+f).
LOG_F64 = (0.6666666666666734, 0.3999999999941435, 0.2857142874246893,
           0.22222198564141968, 0.18183564830247542, 0.15314036823788205,
           0.14796095006199975)   # 2^-58.9
LOG_F32 = (0.6666666564506657, 0.40000335287248523, 0.285373019580429,
           0.23582284276593138)   # 2^-37.6

SQRT_HALF_BITS = bits_of_double(0.7071067811865476)
DOUBLE_MIN_NORMAL = 2.2250738585072014e-308


# -- exp ------------------------------------------------------------------------------------
def exp_reduce(v: Lanes, x, is_f32: bool, x_lo=None):
    """(k, r, r_lo) with x (+ x_lo) = k·ln2 + r + r_lo, |r| <= 0.3466, k an i64 (0 for
    NaN x); for f32 r_lo is None (double's 2^-53 is plenty).

    x must be clamped to |x| < 2^11·ln2. x - k·LN2_HI is exact (both sides are
    multiples of x's ulp or of 2^-42, and the difference is small); r_lo keeps
    the rounding of the second step, which matters where e^r - 1 is small."""
    kf = v.rint(v.mul(x, v.c(INV_LN2)))
    if is_f32:
        return v.to_int(kf), v.sub(x, v.mul(kf, v.c(LN2_HI + LN2_LO))), None
    r, r_lo = v.two_sum(v.sub(x, v.mul(kf, v.c(LN2_HI))), v.neg(v.mul(kf, v.c(LN2_LO))))
    if x_lo is not None:
        r_lo = v.add(r_lo, x_lo)
    return v.to_int(kf), r, r_lo


def expm1_poly(v: Lanes, r, r_lo, is_f32: bool, base, base_lo=None):
    """base (+ base_lo) + (e^(r + r_lo) - 1) for |r| <= 0.3466 as a normalised pair
    (s, s_lo): base + r + r²·P(r) + r_lo·e^r, with base + r split exactly by
    Fast2Sum (|base| >= 1/2 > |r| or base = 0); the split's error joins the
    small tail. For f32 (r_lo None) the plain double sum, and s_lo None."""
    tail = v.mul(v.mul(r, r), v.horner(r, EXPM1_F32 if is_f32 else EXPM1_F64))
    if r_lo is None:
        return v.add(base, v.add(r, tail)), None
    tail = v.add(tail, v.mul(r_lo, v.add(v.add(v.c(1.0), r), tail)))   # r_lo·e^r
    if base_lo is not None:
        tail = v.add(tail, base_lo)
    s, error = v.fast_two_sum(base, r)
    return v.fast_two_sum(s, v.add(error, tail))   # |s| > |tail| for every base


def exp_parts(v: Lanes, x, is_f32: bool, x_lo=None):
    """(k, p, p_lo) with e^(x + x_lo) = 2^k·(p + p_lo), p + p_lo in [0.7, 1.5]; x is
    clamped first to where e^x overflows or underflows past zero (k is 0 for NaN,
    and p NaN)."""
    hi, lo = (89.0, -104.0) if is_f32 else (710.0, -746.0)
    xc = v.max_c(v.min_c(x, hi), lo)
    k, r, r_lo = exp_reduce(v, xc, is_f32, x_lo)
    p, p_lo = expm1_poly(v, r, r_lo, is_f32, v.c(1.0))
    return k, p, p_lo


def exp_kernel(v: Lanes, x, is_f32: bool, x_lo=None):
    """e^(x + x_lo) in double; x_lo (|x_lo| tiny) extends the argument for pow.

    Overflow gives inf, -inf and large negative x give 0 through correctly
    rounded subnormals: the scaling by 2^k is done in two exact-then-rounding
    steps. NaN propagates."""
    k, p, p_lo = exp_parts(v, x, is_f32, x_lo)
    p = p if p_lo is None else v.add(p, p_lo)
    return v.mul(p, v.pow2(k)) if is_f32 else v.scale(p, k)


def exp(v: Lanes, x, is_f32: bool):
    """e^x. Measured error (max over 10^7 samples, benchmarks/cpu_math_ulp.py):
    f32 0.50 ULP, f64 0.76 ULP."""
    return exp_kernel(v, x, is_f32)


def expm1_parts(v: Lanes, x, is_f32: bool):
    """(k, s, s_lo) with e^x - 1 = 2^k·(s + s_lo) = 2^k·(expm1(r) + (1 - 2^-k)); the
    sum has no cancellation for any k (for k < 0 both terms are negative or
    |1 - 2^-k| >= 1 > |expm1(r)|); 1 - 2^-k is a double-double for f64 (it is
    inexact from k = 54 on). x is clamped to [-40, overflow]."""
    xc = v.max_c(v.min_c(x, 89.0 if is_f32 else 710.0), -40.0)
    k, r, r_lo = exp_reduce(v, xc, is_f32)
    b = v.b
    small_k = b.select(b.icmp_signed(">", k, v.ci(60)), v.ci(60), k)
    if is_f32:
        one_minus, one_minus_lo = v.sub(v.c(1.0), v.pow2(b.neg(small_k))), None
    else:
        one_minus, one_minus_lo = v.two_sum(v.c(1.0), v.neg(v.pow2(b.neg(small_k))))
    s, s_lo = expm1_poly(v, r, r_lo, is_f32, one_minus, one_minus_lo)
    return k, s, s_lo


def expm1(v: Lanes, x, is_f32: bool):
    """e^x - 1; x = ±0 returns x. Measured error: f32 0.51 ULP, f64 1.05 ULP."""
    k, s, s_lo = expm1_parts(v, x, is_f32)
    y = v.scale(s if s_lo is None else v.add(s, s_lo), k)
    return v.select(v.eq(x, v.c(0.0)), x, y)


# -- log ------------------------------------------------------------------------------------
def log_decompose(v: Lanes, x, subnormals: bool = True):
    """(k, f) with x = 2^k·(1 + f), 1 + f in [sqrt(1/2), sqrt(2)): the exponent comes
    from the bits of x offset by those of sqrt(1/2). Subnormal x are scaled by
    2^54 first. k is a double; garbage (but no poison) for x <= 0, inf, NaN."""
    b = v.b
    adjust = v.c(0.0)
    if subnormals:
        tiny = v.lt(x, v.c(DOUBLE_MIN_NORMAL))
        x = v.select(tiny, v.mul(x, v.c(2.0 ** 54)), x)
        adjust = v.select(tiny, v.c(54.0), adjust)
    ix = v.bits(x)
    k = b.ashr(b.sub(ix, v.ci(SQRT_HALF_BITS)), v.ci(52))
    m = v.from_bits(b.sub(ix, b.shl(k, v.ci(52))))
    return v.sub(v.to_float(k), adjust), v.sub(m, v.c(1.0))


def log_core(v: Lanes, k, f, c, is_f32: bool):
    """k·ln2 + log(1 + f) + c for f in [sqrt(1/2) - 1, sqrt(2) - 1] and a small
    correction c (log1p's rounding error of 1 + x, divided by 1 + x).

    log(1 + f) = f - hfsq + s·(hfsq + R) with hfsq = f²/2, s = f/(2 + f),
    R = s²·P(s²): the large terms f and k·LN2_HI are added last, to a small
    sum, so the result is within ~0.6 ULP."""
    s = v.div(f, v.add(v.c(2.0), f))
    z = v.mul(s, s)
    big_r = v.mul(z, v.horner(z, LOG_F32 if is_f32 else LOG_F64))
    hfsq = v.mul(v.c(0.5), v.mul(f, f))
    low = v.add(v.mul(s, v.add(hfsq, big_r)), v.add(v.mul(k, v.c(LN2_LO)), c))
    return v.sub(v.mul(k, v.c(LN2_HI)), v.sub(v.sub(hfsq, low), f))


def _log_specials(v: Lanes, x, y, at_zero):
    """Patch log-like results: `at_zero` where the argument is zero, -> NaN below
    it, inf at inf, NaN kept."""
    y = v.select(v.eq(x, v.c(INF)), v.c(INF), y)
    y = v.select(v.eq(x, at_zero), v.c(-INF), y)
    y = v.select(v.b.fcmp_unordered("<", x, at_zero), v.c(NAN), y)
    return v.select(v.isnan(x), x, y)


def log(v: Lanes, x, is_f32: bool):
    """Natural log; log(0) = -inf, log(<0) = NaN, subnormals exact.
    Measured error: f32 0.50 ULP, f64 0.82 ULP."""
    k, f = log_decompose(v, x, subnormals=not is_f32)
    y = log_core(v, k, f, v.c(-0.0), is_f32)
    return _log_specials(v, x, y, v.c(0.0))


def log1p(v: Lanes, x, is_f32: bool):
    """log(1 + x) = log(u) + d/u for u = fl(1 + x) and d = (1 + x) - u (exact, by
    Fast2Sum with the larger operand first). x = ±0 returns x.
    Measured error: f32 0.50 ULP, f64 0.82 ULP."""
    u = v.add(v.c(1.0), x)
    one = v.c(1.0)
    k, f = log_decompose(v, u, subnormals=False)
    if is_f32:
        # In double, d matters only where u = 1 (|x| < 2^-29): d/u = d there.
        c = v.sub(x, v.sub(u, one))
        c = v.select(v.lt(v.fabs(x), one), c, v.c(-0.0))
    else:
        big = v.gt(v.fabs(x), one)
        d = v.select(big, v.sub(one, v.sub(u, x)), v.sub(x, v.sub(u, one)))
        c = v.div(d, u)
    y = log_core(v, k, f, c, is_f32)
    y = _log_specials(v, x, y, v.c(-1.0))
    return v.select(v.eq(x, v.c(0.0)), x, y)
