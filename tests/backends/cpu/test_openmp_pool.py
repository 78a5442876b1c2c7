"""Parallel loops on a shared OpenMP team (openmp_pool): every element runs once
when a team runs the chunks, the team is only used in the process that shared
it, and a real libgomp already loaded is found and used."""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import threading

import numpy as np
import pytest

import xlapy
from tests.backends.cpu.test_thread_pool import _compiled, _expected
from xlapy.backends.cpu import compiler, runtime_library

_REGION = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_GOMP_PARALLEL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint,
                                  ctypes.c_uint)


class FakeTeam:
    """GOMP_parallel's contract in Python: run `fn(data)` on `threads` threads, the
    caller among them, and return when all have finished."""

    def __init__(self):
        self.calls: list[int] = []
        self.entry = _GOMP_PARALLEL(self._parallel)

    def _parallel(self, fn, data, threads, flags):
        self.calls.append(threads)
        region = _REGION(fn)
        team = [threading.Thread(target=region, args=(data,)) for _ in range(threads - 1)]
        for t in team:
            t.start()
        region(data)
        for t in team:
            t.join()

    @property
    def address(self) -> int:
        return ctypes.cast(self.entry, ctypes.c_void_p).value


@pytest.fixture
def team():
    before = runtime_library.openmp_entry()
    fake = FakeTeam()
    runtime_library.set_openmp_entry(fake.address)
    yield fake
    runtime_library.set_openmp_entry(before)


@pytest.fixture(scope="module")
def run():
    return _compiled(shared_pool=True, nested=False)


@pytest.mark.parametrize("threads", [2, 3, 8])
@pytest.mark.parametrize("n", [1, 2, 5, 1000])
def test_the_team_runs_every_element_once(team, run, n, threads):
    out = np.zeros(n, np.int64)
    run(out.ctypes.data, n, threads)
    np.testing.assert_array_equal(out, _expected(n))
    k = min(n, threads)
    assert team.calls == ([k] if k > 1 else [])   # one chunk runs where it is


def test_a_serial_loop_does_not_wake_the_team(team, run):
    out = np.zeros(10, np.int64)
    run(out.ctypes.data, 10, 1)
    np.testing.assert_array_equal(out, _expected(10))
    assert team.calls == []


def test_unsharing_returns_to_the_pool(team, run):
    runtime_library.set_openmp_entry(0)
    out = np.zeros(100, np.int64)
    run(out.ctypes.data, 100, 2)
    np.testing.assert_array_equal(out, _expected(100))
    assert team.calls == []


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork")
def test_a_forked_child_uses_its_own_pool(team, run):
    out = np.zeros(64, np.int64)
    run(out.ctypes.data, out.size, 2)
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_forked, args=(queue, run, team))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    assert queue.get(timeout=5) == (_expected(64).tolist(), [])


def _forked(queue, run, team) -> None:
    team.calls.clear()
    out = np.zeros(64, np.int64)
    run(out.ctypes.data, out.size, 2)   # the parent's team did not come along
    queue.put((out.tolist(), team.calls))


def test_a_library_not_loaded_is_not_shared():
    before = runtime_library.openmp_entry()
    try:
        assert not runtime_library.share_openmp_threads("/nonexistent/libgomp.so.1")
        assert runtime_library.openmp_entry() == 0
    finally:
        runtime_library.set_openmp_entry(before)


@pytest.fixture
def libgomp(monkeypatch):
    """The path of a libgomp loaded into this process (as PyTorch loads one), with
    nothing shared yet; the shared pool's entry is restored afterwards."""
    path = runtime_library.loaded_library("libgomp") or ctypes.util.find_library("gomp")
    if path is None:
        pytest.skip("no libgomp on this machine")
    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    before = runtime_library.openmp_entry()
    monkeypatch.setattr(runtime_library._Sharing, "shared", False)
    monkeypatch.setattr(runtime_library._Sharing, "modules_seen", -1)
    runtime_library.set_openmp_entry(0)
    yield runtime_library.loaded_library("libgomp")
    runtime_library.set_openmp_entry(before)


def test_a_loaded_libgomp_runs_the_loops(run, libgomp):
    assert runtime_library.share_openmp_threads(libgomp)
    assert runtime_library.openmp_entry() != 0
    out = np.zeros(4099, np.int64)
    for _ in range(200):
        run(out.ctypes.data, out.size, 2)
    np.testing.assert_array_equal(out, _expected(4099, 200))


def test_torch_compiles_share_a_loaded_libgomp_unless_the_flag_says_never(monkeypatch, libgomp):
    for setting in ("never", "torch"):   # the default, 'torch': for torch.compile only
        monkeypatch.setenv("XLAPY_FLAGS", f"--xlapy_cpu_openmp_threads={setting}")
        assert not runtime_library.share_loaded_openmp()
        assert runtime_library.openmp_entry() == 0
    monkeypatch.setenv("XLAPY_FLAGS", "--xlapy_cpu_openmp_threads=never")
    assert not runtime_library.share_loaded_openmp(for_torch=True)
    monkeypatch.setenv("XLAPY_FLAGS", "")
    assert runtime_library.share_loaded_openmp(for_torch=True)
    assert runtime_library.openmp_entry() != 0


def test_always_shares_for_every_compile(monkeypatch, libgomp):
    monkeypatch.setenv("XLAPY_FLAGS", "--xlapy_cpu_openmp_threads=always")
    assert runtime_library.share_loaded_openmp()
    assert runtime_library.openmp_entry() != 0


def test_every_compile_asks_whether_to_share(monkeypatch):
    looks = []
    monkeypatch.setattr(compiler, "share_loaded_openmp", lambda: looks.append(1))
    text = "HloModule m\nENTRY e {\n  p = f32[3] parameter(0)\n  ROOT r = f32[3] negate(p)\n}\n"
    xlapy.compile(text, backend="cpu")
    assert looks
