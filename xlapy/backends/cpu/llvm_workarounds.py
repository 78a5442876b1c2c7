"""LLVM options that steer it around its own miscompilations, set once per process
before the first module is optimised (`apply`, called by `Codegen.emit`).

- `-force-tail-folding-style=none`. LLVM 22's loop vectoriser (AVX-512) may
  run the remainder of a loop with a constant trip count as one masked vector
  iteration (9 = 8 + 1 i64 elements: one lane set). When that iteration stores
  a truncated vector — s64/u64 converted to s32, s16, s8 — the x86 backend turns
  the one-lane masked truncating store into a scalar store of the whole
  untruncated i64: 4 to 7 bytes past the element, past the end of the buffer
  for the last row of a [n, 9] result. That corrupted the heap (glibc aborted
  on "corrupted size vs. prev_size" at exit) and faulted under guard pages
  (random program 100637: u64[20,9] -> u32[20,9]). Without tail folding the
  remainder runs as a plain (vector or scalar) epilogue with correct stores.

LLVM's options are process-wide, and its command-line parser is not
thread-safe: they are set under the target's lock.
"""

from __future__ import annotations

import functools

import llvmlite.binding as llvm

from xlapy.backends.cpu.llvm_target import _LOCK

OPTIONS = ("-force-tail-folding-style=none",)


@functools.cache
def apply() -> None:
    with _LOCK:
        for option in OPTIONS:
            llvm.set_option("", option)
