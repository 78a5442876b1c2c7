"""The CPU backend: HLO -> one LLVM module -> machine code, via llvmlite.

`compile` optimises a copy of the module (the default pipeline), assigns
buffers, emits LLVM IR for the whole module (`codegen.Codegen`), optimises
it at O3 with the vectorisers, and loads the object code (from the on-disk
cache when an identical compilation was done before). See docs/internals.md.
"""

from __future__ import annotations

import time

from xlapy.backends.base import Backend, optimized_copy
from xlapy.backends.cpu import options  # noqa: F401  (declares the --xla_cpu_* flags)
from xlapy.hlo.ir import HloModule


class CpuBackend(Backend):
    name = "cpu"

    def compile(self, module: HloModule, optimize: bool = True):
        """Always optimises (fusion is what the CPU backend compiles); the caller's
        module is never changed."""
        from xlapy.backends.cpu.compiler import compile_module
        from xlapy.hlo.verifier import verify

        verify(module)
        start = time.perf_counter()
        optimised = optimized_copy(module, dump_prefix="cpu_")
        return compile_module(optimised, start)
