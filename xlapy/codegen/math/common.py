"""Arithmetic helpers the math emitters share: `Lanes` wraps an IRBuilder for
values shaped like the argument (a scalar or an <N x double>), so one emitter
serves a scalar loop body (which LLVM's loop vectoriser widens) and an
explicit vector alike.

Every function here emits straight-line code: no branches, no calls other
than the intrinsics LLVM lowers to single instructions (fabs, floor, rint,
sqrt, copysign; ldexp on targets marked NATIVE_LDEXP), so the code
vectorises and needs no library at run time.
Arithmetic is plain IEEE (no fast-math flags, no FMA contraction); the
double-double helpers (`two_sum`, `two_prod`) are exact under that rule and
do not need a hardware FMA.
"""

from __future__ import annotations

import struct

import llvmlite.ir as ir

from xlapy.codegen.intrinsics import intrinsic

F32 = ir.FloatType()
F64 = ir.DoubleType()
I64 = ir.IntType(64)
I32 = ir.IntType(32)

INF = float("inf")
NAN = float("nan")


def lanes_of(t: ir.Type) -> int | None:
    """The vector width of `t`, or None for a scalar."""
    return t.count if isinstance(t, ir.VectorType) else None


def element_of(t: ir.Type) -> ir.Type:
    return t.element if isinstance(t, ir.VectorType) else t


def shaped(element: ir.Type, lanes: int | None) -> ir.Type:
    return element if lanes is None else ir.VectorType(element, lanes)


NATIVE_LDEXP = "xlapy_native_ldexp"
"""The attribute a backend sets on an `ir.Module` whose target computes `llvm.ldexp`
in one instruction (x86's AVX-512 `vscalef`); elsewhere LLVM may expand it into
a library call, so `Lanes.scale` multiplies by powers of two instead."""


def bits_of_double(value: float) -> int:
    return struct.unpack("<q", struct.pack("<d", value))[0]


class Lanes:
    """Float arithmetic (double by default, or float) and the same-width integer
    arithmetic on values with `lanes` lanes (None: scalar)."""

    def __init__(self, builder: ir.IRBuilder, lanes: int | None, element: ir.Type = F64,
                 fused: bool = False):
        self.b = builder
        self.fused = fused
        """madd (and so horner) as `llvm.fmuladd`: one FMA where the target has it."""
        self.lanes = lanes
        self.element = element
        self.int_element = I32 if element == F32 else I64
        self.ftype = shaped(element, lanes)
        self.itype = shaped(self.int_element, lanes)
        self.mantissa = 23 if element == F32 else 52
        """Explicit significand bits."""
        self.bias = 127 if element == F32 else 1023
        block = builder.block
        self.native_ldexp = block is not None and getattr(block.parent.module, NATIVE_LDEXP,
                                                          False)

    # -- constants ------------------------------------------------------------------------
    def c(self, value: float) -> ir.Constant:
        return self._splat(self.element, float(value))

    def ci(self, value: int) -> ir.Constant:
        return self._splat(self.int_element, int(value) & (2**self.int_element.width - 1))

    def _splat(self, element, value):
        if self.lanes is None:
            return ir.Constant(element, value)
        return ir.Constant(ir.VectorType(element, self.lanes), [value] * self.lanes)

    # -- arithmetic -----------------------------------------------------------------------
    def add(self, a, b):
        return self.b.fadd(a, b)

    def sub(self, a, b):
        return self.b.fsub(a, b)

    def mul(self, a, b):
        return self.b.fmul(a, b)

    def div(self, a, b):
        return self.b.fdiv(a, b)

    def madd(self, a, b, c):
        """a·b + c: fused (one rounding) where the target has FMA and `fused` is set."""
        if self.fused:
            return intrinsic(self.b, "fmuladd", [a, b, c])
        return self.add(self.mul(a, b), c)

    def neg(self, a):
        return self.b.fneg(a)

    # -- comparisons and selection (ordered: false when either side is NaN) ----------------
    def lt(self, a, b):
        return self.b.fcmp_ordered("<", a, b)

    def gt(self, a, b):
        return self.b.fcmp_ordered(">", a, b)

    def le(self, a, b):
        return self.b.fcmp_ordered("<=", a, b)

    def ge(self, a, b):
        return self.b.fcmp_ordered(">=", a, b)

    def eq(self, a, b):
        return self.b.fcmp_ordered("==", a, b)

    def isnan(self, a):
        return self.b.fcmp_unordered("uno", a, a)

    def select(self, cond, a, b):
        return self.b.select(cond, a, b)

    def min_c(self, x, bound: float):
        """min(x, bound) keeping NaN."""
        return self.select(self.gt(x, self.c(bound)), self.c(bound), x)

    def min_or_bound(self, x, bound: float):
        """min(x, bound), NaN giving bound (one x86 minps)."""
        return self.select(self.lt(x, self.c(bound)), x, self.c(bound))

    def max_c(self, x, bound: float):
        """max(x, bound) keeping NaN."""
        return self.select(self.lt(x, self.c(bound)), self.c(bound), x)

    # -- intrinsics -----------------------------------------------------------------------
    def fabs(self, a):
        return intrinsic(self.b, "fabs", [a])

    def floor(self, a):
        return intrinsic(self.b, "floor", [a])

    def rint(self, a):
        return intrinsic(self.b, "rint", [a])

    def sqrt(self, a):
        return intrinsic(self.b, "sqrt", [a])

    def copysign(self, magnitude, sign):
        return intrinsic(self.b, "copysign", [magnitude, sign])

    # -- bits -----------------------------------------------------------------------------
    def bits(self, a):
        return self.b.bitcast(a, self.itype)

    def from_bits(self, i):
        return self.b.bitcast(i, self.ftype)

    def to_int(self, a):
        """fptosi for a value known to be an in-range integer, or NaN (which gives 0):
        fptosi of NaN is poison, which must never reach a select."""
        return self.b.fptosi(self.select(self.isnan(a), self.c(0.0), a), self.itype)

    def to_float(self, i):
        return self.b.sitofp(i, self.ftype)

    def pow2(self, k):
        """2^k for an integer k in the normal range ([-1022, 1023] for double)."""
        return self.from_bits(self.b.shl(self.b.add(k, self.ci(self.bias)),
                                         self.ci(self.mantissa)))

    def scale(self, y, k):
        """y·2^k for k in twice the normal range ([-2044, 2046] for double), rounding
        once: the two factors are normal, the first product exact, so results in the
        subnormal range and overflow come out right. Where the target has it, one
        `ldexp` (AVX-512's vscalef: the same single rounding, a third of the code)."""
        if self.native_ldexp:
            return intrinsic(self.b, "ldexp", [y, k], overloads=[self.ftype, self.itype])
        half = self.b.ashr(k, self.ci(1))
        return self.mul(self.mul(y, self.pow2(half)), self.pow2(self.b.sub(k, half)))

    def high_half(self, a):
        """`a` rounded to 26 significant bits, so that `a - high_half(a)` has at most
        26 too and products of two halves are exact (finite a below 2^1023); for
        float 12 bits."""
        low = self.mantissa - (self.mantissa - 1) // 2
        rounded = self.b.add(self.bits(a), self.ci(1 << (low - 1)))
        return self.from_bits(self.b.and_(rounded, self.ci(~((1 << low) - 1))))

    # -- polynomials and error-free transformations -----------------------------------------
    def horner(self, x, coeffs):
        """Σ coeffs[i]·x^i, Horner's scheme."""
        acc = self.c(coeffs[-1])
        for coefficient in reversed(coeffs[:-1]):
            acc = self.madd(acc, x, self.c(coefficient))
        return acc

    def two_sum(self, a, b):
        """(s, e) with s = fl(a + b) and s + e = a + b exactly (Knuth)."""
        s = self.add(a, b)
        bb = self.sub(s, a)
        e = self.add(self.sub(a, self.sub(s, bb)), self.sub(b, bb))
        return s, e

    def fast_two_sum(self, a, b):
        """two_sum for |a| >= |b| (or a = 0)."""
        s = self.add(a, b)
        return s, self.sub(b, self.sub(s, a))

    def two_prod(self, a, b):
        """(p, e) with p = fl(a·b) and p + e = a·b exactly, barring over/underflow
        (Dekker's product on 26-bit halves)."""
        p = self.mul(a, b)
        ah = self.high_half(a)
        bh = self.high_half(b)
        al = self.sub(a, ah)
        bl = self.sub(b, bh)
        e = self.sub(self.mul(ah, bh), p)
        e = self.add(e, self.mul(ah, bl))
        e = self.add(e, self.mul(al, bh))
        return p, self.add(e, self.mul(al, bl))

    def div_dd(self, n, n_lo, d, d_lo):
        """(n + n_lo)/(d + d_lo) for double-doubles, to ~2^-100 relative before the
        final rounding, with one division: q = n·(1/d) corrected by the exact
        remainder, q + (n - q·d + n_lo - q·d_lo)·(1/d)."""
        inverse = self.div(self.c(1.0), d)
        q = self.mul(n, inverse)
        p, p_lo = self.two_prod(q, d)
        remainder = self.add(self.sub(self.sub(n, p), p_lo),
                             self.sub(n_lo, self.mul(q, d_lo)))
        return self.add(q, self.mul(remainder, inverse))


def in_double(builder: ir.IRBuilder, x: ir.Value, kernel) -> ir.Value:
    """Run `kernel(lanes, xd, is_f32)` on x widened to double and round the result
    back once: f32 functions are evaluated in double with coefficient sets of f32
    accuracy, which makes them nearly correctly rounded at half the vector width."""
    lanes = Lanes(builder, lanes_of(x.type))
    is_f32 = element_of(x.type) == F32
    xd = builder.fpext(x, lanes.ftype) if is_f32 else x
    y = kernel(lanes, xd, is_f32)
    return builder.fptrunc(y, x.type) if is_f32 else y


def in_double2(builder: ir.IRBuilder, x: ir.Value, y: ir.Value, kernel) -> ir.Value:
    """`in_double` for a binary function."""
    lanes = Lanes(builder, lanes_of(x.type))
    is_f32 = element_of(x.type) == F32
    xd = builder.fpext(x, lanes.ftype) if is_f32 else x
    yd = builder.fpext(y, lanes.ftype) if is_f32 else y
    z = kernel(lanes, xd, yd, is_f32)
    return builder.fptrunc(z, x.type) if is_f32 else z
