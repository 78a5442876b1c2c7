"""How much memory this process can still use, checked before big allocations.

Linux overcommits: `np.empty` of 20 GB succeeds on a machine with 10 GB free,
and the process is killed by the OOM killer only when the kernel touches
the pages, with no Python exception and no word about which buffer was too
big. So an executable asks here before it allocates a large buffer (the
temporaries at the first execution, the outputs of each call), and a request
that cannot be met raises MemoryError naming the buffer and both sizes.

The bound is the least of what is known: MemAvailable plus free swap
(`/proc/meminfo`), the memory cgroup's limit minus its usage (v2 or v1), and
RLIMIT_AS / RLIMIT_DATA minus what the process already maps. Reading them
costs tens of microseconds, so requests under CHECK_FROM bytes are not
checked: malloc refuses those itself where they cannot be met, and NumPy turns
that into MemoryError.
"""

from __future__ import annotations

import resource
from pathlib import Path

from xlapy.analysis.buffer_assignment import human_bytes

CHECK_FROM = 64 << 20
"""Requests of at least this many bytes are checked against `available_bytes`."""
_UNLIMITED = 1 << 60


def available_bytes() -> int | None:
    """Bytes this process may still allocate and touch, or None where nothing is known."""
    bounds = [b for b in (_meminfo(), _cgroup(), _rlimit(resource.RLIMIT_AS, "VmSize"),
                          _rlimit(resource.RLIMIT_DATA, "VmData")) if b is not None]
    return max(0, min(bounds)) if bounds else None


def require(nbytes: int, what: str) -> None:
    """Raise MemoryError naming `what` when `nbytes` more cannot be had."""
    if nbytes < CHECK_FROM:
        return
    available = available_bytes()
    if available is not None and nbytes > available:
        raise MemoryError(f"{what}: {_human(nbytes)} ({nbytes} bytes) needed, but only "
                          f"{_human(available)} of memory is available")


def allocation_failed(nbytes: int, what: str) -> MemoryError:
    """The MemoryError for an allocation of `nbytes` for `what` that failed anyway."""
    available = available_bytes()
    where = f"; {_human(available)} available" if available is not None else ""
    return MemoryError(f"{what}: {_human(nbytes)} ({nbytes} bytes) could not be "
                       f"allocated{where}")


def _human(n: int) -> str:
    return human_bytes(n)


def _fields(path: str) -> dict[str, int]:
    """The `name: value [kB]` (or `name value`) lines of a file, in bytes."""
    values = {}
    try:
        text = Path(path).read_text()
    except OSError:
        return values
    for line in text.splitlines():
        parts = line.replace(":", " ").split()
        if len(parts) >= 2 and parts[1].isdigit():
            values[parts[0]] = int(parts[1]) * (1024 if parts[2:] == ["kB"] else 1)
    return values


def _meminfo() -> int | None:
    info = _fields("/proc/meminfo")
    if "MemAvailable" not in info:
        return None
    return info["MemAvailable"] + info.get("SwapFree", 0)


def _rlimit(which: int, status_field: str) -> int | None:
    soft, _ = resource.getrlimit(which)
    if soft == resource.RLIM_INFINITY or soft >= _UNLIMITED:
        return None
    used = _fields("/proc/self/status").get(status_field)
    return None if used is None else soft - used


def _cgroup() -> int | None:
    """The memory cgroup's limit minus its usage (v2, else v1); None without a limit."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            bound = _cgroup_bound(Path("/sys/fs/cgroup"), path, "memory.max", "memory.current",
                                  "inactive_file")
        elif "memory" in controllers.split(","):
            bound = _cgroup_bound(Path("/sys/fs/cgroup/memory"), path, "memory.limit_in_bytes",
                                  "memory.usage_in_bytes", "total_inactive_file")
        else:
            continue
        if bound is not None:
            return bound
    return None


def _cgroup_bound(root: Path, path: str, limit_file: str, usage_file: str,
                  reclaimable: str) -> int | None:
    """limit - (usage - inactive page cache, which the kernel reclaims before it kills)."""
    # inside a cgroup namespace the group's own files are at the root of the mount
    for directory in (root / path.lstrip("/"), root):
        try:
            limit = (directory / limit_file).read_text().strip()
            usage = int((directory / usage_file).read_text())
        except (OSError, ValueError):
            continue
        if not limit.isdigit() or int(limit) >= _UNLIMITED:
            return None
        stat = _fields(str(directory / "memory.stat"))
        return int(limit) - usage + stat.get(reclaimable, 0)
    return None
