"""sin, cos, tan (with argument reduction over the whole range) and atan2.

Reduction writes |x| = (n + f)·pi/2 with |f| <= 1/2 (plus rounding) and
returns r = f·pi/2 as a double-double (r, r_lo) and the quadrant n mod 4:

* f32 (evaluated in double): Payne-Hanek for every |x| >= pi/4. x has 24
  significant bits, so x times a 29-bit chunk of 2/pi is exact in double;
  four chunks, chosen per lane from x's exponent by selects, cover the bits
  that matter mod 4 down to 2^-61: x·(2/pi) mod 4 is exact to ~2^-61, far
  below what the closest f32 to a multiple of pi/2 needs.
* f64: Cody-Waite with pi/2 in three pieces (33 + 33 + 53 bits) for |x| <
  2^19, where k·piece is exact and the error is k·2^-120; Payne-Hanek for
  larger |x| with 26-bit chunks of 2/pi looked up per lane (a gather) and x
  split in two 26-bit halves: x·(2/pi) mod 4 is computed to ~2^-100
  absolute, which keeps the result within 1 ULP unless x lies within about
  2^-45 (relative) of a multiple of pi/2.

Both reductions add exact products with a running two_sum, taking integer
parts out as they go (`_sum_mod4`), so only rounding far below the result's
ULP is left.
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.codegen.math.common import F64, INF, NAN, Lanes

# 2/pi, its first 1280 bits after the binary point.
_TWO_OVER_PI_HEX = (
    "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561"
    "b7246e3a424dd2e006492eea09d1921cfe1deb1cb129a73ee88235f52ebb4484"
    "e99c7026b45f7e413991d639835339f49c845f8bbdf9283b1ff897ffde05980f"
    "ef2f118b5a0a6d1f6d367ecf27cb09b74f463f669e5fea2d7527bac7ebe5f17b"
    "3d0739f78a5292ea6bfb5fb11f8d5d0856033046fc7b6babf0cfbc209af4361d"
)
_TWO_OVER_PI_BITS = len(_TWO_OVER_PI_HEX) * 4


def _chunks(width: int, count: int) -> list[int]:
    """2/pi's fraction bits in `count` integers of `width` bits each, most significant
    first: 2/pi = Σ chunk[j]·2^(-width·(j+1))."""
    bits = int(_TWO_OVER_PI_HEX, 16)
    return [(bits >> (_TWO_OVER_PI_BITS - width * (j + 1))) & ((1 << width) - 1)
            for j in range(count)]


F32_CHUNK = 29
F32_CHUNKS = _chunks(F32_CHUNK, 8)
F64_CHUNK = 26
F64_CHUNKS = _chunks(F64_CHUNK, 46)
F64_TERMS = 7
"""Chunks of 2/pi used per f64 lane: 7·26 = 182 bits cover x's 81 bits above the
binary point (mod 4) and ~100 below."""

TWO_OVER_PI = 0.6366197723675814
PIO2 = 1.5707963267948966
PIO2_LO = 6.123233995736766e-17
PIO2_1 = 1.5707963267341256   # 33 bits
PIO2_2 = 6.077100506303966e-11   # next 33 bits
PIO2_3 = 2.0222662487959506e-21   # the rest, rounded
CODY_WAITE_LIMIT = 2.0 ** 19
PI = 3.141592653589793
PI_LO = 1.2246467991473532e-16

# sin r = r + r³·S(r²), cos r = 1 - r²/2 + r⁴·C(r²), |r| <= pi/4.
SIN_F64 = (-0.16666666666666632, 0.008333333333322323, -0.00019841269829731523,
           2.7557313664339212e-06, -2.505075363478925e-08, 1.5896527112907012e-10)  # 2^-56.8
SIN_F32 = (-0.16666666641440286, 0.008333329363903613, -0.00019839327665476366,
           2.718242370748264e-06)   # 2^-37.6
COS_F64 = (0.041666666666666595, -0.0013888888888872906, 2.480158728875531e-05,
           -2.755731415073278e-07, 2.0875696865890675e-09, -1.1358326002781325e-11)  # 2^-59.2
COS_F32 = (0.04166666661913318, -0.0013888883469505957, 2.4799452139718035e-05,
           -2.720509477558937e-07)   # 2^-42.9
# atan u = u + u³·A(u²), |u| <= tan(pi/8).
ATAN_F64 = (-0.333333333333332, 0.1999999999995404, -0.14285714280244094,
            0.11111110785906836, -0.09090897829542213, 0.07692061509987053,
            -0.0666311889427056, 0.05847997777822401, -0.05039794067848503,
            0.038076984083395854, -0.01792078452560233)   # 2^-58.5
ATAN_F32 = (-0.33333332514161684, 0.19999905144309, -0.14282040781695204,
            0.11045076629375333, -0.0847830689009737, 0.04748060296166019)   # 2^-35.4
TAN_PI_8 = 0.41421356237309503


# -- reduction ------------------------------------------------------------------------------
def _mod4(v: Lanes, t):
    """t - 4·rint(t/4): exact, in [-2, 2]."""
    return v.sub(t, v.mul(v.c(4.0), v.rint(v.mul(t, v.c(0.25)))))


def _sum_mod4(v: Lanes, terms, integral: int, exact: int):
    """(hi, lo, n) with hi + lo + n = Σ terms (mod 4), |hi| <= ~1/2, n integral.

    `terms` are exact products, largest first; the first `integral` of them
    may exceed 1 and are reduced mod 4 with their integer parts moved into n
    as the sum goes; the first `exact` are added with two_sum (hi + lo stays
    exact but for lo's own roundings), the rest, small, straight into lo."""
    hi = _mod4(v, terms[0]) if integral else terms[0]
    n = v.rint(hi) if integral else v.c(0.0)
    hi = v.sub(hi, n) if integral else hi
    lo = v.c(0.0)
    for i, term in enumerate(terms[1:], start=1):
        if i >= exact:
            lo = v.add(lo, term)
            continue
        if i < integral:
            term = _mod4(v, term)
        hi, error = v.two_sum(hi, term)
        lo = v.add(lo, error)
        if i < integral:
            whole = v.rint(hi)
            hi = v.sub(hi, whole)
            n = v.add(n, whole)
    hi, lo = v.fast_two_sum(hi, lo)
    return hi, lo, n


def _times_pio2(v: Lanes, hi, lo):
    """(hi + lo)·pi/2 as a double-double."""
    r, r_lo = v.two_prod(hi, v.c(PIO2))
    r_lo = v.add(r_lo, v.add(v.mul(hi, v.c(PIO2_LO)), v.mul(lo, v.c(PIO2))))
    return v.fast_two_sum(r, r_lo)


def _exponent(v: Lanes, a):
    """floor(log2 a) as a double, for normal a."""
    return v.to_float(v.b.sub(v.b.ashr(v.bits(a), v.ci(52)), v.ci(1023)))


def _chunk_index(v: Lanes, q, width: int):
    """floor((q - 2)/width) for integral q, by a multiplication: q - 1.5 is never
    within 0.5/width of a multiple of width, so the rounded quotient floors right."""
    return v.floor(v.mul(v.sub(q, v.c(1.5)), v.c(1.0 / width)))


def _reduce_f32(v: Lanes, a):
    """Payne-Hanek for a = |x| of f32 origin (a finite, >= pi/4)."""
    q = v.sub(_exponent(v, a), v.c(23.0))          # a = m·2^q, m < 2^24
    j0 = v.max_c(_chunk_index(v, q, F32_CHUNK), 0.0)
    tests = [v.eq(j0, v.c(float(j))) for j in range(1, 4)]
    terms = []
    for i in range(4):
        scale = 2.0 ** (-F32_CHUNK * (i + 1))
        value = v.c(F32_CHUNKS[i] * scale)
        for j, test in zip(range(1, 4), tests):
            chunk = F32_CHUNKS[i + j] * 2.0 ** (-F32_CHUNK * (i + j + 1))
            value = v.select(test, v.c(chunk), value)
        terms.append(v.mul(a, value))
    hi, lo, n = _sum_mod4(v, terms, integral=2, exact=3)
    return v.mul(v.add(hi, lo), v.c(PIO2)), v.c(0.0), n   # f32 needs no r_lo


def _gather(v: Lanes, table: ir.GlobalVariable, index):
    """table[index] per lane (index i64 scalar or vector)."""
    b = v.b
    zero = ir.Constant(ir.IntType(64), 0)
    if v.lanes is None:
        return b.load(b.gep(table, [zero, index], inbounds=True))
    out = ir.Constant(v.ftype, ir.Undefined)
    for lane in range(v.lanes):
        k = ir.Constant(ir.IntType(32), lane)
        value = b.load(b.gep(table, [zero, b.extract_element(index, k)], inbounds=True))
        out = b.insert_element(out, value, k)
    return out


def _chunk_table(v: Lanes) -> ir.GlobalVariable:
    module = v.b.module
    name = "xlapy.math.two_over_pi_26"
    table = module.globals.get(name)
    if table is None:
        array = ir.ArrayType(F64, len(F64_CHUNKS))
        table = ir.GlobalVariable(module, array, name)
        table.initializer = ir.Constant(array, [float(c) for c in F64_CHUNKS])
        table.global_constant = True
        table.linkage = "internal"
    return table


def _reduce_f64_large(v: Lanes, a):
    """Payne-Hanek for finite a = |x| >= 2^19 (double)."""
    b = v.b
    q = v.sub(_exponent(v, a), v.c(52.0))           # a = m·2^q, m < 2^53
    j0 = v.max_c(_chunk_index(v, q, F64_CHUNK), 0.0)
    j0 = v.min_c(j0, float(len(F64_CHUNKS) - F64_TERMS))
    index = v.to_int(j0)
    scaled = v.mul(a, v.pow2(b.mul(index, v.ci(-F64_CHUNK))))  # a·2^(-26·j0), exact
    high = v.high_half(scaled)
    low = v.sub(scaled, high)
    table = _chunk_table(v)
    terms = []
    for i in range(F64_TERMS):
        chunk = _gather(v, table, b.add(index, v.ci(i)))
        chunk = v.mul(chunk, v.c(2.0 ** (-F64_CHUNK * (i + 1))))
        terms += [v.mul(high, chunk), v.mul(low, chunk)]
    hi, lo, n = _sum_mod4(v, terms, integral=7, exact=9)
    r, r_lo = _times_pio2(v, hi, lo)
    return r, r_lo, n


def _reduce_f64_moderate(v: Lanes, a):
    """Cody-Waite for 0 <= a < 2^19: k·PIO2_1 and k·PIO2_2 are exact (k < 2^20),
    a - k·PIO2_1 is exact (same binade or smaller)."""
    k = v.rint(v.mul(a, v.c(TWO_OVER_PI)))
    t = v.sub(a, v.mul(k, v.c(PIO2_1)))
    r, err = v.two_sum(t, v.neg(v.mul(k, v.c(PIO2_2))))
    r_lo = v.sub(err, v.mul(k, v.c(PIO2_3)))
    r, r_lo = v.fast_two_sum(r, r_lo)
    return r, r_lo, k


def reduce(v: Lanes, a, is_f32: bool):
    """(r, r_lo, n) for a = |x| (any double; inf and NaN give garbage, no poison)."""
    finite = v.lt(a, v.c(INF))
    safe = v.select(finite, a, v.c(1.0))
    if is_f32:
        r, r_lo, n = _reduce_f32(v, safe)
    else:
        moderate = v.lt(safe, v.c(CODY_WAITE_LIMIT))
        r1, r1_lo, n1 = _reduce_f64_moderate(v, v.select(moderate, safe, v.c(1.0)))
        large = v.select(moderate, v.c(CODY_WAITE_LIMIT), safe)
        r2, r2_lo, n2 = _reduce_f64_large(v, large)
        r = v.select(moderate, r1, r2)
        r_lo = v.select(moderate, r1_lo, r2_lo)
        n = v.select(moderate, n1, n2)
    small = v.lt(a, v.c(0.7853981633974483))
    r = v.select(small, a, r)
    r_lo = v.select(small, v.c(0.0), r_lo)
    n = v.select(small, v.c(0.0), n)
    return r, r_lo, v.b.and_(v.to_int(n), v.ci(3))


# -- kernels --------------------------------------------------------------------------------
def _sin_kernel(v: Lanes, r, r_lo, is_f32: bool):
    """sin(r + r_lo) = r + (r³·S(r²) + r_lo·(1 - r²/2)), as a pair (hi, lo) for f64
    and (value, None) for f32 (whose r_lo is 0)."""
    z = v.mul(r, r)
    tail = v.mul(v.mul(z, r), v.horner(z, SIN_F32 if is_f32 else SIN_F64))
    if is_f32:
        return v.add(r, tail), None
    tail = v.add(tail, v.mul(r_lo, v.sub(v.c(1.0), v.mul(v.c(0.5), z))))
    return v.fast_two_sum(r, tail)


def _cos_kernel(v: Lanes, r, r_lo, is_f32: bool):
    """cos(r + r_lo) = w + (((1 - w) - z/2) + (z²·C(z) - r·r_lo)), w = 1 - z/2: the
    bracket recovers the rounding of w (f64 only). A pair like `_sin_kernel`'s."""
    z = v.mul(r, r)
    half = v.mul(v.c(0.5), z)
    w = v.sub(v.c(1.0), half)
    tail = v.mul(v.mul(z, z), v.horner(z, COS_F32 if is_f32 else COS_F64))
    if is_f32:
        return v.add(w, tail), None
    tail = v.sub(tail, v.mul(r, r_lo))
    return v.fast_two_sum(w, v.add(v.sub(v.sub(v.c(1.0), w), half), tail))


def _value(v: Lanes, pair):
    hi, lo = pair
    return hi if lo is None else v.add(hi, lo)


def _flip_sign(v: Lanes, y, condition):
    """-y where condition (a bit flip: exact, keeps NaN)."""
    mask = v.b.select(condition, v.ci(1 << 63), v.ci(0))
    return v.from_bits(v.b.xor(v.bits(y), mask))


def _invalid(v: Lanes, x, y):
    """NaN for infinite or NaN x."""
    return v.select(v.b.fcmp_unordered("==", v.fabs(x), v.c(INF)), v.c(NAN), y)


def _odd(v: Lanes, n):
    return v.b.icmp_signed("!=", v.b.and_(n, v.ci(1)), v.ci(0))


def _negative(v: Lanes, x):
    return v.b.icmp_signed("<", v.bits(x), v.ci(0))


def sin(v: Lanes, x, is_f32: bool):
    """sin; sin(-0) = -0, sin(±inf) = NaN. Measured error (max over 10^7 samples
    over the whole range, huge arguments included): f32 0.50 ULP, f64 0.77 ULP."""
    r, r_lo, n = reduce(v, v.fabs(x), is_f32)
    s = _value(v, _sin_kernel(v, r, r_lo, is_f32))
    c = _value(v, _cos_kernel(v, r, r_lo, is_f32))
    y = v.select(_odd(v, n), c, s)
    half_turn = v.b.icmp_signed("!=", v.b.and_(n, v.ci(2)), v.ci(0))
    y = _flip_sign(v, y, v.b.xor(half_turn, _negative(v, x)))
    return _invalid(v, x, y)


def cos(v: Lanes, x, is_f32: bool):
    """cos; cos(±inf) = NaN. Measured error: f32 0.50 ULP, f64 0.79 ULP."""
    r, r_lo, n = reduce(v, v.fabs(x), is_f32)
    s = _value(v, _sin_kernel(v, r, r_lo, is_f32))
    c = _value(v, _cos_kernel(v, r, r_lo, is_f32))
    y = v.select(_odd(v, n), s, c)
    shifted = v.b.add(n, v.ci(1))
    y = _flip_sign(v, y, v.b.icmp_signed("!=", v.b.and_(shifted, v.ci(2)), v.ci(0)))
    return _invalid(v, x, y)


def tan(v: Lanes, x, is_f32: bool):
    """tan = sin(r)/cos(r), or -cos(r)/sin(r) in odd quadrants (for f64 a quotient of
    double-doubles); tan(-0) = -0. Measured error: f32 0.50 ULP, f64 1.03 ULP."""
    r, r_lo, n = reduce(v, v.fabs(x), is_f32)
    s, s_lo = _sin_kernel(v, r, r_lo, is_f32)
    c, c_lo = _cos_kernel(v, r, r_lo, is_f32)
    odd = _odd(v, n)
    if is_f32:
        y = v.div(v.select(odd, v.neg(c), s), v.select(odd, s, c))
    else:
        y = v.div_dd(v.select(odd, v.neg(c), s), v.select(odd, v.neg(c_lo), s_lo),
                     v.select(odd, s, c), v.select(odd, s_lo, c_lo))
    y = _flip_sign(v, y, _negative(v, x))
    return _invalid(v, x, y)


# -- atan2 ----------------------------------------------------------------------------------
def _atan_unit(v: Lanes, t, is_f32: bool):
    """atan t for t in [0, 1] (or NaN): pi/4 + atan((t - 1)/(t + 1)) above tan(pi/8)."""
    upper = v.gt(t, v.c(TAN_PI_8))
    u = v.select(upper, v.div(v.sub(t, v.c(1.0)), v.add(t, v.c(1.0))), t)
    z = v.mul(u, u)
    tail = v.mul(v.mul(z, u), v.horner(z, ATAN_F32 if is_f32 else ATAN_F64))
    base = v.select(upper, v.c(PIO2 / 2), v.c(0.0))
    base_lo = v.select(upper, v.c(PIO2_LO / 2), v.c(0.0))
    return v.add(base, v.add(u, v.add(tail, base_lo)))


def atan2(v: Lanes, y, x, is_f32: bool):
    """atan2(y, x) (HLO atan2(lhs, rhs) = NumPy arctan2(lhs, rhs)) with C99's
    special cases: the signs of zeros pick ±0 or ±pi, infinities give the
    multiples of pi/4. Measured error: f32 0.50 ULP, f64 2.16 ULP (the quotient
    and the reduction to [0, tan(pi/8)] each round once in f64)."""
    b = v.b
    ax, ay = v.fabs(x), v.fabs(y)
    swap = v.gt(ay, ax)
    num = v.select(swap, ax, ay)
    den = v.select(swap, ay, ax)
    both_inf = b.and_(v.eq(ax, v.c(INF)), v.eq(ay, v.c(INF)))
    t = v.div(num, den)
    t = v.select(v.eq(den, v.c(0.0)), v.c(0.0), t)       # atan2(±0, ±0)
    t = v.select(both_inf, v.c(1.0), t)
    angle = _atan_unit(v, t, is_f32)
    angle = v.select(swap, v.add(v.c(PIO2), v.sub(v.c(PIO2_LO), angle)), angle)
    behind = _negative(v, x)
    angle = v.select(behind, v.add(v.c(PI), v.sub(v.c(PI_LO), angle)), angle)
    angle = v.select(b.or_(v.isnan(x), v.isnan(y)), v.add(x, y), angle)
    return v.copysign(angle, y)
