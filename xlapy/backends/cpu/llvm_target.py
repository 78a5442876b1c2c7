"""The LLVM target: the host machine, the optimisation pipeline, machine code.

Everything that turns an `llvmlite.ir.Module` into callable machine code goes
through here: verify, optimise (O3 with the loop vectoriser),
emit an object file, load it into an MCJIT engine. Objects are plain bytes,
so the on-disk cache and ahead-of-time compilation use the same path.

`built_once=True` asks for all of O3 (the runtime library: GEMM, thread
pool; built once per machine and cached). Kernels compiled at every jit skip
two phases that cost a noticeable share of a small module's compile and
changed no kernel's speed in A/B runs of the bench suite and 15 common
operations (each within 5%, either way): the SLP vectoriser (our loops are
widened by the loop vectoriser; ~1.5 ms of a 2^24 sum's 11 ms of optimisation)
and loop strength reduction in code generation (a quarter of it: that sum's
kernel emits in 8 ms instead of 15). LLVM's options are process-wide: they
are set under the lock for our run only.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools

import llvmlite.binding as llvm
import llvmlite.ir as ir

from xlapy.backends.cpu import builtins
from xlapy.backends.cpu.fork_safe import ForkSafeLock
from xlapy.backends.cpu.object_file import undefined_symbols
from xlapy.codegen.loops import LOOP_INTERLEAVE
from xlapy.codegen.math.common import NATIVE_LDEXP
from xlapy.errors import CompileError
from xlapy.passes.compile_profile import phase

_LOCK = ForkSafeLock()
"""LLVM's global state (pass registration, the JIT) is not thread-safe."""


INTERLEAVE = 4
"""Vectors per iteration of a vectorised loop, hinted on every loop the emitters
make (`codegen.loops.LOOP_INTERLEAVE`). LLVM leaves long loop bodies (a fused
chain of tanh, exp, erf) at one vector per iteration; four independent ones let
the out-of-order core overlap their dependency chains (1.8x on such chains, none
lost on short loops). A loop may ask for another count: a cheap reduction
streaming a large input runs one (`parallel_reduce`)."""


@functools.cache
def _initialise() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


@functools.cache
def host_target() -> tuple[str, str, str]:
    """(triple, cpu name, feature string) of this machine. Where it has AVX-512,
    LLVM's tuning preference for 256-bit vectors is turned off: the fused loops'
    math is compute-bound and runs up to twice as fast in 512-bit registers."""
    _initialise()
    features = llvm.get_host_cpu_features().flatten()
    if "+avx512f" in features.split(","):
        features += ",-prefer-256-bit"
    return llvm.get_process_triple(), llvm.get_host_cpu_name(), features


@functools.cache
def target_machine(triple: str | None = None, cpu: str | None = None,
                   features: str | None = None, opt: int = 3, jit: bool = True,
                   reloc: str = "default") -> llvm.TargetMachine:
    """A target machine (host by default); cached, they are costly to make."""
    _initialise()
    host_triple, host_cpu, host_features = host_target()
    triple = triple or host_triple
    if triple == host_triple:
        cpu = cpu if cpu is not None else host_cpu
        features = features if features is not None else host_features
    try:
        target = llvm.Target.from_triple(triple)
    except RuntimeError as e:
        raise CompileError(f"LLVM has no target for {triple!r}: {e}") from e
    return target.create_target_machine(cpu=cpu or "", features=features or "", opt=opt,
                                        jit=jit, reloc=reloc, codemodel="jitdefault"
                                        if jit else "default")


def aot_target_machine(triple: str, cpu: str = "", features: str = "") -> llvm.TargetMachine:
    """A target machine for ahead-of-time objects: position-independent code
    (executables link as PIE), any LLVM target this llvmlite carries."""
    try:
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()
    except RuntimeError as e:  # pragma: no cover - llvmlite without other targets
        raise CompileError(f"this llvmlite cannot compile for other machines: {e}") from e
    return target_machine(triple, cpu, features, opt=3, jit=False, reloc="pic")


def new_module(name: str, tm: llvm.TargetMachine | None = None,
               features: str | None = None) -> ir.Module:
    """An empty IR module for `tm`'s triple and data layout (the host's by default),
    marked with what its emitters may rely on: `features` are the target's (the
    host's when `tm` is not given)."""
    if tm is None:
        tm = target_machine()
        features = host_target()[2] if features is None else features
    module = ir.Module(name=name)
    module.triple = tm.triple
    module.data_layout = str(tm.target_data)
    flags = set((features or "").split(","))
    setattr(module, NATIVE_LDEXP, module.triple.startswith("x86_64")
            and {"+avx512f", "+avx512dq"} <= flags)
    setattr(module, LOOP_INTERLEAVE, INTERLEAVE)
    return module



def optimise(module: ir.Module, tm: llvm.TargetMachine | None = None,
             opt_level: int = 3, built_once: bool = False) -> llvm.ModuleRef:
    """Parse, verify and optimise `module`; the LLVM module, ready for codegen
    (`built_once`: see the module docstring)."""
    tm = tm or target_machine()
    text = str(module)
    with _LOCK:
        try:
            parsed = llvm.parse_assembly(text)
            parsed.verify()
        except RuntimeError as e:
            raise CompileError(f"the CPU backend emitted invalid LLVM IR for "
                               f"{module.name}: {e}") from e
        if opt_level > 0:
            pto = llvm.create_pipeline_tuning_options(speed_level=min(opt_level, 3))
            pto.loop_vectorization = True
            pto.slp_vectorization = built_once
            pto.loop_interleaving = True
            # no unroller: our kernels are simple loops the vectoriser already widens
            # and interleaves; unrolling big fused bodies multiplied compile time by ~5
            pto.loop_unrolling = False
            builder = llvm.create_pass_builder(tm, pto)
            # (interleaving: per loop, INTERLEAVE; never LLVM's process-wide
            # -force-vector-interleave, which would override every loop's hint)
            builder.getModulePassManager().run(parsed, builder)
    return parsed


def emit_object(parsed: llvm.ModuleRef, tm: llvm.TargetMachine | None = None,
                built_once: bool = False) -> bytes:
    tm = tm or target_machine()
    with _LOCK, _codegen_options(built_once):
        return tm.emit_object(parsed)


def emit_assembly(parsed: llvm.ModuleRef, tm: llvm.TargetMachine | None = None,
                  built_once: bool = False) -> str:
    tm = tm or target_machine()
    with _LOCK, _codegen_options(built_once):
        return tm.emit_assembly(parsed)


@contextlib.contextmanager
def _codegen_options(built_once: bool):
    """Code generation without loop strength reduction for kernels (module docstring)."""
    if built_once:
        yield
        return
    llvm.set_option("", "-disable-lsr")
    try:
        yield
    finally:
        llvm.set_option("", "-disable-lsr=false")


class LoadedObject:
    """An object file linked into this process; `address(name)` finds a symbol.

    The engine owns the machine code: keep this object alive as long as any
    function pointer taken from it may be called.
    """

    def __init__(self, object_code: bytes, check_symbols: bool = True):
        _initialise()
        if check_symbols:
            resolve_externals(object_code)
        triple, cpu, features = host_target()
        # the engine takes ownership of its target machine: never a shared one
        tm = llvm.Target.from_triple(triple).create_target_machine(
            cpu=cpu, features=features, opt=3, jit=True, codemodel="jitdefault")
        with _LOCK:
            try:
                self._engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
                self._engine.add_object_file(llvm.ObjectFileRef.from_data(object_code))
                self._engine.finalize_object()
            except RuntimeError as e:
                raise CompileError(f"cannot load compiled object: {e}") from e

    def address(self, name: str) -> int:
        address = self._engine.get_function_address(name)
        if not address:
            raise CompileError(f"compiled object has no symbol {name!r}")
        return address

    def global_address(self, name: str) -> int:
        address = self._engine.get_global_value_address(name)
        if not address:
            raise CompileError(f"compiled object has no global {name!r}")
        return address


def resolve_externals(object_code: bytes) -> None:
    """Make sure every symbol the object calls resolves in this process: the soft-
    float builtins are registered when it needs them; anything else unknown (a
    runtime kernel never loaded, a library function this process lacks) is a
    CompileError here instead of a call to address zero when the code runs."""
    try:
        names = undefined_symbols(object_code)
    except (ValueError, IndexError, UnicodeDecodeError) as e:
        raise CompileError(f"cannot load compiled object: {e}") from e
    if any(name in builtins.NAMES for name in names):
        builtins.ensure()
    missing = [name for name in names if not _resolvable(name)]
    if missing:
        raise CompileError(f"compiled code calls {', '.join(missing)}, which this process "
                           "does not provide")


def _resolvable(name: str) -> bool:
    """Registered with the JIT (runtime kernels, builtins) or in the process."""
    if llvm.address_of_symbol(name):
        return True
    try:
        getattr(_PROCESS, name)
    except AttributeError:
        return False
    return True


_PROCESS = ctypes.CDLL(None)


def compile_to_object(module: ir.Module, opt_level: int = 3, built_once: bool = False) -> bytes:
    """IR module -> optimised host object code (`built_once`: see the module docstring)."""
    tm = target_machine()
    with phase("LLVM optimisation"):
        optimised = optimise(module, tm, opt_level, built_once)
    with phase("object code emission"):
        return emit_object(optimised, tm, built_once)
