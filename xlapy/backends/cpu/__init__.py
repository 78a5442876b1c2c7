"""The CPU backend: HLO -> one LLVM module -> machine code, via llvmlite.

`compile` reads the flags once (`CompileOptions`), optimises a copy of the
module (the default pipeline), assigns buffers, emits LLVM IR for the whole
module (`codegen.Codegen`), optimises it at O3 with the vectorisers, and
loads the object code (from the on-disk cache when an identical compilation
was done before). Ahead-of-time compilation (`xlapy.aot`) shares every step
up to the object (`compiler.prepare`, `compiler.generate`).
"""

from __future__ import annotations

import time

from xlapy.backends.base import Backend
from xlapy.backends.cpu.compiler import compile_module, prepare
from xlapy.backends.cpu.options import CompileOptions
from xlapy.hlo.ir import HloModule
from xlapy.passes import compile_profile


class CpuBackend(Backend):
    name = "cpu"

    def compile(self, module: HloModule, optimize: bool = True):
        """Always optimises (fusion is what the CPU backend compiles); the caller's
        module is never changed."""
        start = time.perf_counter()
        profile = compile_profile.begin(module.name)
        try:
            options = CompileOptions.from_flags()
            prepared = prepare(module, options, dump_prefix="cpu_")
            return compile_module(prepared.module, start, options, prepared)
        finally:
            compile_profile.finish(profile)
