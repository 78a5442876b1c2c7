"""The approximation problems behind each coefficient tuple (input to `fit.py`).

Each entry: (name, f, powers, a, b, weight) — fit Σ c_i x^powers[i] to f on
[a, b] minimising max |weight·(f - p)|; the weight turns the polynomial's
error into the relative error of the function it serves.
"""

from __future__ import annotations

import mpmath as mp

from xlapy.codegen.math.fit import removable, show

R_EXP = 0.3466
"""|r| after exp's reduction r = x - k·ln2 (ln2/2 plus rounding)."""
Z_LOG = 0.02944
"""s² for s = f/(2+f), f = m - 1, m in [sqrt(1/2), sqrt(2))."""
Z_TRIG = 0.6180
"""r² for |r| <= pi/4 plus rounding."""
Z_ATAN = 0.41421356237309503**2 * 1.0001
"""u² for |u| <= tan(pi/8) plus rounding."""

_expm1_p = removable(lambda r: (mp.expm1(r) - r) / r**2, 0.5)
_expm1_w = removable(lambda r: r**2 / mp.expm1(r), 0)
# log(1+f) = f - f²/2 + s(f²/2 + z·P(z)), so z·P(z) = 2·atanh(s)/s - 2.
_log_p = removable(lambda z: (2 * mp.atanh(mp.sqrt(z)) / mp.sqrt(z) - 2) / z, mp.mpf(2) / 3)
# 2·atanh(s) = 2s + (2/3)s³ + s⁵·Q(z)
_pow_q = removable(lambda z: (2 * mp.atanh(mp.sqrt(z)) / mp.sqrt(z) - 2 - 2 * z / 3) / z**2,
                   mp.mpf(2) / 5)
_sin_s = removable(lambda z: (mp.sin(mp.sqrt(z)) - mp.sqrt(z)) / z**1.5, -mp.mpf(1) / 6)
_cos_c = removable(lambda z: (mp.cos(mp.sqrt(z)) - 1 + z / 2) / z**2, mp.mpf(1) / 24)
_atan_a = removable(lambda z: (mp.atan(mp.sqrt(z)) - mp.sqrt(z)) / z**1.5, -mp.mpf(1) / 3)
_erf_p = removable(lambda t: mp.erf(mp.sqrt(t)) / mp.sqrt(t), 2 / mp.sqrt(mp.pi))


def _deg(n):
    return list(range(n + 1))


def _erfc_interval(name, lo, hi, degree):
    mid = mp.mpf(lo + hi) / 2
    return (name, lambda d: -mp.erfc(mid + d), _deg(degree), lo - mid, hi - mid, lambda d: 1)


ALL = [
    ("EXPM1_F64", _expm1_p, _deg(10), -R_EXP, R_EXP, _expm1_w),
    ("EXPM1_F32", _expm1_p, _deg(5), -R_EXP, R_EXP, _expm1_w),
    ("LOG_F64", _log_p, _deg(6), 0, Z_LOG, lambda z: z / 2),
    ("LOG_F32", _log_p, _deg(3), 0, Z_LOG, lambda z: z / 2),
    ("POW_Q_F64", _pow_q, _deg(7), 0, Z_LOG, lambda z: z**2 / 2),
    ("CBRT0", mp.cbrt, _deg(3), 1, 8, lambda m: 1 / mp.cbrt(m)),
    ("ATAN_F64", _atan_a, _deg(10), 0, Z_ATAN, lambda z: z),
    ("ATAN_F32", _atan_a, _deg(5), 0, Z_ATAN, lambda z: z),
    ("SIN_F64", _sin_s, _deg(5), 0, Z_TRIG, lambda z: z),
    ("SIN_F32", _sin_s, _deg(3), 0, Z_TRIG, lambda z: z),
    ("COS_F64", _cos_c, _deg(5), 0, Z_TRIG, lambda z: z**2 / mp.cos(mp.sqrt(z))),
    ("COS_F32", _cos_c, _deg(3), 0, Z_TRIG, lambda z: z**2 / mp.cos(mp.sqrt(z))),
    ("ERF0_F64", _erf_p, _deg(11), 0, 1, lambda t: 1 / _erf_p(t)),
    ("ERF0_F32", _erf_p, _deg(7), 0, 1, lambda t: 1 / _erf_p(t)),
    _erfc_interval("ERF1_F64", 1, 2, 17),
    _erfc_interval("ERF2_F64", 2, 3, 17),
    _erfc_interval("ERF3_F64", 3, 4, 17),
    _erfc_interval("ERF4_F64", 4, 6, 19),
    _erfc_interval("ERF1_F32", 1, 2.2, 9),
    _erfc_interval("ERF2_F32", 2.2, 4, 9),
]


def main():
    """Print every coefficient tuple (`python -m xlapy.codegen.math._fits`)."""
    for args in ALL:
        show(*args)


if __name__ == "__main__":
    main()
