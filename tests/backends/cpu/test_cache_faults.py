"""The on-disk cache under faults (issue 14, "Reliability"): eight processes
compiling one module at once, damaged entries of every kind, entries from
another program, xlapy version or CPU, things that are not files in an
entry's place, unwritable directories and full disks. The cases of
`benchmarks/cache_faults.py` run in child processes against real files, and
each must give the right result, a warning at most, never use the bad entry
and, where the disk allows, leave a good entry behind. Then one regression
test per bug those cases found, at the level of the cache itself."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import threading
import warnings
from pathlib import Path

import pytest

from benchmarks import cache_faults
from xlapy.backends.cpu import compiler, disk_cache, runtime_library
from xlapy.backends.cpu.disk_cache import HEADER_SIZE, DiskCache, object_problem
from xlapy.backends.cpu.llvm_target import compile_to_object, host_target, new_module
from xlapy.flags import flags_set

KEY = "ab" * 32
OTHER = "cd" * 32


# -- every case, in real processes ------------------------------------------------------------
@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    """Every case, a process per core at a time (~14 s of CPU in all)."""
    return {r.case: r for r in cache_faults.run_all(tmp_path_factory.mktemp("faults"))}


@pytest.mark.parametrize("case", cache_faults.CASES)
def test_a_cache_fault_costs_at_most_a_warning(rows, case):
    row = rows[case]
    if row.skipped:
        pytest.skip(row.skipped)
    assert row.right, row.note
    assert row.warnings <= 1, row.note
    assert not row.used_bad, row.note
    assert row.repaired in (True, None), row.note
    assert "left behind" not in row.note


def test_the_table_counts_every_case(rows):
    text = cache_faults.table(list(rows.values()))
    assert "0 wrong results, 0 bad entries used, 0 with more than one warning" in text
    assert len(text.splitlines()) == len(cache_faults.CASES) + 2


# -- regressions: one per bug found --------------------------------------------------------
def _warns(match: str):
    return pytest.warns(RuntimeWarning, match=match)


def test_an_entry_under_another_key_is_rejected(tmp_path):
    """Bug: the checksum covered the payload only, so an entry copied or renamed from
    another key (another program, xlapy version or CPU) was loaded: `x + y` ran the
    cached code of `x * y` ("another program's entry renamed")."""
    cache = DiskCache(tmp_path)
    cache.put(OTHER, b"the code of another program")
    shutil.copy(cache.path(OTHER), cache.path(KEY))
    with _warns("another key"):
        assert cache.get(KEY) is None
    assert not cache.path(KEY).exists() and cache.get(OTHER) is not None


def test_a_fifo_in_an_entry_is_not_waited_on(tmp_path):
    """Bug: open() of a FIFO blocked until a writer came: the compilation hung."""
    cache = DiskCache(tmp_path)
    os.mkfifo(cache.path(KEY))
    result = []
    reader = threading.Thread(target=lambda: result.append(_get_quietly(cache, KEY)))
    reader.start()
    reader.join(10)
    if reader.is_alive():  # release it, then fail
        os.close(os.open(cache.path(KEY), os.O_WRONLY | os.O_NONBLOCK))
        reader.join()
        pytest.fail("get() waited for a writer of the FIFO")
    assert result == [None] and not cache.path(KEY).exists()


def _get_quietly(cache, key):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cache.get(key)


def test_a_symlink_is_never_followed(tmp_path):
    """Bug: a symlink to /dev/zero was read until memory ran out (the process was
    killed); a symlink is now a bad entry whatever it points to, and only the link
    is removed."""
    cache = DiskCache(tmp_path / "c")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(disk_cache.encode_entry(b"x", KEY))
    for target in ("/dev/zero", elsewhere):
        cache.path(KEY).parent.mkdir(exist_ok=True)
        cache.path(KEY).symlink_to(target)
        with _warns("symbolic link"):
            assert cache.get(KEY) is None
        assert not cache.path(KEY).is_symlink()
    assert elsewhere.exists()


def test_a_directory_in_an_entry_is_removed_and_replaced(tmp_path):
    """Bug: a directory under an entry's name warned on every compilation, twice
    (unreadable, then cannot write), and was never replaced."""
    cache = DiskCache(tmp_path)
    cache.path(KEY).mkdir()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cache.get(KEY) is None
        assert cache.put(KEY, b"good")
    assert len(caught) == 1 and "directory" in str(caught[0].message)
    assert cache.get(KEY) == b"good"


def test_a_bad_entry_that_cannot_be_removed_costs_warns(tmp_path):
    """Bug: it cost two in every process (dropping it, then failing to write over it)."""
    cache = DiskCache(tmp_path)
    cache.path(KEY).mkdir()
    (cache.path(KEY) / "something").write_bytes(b"")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cache.get(KEY) is None
        assert cache.put(KEY, b"good") is False
    assert len(caught) == 1 and "cannot be removed" in str(caught[0].message)


@contextlib.contextmanager
def _read_only(directory: Path):
    why = cache_faults.make_read_only(directory)
    if why:
        pytest.skip(why)
    try:
        yield
    finally:
        cache_faults.release(directory)


def test_a_bad_entry_in_a_read_only_directory_costs_warns(tmp_path):
    cache = DiskCache(tmp_path)
    cache.put(KEY, b"payload")
    cache.path(KEY).write_bytes(cache.path(KEY).read_bytes()[:-3])
    with _read_only(tmp_path), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert cache.get(KEY) is None
        assert cache.put(KEY, b"payload") is False
    assert len(caught) == 1 and "cannot be removed" in str(caught[0].message)


def test_an_entry_bigger_than_the_cap_is_not_read_whole(tmp_path):
    cache = DiskCache(tmp_path, max_bytes=1000)
    cache.path(KEY).write_bytes(b"\0" * 5000)
    with _warns("cap"):
        assert cache.get(KEY) is None


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_an_unreadable_entry_is_replaced(tmp_path):
    cache = DiskCache(tmp_path)
    cache.put(KEY, b"old")
    cache.path(KEY).chmod(0)
    with _warns("Permission denied"):
        assert cache.get(KEY) is None
    assert cache.put(KEY, b"new") and cache.get(KEY) == b"new"


def test_discard_drops_an_entry_its_user_cannot_use(tmp_path):
    cache = DiskCache(tmp_path)
    cache.put(KEY, b"not an object")
    assert cache.get(KEY) == b"not an object"
    with _warns("not an object"):
        cache.discard(KEY, "not an object")
    assert not cache.path(KEY).exists()
    assert (cache.stats.hits, cache.stats.misses, cache.stats.corrupt) == (0, 1, 1)


def test_a_stale_temporary_file_goes_at_the_first_put(tmp_path):
    """Bug: a writer killed mid-write left its temporary file until the cache passed
    its cap, and temporary files count towards no cap."""
    stale = tmp_path / ".abababababababab-dead.tmp"
    stale.write_bytes(b"half an entry")
    os.utime(stale, (1000.0, 1000.0))
    fresh = tmp_path / ".cdcdcdcdcdcdcdcd-live.tmp"  # a writer at work now
    fresh.write_bytes(b"")
    assert DiskCache(tmp_path).put(KEY, b"x")
    assert not stale.exists() and fresh.exists()


def test_a_disk_that_fills_mid_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    """ENOSPC after part of the entry was written (the table's tmpfs case does it for
    real where a mount namespace is allowed)."""
    real, written = os.write, []

    def filling(fd, data):
        if not os.readlink(f"/proc/self/fd/{fd}").startswith(str(tmp_path)):
            return real(fd, data)
        if written:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(real(fd, bytes(data)[:100]))
        return written[-1]

    monkeypatch.setattr(os, "write", filling)
    cache = DiskCache(tmp_path)
    with _warns("No space left"):
        assert cache.put(KEY, b"x" * 10_000) is False
    assert written == [100] and list(tmp_path.iterdir()) == []


# -- what is loaded as machine code ---------------------------------------------------------
@pytest.fixture(scope="module")
def real_object() -> bytes:
    return compile_to_object(new_module("xlapy_cache_fault_probe"))


def test_object_problem_accepts_what_llvm_emits_and_nothing_else(real_object):
    triple = host_target()[0]
    assert object_problem(real_object, triple) == ""
    machine = int.from_bytes(real_object[0x12:0x14], "little")
    other = (183 if machine == 62 else 62).to_bytes(2, "little")
    cases = {
        b"garbage" * 20: "not a 64-bit",
        real_object[:0x12] + other + real_object[0x14:]: "ELF machine",
        real_object[:len(real_object) // 2]: "outside the file",
        real_object[:0x10] + (3).to_bytes(2, "little") + real_object[0x12:]: "not a relocatable",
    }
    for data, problem in cases.items():
        assert problem in object_problem(data, triple)


def test_a_runtime_object_that_is_no_object_is_rebuilt(tmp_path, real_object):
    """Bug: runtime_library.cached_object returned whatever checked out, and its caller
    loads it as machine code at once: a garbage GEMM object failed every compilation
    with a dot until the cache was deleted by hand."""
    built = []

    def build():
        built.append(1)
        return real_object

    with flags_set(f"--xlapy_cpu_cache_dir={tmp_path}"):
        assert runtime_library.cached_object("probe", build) == real_object
        key = disk_cache.cache_key("runtime:probe", "", " ".join(host_target()))
        # an ELF header, then nothing: its checksum matches, its sections are not there
        assert DiskCache(tmp_path).put(key, real_object[:64] + bytes(200))
        with _warns("section table"):
            assert runtime_library.cached_object("probe", build) == real_object
        assert runtime_library.cached_object("probe", build) == real_object
    assert len(built) == 2  # the first build and the rebuild; the third call was a hit


def _record(**change) -> bytes:
    header = {"fallbacks": [], "collectives": [], "runtime": [], "profiled": [], "target": list(host_target()),
              "xlapy": __import__("xlapy").__version__, **change}
    text = json.dumps(header).encode()
    return compiler._MAGIC + len(text).to_bytes(4, "little") + text


@pytest.mark.parametrize("change, problem", [
    ({"target": [host_target()[0], "other-cpu", host_target()[2]]}, "another CPU than"),
    ({"target": ["riscv64-unknown-linux-gnu", *host_target()[1:]]}, "another triple than"),
    ({"target": list(host_target()[:2])}, "another target than"),
    ({"xlapy": "0.0.0+another"}, "written by xlapy 0.0.0"),
    ({"runtime": [["bogus", "", 0]]}, "unknown runtime kernel"),
    ({"runtime": [["gemm", "int8", 1]]}, "unknown runtime kernel"),
    ({"fallbacks": [["no_such_computation", "x", "why"]]}, "does not fit"),
])
def test_a_module_entry_is_used_only_if_its_record_fits(change, problem, real_object):
    """Bug: an entry recording an unknown runtime kernel raised ValueError out of the
    compiler, every time, instead of being a miss."""
    from xlapy.hlo.parser import parse_module

    module = parse_module(cache_faults.PROGRAMS["add"][0])
    decoded, why = compiler._decode(_record(**change) + real_object, module)
    assert decoded is None and problem in why
    decoded, why = compiler._decode(_record() + real_object, module)
    assert decoded is not None and why == ""


def test_an_entry_decodes_only_under_its_own_key(tmp_path):
    cache = DiskCache(tmp_path)
    cache.put(KEY, b"p")
    data = cache.path(KEY).read_bytes()
    assert len(data) == HEADER_SIZE + 1
    assert disk_cache.decode_entry(data, KEY) == (b"p", "")
    assert "another key" in disk_cache.decode_entry(data, OTHER)[1]


def test_the_runtime_library_has_a_cache_of_its_own_when_asked(tmp_path, real_object):
    """`--xlapy_cpu_runtime_cache_dir` keeps the runtime objects (built once per machine)
    apart from the kernels' cache, so a fresh kernel cache does not rebuild the GEMM;
    unset, they follow the kernels' cache; 'off' builds every time."""
    built = []

    def build():
        built.append(1)
        return real_object

    kernels, runtime = tmp_path / "kernels", tmp_path / "runtime"
    with flags_set(f"--xlapy_cpu_cache_dir={kernels} --xlapy_cpu_runtime_cache_dir={runtime}"):
        assert runtime_library.cached_object("probe", build) == real_object
    with flags_set(f"--xlapy_cpu_cache_dir={tmp_path / 'fresh'} "
                   f"--xlapy_cpu_runtime_cache_dir={runtime}"):
        assert runtime_library.cached_object("probe", build) == real_object
    assert len(built) == 1
    assert not kernels.exists() and runtime.is_dir()
    with flags_set(f"--xlapy_cpu_cache_dir={kernels}"):
        assert runtime_library.cached_object("probe", build) == real_object
        assert runtime_library.cached_object("probe", build) == real_object
    assert len(built) == 2 and kernels.is_dir()
    with flags_set(f"--xlapy_cpu_cache_dir={kernels} --xlapy_cpu_runtime_cache_dir=off"):
        runtime_library.cached_object("probe", build)
    assert len(built) == 3
