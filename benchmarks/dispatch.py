"""Per-call overhead of `xlapy.jit` and of eager ops, on a tiny input.

The jitted call path flattens the arguments, looks the signature up in the
cache and runs the executable: no graph is walked. This benchmark measures
that path against a plain NumPy call and an eager xlapy op, side by side.
"""

from __future__ import annotations

import time

import numpy as np

import xlapy
import xlapy.numpy as xnp


def median_time(fn, *args, repeat: int = 7, number: int = 200) -> float:
    """Median seconds per call over `repeat` rounds of `number` calls (after warm-up)."""
    fn(*args)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn(*args)
        times.append((time.perf_counter() - start) / number)
    return float(np.median(times))


def main() -> None:
    x = np.ones(4, np.float32)
    y = np.ones(4, np.float32)

    def f(a, b):
        return a * b + a

    jitted = xlapy.jit(f)
    ax, ay = xnp.asarray(x), xnp.asarray(y)
    numpy_s = median_time(f, x, y)
    eager_s = median_time(f, ax, ay)
    jit_s = median_time(jitted, x, y)
    jit_arrays_s = median_time(jitted, ax, ay)
    executable = next(iter(jitted._cache.values())).executable
    execute_s = median_time(executable.execute, x, y)
    print("dispatch overhead, f(a, b) = a * b + a on f32[4] (median per call)")
    print(f"  NumPy op by op        {numpy_s * 1e6:9.1f} us   1.00x")
    print(f"  xlapy eager           {eager_s * 1e6:9.1f} us {eager_s / numpy_s:6.1f}x")
    print(f"  xlapy jit (NumPy in)  {jit_s * 1e6:9.1f} us {jit_s / numpy_s:6.1f}x")
    print(f"  xlapy jit (Array in)  {jit_arrays_s * 1e6:9.1f} us {jit_arrays_s / numpy_s:6.1f}x")
    print(f"  of which execution    {execute_s * 1e6:9.1f} us   (the executable alone)")
    print(f"  jit dispatch overhead {(jit_arrays_s - execute_s) * 1e6:9.1f} us   "
          "(cache lookup, argument flattening, result wrapping)")
    print(f"  compiles: {jitted.compile_count} (backend: {xlapy.devices()[0]})")


if __name__ == "__main__":
    main()
