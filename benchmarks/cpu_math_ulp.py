"""Accuracy and speed of the CPU backend's vectorised math functions.

For each function and f32/f64 it JIT-compiles the loop the backend's fusions
run (`xlapy.backends.cpu.math_jit.MathLoop`), measures the max and mean ULP
error against a long double reference (the C library's expl, erfl, ... on
x86-64; see `backends/cpu/math_reference.py`) over --samples inputs per case (half
log-uniform over the whole float range, subnormals included, half in each
function's working ranges and overflow/underflow edges), checks the special
values against NumPy's (the interpreter's) results, and times ns/element
against NumPy's own function (SciPy's for erf and logistic) on 10^5 typical
inputs, single-threaded, the best of 60 runs.

    PYTHONPATH=. python benchmarks/cpu_math_ulp.py [--samples 10000000] [names...]

With --exhaustive it instead measures the f32 functions on every one of the
2^32 float32 inputs against NumPy's float64 functions (whose own error, below
one double ULP, is 2^-29 of a float ULP): the figures the f32 docstrings state.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from xlapy.backends.cpu.math_jit import MathLoop
from xlapy.backends.cpu.math_reference import reference, samples, specials, ulp_error
from xlapy.codegen.math import BINARY, UNARY

CHUNK = 1_000_000


def _numpy(name: str):
    """NumPy's function, as the interpreter applies it."""
    from scipy import special

    table = {
        "exponential": np.exp, "exponential-minus-one": np.expm1, "log": np.log,
        "log-plus-one": np.log1p, "tanh": np.tanh, "logistic": special.expit,
        "erf": special.erf, "sine": np.sin, "cosine": np.cos, "tan": np.tan,
        "rsqrt": lambda x: 1 / np.sqrt(x), "cbrt": np.cbrt, "power": np.power,
        "atan2": np.arctan2,
    }
    return table[name]


def _expected(name: str, args: list[np.ndarray], dtype) -> np.ndarray:
    """The interpreter's result: NumPy in float64, rounded once (C99 pow special cases
    for power, 1/(1 + exp(-x)) for logistic)."""
    wide = [a.astype(np.float64) for a in args]
    with np.errstate(all="ignore"):
        if name == "logistic":
            value = 1 / (1 + np.exp(-wide[0]))
        elif name == "power":
            value = np.power(*wide)
            value = np.where((wide[0] == 1) | (wide[1] == 0), 1.0, value)
        else:
            value = _numpy(name)(*wide)
        return value.astype(dtype)


def special_mismatches(name: str, dtype) -> int:
    """How many special-value inputs give a result other than NumPy's: a NaN where it
    has none (or not), another infinity or signed zero, or a finite value over 4 ULP off."""
    s = specials(dtype)
    args = [s] if name in UNARY else [np.repeat(s, s.size), np.tile(s, s.size)]
    got = MathLoop(name, dtype)(*args)
    want = _expected(name, args, dtype)
    same_nan = np.isnan(got) == np.isnan(want)
    exact = (want == 0) | np.isinf(want)
    exact_ok = ~exact | ((got == want) & (np.signbit(got) == np.signbit(want)))
    close = ulp_error(got, want, dtype) <= 4
    return int(np.sum(~(same_nan & exact_ok & (close | np.isnan(want)))))


def accuracy(name: str, dtype, n: int) -> tuple[float, float, np.ndarray]:
    loop = MathLoop(name, dtype)
    worst, total, count, worst_at = 0.0, 0.0, 0, None
    for start in range(0, n, CHUNK):
        size = min(CHUNK, n - start)
        x, y = samples(name, dtype, size, seed=start // CHUNK)
        args = [x] if y is None else [x, y]
        got = loop(*args)
        want = reference(name, *[a.astype(np.float64) for a in args])
        error = ulp_error(got, want, dtype)
        finite = np.isfinite(error)
        if not finite.all():
            i = int(np.argmin(finite))
            raise AssertionError(f"{name} {np.dtype(dtype).name}: NaN/inf mismatch at "
                                 f"{[a[i] for a in args]}: got {got[i]}, want {want[i]}")
        i = int(np.argmax(error))
        if error[i] > worst:
            worst, worst_at = float(error[i]), [a[i] for a in args]
        total += float(error.sum())
        count += size
    return worst, total / count, worst_at


def exhaustive(name: str) -> tuple[float, float, float]:
    """(max ULP, mean ULP over finite results, worst input) over every float32."""
    loop = MathLoop(name, np.float32)
    chunk = 1 << 21   # float64 temporaries under malloc's mmap threshold: no page faults
    worst, worst_at, total, count = 0.0, float("nan"), 0.0, 0
    for start in range(0, 1 << 32, chunk):
        x = np.arange(start, start + chunk, dtype=np.uint64).astype(np.uint32).view(np.float32)
        got = loop(x)
        want = _expected(name, [x], np.float64)
        error = ulp_error(got, want, np.float32)
        i = int(np.argmax(error))
        if error[i] > worst:
            worst, worst_at = float(error[i]), float(x[i])
        finite = np.isfinite(want)
        total += float(error[finite].sum())
        count += int(finite.sum())
    return worst, total / count, worst_at


TYPICAL = {
    "exponential": (-50, 50), "exponential-minus-one": (-50, 50), "log": (1e-3, 1e3),
    "log-plus-one": (-0.9, 100), "tanh": (-10, 10), "logistic": (-20, 20), "erf": (-4, 4),
    "sine": (-100, 100), "cosine": (-100, 100), "tan": (-100, 100), "rsqrt": (1e-3, 1e3),
    "cbrt": (-1e3, 1e3), "power": (0.1, 10), "atan2": (-10, 10),
}
"""Uniform ranges for timing: the values models feed these functions (the accuracy
sets' subnormals would time the CPU's slow subnormal arithmetic instead)."""

TIMING_SIZE = 100_000


def _best_time(fn, repeat=60) -> float:
    """Least seconds of `repeat` runs: robust to other processes on the machine."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def speed(name: str, dtype) -> tuple[float, float]:
    """ns/element on TYPICAL inputs: ours, NumPy's."""
    rng = np.random.default_rng(99)
    lo, hi = TYPICAL[name]
    x = rng.uniform(lo, hi, TIMING_SIZE).astype(dtype)
    args = [x]
    if name in BINARY:
        args.append(rng.uniform(-10, 10, TIMING_SIZE).astype(dtype))
    loop = MathLoop(name, dtype)
    out = np.empty_like(x)
    ours = _best_time(lambda: loop.run(*args, out=out))
    reference_fn = _numpy(name)
    with np.errstate(all="ignore"):
        theirs = _best_time(lambda: reference_fn(*args))
    return ours / TIMING_SIZE * 1e9, theirs / TIMING_SIZE * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000_000)
    parser.add_argument("--exhaustive", action="store_true",
                        help="every float32 input, f32 only (minutes per function)")
    parser.add_argument("names", nargs="*", default=list(UNARY) + list(BINARY))
    options = parser.parse_args()
    if options.exhaustive:
        print(f"{'function':24} {'max ULP':>8} {'mean ULP':>9}  worst at   (all 2^32 f32 inputs)")
        for name in options.names:
            if name in UNARY:
                worst, mean, at = exhaustive(name)
                print(f"{name:24} {worst:8.3f} {mean:9.4f}  {at!r}", flush=True)
        return
    print(f"{'function':24} {'dtype':7} {'max ULP':>8} {'mean ULP':>9} {'specials':>8} "
          f"{'ns/elem':>8} {'numpy':>7} {'speedup':>7}  worst at")
    for name in options.names:
        for dtype in (np.float32, np.float64):
            worst, mean, worst_at = accuracy(name, dtype, options.samples)
            bad = special_mismatches(name, dtype)
            ours, theirs = speed(name, dtype)
            at = ", ".join(repr(float(a)) for a in worst_at) if worst_at else "-"
            print(f"{name:24} {np.dtype(dtype).name:7} {worst:8.3f} {mean:9.4f} "
                  f"{'ok' if bad == 0 else f'{bad} bad':>8} {ours:8.2f} {theirs:7.2f} "
                  f"{theirs / ours:6.2f}x  {at}", flush=True)


if __name__ == "__main__":
    main()
