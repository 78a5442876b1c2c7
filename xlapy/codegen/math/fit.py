"""Where the polynomial coefficients in this package come from (a development tool).

`remez` finds the weighted minimax polynomial Σ c_i·x^p_i on [a, b] with the
exchange algorithm in mpmath's 40-digit arithmetic; `rounded_error` measures
the error after the coefficients are rounded to doubles. The coefficient
tuples in the emitter modules were printed by `python -m
xlapy.codegen.math._fits`; nothing here runs when a program is compiled.
"""

from __future__ import annotations

import struct

import mpmath as mp

mp.mp.dps = 40


def _solve(f, powers, weight, ref):
    """Coefficients and levelled error E with w(x)(f(x) - p(x)) = (-1)^i E on `ref`."""
    n = len(powers)
    rows = []
    rhs = []
    for i, x in enumerate(ref):
        w = weight(x)
        rows.append([w * x ** p for p in powers] + [(-1) ** i])
        rhs.append(w * f(x))
    sol = mp.lu_solve(mp.matrix(rows), mp.matrix(rhs))
    return [sol[i] for i in range(n)], sol[n]


def _error(f, powers, weight, coeffs):
    return lambda x: weight(x) * (f(x) - sum(c * x ** p for c, p in zip(coeffs, powers)))


def _extrema(err, a, b, count):
    """Local extrema of `err` on a dense grid (with the end points), refined by the grid."""
    grid = [a + (b - a) * (1 - mp.cos(mp.pi * k / count)) / 2 for k in range(count + 1)]
    values = [err(x) for x in grid]
    picked = [0]
    for k in range(1, count):
        if (values[k] - values[k - 1]) * (values[k + 1] - values[k]) <= 0:
            picked.append(k)
    picked.append(count)
    return [(grid[k], values[k]) for k in picked]


def _alternating(points, n):
    """n alternating-sign points keeping the largest |error| in each sign run."""
    runs = []
    for x, v in points:
        if v == 0:
            continue
        if runs and mp.sign(runs[-1][1]) == mp.sign(v):
            if abs(v) > abs(runs[-1][1]):
                runs[-1] = (x, v)
        else:
            runs.append((x, v))
    while len(runs) > n:
        # Drop an end point or the smaller of two neighbours, keeping alternation.
        if abs(runs[0][1]) < abs(runs[-1][1]):
            runs.pop(0)
        else:
            runs.pop()
    return [x for x, _ in runs]


def remez(f, powers, a, b, weight=lambda x: 1, iterations=12, grid=1500):
    """Minimax coefficients (as mpf) of Σ c_i x^powers[i] for w·(f - p) on [a, b]."""
    a, b = mp.mpf(a), mp.mpf(b)
    n = len(powers) + 1
    # Chebyshev nodes of the first kind: interior points, so a weight that
    # vanishes at the centre of the interval does not make the first system singular.
    ref = [a + (b - a) * (1 - mp.cos(mp.pi * (k + mp.mpf(1) / 2) / n)) / 2 for k in range(n)]
    coeffs = None
    for _ in range(iterations):
        coeffs, _level = _solve(f, powers, weight, ref)
        err = _error(f, powers, weight, coeffs)
        new_ref = _alternating(_extrema(err, a, b, grid), n)
        if len(new_ref) < n:
            break
        ref = new_ref
    return coeffs


def to_single(c) -> float:
    """c rounded to the nearest float32 (as a Python float)."""
    return float(struct.unpack("<f", struct.pack("<f", float(c)))[0])


def remez_single(f, powers, a, b, weight=lambda x: 1):
    """Minimax coefficients for float32 code: rounded to float32 one at a time, lowest
    power first, the rest refitted after each rounding so they absorb its error
    (rounding all at once costs the f32 fits several bits). Where a refit has no
    alternating solution (no constant term left on an interval around 0) the
    last fit's remaining coefficients are rounded as they are."""
    fixed: list = []

    def rest(x):
        return f(x) - sum(c * x ** p for c, p in zip(fixed, powers))

    fit = remez(f, powers, a, b, weight)
    for i in range(len(powers)):
        try:
            refit = remez(rest, powers[i:], a, b, weight)
        except ZeroDivisionError:
            refit = None
        if refit is not None and rounded_error(rest, powers[i:], a, b, weight, refit) < \
                rounded_error(rest, powers[i:], a, b, weight, fit[i:]):
            fit = fit[:i] + refit
        fixed.append(mp.mpf(to_single(fit[i])))
    return fixed


def rounded_error(f, powers, a, b, weight, coeffs, samples=4000, single=False) -> float:
    """max |w·(f - p)| on [a, b] with the coefficients rounded to doubles (to floats
    for `single`)."""
    rounded = [mp.mpf(to_single(c) if single else float(c)) for c in coeffs]
    err = _error(f, powers, weight, rounded)
    return float(max(abs(v) for _, v in _extrema(err, mp.mpf(a), mp.mpf(b), samples)))


def show(name, f, powers, a, b, weight=lambda x: 1):
    """Fit and print one problem; names ending in 32 get float32 coefficients."""
    single = name.endswith("32")
    coeffs = (remez_single if single else remez)(f, powers, a, b, weight)
    e = rounded_error(f, powers, a, b, weight, coeffs, single=single)
    print(f"{name}: max weighted error {e:.3g} (2^{float(mp.log(e, 2)) if e else -999:.1f})")
    print("    (" + ", ".join(repr(to_single(c) if single else float(c)) for c in coeffs) + ")")
    return coeffs


def removable(g, at_zero):
    """g with its removable singularity at 0 filled in; small x are evaluated with
    enough extra digits that the cancellation in g's closed form does not show."""
    def safe(x):
        if x == 0:
            return mp.mpf(at_zero)
        if abs(x) < mp.mpf("1e-4"):
            with mp.workdps(mp.mp.dps + 2 * int(-mp.log10(abs(x))) + 10):
                return +g(x)
        return g(x)
    return safe
