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

The faults and the cases' child side are in `cache_fault_cases`; this module
runs them in processes of their own and reports.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

if not __package__:  # run as a script: `benchmarks` is found from the repository root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cache_fault_cases import (  # noqa: E402,F401  (PROGRAMS, make_read_only: tests)
    _TMPFS,
    DIRECTORY_FAULTS,
    ENTRY_DAMAGE,
    PROGRAMS,
    Row,
    _full_tmpfs,
    compile_and_run,
    directory_case,
    entry_case,
    make_read_only,
)

CASE_SECONDS = 60
"""A case still running after this long is reported as hung."""
PROCESSES = 8


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
    from xlapy.backends.cpu.disk_cache import SIZE_FILE

    if case.endswith("truncated entry"):
        (first,) = _workers(directory, 1)
        (entry,) = _module_entries(directory)
        entry.write_bytes(entry.read_bytes()[:100])
        assert first["right"]
    runs = _workers(directory, PROCESSES)
    (last,) = _workers(directory, 1)
    modules = _module_entries(directory)
    temps = [p.name for p in directory.iterdir()
             if not p.name.endswith(".xlo") and p.name != SIZE_FILE]
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
