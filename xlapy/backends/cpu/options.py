"""The CPU backend's flags, under XLA's own names where XLA has them.

XLA:CPU compiles with strict IEEE semantics unless `--xla_cpu_enable_fast_math`
is set; so do we. The rest are xlapy's: a cap on worker threads, the
on-disk cache of compiled objects, and the guard-page test mode.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from xlapy.flags import DebugOptions, debug_options, register_flag

register_flag("xla_cpu_enable_fast_math", "bool", False,
              "let LLVM reassociate, contract into FMA and assume no NaN/inf (off: strict IEEE)")
register_flag("xla_cpu_flush_denormals", "bool", False,
              "xlapy: flush subnormal floats to zero (sets FTZ/DAZ for the kernels' threads)")
register_flag("xla_cpu_parallelism", "int", 0,
              "xlapy: most threads one execution uses (0: one per core)")
register_flag("xla_cpu_opt_level", "int", 3, "LLVM optimisation level for the CPU backend")
register_flag("xlapy_cpu_strict", "bool", False,
              "xlapy: fail compilation instead of running an instruction through the "
              "interpreter fallback")
register_flag("xlapy_cpu_cache_dir", "string", "",
              "directory of the on-disk cache of compiled objects "
              "(default ~/.cache/xlapy; 'off' disables it)")
register_flag("xlapy_cpu_runtime_cache_dir", "string", "",
              "directory of the runtime library's cached objects (GEMM, thread pool), built "
              "once per machine ('' follows --xlapy_cpu_cache_dir; 'off' disables it)")
register_flag("xlapy_cpu_guard_pages", "bool", False,
              "xlapy (testing): run every execution on copies of its buffers placed against "
              "inaccessible pages, each temporary in its own, so a kernel reading or writing "
              "out of bounds faults (slow: a mapping per call)")
register_flag("xlapy_cpu_openmp_threads", "string", "torch",
              "xlapy: where parallel loops run beside PyTorch. 'torch': on PyTorch's OpenMP "
              "team once torch.compile(backend='xlapy') compiled a graph (PyTorch's threads "
              "spin between its operations and would take the cores from xlapy's pool); "
              "'always': on the team of any libgomp the process has loaded; 'never': on "
              "xlapy's own pool")
register_flag("xlapy_test_miscompile", "string", "",
              "xlapy (testing only): the CPU backend emits this opcode wrongly (its result "
              "plus one), so numerics bisection has a known bug to find")


@dataclass(frozen=True)
class CpuOptions:
    """The flag values one compilation depends on (they are part of its cache key)."""

    fast_math: bool = False
    flush_denormals: bool = False
    threads: int = 1
    opt_level: int = 3
    strict: bool = False
    profile: bool = False
    """Record each entry instruction's start and end time (`profiling.py`)."""
    inline_runtime: bool = False
    """Emit runtime kernels (GEMM) into the module: ahead-of-time objects need it."""
    target: tuple[str, str, str] | None = None
    """(triple, cpu, features) to compile for; None: this machine (JIT)."""
    guard_pages: bool = False
    """Buffers fenced by PROT_NONE pages (`guarded_memory.py`); buffer assignment then
    gives each temporary its own allocation, so the generated code differs."""
    miscompile: str = ""
    """An opcode emitted wrongly on purpose (--xlapy_test_miscompile, for tests)."""

    @classmethod
    def from_flags(cls, flags: DebugOptions | None = None) -> CpuOptions:
        flags = flags if flags is not None else debug_options()
        cap = flags.xla_cpu_parallelism
        cores = os.cpu_count() or 1
        return cls(fast_math=flags.xla_cpu_enable_fast_math,
                   flush_denormals=flags.xla_cpu_flush_denormals,
                   threads=max(1, min(cap, cores) if cap > 0 else cores),
                   opt_level=flags.xla_cpu_opt_level,
                   strict=flags.xlapy_cpu_strict,
                   profile=flags.xla_hlo_profile,
                   guard_pages=flags.xlapy_cpu_guard_pages,
                   miscompile=flags.xlapy_test_miscompile)

    def key(self) -> str:
        """Every field that changes the object code (`guard` only when set, so the keys
        of ordinary compilations stay as they were)."""
        return (f"fm={int(self.fast_math)},ftz={int(self.flush_denormals)},t={self.threads},"
                f"O{self.opt_level},strict={int(self.strict)},prof={int(self.profile)},"
                f"inline={int(self.inline_runtime)},target={self.target}"
                + (",guard=1" if self.guard_pages else "")
                + (f",miscompile={self.miscompile}" if self.miscompile else ""))


@dataclass(frozen=True)
class CompileOptions:
    """Everything one compilation reads from the flags, read once and passed
    down every step (pipeline, dumps, buffer assignment, code generation,
    cache): the debug options and the CPU options derived from them."""

    flags: DebugOptions
    cpu: CpuOptions

    @classmethod
    def from_flags(cls, flags: DebugOptions | None = None) -> CompileOptions:
        flags = flags if flags is not None else debug_options()
        return cls(flags, CpuOptions.from_flags(flags))

    def with_cpu(self, cpu: CpuOptions) -> CompileOptions:
        return replace(self, cpu=cpu)

    def ahead_of_time(self, target: tuple[str, str, str]) -> CompileOptions:
        """For an object file: one thread, runtime kernels inside, no fallback."""
        return self.with_cpu(replace(self.cpu, threads=1, strict=True, inline_runtime=True,
                                     target=target, profile=False, guard_pages=False))
