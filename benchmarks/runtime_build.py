"""The CPU runtime library's one-time cost: what building it takes on this machine.

The runtime library (thread pool, soft-float builtins, the packed f32/f64 GEMMs)
is built the first time a process needs it and then read from its on-disk cache,
as an installed library would be: JAX and PyTorch ship theirs prebuilt. The
suite keeps it apart from the kernels' cache (`--xlapy_cpu_runtime_cache_dir`)
so "compile cold" is the compile of the workload itself, and reports the
library's build beside it, measured in a child process with an empty cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

from xlapy.backends.cpu.disk_cache import cache_directory

_CHILD = """
import json, time
start = time.perf_counter()
from xlapy.backends.cpu import builtins, runtime_library
imported = time.perf_counter()
runtime_library.ensure_pool()
builtins.ensure()
for dtype in runtime_library.FAST_GEMM_TYPES:
    runtime_library.ensure_gemm(dtype, {threads})
print(json.dumps({{"import": imported - start, "ready": time.perf_counter() - imported}}))
"""


def runtime_directory(kernel_cache_setting: str) -> str | None:
    """Where the suite keeps the runtime library: the user's kernel cache (where
    xlapy keeps it by default), or None when the user turned caching off."""
    directory = cache_directory(kernel_cache_setting)
    return None if directory is None else str(directory)


def build_seconds(threads: int, directory: str | None = None) -> dict[str, float]:
    """{"import", "ready"} seconds in a fresh child process whose runtime cache is
    `directory` (None: an empty one, so "ready" is the whole build)."""
    with tempfile.TemporaryDirectory(prefix="xlapy-bench-runtime-") as empty:
        flags = f"--xlapy_cpu_cache_dir={empty} --xlapy_cpu_runtime_cache_dir={directory or empty}"
        env = {**os.environ, "XLAPY_FLAGS": (os.environ.get("XLAPY_FLAGS", "") + " " + flags)}
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", _CHILD.format(threads=threads)], env=env,
                              capture_output=True, text=True, check=True)
        times = json.loads(done.stdout.strip().splitlines()[-1])
        times["process"] = time.perf_counter() - started
        return times
