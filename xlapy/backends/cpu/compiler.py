"""From an optimised module to a CpuExecutable: buffers, IR, machine code, cache.

The on-disk cache stores the object code of a compilation under a key made of
the optimised module's fingerprint, the CPU options and the target, so a
second process compiling the same function skips LLVM entirely. The entry
also names the instructions that run through the interpreter fallback, the
only other product of code generation the executable needs.
"""

from __future__ import annotations

import json
import time

from xlapy.analysis import assign_buffers
from xlapy.backends.cpu.codegen import Codegen
from xlapy.backends.cpu.executable import CpuExecutable
from xlapy.backends.cpu.llvm_target import LoadedObject, compile_to_object, host_target
from xlapy.backends.cpu.options import CpuOptions
from xlapy.backends.cpu.runtime_library import ensure as ensure_runtime

_MAGIC = b"XLAPYCPU2\n"


def compile_module(module, start: float | None = None, options: CpuOptions | None = None):
    from xlapy.backends.cpu.disk_cache import cache_key, default_cache, module_fingerprint

    start = start if start is not None else time.perf_counter()
    options = options or CpuOptions.from_flags()
    assignment = assign_buffers(module)
    cache = default_cache()
    key = None
    if cache is not None:
        key = cache_key(module_fingerprint(module), options.key(), " ".join(host_target()))
        cached = _decode(cache.get(key), module)
        if cached is not None:
            obj, fallbacks, runtime, profiled = cached
            ensure_runtime(runtime)
            return CpuExecutable(module, assignment, LoadedObject(obj), fallbacks,
                                 compile_seconds=time.perf_counter() - start, from_cache=True,
                                 profiled=profiled)
    codegen = Codegen(module, assignment, options)
    llmod = codegen.emit()
    obj = compile_to_object(llmod, options.opt_level)
    if cache is not None:
        cache.put(key, _encode(obj, codegen.fallbacks, sorted(llmod.xlapy_runtime),
                               codegen.profiled))
    return CpuExecutable(module, assignment, LoadedObject(obj), codegen.fallbacks,
                         compile_seconds=time.perf_counter() - start, profiled=codegen.profiled)


def _encode(obj: bytes, fallbacks, runtime, profiled) -> bytes:
    header = json.dumps({"fallbacks": [[i.parent.name, i.name] for i in fallbacks],
                         "runtime": [list(r) for r in runtime],
                         "profiled": [i.name for i in profiled]}).encode()
    return _MAGIC + len(header).to_bytes(4, "little") + header + obj


def _decode(payload: bytes | None, module):
    """(object code, fallback instructions, runtime kernels, profiled entry
    instructions), or None when the entry does not fit."""
    if payload is None or not payload.startswith(_MAGIC):
        return None
    at = len(_MAGIC)
    size = int.from_bytes(payload[at:at + 4], "little")
    try:
        header = json.loads(payload[at + 4:at + 4 + size])
        fallbacks = [module.computation(c).instruction(name) for c, name in header["fallbacks"]]
        runtime = [tuple(r) for r in header["runtime"]]
        entry = module.entry_computation
        profiled = [entry.instruction(name) for name in header.get("profiled", [])]
    except (ValueError, KeyError, TypeError):
        return None
    return payload[at + 4 + size:], fallbacks, runtime, profiled
