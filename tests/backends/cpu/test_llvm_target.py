"""The LLVM target's code generation options: set for our emission only."""

from __future__ import annotations

import llvmlite.ir as ir

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
    with_lsr = llvm_target.emit_object(_optimised(), built_once=True)
    without = llvm_target.emit_object(_optimised())
    again = llvm_target.emit_object(_optimised(), built_once=True)
    assert with_lsr == again
    assert with_lsr != without



def test_slp_vectoriser_only_for_what_is_built_once():
    """Straight-line code four floats wide: the runtime library's O3 widens it, a
    kernel's pipeline (no SLP vectoriser: see llvm_target's docstring) leaves it scalar."""
    module = llvm_target.new_module("slp")
    ptr = ir.FloatType().as_pointer()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr, ptr, ptr]), "add4")
    for arg in fn.args:
        arg.add_attribute("noalias")
    b = ir.IRBuilder(fn.append_basic_block())
    x, y, out = fn.args
    for i in range(4):
        at = ir.Constant(ir.IntType(64), i)
        total = b.fadd(b.load(b.gep(x, [at])), b.load(b.gep(y, [at])))
        b.store(total, b.gep(out, [at]))
    b.ret_void()
    assert "<4 x float>" in str(llvm_target.optimise(module, built_once=True))
    assert "<4 x float>" not in str(llvm_target.optimise(module))


def _interleave_counts(hlo_text: str) -> list[int]:
    """The interleave count hinted on each loop of a module's emitted IR (after the
    HLO pipeline: the reduce fused with what computes its input)."""
    options = CompileOptions.from_flags()
    prepared = compiler.prepare(parse(hlo_text), options, "")
    text = str(compiler.generate(prepared, options).llmod)
    return [int(line.split("i32")[1].split("}")[0])
            for line in text.splitlines() if '"llvm.loop.interleave.count"' in line]


STREAMED_SUM = """
HloModule streamed_sum
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[4194304] parameter(0)
  y = f32[4194304] parameter(1)
  z = f32[] constant(0)
  p = f32[4194304] multiply(x, y)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
}
"""


def test_every_loop_is_hinted_four_vectors_and_a_streamed_cheap_sum_one(monkeypatch):
    """The interleave count is a hint on each loop, not LLVM's process-wide
    -force-vector-interleave (which overrides every hint): a sum over 32 MiB of
    products streams from memory with one vector per iteration, while the same sum
    of exponentials, bound by their computation, keeps four."""
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_cpu_parallelism=2")
    counts = _interleave_counts(STREAMED_SUM)
    assert 1 in counts and set(counts) <= {1, llvm_target.INTERLEAVE}
    assert set(_interleave_counts(SUM)) == {llvm_target.INTERLEAVE}
    exponentials = STREAMED_SUM.replace("multiply(x, y)", "exponential(x)")
    assert set(_interleave_counts(exponentials)) == {llvm_target.INTERLEAVE}
    monkeypatch.setattr(llvm_target.llvm, "set_option", None)   # never forced
    optimised = str(_optimised())
    assert "<16 x float>" in optimised or "<8 x float>" in optimised
