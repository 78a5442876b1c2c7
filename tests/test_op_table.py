"""One op table: every opcode has a shape rule and an interpreter rule (or a
written reason why the interpreter does not evaluate it)."""

import numpy as np
import pytest

import xlapy
from xlapy.autodiff import rules
from xlapy.autodiff.rules.nondifferentiable import UNSUPPORTED
from xlapy.backends.cpu import lowering
from xlapy.backends.cpu.special_kernels import SPECIAL
from xlapy.codegen.tables import EMITTERS, GENERATORS
from xlapy.errors import CompileError, ExecutionError
from xlapy.flags import flags_set
from xlapy.hlo import shape_inference
from xlapy.hlo.evaluator.evaluator import Evaluator
from xlapy.hlo.evaluator.rules import NOT_INTERPRETED, RULES
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

ALL = sorted(Opcode, key=lambda o: o.value)

# The opcodes the foundation issue names; each must run in the interpreter.
REQUIRED = """abs acos acosh add and asin asinh atan atan2 atanh cbrt ceil cosine cosh
count-leading-zeros divide erf exponential exponential-minus-one floor imag is-finite log
log-plus-one logistic maximum minimum multiply negate not or popcnt power real remainder
round-nearest-afz round-nearest-even rsqrt shift-left shift-right-arithmetic
shift-right-logical sign sine sinh sqrt subtract tan tanh xor complex compare select clamp
convert bitcast-convert reduce-precision constant iota tuple get-tuple-element copy bitcast
broadcast reshape transpose reverse slice dynamic-slice dynamic-update-slice concatenate pad
gather scatter dot convolution reduce reduce-window select-and-scatter map sort while
conditional call fusion custom-call rng-bit-generator opt-barrier after-all cholesky
triangular-solve fft topk all-reduce all-gather reduce-scatter all-to-all collective-permute
replica-id partition-id""".split()


@pytest.mark.parametrize("op", ALL, ids=str)
def test_every_opcode_has_a_shape_rule(op):
    assert op in shape_inference.query.RULES


@pytest.mark.parametrize("op", ALL, ids=str)
def test_every_opcode_is_interpreted_or_says_why_not(op):
    if op is Opcode.PARAMETER:  # bound by the evaluator itself
        return
    assert (op in RULES) != (op in NOT_INTERPRETED), op


@pytest.mark.parametrize("name", REQUIRED)
def test_required_opcodes_are_interpreted(name):
    assert Opcode.from_text(name) in RULES


def test_uninterpreted_opcode_error_says_why():
    x = HloInstruction(Opcode.PARAMETER, Shape.array("f32", (2,)), name="x", parameter_number=0)
    n = HloInstruction(Opcode.CONSTANT, Shape.scalar("s32"), name="n", literal=np.array(2, np.int32))
    s = HloInstruction(Opcode.SET_DIMENSION_SIZE, x.shape, [x, n], {"dimensions": (0,)}, name="s")
    with pytest.raises(ExecutionError, match="set-dimension-size .*dynamic shapes"):
        Evaluator().call(HloComputation("c", [x, n, s]), [np.zeros(2, np.float32)])


# -- differentiation: every opcode has a rule, or says why not ------------------------------
REPLAYED = {Opcode.PARAMETER, Opcode.CONSTANT, Opcode.TUPLE, Opcode.GET_TUPLE_ELEMENT,
            Opcode.CALL, Opcode.FUSION, Opcode.OPTIMIZATION_BARRIER}  # handled by tape.Replay


@pytest.mark.parametrize("op", ALL, ids=str)
def test_every_opcode_is_differentiable_or_says_why_not(op):
    places = [op in REPLAYED, op in rules.VJP, op in rules.NON_DIFFERENTIABLE,
              op in UNSUPPORTED]
    assert sum(places) == 1, (op, places)
    assert (op in rules.VJP) == (op in rules.JVP), f"{op}: both modes need a rule"


DIFFERENTIABLE = """abs acos acosh add asin asinh atan atan2 atanh cbrt cosine cosh divide erf
exponential exponential-minus-one log log-plus-one logistic maximum minimum multiply negate power
remainder rsqrt sine sinh sqrt subtract tan tanh select clamp convert copy bitcast broadcast
reshape transpose reverse slice dynamic-slice dynamic-update-slice concatenate pad gather scatter
dot convolution reduce reduce-window select-and-scatter sort while conditional cholesky
triangular-solve""".split()


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_the_issues_differentiable_opcodes_have_rules(name):
    from xlapy.autodiff import rules

    assert Opcode(name) in rules.VJP and Opcode(name) in rules.JVP


# -- CPU lowering: every opcode has a lowering, or says why the evaluator runs it --------
@pytest.mark.parametrize("op", ALL, ids=str)
def test_every_opcode_has_a_cpu_lowering_or_a_reason(op):
    entry = lowering.TABLE[op]
    assert entry.native or entry.fallback or entry.impossible, op
    assert not (entry.native and entry.impossible), op
    assert bool(entry.impossible) == (op in NOT_INTERPRETED), op


@pytest.mark.parametrize("op", ALL, ids=str)
def test_a_native_lowering_names_a_registered_emitter(op):
    entry = lowering.TABLE[op]
    if "kernel " in entry.native and "loop kernel" not in entry.native.split(";")[0]:
        assert op in SPECIAL, op
    if "elemental emitter" in entry.native:
        assert op in EMITTERS, op
    if "element generator" in entry.native and op is not Opcode.FUSION:
        assert op in GENERATORS, op


def test_the_cpu_lowers_what_the_issue_requires_natively():
    # every required opcode but those the table sends to the evaluator on purpose
    evaluated = {Opcode.FFT, Opcode.TOPK, Opcode.CUSTOM_CALL, Opcode.RNG} | {
        op for op in Opcode if lowering.TABLE[op].fallback.startswith("a collective")}
    for name in REQUIRED:
        op = Opcode.from_text(name)
        if op not in evaluated:
            assert lowering.TABLE[op].native, op


def test_an_emitter_refusal_outside_the_table_is_an_error(monkeypatch):
    # the table, not the emitter, decides whether the evaluator may run an instruction
    module = xlapy.hlo.parse("""
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT y = f32[4] exponential(x)
}""")
    monkeypatch.setitem(lowering.TABLE, Opcode.EXP, lowering.Lowering("elemental"))

    def refuse(*args):
        raise CompileError("refused")

    monkeypatch.setitem(EMITTERS, Opcode.EXP, refuse)
    with pytest.raises(CompileError, match="refused"):
        xlapy.compile(module, "cpu")


def test_a_fallback_is_recorded_with_its_reason_logged_and_refused_when_strict(
        caplog, monkeypatch):
    module = xlapy.hlo.parse("""
HloModule m
ENTRY e {
  x = c64[8] parameter(0)
  ROOT y = c64[8] fft(x), fft_type=FFT, fft_length={8}
}""")
    monkeypatch.setattr(lowering, "_LOGGED", set())
    with caplog.at_level("WARNING", logger="xlapy.backends.cpu"):
        executable = xlapy.compile(module, "cpu")
        xlapy.compile(module, "cpu")
    assert [i.opcode for i in executable.fallbacks] == [Opcode.FFT]
    assert executable.fallback_reasons == [lowering.NO_NATIVE[Opcode.FFT]]
    assert executable.fallback_report() == [f"y (fft): {lowering.NO_NATIVE[Opcode.FFT]}"]
    assert [r.getMessage() for r in caplog.records].count(
        f"the CPU backend runs fft in the HLO evaluator: {lowering.NO_NATIVE[Opcode.FFT]}") == 1
    x = (np.arange(8) + 1j).astype(np.complex64)
    np.testing.assert_allclose(executable.execute(x)[0], np.fft.fft(x), rtol=1e-5, atol=1e-5)
    with flags_set("--xlapy_cpu_strict"), pytest.raises(CompileError, match="strict"):
        xlapy.compile(module, "cpu")
