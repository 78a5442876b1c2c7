"""The opcode table: spellings, arities and categories agree with XLA's header."""

import pytest

from xlapy.hlo.opcode import (
    COMMUTATIVE,
    ELEMENTWISE,
    ELEMENTWISE_BINARY,
    ELEMENTWISE_UNARY,
    VARIADIC,
    Opcode,
)


def test_count_and_spellings_match_xla():
    assert len(Opcode) == 136
    assert Opcode.from_text("exponential-minus-one") is Opcode.EXPM1
    assert Opcode.from_text("count-leading-zeros") is Opcode.CLZ
    assert Opcode.from_text("opt-barrier") is Opcode.OPTIMIZATION_BARRIER
    assert str(Opcode.COS) == "cosine"


def test_unknown_spelling_raises():
    with pytest.raises(KeyError):
        Opcode.from_text("fooo")


@pytest.mark.parametrize("op", sorted(ELEMENTWISE_UNARY, key=lambda o: o.value))
def test_unary_ops_take_one_operand(op):
    assert op.arity == 1


@pytest.mark.parametrize("op", sorted(ELEMENTWISE_BINARY, key=lambda o: o.value))
def test_binary_ops_take_two_operands(op):
    assert op.arity == 2


def test_categories():
    assert COMMUTATIVE <= ELEMENTWISE_BINARY
    assert Opcode.SELECT in ELEMENTWISE and Opcode.BITCAST_CONVERT not in ELEMENTWISE
    assert Opcode.TUPLE.arity == VARIADIC and Opcode.CONSTANT.arity == 0
    assert not ELEMENTWISE_UNARY & ELEMENTWISE_BINARY
