"""Buffers fenced by inaccessible pages: the CPU backend's guard-page test mode.

A kernel that reads or writes past the end of its buffer usually lands in
other live memory (the next temporary of the arena, malloc's bookkeeping,
another array) and corrupts a result or the heap long after the fact. Under
`--xlapy_cpu_guard_pages` an execution instead gives the generated code only
buffers placed in pages of their own, each buffer's last byte right before a
PROT_NONE page and a PROT_NONE page before its first page too, so the first
byte read or written out of bounds raises SIGSEGV in the kernel that did it.

What is caught: any access past the end (the buffer's size is a multiple of
its alignment, so there is no slack between its last byte and the guard),
and any access before the start that reaches the page below the buffer's
first page (the slack from the buffer's start down to its page boundary,
under 4 KiB, is not caught: a buffer can abut only one guard exactly).
Buffers are placed at their element alignment (the largest element size of
the values they hold, at most 16 bytes; 8 for tuple pointer tables): that is
all the kernels assume, they load and store with the element type's ABI
alignment. Memory the kernels take from malloc themselves (GEMM packing,
sort scratch) is not fenced.

Outputs and temporaries start filled with 0xFF bytes (NaN in every float
type, -1 in integers), so a kernel reading an element nobody wrote shows up as
a wrong result, not as a lucky zero from fresh pages.
"""

from __future__ import annotations

import ctypes
import mmap
import os

import numpy as np

PAGE = mmap.PAGESIZE
POISON = 0xFF
"""The byte outputs and temporaries start as."""
MAX_ALIGN = 16

_libc = ctypes.CDLL(None, use_errno=True)
_mmap = _libc.mmap
_mmap.restype = ctypes.c_void_p
_mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                  ctypes.c_long]
_mprotect = _libc.mprotect
_mprotect.restype = ctypes.c_int
_mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_munmap = _libc.munmap
_munmap.restype = ctypes.c_int
_munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_MAP_FAILED = ctypes.c_void_p(-1).value


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def alignment_of(allocation) -> int:
    """The alignment a buffer-assignment allocation needs: its values' largest
    element size (8 for a tuple's pointer table), between 1 and MAX_ALIGN."""
    align = 1
    for value in allocation.values:
        shape = value.buffer.shape
        size = shape.dtype.itemsize if shape.is_array else 8
        align = max(align, min(size, MAX_ALIGN))
    return align


class GuardedBlock:
    """Buffers of the given (size, alignment) in one anonymous mapping: a guard page,
    then each buffer in its own pages followed by a guard page. `array(i)` is buffer
    i as a uint8 array; `address(i)` its first byte. `close()` unmaps it all: views
    of the buffers must not outlive it (copy what is to be kept)."""

    def __init__(self, buffers: list[tuple[int, int]]):
        self._starts: list[int] = []
        self._sizes = [size for size, _ in buffers]
        spans = [_round_up(_round_up(size, align), PAGE) for size, align in buffers]
        self._length = PAGE + sum(spans) + PAGE * len(spans)
        base = _mmap(None, self._length, 0, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
        if base is None or base == _MAP_FAILED:
            raise MemoryError(f"cannot map {self._length} bytes of guarded buffers "
                              f"({_errno_text()})")
        self._base = base
        at = base + PAGE
        try:
            for (size, align), span in zip(buffers, spans):
                if span and _mprotect(at, span, mmap.PROT_READ | mmap.PROT_WRITE) != 0:
                    raise MemoryError(f"cannot make {span} guarded bytes writable "
                                      f"({_errno_text()})")
                self._starts.append(at + span - _round_up(size, align))
                at += span + PAGE
        except BaseException:
            self.close()
            raise

    def address(self, i: int) -> int:
        return self._starts[i]

    def array(self, i: int) -> np.ndarray:
        size = self._sizes[i]
        if size == 0:
            return np.empty(0, np.uint8)
        return np.frombuffer((ctypes.c_char * size).from_address(self._starts[i]), np.uint8)

    def close(self) -> None:
        if self._base is not None:
            _munmap(self._base, self._length)
            self._base = None

    def __enter__(self) -> GuardedBlock:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _errno_text() -> str:
    return os.strerror(ctypes.get_errno())
