"""From an optimised module to a CpuExecutable: buffers, IR, machine code, cache.

The on-disk cache stores the object code of a compilation under a key made of
the optimised module's fingerprint, the CPU options and the target, so a
second process compiling the same function skips LLVM entirely. The entry
also names the instructions that run through the interpreter fallback, the
only other product of code generation the executable needs, and records the
target and xlapy version it was compiled for. A cached entry is used only if
all of it fits: its records match this process, its object looks like an
object for this machine (`disk_cache.object_problem`) and loads; otherwise it
is discarded with a warning and the module is compiled afresh, so a bad entry
costs a compilation, never a failed one or a wrong program.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from xlapy import version as xlapy_version
from xlapy.analysis import assign_buffers
from xlapy.analysis.buffer_assignment import BufferAssignment
from xlapy.backends.base import dump_buffer_assignment, optimized_copy
from xlapy.backends.cpu import lowering
from xlapy.backends.cpu.codegen import Codegen
from xlapy.backends.cpu.disk_cache import (
    cache_key,
    default_cache,
    module_fingerprint,
    object_problem,
)
from xlapy.backends.cpu.executable import CpuExecutable
from xlapy.backends.cpu.llvm_target import LoadedObject, compile_to_object, host_target
from xlapy.backends.cpu.options import CompileOptions
from xlapy.backends.cpu.runtime_library import FAST_GEMM_TYPES, share_loaded_openmp
from xlapy.backends.cpu.runtime_library import ensure as ensure_runtime
from xlapy.errors import CompileError
from xlapy.hlo.ir import HloModule
from xlapy.hlo.verifier import verify
from xlapy.passes.compile_profile import note_cache, phase
from xlapy.passes.dump import ModuleDumper

_MAGIC = b"XLAPYCPU4\n"


@dataclass
class Prepared:
    """A module ready for code generation: optimised, its buffers assigned."""

    module: HloModule
    assignment: BufferAssignment
    dumper: ModuleDumper | None = None
    dump_prefix: str = ""


def prepare(module: HloModule, options: CompileOptions, dump_prefix: str) -> Prepared:
    """The steps JIT and AOT share before code generation: verify, optimise a copy
    (dumped as the flags ask), assign buffers once (and dump the assignment)."""
    with phase("verify"):
        verify(module)
    with phase("HLO passes"):
        optimised, dumper = optimized_copy(module, dump_prefix=dump_prefix, flags=options.flags)
    return assigned(optimised, options, dumper, dump_prefix)


def assigned(module: HloModule, options: CompileOptions, dumper=None,
             dump_prefix: str = "") -> Prepared:
    """`module`, already optimised, with its buffers assigned (and dumped)."""
    with phase("buffer assignment"):
        assignment = assign_buffers(module, separate_temps=options.cpu.guard_pages)
    dump_buffer_assignment(dumper, assignment, dump_prefix)
    return Prepared(module, assignment, dumper, dump_prefix)


def generate(prepared: Prepared, options: CompileOptions, name: str | None = None) -> Codegen:
    """LLVM IR for the whole module (`codegen.llmod`)."""
    codegen = Codegen(prepared.module, prepared.assignment, options.cpu,
                      name=name or "xlapy_module")
    with phase("LLVM IR emission"):
        codegen.emit()
    return codegen


def compile_module(module: HloModule, start: float | None = None,
                   options: CompileOptions | None = None, prepared: Prepared | None = None):
    """A CpuExecutable of `module` (already optimised; `prepared` when the caller
    assigned its buffers), through the on-disk cache."""
    start = start if start is not None else time.perf_counter()
    options = options or CompileOptions.from_flags()
    share_loaded_openmp()
    prepared = prepared or assigned(module, options)
    module, assignment = prepared.module, prepared.assignment
    cache = default_cache(options.flags)
    key = None
    note_cache("off")
    if cache is not None:
        with phase("disk cache lookup"):
            key = cache_key(module_fingerprint(module), options.cpu.key(),
                            " ".join(host_target()))
            executable = _from_cache(cache, key, module, assignment, start, options)
        note_cache("miss" if executable is None else "hit")
        if executable is not None:
            return _announced(executable, prepared)
    codegen = generate(prepared, options)
    llmod = codegen.llmod
    obj = compile_to_object(llmod, options.cpu.opt_level)
    if cache is not None:
        with phase("disk cache write"):
            cache.put(key, _encode(obj, codegen.fallbacks, codegen.fallback_reasons,
                                   sorted(llmod.xlapy_runtime), codegen.profiled,
                                   codegen.collectives))
    with phase("loading the object"):
        loaded = LoadedObject(obj)
    executable = CpuExecutable(module, assignment, loaded, codegen.fallbacks,
                               compile_seconds=time.perf_counter() - start,
                               profiled=codegen.profiled, collectives=codegen.collectives,
                               fallback_reasons=codegen.fallback_reasons,
                               guard_pages=options.cpu.guard_pages)
    return _announced(executable, prepared)


def _announced(executable: CpuExecutable, prepared: Prepared) -> CpuExecutable:
    """`executable`, its evaluator fallbacks logged (once per process each) and dumped,
    whether it was compiled now or loaded from the cache."""
    for instruction, reason in zip(executable.fallbacks, executable.fallback_reasons):
        lowering.log_fallback(instruction.opcode, reason)
    if prepared.dumper is not None and executable.fallbacks:
        prepared.dumper.dump_text(f"{prepared.dump_prefix}fallbacks.txt",
                                  "".join(f"{line}\n" for line in executable.fallback_report()))
    return executable


def _from_cache(cache, key: str, module, assignment, start: float,
                options: CompileOptions) -> CpuExecutable | None:
    """The executable from the entry under `key`; None when there is none, or when it
    does not fit (then it is discarded, with a warning, for the caller to replace)."""
    decoded, problem = _decode(cache.get(key), module)
    if decoded is None:
        if problem:
            cache.discard(key, problem)
        return None
    obj, fallbacks, reasons, runtime, profiled, collectives = decoded
    ensure_runtime(runtime)  # what the object calls: a failure there is not the entry's
    try:
        return CpuExecutable(module, assignment, LoadedObject(obj), fallbacks,
                             compile_seconds=time.perf_counter() - start, from_cache=True,
                             profiled=profiled, fallback_reasons=reasons,
                             collectives=collectives,
                             guard_pages=options.cpu.guard_pages)
    except CompileError as e:
        cache.discard(key, f"its object does not load ({e})")
        return None


def _encode(obj: bytes, fallbacks, reasons, runtime, profiled, collectives) -> bytes:
    header = json.dumps({"fallbacks": [[i.parent.name, i.name, why]
                                       for i, why in zip(fallbacks, reasons)],
                         "collectives": [[i.parent.name, i.name] for i in collectives],
                         "runtime": [list(r) for r in runtime],
                         "profiled": [i.name for i in profiled],
                         "target": list(host_target()),
                         "xlapy": xlapy_version.__version__}).encode()
    return _MAGIC + len(header).to_bytes(4, "little") + header + obj


def _decode(payload: bytes | None, module):
    """((object code, fallback instructions, their reasons, runtime kernels, profiled
    entry instructions, collectives), '') for an entry that fits `module` and this
    process; (None, what does not fit), or (None, '') for no entry."""
    if payload is None:
        return None, ""
    if not payload.startswith(_MAGIC):
        return None, "not a compiled module of this format"
    at = len(_MAGIC)
    size = int.from_bytes(payload[at:at + 4], "little")
    try:
        header = json.loads(payload[at + 4:at + 4 + size])
        fallbacks = [module.computation(c).instruction(name) for c, name, _ in header["fallbacks"]]
        reasons = [str(why) for _, _, why in header["fallbacks"]]
        collectives = [module.computation(c).instruction(name)
                       for c, name in header["collectives"]]
        runtime = [_runtime_need(*r) for r in header["runtime"]]
        entry = module.entry_computation
        profiled = [entry.instruction(name) for name in header["profiled"]]
        target, version = tuple(header["target"]), header["xlapy"]
    except (ValueError, KeyError, TypeError) as e:
        return None, f"its record does not fit the module ({type(e).__name__}: {e})"
    differ = [name for name, a, b in zip(("triple", "CPU", "features"), target, host_target())
              if a != b]
    if differ or len(target) != 3:
        return None, f"compiled for another {' and '.join(differ) or 'target'} than this one"
    if version != xlapy_version.__version__:
        return None, f"written by xlapy {version}, this is {xlapy_version.__version__}"
    obj = payload[at + 4 + size:]
    problem = object_problem(obj, target[0])
    if problem:
        return None, problem
    return (obj, fallbacks, reasons, runtime, profiled, collectives), ""


def _runtime_need(kind: str, dtype: str, threads: int) -> tuple[str, str, int]:
    """One runtime kernel a cached object calls, as `runtime_library.ensure` takes it."""
    if (kind, dtype, threads) == ("pool", "", 0) or (
            kind == "gemm" and dtype in FAST_GEMM_TYPES and isinstance(threads, int)
            and threads > 0):
        return kind, dtype, threads
    raise ValueError(f"unknown runtime kernel {[kind, dtype, threads]}")
