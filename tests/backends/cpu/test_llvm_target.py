"""The LLVM target's code generation options: set for our emission only."""

from __future__ import annotations

from xlapy.backends.cpu import compiler, llvm_target
from xlapy.backends.cpu.options import CompileOptions
from xlapy.hlo import parse

SUM = """
HloModule strided_sum
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[4096,3] parameter(0)
  y = f32[4096,3] parameter(1)
  p = f32[4096,3] multiply(x, y)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(p, z), dimensions={0}, to_apply=add
}
"""


def _optimised():
    options = CompileOptions.from_flags()
    prepared = compiler.assigned(parse(SUM), options)
    return llvm_target.optimise(compiler.generate(prepared, options).llmod)


def test_strength_reduction_is_off_for_kernels_and_restored_after():
    """Kernels are emitted without loop strength reduction (a quarter of code
    generation's time); the option is LLVM's, process-wide, so it must be back on
    for the next emission that asks for it (the runtime GEMM, another llvmlite user)."""
    with_lsr = llvm_target.emit_object(_optimised(), strength_reduction=True)
    without = llvm_target.emit_object(_optimised())
    again = llvm_target.emit_object(_optimised(), strength_reduction=True)
    assert with_lsr == again
    assert with_lsr != without

