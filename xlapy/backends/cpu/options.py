"""The CPU backend's flags, under XLA's own names where XLA has them.

XLA:CPU compiles with strict IEEE semantics unless `--xla_cpu_enable_fast_math`
is set; so do we. The rest are xlapy's: a cap on worker threads and the
on-disk cache of compiled objects.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

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
                   profile=flags.xla_hlo_profile)

    def key(self) -> str:
        return (f"fm={int(self.fast_math)},ftz={int(self.flush_denormals)},t={self.threads},"
                f"O{self.opt_level},strict={int(self.strict)},prof={int(self.profile)},"
                f"inline={int(self.inline_runtime)},target={self.target}")
