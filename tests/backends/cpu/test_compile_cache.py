"""The on-disk cache of compiled objects, end to end: a second process loads
what the first compiled, and a corrupted entry is recompiled, never trusted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = r"""
import json, sys
import numpy as np
import xlapy, xlapy.numpy as xnp

def f(x, y):
    return xnp.tanh(x @ y).sum(axis=0) + 1.0

x = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
y = np.ones((4, 5), np.float32)
jitted = xlapy.jit(f)
out = jitted(x, y)
executable = next(iter(jitted._cache.values())).executable
print(json.dumps({"from_cache": executable.from_cache, "out": np.asarray(out).tolist()}))
"""


def _run(cache_dir: Path) -> dict:
    env = dict(os.environ)
    env["XLAPY_FLAGS"] = f"--xlapy_cpu_cache_dir={cache_dir}"
    env["XLAPY_DEFAULT_BACKEND"] = "cpu"
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[3]) + os.pathsep + \
        env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


@pytest.fixture
def cache_dir(tmp_path):
    return tmp_path / "cache"


def _module_entries(cache_dir):
    """Cache entries of compiled modules (the runtime library has its own)."""
    return [p for p in cache_dir.glob("*.xlo") if b"XLAPYCPU" in p.read_bytes()[:200]]


def test_second_process_loads_from_disk(cache_dir):
    first, _ = _run(cache_dir)
    entries = sorted(cache_dir.glob("*.xlo"))
    second, _ = _run(cache_dir)
    assert not first["from_cache"]
    assert second["from_cache"]
    assert first["out"] == second["out"]
    assert sorted(cache_dir.glob("*.xlo")) == entries   # nothing new was compiled
    assert len(_module_entries(cache_dir)) == 1


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty"])
def test_corrupted_entry_is_recompiled(cache_dir, damage):
    first, _ = _run(cache_dir)
    (entry,) = _module_entries(cache_dir)
    data = bytearray(entry.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[-100] ^= 0xFF
    else:
        data = bytearray()
    entry.write_bytes(bytes(data))
    second, stderr = _run(cache_dir)
    assert not second["from_cache"]            # detected, recompiled
    assert second["out"] == first["out"]       # and still correct
    assert "xlo" in stderr or "cache" in stderr.lower()   # the user was told
    third, _ = _run(cache_dir)                 # the rewritten entry is good again
    assert third["from_cache"]


GEMM_SCRIPT = r"""
import numpy as np
import xlapy

x = np.arange(256 * 256, dtype=np.float32).reshape(256, 256) % 7
out = np.asarray(xlapy.jit(lambda a: a @ a)(x))
np.testing.assert_allclose(out, x @ x, rtol=1e-5)
print("ok")
"""


def test_runtime_gemm_loaded_from_its_cache_brings_the_pool(tmp_path):
    """Bug: once a cache hit stopped emitting the GEMM's IR (which declared the
    thread pool and so loaded it), a process whose first need was a cached GEMM
    failed to link it: 'calls xlapy_rt_parallel_for, which this process does not
    provide'. Each run here has a fresh kernel cache and a shared runtime cache."""
    for run in range(2):
        env = dict(os.environ)
        env["XLAPY_FLAGS"] = (f"--xlapy_cpu_cache_dir={tmp_path / str(run)} --xlapy_cpu_strict "
                              f"--xlapy_cpu_runtime_cache_dir={tmp_path / 'runtime'}")
        env["XLAPY_DEFAULT_BACKEND"] = "cpu"
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[3]) + os.pathsep + \
            env.get("PYTHONPATH", "")
        done = subprocess.run([sys.executable, "-c", GEMM_SCRIPT], env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
