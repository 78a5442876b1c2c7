"""Opcodes whose results carry no derivative, and those differentiation refuses.

A value computed by an op listed in NON_DIFFERENTIABLE is treated as a
constant by both modes: its cotangent is dropped and its tangent is zero, as
JAX does for integer, boolean and random values and for piecewise-constant
functions (sign, floor, ceil, rounding: derivative zero almost everywhere).
UNSUPPORTED lists differentiable ops without a rule; differentiating through
one raises CompileError with the reason instead of a silently wrong zero.
"""

from __future__ import annotations

from xlapy.autodiff.rules import non_differentiable
from xlapy.hlo.opcode import Opcode

Op = Opcode

non_differentiable(
    "piecewise constant: derivative zero almost everywhere (JAX's convention)",
    Op.SIGN, Op.FLOOR, Op.CEIL, Op.ROUND_NEAREST_AFZ, Op.ROUND_NEAREST_EVEN)
non_differentiable(
    "boolean or integer result",
    Op.COMPARE, Op.AND, Op.OR, Op.XOR, Op.NOT, Op.SHIFT_LEFT, Op.SHIFT_RIGHT_ARITHMETIC,
    Op.SHIFT_RIGHT_LOGICAL, Op.POPCNT, Op.CLZ, Op.IS_FINITE, Op.MULHI, Op.STOCHASTIC_CONVERT,
    Op.IOTA, Op.GET_DIMENSION_SIZE, Op.PARTITION_ID, Op.REPLICA_ID)
non_differentiable(
    "bit patterns, not a differentiable function of the values",
    Op.BITCAST_CONVERT)
non_differentiable(
    "random numbers: their values do not depend differentiably on the inputs",
    Op.RNG, Op.RNG_BIT_GENERATOR, Op.RNG_GET_AND_UPDATE_STATE)
non_differentiable(
    "tokens and side effects carry no values to differentiate",
    Op.AFTER_ALL, Op.INFEED, Op.OUTFEED, Op.SEND, Op.SEND_DONE, Op.RECV, Op.RECV_DONE)

UNSUPPORTED: dict[Opcode, str] = {}


def unsupported(reason: str, *opcodes: Opcode) -> None:
    for op in opcodes:
        UNSUPPORTED[op] = reason


unsupported(
    "asynchronous pairs appear only after scheduling; differentiate the module before "
    "optimisation",
    Op.ASYNC_START, Op.ASYNC_UPDATE, Op.ASYNC_DONE, Op.ALL_GATHER_START, Op.ALL_GATHER_DONE,
    Op.ALL_REDUCE_START, Op.ALL_REDUCE_DONE, Op.COLLECTIVE_PERMUTE_START,
    Op.COLLECTIVE_PERMUTE_DONE, Op.COPY_START, Op.COPY_DONE)
unsupported(
    "a custom call is opaque: xlapy cannot know its derivative (wrap it in custom_vjp)",
    Op.CUSTOM_CALL)
unsupported(
    "collectives without a transpose rule in xlapy: differentiate the per-device program "
    "before them",
    Op.COLLECTIVE_BROADCAST, Op.COLLECTIVE_REDUCE, Op.RAGGED_ALL_TO_ALL)
unsupported(
    "not emitted by any frontend xlapy reads; no rule yet",
    Op.SCAN, Op.SHUFFLE)
