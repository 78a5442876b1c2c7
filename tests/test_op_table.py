"""One op table: every opcode has a shape rule and an interpreter rule (or a
written reason why the interpreter does not evaluate it)."""

import numpy as np
import pytest

from xlapy.errors import ExecutionError
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
    from xlapy.autodiff import rules
    from xlapy.autodiff.rules.nondifferentiable import UNSUPPORTED

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
