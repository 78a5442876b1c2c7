"""A caching allocator for device memory, and the buffers it hands out.

cuMemAlloc and cuMemFree synchronise the device and cost tens of
microseconds, so a program that runs many small kernels would spend its time
in them. Instead freed buffers wait in per-size free lists and are handed out
again. Sizes are rounded up to bins (multiples of 512 bytes, then four steps
per power of two) so that a slightly different size can reuse a buffer, at a
cost of at most 25% (or 511 bytes) of slack.

A DeviceBuffer returns itself to its allocator when it is garbage-collected,
exactly once. The allocator only needs `alloc(nbytes) -> int` and
`free(ptr)` from its context, so tests pass a fake one.
"""

from __future__ import annotations

import threading
import weakref
from typing import Protocol

SMALL_STEP = 512
SMALL_LIMIT = 1 << 20
"""Sizes up to 1 MiB are rounded to multiples of 512; larger ones to a quarter of
their power of two."""


class Memory(Protocol):
    def alloc(self, nbytes: int) -> int: ...

    def free(self, ptr: int) -> None: ...


def bin_size(nbytes: int) -> int:
    """The size of the block that serves a request of `nbytes` (never 0)."""
    nbytes = max(1, int(nbytes))
    if nbytes <= SMALL_LIMIT:
        step = SMALL_STEP
    else:
        step = (1 << (nbytes.bit_length() - 1)) // 4
    return -(-nbytes // step) * step


class DeviceBuffer:
    """`nbytes` of device memory at `ptr`, given back to `allocator` when collected."""

    def __init__(self, ptr: int, nbytes: int, allocator: CachingAllocator):
        self.ptr = ptr
        self.nbytes = nbytes
        self.allocator = allocator
        self._release = weakref.finalize(self, allocator.release, ptr)
        self._release.atexit = False  # at exit the process frees all device memory anyway

    @property
    def alive(self) -> bool:
        return self._release.alive

    def free(self) -> None:
        """Give the memory back now; later calls and garbage collection do nothing."""
        self._release()

    def __repr__(self) -> str:
        state = "" if self.alive else ", freed"
        return f"DeviceBuffer(0x{self.ptr:x}, {self.nbytes} bytes{state})"


class CachingAllocator:
    """Device allocations binned by size, reused through per-size free lists."""

    def __init__(self, memory: Memory):
        self.memory = memory
        self._free: dict[int, list[int]] = {}
        self._live: dict[int, int] = {}  # ptr -> bin size, for buffers handed out
        # re-entrant: a finalizer may run release() while this thread holds the lock
        self._lock = threading.RLock()

    def allocate(self, nbytes: int) -> DeviceBuffer:
        """A buffer of at least `nbytes`; on MemoryError, empty the cache and try once more."""
        size = bin_size(nbytes)
        with self._lock:
            cached = self._free.get(size)
            ptr = cached.pop() if cached else None
            if ptr is None:
                ptr = self._fresh(size)
            self._live[ptr] = size
        return DeviceBuffer(ptr, int(nbytes), self)

    def _fresh(self, size: int) -> int:
        try:
            return self.memory.alloc(size)
        except MemoryError:
            self.empty_cache()
            return self.memory.alloc(size)

    def release(self, ptr: int) -> None:
        """Take `ptr` back into the cache. Unknown or already released pointers are ignored,
        so a buffer can never be freed twice."""
        with self._lock:
            size = self._live.pop(ptr, None)
            if size is not None:
                self._free.setdefault(size, []).append(ptr)

    def empty_cache(self) -> None:
        """Free every cached (not in use) block back to the device."""
        with self._lock:
            blocks = [ptr for ptrs in self._free.values() for ptr in ptrs]
            self._free.clear()
        for ptr in blocks:
            self.memory.free(ptr)

    def stats(self) -> dict[str, int]:
        """Bytes (by bin size) in live buffers and in the cache, and their counts."""
        with self._lock:
            cached = [(size, len(ptrs)) for size, ptrs in self._free.items()]
            return {
                "bytes_in_use": sum(self._live.values()),
                "bytes_cached": sum(size * count for size, count in cached),
                "buffers_in_use": len(self._live),
                "buffers_cached": sum(count for _, count in cached),
            }
