"""Vectorisable math functions, emitted as LLVM IR for any target.

    y = emit_unary("exponential", builder, x)     # names are HLO opcode names
    z = emit_binary("power", builder, x, y)

x (and y) are float or double scalars or vectors; the result has their type.
The code has no branches and no library calls (only the fabs/floor/rint/
sqrt/copysign intrinsics, and ldexp where the module's target computes it in
one instruction: `common.NATIVE_LDEXP`), so a loop applying it is vectorised by LLVM and it
links into ahead-of-time objects as is. Semantics are the interpreter's
(NumPy's special values, C99 pow). Each function's docstring states its
measured error: the largest over 10^7 samples spanning the whole float range
against a long double reference (`benchmarks/cpu_math_ulp.py`). f32 is
computed in double (see `common.in_double`) and comes out within 0.51 ULP,
except exp, expm1, log, log1p, tanh, logistic and erf: those have native f32
kernels (`float32.py`, twice the vector width, at most 1.47 ULP over every
f32 input). f16/bf16 callers widen to f32 first.

The error-free transformations inside (two_sum, two_prod) need strict IEEE
arithmetic: do not put fast-math flags on these instructions or attributes
on a function that holds them.
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.codegen.math import erf, exp_log, float32, hyperbolic, power, trig
from xlapy.codegen.math.common import (
    F32,
    F64,
    Lanes,
    element_of,
    in_double,
    in_double2,
    lanes_of,
)

UNARY = {
    "exponential": exp_log.exp,
    "exponential-minus-one": exp_log.expm1,
    "log": exp_log.log,
    "log-plus-one": exp_log.log1p,
    "tanh": hyperbolic.tanh,
    "logistic": hyperbolic.logistic,
    "erf": erf.erf,
    "sine": trig.sin,
    "cosine": trig.cos,
    "tan": trig.tan,
    "rsqrt": power.rsqrt,
    "cbrt": power.cbrt,
}
"""HLO name -> kernel(lanes, x_as_double, is_f32) -> double."""

NATIVE_F32 = {
    "exponential": float32.exp,
    "exponential-minus-one": float32.expm1,
    "log": float32.log,
    "log-plus-one": float32.log1p,
    "tanh": float32.tanh,
    "logistic": float32.logistic,
    "erf": float32.erf,
}
"""HLO name -> kernel(f32 lanes, x) -> f32, for the functions f32 evaluates in f32."""

BINARY = {
    "power": power.pow_,
    "atan2": trig.atan2,
}
"""HLO name -> kernel(lanes, x, y, is_f32) -> double."""


def _check(name: str, table: dict, *values: ir.Value) -> None:
    if name not in table:
        raise KeyError(f"no vectorised math function {name!r}")
    if element_of(values[0].type) not in (F32, F64):
        raise TypeError(f"{name}: math functions take float or double, not {values[0].type}")
    if any(v.type != values[0].type for v in values):
        raise TypeError(f"{name}: operand types differ")


def emit_unary(name: str, builder: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """The IR for HLO function `name` applied to x (same type in and out)."""
    _check(name, UNARY, x)
    if element_of(x.type) == F32 and name in NATIVE_F32:
        return NATIVE_F32[name](Lanes(builder, lanes_of(x.type), F32, fused=True), x)
    return in_double(builder, x, UNARY[name])


def emit_binary(name: str, builder: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """The IR for binary HLO function `name` (power: x**y; atan2: atan2(x, y))."""
    _check(name, BINARY, x, y)
    return in_double2(builder, x, y, BINARY[name])
