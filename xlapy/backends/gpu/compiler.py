"""From an HLO module to a GpuExecutable: XLA:GPU's compile in four steps.

1. The target-independent pipeline, with GPU fusion: a `dot` stays a kernel of
   its own (cuBLAS computes it; its epilogue is fused into the next kernel),
   reductions become reduction fusions with their producers and, as on the
   CPU, their consumers — a row softmax is one fusion, one kernel.
2. Buffer assignment: parameters and outputs, and one device arena for every
   temporary of the executable.
3. Code generation (`emitter.py`): one LLVM module of kernels for NVPTX from
   the shared element generators and math library, and the thunks.
4. PTX from LLVM's NVPTX backend, for `--xla_gpu_target` (default: the
   device's own architecture when one is present, else sm_80).

None of this needs a GPU or CUDA: only running does. With `--xla_dump_to`,
the module's LLVM IR and PTX are dumped beside its HLO, under XLA's names.
Steps 3 and 4 go through the on-disk cache (`program_cache.py`), keyed by the
optimised module, the target and the fast-math flag; where a CUDA driver is
present the entry also keeps the cubin it linked from the PTX.
"""

from __future__ import annotations

import re
import time

from xlapy.analysis import assign_buffers
from xlapy.backends.base import dump_buffer_assignment, optimized_copy
from xlapy.backends.gpu import driver, program_cache
from xlapy.backends.gpu.emitter import GpuEmitter
from xlapy.backends.gpu.executable import GpuExecutable
from xlapy.backends.gpu.program import GpuProgram
from xlapy.backends.gpu.target import Nvptx
from xlapy.codegen import nvptx
from xlapy.errors import CompileError
from xlapy.flags import DebugOptions, debug_options, register_flag
from xlapy.hlo.ir import HloModule
from xlapy.hlo.verifier import verify
from xlapy.passes.default_pipeline import default_pipeline
from xlapy.passes.fusion import InstructionFusion
from xlapy.passes.pipeline import Pipeline

register_flag("xla_gpu_target", "string", "",
              "xlapy: the GPU architecture to compile PTX for (sm_80, sm_90, ...); default "
              "the device's own, else sm_80")
register_flag("xla_gpu_enable_fast_math", "bool", False,
              "let LLVM reassociate and contract GPU arithmetic (off: strict IEEE)")
_EXTERN = re.compile(r"^\.extern\s+\.func\s+(?:\([^)]*\)\s*)?([\w$]+)", re.M)
_ARCHES = ("sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")


def gpu_pipeline() -> Pipeline:
    """The default pipeline with XLA:GPU's fusion choice: dots are not fused with
    their epilogue (the GEMM is cuBLAS's; the epilogue is the next kernel)."""
    pipeline = default_pipeline()
    pipeline.passes = [InstructionFusion(fuse_dot_epilogues=False)
                       if isinstance(p, InstructionFusion) else p for p in pipeline.passes]
    return pipeline


def target_arch(flags: DebugOptions | None = None) -> str:
    flags = flags if flags is not None else debug_options()
    arch = flags.xla_gpu_target
    if not arch:
        arch = driver.context().arch if driver.available() else nvptx.DEFAULT_ARCH
    if arch not in _ARCHES:
        raise CompileError(f"--xla_gpu_target={arch}: not a GPU architecture this backend "
                           f"knows ({', '.join(_ARCHES)})")
    return arch


def compile_program(module: HloModule, flags: DebugOptions | None = None) -> GpuProgram:
    """Optimise a copy of `module` (always: fusion is what the GPU compiles), assign
    its buffers and generate its PTX, or load what was generated from the cache."""
    flags = flags if flags is not None else debug_options()
    arch = target_arch(flags)
    fast_math = flags.xla_gpu_enable_fast_math
    verify(module)
    optimised, dumper = optimized_copy(module, dump_prefix="gpu_", flags=flags,
                                       pipeline=gpu_pipeline())
    assignment = assign_buffers(optimised)
    dump_buffer_assignment(dumper, assignment, "gpu_")
    cache = program_cache.gpu_cache(flags)
    key = program_cache.program_key(optimised, arch, fast_math) if cache is not None else ""
    program = _from_cache(cache, key, optimised, assignment, arch)
    fresh = program is None
    if fresh:
        program = generate(optimised, assignment, arch, fast_math)
    if program_cache.link_for_device(program) or fresh:
        if cache is not None:
            cache.put(key, program_cache.encode(program))
    if dumper is not None:
        dumper.dump_text("ir-no-opt.ll", program.llvm_ir)
        dumper.dump_text("ptx", program.ptx)
        dumper.dump_text("gpu_thunks.txt", _thunk_listing(program.thunks))
    return program


def generate(module: HloModule, assignment, arch: str, fast_math: bool) -> GpuProgram:
    """Code generation proper: kernels and thunks from the emitter, PTX from LLVM."""
    emitter = GpuEmitter(module, assignment, Nvptx(), fast_math=fast_math, name=module.name)
    thunks = emitter.emit()
    ptx = nvptx.emit_ptx(emitter.llmod, arch)
    _check_no_calls_out(ptx, module.name)
    return GpuProgram(module, assignment, thunks, ptx, arch, str(emitter.llmod),
                      list(emitter.kernel_names))


def _from_cache(cache, key: str, module, assignment, arch: str) -> GpuProgram | None:
    """The program stored under `key`, or None (none, or one that does not fit: then
    discarded, with a warning, for the caller to replace)."""
    payload = cache.get(key) if cache is not None else None
    if payload is None:
        return None
    program, problem = program_cache.decode(payload, module, assignment, arch)
    if program is None:
        cache.discard(key, problem)
    return program


def compile_module(module: HloModule, flags: DebugOptions | None = None) -> GpuExecutable:
    """A GpuExecutable of `module` (compiled here; loaded on the device at its first run)."""
    start = time.perf_counter()
    program = compile_program(module, flags)
    return GpuExecutable(program, compile_seconds=time.perf_counter() - start)


def _check_no_calls_out(ptx: str, name: str) -> None:
    """A kernel may call nothing outside its module: a GPU has no C library. (The
    complex functions of `elemental_complex` call the host's libm/libc.)"""
    missing = sorted(set(_EXTERN.findall(ptx)))
    if missing:
        raise CompileError(f"{name}: the GPU backend cannot compile a call to "
                           f"{', '.join(missing)}: the emitter calls the host's C library "
                           "there (complex transcendental functions), which a GPU does not "
                           "have")


def _thunk_listing(thunks: list, indent: str = "") -> str:
    """One line per thunk, control flow indented: what runs, in order."""
    lines = []
    for thunk in thunks:
        kind = type(thunk).__name__
        if hasattr(thunk, "kernel"):
            lines.append(f"{indent}{kind} {thunk.kernel} grid={thunk.launch.grid} "
                         f"block={thunk.launch.block} ({thunk.instruction})")
        elif kind == "GemmThunk":
            lines.append(f"{indent}{kind} m={thunk.m} n={thunk.n} k={thunk.k} "
                         f"batch={thunk.batch} {thunk.dtype} ({thunk.instruction})")
        elif kind == "WhileThunk":
            lines.append(f"{indent}{kind} ({thunk.instruction}) condition:")
            lines.append(_thunk_listing(thunk.condition, indent + "  "))
            lines.append(f"{indent}  body:")
            lines.append(_thunk_listing(thunk.body, indent + "  "))
        elif kind == "ConditionalThunk":
            for number, branch in enumerate(thunk.branches):
                lines.append(f"{indent}{kind} ({thunk.instruction}) branch {number}:")
                lines.append(_thunk_listing(branch, indent + "  "))
        else:
            lines.append(f"{indent}{kind} {len(thunk.moves)} move(s)")
    return "\n".join(line for line in lines if line)
