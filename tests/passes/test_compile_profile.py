"""--xlapy_compile_profile: a CPU compilation's phases and passes, timed and printed,
the disk cache's answer; nothing when the flag is off."""

from __future__ import annotations

import pytest

import xlapy
from xlapy.backends.cpu import codegen
from xlapy.passes import compile_profile

MODULE = """HloModule profiled_{n}
add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}}
ENTRY main {{
  p = f32[64,{n}] parameter(0)
  e = f32[64,{n}] exponential(p)
  zero = f32[] constant(0)
  ROOT s = f32[64] reduce(e, zero), dimensions={{1}}, to_apply=add
}}
"""


def _phases(profile) -> dict[str, float]:
    return {name: seconds for _, name, seconds in profile.phases}


def test_the_table_names_every_phase_and_pass(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("XLAPY_FLAGS", f"--xlapy_compile_profile --xlapy_cpu_cache_dir={tmp_path}")
    xlapy.compile(MODULE.format(n=33), backend="cpu")
    profile = compile_profile.last_compile_profile()
    assert profile is not None and profile.module == "profiled_33"
    assert profile.cache == "miss"
    phases = _phases(profile)
    for name in ("verify", "HLO passes", "buffer assignment", "disk cache lookup",
                 "LLVM IR emission", "LLVM optimisation", "object code emission",
                 "disk cache write", "loading the object"):
        assert name in phases, name
    assert {"fusion", "dce", "hlo-memory-scheduler"} <= set(profile.passes)
    assert profile.pass_seconds() <= phases["HLO passes"]
    outermost = sum(seconds for depth, _, seconds in profile.phases if depth == 0)
    assert 0.5 * profile.seconds <= outermost <= profile.seconds
    printed = capsys.readouterr().err
    assert "compile profile of profiled_33" in printed and "LLVM optimisation" in printed
    assert "fusion" in printed and "disk cache miss" in printed


def test_a_cached_compilation_says_hit_and_skips_llvm(monkeypatch, tmp_path):
    monkeypatch.setenv("XLAPY_FLAGS", f"--xlapy_compile_profile --xlapy_cpu_cache_dir={tmp_path}")
    xlapy.compile(MODULE.format(n=34), backend="cpu")
    xlapy.compile(MODULE.format(n=34), backend="cpu")
    profile = compile_profile.last_compile_profile()
    assert profile.cache == "hit"
    assert "LLVM optimisation" not in _phases(profile)


def test_nothing_is_timed_or_printed_when_the_flag_is_off(monkeypatch, capsys):
    monkeypatch.setenv("XLAPY_FLAGS", "")
    before = compile_profile.last_compile_profile()
    xlapy.compile(MODULE.format(n=35), backend="cpu")
    assert compile_profile.last_compile_profile() is before
    assert compile_profile.current() is None
    assert "compile profile" not in capsys.readouterr().err


def test_a_failed_compilation_closes_its_profile(monkeypatch):
    monkeypatch.setenv("XLAPY_FLAGS", "--xlapy_compile_profile --xlapy_cpu_cache_dir=off")
    opened = []

    def failing_emit(self):
        opened.append(compile_profile.current())
        raise xlapy.CompileError("emission failed on purpose")

    monkeypatch.setattr(codegen.Codegen, "emit", failing_emit)
    with pytest.raises(xlapy.CompileError):
        xlapy.compile(MODULE.format(n=36), backend="cpu")
    assert opened and opened[0] is not None   # it was being profiled
    assert compile_profile.current() is None
    assert compile_profile.last_compile_profile().module == "profiled_36"
