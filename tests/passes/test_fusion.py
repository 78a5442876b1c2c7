"""InstructionFusion: HLO text in, fused HLO text (or structure) out, with the
interpreter's results bit-identical before and after and the verifier passing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xlapy
from xlapy.fuzz.f32_programs import module, random_program  # noqa: F401 - re-exported
from xlapy.hlo import FusionKind, Opcode, parse, verify
from xlapy.hlo.ir import HloInstruction, HloModule
from xlapy.passes.fusion import InstructionFusion
from xlapy.passes.fusion_utils import fused_computation


# -- helpers shared with the multi-output fusion tests --------------------------------------
def random_inputs(module: HloModule, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(p.shape.dimensions).astype(p.shape.dtype)
            for p in module.entry_computation.parameters]


def run_passes(text: str, *passes, seed: int = 0) -> HloModule:
    """Parse `text`, run `passes` (verifying after each and checking the printed module
    parses back), and assert the interpreter gives bit-identical results."""
    module = parse(text)
    verify(module)
    args = random_inputs(module, seed)
    before = xlapy.execute(module, args, backend="interpreter")
    for p in passes:
        p.run(module)
        verify(module)
        verify(parse(module.to_text()))
    after = xlapy.execute(module, args, backend="interpreter")
    assert len(before) == len(after)
    for a, b in zip(before, after):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.array_equal(a, b, equal_nan=True), f"results differ:\n{module.to_text()}"
    return module


def fusions(module: HloModule) -> list[HloInstruction]:
    return [i for i in module.entry_computation.instructions if i.opcode is Opcode.FUSION]


def fused_opcodes(fusion: HloInstruction) -> list[str]:
    return [i.opcode.value for i in fused_computation(fusion).instructions
            if i.opcode is not Opcode.PARAMETER]


def entry_opcodes(module: HloModule) -> list[str]:
    return [i.opcode.value for i in module.entry_computation.instructions]


def reasons(p, producer: str, consumer: str | None = None) -> list[str]:
    return [r.reason for r in p.decisions
            if r.producer == producer and (consumer is None or r.consumer == consumer)]


# -- loop fusion --------------------------------------------------------------------------
CHAIN = module("""\
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  a = f32[4] add(x, y)
  n = f32[4] negate(a)
  e = f32[4] exponential(n)
  ROOT m = f32[4] multiply(e, x)""", "chain")

CHAIN_FUSED = """\
%fused_computation (param_0: f32[4], param_1: f32[4]) -> f32[4] {
  %param_0 = f32[4]{0} parameter(0)
  %param_1 = f32[4]{0} parameter(1)
  %a = f32[4]{0} add(f32[4]{0} %param_0, f32[4]{0} %param_1)
  %n = f32[4]{0} negate(f32[4]{0} %a)
  %e = f32[4]{0} exponential(f32[4]{0} %n)
  ROOT %m = f32[4]{0} multiply(f32[4]{0} %e, f32[4]{0} %param_0)
}

ENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  ROOT %fusion = f32[4]{0} fusion(f32[4]{0} %x, f32[4]{0} %y), kind=kLoop, \
calls=%fused_computation
}
"""


def test_elementwise_chain_becomes_one_loop_fusion():
    m = run_passes(CHAIN, InstructionFusion())
    text = m.to_text()
    print(text)
    assert text.endswith(CHAIN_FUSED)


def test_movement_ops_fuse_into_a_loop_fusion():
    m = run_passes(module("""\
  x = f32[4,6] parameter(0)
  y = f32[6,4] parameter(1)
  t = f32[6,4] transpose(x), dimensions={1,0}
  a = f32[6,4] add(t, y)
  s = f32[5,4] slice(a), slice={[1:6], [0:4]}
  zero = f32[] constant(0)
  p = f32[6,4] pad(s, zero), padding=0_1x0_0
  r = f32[24] reshape(p)
  v = f32[24] reverse(r), dimensions={0}
  i = s32[24] iota(), iota_dimension=0
  c = f32[24] convert(i)
  ROOT o = f32[48] concatenate(v, c), dimensions={0}"""), InstructionFusion())
    print(m.to_text())
    [fusion] = fusions(m)
    assert fusion.attrs["kind"] is FusionKind.LOOP
    assert entry_opcodes(m) == ["parameter", "parameter", "fusion"]
    assert {"transpose", "slice", "pad", "reshape", "reverse", "iota", "convert",
            "concatenate", "constant"} <= set(fused_opcodes(fusion))


def test_cheap_producer_is_duplicated_into_each_consumer():
    m = run_passes(module("""\
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  a = f32[4] add(x, y)
  n = f32[4] negate(a)
  e = f32[4] exponential(a)
  ROOT t = (f32[4], f32[4]) tuple(n, e)"""), InstructionFusion())
    first, second = fusions(m)
    assert fused_opcodes(first).count("add") == fused_opcodes(second).count("add") == 1
    assert "add" not in entry_opcodes(m)


def test_expensive_producer_is_not_duplicated():
    m = run_passes(module("""\
  x = f32[4] parameter(0)
  e = f32[4] exponential(x)
  n = f32[4] negate(e)
  l = f32[4] log(e)
  ROOT t = (f32[4], f32[4]) tuple(n, l)"""), p := InstructionFusion())
    assert "exponential" in entry_opcodes(m)
    assert reasons(p, "e", "n") == [
        "not fused: would duplicate an expensive producer (e) into 2 consumers"]


def test_expensive_producer_is_not_recomputed_for_a_broadcast():
    """Broadcast along the outer dimension (a column of a row-major result): each
    element of `e` would be computed again for every row."""
    m = run_passes(module("""\
  x = f32[8] parameter(0)
  y = f32[4,8] parameter(1)
  e = f32[8] exponential(x)
  b = f32[4,8] broadcast(e), dimensions={1}
  ROOT m = f32[4,8] multiply(b, y)"""), p := InstructionFusion())
    [fusion] = fusions(m)
    assert fused_opcodes(fusion) == ["broadcast", "multiply"]
    assert reasons(p, "e") == [
        "not fused: e is expensive and fusion reads each of its elements more than once "
        "(through b); fusing would recompute it for every read"]


@pytest.mark.parametrize("layout,fused", [("{1,0}", True), ("{0,1}", False)])
def test_an_expensive_value_per_row_fuses_under_its_row_broadcast(layout, fused):
    """A value per row, broadcast along the row (the output's minor dimension), is
    computed once per row by the code generators: fusing it recomputes nothing. With
    the rows not contiguous (a column-major output) it would be."""
    m = run_passes(module(f"""\
  x = f32[4] parameter(0)
  y = f32[4,8]{layout} parameter(1)
  e = f32[4] exponential(x)
  b = f32[4,8]{layout} broadcast(e), dimensions={{0}}
  ROOT m = f32[4,8]{layout} multiply(b, y)"""), InstructionFusion())
    [fusion] = fusions(m)
    assert ("exponential" in fused_opcodes(fusion)) is fused


def test_a_layer_norm_is_one_kernel():
    """Its sqrt(variance) is a value per row: fused, so both reductions of the row
    join the normalisation in one kernel."""
    m = run_passes(module("""\
  x = f32[16,32] parameter(0)
  zero = f32[] constant(0)
  n = f32[] constant(0.03125)
  nb = f32[16] broadcast(n), dimensions={}
  sum = f32[16] reduce(x, zero), dimensions={1}, to_apply=add_f32
  mean = f32[16] multiply(sum, nb)
  meanb = f32[16,32] broadcast(mean), dimensions={0}
  centred = f32[16,32] subtract(x, meanb)
  squares = f32[16,32] multiply(centred, centred)
  sq = f32[16] reduce(squares, zero), dimensions={1}, to_apply=add_f32
  variance = f32[16] multiply(sq, nb)
  eps = f32[] constant(1e-05)
  epsb = f32[16] broadcast(eps), dimensions={}
  shifted = f32[16] add(variance, epsb)
  root = f32[16] sqrt(shifted)
  rootb = f32[16,32] broadcast(root), dimensions={0}
  ROOT out = f32[16,32] divide(centred, rootb)"""), InstructionFusion())
    assert entry_opcodes(m).count("fusion") == 1
    assert "reduce" not in entry_opcodes(m)


def test_scalar_constants_fuse_and_large_constants_stay():
    values = ",".join(["1"] * 512)
    m = run_passes(module(f"""\
  x = f32[512] parameter(0)
  big = f32[512] constant({{{values}}})
  two = f32[] constant(2)
  b = f32[512] broadcast(two), dimensions={{}}
  a = f32[512] add(x, big)
  ROOT m = f32[512] multiply(a, b)"""), p := InstructionFusion())
    [fusion] = fusions(m)
    assert "constant" in fused_opcodes(fusion)  # the scalar two
    assert [i.name for i in m.entry_computation.instructions if i.opcode is Opcode.CONSTANT] \
        == ["big"]
    assert reasons(p, "big") == [
        "not fused: big is a large constant (2048 bytes); it stays one read-only buffer"]


def test_lone_constant_does_not_make_a_fusion():
    m = run_passes(module("""\
  x = f32[8] parameter(0)
  zero = f32[] constant(0)
  ROOT s = f32[] reduce(x, zero), dimensions={0}, to_apply=add_f32"""),
                   p := InstructionFusion())
    assert fusions(m) == []
    assert reasons(p, "zero") == [
        "not fused: a constant alone (zero) does not make a fusion worth a kernel"]


def test_ops_that_stay_outside_give_their_reason():
    m = run_passes(module("""\
  x = f32[4] parameter(0)
  key = u64[2] parameter(1)
  rng = (u64[2], u32[4]) rng-bit-generator(key), algorithm=rng_philox
  bits = u32[4] get-tuple-element(rng), index=1
  c = f32[4] convert(bits)
  cc = f32[4] custom-call(x), custom_call_target="Sharding"
  a = f32[4] add(c, cc)
  ROOT n = f32[4] negate(a)"""), p := InstructionFusion())
    assert entry_opcodes(m).count("fusion") == 1
    assert reasons(p, "bits")[0].startswith("not fused: bits: get-tuple-element stays")
    assert reasons(p, "cc") == ["not fused: cc: custom-calls stay outside fusions"]
    assert reasons(p, "rng") == ["not fused: rng: rng-bit-generator updates its state and "
                                 "runs once, on its own"]
    assert reasons(p, "x") == ["not fused: x: parameters are the computation's inputs and "
                               "stay outside fusions"]


def test_fusion_runs_inside_while_bodies():
    m = run_passes("""\
HloModule loop

cond {
  cp = (s32[], f32[8]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  lim = s32[] constant(4)
  ROOT lt = pred[] compare(ci, lim), direction=LT
}

body {
  bp = (s32[], f32[8]) parameter(0)
  bi = s32[] get-tuple-element(bp), index=0
  bx = f32[8] get-tuple-element(bp), index=1
  one = s32[] constant(1)
  ni = s32[] add(bi, one)
  h = f32[] constant(0.5)
  bh = f32[8] broadcast(h), dimensions={}
  t = f32[8] tanh(bx)
  nx = f32[8] multiply(t, bh)
  ROOT r = (s32[], f32[8]) tuple(ni, nx)
}

ENTRY main {
  x = f32[8] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[8]) tuple(z, x)
  w = (s32[], f32[8]) while(init), condition=cond, body=body
  ROOT out = f32[8] get-tuple-element(w), index=1
}
""", p := InstructionFusion())
    body = m.computation("body")
    [fusion] = [i for i in body.instructions if i.opcode is Opcode.FUSION]
    assert fused_opcodes(fusion) == ["tanh", "constant", "broadcast", "multiply"]
    assert [c.name for c in m.computations] == ["cond", "fused_computation", "body", "main"]
    assert reasons(p, "w") == ["not fused: w is a while: control flow stays outside fusions"]


def test_operand_budget_splits_a_wide_sum():
    params = "\n".join(f"  p{i} = f32[4] parameter({i})" for i in range(70))
    adds = "\n".join(f"  sum{i} = f32[4] add({'sum' + str(i - 1) if i > 1 else 'p0'}, p{i})"
                     for i in range(1, 70))
    m = run_passes(module(params + "\n" + adds.replace("  sum69", "  ROOT sum69")),
                   p := InstructionFusion())
    assert len(fusions(m)) == 2
    assert all(len(f.operands) + 1 <= 64 for f in fusions(m))
    assert any("operands and outputs (limit 64)" in r.reason for r in p.decisions)


def test_producer_kept_when_it_cannot_fuse_into_every_consumer():
    m = run_passes(module("""\
  x = f32[4,4] parameter(0)
  y = f32[4,4] parameter(1)
  a = f32[4,4] add(x, y)
  n = f32[4,4] negate(a)
  d = f32[4,4] dot(a, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[4,4], f32[4,4]) tuple(n, d)"""), p := InstructionFusion())
    assert "add" in entry_opcodes(m)
    assert reasons(p, "a", "n") == [
        "not fused: a cannot be fused into all 2 of its consumers on every path (d would "
        "keep it), and copying it would read its inputs again"]


# -- reduction-input fusion ---------------------------------------------------------------
def test_sum_of_x_plus_y_times_z_is_one_input_fusion():
    m = run_passes(module("""\
  x = f32[16,8] parameter(0)
  y = f32[16,8] parameter(1)
  z = f32[16,8] parameter(2)
  m = f32[16,8] multiply(y, z)
  a = f32[16,8] add(x, m)
  zero = f32[] constant(0)
  ROOT s = f32[] reduce(a, zero), dimensions={0,1}, to_apply=add_f32"""),
                   InstructionFusion())
    text = m.to_text()
    print(text)
    assert entry_opcodes(m) == ["parameter"] * 3 + ["fusion"]
    [fusion] = fusions(m)
    assert fusion.attrs["kind"] is FusionKind.INPUT
    assert fused_computation(fusion).root_instruction.opcode is Opcode.REDUCE
    assert "kind=kInput, calls=%fused_computation" in text


SOFTMAX = module("""\
  x = f32[4,8] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[4] reduce(x, ninf), dimensions={1}, to_apply=max_f32
  bm = f32[4,8] broadcast(mx), dimensions={0}
  sub = f32[4,8] subtract(x, bm)
  e = f32[4,8] exponential(sub)
  zero = f32[] constant(0)
  s = f32[4] reduce(e, zero), dimensions={1}, to_apply=add_f32
  bs = f32[4,8] broadcast(s), dimensions={0}
  ROOT out = f32[4,8] divide(e, bs)""", "softmax")

# JAX's form: reductions keep their dims (a reshape to f32[4,1]) before broadcasting.
SOFTMAX_KEEPDIMS = module("""\
  x = f32[4,8] parameter(0)
  ninf = f32[] constant(-inf)
  mx = f32[4] reduce(x, ninf), dimensions={1}, to_apply=max_f32
  mk = f32[4,1] reshape(mx)
  bm0 = f32[4,1] broadcast(mk), dimensions={0,1}
  bm1 = f32[4] reshape(bm0)
  bm = f32[4,8] broadcast(bm1), dimensions={0}
  sub = f32[4,8] subtract(x, bm)
  e = f32[4,8] exponential(sub)
  zero = f32[] constant(0)
  s = f32[4] reduce(e, zero), dimensions={1}, to_apply=add_f32
  sk = f32[4,1] reshape(s)
  bs1 = f32[4] reshape(sk)
  bs = f32[4,8] broadcast(bs1), dimensions={0}
  ROOT out = f32[4,8] divide(e, bs)""", "softmax")


def test_softmax_is_one_fusion():
    for text in (SOFTMAX, SOFTMAX_KEEPDIMS):
        m = run_passes(text, p := InstructionFusion())
        print(m.to_text())
        [fusion] = fusions(m)
        assert fusion.attrs["kind"] is FusionKind.INPUT
        assert fused_opcodes(fusion).count("reduce") == 2
        assert entry_opcodes(m) == ["parameter", "fusion"]
    assert reasons(p, "s") == [
        "fused: s into fusion, broadcast back over its rows (reduction diamond) (kInput)"]


def test_softmax_without_diamonds_keeps_reductions_apart():
    m = run_passes(SOFTMAX, p := InstructionFusion(fuse_reduction_diamonds=False))
    assert entry_opcodes(m).count("reduce") == 2
    assert reasons(p, "s", "fusion") == [
        "not fused: fusion reads each element of s more than once (through bs); a reduction "
        "is fused where it is read once or broadcast back over the minor dimensions it "
        "reduced (a row's value, computed once per row; a column's would be recomputed for "
        "every element)"]


def test_column_softmax_keeps_its_reductions_apart():
    """A reduction over the major dimension broadcast back along the minor one is a
    value per column: fused, the code generators would recompute it for every
    element (a 2048x2048 softmax over axis 0 took 79 s). It stays its own kernel."""
    m = run_passes(module("""\
  x = f32[64,32] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[32] reduce(x, ninf), dimensions={0}, to_apply=max_f32
  bm = f32[64,32] broadcast(m), dimensions={1}
  d = f32[64,32] subtract(x, bm)
  e = f32[64,32] exponential(d)
  zero = f32[] constant(0)
  s = f32[32] reduce(e, zero), dimensions={0}, to_apply=add_f32
  bs = f32[64,32] broadcast(s), dimensions={1}
  ROOT y = f32[64,32] divide(e, bs)"""), p := InstructionFusion())
    for fusion in fusions(m):
        for i in fused_computation(fusion).instructions:
            if i.opcode.value == "reduce":
                assert not any(u.opcode.value == "broadcast" for u in i.users), i.name
    assert entry_opcodes(m).count("reduce") + sum(
        fused_computation(f).root_instruction.opcode.value == "reduce" for f in fusions(m)) == 2
    assert "broadcast back over the minor dimensions" in " ".join(reasons(p, "m", "fusion")
                                                                    + reasons(p, "s", "fusion"))


def test_reduction_epilogue_is_fused():
    m = run_passes(module("""\
  x = f32[4,8] parameter(0)
  zero = f32[] constant(0)
  s = f32[4] reduce(x, zero), dimensions={1}, to_apply=add_f32
  n = f32[] constant(8)
  bn = f32[4] broadcast(n), dimensions={}
  ROOT mean = f32[4] divide(s, bn)"""), p := InstructionFusion())
    [fusion] = fusions(m)
    assert fusion.attrs["kind"] is FusionKind.INPUT
    assert fused_computation(fusion).root_instruction.name == "mean"
    assert reasons(p, "s") == ["fused: s into fusion, read once per element (reduction "
                               "epilogue) (kInput)"]


def test_reduce_window_heads_an_input_fusion():
    m = run_passes(module("""\
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  a = f32[8] add(x, y)
  zero = f32[] constant(0)
  ROOT w = f32[4] reduce-window(a, zero), window={size=2 stride=2}, to_apply=add_f32"""),
                   InstructionFusion())
    [fusion] = fusions(m)
    assert fusion.attrs["kind"] is FusionKind.INPUT
    assert fused_opcodes(fusion) == ["add", "constant", "reduce-window"]


# -- output fusion ------------------------------------------------------------------------
DENSE = module("""\
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  b = f32[4] parameter(2)
  d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,4] broadcast(b), dimensions={1}
  a = f32[8,4] add(d, bb)
  zero = f32[] constant(0)
  bz = f32[8,4] broadcast(zero), dimensions={}
  ROOT r = f32[8,4] maximum(a, bz)""", "dense")


def test_dot_bias_relu_is_one_output_fusion():
    m = run_passes(DENSE, p := InstructionFusion())
    print(m.to_text())
    [fusion] = fusions(m)
    assert fusion.attrs["kind"] is FusionKind.OUTPUT
    assert entry_opcodes(m) == ["parameter"] * 3 + ["fusion"]
    assert sorted(fused_opcodes(fusion)) == sorted(
        ["dot", "broadcast", "add", "constant", "broadcast", "maximum"])
    assert fused_computation(fusion).root_instruction.opcode is Opcode.MAXIMUM
    assert reasons(p, "d") == ["fused: d heads an output fusion with its elementwise "
                               "epilogue fusion (kOutput)"]


def test_dot_epilogues_can_be_turned_off():
    m = run_passes(DENSE, InstructionFusion(fuse_dot_epilogues=False))
    assert "dot" in entry_opcodes(m)
    assert fusions(m)[0].attrs["kind"] is FusionKind.LOOP


def test_dot_with_two_expensive_consumers_is_not_duplicated():
    m = run_passes(module("""\
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  r1 = f32[8] reduce(d, zero), dimensions={1}, to_apply=add_f32
  ninf = f32[] constant(-inf)
  r2 = f32[8] reduce(d, ninf), dimensions={1}, to_apply=max_f32
  ROOT t = (f32[8], f32[8]) tuple(r1, r2)"""), p := InstructionFusion())
    assert entry_opcodes(m).count("dot") == 1
    assert reasons(p, "d", "r1") == reasons(p, "d", "r2") == [
        "not fused: would duplicate an expensive producer (d) into 2 consumers"]


def test_producers_of_the_dot_operands_stay_outside():
    m = run_passes(module("""\
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  nx = f32[8,16] negate(x)
  d = f32[8,4] dot(nx, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT e = f32[8,4] tanh(d)"""), p := InstructionFusion())
    assert "negate" in entry_opcodes(m)
    assert reasons(p, "nx") == [
        "not fused: nx feeds the dot hero of fusion, which reads its operands from memory"]


def test_dot_does_not_join_a_reduction():
    m = run_passes(module("""\
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[8,4] tanh(d)
  zero = f32[] constant(0)
  ROOT s = f32[8] reduce(t, zero), dimensions={1}, to_apply=add_f32"""),
                   p := InstructionFusion())
    assert "dot" in entry_opcodes(m)
    [fusion] = fusions(m)
    assert fusion.attrs["kind"] is FusionKind.INPUT
    assert reasons(p, "d")[0].startswith("not fused: d (dot) fuses only into an elementwise "
                                         "epilogue")


# -- the pass as a whole ------------------------------------------------------------------
def test_fusion_is_deterministic_and_reports_no_change_on_nothing_to_fuse():
    assert parse(CHAIN).to_text() != run_passes(CHAIN, InstructionFusion()).to_text()
    first = run_passes(SOFTMAX, InstructionFusion()).to_text()
    assert run_passes(SOFTMAX, InstructionFusion()).to_text() == first
    m = parse(module("  ROOT x = f32[4] parameter(0)"))
    assert InstructionFusion().run(m) is False


def test_names_follow_xla():
    m = run_passes(module("""\
  x = f32[4] parameter(0)
  e = f32[4] exponential(x)
  n = f32[4] negate(e)
  f = f32[4] floor(n)
  l = f32[4] log(e)
  a = f32[4] abs(l)
  ROOT t = (f32[4], f32[4]) tuple(f, a)"""), InstructionFusion())
    print(m.to_text())
    names = [c.name for c in m.computations]
    assert names == ["add_f32", "max_f32", "fused_computation.1", "fused_computation", "main"]
    assert [f.name for f in fusions(m)] == ["fusion.1", "fusion"]
    params = [p.name for c in m.computations[2:4] for p in c.parameters]
    assert params == ["param_0.1", "param_0"]  # numbered in creation order, as XLA does


@given(seed=st.integers(0, 2**31 - 1))
def test_random_programs_keep_their_results(seed):
    text = random_program(seed)
    run_passes(text, InstructionFusion(), seed=seed)
    run_passes(text, InstructionFusion(fuse_reduction_diamonds=False, may_duplicate=False),
               seed=seed)


def test_convolution_bias_tanh_is_one_output_fusion():
    m = run_passes(module("""\
  x = f32[1,6,6,2] parameter(0)
  k = f32[3,3,2,4] parameter(1)
  b = f32[4] parameter(2)
  c = f32[1,4,4,4] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f
  bb = f32[1,4,4,4] broadcast(b), dimensions={3}
  a = f32[1,4,4,4] add(c, bb)
  ROOT t = f32[1,4,4,4] tanh(a)""", "conv"), InstructionFusion())
    [fusion] = fusions(m)
    assert fusion.attrs["kind"] is FusionKind.OUTPUT
    assert sorted(fused_opcodes(fusion)) == ["add", "broadcast", "convolution", "tanh"]


def test_variadic_reduce_heads_an_input_fusion():
    m = run_passes("""\
HloModule argmax

argmax_f32 {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  v = f32[] select(gt, a, b)
  vi = s32[] select(gt, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, vi)
}

ENTRY main {
  x = f32[4,8] parameter(0)
  y = f32[4,8] parameter(1)
  m = f32[4,8] multiply(x, y)
  io = s32[4,8] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  red = (f32[4], s32[4]) reduce(m, io, ninf, zero), dimensions={1}, to_apply=argmax_f32
  v0 = f32[4] get-tuple-element(red), index=0
  v1 = s32[4] get-tuple-element(red), index=1
  c = f32[4] convert(v1)
  ROOT o = f32[4] add(v0, c)
}
""", p := InstructionFusion())
    reduce_fusion, epilogue = sorted(fusions(m), key=lambda f: f.attrs["kind"].value)
    assert reduce_fusion.attrs["kind"] is FusionKind.INPUT
    assert reduce_fusion.shape.is_tuple
    assert sorted(fused_opcodes(reduce_fusion)) == ["constant", "constant", "iota", "multiply",
                                                    "reduce"]
    assert set(reasons(p, "red")) == {"not fused: red (reduce) returns a tuple, not an array"}


def test_fusions_already_in_the_module_grow():
    # as XLA dumps print fused computations: parameters where first used
    m = run_passes("""\
HloModule dumped

%fused_computation (param_0.1: f32[4], param_1.2: f32[4]) -> f32[4] {
  %param_0.1 = f32[4]{0} parameter(0)
  %negate.1 = f32[4]{0} negate(f32[4]{0} %param_0.1)
  %param_1.2 = f32[4]{0} parameter(1)
  ROOT %add.1 = f32[4]{0} add(f32[4]{0} %negate.1, f32[4]{0} %param_1.2)
}

ENTRY %main (x: f32[4], y: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %y = f32[4]{0} parameter(1)
  %m = f32[4]{0} multiply(f32[4]{0} %y, f32[4]{0} %y)
  %fusion = f32[4]{0} fusion(f32[4]{0} %x, f32[4]{0} %m), kind=kLoop, calls=%fused_computation
  ROOT %t = f32[4]{0} tanh(f32[4]{0} %fusion)
}
""", InstructionFusion())
    [fusion] = fusions(m)
    assert sorted(fused_opcodes(fusion)) == ["add", "multiply", "negate"]
    assert entry_opcodes(m) == ["parameter", "parameter", "fusion", "tanh"]
