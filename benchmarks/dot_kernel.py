"""Speed of the CPU backend's GEMM kernel (LLVM, `kernels/gemm.py`) against NumPy's BLAS.

Shapes are M x K x N (A is M x K, B is K x N); layouts say which operands are
transposed views (T) rather than row-major (N). Each time is the best of
several runs taken in turns (the machine may be shared), in GFLOP/s = 2MNK / s.
Our kernel is called from a loop in machine code, as compiled code calls it;
NumPy through `np.dot(a, b, out=c)` (its per-call overhead, ~1 us, counts).
NumPy's single-thread column comes from a child process started with
OPENBLAS_NUM_THREADS=1 (OpenBLAS fixes its thread count when loaded).

    python -m benchmarks.dot_kernel [--quick]
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import time
from functools import partial

import llvmlite.ir as ir
import numpy as np

CASES = [  # (M, K, N, layout)
    (1024, 1024, 1024, "NN"), (1024, 1024, 1024, "TN"), (1024, 1024, 1024, "NT"),
    (1000, 1000, 1000, "NN"), (4096, 1024, 1024, "NN"), (256, 256, 256, "NN"),
    (100, 784, 10, "NN"),   # MNIST step: x @ W
    (784, 100, 10, "TN"),   # its weight gradient: x^T @ g
    (100, 10, 784, "NT"),   # its input gradient: g @ W^T
    (1, 1024, 1024, "NN"), (1024, 1024, 1, "NN"), (1024, 1024, 1, "TN"),  # matrix-vector
]
QUICK = [(1024, 1024, 1024, "NN"), (100, 784, 10, "NN")]
_SIGNATURE = ctypes.CFUNCTYPE(None, *[ctypes.c_int64] * 3,
                              *[ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64] * 2,
                              ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


def compile_gemm(dtype, threads: int):
    """(call(a, b, c, repeat), compile seconds) for the kernel of `dtype` on up to
    `threads` threads. `call` runs gemm `repeat` times from a loop in machine code, the
    way a compiled dot calls it: one ctypes call costs more than a small product."""
    from xlapy.backends.cpu import llvm_target
    from xlapy.backends.cpu.kernels.gemm import gemm_function
    from xlapy.codegen.loops import for_range

    module = llvm_target.new_module(f"bench_gemm_{np.dtype(dtype).name}_{threads}")
    fn = gemm_function(module, np.dtype(dtype), threads)
    entry = ir.Function(module, ir.FunctionType(ir.VoidType(), [*fn.ftype.args, ir.IntType(64)]),
                        "bench_gemm")
    builder = ir.IRBuilder(entry.append_basic_block())
    with for_range(builder, 0, entry.args[-1]):
        builder.call(fn, entry.args[:-1])
    builder.ret_void()
    start = time.perf_counter()
    loaded = llvm_target.LoadedObject(llvm_target.compile_to_object(module))
    seconds = time.perf_counter() - start
    raw = _SIGNATURE(loaded.address("bench_gemm"))

    def call(a, b, c, repeat=1):
        s = a.itemsize
        raw(a.shape[0], b.shape[1], a.shape[1], a.ctypes.data, a.strides[0] // s,
            a.strides[1] // s, b.ctypes.data, b.strides[0] // s, b.strides[1] // s,
            c.ctypes.data, c.strides[0] // s, repeat)

    call.loaded = loaded  # the machine code lives as long as the callable
    return call, seconds


def numpy_dot(a, b, c, repeat=1):
    for _ in range(repeat):
        np.dot(a, b, out=c)


def operands(m: int, k: int, n: int, layout: str, dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((k, m) if layout[0] == "T" else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if layout[1] == "T" else (k, n)).astype(dtype)
    return (a.T if layout[0] == "T" else a), (b.T if layout[1] == "T" else b)


def best_times(functions, flops: float, budget_s: float = 0.6) -> list[float]:
    """Best seconds per call of each `fn(repeat)`, timed over batches of `repeat` calls
    (about a millisecond each); the functions take turns three times. Blocks rather
    than a fine interleaving: a call right after NumPy's can find OpenBLAS's threads
    still spinning."""
    repeat = max(1, int(1e-3 / max(flops / 5e10, 1e-7)))
    batches = int(min(50, max(2, budget_s / 3 / len(functions) / (repeat * flops / 5e10))))
    best = [float("inf")] * len(functions)
    for _ in range(3):
        for i, fn in enumerate(functions):
            fn(repeat)
            for _ in range(batches):
                start = time.perf_counter()
                fn(repeat)
                best[i] = min(best[i], (time.perf_counter() - start) / repeat)
    return best


def numpy_single_thread(cases, dtypes) -> dict:
    """{(dtype, case): seconds} of np.dot with one OpenBLAS thread, from a child process."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    request = json.dumps({"cases": cases, "dtypes": dtypes})
    out = subprocess.run([sys.executable, "-m", "benchmarks.dot_kernel", "--numpy-child",
                          request], env=env, capture_output=True, text=True, check=True)
    return {(d, tuple(c)): s for d, c, s in json.loads(out.stdout)}


def _numpy_child(request: str) -> None:
    spec = json.loads(request)
    rows = []
    for dtype in spec["dtypes"]:
        for case in spec["cases"]:
            m, k, n, layout = case
            a, b = operands(m, k, n, layout, dtype)
            c = np.empty((m, n), dtype)
            (seconds,) = best_times([partial(numpy_dot, a, b, c)], 2.0 * m * n * k,
                                    budget_s=0.3)
            rows.append((dtype, case, seconds))
    print(json.dumps(rows))


def main(quick: bool) -> None:
    cases = QUICK if quick else CASES
    dtypes = ["float32", "float64"]
    single = numpy_single_thread(cases, dtypes)
    threads = os.cpu_count() or 1
    print(f"GEMM kernel vs np.dot ({threads} cores; GFLOP/s, best of runs taken in turns)")
    print(f"{'dtype':8} {'M x K x N':>16} {'lay':>3} | {'ours 1t':>8} {'numpy 1t':>8} "
          f"{'ratio':>5} | {f'ours {threads}t':>8} {'numpy':>8} {'ratio':>5}")
    for dtype in dtypes:
        one, compile_1 = compile_gemm(dtype, 1)
        many, compile_n = compile_gemm(dtype, threads)
        for m, k, n, layout in cases:
            a, b = operands(m, k, n, layout, dtype)
            c = np.empty((m, n), dtype)
            flops = 2.0 * m * n * k
            ours_1, ours_n, numpy_n = best_times(
                [partial(one, a, b, c), partial(many, a, b, c), partial(numpy_dot, a, b, c)],
                flops)
            np.testing.assert_allclose(c, np.dot(a, b), rtol=1e-3, atol=1e-3 * np.sqrt(k))
            numpy_1 = single[(dtype, (m, k, n, layout))]
            g = flops / 1e9
            print(f"{dtype:8} {f'{m}x{k}x{n}':>16} {layout:>3} | {g / ours_1:8.1f} "
                  f"{g / numpy_1:8.1f} {numpy_1 / ours_1:5.2f} | {g / ours_n:8.1f} "
                  f"{g / numpy_n:8.1f} {numpy_n / ours_n:5.2f}")
        print(f"  {dtype}: compile {compile_1:.2f} s (1 thread), {compile_n:.2f} s ({threads})")
    print("ratio = NumPy time / our time (above 1: ours is faster)")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--numpy-child":
        _numpy_child(sys.argv[2])
    else:
        main(quick="--quick" in sys.argv)
