"""Faults of the CPU backend's on-disk cache, made with real processes and files.

Each case damages the cache the way a crash, a full disk, a shared home
directory, an upgrade or a careless user would, then compiles and runs a
program against it in a fresh process and reports: whether the result was
right, how many warnings the process gave, whether the bad entry was used
(its code loaded) and whether it was repaired (the next compilation loads a
good entry without a word; n/a where the disk takes no entry). The promise:
always the right result, a warning at most, never a crash, and a bad entry
is never trusted.

    python benchmarks/cache_faults.py [--json]

Entry faults damage the compiled module of `x + y` or, "GEMM: ...", the
runtime library's GEMM object of a dot (loaded straight into the process as
machine code). "re-signed" means the header's SHA-256 was made to match the
damaged bytes: what a buggy writer would leave, and what no checksum
catches. Each case runs in its own process, so a crash or a hang is
reported, not suffered; the process cases start eight at once.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
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
CASE_SECONDS = 60
"""A case still running after this long is reported as hung."""
PROCESSES = 8


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
    import xlapy

    saved, xlapy.__version__ = xlapy.__version__, "0.0.0+another"
    try:
        yield
    finally:
        xlapy.__version__ = saved


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
    from xlapy.flags import flags_set

    fault, program = DIRECTORY_FAULTS[case]
    try:
        directory = fault(directory)
    except _Skip as e:
        return Row(case, skipped=str(e))
    with flags_set(f"--xlapy_cpu_cache_dir={directory}"):
        run = compile_and_run(program)
    stray = sorted(p.name for p in directory.iterdir() if p.name != FILLER
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


# -- many processes at once ----------------------------------------------------------------------
def _worker(directory: str, go: str) -> None:
    from xlapy.backends.cpu import compiler  # noqa: F401  imported before the start
    from xlapy.backends.cpu.disk_cache import _source_digest

    deadline = time.monotonic() + 60
    while not os.path.exists(go) and time.monotonic() < deadline:
        time.sleep(0.001)
    run = compile_and_run("add")
    print(json.dumps({**asdict(run), "digest": _source_digest()}))


def processes_case(case: str, directory: Path) -> Row:
    """PROCESSES processes compile and run one module at once against one cache."""
    if case.endswith("truncated entry"):
        (first,) = _workers(directory, 1)
        (entry,) = _module_entries(directory)
        entry.write_bytes(entry.read_bytes()[:100])
        assert first["right"]
    runs = _workers(directory, PROCESSES)
    (last,) = _workers(directory, 1)
    modules = _module_entries(directory)
    temps = [p.name for p in directory.iterdir() if not p.name.endswith(".xlo")]
    # Keys include a digest of xlapy's sources, which others may be editing meanwhile: one
    # entry per digest seen, and the last run loads one if its digest was seen before.
    digests = {r["digest"] for r in runs}
    repaired = ((last["from_cache"] or last["digest"] not in digests) and not last["warnings"]
                and not temps and len(modules) <= len(digests | {last["digest"]}))
    errors = [r["error"] for r in runs if r["error"]]
    note = (f"{len(modules)} module entry(s), {len(temps)} other files; of {PROCESSES}: "
            f"{sum(r['from_cache'] for r in runs)} loaded it, "
            f"{sum(bool(r['warnings']) for r in runs)} warned")
    return Row(case, all(r["right"] for r in runs), max(len(r["warnings"]) for r in runs),
               False, repaired, "; ".join(errors) or note)


def _module_entries(directory: Path) -> list[Path]:
    return [p for p in directory.glob("*.xlo") if b"XLAPYCPU" in p.read_bytes()[:200]]


def _workers(directory: Path, count: int) -> list[dict]:
    go = directory.parent / f"go-{count}-{time.monotonic_ns()}"
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", str(directory), str(go)],
                              env=_environment(directory), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(count)]
    go.write_bytes(b"")
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=CASE_SECONDS)
        if proc.returncode:
            results.append({"right": False, "from_cache": False, "warnings": [],
                            "error": f"exit {proc.returncode}: {err.strip()[-200:]}",
                            "digest": ""})
        else:
            results.append(json.loads(out.strip().splitlines()[-1]))
    return results


# -- running the cases ---------------------------------------------------------------------------
PROCESS_CASES = [f"{PROCESSES} processes, empty cache", f"{PROCESSES} processes, truncated entry"]
CASES = [*ENTRY_DAMAGE, *DIRECTORY_FAULTS, *PROCESS_CASES]


_HUNG_EXIT = 3


class _Hung(BaseException):
    """Not an Exception: `compile_and_run` reports those as the case's result."""


def _run_in_child(cases: list[str], directory: Path) -> None:
    """Run `cases` here in turn against the cache in `directory`, a JSON row per line. A
    case still going after CASE_SECONDS (blocked, say, on a FIFO) is reported as hung
    and ends the process: it is in no state to go on."""
    def hang(signum, frame):
        raise _Hung

    signal.signal(signal.SIGALRM, hang)
    for case in cases:
        signal.alarm(CASE_SECONDS)
        try:
            row = entry_case(case) if case in ENTRY_DAMAGE else directory_case(case, directory)
        except _Hung:
            print(json.dumps(asdict(Row(case, note=f"hung: stopped after {CASE_SECONDS} s"))))
            sys.exit(_HUNG_EXIT)
        finally:
            signal.alarm(0)
        print(json.dumps(asdict(row)), flush=True)


def _environment(directory: Path) -> dict[str, str]:
    return {**os.environ, "XLAPY_FLAGS": f"--xlapy_cpu_cache_dir={directory}"}


def _groups(cases: list[str]) -> list[list[str]]:
    """Cases that share a process and its cache (imports and compilations are the
    cost): the entry faults of one program. A directory fault changes its process for
    good (a file-size limit, say), so it runs alone, as do the process cases."""
    by_program: dict[str, list[str]] = {}
    for case in cases:
        if case in ENTRY_DAMAGE:
            by_program.setdefault(ENTRY_DAMAGE[case][0], []).append(case)
    return [*by_program.values(), *([c] for c in cases if c not in ENTRY_DAMAGE)]


def run_group(cases: list[str], workdir: Path) -> list[Row]:
    """`cases` in one fresh process; after a crash or a hang, the rest in another (with
    a fresh cache), so one case's failure is its own row only."""
    if cases[0] in PROCESS_CASES:
        return [processes_case(cases[0], workdir / "cache")]
    rows: list[Row] = []
    while len(rows) < len(cases):
        rows += _child(cases[len(rows):], workdir / f"cache{len(rows)}")
    return rows


def _child(cases: list[str], directory: Path) -> list[Row]:
    command = [sys.executable, __file__, "--cases", str(directory), *cases]
    namespaced = DIRECTORY_FAULTS.get(cases[0], (None,))[0] is _full_tmpfs
    if namespaced:
        if not shutil.which("unshare"):
            return [Row(cases[0], skipped="needs unshare(1) for a small tmpfs of its own")]
        command = ["unshare", "-rm", "sh", "-c", _TMPFS, "sh", str(directory), *command]
    try:
        done = subprocess.run(command, env=_environment(directory), capture_output=True,
                              text=True, timeout=CASE_SECONDS * (len(cases) + 1))
        out, code, err = done.stdout, done.returncode, done.stderr
    except subprocess.TimeoutExpired as e:
        out, code, err = e.stdout or "", None, ""
    finally:
        release(directory)
    if namespaced and code == 97:
        return [Row(cases[0], skipped="no private mount namespace for a small tmpfs here")]
    out = out.decode() if isinstance(out, bytes) else out
    rows = [Row(**json.loads(line)) for line in out.splitlines() if line.startswith("{")]
    if len(rows) < len(cases) and code != _HUNG_EXIT:  # else its last row says it hung
        rows.append(Row(cases[len(rows)], note=f"crashed (exit {code}): {err.strip()[-300:]}"))
    return rows


def release(directory: Path) -> None:
    """Undo what `make_read_only` did, so the directory can be deleted."""
    if directory.is_dir():
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(directory)], capture_output=True)
        with contextlib.suppress(OSError):
            directory.chmod(0o755)


def run_all(workdir: Path, cases: list[str] = CASES, jobs: int | None = None) -> list[Row]:
    """Every case, `jobs` processes (or process cases) at a time, each group of cases in
    its own subdirectory of `workdir`; the rows in the order of `cases`."""
    def one(index_group):
        index, group = index_group
        (workdir / str(index)).mkdir()
        return run_group(group, workdir / str(index))

    with ThreadPoolExecutor(jobs or os.cpu_count() or 1) as pool:
        rows = {r.case: r for group in pool.map(one, enumerate(_groups(cases))) for r in group}
    return [rows[case] for case in cases]


def table(rows: list[Row]) -> str:
    def mark(value):
        return {True: "yes", False: "NO", None: "n/a"}[value]

    lines = [f"{'case':46} {'right':>5} {'warnings':>8} {'bad used':>8} {'repaired':>8}  note"]
    for r in rows:
        if r.skipped:
            lines.append(f"{r.case:46} {'skipped: ' + r.skipped}")
            continue
        lines.append(f"{r.case:46} {mark(r.right):>5} {r.warnings:>8} "
                     f"{'YES' if r.used_bad else 'no':>8} {mark(r.repaired):>8}  {r.note}")
    run = [r for r in rows if not r.skipped]
    wrong = sum(not r.right for r in run)
    lines.append(f"cache faults: {len(run)} cases run ({len(rows) - len(run)} skipped), "
                 f"{wrong} wrong results, {sum(r.used_bad for r in run)} bad entries used, "
                 f"{sum(r.warnings > 1 for r in run)} with more than one warning")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    if argv[:1] == ["--worker"]:
        return _worker(*argv[1:3])
    if argv[:1] == ["--cases"]:
        return _run_in_child(argv[2:], Path(argv[1]))
    with tempfile.TemporaryDirectory(prefix="xlapy-cache-faults-") as workdir:
        rows = run_all(Path(workdir))
        print(json.dumps([asdict(r) for r in rows], indent=1) if "--json" in argv
              else table(rows))
        for directory in Path(workdir).glob("*/cache*"):
            release(directory)
    return None


if __name__ == "__main__":
    main(sys.argv[1:])
