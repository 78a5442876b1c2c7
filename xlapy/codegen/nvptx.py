"""The NVPTX target: LLVM modules for NVIDIA GPUs, as PTX text.

Emitting PTX needs only LLVM (llvmlite's NVPTX backend), no GPU and no CUDA
driver: a kernel is an LLVM function marked in `nvvm.annotations`, its
buffers are pointers in the global address space (1), and each thread finds
its element from the special registers (`llvm.nvvm.read.ptx.sreg.*`). The
shared emitters (`codegen/elemental.py`, `codegen/math/`) write plain LLVM
IR, so the same code computes an element here as on the CPU. `ptxas`, when
installed, checks the PTX for a given architecture.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import llvmlite.binding as llvm
import llvmlite.ir as ir

from xlapy.errors import CompileError

TRIPLE = "nvptx64-nvidia-cuda"
DEFAULT_ARCH = "sm_80"
GLOBAL = 1
"""The address space of device memory that kernels read and write."""

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


def new_module(name: str) -> ir.Module:
    module = ir.Module(name)
    module.triple = TRIPLE
    return module


def kernel(module: ir.Module, name: str, params: list[ir.Type]) -> ir.Function:
    """A `__global__` function of `params` (launched from the host)."""
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), params), name)
    note = module.add_metadata([fn, ir.MetaDataString(module, "kernel"), ir.Constant(_I32, 1)])
    module.add_named_metadata("nvvm.annotations", note)
    return fn


def special_register(b: ir.IRBuilder, name: str) -> ir.Value:
    """`tid.x`, `ntid.x`, `ctaid.x`, `nctaid.x`, ... as an i32."""
    symbol = f"llvm.nvvm.read.ptx.sreg.{name}"
    module = b.module
    fn = module.globals.get(symbol) or ir.Function(module, ir.FunctionType(_I32, []), symbol)
    return b.call(fn, [])


def global_thread_index(b: ir.IRBuilder) -> ir.Value:
    """blockIdx.x * blockDim.x + threadIdx.x, as an i64."""
    block, width, thread = (special_register(b, r) for r in ("ctaid.x", "ntid.x", "tid.x"))
    return b.add(b.mul(b.zext(block, _I64), b.zext(width, _I64)), b.zext(thread, _I64))


def target_machine(arch: str = DEFAULT_ARCH, opt_level: int = 3) -> llvm.TargetMachine:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    try:
        target = llvm.Target.from_triple(TRIPLE)
    except RuntimeError as e:
        raise CompileError(f"this LLVM has no NVPTX target: {e}") from e
    return target.create_target_machine(cpu=arch, opt=opt_level)


def emit_ptx(module: ir.Module, arch: str = DEFAULT_ARCH, opt_level: int = 3) -> str:
    """PTX text of `module` for `arch`, after LLVM's optimisation pipeline."""
    tm = target_machine(arch, opt_level)
    try:
        parsed = llvm.parse_assembly(str(module))
        parsed.verify()
    except RuntimeError as e:
        raise CompileError(f"the GPU code generator emitted invalid LLVM IR: {e}") from e
    parsed.triple = TRIPLE
    parsed.data_layout = str(tm.target_data)
    pto = llvm.create_pipeline_tuning_options(speed_level=min(opt_level, 3))
    builder = llvm.create_pass_builder(tm, pto)
    builder.getModulePassManager().run(parsed, builder)
    return tm.emit_assembly(parsed)


def ptxas() -> str | None:
    """The `ptxas` on PATH, or None."""
    return shutil.which("ptxas")


def check_with_ptxas(ptx: str, arch: str = DEFAULT_ARCH) -> None:
    """Assemble `ptx` for `arch` with ptxas; CompileError with its message if refused."""
    tool = ptxas()
    if tool is None:
        raise CompileError("ptxas is not installed (it comes with the CUDA toolkit)")
    with tempfile.TemporaryDirectory() as directory:
        source = Path(directory) / "module.ptx"
        source.write_text(ptx)
        run = subprocess.run([tool, f"-arch={arch}", str(source), "-o",
                              str(Path(directory) / "module.cubin")],
                             capture_output=True, text=True, timeout=120)
    if run.returncode != 0:
        raise CompileError(f"ptxas refused the PTX for {arch}: {run.stderr.strip()}")
