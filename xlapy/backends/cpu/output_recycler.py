"""Large result buffers reused once the caller has let go of them.

A fresh 64 MB output costs more than the kernel that fills it: the C library
maps big allocations straight from the kernel and unmaps them on free, so
every execution page-faults its whole output in again (16k faults, ~8 ms, for
a loop that runs in 5). An executable therefore keeps the buffers behind the
last two large results of each output; at the next execution, one that
nothing but the recycler still refers to (the caller dropped the array and
every view of it) is handed out again instead of a new one. Results are never shared: a buffer
the caller still holds, through any view, is left alone.

The cost is memory: after the caller drops a result, its buffer (and the one
before) stays until the executable runs again or is freed. A new buffer of `host_memory.CHECK_FROM`
bytes or more is first checked against the memory the process can still use,
so an output too big for the machine is a MemoryError naming it, not an OOM
kill when the kernel writes it.
"""

from __future__ import annotations

import ctypes
import sys

import numpy as np

from xlapy.backends.cpu import host_memory

MIN_BYTES = 1 << 20
"""Smaller buffers come from malloc's free lists, without page faults."""
MAX_BYTES = 1 << 30
"""Larger ones are not worth pinning."""
_ALIGN = 64


class OutputRecycler:
    """Two spare buffers per output allocation: a loop that passes each result to
    the next execution (`w = step(w)`, an eager loop's clusters) still holds the
    last result while the next is written, so its buffers take turns. Not
    thread-safe (callers hold a lock)."""

    def __init__(self, keep: bool = True):
        self._kept: dict[int, list[np.ndarray]] = {}
        self._keep = keep

    def buffer(self, key: int, nbytes: int, owner: str = "") -> np.ndarray:
        """A 64-byte-aligned uint8 array of `nbytes` for output allocation `key` (of the
        module named `owner`): a kept one when nobody else holds it, else a new one
        (kept in place of the older kept one when large)."""
        if nbytes < MIN_BYTES:
            return _aligned_view(np.empty(nbytes + _ALIGN, np.uint8), nbytes)
        kept = self._kept.get(key, ())
        for spare in kept:
            # references to `spare`: the list, this local, getrefcount's argument
            if spare.nbytes - _ALIGN >= nbytes and sys.getrefcount(spare) <= 3:
                return _aligned_view(spare, nbytes)
        if nbytes >= host_memory.CHECK_FROM:
            host_memory.require(nbytes, f"{owner}: output allocation {key}")
        raw = np.empty(nbytes + _ALIGN, np.uint8)
        if self._keep and MIN_BYTES <= nbytes <= MAX_BYTES:
            self._kept[key] = [*kept[-1:], raw]
        return _aligned_view(raw, nbytes)


def _aligned_view(raw: np.ndarray, nbytes: int) -> np.ndarray:
    start = (-ctypes.addressof(ctypes.c_char.from_buffer(raw))) % _ALIGN  # (.ctypes is slow)
    return raw[start:start + nbytes]
