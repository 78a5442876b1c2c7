"""No memory growth after warm-up: the short version of `benchmarks/soak.py`.

A leak of L bytes per call grows the resident set by L per call, window
after window; allocator noise is a bump that does not repeat. So each check
reads the resident set after several windows and asks that the growth over
the warm-up, or failing that over the first window, stay under 1 MiB: 2000
calls find a leak of ~700 bytes per call or more. Besides the demo's training
step, each other way a call can go is soaked: the positional fast path,
tuple results from one block, large results recycled and held, re-entered
executables, guard pages.
"""

from __future__ import annotations

import numpy as np
import pytest

import xlapy
import xlapy.numpy as xnp
from benchmarks.soak import soak, watch
from xlapy.flags import flags_set

MIB = 1 << 20


def _steady(result) -> bool:
    return min(result.growth, result.rss_end - result.rss_windows[0]) < MIB


def test_the_training_step_keeps_its_memory():
    result = soak(steps=2000, warmup=300, windows=4)
    assert _steady(result), f"RSS grew by {result.growth} bytes over {result.steps} steps " \
        f"(after each window: {[w - result.rss_warm for w in result.rss_windows]})"
    assert result.kept["compilations"] == 1 and result.kept["cached_signatures"] == 1
    assert result.kept["pending_errors"] == 0
    assert result.objects_end - result.objects_warm < 100


def _paths():
    rng = np.random.default_rng(0)
    x16 = rng.standard_normal(16).astype(np.float32)
    big = rng.standard_normal(1 << 19).astype(np.float32)   # 2 MiB results: recycled
    m = rng.standard_normal((64, 64)).astype(np.float32)
    small = xlapy.jit(lambda x: x * 2.0 + 1.0, backend="cpu")
    tuple_of_three = xlapy.jit(lambda x: (x + 1.0, xnp.sum(x), x * 3.0), backend="cpu")
    large = xlapy.jit(xnp.exp, backend="cpu")
    held = []

    def large_held():
        held.append(large(big))
        del held[:-3]

    def layers(a, b):
        return a @ b, xnp.tanh(a @ b + 1.0) @ b

    executable = xlapy.jit(layers, backend="cpu").lower(m, m).compile().executable
    with flags_set("--xlapy_cpu_guard_pages"):
        guarded = xlapy.jit(layers, backend="cpu").lower(m, m).compile().executable
    return {"fast path": lambda: small(x16.copy()),
            "tuple": lambda: tuple_of_three(x16),
            "large recycled": lambda: large(big),
            "large held": large_held,
            "re-entered": lambda: executable._reentrant([m, m]),
            "guard pages": lambda: guarded.execute(m, m)}


@pytest.fixture(scope="module")
def paths():
    return _paths()


@pytest.mark.parametrize("path", ["fast path", "tuple", "large recycled", "large held",
                                  "re-entered", "guard pages"])
def test_each_call_path_keeps_its_memory(paths, path):
    call = paths[path]
    for _ in range(200):
        call()
    result = watch(call, 2000, windows=4)
    assert _steady(result), f"{path}: RSS after each window, over the warm-up: " \
        f"{[w - result.rss_warm for w in result.rss_windows]}"
