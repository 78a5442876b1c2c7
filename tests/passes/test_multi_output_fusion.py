"""MultiOutputFusion after InstructionFusion: sibling and producer-consumer merges
into fusions returning tuples, with the interpreter's results bit-identical and
the verifier passing."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.passes.test_fusion import (
    SOFTMAX,
    entry_opcodes,
    fused_opcodes,
    fusions,
    module,
    random_program,
    reasons,
    run_passes,
)
from xlapy.hlo import FusionKind, Opcode
from xlapy.passes.fusion import InstructionFusion
from xlapy.passes.fusion_utils import fused_computation
from xlapy.passes.multi_output_fusion import MultiOutputFusion


def both(text: str, **options):
    fusion, mof = InstructionFusion(**options), MultiOutputFusion()
    return run_passes(text, fusion, mof), mof


def test_sibling_reductions_read_their_input_once():
    m, mof = both(module("""\
  x = f32[4,8] parameter(0)
  y = f32[4,8] parameter(1)
  a = f32[4,8] add(x, y)
  zero = f32[] constant(0)
  s = f32[4] reduce(a, zero), dimensions={1}, to_apply=add_f32
  e = f32[4,8] exponential(x)
  ninf = f32[] constant(-inf)
  mx = f32[4] reduce(e, ninf), dimensions={1}, to_apply=max_f32
  ROOT t = (f32[4], f32[4]) tuple(s, mx)"""))
    text = m.to_text()
    print(text)
    [fusion] = fusions(m)
    assert fusion.attrs["kind"] is FusionKind.INPUT
    assert fused_computation(fusion).root_instruction.opcode is Opcode.TUPLE
    assert fused_opcodes(fusion).count("reduce") == 2
    assert entry_opcodes(m) == ["parameter", "parameter", "fusion", "get-tuple-element",
                                "get-tuple-element", "tuple"]
    assert "ROOT %tuple = (f32[4]{0}, f32[4]{0}) tuple(" in text
    assert f"get-tuple-element((f32[4]{{0}}, f32[4]{{0}}) %{fusion.name}), index=1" in text
    assert any(r.reason.endswith("(sibling multi-output fusion, kInput)") for r in mof.decisions)


def test_moments_share_one_kernel():
    m, _ = both(module("""\
  x = f32[16,32] parameter(0)
  zero = f32[] constant(0)
  sx = f32[16] reduce(x, zero), dimensions={1}, to_apply=add_f32
  xx = f32[16,32] multiply(x, x)
  sxx = f32[16] reduce(xx, zero), dimensions={1}, to_apply=add_f32
  ROOT t = (f32[16], f32[16]) tuple(sx, sxx)"""))
    [fusion] = fusions(m)
    assert fused_opcodes(fusion).count("reduce") == 2
    assert fusion.operands == [m.entry_computation.parameter(0)]


def test_expensive_producer_joins_its_reduction_as_an_extra_output():
    m, mof = both(module("""\
  x = f32[4,8] parameter(0)
  e = f32[4,8] exponential(x)
  zero = f32[] constant(0)
  s = f32[4] reduce(e, zero), dimensions={1}, to_apply=add_f32
  ROOT t = (f32[4,8], f32[4]) tuple(e, s)"""))
    print(m.to_text())
    [fusion] = fusions(m)
    assert fusion.attrs["kind"] is FusionKind.INPUT
    assert sorted(fused_opcodes(fusion)) == ["constant", "exponential", "reduce", "tuple"]
    assert reasons(mof, "e", "s") == ["fused: e into s, which also returns it (multi-output, "
                                      "kInput)"]


def test_softmax_without_diamonds_is_two_fusions_and_a_reduce():
    m, mof = both(SOFTMAX, fuse_reduction_diamonds=False)
    print(m.to_text())
    assert len(fusions(m)) == 2
    assert entry_opcodes(m).count("reduce") == 1
    kinds = sorted(f.attrs["kind"].value for f in fusions(m))
    assert kinds == ["kInput", "kLoop"]
    cycle = [r.reason for r in mof.decisions if "cycle" in r.reason]
    assert cycle and all(r.startswith("not fused:") for r in cycle)


def test_softmax_with_both_passes_is_at_most_two_fusions():
    m, _ = both(SOFTMAX)
    assert len(fusions(m)) <= 2
    assert entry_opcodes(m) == ["parameter", "fusion"]


def test_dot_read_by_two_reductions_is_read_once():
    m, _ = both(module("""\
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  r1 = f32[8] reduce(d, zero), dimensions={1}, to_apply=add_f32
  ninf = f32[] constant(-inf)
  r2 = f32[8] reduce(d, ninf), dimensions={1}, to_apply=max_f32
  ROOT t = (f32[8], f32[8]) tuple(r1, r2)"""))
    assert entry_opcodes(m).count("dot") == 1
    [fusion] = fusions(m)
    assert fused_opcodes(fusion).count("reduce") == 2


def test_connected_siblings_are_not_merged():
    m, mof = both(module("""\
  x = f32[4,8] parameter(0)
  zero = f32[] constant(0)
  s = f32[4] reduce(x, zero), dimensions={1}, to_apply=add_f32
  b = f32[4,8] broadcast(s), dimensions={0}
  ROOT t = f32[4,8] subtract(x, b)"""), fuse_reduction_diamonds=False)
    assert entry_opcodes(m) == ["parameter", "constant", "reduce", "fusion"]
    assert any("are connected; merging them would create a cycle" in r.reason
               for r in mof.decisions)


def test_different_iteration_shapes_are_not_merged():
    m, mof = both(module("""\
  x = f32[4,8] parameter(0)
  zero = f32[] constant(0)
  rows = f32[4] reduce(x, zero), dimensions={1}, to_apply=add_f32
  cols = f32[8] reduce(x, zero), dimensions={0}, to_apply=add_f32
  ROOT t = (f32[4], f32[8]) tuple(rows, cols)"""))
    assert entry_opcodes(m).count("reduce") == 2
    assert reasons(mof, "cols", "rows") == [
        "not fused: rows and cols iterate over different shapes"]


def test_scalars_and_output_fusions_are_not_merged():
    m, _ = both(module("""\
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  k = f32[] parameter(2)
  d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bk = f32[8,4] broadcast(k), dimensions={}
  a = f32[8,4] multiply(d, bk)
  bk2 = f32[8,16] broadcast(k), dimensions={}
  b = f32[8,16] multiply(x, bk2)
  ROOT t = (f32[8,4], f32[8,16]) tuple(a, b)"""))
    kinds = sorted(f.attrs["kind"].value for f in fusions(m))
    assert kinds == ["kLoop", "kOutput"]


def test_a_large_reduction_to_one_value_keeps_its_own_kernel():
    """A loss and its gradient over f32[256,256]: the sum is split between threads
    only alone, so the two stay two kernels; over f32[16,32] they merge."""
    program = """\
  x = f32[{n},{n}] parameter(0)
  y = f32[{n},{n}] parameter(1)
  d = f32[{n},{n}] subtract(x, y)
  dd = f32[{n},{n}] multiply(d, d)
  zero = f32[] constant(0)
  loss = f32[] reduce(dd, zero), dimensions={{0,1}}, to_apply=add_f32
  two = f32[] constant(2)
  b = f32[{n},{n}] broadcast(two), dimensions={{}}
  grad = f32[{n},{n}] multiply(d, b)
  ROOT t = (f32[], f32[{n},{n}]) tuple(loss, grad)"""
    m, mof = both(module(program.format(n=256)))
    assert len(fusions(m)) == 2
    assert any("reduces all 65536 elements: it runs alone, split between threads"
               in r.reason for r in mof.decisions)
    m, _ = both(module(program.format(n=16)))
    assert len(fusions(m)) == 1


@given(seed=st.integers(0, 2**31 - 1))
def test_random_programs_keep_their_results(seed):
    text = random_program(seed)
    run_passes(text, InstructionFusion(), MultiOutputFusion(), seed=seed)
    run_passes(text, InstructionFusion(fuse_reduction_diamonds=False), MultiOutputFusion(),
               seed=seed)
