"""The simple GEMM: a plain loop nest for every element type the blocked kernel skips.

Arithmetic is the interpreter's dot (`interpreter/linalg.py`): f16 and bf16
widen to f32, sum there and round once to the result; integers multiply and
add with wrap-around in their own width (the same bits as summing in 64 bits
and wrapping once); pred is the OR of ANDs; complex values are (re, im)
pairs summed in their part type. f32/f64 use it only when the blocked
kernel cannot get its buffers.

Loop order: rows of C, then strips of `_STRIP` columns, k innermost with one
accumulator per column of the strip, so each A value is loaded once per strip
and nothing but registers holds partial sums (no buffers, so no failure).
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.backends.cpu.kernels.gemm_blocked import gemm_type
from xlapy.codegen import ir_types
from xlapy.codegen.loops import Accumulator, const, for_range
from xlapy.hlo.dtypes import PrimitiveType as P

_STRIP = 4


def simple_gemm(module: ir.Module, ptype: P, name: str) -> ir.Function:
    """Single-threaded `gemm_type` loop nest for `ptype`, emitted once per module."""
    if name in module.globals:
        return module.globals[name]
    ir_types.check_native(ptype, "dot")
    fn = ir.Function(module, gemm_type(ir_types.storage_type(ptype)), name)
    fn.linkage = "internal"
    m, n, k, a, a_rs, a_cs, b_mat, b_rs, b_cs, c, ldc = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    n_strips = b.mul(b.sdiv(n, const(_STRIP)), const(_STRIP))
    with for_range(b, const(0), m, name="m") as i:
        a_row = b.gep(a, [b.mul(i, a_rs)])
        c_row = b.gep(c, [b.mul(i, ldc)])
        operands = (k, a_row, a_cs, b_mat, b_rs, b_cs, c_row)
        with for_range(b, const(0), n_strips, const(_STRIP), name="n") as j:
            _strip(b, ptype, _STRIP, j, *operands)
        with for_range(b, n_strips, n, name="nr") as j:
            _strip(b, ptype, 1, j, *operands)
    b.ret_void()
    return fn


def _strip(b: ir.IRBuilder, ptype: P, width: int, j, k, a_row, a_cs, b_mat, b_rs, b_cs,
           c_row) -> None:
    """C[i, j:j+width] = sum over k of A[i, k] * B[k, j:j+width]."""
    zero = ir_types.constant(ptype, 0)
    accs = [_accumulators(b, zero, u) for u in range(width)]
    b_cols = b.gep(b_mat, [b.mul(j, b_cs)])
    with for_range(b, const(0), k, name="k") as kk:
        for parts in accs:
            for acc in parts:
                acc.enter()
        a_value = ir_types.load(b, b.gep(a_row, [b.mul(kk, a_cs)]), ptype)
        b_row = b.gep(b_cols, [b.mul(kk, b_rs)])
        for u, parts in enumerate(accs):
            b_value = ir_types.load(b, b.gep(b_row, [b.mul(const(u), b_cs)]), ptype)
            total = _multiply_add(b, ptype, _values(parts), a_value, b_value)
            for acc, value in zip(parts, total if isinstance(total, tuple) else (total,)):
                acc.set(value)
        for parts in accs:
            for acc in parts:
                acc.close()
    results = [[acc.result(b) for acc in parts] for parts in accs]  # phis first
    for u, parts in enumerate(results):
        value = tuple(parts) if len(parts) == 2 else parts[0]
        ir_types.store(b, value, b.gep(c_row, [b.add(j, const(u))]), ptype)


def _accumulators(b: ir.IRBuilder, zero, u: int) -> list[Accumulator]:
    if isinstance(zero, tuple):
        return [Accumulator(b, zero[0], name=f"re{u}"), Accumulator(b, zero[1], name=f"im{u}")]
    return [Accumulator(b, zero, name=f"acc{u}")]


def _values(parts: list[Accumulator]):
    return tuple(acc.value for acc in parts) if len(parts) == 2 else parts[0].value


def _multiply_add(b: ir.IRBuilder, ptype: P, acc, x, y):
    """acc + x * y in the compute form (unfused: exactly a multiply, then an add)."""
    if ptype in (P.C64, P.C128):
        (acc_re, acc_im), (x_re, x_im), (y_re, y_im) = acc, x, y
        re = b.fsub(b.fmul(x_re, y_re), b.fmul(x_im, y_im))
        im = b.fadd(b.fmul(x_re, y_im), b.fmul(x_im, y_re))
        return b.fadd(acc_re, re), b.fadd(acc_im, im)
    if ptype is P.PRED:
        return b.or_(acc, b.and_(x, y))
    if isinstance(acc.type, ir.IntType):
        return b.add(acc, b.mul(x, y))
    return b.fadd(acc, b.fmul(x, y))
