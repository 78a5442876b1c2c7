"""The GPU disk cache, offline: a second compilation of a module loads its PTX and
thunk program instead of running the emitter, and runs (emulated) as the
first; a damaged or ill-fitting entry is recompiled with a warning; the
target architecture and fast-math each get their own entry; and the cubin
path, driven here by a stand-in for the CUDA driver, is never touched
without one.
"""

from __future__ import annotations

import json
import types

import numpy as np
import pytest

import xlapy
import xlapy.numpy as xnp
from xlapy import lax
from xlapy.backends import get_backend
from xlapy.backends.gpu import compiler, driver, program_cache
from xlapy.backends.gpu.device_runner import DeviceMachine
from xlapy.backends.gpu.thunks import (
    ConditionalThunk,
    GemmThunk,
    KernelThunk,
    WhileThunk,
    from_json,
    kernels_of,
    to_json,
)
from xlapy.flags import parse_flags
from xlapy.fuzz.compare import mismatch

FAKE_CUBIN = b"\x7fELF a cubin the stand-in driver linked"


def _program(p, x, w):
    y = lax.cond(p, lambda v: v @ w, lambda v: v * 2.0, x)
    return lax.fori_loop(0, 3, lambda i, v: xnp.tanh(v) + i, y), xnp.argsort(x, axis=1)


X = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
W = np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32)
ARGS = [np.bool_(True), X, W]


@pytest.fixture(scope="module")
def module():
    return xlapy.jit(_program).lower(*ARGS).module


@pytest.fixture
def flags(tmp_path):
    return parse_flags(f"--xlapy_gpu_cache_dir={tmp_path}")


@pytest.fixture
def emits(monkeypatch) -> list:
    """One entry per run of the compiler's emitter."""
    calls: list = []

    class Counting(compiler.GpuEmitter):
        def emit(self):
            calls.append(self.hlo.name)
            return super().emit()

    monkeypatch.setattr(compiler, "GpuEmitter", Counting)
    return calls


def _entries(directory):
    return sorted(directory.glob("*.xlo"))


def _every_thunk(thunks):
    for thunk in thunks:
        yield thunk
        if isinstance(thunk, WhileThunk):
            yield from _every_thunk(thunk.condition + thunk.body)
        elif isinstance(thunk, ConditionalThunk):
            for branch in thunk.branches:
                yield from _every_thunk(branch)


def test_second_compile_loads_the_program_and_runs_the_same(module, flags, tmp_path, emits):
    first = compiler.compile_module(module, flags)
    second = compiler.compile_module(module, flags)
    assert (first.from_cache, second.from_cache) == (False, True)
    assert len(emits) == 1 and len(_entries(tmp_path)) == 1
    assert second.ptx == first.ptx and second.program.kernels == first.program.kernels
    assert second.program.thunks == first.program.thunks
    kinds = {type(t) for t in _every_thunk(second.program.thunks)}
    assert {WhileThunk, ConditionalThunk, GemmThunk, KernelThunk} <= kinds
    for p in (True, False):
        args = [np.bool_(p), X, W]
        expected = get_backend("interpreter").compile(module).execute(*args)
        assert mismatch(expected, first.emulate(*args)) is None
        assert mismatch(expected, second.emulate(*args)) is None


def test_thunks_round_trip_through_json(module, flags):
    thunks = compiler.compile_program(module, flags).thunks
    assert from_json(json.loads(json.dumps(to_json(thunks)))) == thunks


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty"])
def test_a_damaged_entry_is_recompiled_with_a_warning(module, flags, tmp_path, emits, damage):
    compiler.compile_program(module, flags)
    (entry,) = _entries(tmp_path)
    data = bytearray(entry.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x40
    entry.write_bytes(bytes(data[:len(data) // 2] if damage == "truncate" else
                            b"" if damage == "empty" else data))
    with pytest.warns(RuntimeWarning, match="corrupt"):
        again = compiler.compile_program(module, flags)
    assert not again.from_cache and len(emits) == 2
    assert compiler.compile_program(module, flags).from_cache   # rewritten, good again
    assert len(emits) == 2


def _retarget_kernel(program):
    first = kernels_of(program.thunks)[0]
    first.kernel = "not_in_the_ptx"


def _slice_past_the_end(program):
    first = kernels_of(program.thunks)[0]
    s = first.arguments[0]
    first.arguments[0] = type(s)(s.allocation, s.offset + (1 << 20), s.size)


def _other_assignment(program):
    program.assignment = types.SimpleNamespace(
        allocations=[types.SimpleNamespace(size=a.size + 8, kind=a.kind)
                     for a in program.assignment.allocations])


@pytest.mark.parametrize("tamper, problem", [
    (_retarget_kernel, "PTX does not back"), (_slice_past_the_end, "outside its allocation"),
    (_other_assignment, "another buffer assignment")])
def test_an_entry_that_does_not_fit_is_not_trusted(module, flags, emits, tamper, problem):
    """Entries that check out byte for byte but do not fit the module: discarded."""
    program = compiler.compile_program(module, flags)
    cache = program_cache.gpu_cache(flags)
    key = program_cache.program_key(program.module, program.arch, False)
    tamper(program)
    cache.put(key, program_cache.encode(program))
    with pytest.warns(RuntimeWarning, match=problem):
        again = compiler.compile_program(module, flags)
    assert not again.from_cache and len(emits) == 2


def test_each_target_and_fast_math_has_its_own_entry(module, tmp_path, emits):
    where = f"--xlapy_gpu_cache_dir={tmp_path}"
    sm80, sm90 = (parse_flags(f"{where} --xla_gpu_target={a}") for a in ("sm_80", "sm_90"))
    fast = parse_flags(f"{where} --xla_gpu_target=sm_80 --xla_gpu_enable_fast_math")
    assert not compiler.compile_program(module, sm80).from_cache
    ptx90 = compiler.compile_program(module, sm90)
    assert not ptx90.from_cache and ".target sm_90" in ptx90.ptx
    assert not compiler.compile_program(module, fast).from_cache
    assert len(_entries(tmp_path)) == 3 and len(emits) == 3
    again = compiler.compile_program(module, sm90)
    assert again.from_cache and ".target sm_90" in again.ptx and len(emits) == 3


def test_the_flags_place_or_turn_off_the_cache(module, tmp_path, emits):
    off = parse_flags(f"--xlapy_gpu_cache_dir=off --xlapy_cpu_cache_dir={tmp_path}")
    assert program_cache.gpu_cache(off) is None
    for _ in range(2):
        assert not compiler.compile_program(module, off).from_cache
    assert _entries(tmp_path) == [] and len(emits) == 2
    shared = parse_flags(f"--xlapy_cpu_cache_dir={tmp_path}")   # '': the CPU's directory
    compiler.compile_program(module, shared)
    assert compiler.compile_program(module, shared).from_cache
    assert len(_entries(tmp_path)) == 1
    assert program_cache.gpu_cache(parse_flags("--xlapy_cpu_cache_dir=off")) is None


# -- the cubin, with a stand-in driver ---------------------------------------------------
class _FakeContext:
    def __init__(self, arch: str):
        self.arch = arch
        self.linked: list[str] = []
        self.loaded: list[str] = []

    def link(self, ptx: str, name: str = "") -> bytes:
        self.linked.append(name)
        return FAKE_CUBIN

    def load_cubin(self, data: bytes, name: str = ""):
        self.loaded.append("cubin")
        return data

    def load_ptx(self, ptx: str, name: str = ""):
        self.loaded.append("ptx")
        return ptx


@pytest.fixture
def fake_device(monkeypatch):
    ctx = _FakeContext("sm_80")
    monkeypatch.setattr(driver, "available", lambda: True)
    monkeypatch.setattr(driver, "context", lambda: ctx)
    return ctx


def test_the_cubin_is_linked_once_and_cached(module, flags, emits, fake_device):
    first = compiler.compile_program(module, flags)
    assert first.arch == "sm_80" and first.cubin == FAKE_CUBIN
    second = compiler.compile_program(module, flags)
    assert second.from_cache and second.cubin == FAKE_CUBIN and second.cubin_arch == "sm_80"
    assert len(fake_device.linked) == 1 and len(emits) == 1
    machine = types.SimpleNamespace(ctx=fake_device)
    assert DeviceMachine._load(machine, second) == FAKE_CUBIN
    fake_device.arch = "sm_90"                    # another device: link the PTX again
    assert DeviceMachine._load(machine, second) == second.ptx
    assert fake_device.loaded == ["cubin", "ptx"]


def test_a_cached_program_gains_its_cubin_where_a_driver_appears(module, flags, monkeypatch):
    compiler.compile_program(module, flags.replace(xla_gpu_target="sm_80"))   # no driver
    ctx = _FakeContext("sm_80")
    monkeypatch.setattr(driver, "available", lambda: True)
    monkeypatch.setattr(driver, "context", lambda: ctx)
    assert compiler.compile_program(module, flags).cubin == FAKE_CUBIN
    ctx.arch = "sm_90"                            # a device the PTX is not for: no link
    other = compiler.compile_program(module, flags.replace(xla_gpu_target="sm_80"))
    assert other.from_cache and other.cubin == FAKE_CUBIN and len(ctx.linked) == 1


@pytest.mark.skipif(driver.available(), reason="checks a machine without a GPU")
def test_without_a_driver_nothing_links(module, flags, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the CUDA driver was called on a machine without one")

    monkeypatch.setattr(driver, "context", refuse)
    monkeypatch.setattr(driver.Context, "link", refuse)
    for _ in range(2):
        program = compiler.compile_program(module, flags)
        assert program.cubin is None and program.cubin_arch == ""
