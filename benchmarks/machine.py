"""This machine's limits, measured in the same run as the workloads.

* Memory bandwidth, STREAM's copy (b = a: 2 arrays of traffic) and triad
  (a = b + s*c: 3 arrays), and a read-only stream (sum(a)), each the better
  of NumPy on one thread and a compiled xlapy loop on every core, on arrays
  far larger than the caches. Writing costs more than reading (a written
  line is read in first), so floors use the best of the three: a floor is
  a bound no run can beat.
* Arithmetic: NumPy's BLAS GEMM (f32, large square), the best this machine's
  cores do at dense floating-point work.

A workload's floor is then max(bytes it must move ÷ bandwidth, flops ÷ peak).
"""

from __future__ import annotations

import os
import platform
from dataclasses import asdict, dataclass

import numpy as np

import xlapy
import xlapy.numpy as xnp
from benchmarks.harness import time_in_turns


@dataclass(frozen=True)
class Limits:
    copy_bytes_per_second: float
    triad_bytes_per_second: float
    read_bytes_per_second: float
    gemm_flops_per_second: float
    cores: int
    cpu: str

    @property
    def bandwidth(self) -> float:
        """The bandwidth floors use: the best of copy, triad and read."""
        return max(self.copy_bytes_per_second, self.triad_bytes_per_second,
                   self.read_bytes_per_second)

    def floor(self, bytes_moved: float = 0.0, flops: float = 0.0) -> tuple[float, str]:
        """(seconds, what bounds it) for a workload moving `bytes_moved` and
        doing `flops`."""
        memory = bytes_moved / self.bandwidth
        compute = flops / self.gemm_flops_per_second
        if memory >= compute:
            return memory, f"{bytes_moved / 1e6:.1f} MB at {self.bandwidth / 1e9:.1f} GB/s"
        return compute, f"{flops / 1e9:.2f} GFLOP at {self.gemm_flops_per_second / 1e9:.0f} GFLOP/s"

    def describe(self) -> str:
        return (f"{self.cpu}, {self.cores} cores: copy {self.copy_bytes_per_second / 1e9:.1f} "
                f"GB/s, triad {self.triad_bytes_per_second / 1e9:.1f} GB/s, read "
                f"{self.read_bytes_per_second / 1e9:.1f} GB/s, BLAS GEMM "
                f"{self.gemm_flops_per_second / 1e9:.0f} GFLOP/s (f32)")

    def to_json(self) -> dict:
        return asdict(self)


def measure(elements: int = 1 << 25, gemm: int = 2048, budget: float = 3.0) -> Limits:
    """Measure the limits; `elements` f32 per array (128 MiB by default)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(elements).astype(np.float32)
    b, c = np.empty_like(a), rng.standard_normal(elements).astype(np.float32)
    s = np.float32(3.0)

    def numpy_triad():
        np.multiply(c, s, out=b)     # NumPy has no fused triad: a second pass through b
        np.add(b, a, out=b)

    compiled_copy = xlapy.jit(lambda x: -x)
    compiled_triad = xlapy.jit(lambda x, y: x + 3.0 * y)
    compiled_read = xlapy.jit(lambda x: xnp.sum(x))
    times = time_in_turns({"numpy copy": lambda: np.copyto(b, a),
                           "numpy triad": numpy_triad,
                           "numpy read": lambda: np.sum(a),
                           "xlapy copy": lambda: compiled_copy(a),
                           "xlapy triad": lambda: compiled_triad(a, c),
                           "xlapy read": lambda: compiled_read(a)},
                          min_time=0.02, rounds=5, budget=budget)
    n = a.nbytes
    copy = max(2 * n / times["numpy copy"], 2 * n / times["xlapy copy"])
    triad = max(5 * n / times["numpy triad"], 3 * n / times["xlapy triad"])
    read = max(n / times["numpy read"], n / times["xlapy read"])
    x = rng.standard_normal((gemm, gemm)).astype(np.float32)
    y = rng.standard_normal((gemm, gemm)).astype(np.float32)
    gemm_seconds = time_in_turns({"gemm": lambda: x @ y}, min_time=0.05, rounds=5,
                                 budget=budget)["gemm"]
    return Limits(copy_bytes_per_second=copy, triad_bytes_per_second=triad,
                  read_bytes_per_second=read,
                  gemm_flops_per_second=2 * gemm ** 3 / gemm_seconds,
                  cores=os.cpu_count() or 1, cpu=_cpu_name())


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
