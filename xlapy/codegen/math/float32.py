"""Native f32 versions of exp, expm1, log, log1p, tanh, logistic and erf.

Computed in f32 arithmetic, branch-free, with fused multiply-adds in the
polynomials and argument reductions (`llvm.fmuladd`: one FMA where the
target has it, a multiply and an add where not), so a loop
applying them vectorises 16 lanes to a 512-bit register instead of 8 doubles:
2-4x faster than evaluating in double, for errors of at most 1.5 ULP instead of 0.5.
Each function's docstring states its error, measured over every f32 input
(`benchmarks/cpu_math_ulp.py --exhaustive`).

The error analyses that shaped them: a rounding inside the kernel costs up to
half an ULP of the intermediate value, so the large terms (f in log, the
reduced argument in exp, 1 in erf's tail) are added last, to small sums, and
values whose rounding would show (the argument of exp after reduction, the
sum 1 + x in log1p) are carried with their exact rounding error.
Polynomials are minimax fits with float32 coefficients (`fit.remez_single`;
the problems are in `_fits.py`).
"""

from __future__ import annotations

from xlapy.codegen.math.common import INF, NAN, Lanes

LN2_HI = 0.693359375
"""ln 2 to 9 bits: k·LN2_HI is exact for every exponent k, and so is x - k·LN2_HI."""
LN2_LO = -0.00021219444
"""ln 2 - LN2_HI, to float."""
INV_LN2 = 1.442695
TINY = 1.1754944e-38
"""The smallest normal float."""

# e^r = 1 + r + r²·P(r) on |r| <= 0.3466, relative error 2^-28.2.
EXP = (0.49999994, 0.16666517, 0.041668102, 0.0083691925, 0.0013838902)
# e^r - 1 = r + r²·P(r), relative to e^r - 1, 2^-31.0.
EXPM1 = (0.5, 0.16666666, 0.041666467, 0.008333644, 0.0013935058, 0.00019663114)
# log(1+f) = f - f²/2 + s·(f²/2 + z·P(z)), s = f/(2+f), z = s², 2^-30.2.
LOG = (0.66666776, 0.3997758, 0.29870927)
# tanh(a) = a + a·z·P(z), z = a², a < 0.55, relative 2^-29.7.
TANH = (-0.33333316, 0.13332544, -0.053847548, 0.02105072, -0.0062428494)
TANH_SMALL = 0.55
TANH_ONE = 9.1
"""tanh rounds to 1 from 9.01 on."""


# -- exp ------------------------------------------------------------------------------------
def _reduce(v: Lanes, x):
    """(k, r) with x = k·ln2 + r, |r| <= 0.3466 (k a float, NaN for NaN x); the
    rounding of r is at most half its ulp."""
    k = v.rint(v.mul(x, v.c(INV_LN2)))
    return k, v.madd(k, v.c(-LN2_LO), v.madd(k, v.c(-LN2_HI), x))


def _exp_unit(v: Lanes, r):
    """e^r for |r| <= 0.3466: 1 + (r + r²·P(r)), the 1 added last."""
    return v.add(v.c(1.0), v.madd(v.mul(r, r), v.horner(r, EXP), r))


def exp(v: Lanes, x):
    """e^x; overflow gives inf, underflow rounds once through the subnormals to 0.
    k comes from x clamped to [-104, 89] with NaN taken to 89, so it converts to
    an integer without a NaN check; r from x clamped below only, so NaN stays NaN
    and past 89 (+inf included) r >= 0.28, e^r > 1 and the scaling by 2^128
    overflows to inf. Measured error (every f32 input): 1.02 ULP."""
    low = v.max_c(x, -104.0)
    k = v.rint(v.mul(v.min_or_bound(low, 89.0), v.c(INV_LN2)))
    r = v.madd(k, v.c(-LN2_LO), v.madd(k, v.c(-LN2_HI), low))
    return v.scale(_exp_unit(v, r), v.b.fptosi(k, v.itype))


def expm1(v: Lanes, x):
    """e^x - 1 = 2^k·((1 - 2^-k) + expm1(r)). r's rounding error r_lo is kept
    (Fast2Sum): where k is small it would show. (1 - 2^-k) + r is exact where it
    cancels (Sterbenz), so the sum loses nothing. x = ±0 returns x.
    Measured error (every f32 input): 1.28 ULP."""
    b = v.b
    xc = v.max_c(v.min_c(x, 89.0), -17.5)       # below -17.3 the result rounds to -1
    k = v.rint(v.mul(xc, v.c(INV_LN2)))
    r_hi = v.sub(xc, v.mul(k, v.c(LN2_HI)))
    t = v.mul(k, v.c(LN2_LO))
    r = v.sub(r_hi, t)
    r_lo = v.sub(v.sub(r_hi, r), t)
    tail = v.mul(v.mul(r, r), v.horner(r, EXPM1))
    tail = v.add(tail, v.mul(r_lo, v.add(v.c(1.0), r)))
    ki = v.to_int(k)
    small_k = b.select(b.icmp_signed(">", ki, v.ci(30)), v.ci(30), ki)
    base = v.sub(v.c(1.0), v.pow2(b.neg(small_k)))
    y = v.scale(v.add(v.add(base, r), tail), ki)
    return v.select(v.eq(x, v.c(0.0)), x, y)


# -- log ------------------------------------------------------------------------------------
SQRT_HALF_BITS = 0x3F3504F3


def _decompose(v: Lanes, x):
    """(k, f) with x = 2^k·(1 + f), 1 + f in [sqrt(1/2), sqrt(2)), k an integer
    (garbage, but no poison, for x <= 0, subnormal, inf or NaN)."""
    b = v.b
    k = b.ashr(b.sub(v.bits(x), v.ci(SQRT_HALF_BITS)), v.ci(23))
    m = v.from_bits(b.sub(v.bits(x), b.shl(k, v.ci(23))))
    return k, v.sub(m, v.c(1.0))


def _log_core(v: Lanes, k, f, d=None):
    """k·ln2 + log(1 + f + d) for 1 + f in [sqrt(1/2), sqrt(2)), k a float, d a tiny
    correction (log1p's): log(1 + f) = f - hfsq + s·(hfsq + R), s = f/(2 + f),
    the exact f and k·LN2_HI added last; d enters as d/(1 + f) = d·(1 - 2s)."""
    s = v.div(f, v.add(v.c(2.0), f))
    z = v.mul(s, s)
    big_r = v.mul(z, v.horner(z, LOG))
    hfsq = v.mul(v.c(0.5), v.mul(f, f))
    low = v.mul(k, v.c(LN2_LO))
    if d is not None:
        low = v.add(low, v.sub(d, v.mul(d, v.add(s, s))))
    low = v.add(v.mul(s, v.add(hfsq, big_r)), low)
    return v.add(v.mul(k, v.c(LN2_HI)), v.add(v.sub(low, hfsq), f))


def _log_specials(v: Lanes, x, y, at_zero: float):
    """-inf where x = at_zero, NaN below it and for NaN, inf at inf."""
    y = v.select(v.eq(x, v.c(INF)), v.c(INF), y)
    y = v.select(v.eq(x, v.c(at_zero)), v.c(-INF), y)
    return v.select(v.b.fcmp_unordered("<", x, v.c(at_zero)), v.c(NAN), y)


def log(v: Lanes, x):
    """Natural log; subnormal x are scaled by 2^23 first. log(0) = -inf,
    log(<0) = NaN. Measured error (every f32 input): 0.84 ULP."""
    tiny = v.lt(x, v.c(TINY))
    xs = v.select(tiny, v.mul(x, v.c(2.0 ** 23)), x)
    k, f = _decompose(v, xs)
    kf = v.sub(v.to_float(k), v.select(tiny, v.c(23.0), v.c(0.0)))
    return _log_specials(v, x, _log_core(v, kf, f), 0.0)


def log1p(v: Lanes, x):
    """log(1 + x) = log(u) + d/u for u = fl(1 + x) and its exact rounding error d
    (Fast2Sum, larger operand first); with u = 2^k·(1 + f), d/u = d·2^-k/(1 + f).
    x = ±0 returns x. Measured error (every f32 input): 0.93 ULP."""
    b = v.b
    one = v.c(1.0)
    u = v.add(one, x)
    big = v.gt(v.fabs(x), one)
    d = v.select(big, v.sub(one, v.sub(u, x)), v.sub(x, v.sub(u, one)))
    k, f = _decompose(v, u)
    kk = b.select(b.icmp_signed(">", k, v.ci(126)), v.ci(126), k)   # past 2^126 d is noise
    y = _log_core(v, v.to_float(k), f, v.mul(d, v.pow2(b.neg(kk))))
    y = _log_specials(v, x, y, -1.0)
    return v.select(v.eq(x, v.c(0.0)), x, y)


# -- tanh and logistic -------------------------------------------------------------------------
def tanh(v: Lanes, x):
    """tanh|x| = |x| + |x|³·P(x²) below 0.55, else 1 - 2/(e^2|x| + 1) (there the
    errors of e^2|x| and of the division shrink by 2/(e^2|x| + 1) <= 1/2); the
    sign comes back by copysign (tanh(-0) = -0, NaN stays NaN).
    Measured error (every f32 input): 1.47 ULP."""
    a = v.min_c(v.fabs(x), TANH_ONE)
    z = v.mul(a, a)
    small = v.madd(v.mul(a, z), v.horner(z, TANH), a)
    k, r = _reduce(v, v.add(a, a))
    e = v.mul(_exp_unit(v, r), v.pow2(v.to_int(k)))        # k <= 27
    big = v.sub(v.c(1.0), v.div(v.c(2.0), v.add(e, v.c(1.0))))
    return v.copysign(v.select(v.lt(a, v.c(TANH_SMALL)), small, big), x)


def logistic(v: Lanes, x):
    """1/(1 + e^-x), as e/(1 + e) for x < 0 with e = e^-|x| <= 1: no overflow.
    e = 2^k·(1 + q) is never rounded on its own. Numerator s + s·q and denominator
    (1 + s) + s·q (s = 2^k) are each one FMA with its rounding error recovered by a
    second (the differences it needs are exact by Sterbenz; 1 + s's own by
    Fast2Sum); one division by the denominator and a correction by the exact
    remainder then give the quotient of
    the unrounded sums: a result at the top of its binade would otherwise inherit
    nearly an ULP from each operand's rounding. Below -87 (s subnormal) the result
    is e itself, scaled as exp scales. Measured error (every f32 input): 1.01 ULP."""
    a = v.max_c(v.neg(v.fabs(x)), -104.0)
    k, r = _reduce(v, a)
    q = v.madd(v.mul(r, r), v.horner(r, EXP), r)
    ki = v.to_int(k)
    b = v.b
    s = v.pow2(b.select(b.icmp_signed("<", ki, v.ci(-126)), v.ci(-126), ki))
    one_s = v.add(v.c(1.0), s)
    one_s_lo = v.sub(s, v.sub(one_s, v.c(1.0)))        # Fast2Sum: 1 + s inexact below 2^-23
    den = v.madd(s, q, one_s)
    den_lo = v.madd(s, q, v.add(v.sub(one_s, den), one_s_lo))
    negative = v.lt(x, v.c(0.0))
    e = v.madd(s, q, s)
    num = v.select(negative, e, v.c(1.0))
    num_lo = v.select(negative, v.madd(s, q, v.sub(s, e)), v.c(0.0))
    inverse = v.div(v.c(1.0), den)
    y0 = v.mul(num, inverse)
    remainder = v.add(v.madd(v.neg(y0), den, num), v.madd(v.neg(y0), den_lo, num_lo))
    y = v.madd(remainder, inverse, y0)
    deep = v.scale(v.add(v.c(1.0), q), ki)
    return v.select(v.lt(x, v.c(-87.0)), deep, y)


# -- erf ------------------------------------------------------------------------------------
C0_HI = 1.1283792
"""2/sqrt(pi) to float."""
C0_LO = -5.8635383e-08
"""2/sqrt(pi) - C0_HI."""
# erf(a) = a·(2/sqrt(pi) + t·P(t)), t = a² < 1, relative 2^-29.3.
ERF0 = (-0.37612629, 0.11283603, -0.026854202, 0.0051885983, -0.00080093986, 7.8425488e-05)
# erf(a) = 1 + Q(a - mid) on [lo, hi), absolute error 2^-27.4 and 2^-26.8.
ERFC = (
    (1.0, 2.2, (-0.023651619, 0.087229043, -0.13956611, 0.11979537, -0.04932221,
                -0.0043888567, 0.015555724, -0.0059727286, -0.001143875, 0.0013325738)),
    (2.2, 4.0, (-1.1641335e-05, 7.5612123e-05, -0.00023500797, 0.00046060406, -0.00062969356,
                0.00064189825, -0.00051548803, 0.00030565914, -9.8377568e-05, 6.0756952e-06)),
)
ERF_ONE = 4.0
"""erf rounds to 1 from 3.916 on; the last polynomial reaches 4, where it is
1 - 1.5e-8 (half an ulp below 1 is 3e-8)."""


def _pick(v: Lanes, tests, choices):
    """choices[i] for the first true tests[i], else choices[-1] (a select chain)."""
    value = v.c(choices[-1])
    for test, choice in zip(reversed(tests), reversed(choices[:-1])):
        value = v.select(test, v.c(choice), value)
    return value


def erf(v: Lanes, x):
    """erf, odd (copysign keeps -0 and NaN): a·(2/sqrt(pi) + t·P(t)) below 1 with the
    leading product split (C0_HI + C0_LO), 1 + Q(a - mid) on two intervals up to
    3.92, 1 beyond. One Horner evaluation per lane with coefficients chosen by
    selects. Measured error (every f32 input): 1.33 ULP."""
    a = v.min_c(v.fabs(x), ERF_ONE)
    near = v.lt(a, v.c(1.0))
    tests = [near, v.lt(a, v.c(ERFC[0][1]))]
    tables = [(0.0,) + ERF0] + [c for _, _, c in ERFC]
    degree = max(len(t) for t in tables)
    coeffs = [_pick(v, tests, [t[i] if i < len(t) else 0.0 for t in tables])
              for i in range(degree)]
    mid = v.select(tests[1], v.c(sum(ERFC[0][:2]) / 2), v.c(sum(ERFC[1][:2]) / 2))
    t = v.select(near, v.mul(a, a), v.sub(a, mid))
    rest = coeffs[-1]
    for c in reversed(coeffs[1:-1]):
        rest = v.madd(rest, t, c)
    tail = v.mul(t, rest)
    y_near = v.madd(a, v.c(C0_HI), v.mul(a, v.add(v.c(C0_LO), tail)))
    y_far = v.add(v.c(1.0), v.add(coeffs[0], tail))
    return v.copysign(v.select(near, y_near, y_far), x)
