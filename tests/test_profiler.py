"""Per-kernel timelines: `--xla_hlo_profile` on the CPU backend and the Chrome
trace `xlapy.profiler` writes from it."""

import json

import numpy as np
import pytest

import xlapy
import xlapy.numpy as xnp
from xlapy import profiler
from xlapy.analysis import kernel_count
from xlapy.flags import debug_options, flags_set
from xlapy.hlo import parse


def mnist_step(w, b, x, y):
    logits = x @ w + b
    p = xlapy.nn.softmax(logits, axis=1)
    g = (p - y) / x.shape[0]
    return w - 0.5 * (x.T @ g), b - 0.5 * xnp.sum(g, axis=0)


def mnist_args(seed=0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((64, 10)).astype(np.float32)
    b = np.zeros(10, np.float32)
    x = rng.random((32, 64), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 32)]
    return w, b, x, y


def test_profile_times_every_kernel_in_order():
    args = mnist_args()
    timeline = profiler.profile(mnist_step, *args, runs=3, backend="cpu")
    assert len(timeline.runs) == 3
    compiled = xlapy.jit(mnist_step, backend="cpu").lower(*args).compile()
    kernels = kernel_count(compiled.executable.module)
    for start, end, events in timeline.runs:
        assert len(events) == kernels
        assert start <= events[0].start_ns
        assert events[-1].end_ns <= end
        for before, after in zip(events, events[1:]):
            assert before.end_ns <= after.start_ns        # one after another, never overlapping
        assert all(e.end_ns >= e.start_ns for e in events)
    assert set(timeline.kernel_seconds()) == {e.name for e in timeline.runs[0][2]}
    assert "kernel" in timeline.summary()


def test_profiled_results_equal_unprofiled():
    args = mnist_args(1)
    plain = xlapy.jit(mnist_step, backend="cpu")(*args)
    with flags_set("--xla_hlo_profile"):
        profiled = xlapy.jit(mnist_step, backend="cpu").lower(*args).compile()
    for a, b in zip(plain, profiled(*args)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert profiled.executable.profiled


def test_unprofiled_executable_has_no_events():
    compiled = xlapy.jit(mnist_step, backend="cpu").lower(*mnist_args()).compile()
    compiled(*mnist_args())
    assert compiled.executable.last_profile() == []


def test_while_loop_is_one_event():
    def f(x):
        return xlapy.lax.fori_loop(0, 5, lambda i, v: xnp.tanh(v) + 1.0, x)

    x = np.ones(100, np.float32)
    timeline = profiler.profile(f, x, runs=2, backend="cpu")
    names = [e.opcode for e in timeline.runs[0][2]]
    assert "while" in names


def test_chrome_trace_is_valid_json(tmp_path):
    timeline = profiler.profile(mnist_step, *mnist_args(), runs=2, backend="cpu")
    path = timeline.write(tmp_path / "sub" / "timeline.ctf.json")
    trace = json.loads(path.read_text())
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    calls = [e for e in complete if e["cat"] == "call"]
    kernels = [e for e in complete if e["cat"] != "call"]
    assert len(calls) == 2
    assert len(kernels) == sum(len(events) for _, _, events in timeline.runs)
    for e in kernels:
        assert e["dur"] >= 0 and e["ts"] >= 0
        assert e["args"]["hlo"].startswith("%" + e["name"] + " ") or e["name"] in e["args"]["hlo"]
    # kernels of a run lie inside that run's call
    first = calls[0]
    assert all(first["ts"] <= k["ts"] <= first["ts"] + first["dur"]
               for k in kernels[:len(timeline.runs[0][2])])


def test_profile_from_disk_cache(tmp_path):
    args = mnist_args(2)
    with flags_set(f"--xlapy_cpu_cache_dir={tmp_path}"):
        cold = profiler.profile(mnist_step, *args, runs=1, backend="cpu")
        warm_compiled = None
        with flags_set("--xla_hlo_profile"):
            warm_compiled = xlapy.jit(mnist_step, backend="cpu").lower(*args).compile()
    assert warm_compiled.executable.from_cache
    warm_compiled(*args)
    warm = warm_compiled.executable.last_profile()
    assert [e.name for e in warm] == [e.name for e in cold.runs[0][2]]


def test_interpreter_cannot_profile():
    with pytest.raises(ValueError, match="cannot profile"):
        profiler.profile(mnist_step, *mnist_args(), backend="interpreter")


def test_flags_set_restores_environment(monkeypatch):
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_cpu_parallelism=1")
    with flags_set("--xla_hlo_profile") as options:
        assert options.xla_hlo_profile and options.xla_cpu_parallelism == 1
        assert debug_options().xla_hlo_profile
    assert not debug_options().xla_hlo_profile
    with pytest.raises(ValueError, match="unknown flag"):
        with flags_set("--no_such_flag"):
            pass
    assert not debug_options().xla_hlo_profile


def test_kernel_count_counts_loop_bodies_once():
    module = parse("""
HloModule m
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = f32[4] tanh(v)
  ROOT t = (s32[], f32[4]) tuple(j, w)
}
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[4]) tuple(zero, x)
  w = (s32[], f32[4]) while(t), condition=cond, body=body
  r = f32[4] get-tuple-element(w), index=1
  ROOT y = f32[4] negate(r)
}
""")
    assert kernel_count(module) == 1 + 2 + 1     # compare; add, tanh; negate
