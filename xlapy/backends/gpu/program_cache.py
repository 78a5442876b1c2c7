"""The on-disk cache of compiled GPU programs: the CPU's cache (`cpu/disk_cache.py`:
atomic writes, checksummed entries, eviction) holding what code generation
made, so a second process compiling the same module skips the emitter, LLVM
and the PTX backend.

An entry is a JSON record — the PTX, the LLVM IR, the kernel names, the thunk
program (`thunks.to_json`: thunk structure, kernels, launch dimensions,
buffer slices) and the allocation table it was made against — then, where a
CUDA driver linked it, the cubin for the device's architecture. Its key is
`program_key`. A record is used only if all of it fits the module compiled
now: it decodes as thunks, every kernel it launches is an entry of its PTX,
its allocation table is this assignment's and every slice lies inside it.
Otherwise it is discarded with a warning and the module is compiled afresh,
so a bad entry costs a compilation, never a wrong program.

The flag `xlapy_gpu_cache_dir` places it: '' shares the CPU cache's directory
(`--xlapy_cpu_cache_dir`, $XLAPY_CACHE_DIR, ~/.cache/xlapy), 'off' turns it
off, anything else is a directory.
"""

from __future__ import annotations

import json
import re
import warnings

from xlapy import version as xlapy_version
from xlapy.analysis.buffer_assignment import BufferAssignment
from xlapy.backends.cpu.disk_cache import (
    DiskCache,
    cache_key,
    default_cache,
    module_fingerprint,
)
from xlapy.backends.gpu import driver
from xlapy.backends.gpu.program import GpuProgram
from xlapy.backends.gpu.thunks import from_json, kernels_of, slices_of, to_json
from xlapy.codegen import nvptx
from xlapy.errors import CompileError, ExecutionError
from xlapy.flags import DebugOptions, register_flag
from xlapy.hlo.ir import HloModule

register_flag("xlapy_gpu_cache_dir", "string", "",
              "directory of the on-disk cache of compiled GPU programs (default: the CPU "
              "cache's, --xlapy_cpu_cache_dir; 'off' disables it)")
FORMAT = 1
"""Bump when the record's layout or meaning changes."""
_MAGIC = b"XLAPYGPU1\n"
_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$][\w$]*)")


def gpu_cache(flags: DebugOptions) -> DiskCache | None:
    """The cache `flags` choose for GPU programs; None when it is off."""
    setting = flags.xlapy_gpu_cache_dir
    return default_cache(flags.replace(xlapy_cpu_cache_dir=setting) if setting else flags)


def program_key(module: HloModule, arch: str, fast_math: bool) -> str:
    """The SHA-256 hex digest naming one GPU program: the CPU's `cache_key` (xlapy's
    version and source digest, llvmlite's and LLVM's versions) over

    - `module_fingerprint` of the optimised module (as the CPU keys its objects);
    - "xlapy-gpu-program", FORMAT and `fast_math` (--xla_gpu_enable_fast_math);
    - the target: NVPTX's triple and `arch` (--xla_gpu_target).
    """
    options = json.dumps(["xlapy-gpu-program", FORMAT, bool(fast_math)])
    return cache_key(module_fingerprint(module), options, f"{nvptx.TRIPLE} {arch}")


def encode(program: GpuProgram) -> bytes:
    record = json.dumps({
        "xlapy": xlapy_version.__version__, "arch": program.arch, "ptx": program.ptx,
        "llvm_ir": program.llvm_ir, "kernels": list(program.kernels),
        "thunks": to_json(program.thunks), "allocations": _allocations(program.assignment),
        "cubin_arch": program.cubin_arch if program.cubin else ""}).encode()
    return _MAGIC + len(record).to_bytes(4, "little") + record + (program.cubin or b"")


def decode(payload: bytes, module: HloModule, assignment: BufferAssignment,
           arch: str) -> tuple[GpuProgram | None, str]:
    """(the program, '') when `payload` is a record that fits `module` as assigned and
    `arch`; else (None, what does not fit)."""
    if not payload.startswith(_MAGIC):
        return None, "not a GPU program of this format"
    at = len(_MAGIC)
    size = int.from_bytes(payload[at:at + 4], "little")
    try:
        record = json.loads(payload[at + 4:at + 4 + size])
        thunks = from_json(record["thunks"])
        kernels = [str(k) for k in record["kernels"]]
        program = GpuProgram(module, assignment, thunks, str(record["ptx"]), str(record["arch"]),
                             str(record["llvm_ir"]), kernels, from_cache=True)
        version, allocations = record["xlapy"], record["allocations"]
        program.cubin_arch = str(record["cubin_arch"])
    except (ValueError, KeyError, TypeError) as e:
        return None, f"its record does not decode ({type(e).__name__}: {e})"
    if version != xlapy_version.__version__:
        return None, f"written by xlapy {version}, this is {xlapy_version.__version__}"
    if program.arch != arch:
        return None, f"PTX for {program.arch}, not {arch}"
    if allocations != _allocations(assignment):
        return None, "made for another buffer assignment"
    problem = _thunk_problem(program)
    if problem:
        return None, problem
    cubin = payload[at + 4 + size:]
    if cubin and (not program.cubin_arch or not cubin.startswith(b"\x7fELF")):
        return None, "its cubin is not an ELF image for a named architecture"
    program.cubin = cubin or None
    return program, ""


def _allocations(assignment: BufferAssignment) -> list:
    return [[a.size, a.kind] for a in assignment.allocations]


def _thunk_problem(program: GpuProgram) -> str:
    """'' when every launch names a kernel of the PTX with a sane grid and every slice
    lies inside its allocation; else what is wrong."""
    if sorted(program.kernels) != sorted(set(_ENTRY.findall(program.ptx))):
        return "its kernel list is not its PTX's"
    if not isinstance(program.thunks, list):
        return "its thunks are not a list"
    known = set(program.kernels)
    for thunk in kernels_of(program.thunks):
        launch = thunk.launch
        if thunk.kernel not in known or not all(
                isinstance(v, int) and v > 0 for v in (launch.grid, launch.block)):
            return f"a launch of {thunk.kernel!r} that its PTX does not back"
    sizes = [a.size for a in program.assignment.allocations]
    for s in slices_of(program.thunks):
        if not all(isinstance(v, int) and v >= 0 for v in (s.allocation, s.offset, s.size)) \
                or s.allocation >= len(sizes) or s.offset + s.size > sizes[s.allocation]:
            return f"a buffer slice {s} outside its allocation"
    return ""


def link_for_device(program: GpuProgram) -> bool:
    """Where a CUDA driver and a device of the program's architecture are here, link its
    PTX into the device's cubin (what cuModuleLoadData would make), so the cache keeps
    it; True when `program` gained a cubin. Never touches CUDA without a driver."""
    if program.cubin is not None or not driver.available():
        return False
    ctx = driver.context()
    if ctx.arch != program.arch:
        return False
    try:
        cubin = ctx.link(program.ptx, program.module.name)
    except (CompileError, ExecutionError) as e:  # the first run reports it again
        warnings.warn(f"xlapy: the driver did not link {program.module.name}'s PTX for "
                      f"{ctx.arch}: {e}", RuntimeWarning, stacklevel=3)
        return False
    program.cubin, program.cubin_arch = cubin, ctx.arch
    return True
