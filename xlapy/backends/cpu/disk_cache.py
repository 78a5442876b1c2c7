"""The on-disk cache of compiled CPU objects, shared by processes and runs.

An entry is one file `<key>.xlo`: a header (magic, format version, payload
length, SHA-256 of the key it was written under, SHA-256 of that key digest
and the payload) then the payload, an object file's bytes. A file that does
not check out is a miss: it is deleted and a warning names it, so a torn or
tampered entry can cost a recompilation but never a wrong program. The key
is inside the checksum because an entry is only right under its own key: a
file copied or renamed from another key (another xlapy version, another CPU,
other flags, another program) checks out byte for byte, and would run the
wrong code. Only regular files are read (a symlink, a directory or a FIFO in
an entry's place is a bad entry, never followed, read or waited on).

Writers put each entry in a temporary file of their own in the same
directory and `os.replace` it into place, so concurrent writers of one key
(threads or processes) never mix their bytes and readers never see half an
entry: the last replace wins. Nothing is fsynced: after a power cut an entry
may be torn, which its checksum turns into a miss. The cache is an
optimisation, so nothing here fails a compilation: a read-only or full disk
warns once and the compiler goes on. The total size is kept near a cap by
evicting the least recently used entries (mtime, touched on every hit).

    cache = default_cache()                       # None when the flag says 'off'
    key = cache_key(module_fingerprint(module), options.key(), target)
    blob = cache.get(key)                         # bytes, or None
    cache.put(key, compile_to_object(llvm_module))
    cache.discard(key, "why")                     # a payload its user cannot use
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import json
import os
import re
import stat
import struct
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm
import numpy as np

from xlapy import version as xlapy_version
from xlapy.backends.cpu import options as _options  # noqa: F401  declares xlapy_cpu_cache_dir
from xlapy.flags import DebugOptions, debug_options
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.printer import module_to_text

__all__ = ["SIZE_FILE", "CacheStats", "DiskCache", "cache_directory", "cache_key",
           "decode_entry", "default_cache", "encode_entry", "module_fingerprint",
           "object_problem", "runtime_cache"]

FORMAT_VERSION = 2
"""Bump when the entry layout or the meaning of a payload changes (2: the key in the
checksum)."""
MAGIC = b"XLAPYOBJ"
_HEADER = struct.Struct("<8sIIQ32s32s")
"""magic, format version, reserved (0), payload length, SHA-256 of the key, SHA-256 of
(key digest + payload)."""
HEADER_SIZE = _HEADER.size
DEFAULT_MAX_BYTES = 1 << 30
ENTRY_SUFFIX = ".xlo"
_TEMP_SUFFIX = ".tmp"
_STALE_TEMP_SECONDS = 3600.0
"""A temporary file this old belongs to a writer that died; eviction removes it."""
_LOW_WATER = 0.9
"""Eviction goes down to this fraction of the cap, so it does not run on every put."""
_RESCAN_FRACTION = 8
"""A process scans the directory again once it has written 1/8 of the cap since its
last scan: other processes' writes are seen at least that often. (A scan costs
seconds where the cap holds a hundred thousand small entries: it cannot come
with every few puts, nor with every process's first.)"""
SIZE_FILE = ".size"
"""The directory's size in bytes as the last writer believed it (a hint, not an
entry): a new process starts from it instead of scanning."""
_KEY = re.compile(r"[0-9a-f]{16,128}")


# -- entry format -------------------------------------------------------------------------
def encode_entry(payload: bytes, key: str = "") -> bytes:
    """Header + payload, as stored on disk under `key`."""
    key_digest = hashlib.sha256(key.encode()).digest()
    digest = hashlib.sha256(key_digest + payload).digest()
    return _HEADER.pack(MAGIC, FORMAT_VERSION, 0, len(payload), key_digest, digest) + payload


def decode_entry(data: bytes, key: str = "") -> tuple[bytes | None, str]:
    """(payload, '') when `data` checks out as the entry for `key`, else (None, what is
    wrong with it)."""
    if len(data) < HEADER_SIZE:
        return None, f"{len(data)} bytes, shorter than the {HEADER_SIZE}-byte header"
    magic, version, _, length, key_digest, digest = _HEADER.unpack_from(data)
    if magic != MAGIC:
        return None, f"bad magic {magic!r}"
    if version != FORMAT_VERSION:
        return None, f"format version {version}, expected {FORMAT_VERSION}"
    payload = data[HEADER_SIZE:]
    if len(payload) != length:
        return None, f"header says {length} payload bytes, the file has {len(payload)}"
    if key_digest != hashlib.sha256(key.encode()).digest():
        return None, "written under another key (program, xlapy version, CPU or flags)"
    if hashlib.sha256(key_digest + payload).digest() != digest:
        return None, "payload does not match its SHA-256"
    return payload, ""


# -- object payloads ----------------------------------------------------------------------
_ELF_MACHINES = {"x86_64": 62, "aarch64": 183, "arm64": 183}
_SHT_NOBITS = 8


def object_problem(data: bytes, triple: str) -> str:
    """'' when `data` looks like what LLVM emits for `triple`: a relocatable 64-bit
    little-endian ELF object for its architecture, its section table and sections
    inside the file; else what is wrong. The last check before cached bytes become
    machine code in this process: a checksum proves only that a writer meant these
    bytes, and LLVM's loader trusts the offsets it is given."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return "not a 64-bit little-endian ELF object"
    kind, machine = struct.unpack_from("<HH", data, 0x10)
    if kind != 1:
        return f"ELF type {kind}, not a relocatable object"
    expected = _ELF_MACHINES.get(triple.split("-")[0])
    if expected is not None and machine != expected:
        return f"an object for ELF machine {machine}, not for {triple}"
    (table,) = struct.unpack_from("<Q", data, 0x28)
    entry_size, count = struct.unpack_from("<HH", data, 0x3A)
    if entry_size != 64 or not count or table + entry_size * count > len(data):
        return "its section table is missing or lies outside the file"
    for i in range(count):
        _, section_kind, _, _, offset, size = struct.unpack_from("<IIQQQQ", data,
                                                                 table + i * entry_size)
        if section_kind != _SHT_NOBITS and offset + size > len(data):
            return f"its section {i} lies outside the file"
    return ""


# -- the cache ------------------------------------------------------------------------------
@dataclass
class CacheStats:
    """What one DiskCache object saw; `misses` counts corrupt entries too."""

    hits: int = 0
    misses: int = 0
    corrupt: int = 0
    writes: int = 0
    write_errors: int = 0
    evicted: int = 0


class DiskCache:
    """Compiled objects in one directory (made on the first put), keyed by `cache_key`.

    Safe for threads and for processes sharing the directory. Never raises on
    disk errors; a bad key (not a lowercase hex digest) is a ValueError, since
    that is a bug in the caller and must not reach the file system.
    """

    def __init__(self, directory: str | os.PathLike, max_bytes: int = DEFAULT_MAX_BYTES):
        self.directory = Path(directory)
        self.max_bytes = max_bytes
        self.stats = CacheStats()
        self._lock = threading.Lock()
        self._estimate: int | None = None  # bytes in the directory, as this object believes
        self._written_since_scan = 0
        self._warned_write = False

    def __repr__(self) -> str:
        return f"DiskCache({str(self.directory)!r}, max_bytes={self.max_bytes})"

    def path(self, key: str) -> Path:
        if not _KEY.fullmatch(key):
            raise ValueError(f"cache key must be a lowercase hex digest, got {key!r}")
        return self.directory / (key + ENTRY_SUFFIX)

    def get(self, key: str) -> bytes | None:
        """The payload stored under `key`, or None (absent, or bad: then removed)."""
        path = self.path(key)
        try:
            data, identity = _read_regular_file(path, self.max_bytes)
        except (FileNotFoundError, NotADirectoryError):
            self.stats.misses += 1
            return None
        except OSError as e:
            if e.errno == errno.ELOOP:
                return self._reject(path, None, "a symbolic link, not an entry")
            return self._reject(path, None, f"unreadable ({e.strerror or e})")
        except _NotAnEntry as e:
            return self._reject(path, e.identity, str(e))
        payload, problem = decode_entry(data, key)
        if payload is None:
            return self._reject(path, identity, problem)
        with contextlib.suppress(OSError):
            os.utime(path)  # most recently used: evicted last
        self.stats.hits += 1
        return payload

    def discard(self, key: str, problem: str) -> None:
        """Drop the entry under `key`, which checked out here but its user cannot use
        (`problem` says why): counted and warned about as a corrupt entry."""
        self.stats.hits -= 1  # the get that returned it was a miss after all
        self._reject(self.path(key), None, problem)

    def put(self, key: str, payload: bytes) -> bool:
        """Store `payload` under `key`; False (after one warning per cache) if the disk
        refused. An entry bigger than the whole cap is not stored."""
        path = self.path(key)
        data = encode_entry(bytes(payload), key)
        if len(data) > self.max_bytes:
            return False
        try:
            _write_atomically(path, data)
        except OSError as e:
            self._write_failed(path, e)
            return False
        self.stats.writes += 1
        self._account(len(data), keep=path)
        return True

    def clear(self) -> int:
        """Delete every entry and temporary file of this cache (other files are left
        alone); the number of entries deleted."""
        removed = 0
        with self._lock:
            for entry in _scan(self.directory):
                if _remove(Path(entry.path)) and entry.name.endswith(ENTRY_SUFFIX):
                    removed += 1
            _remove(self.directory / SIZE_FILE)
            self._estimate = 0
        return removed

    def size_bytes(self) -> int:
        """Bytes the entries take now (a directory scan)."""
        return sum(size for _, size, _ in _entries(self.directory))

    # -- internals ------------------------------------------------------------------------
    def _reject(self, path: Path, identity: os.stat_result | None, problem: str) -> None:
        """Count, delete and warn about a bad entry; the miss it stands for. One warning
        says it all: where the entry cannot be removed, writing its replacement would
        fail too, and does so quietly."""
        self.stats.corrupt += 1
        self.stats.misses += 1
        stuck = _remove_entry(path, identity)
        if stuck:
            self._warned_write = True
            problem += f"; it cannot be removed ({stuck}), so it will not be replaced"
        warnings.warn(f"xlapy: dropping corrupt CPU cache entry {path}: {problem}",
                      RuntimeWarning, stacklevel=3)
        return None

    def _write_failed(self, path: Path, error: OSError) -> None:
        self.stats.write_errors += 1
        if self._warned_write:
            return
        self._warned_write = True
        warnings.warn(f"xlapy: cannot write the CPU cache entry {path} "
                      f"({error.strerror or error}); compiled code will not be cached there",
                      RuntimeWarning, stacklevel=3)

    def _account(self, added: int, keep: Path) -> None:
        """Track the directory's size and evict when it passes the cap (best effort).
        The size starts from the recorded hint (or a scan where there is none) and
        is rescanned after every 1/_RESCAN_FRACTION of the cap written here. Each
        scan also removes the temporary files of writers that died: they are not
        entries, so they count towards no cap and would otherwise stay."""
        with self._lock:
            recorded = _read_size(self.directory) if self._estimate is None else None
            if recorded is not None:
                self._estimate = recorded + added
            elif self._estimate is None or \
                    self._written_since_scan >= self.max_bytes // _RESCAN_FRACTION:
                self._rescan()   # sees the entry just written
            else:
                self._estimate += added
            self._written_since_scan += added
            if self._estimate > self.max_bytes:
                self._estimate = self._evict(keep)
                self._written_since_scan = 0
            _write_size(self.directory, self._estimate)

    def _rescan(self) -> None:
        _remove_stale_temps(self.directory)
        self._estimate = self.size_bytes()
        self._written_since_scan = 0

    def _evict(self, keep: Path) -> int:
        """Delete the least recently used entries down to the low-water mark, and stale
        temporary files; the bytes left."""
        _remove_stale_temps(self.directory)
        entries = sorted(_entries(self.directory), key=lambda e: e[2])
        total = sum(size for _, size, _ in entries)
        target = int(self.max_bytes * _LOW_WATER)
        for path, size, _ in entries:
            if total <= target:
                break
            if path == keep:
                continue
            _remove(path)
            total -= size  # gone, or taken by another process's eviction
            self.stats.evicted += 1
        return total


# -- file-system helpers (each best effort where the cache must not fail) ---------------
class _NotAnEntry(Exception):
    """What sits under an entry's name is no regular file, or is too big to be one."""

    def __init__(self, problem: str, identity: os.stat_result):
        super().__init__(problem)
        self.identity = identity


_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0))
"""A symlink fails to open (ELOOP) and a FIFO opens without waiting for a writer."""


def _read_regular_file(path: Path, limit: int) -> tuple[bytes, os.stat_result]:
    """(contents, identity) of the regular file at `path`, at most `limit` bytes."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        identity = os.fstat(fd)
        if not stat.S_ISREG(identity.st_mode):
            kind = "a directory" if stat.S_ISDIR(identity.st_mode) else "not a regular file"
            raise _NotAnEntry(f"{kind}, not an entry", identity)
        if identity.st_size > limit:
            raise _NotAnEntry(f"{identity.st_size} bytes, more than the cache's cap", identity)
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise _NotAnEntry("more bytes than the cache's cap", identity)
    return data, identity


def _write_atomically(path: Path, data: bytes) -> None:
    """Write into a fresh temporary file beside `path`, then rename it over `path`;
    on any failure the temporary file is removed and the error raised."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix="." + path.stem[:16] + "-",
                                suffix=_TEMP_SUFFIX)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        _remove(Path(temp))
        raise


def _remove_entry(path: Path, identity: os.stat_result | None) -> str:
    """Remove the bad entry at `path` (a file, link or empty directory), but only the one
    with `identity` if given: a writer may have replaced it with a good one since. ''
    when it is gone, else why it stays."""
    try:
        now = os.lstat(path)
        if identity is None or (now.st_ino, now.st_dev) == (identity.st_ino, identity.st_dev):
            (os.rmdir if stat.S_ISDIR(now.st_mode) else os.unlink)(path)
    except FileNotFoundError:
        pass
    except OSError as e:
        return e.strerror or str(e)
    return ""


def _scan(directory: Path) -> list[os.DirEntry]:
    """This cache's files in `directory` (entries and temporaries); [] if unreadable."""
    try:
        with os.scandir(directory) as it:
            return [e for e in it if e.name.endswith((ENTRY_SUFFIX, _TEMP_SUFFIX))
                    and e.is_file(follow_symlinks=False)]
    except OSError:
        return []


def _entries(directory: Path) -> list[tuple[Path, int, float]]:
    """(path, size, mtime) of each entry."""
    result = []
    for entry in _scan(directory):
        if not entry.name.endswith(ENTRY_SUFFIX):
            continue
        with contextlib.suppress(OSError):
            stat = entry.stat(follow_symlinks=False)
            result.append((Path(entry.path), stat.st_size, stat.st_mtime))
    return result


def _read_size(directory: Path) -> int | None:
    """The recorded size hint, or None (absent or unreadable: then the caller scans)."""
    try:
        value = int((directory / SIZE_FILE).read_text()[:32])
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return value if value >= 0 else None


def _write_size(directory: Path, size: int) -> None:
    with contextlib.suppress(OSError):
        _write_atomically(directory / SIZE_FILE, str(size).encode())


def _remove_stale_temps(directory: Path) -> None:
    limit = time.time() - _STALE_TEMP_SECONDS
    for entry in _scan(directory):
        if entry.name.endswith(_TEMP_SUFFIX):
            with contextlib.suppress(OSError):
                if entry.stat(follow_symlinks=False).st_mtime < limit:
                    os.unlink(entry.path)


def _remove(path: Path) -> bool:
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


# -- where the cache lives ------------------------------------------------------------------
def cache_directory(setting: str, environ: dict[str, str] | None = None) -> Path | None:
    """The directory the flag `xlapy_cpu_cache_dir` names; None when caching is off.

    '' means $XLAPY_CACHE_DIR if set, else $XDG_CACHE_HOME/xlapy (an absolute
    $XDG_CACHE_HOME only, as the XDG spec says), else ~/.cache/xlapy. 'off', in
    the flag or in $XLAPY_CACHE_DIR, disables the cache.
    """
    environ = os.environ if environ is None else environ
    chosen = setting or environ.get("XLAPY_CACHE_DIR", "")
    if chosen.lower() == "off":
        return None
    if chosen:
        return Path(chosen).expanduser()
    xdg = environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "xlapy"


def default_cache(flags: DebugOptions | None = None) -> DiskCache | None:
    """The cache the flags choose (one object per directory, so its stats add up)."""
    flags = flags if flags is not None else debug_options()
    directory = cache_directory(flags.xlapy_cpu_cache_dir)
    return None if directory is None else _cache_at(str(directory))


def runtime_cache(flags: DebugOptions | None = None) -> DiskCache | None:
    """Where the runtime library's objects (GEMM, thread pool, builtins) live:
    `xlapy_cpu_runtime_cache_dir` when set, else the kernels' cache. They are
    built once per machine (a second or two), as a library would be installed;
    a program may point its kernel cache at a fresh directory and keep them."""
    flags = flags if flags is not None else debug_options()
    setting = flags.xlapy_cpu_runtime_cache_dir
    if not setting:
        return default_cache(flags)
    directory = cache_directory(setting)
    return None if directory is None else _cache_at(str(directory))


@functools.cache
def _cache_at(directory: str) -> DiskCache:
    return DiskCache(directory)


# -- keys -----------------------------------------------------------------------------------
def cache_key(fingerprint: str, options_key: str, target: str) -> str:
    """The SHA-256 hex digest naming one compiled object. Its components:

    - "xlapy-cpu-object" and FORMAT_VERSION: what the payload is and its layout;
    - xlapy's version, and a digest of xlapy's own Python sources: the code
      generator changes between commits without a version bump;
    - llvmlite's version and the LLVM version it was built with;
    - `fingerprint`: the program (`module_fingerprint`);
    - `options_key`: the flags compilation depends on (`CpuOptions.key()`);
    - `target`: triple, CPU name and features the object was compiled for.
    """
    parts = ["xlapy-cpu-object", FORMAT_VERSION, xlapy_version.__version__, _source_digest(),
             llvmlite.__version__, ".".join(map(str, llvm.llvm_version_info)),
             fingerprint, options_key, target]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


@functools.cache
def _source_digest() -> str:
    """SHA-256 over xlapy's .py files (paths and contents); a few ms, once a process."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def module_fingerprint(module: HloModule) -> str:
    """SHA-256 of the module's HLO text without what does not change the code.

    Left out: the module's name, every `metadata={...}` (op names, source
    lines) and the stack-frame tables. Kept deliberately: instruction and
    computation names (the backend may name symbols and buffers after them,
    and one trace always names the same way: a spurious miss is cheap, a
    wrong hit is not), layouts, every other attribute and header attribute.
    Constants enter as a digest of their bytes, exact to the bit and cheap
    for big arrays. The caller must not bake the module name into the object.
    """
    return hashlib.sha256(module_to_text(_code_only(module)).encode()).hexdigest()


def _code_only(module: HloModule) -> HloModule:
    """A shallow copy for printing: canonical name, no metadata, constants as digests.

    The copies' operands and called computations still point at the original's
    objects; the printer reads only their names and shapes.
    """
    copy = HloModule("m")
    copy.attributes = dict(module.attributes)
    for computation in module.computations:
        stripped = HloComputation(computation.name,
                                  execution_thread=computation.execution_thread)
        clones = {id(i): stripped.add_instruction(_strip(i)) for i in computation.instructions}
        stripped.root_instruction = clones.get(id(computation.root_instruction))
        copy.add_computation(stripped, entry=computation is module.entry_computation)
    return copy


def _strip(instruction: HloInstruction) -> HloInstruction:
    attrs = {k: v for k, v in instruction.attrs.items() if k != "metadata"}
    if instruction.opcode is Opcode.CONSTANT:
        attrs["literal_sha256"] = _literal_digest(instruction.literal)
    return HloInstruction(instruction.opcode, instruction.shape, instruction.operands, attrs,
                          name=instruction.name, parameter_number=instruction.parameter_number)


def _literal_digest(value) -> str:
    digest = hashlib.sha256()
    for part in value if isinstance(value, tuple) else (value,):
        if part is None:  # an elided `{...}` the parser did not fill
            digest.update(b"elided")
            continue
        if isinstance(part, tuple):
            digest.update(_literal_digest(part).encode())
            continue
        array = np.ascontiguousarray(part)
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()
