"""When two results of one program agree: the campaigns' and tests' one rule.

Structure, dtypes and shapes must be the same; integers and booleans equal;
floats equal where not finite (NaN where NaN, each infinity in its place) and
elsewhere close to a relative tolerance of the result's largest magnitude,
set per element type. The tolerance is a budget for rounding, not for
semantics: sums may associate differently (XLA lets reducers reassociate),
narrow floats round after every operation, and transcendental functions are
accurate to a few ULP, on both sides.
"""

from __future__ import annotations

import numpy as np

TOLERANCE = {"float64": 1e-9, "float32": 1e-4, "float16": 2e-2, "bfloat16": 8e-2,
             "complex64": 1e-4, "complex128": 1e-9}
"""Relative tolerance per element type (of the output's largest finite magnitude)."""


def mismatch(expected, actual, tolerance: dict[str, float] | None = None,
             where: str = "output") -> str | None:
    """Why `actual` does not match `expected` (nested lists/tuples of arrays), or None."""
    tolerance = TOLERANCE if tolerance is None else tolerance
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(expected) != len(actual):
            return f"{where}: {len(expected)} results expected, got " \
                   f"{len(actual) if isinstance(actual, (list, tuple)) else type(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            problem = mismatch(e, a, tolerance, f"{where}[{i}]")
            if problem:
                return problem
        return None
    e, a = np.asarray(expected), np.asarray(actual)
    if e.dtype != a.dtype or e.shape != a.shape:
        return f"{where}: expected {e.dtype}{list(e.shape)}, got {a.dtype}{list(a.shape)}"
    rtol = tolerance.get(e.dtype.name)
    if rtol is None:
        bad = e != a
        if np.any(bad):
            first = tuple(int(i) for i in np.argwhere(bad)[0])
            return f"{where}: {int(bad.sum())} of {e.size} elements differ; at {first}: " \
                   f"expected {e[first]}, got {a[first]}"
        return None
    if e.dtype.kind == "c":
        return mismatch(np.stack([e.real, e.imag]), np.stack([a.real, a.imag]),
                        {e.real.dtype.name: rtol}, where)
    return _float_mismatch(e.astype(np.float64), a.astype(np.float64), rtol, where)


def _float_mismatch(e: np.ndarray, a: np.ndarray, rtol: float, where: str) -> str | None:
    finite = np.isfinite(e)
    # NaN where NaN, inf where inf (same sign)
    special = ~finite
    same = (np.isnan(e) & np.isnan(a)) | (e == a)
    bad = special & ~same
    if np.any(bad):
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        return f"{where}: at {first} expected {e[first]}, got {a[first]}"
    scale = max(1.0, float(np.max(np.abs(e[finite]), initial=0.0)))
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(a - e)
        limit = rtol * scale + rtol * np.abs(e)
        bad = finite & ~(error <= limit)
    if np.any(bad):
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        worst = float(np.max(np.where(finite, error, 0.0)))
        return f"{where}: {int(bad.sum())} of {e.size} elements differ beyond " \
               f"{rtol:g} x {scale:.3g}; at {first} expected {e[first]!r}, got " \
               f"{a[first]!r} (largest error {worst:.3g})"
    return None


def assert_matches(expected, actual, context: str = "") -> None:
    """`mismatch` as an assertion (for tests)."""
    problem = mismatch(list(expected), list(actual))
    assert problem is None, f"{problem}\n{context}" if context else problem
