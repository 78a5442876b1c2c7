"""Products with few output columns whose A runs contiguously down its rows.

C = A @ B with N <= `MAX_COLUMNS` and A's rows adjacent in memory (a_rs = 1:
A is a transposed view, as in a weight gradient x.T @ g) is computed with
vectors along M: for each block of `lanes` rows,

    acc[j] += A[m:m+lanes, k] * B[k, n0 + j]      for every k, j < cols

so every vector load of A is unit-stride and B contributes broadcast scalars.
The blocked kernel would instead broadcast A and load short, padded rows of B.
Besides wasting the padding, that makes every FMA touch a whole row of B: when
B holds subnormal numbers (a softmax gradient deep in training does), nearly
every FMA then takes the CPU's slow microcode path; here only those whose own
scalar is subnormal do, as in OpenBLAS. Columns go in groups of 8, 4, 2 and 1
(compile-time widths: no padding), rows in whole vectors then one masked
vector; C's tile is stored back element by element (its rows are ldc apart).
Each C element is one sum over k in order, with FMAs (as the blocked kernel).
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.backends.cpu.kernels.gemm_microkernel import (
    element_bytes,
    fma_intrinsic,
    lane_mask,
    masked_load,
    splat,
)
from xlapy.backends.cpu.loops import Accumulator, const, for_range

I32 = ir.IntType(32)
I64 = ir.IntType(64)
MAX_COLUMNS = 16
"""Widest N taken here; wider products amortise packing in the blocked kernel."""
GROUPS = (8, 4, 2, 1)


def thin(b: ir.IRBuilder, lanes: int, args) -> ir.Value:
    """Emit the thin-N case of gemm `args`; returns an i1 that is true when the
    product was computed here (false: N too wide, M too short or A not column-major)."""
    m, n, _k, _a, a_rs, *_ = args
    suits = b.and_(b.icmp_signed("==", a_rs, const(1)),
                   b.and_(b.icmp_signed("<=", n, const(MAX_COLUMNS)),
                          b.icmp_signed(">=", m, const(lanes))))
    element = args[3].type.pointee
    with b.if_then(suits):
        b.call(_thin_function(b.module, element, lanes), list(args))
    return suits


def _thin_function(module: ir.Module, element: ir.Type, lanes: int) -> ir.Function:
    """void thin(gemm args): column groups of 8, 4, 2, 1 until N is covered."""
    name = f"xlapy_gemm_thin_{element}"
    if name in module.globals:
        return module.globals[name]
    ptr = element.as_pointer()
    signature = ir.FunctionType(ir.VoidType(), [I64, I64, I64, ptr, I64, I64, ptr, I64, I64,
                                                ptr, I64])
    fn = ir.Function(module, signature, name)
    fn.linkage = "internal"
    m, n, k, a, _a_rs, a_cs, b_mat, b_rs, b_cs, c, ldc = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    done = b.alloca(I64, name="done")
    b.store(const(0), done)
    for cols in GROUPS:
        group = _group_function(module, element, lanes, cols)
        # Groups of 8 while 8 columns remain; then at most one each of 4, 2, 1.
        if cols == GROUPS[0]:
            whole = b.mul(b.sdiv(n, const(cols)), const(cols))
            with for_range(b, const(0), whole, const(cols), name="n8") as n0:
                b.call(group, [m, k, a, a_cs, b.gep(b_mat, [b.mul(n0, b_cs)]), b_rs, b_cs,
                               b.gep(c, [n0]), ldc])
            b.store(whole, done)
            continue
        n0 = b.load(done)
        with b.if_then(b.icmp_signed(">=", b.sub(n, n0), const(cols))):
            b.call(group, [m, k, a, a_cs, b.gep(b_mat, [b.mul(n0, b_cs)]), b_rs, b_cs,
                           b.gep(c, [n0]), ldc])
            b.store(b.add(n0, const(cols)), done)
    b.ret_void()
    return fn


def _group_function(module: ir.Module, element: ir.Type, lanes: int, cols: int) -> ir.Function:
    """void group(i64 m, i64 k, T* a, i64 a_cs, T* b, i64 b_rs, i64 b_cs, T* c, i64 ldc):
    C[:, 0:cols] = A @ B[:, 0:cols], A column-major (rows adjacent)."""
    name = f"xlapy_gemm_thin{cols}_{element}"
    if name in module.globals:
        return module.globals[name]
    ptr = element.as_pointer()
    signature = ir.FunctionType(ir.VoidType(), [I64, I64, ptr, I64, ptr, I64, I64, ptr, I64])
    fn = ir.Function(module, signature, name)
    fn.linkage = "internal"
    m, k, a, a_cs, b_mat, b_rs, b_cs, c, ldc = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    body = b.mul(b.sdiv(m, const(lanes)), const(lanes))
    with for_range(b, const(0), body, const(lanes), name="mv") as m0:
        _tile(b, element, lanes, cols, m0, None, lanes, k, a, a_cs, b_mat, b_rs, b_cs, c, ldc)
    rest = b.sub(m, body)
    with b.if_then(b.icmp_signed(">", rest, const(0))):
        _tile(b, element, lanes, cols, body, lane_mask(b, rest, lanes), rest, k, a, a_cs,
              b_mat, b_rs, b_cs, c, ldc)
    b.ret_void()
    return fn


def _tile(b: ir.IRBuilder, element, lanes: int, cols: int, m0, mask, rows, k, a, a_cs,
          b_mat, b_rs, b_cs, c, ldc) -> None:
    """C[m0 : m0 + rows, 0:cols]: `cols` vector sums over k, then stored lane by lane."""
    vector = ir.VectorType(element, lanes)
    fma = fma_intrinsic(b.module, vector)
    align = element_bytes(element)
    zero = ir.Constant(vector, None)
    accs = [Accumulator(b, zero, name=f"t{j}") for j in range(cols)]
    with for_range(b, const(0), k, name="kt") as kk:
        for acc in accs:
            acc.enter()
        source = b.bitcast(b.gep(a, [b.add(b.mul(kk, a_cs), m0)]), vector.as_pointer())
        column = b.load(source, align=align) if mask is None \
            else masked_load(b, source, mask, align)
        row = b.gep(b_mat, [b.mul(kk, b_rs)])
        for j, acc in enumerate(accs):
            scalar = b.load(b.gep(row, [b.mul(const(j), b_cs)]))
            acc.set(b.call(fma, [column, splat(b, scalar, lanes), acc.value]))
        for acc in accs:
            acc.close()
    sums = [acc.result(b) for acc in accs]
    if mask is None:
        for lane in range(lanes):
            out = b.gep(c, [b.mul(b.add(m0, const(lane)), ldc)])
            for j, total in enumerate(sums):
                b.store(b.extract_element(total, ir.Constant(I32, lane)),
                        b.gep(out, [const(j)]))
        return
    with for_range(b, const(0), rows, name="lane") as lane:
        out = b.gep(c, [b.mul(b.add(m0, lane), ldc)])
        for j, total in enumerate(sums):
            b.store(b.extract_element(total, lane), b.gep(out, [const(j)]))
