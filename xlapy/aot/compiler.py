"""From an HLO module (or a Python function and example shapes) to an object
file and a C header: `compile_aot`.

The module goes through the same pipeline and code generator as `jit` on
the CPU backend, with three differences: the target is named (x86-64 or
AArch64, generic unless a CPU or features are given), the runtime kernels
(GEMM) are emitted into the object instead of shared from the process, and
it runs on one thread (as tfcompile's objects do), so the object needs
nothing but libc and libm. Every symbol but `NAME_run` is internal (and the
soft-float builtins weak), so several objects link into one program.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import llvmlite.ir as ir

from xlapy.aot.entry import emit_run_function
from xlapy.aot.header import render_header
from xlapy.aot.signature import Signature, signature_of
from xlapy.backends.cpu import builtins
from xlapy.backends.cpu.compiler import generate, prepare
from xlapy.backends.cpu.llvm_target import aot_target_machine, emit_object, optimise
from xlapy.backends.cpu.options import CompileOptions
from xlapy.errors import CompileError
from xlapy.hlo.ir import HloModule

TARGETS = {
    "x86_64-linux-gnu": ("x86_64-unknown-linux-gnu", "x86-64", ""),
    "aarch64-linux-gnu": ("aarch64-unknown-linux-gnu", "generic", "+neon"),
}
"""--target names -> (LLVM triple, default CPU, default features)."""


@dataclass(frozen=True)
class AotResult:
    signature: Signature
    object_code: bytes
    header: str
    target: str
    optimized: HloModule

    def write(self, directory: str | Path) -> tuple[Path, Path]:
        """Write NAME.o and NAME.h into `directory`; returns their paths."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        obj = directory / f"{self.signature.name}.o"
        header = directory / f"{self.signature.name}.h"
        obj.write_bytes(self.object_code)
        header.write_text(self.header)
        return obj, header


def compile_aot(module: HloModule, name: str, target: str = "x86_64-linux-gnu",
                cpu: str | None = None, features: str | None = None,
                source: str = "") -> AotResult:
    """Compile `module` ahead of time for `target`; `source` is described in the header."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise CompileError(f"--name {name!r} is not a C identifier")
    if target not in TARGETS:
        raise CompileError(f"unknown target {target!r}; known: {', '.join(TARGETS)}")
    triple, default_cpu, default_features = TARGETS[target]
    cpu = default_cpu if cpu is None else cpu
    features = default_features if features is None else features
    options = CompileOptions.from_flags().ahead_of_time((triple, cpu, features))
    prepared = prepare(module, options, dump_prefix="aot_")
    optimized = prepared.module
    signature_of(optimized, name, 0)          # refuse what C cannot hold, before codegen
    try:
        codegen = generate(prepared, options, name)
    except CompileError as e:
        raise CompileError(f"cannot compile {module.name} ahead of time: {e}") from e
    llmod = codegen.llmod
    temp_bytes = emit_run_function(codegen, name)
    _internalise(llmod, keep=f"{name}_run")
    builtins.add_to(llmod, linkage="weak")   # the soft-float calls LLVM may emit
    tm = aot_target_machine(triple, cpu, features)
    object_code = emit_object(optimise(llmod, tm, options.cpu.opt_level), tm)
    signature = signature_of(optimized, name, temp_bytes)
    header = render_header(signature, target=target, cpu=cpu, features=features,
                           source=source or module.name)
    return AotResult(signature, object_code, header, target, optimized)


def _internalise(module: ir.Module, keep: str) -> None:
    """Every definition but `keep` gets internal linkage: two objects never clash."""
    for value in module.globals.values():
        if value.name == keep:
            continue
        if isinstance(value, ir.Function) and value.is_declaration:
            continue
        if isinstance(value, ir.GlobalVariable) and value.initializer is None:
            continue
        value.linkage = "internal"
