"""High-precision references for measuring the math functions (tests, benchmark).

On x86-64, where NumPy's longdouble is the 80-bit extended type, `reference`
evaluates the C library's long double functions (expl, erfl, powl, ...)
through a small JIT-compiled loop: 11 more bits than double, so the
reference's own error is below 1/1000 of a double ULP. Elsewhere it falls
back to mpmath (slow: use fewer samples).
"""

from __future__ import annotations

import ctypes
import functools
import platform

import llvmlite.binding as llvm
import numpy as np

from xlapy.backends.cpu import llvm_target

LIBM_LONG = {
    "exponential": "expl", "exponential-minus-one": "expm1l", "log": "logl",
    "log-plus-one": "log1pl", "tanh": "tanhl", "erf": "erfl", "sine": "sinl",
    "cosine": "cosl", "tan": "tanl", "cbrt": "cbrtl", "power": "powl", "atan2": "atan2l",
}
"""HLO name -> the libm long double function (logistic and rsqrt are composed)."""


def has_extended() -> bool:
    return (platform.machine() in ("x86_64", "AMD64")
            and np.finfo(np.longdouble).nmant == 63)


_LOOP = """
declare x86_fp80 @{f}({params})
define void @ref(double* noalias %x, double* noalias %y, x86_fp80* noalias %out, i64 %n) {{
entry:
  %any = icmp sgt i64 %n, 0
  br i1 %any, label %loop, label %done
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %px = getelementptr double, double* %x, i64 %i
  %vx = load double, double* %px
  %ex = fpext double %vx to x86_fp80
  %py = getelementptr double, double* %y, i64 %i
  %vy = load double, double* %py
  %ey = fpext double %vy to x86_fp80
  %r = call x86_fp80 @{f}({args})
  %po = getelementptr x86_fp80, x86_fp80* %out, i64 %i
  store x86_fp80 %r, x86_fp80* %po
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}}
"""


@functools.cache
def _libm_loop(function: str, binary: bool):
    params = "x86_fp80, x86_fp80" if binary else "x86_fp80"
    args = "x86_fp80 %ex, x86_fp80 %ey" if binary else "x86_fp80 %ex"
    tm = llvm_target.target_machine()
    text = _LOOP.format(f=function, params=params, args=args)
    header = f'target triple = "{tm.triple}"\ntarget datalayout = "{tm.target_data}"\n'
    module = llvm.parse_assembly(header + text)
    loaded = llvm_target.LoadedObject(llvm_target.emit_object(module, tm))
    prototype = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                 ctypes.c_int64)
    return loaded, prototype(loaded.address("ref"))


def _libm(function: str, x: np.ndarray, y: np.ndarray | None) -> np.ndarray:
    x = np.ascontiguousarray(x, np.float64)
    yy = x if y is None else np.ascontiguousarray(y, np.float64)
    out = np.empty(x.shape, np.longdouble)
    _, fn = _libm_loop(function, y is not None)
    fn(x.ctypes.data, yy.ctypes.data, out.ctypes.data, x.size)
    return out


def _mpmath(name: str, x: np.ndarray, y: np.ndarray | None) -> np.ndarray:
    import mpmath as mp  # optional: only where long double is not x86's 80-bit type

    functions = {
        "exponential": mp.exp, "exponential-minus-one": mp.expm1, "log": mp.log,
        "log-plus-one": mp.log1p, "tanh": mp.tanh, "erf": mp.erf, "sine": mp.sin,
        "cosine": mp.cos, "tan": mp.tan, "cbrt": mp.cbrt, "power": mp.power,
        "atan2": mp.atan2,
    }
    f = functions[name]
    with mp.workdps(40):
        if y is None:
            values = [float(f(mp.mpf(float(a)))) for a in x.ravel()]
        else:
            values = [float(f(mp.mpf(float(a)), mp.mpf(float(b))))
                      for a, b in zip(x.ravel(), y.ravel())]
    return np.array(values, np.float64).reshape(x.shape)


def reference(name: str, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
    """`name` at x (and y) to better than double precision (longdouble where the
    C library has it, else mpmath rounded to double: good for f32 only).
    Special values (NaN, inf, signed zeros) are not its business: the caller
    compares those with NumPy."""
    if name == "logistic":
        e = reference("exponential", -np.asarray(x, np.float64))
        return 1 / (1 + e)
    if name == "rsqrt":
        s = np.sqrt(np.asarray(x, np.float64).astype(np.longdouble))
        return 1 / s
    with np.errstate(all="ignore"):
        if has_extended():
            return _libm(LIBM_LONG[name], x, y)
        return _mpmath(name, x, y)


def ulp_error(got: np.ndarray, want: np.ndarray, dtype) -> np.ndarray:
    """|got - want| in ULPs of `dtype` at `want` (want at higher precision); 0 where
    got equals want rounded to dtype (infinities, zeros included), inf where
    exactly one is NaN or got is infinite and want is not."""
    dtype = np.dtype(dtype)
    info = np.finfo(dtype)
    want = np.asarray(want)
    wide = want.dtype.type if want.dtype.itemsize > 8 else np.float64
    with np.errstate(all="ignore"):
        w = want.astype(wide)
        g = got.astype(wide)
        magnitude = np.maximum(np.abs(w), wide(info.smallest_normal))
        _, exponent = np.frexp(magnitude)          # magnitude in [2^(e-1), 2^e)
        ulp = np.ldexp(np.ones_like(magnitude), exponent - 1 - info.nmant)
        error = (np.abs(g - w) / ulp).astype(np.float64)
        error[want.astype(dtype) == got] = 0.0
        both_nan = np.isnan(got) & np.isnan(want)
        error[both_nan] = 0.0
        error[np.isnan(got) != np.isnan(want)] = np.inf
    return error


# -- sample sets ------------------------------------------------------------------------------
def log_uniform(rng, n: int, dtype, signed: bool = True, low=None, high=None) -> np.ndarray:
    """Floats with uniformly drawn binades (subnormals included) and significands:
    every magnitude range weighs the same. low/high bound log2|x|."""
    info = np.finfo(dtype)
    low = info.minexp - info.nmant if low is None else low
    high = info.maxexp if high is None else high
    x = np.exp2(rng.uniform(low, high, n)).astype(dtype)
    if signed:
        x = np.where(rng.random(n) < 0.5, -x, x)
    return x.astype(dtype)


def _edge(rng, n, dtype, center, width):
    return (center + width * rng.uniform(-1, 1, n)).astype(dtype)


def _core(name: str, dtype) -> list:
    """(low, high) ranges where each function does its work."""
    f32 = np.dtype(dtype) == np.float32
    big = 88.7 if f32 else 709.8
    tiny = 103.9 if f32 else 745.1
    table = {
        "exponential": [(-tiny - 1, big + 1), (-1, 1), (big - 0.1, big + 0.1),
                        (-tiny - 0.1, -tiny + 0.1), (-big + 1.2, -big + 1.6)],
        "exponential-minus-one": [(-40, big + 1), (-1, 1), (-1e-4, 1e-4)],
        "log": [(0.5, 2), (1 - 1e-3, 1 + 1e-3), (0, 1e3)],
        "log-plus-one": [(-1, 1), (-1e-3, 1e-3), (-1, -0.9), (0, 1e4)],
        "tanh": [(-20, 20), (-1, 1), (-1e-3, 1e-3)],
        "logistic": [(-tiny - 1, 40), (-10, 10), (-1, 1)],
        "erf": [(-6, 6), (-1, 1), (-1e-3, 1e-3)],
        "sine": [(-10, 10), (-1e4, 1e4), (-1e-3, 1e-3)],
        "rsqrt": [(0, 10), (0, 1e-30)],
        "cbrt": [(-10, 10), (-1e-30, 1e-30)],
        "atan2": [(-1, 1), (-10, 10)],
    }
    table["cosine"] = table["tan"] = table["sine"]
    return table[name]


def samples(name: str, dtype, n: int, seed: int = 0):
    """(x, y or None): half log-uniform over the whole float range, half spread over
    the function's working ranges and edges; `power` draws y so that x**y
    covers the whole output range (and integer y for negative x)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if name == "power":
        return _power_samples(rng, dtype, n)
    half = n // 2
    parts = [log_uniform(rng, half, dtype, signed=name not in ("log", "rsqrt"))]
    ranges = _core(name, dtype)
    for i, (lo, hi) in enumerate(ranges):
        count = (n - half) // len(ranges) + (1 if i < (n - half) % len(ranges) else 0)
        parts.append(rng.uniform(lo, hi, count).astype(dtype))
    x = np.concatenate(parts)
    if name != "atan2":
        return x, None
    y = np.concatenate([log_uniform(rng, half, dtype),
                        rng.uniform(-10, 10, n - half).astype(dtype)])
    return x, rng.permutation(y)


def _power_samples(rng, dtype, n):
    info = np.finfo(dtype)
    x = log_uniform(rng, n, dtype, signed=False)
    target = rng.uniform(info.minexp - info.nmant - 2, info.maxexp + 2, n)   # log2 of x**y
    with np.errstate(all="ignore"):
        y = target / np.log2(x.astype(np.float64))
    near_one = slice(0, n // 8)            # x near 1 with large y: log's accuracy shows
    x[near_one] = (1 + rng.uniform(-1e-3, 1e-3, n // 8)).astype(dtype)
    y[near_one] = rng.uniform(-4e5, 4e5, n // 8)
    negative = slice(n // 8, n // 4)       # negative x with integer y
    x[negative] = -x[negative]
    y[negative] = np.round(y[negative])
    y = np.nan_to_num(y, nan=1.0).astype(dtype)
    return x, y


def specials(dtype) -> np.ndarray:
    info = np.finfo(dtype)
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0,
              float(info.smallest_subnormal), -float(info.smallest_subnormal),
              float(info.smallest_normal), float(info.max), -float(info.max), 1e-30, -1e-30]
    return np.array(values, dtype)
