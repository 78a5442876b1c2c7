"""Index values in generated code: any integer element as a signed i64, clamped.

Data-dependent indices (dynamic-slice starts, gather and scatter indices) come
in every integer type; XLA clamps them into bounds, and so must every target.
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.codegen import elemental
from xlapy.codegen import ir_types as T
from xlapy.hlo.dtypes import PrimitiveType as P

LARGE_INDEX = 1 << 62
"""A u64 index at or above 2**63 becomes this (still out of bounds) rather than wrapping
negative, as the interpreter does."""


def as_index(b: ir.IRBuilder, value, ptype: P) -> ir.Value:
    """An index element (compute form of any integer type or pred) as a signed i64."""
    wide = elemental.convert(b, value, ptype, P.S64)
    if ptype is P.U64:
        negative = b.icmp_signed("<", wide, ir.Constant(T.I64, 0))
        wide = b.select(negative, ir.Constant(T.I64, LARGE_INDEX), wide)
    return wide


def clamp(b: ir.IRBuilder, value: ir.Value, low: int, high: int) -> ir.Value:
    """min(max(value, low), high) on i64 (high wins if high < low)."""
    lo, hi = ir.Constant(T.I64, low), ir.Constant(T.I64, high)
    value = b.select(b.icmp_signed("<", value, lo), lo, value)
    return b.select(b.icmp_signed(">", value, hi), hi, value)
