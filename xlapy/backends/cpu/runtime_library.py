"""Kernels compiled once per process and shared by every JIT module.

The packed GEMM is thousands of lines of IR; emitting and optimising it into
every module that has a dot would dominate compile time. In JIT mode a
module instead declares `xlapy_rt_gemm_<dtype>_t<threads>` and the symbol is
resolved when its object is loaded: the runtime library is built (or read
from the on-disk cache) the first time it is needed, and its functions are
registered with LLVM's JIT symbol table. Ahead-of-time objects cannot rely
on a process, so they get the kernels emitted inline (`inline=True`).
"""

from __future__ import annotations

import ctypes
import os
import sys

import llvmlite.binding as llvm
import llvmlite.ir as ir
import numpy as np

from xlapy.backends.cpu import openmp_pool, parallel
from xlapy.backends.cpu import options as _options  # noqa: F401  declares xlapy_cpu_openmp_threads
from xlapy.backends.cpu.disk_cache import cache_key, object_problem, runtime_cache
from xlapy.backends.cpu.fork_safe import ForkSafeLock
from xlapy.backends.cpu.kernels import gemm
from xlapy.backends.cpu.llvm_target import LoadedObject, compile_to_object, host_target, new_module
from xlapy.backends.cpu.thread_pool import pool_parallel_for
from xlapy.codegen import ir_types as T
from xlapy.codegen.ir_types import storage_type
from xlapy.flags import debug_options
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.passes.compile_profile import phase

_LOCK = ForkSafeLock(reentrant=True)   # building the GEMM builds the pool
_LOADED: dict[str, object] = {}   # symbol -> LoadedObject keeping its code alive
GEMM_ARGS = [T.I64, T.I64, T.I64, None, T.I64, T.I64, None, T.I64, T.I64, None, T.I64]
FAST_GEMM_TYPES = ("float32", "float64")
POOL_SYMBOL = "xlapy_rt_parallel_for"


def gemm_symbol(dtype, threads: int) -> str:
    return f"xlapy_rt_gemm_{np.dtype(dtype).name}_t{threads}"


SERIAL = "_serial"
"""The suffix of the single-threaded GEMM each runtime GEMM object also exports."""


def gemm_declaration(module: ir.Module, dtype, threads: int,
                     serial: bool = False) -> ir.Function:
    """The runtime GEMM for `dtype`, declared in `module` (resolved at load time);
    `serial`: the same object's single-threaded kernel, for callers that are
    already one of several threads (each entry of a batched dot)."""
    name = gemm_symbol(dtype, threads) + (SERIAL if serial else "")
    ensure_gemm(dtype, threads)
    needs = getattr(module, "xlapy_runtime", None)
    if needs is not None:
        needs.add(("gemm", str(dtype), threads))
    if name in module.globals:
        return module.globals[name]
    ptr = storage_type(PrimitiveType.from_numpy(dtype)).as_pointer()
    args = [ptr if a is None else a for a in GEMM_ARGS]
    return ir.Function(module, ir.FunctionType(ir.VoidType(), args), name)


def ensure(needs) -> None:
    """Load what a cached object calls: [("gemm", dtype, threads), ("pool", "", 0)]."""
    for kind, dtype, threads in needs:
        if kind == "pool":
            ensure_pool()
        elif kind == "gemm":
            ensure_gemm(dtype, int(threads))
        else:
            raise ValueError(f"unknown runtime kernel {kind!r}")


def pool_declaration(module: ir.Module) -> ir.Function:
    """The process's thread-pool `parallel_for`, declared in `module`."""
    ensure_pool()
    module.xlapy_runtime.add(("pool", "", 0))
    if POOL_SYMBOL in module.globals:
        return module.globals[POOL_SYMBOL]
    task = parallel.TASK_TYPE.as_pointer()
    return ir.Function(module, ir.FunctionType(ir.VoidType(), [task, T.I8P, T.I64, T.I64]),
                       POOL_SYMBOL)


def ensure_pool() -> None:
    """Build, load and register the shared thread pool once."""
    with _LOCK:
        if POOL_SYMBOL in _LOADED:
            return
        with phase(f"runtime library {POOL_SYMBOL}"):
            loaded = LoadedObject(cached_object(POOL_SYMBOL, _build_pool))
        llvm.add_symbol(POOL_SYMBOL, loaded.address(POOL_SYMBOL))
        _LOADED[POOL_SYMBOL] = loaded


class _Sharing:
    modules_seen = -1   # len(sys.modules) at the last look for a libgomp
    shared = False


def share_loaded_openmp(for_torch: bool = False) -> bool:
    """Share the OpenMP team of a libgomp this process has loaded (PyTorch imports
    one) as --xlapy_cpu_openmp_threads says: for every compile with 'always',
    for torch.compile's graphs (`for_torch`) with 'torch'. Whether it is shared.
    The process's libraries are looked at again only when Python has imported
    something since (a new module may have loaded one).

    Not for every compile by default: a loop on an OpenMP team ends at a barrier
    that waits for every team thread, and where another process holds a core a
    descheduled thread holds up the loop for a scheduler tick (a 1.4 ms GEMM
    took 16 ms), while xlapy's pool lets the caller run a late worker's chunk."""
    setting = debug_options().xlapy_cpu_openmp_threads
    if _Sharing.shared or setting == "never" or (setting == "torch" and not for_torch):
        return _Sharing.shared
    if len(sys.modules) == _Sharing.modules_seen:
        return False
    _Sharing.modules_seen = len(sys.modules)
    library = loaded_library("libgomp")
    _Sharing.shared = library is not None and share_openmp_threads(library)
    return _Sharing.shared


def share_openmp_threads(library: str | None) -> bool:
    """Run the JIT's parallel loops on the OpenMP team of `library` (a libgomp this
    process has loaded, such as PyTorch's), or on xlapy's own pool again with None.
    Returns whether the team is now shared. See openmp_pool for why."""
    address = 0
    if library is not None:
        try:   # only a library already loaded: a second libgomp would be a second team
            handle = ctypes.CDLL(library, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
            address = ctypes.cast(handle.GOMP_parallel, ctypes.c_void_p).value or 0
        except (OSError, AttributeError):
            address = 0
    set_openmp_entry(address)
    return address != 0


def set_openmp_entry(address: int) -> None:
    """Point the shared pool at a `GOMP_parallel` (its address; 0: none) for this process."""
    pid, entry = _openmp_globals()
    pid.value = os.getpid()
    entry.value = address


def openmp_entry() -> int:
    """The `GOMP_parallel` the shared pool runs loops on (0: its own threads)."""
    return _openmp_globals()[1].value or 0


def _openmp_globals() -> tuple[ctypes.c_int32, ctypes.c_void_p]:
    ensure_pool()
    loaded = _LOADED[POOL_SYMBOL]
    return (ctypes.c_int32.from_address(loaded.global_address(openmp_pool.PID)),
            ctypes.c_void_p.from_address(loaded.global_address(openmp_pool.ENTRY)))


def loaded_library(prefix: str) -> str | None:
    """The path of a shared library this process has mapped whose file name starts
    with `prefix` (Linux's /proc/self/maps; None elsewhere or when none is)."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split(maxsplit=5)[-1].strip()
                if os.path.basename(path).startswith(prefix):
                    return path
    except OSError:
        pass
    return None


def ensure_gemm(dtype, threads: int) -> None:
    """Build, load and register the runtime GEMM for (dtype, threads) once."""
    name = gemm_symbol(dtype, threads)
    with _LOCK:
        if name in _LOADED:
            return
        with phase(f"runtime library {name}"):
            _build_gemm(name, dtype, threads)


def _build_pool() -> bytes:
    module = new_module(POOL_SYMBOL)
    pool_parallel_for(module, POOL_SYMBOL, parallel.TASK_TYPE,
                      parallel.spawning_parallel_for(module), linkage="external", openmp=True)
    return compile_to_object(module, built_once=True)


def _build_gemm(name: str, dtype, threads: int) -> None:
    def build() -> bytes:
        module = new_module(name)
        module.xlapy_runtime = set()   # its parallel bands run on the shared pool
        for symbol, inner in ((name, gemm.gemm_function(module, dtype, threads)),
                              (name + SERIAL, gemm.gemm_function(module, dtype, 1))):
            wrapper = ir.Function(module, inner.function_type, symbol)
            b = ir.IRBuilder(wrapper.append_basic_block("entry"))
            b.call(inner, list(wrapper.args))
            b.ret_void()
        return compile_to_object(module, built_once=True)

    ensure_pool()   # the GEMM's parallel bands call it (building the IR loads it too)
    loaded = LoadedObject(cached_object(name, build))
    for symbol in (name, name + SERIAL):
        llvm.add_symbol(symbol, loaded.address(symbol))
    _LOADED[name] = loaded


def cached_object(name: str, build) -> bytes:
    """The object code of runtime module `name`, from the runtime cache or `build()`
    (which emits the IR and compiles it: a hit skips both). Its caller loads it as
    machine code at once, so a cached object that does not look like one for this
    machine (`object_problem`) is discarded and rebuilt."""
    cache = runtime_cache()
    if cache is None:
        return build()
    target = host_target()
    key = cache_key("runtime:" + name, "", " ".join(target))
    obj = cache.get(key)
    if obj is not None:
        problem = object_problem(obj, target[0])
        if not problem:
            return obj
        cache.discard(key, problem)
    obj = build()
    cache.put(key, obj)
    return obj
