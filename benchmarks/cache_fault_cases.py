"""The cache faults themselves, as a child process of `cache_faults` meets them:
compile and run a program, damage a cache entry (or point the cache at a
directory that refuses writes), and report the case as a `Row`."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import resource
import shutil
import subprocess
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PROGRAM = """HloModule m
ENTRY e {{
  x = f32[{n}] parameter(0)
  y = f32[{n}] parameter(1)
  ROOT r = f32[{n}] {op}(x, y)
}}"""
DOT = """HloModule m
ENTRY e {
  x = f32[8,8] parameter(0)
  y = f32[8,8] parameter(1)
  ROOT r = f32[8,8] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}"""
_V = np.arange(64, dtype=np.float32)
PROGRAMS = {  # name -> (HLO text, inputs, expected output); every value exact in f32
    "add": (PROGRAM.format(n=4, op="add"), (_V[:4], _V[:4] * 0 + 3), _V[:4] + 3),
    "mul": (PROGRAM.format(n=4, op="multiply"), (_V[:4], _V[:4] * 0 + 3), _V[:4] * 3),
    "dot": (DOT, (_V.reshape(8, 8), _V.reshape(8, 8).T), _V.reshape(8, 8) @ _V.reshape(8, 8).T),
}


@dataclass
class Row:
    case: str
    right: bool = False
    warnings: int = 0
    """Warnings in the process that met the fault (the most any one process gave)."""
    used_bad: bool = False
    repaired: bool | None = None
    """None where nothing can be repaired (the disk refuses writes)."""
    note: str = ""
    skipped: str = ""


@dataclass
class Run:
    right: bool
    from_cache: bool
    warnings: list[str]
    error: str = ""


# -- in the child: compile, run, look at the cache --------------------------------------------
def compile_and_run(name: str) -> Run:
    """Compile and run PROGRAMS[name] on the CPU backend, recording every warning."""
    from xlapy.backends import get_backend
    from xlapy.hlo.parser import parse_module

    text, inputs, expected = PROGRAMS[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            executable = get_backend("cpu").compile(parse_module(text))
            out = np.asarray(executable.execute(*inputs)[0])
            run = Run(bool(np.array_equal(out, expected)), executable.from_cache, [])
        except Exception as e:  # the case reports it: a crash is a finding, not the end
            run = Run(False, False, [], f"{type(e).__name__}: {e}")
    run.warnings = [str(w.message) for w in caught]
    return run


def _cache():
    from xlapy.backends.cpu.disk_cache import default_cache

    return default_cache()


def _entries() -> dict[str, bytes]:
    return {p.stem: p.read_bytes() for p in _cache().directory.glob("*.xlo")
            if p.is_file() and not p.is_symlink()}


def _is_module(data: bytes) -> bool:
    from xlapy.backends.cpu.compiler import _MAGIC
    from xlapy.backends.cpu.disk_cache import HEADER_SIZE

    return data[HEADER_SIZE:].startswith(_MAGIC)


def _runtime_key(symbol: str) -> str:
    """The cache key of runtime object `symbol` (`runtime_library.cached_object`)."""
    from xlapy.backends.cpu.disk_cache import cache_key
    from xlapy.backends.cpu.llvm_target import host_target

    return cache_key("runtime:" + symbol, "", " ".join(host_target()))


def _gemm_symbol() -> str:
    from xlapy.backends.cpu.options import CpuOptions
    from xlapy.backends.cpu.runtime_library import gemm_symbol

    return gemm_symbol("float32", CpuOptions.from_flags().threads)


_KEPT: list = []


def _forget_gemm() -> None:
    """Make the next compilation load the runtime GEMM again (from the cache). The old
    object stays referenced: code compiled against it may still call it."""
    from xlapy.backends.cpu import runtime_library

    _KEPT.append(runtime_library._LOADED.pop(_gemm_symbol(), None))


_FILLED: dict[str, tuple[str, dict[str, bytes]]] = {}
"""program -> (the key of its module entry, the cache's files) after its first compilation
in this process: the later cases start from these files, whatever the one before left."""


def _fill(program: str, role: str) -> str:
    """The cache as compiling `program` leaves it; the key of its module or GEMM entry."""
    directory = _cache().directory
    if program in _FILLED:
        key, files = _FILLED[program]
        for path in directory.iterdir():
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        for name, data in files.items():
            (directory / name).write_bytes(data)
    else:
        run = compile_and_run(program)
        assert run.right and not run.warnings, run
        (key,) = [k for k, data in _entries().items() if _is_module(data)]
        _FILLED[program] = key, {p.name: p.read_bytes() for p in directory.iterdir()}
    return _runtime_key(_gemm_symbol()) if role == "gemm" else key


def _written_by(patch: Callable[[], contextlib.AbstractContextManager], program: str) -> bytes:
    """The module entry of `program` another process (`patch` says how it differs) writes."""
    before = set(_entries())
    with patch():
        run = compile_and_run(program)
        assert run.right, run
    (data,) = [v for k, v in _entries().items() if k not in before and _is_module(v)]
    return data


# -- damage ----------------------------------------------------------------------------------
def _split(payload: bytes) -> tuple[bytes, bytes]:
    """(the compiler's record, the object code) of a payload; b'' record for runtime ones."""
    from xlapy.backends.cpu.compiler import _MAGIC

    if not payload.startswith(_MAGIC):
        return b"", payload
    end = len(_MAGIC) + 4 + int.from_bytes(payload[len(_MAGIC):len(_MAGIC) + 4], "little")
    return payload[:end], payload[end:]


def _resigned(path: Path, key: str, change: Callable[[bytes, bytes], bytes]) -> None:
    """Replace the entry by `change(record, object)`, stored with a matching checksum."""
    from xlapy.backends.cpu.disk_cache import HEADER_SIZE, DiskCache

    record, obj = _split(path.read_bytes()[HEADER_SIZE:])
    assert DiskCache(path.parent).put(key, change(record, obj))


def _noise(n: int) -> bytes:
    return random.Random(n).randbytes(n)


def _other_target(record: bytes, obj: bytes) -> bytes:
    from xlapy.backends.cpu.compiler import _MAGIC

    header = json.loads(record[len(_MAGIC) + 4:])
    header["target"] = [header["target"][0], "other-cpu", "+other-feature"]
    text = json.dumps(header).encode()
    return _MAGIC + len(text).to_bytes(4, "little") + text + obj


def _other_machine(record: bytes, obj: bytes) -> bytes:
    machine = int.from_bytes(obj[0x12:0x14], "little")
    other = 183 if machine == 62 else 62  # x86-64 <-> AArch64
    return record + obj[:0x12] + other.to_bytes(2, "little") + obj[0x14:]


@contextlib.contextmanager
def _other_version():
    from xlapy import version

    saved, version.__version__ = version.__version__, "0.0.0+another"
    try:
        yield
    finally:
        version.__version__ = saved


@contextlib.contextmanager
def _other_cpu():
    """This process compiling as if it ran on a baseline CPU of its architecture."""
    from xlapy.backends.cpu import compiler, llvm_target

    host = llvm_target.host_target()
    cpu = "x86-64" if host[0].startswith("x86_64") else "generic"
    saved = llvm_target.host_target
    llvm_target.host_target = compiler.host_target = lambda: (host[0], cpu, "")
    llvm_target.target_machine.cache_clear()
    try:
        yield
    finally:
        llvm_target.host_target = compiler.host_target = saved
        llvm_target.target_machine.cache_clear()


def _copy_from(program: str = "add", patch=contextlib.nullcontext):
    def damage(path: Path, key: str) -> None:
        path.write_bytes(_written_by(patch, program))
    return damage


def _pool_object(path: Path, key: str) -> None:
    """The runtime thread pool's entry (a good object, another key) copied over `path`."""
    from xlapy.backends.cpu.runtime_library import POOL_SYMBOL

    shutil.copy(path.with_name(_runtime_key(POOL_SYMBOL) + path.suffix), path)


def _replace_with(make: Callable[[Path], None]):
    def damage(path: Path, key: str) -> None:
        path.unlink()
        make(path)
    return damage


def _chmod_unreadable(path: Path, key: str) -> None:
    path.chmod(0)


@contextlib.contextmanager
def _eacces_on_entries():
    """os.open of a cache entry fails with EACCES, as for an unreadable file."""
    real = os.open

    def refusing(file, flags, *args, **kwargs):
        if str(file).endswith(".xlo") and not flags & (os.O_WRONLY | os.O_RDWR):
            raise PermissionError(errno.EACCES, "Permission denied", str(file))
        return real(file, flags, *args, **kwargs)

    os.open = refusing
    try:
        yield
    finally:
        os.open = real


def _truncate(path: Path, key: str) -> None:
    path.write_bytes(path.read_bytes()[:path.stat().st_size // 2])


def _flip(path: Path, key: str) -> None:
    """Flip every 97th byte of the payload (the header stays as written)."""
    from xlapy.backends.cpu.disk_cache import HEADER_SIZE

    data = bytearray(path.read_bytes())
    for i in range(HEADER_SIZE + 50, len(data), 97):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def _garbage(path: Path, key: str) -> None:
    _resigned(path, key, lambda record, obj: record + _noise(len(obj)))


def _garbage_body(path: Path, key: str) -> None:
    _resigned(path, key, lambda record, obj: record + obj[:64] + _noise(len(obj)))


ENTRY_DAMAGE: dict[str, tuple[str, str, Callable | None]] = {  # case -> (program, role, damage)
    "truncated entry": ("add", "module", _truncate),
    "zero-length entry": ("add", "module", lambda path, key: path.write_bytes(b"")),
    "flipped bytes": ("add", "module", _flip),
    "garbage object, re-signed": ("add", "module", _garbage),
    "ELF header, garbage body, re-signed": ("add", "module", _garbage_body),
    "another program's entry renamed": ("add", "module", _copy_from("mul")),
    "entry from another xlapy version": ("add", "module", _copy_from(patch=_other_version)),
    "entry from another CPU": ("add", "module", _copy_from(patch=_other_cpu)),
    "other CPU recorded, re-signed": (
        "add", "module", lambda path, key: _resigned(path, key, _other_target)),
    "directory in the entry's place": ("add", "module", _replace_with(Path.mkdir)),
    "symlink to /dev/zero": ("add", "module", _replace_with(lambda p: p.symlink_to("/dev/zero"))),
    "FIFO in the entry's place": ("add", "module", _replace_with(os.mkfifo)),
    "unreadable entry (chmod 0)": ("add", "module", _chmod_unreadable),
    "unreadable entry (EACCES)": ("add", "module", None),  # `_eacces_on_entries`
    "GEMM: truncated": ("dot", "gemm", _truncate),
    "GEMM: garbage object, re-signed": ("dot", "gemm", _garbage),
    "GEMM: object for another machine, re-signed": (
        "dot", "gemm", lambda path, key: _resigned(path, key, _other_machine)),
    "GEMM: the thread pool's object renamed": ("dot", "gemm", _pool_object),
}


def entry_case(case: str) -> Row:
    """Fill the cache, damage one entry, then: the faulty run, and a run to see it repaired."""
    from xlapy.backends.cpu.disk_cache import DiskCache

    program, role, damage = ENTRY_DAMAGE[case]
    if damage is _chmod_unreadable and os.geteuid() == 0:
        return Row(case, skipped="root reads files whatever their mode")
    key = _fill(program, role)
    cache = _cache()
    path = DiskCache(cache.directory).path(key)
    if damage is not None:
        damage(path, key)
    _forget_gemm()
    rejected = cache.stats.corrupt
    with _eacces_on_entries() if damage is None else contextlib.nullcontext():
        faulty = compile_and_run(program)
    # a rejected GEMM object is never loaded; a module entry was used if it was loaded
    used_bad = faulty.from_cache if role == "module" else cache.stats.corrupt == rejected
    _forget_gemm()
    again = compile_and_run(program)
    return Row(case, faulty.right, len(faulty.warnings), used_bad,
               again.right and again.from_cache and not again.warnings and path.is_file(),
               faulty.error or _reason(faulty.warnings))


# -- unwritable directories, full disks --------------------------------------------------------
def _under_proc(directory: Path) -> Path:
    return Path("/proc") / f"xlapy-cache-{os.getpid()}"


def _file_instead(directory: Path) -> Path:
    directory.write_bytes(b"not a directory")
    return directory


def _read_only(directory: Path) -> Path:
    directory.mkdir()
    why = make_read_only(directory)
    if why:
        raise _Skip(why)
    return directory


def make_read_only(directory: Path) -> str:
    """Make `directory` refuse new files, even to root (chattr +i, where chmod does not
    bind); '' or why it cannot be done. `release` undoes it."""
    if os.geteuid() != 0:
        directory.chmod(0o555)
    elif subprocess.run(["chattr", "+i", str(directory)], capture_output=True).returncode:
        return "root writes into any directory, and chattr +i is not available here"
    return ""


def _file_size_limit(directory: Path) -> Path:
    resource.setrlimit(resource.RLIMIT_FSIZE, (512, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    return directory


def _full_tmpfs(directory: Path) -> Path:
    """`directory` is a small tmpfs of its own (see `_child`): fill it but for a few
    pages, fewer than the runtime GEMM's object needs."""
    fd = os.open(directory / FILLER, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, bytes(4096))
        os.ftruncate(fd, max(0, os.fstat(fd).st_size - 3 * 4096))
    finally:
        os.close(fd)
    return directory


class _Skip(Exception):
    pass


DIRECTORY_FAULTS: dict[str, tuple[Callable[[Path], Path], str]] = {  # case -> (fault, program)
    "read-only cache directory": (_read_only, "add"),
    "a file where the directory should be": (_file_instead, "add"),
    "cache directory under /proc": (_under_proc, "add"),
    "full disk: file-size limit (EFBIG)": (_file_size_limit, "add"),
    "full disk: a full tmpfs (ENOSPC)": (_full_tmpfs, "dot"),
}
FILLER = "filler"
_TMPFS = 'mkdir -p "$1" && mount -t tmpfs -o size=256k tmpfs "$1" || exit 97; shift; exec "$@"'
"""Run a command with a fresh tmpfs mounted on $1 (in the private mount namespace
`unshare -rm` gives it); exit 97 where that is not allowed."""


def directory_case(case: str, directory: Path) -> Row:
    """Point the cache at a directory that refuses writes; compile and run there."""
    from xlapy.backends.cpu.disk_cache import SIZE_FILE
    from xlapy.flags import flags_set

    fault, program = DIRECTORY_FAULTS[case]
    try:
        directory = fault(directory)
    except _Skip as e:
        return Row(case, skipped=str(e))
    with flags_set(f"--xlapy_cpu_cache_dir={directory}"):
        run = compile_and_run(program)
    stray = sorted(p.name for p in directory.iterdir() if p.name not in (FILLER, SIZE_FILE)
                   and not _is_entry(p)) if directory.is_dir() else []
    note = run.error or _reason(run.warnings)
    return Row(case, run.right, len(run.warnings), False, None,
               note + (f"; left behind: {stray}" if stray else ""))


def _is_entry(path: Path) -> bool:
    """A whole entry of this xlapy (written under its name)."""
    from xlapy.backends.cpu.disk_cache import DiskCache

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return path.suffix == ".xlo" and DiskCache(path.parent).get(path.stem) is not None


def _reason(messages: list[str]) -> str:
    """The gist of the first warning: the part after the path."""
    if not messages:
        return ""
    text = messages[0]
    return text.rsplit(".xlo", 1)[-1].lstrip(": ")[:80] if ".xlo" in text else text[:80]
