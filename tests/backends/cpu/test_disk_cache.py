"""The CPU backend's on-disk cache: entries round-trip, anything corrupt is a
warned miss that removes the file, disk errors never raise, concurrent
processes never see partial entries, the size stays under the cap, and the
module fingerprint ignores what does not change the code."""

import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from xlapy.backends.cpu import disk_cache
from xlapy.backends.cpu.disk_cache import (
    HEADER_SIZE,
    DiskCache,
    cache_directory,
    cache_key,
    decode_entry,
    default_cache,
    encode_entry,
    module_fingerprint,
)
from xlapy.flags import DebugOptions
from xlapy.hlo.parser import parse_module

REPO = Path(__file__).resolve().parents[3]
KEY = "ab" * 32
OTHER = "cd" * 32


def entry_file(cache: DiskCache, key: str = KEY) -> Path:
    return cache.path(key)


# -- round trip -----------------------------------------------------------------------------
def test_put_then_get_round_trips_and_makes_the_directory(tmp_path):
    cache = DiskCache(tmp_path / "a" / "b")
    assert not cache.directory.exists()  # made lazily
    assert cache.put(KEY, b"\x7fELF object bytes")
    assert cache.get(KEY) == b"\x7fELF object bytes"
    assert cache.stats.hits == 1 and cache.stats.writes == 1
    # no temporary file left; the size hint beside the entry
    assert sorted(p.name for p in cache.directory.iterdir()) == [".size", KEY + ".xlo"]


def test_empty_payload_round_trips(tmp_path):
    cache = DiskCache(tmp_path)
    cache.put(KEY, b"")
    assert cache.get(KEY) == b""


def test_a_missing_key_is_a_quiet_miss(tmp_path):
    cache = DiskCache(tmp_path / "never-made")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.get(KEY) is None
    assert (cache.stats.misses, cache.stats.corrupt) == (1, 0)


def test_put_replaces_an_entry(tmp_path):
    cache = DiskCache(tmp_path)
    cache.put(KEY, b"old")
    cache.put(KEY, b"new")
    assert cache.get(KEY) == b"new"


@pytest.mark.parametrize("key", ["", "../../etc/passwd", "AB" * 32, "abc", "g" * 64])
def test_keys_must_be_hex_digests(tmp_path, key):
    with pytest.raises(ValueError, match="hex digest"):
        DiskCache(tmp_path).get(key)


def test_entry_format_checks_every_field():
    data = encode_entry(b"payload")
    assert data[:8] == b"XLAPYOBJ" and len(data) == HEADER_SIZE + 7
    assert decode_entry(data) == (b"payload", "")
    assert "format version 99" in decode_entry(data[:8] + (99).to_bytes(4, "little")
                                               + data[12:])[1]


# -- corruption -----------------------------------------------------------------------------
CORRUPTIONS = {
    "zero length": (lambda d: b"", "shorter than"),
    "torn header": (lambda d: d[:HEADER_SIZE - 5], "shorter than"),
    "truncated payload": (lambda d: d[:-10], "payload bytes"),
    "extra bytes": (lambda d: d + b"junk", "payload bytes"),
    "flipped payload byte": (lambda d: d[:-1] + bytes([d[-1] ^ 0x01]), "SHA-256"),
    "wrong magic": (lambda d: b"NOTXLAPY" + d[8:], "bad magic"),
    "flipped digest byte": (lambda d: d[:HEADER_SIZE - 1] + bytes([d[HEADER_SIZE - 1] ^ 0x80])
                            + d[HEADER_SIZE:], "SHA-256"),
}


@pytest.mark.parametrize("kind", list(CORRUPTIONS))
def test_a_corrupt_entry_is_a_warned_miss_and_is_removed(tmp_path, kind):
    mangle, reason = CORRUPTIONS[kind]
    cache = DiskCache(tmp_path)
    cache.put(KEY, bytes(range(256)) * 4)
    path = entry_file(cache)
    path.write_bytes(mangle(path.read_bytes()))
    with pytest.warns(RuntimeWarning, match=reason) as record:
        assert cache.get(KEY) is None
    assert str(path) in str(record[0].message)
    assert not path.exists()
    assert (cache.stats.corrupt, cache.stats.misses, cache.stats.hits) == (1, 1, 0)
    assert cache.put(KEY, b"fresh") and cache.get(KEY) == b"fresh"


def test_an_unreadable_entry_is_a_warned_miss(tmp_path):
    cache = DiskCache(tmp_path)
    entry_file(cache).mkdir()  # open() fails with IsADirectoryError
    with pytest.warns(RuntimeWarning, match="unreadable"):
        assert cache.get(KEY) is None
    assert cache.stats.corrupt == 1


# -- disk errors ----------------------------------------------------------------------------
def test_an_unwritable_directory_warns_once_and_never_raises(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    cache = DiskCache(blocker / "cache")  # mkdir fails: a regular file is in the way
    with pytest.warns(RuntimeWarning, match="cannot write") as record:
        assert cache.put(KEY, b"x") is False
        assert cache.put(OTHER, b"y") is False
    assert len(record) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.get(KEY) is None  # nothing there: a quiet miss
    assert cache.stats.write_errors == 2


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="needs POSIX permissions that bind (not root)")
def test_a_read_only_directory_warns_and_does_not_raise(tmp_path):
    cache = DiskCache(tmp_path)
    tmp_path.chmod(0o555)
    try:
        with pytest.warns(RuntimeWarning, match="cannot write"):
            assert cache.put(KEY, b"x") is False
    finally:
        tmp_path.chmod(0o755)


def test_a_full_disk_leaves_no_temporary_file(tmp_path, monkeypatch):
    def full(*args):
        raise OSError(28, "No space left on device")

    cache = DiskCache(tmp_path)
    monkeypatch.setattr(os, "replace", full)
    with pytest.warns(RuntimeWarning, match="No space left"):
        assert cache.put(KEY, b"x" * 1000) is False
    assert list(tmp_path.iterdir()) == []


# -- processes ------------------------------------------------------------------------------
WRITER = """
import json, os, sys, time, warnings
warnings.simplefilter("error")  # a corrupt read would warn: make it fail
from xlapy.backends.cpu.disk_cache import DiskCache
directory, key, me, go = sys.argv[1:]
payloads = [bytes([i]) * (300_000 + 4099 * i) for i in range(3)]
cache = DiskCache(directory)
deadline = time.monotonic() + 60
while not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.001)
seen = set()
for _ in range(150):
    cache.put(key, payloads[int(me)])
    got = cache.get(key)
    assert got in payloads, "a read returned bytes no writer wrote"
    seen.add(got[0])
print(json.dumps({"seen": sorted(seen), "corrupt": cache.stats.corrupt,
                  "hits": cache.stats.hits}))
"""


def test_processes_writing_and_reading_one_key_never_see_partial_entries(tmp_path):
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path / "c"), KEY,
                               str(i), str(go)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(3)]
    go.write_bytes(b"")
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    assert all(r["corrupt"] == 0 and r["hits"] == 150 for r in results)
    assert not list((tmp_path / "c").glob("*.tmp"))
    assert DiskCache(tmp_path / "c").get(KEY) is not None


# -- size cap -------------------------------------------------------------------------------
def test_eviction_keeps_the_size_under_the_cap_dropping_least_recently_used(tmp_path):
    cap = 10_000
    cache = DiskCache(tmp_path, max_bytes=cap)
    keys = [f"{i:064x}" for i in range(30)]
    past = time.time() - 1000
    for i, key in enumerate(keys):
        assert cache.put(key, bytes([i]) * 900)
        os.utime(cache.path(key), (past + i, past + i))  # a strict order of use
        assert cache.get(keys[0]) is not None  # a hot entry: used after every put
        os.utime(cache.path(keys[0]), (past + i + 0.5, past + i + 0.5))
        assert cache.size_bytes() <= cap
    assert cache.stats.evicted > 0
    assert cache.get(keys[-1]) is not None  # the newest stays
    assert cache.path(keys[0]).exists() and not cache.path(keys[1]).exists()


def _counting_scans(monkeypatch) -> list:
    scans = []
    entries = disk_cache._entries

    def counting(directory):
        scans.append(directory)
        return entries(directory)

    monkeypatch.setattr(disk_cache, "_entries", counting)
    return scans


def test_a_new_process_starts_from_the_size_hint_instead_of_scanning(tmp_path, monkeypatch):
    first = DiskCache(tmp_path)
    for i in range(3):
        first.put(f"{i:064x}", b"z" * 100)
    scans = _counting_scans(monkeypatch)
    later = DiskCache(tmp_path)   # as a fresh process would open it
    later.put(KEY, b"x" * 100)
    assert scans == []
    assert int((tmp_path / ".size").read_text()) == first.size_bytes()


def test_the_directory_is_rescanned_after_an_eighth_of_the_cap(tmp_path, monkeypatch):
    cache = DiskCache(tmp_path, max_bytes=80_000)
    cache.put(KEY, b"x")
    other = DiskCache(tmp_path, max_bytes=80_000)   # another process's writes
    for i in range(5):
        other.put(f"{100 + i:064x}", b"o" * 500)
    scans = _counting_scans(monkeypatch)
    for i in range(12):   # 12 KB written: one rescan past each 10 KB
        cache.put(f"{i:064x}", b"y" * 1000)
    assert len(scans) == 1
    assert cache._estimate == cache.size_bytes()   # the other's entries counted since


@pytest.mark.parametrize("hint", [b"garbage", b"-5", b""])
def test_a_bad_size_hint_means_a_scan(tmp_path, monkeypatch, hint):
    DiskCache(tmp_path).put(OTHER, b"y" * 50)
    (tmp_path / ".size").write_bytes(hint)
    scans = _counting_scans(monkeypatch)
    cache = DiskCache(tmp_path)
    cache.put(KEY, b"x" * 50)
    assert len(scans) == 1 and cache._estimate == cache.size_bytes()


def test_a_hit_touches_the_entry(tmp_path):
    cache = DiskCache(tmp_path)
    cache.put(KEY, b"x")
    os.utime(cache.path(KEY), (1000.0, 1000.0))
    cache.get(KEY)
    assert cache.path(KEY).stat().st_mtime > 1000.0


def test_eviction_removes_stale_temporary_files_and_skips_oversized_entries(tmp_path):
    cache = DiskCache(tmp_path, max_bytes=2_000)
    stale = tmp_path / ".dead-writer.tmp"
    stale.write_bytes(b"half")
    os.utime(stale, (1000.0, 1000.0))
    assert cache.put(KEY, b"x" * 5_000) is False  # bigger than the cap: not stored
    for i in range(4):
        cache.put(f"{i:064x}", b"y" * 600)
    assert not stale.exists() and cache.size_bytes() <= 2_000


def test_clear_removes_entries_only(tmp_path):
    cache = DiskCache(tmp_path)
    cache.put(KEY, b"x")
    cache.put(OTHER, b"y")
    (tmp_path / "README").write_text("not ours")
    assert cache.clear() == 2
    assert [p.name for p in tmp_path.iterdir()] == ["README"]
    assert cache.get(KEY) is None


# -- where and under which key ------------------------------------------------------------
def test_cache_directory_follows_flag_then_environment():
    home = Path.home()
    assert cache_directory("off") is None
    assert cache_directory("OFF", {"XLAPY_CACHE_DIR": "/x"}) is None
    assert cache_directory("/flag", {"XLAPY_CACHE_DIR": "/env"}) == Path("/flag")
    assert cache_directory("", {"XLAPY_CACHE_DIR": "/env"}) == Path("/env")
    assert cache_directory("", {"XLAPY_CACHE_DIR": "off"}) is None
    assert cache_directory("", {"XDG_CACHE_HOME": "/xdg"}) == Path("/xdg/xlapy")
    assert cache_directory("", {"XDG_CACHE_HOME": "relative"}) == home / ".cache" / "xlapy"
    assert cache_directory("", {}) == home / ".cache" / "xlapy"
    assert cache_directory("~/c", {}) == home / "c"


def test_default_cache_is_one_object_per_directory(tmp_path):
    flags = DebugOptions().replace(xlapy_cpu_cache_dir=str(tmp_path))
    cache = default_cache(flags)
    assert cache is default_cache(flags) and cache.directory == tmp_path
    assert default_cache(DebugOptions().replace(xlapy_cpu_cache_dir="off")) is None


def test_cache_key_is_a_digest_of_every_component():
    base = cache_key("fp", "O3", "x86_64-unknown-linux-gnu/znver3/+avx2")
    assert len(base) == 64 and int(base, 16) >= 0
    assert base == cache_key("fp", "O3", "x86_64-unknown-linux-gnu/znver3/+avx2")
    assert len({base, cache_key("fp2", "O3", "x86_64-unknown-linux-gnu/znver3/+avx2"),
                cache_key("fp", "O2", "x86_64-unknown-linux-gnu/znver3/+avx2"),
                cache_key("fp", "O3", "x86_64-unknown-linux-gnu/znver3/-avx2"),
                cache_key("f", "pO3", "x86_64-unknown-linux-gnu/znver3/+avx2")}) == 5


def test_cache_key_changes_with_the_format_version(monkeypatch):
    before = cache_key("fp", "O3", "t")
    monkeypatch.setattr(disk_cache, "FORMAT_VERSION", disk_cache.FORMAT_VERSION + 1)
    assert cache_key("fp", "O3", "t") != before


# -- module fingerprint ---------------------------------------------------------------------
MODULE = """HloModule {name}, entry_computation_layout={{(f32[4]{{0}})->f32[4]{{0}}}}
{frames}
add_f32 {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

ENTRY main {{
  x = f32[{n}]{{0}} parameter(0){meta}
  c = f32[{n}]{{0}} constant({{{values}{last}}})
  m = f32[{n}]{{0}} {op}(x, c){meta}
  z = f32[] constant(0)
  r = f32[] reduce(m, z), dimensions={{0}}, to_apply=add_f32
  ROOT o = f32[{n}]{{0}} broadcast(r), dimensions={{}}
}}
"""
FRAMES = """
FileNames
1 "f.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=0}
"""
META = ', metadata={op_name="jit(f)/mul" source_file="f.py" source_line=7 stack_frame_id=1}'


def fingerprint(name="jit_f", frames="", meta="", n=4, op="multiply", last="4"):
    values = "".join(f"{i}, " for i in range(1, n))
    text = MODULE.format(name=name, frames=frames, meta=meta, n=n, op=op, values=values,
                         last=last)
    return module_fingerprint(parse_module(text))


def test_fingerprint_ignores_metadata_module_name_and_frame_tables():
    assert fingerprint() == fingerprint(name="jit_g", frames=FRAMES, meta=META)


@pytest.mark.parametrize("change", [{"op": "add"}, {"n": 8}, {"last": "5"},
                                    {"last": "-nan"}, {"last": "nan(0x1)"}])
def test_fingerprint_changes_with_the_code(change):
    assert fingerprint(**change) != fingerprint()


def test_fingerprint_tells_signed_zeros_and_nan_payloads_apart():
    assert fingerprint(last="0") != fingerprint(last="-0")
    assert fingerprint(last="nan") != fingerprint(last="nan(0x1)")


def test_fingerprint_is_deterministic_and_survives_printing():
    text = MODULE.format(name="m", frames=FRAMES, meta=META, n=4, op="multiply",
                         values="1, 2, 3, ", last="4")
    module = parse_module(text)
    assert module_fingerprint(module) == module_fingerprint(parse_module(text))
    assert module_fingerprint(module) == module_fingerprint(parse_module(module.to_text()))
    assert module_fingerprint(module) == module_fingerprint(module)
    assert "metadata" in module.to_text()  # the module itself was not changed


def test_fingerprint_of_a_big_constant_is_quick():
    values = np.arange(1 << 20, dtype=np.float32)
    module = parse_module("HloModule m\n\nENTRY e {\n  ROOT c = f32[4] constant({1, 2, 3, 4})\n}\n")
    constant = module.entry_computation.root_instruction
    constant.literal = values
    before = module_fingerprint(module)
    start = time.perf_counter()
    values[123] = -1
    assert module_fingerprint(module) != before
    assert time.perf_counter() - start < 0.5
