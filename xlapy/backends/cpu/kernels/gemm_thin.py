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

Even one slow FMA in ten costs more than the rest together (a 0.3 ms MNIST
step where 0.03 ms would do), so a B with subnormals is first scaled by a
power of two out of their range: exact, and it makes every rounding finer,
never coarser (see `_scaled`). Flushing them to zero, as XLA's runtime does,
would change results.
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.backends.cpu.kernels.gemm_microkernel import (
    element_bytes,
    fma_intrinsic,
    gemm_type,
    internal_function,
    lane_mask,
    masked_load,
    splat,
)
from xlapy.backends.cpu.kernels.heap import aligned_malloc, free
from xlapy.codegen.loops import Accumulator, const, for_range

I32 = ir.IntType(32)
I64 = ir.IntType(64)
MAX_COLUMNS = 16
"""Widest N taken here; wider products amortise packing in the blocked kernel."""
GROUPS = (8, 4, 2, 1)
ACCUMULATORS = 8
"""Independent vector sums per tile: two FMA units, four cycles of latency each."""


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
    """void thin(gemm args): the column groups over B as it is, or over B scaled out of
    the subnormal range (`_scaled`) when it has subnormals."""
    name = f"xlapy_gemm_thin_{element}"
    if name in module.globals:
        return module.globals[name]
    fn, b = internal_function(module, gemm_type(element), name)
    m, n, k, a, a_rs, a_cs, b_mat, b_rs, b_cs, c, ldc = fn.args
    columns = _columns_function(module, element, lanes)
    subnormal, shift = _scan(b, element, k, n, b_mat, b_rs, b_cs)
    with b.if_else(b.and_(subnormal, b.icmp_signed(">", shift, const(0))),
                   likely=False) as (scaled, plain):
        with scaled:
            _scaled(b, element, columns, fn.args, shift)
        with plain:
            b.call(columns, list(fn.args))
    b.ret_void()
    return fn


def _float_layout(element: ir.Type) -> tuple[ir.IntType, int, int]:
    """(same-width integer, explicit significand bits, exponent bias)."""
    return (I64, 52, 1023) if isinstance(element, ir.DoubleType) else (I32, 23, 127)


def _scan(b: ir.IRBuilder, element, k, n, b_mat, b_rs, b_cs):
    """(B has a subnormal, the power-of-two shift s that centres B's exponent range on
    1), s clamped to [0, bias - 1] so that 2^s and 2^-s are normal numbers. Centring
    (rather than taking max|B| to 1) also keeps products of B's smallest values with
    A's ordinary ones out of the subnormal range."""
    integer, mantissa, bias = _float_layout(element)
    fabs = b.module.declare_intrinsic("llvm.fabs", [element])
    smallest_normal = ir.Constant(element, 2.0 ** (1 - bias))
    zero = ir.Constant(element, 0.0)
    biggest = b.alloca(element, name="biggest")
    smallest = b.alloca(element, name="smallest")
    b.store(zero, biggest)
    b.store(ir.Constant(element, float("inf")), smallest)
    with for_range(b, const(0), k, name="sk") as kk:
        row = b.gep(b_mat, [b.mul(kk, b_rs)])
        with for_range(b, const(0), n, name="sj") as j:
            value = b.call(fabs, [b.load(b.gep(row, [b.mul(j, b_cs)]))])
            top = b.load(biggest)
            b.store(b.select(b.fcmp_ordered(">", value, top), value, top), biggest)
            low = b.load(smallest)
            lower = b.and_(b.fcmp_ordered("<", value, low), b.fcmp_ordered(">", value, zero))
            b.store(b.select(lower, value, low), smallest)
    low = b.load(smallest)
    subnormal = b.fcmp_ordered("<", low, smallest_normal)

    def exponent(value):  # unbiased; a subnormal counts as the smallest, 2^(1-bias-mantissa)
        field = b.lshr(b.bitcast(value, integer), ir.Constant(integer, mantissa))
        field = b.zext(field, I64) if integer is I32 else field
        return b.select(b.icmp_signed("==", field, const(0)), const(1 - bias - mantissa),
                        b.sub(field, const(bias)))

    shift = b.sdiv(b.neg(b.add(exponent(low), exponent(b.load(biggest)))), const(2))
    shift = b.select(b.icmp_signed(">", shift, const(bias - 1)), const(bias - 1), shift)
    return subnormal, shift


def _power_of_two(b: ir.IRBuilder, element, exponent) -> ir.Value:
    """2^exponent (an i64 in the normal range) as `element`."""
    integer, mantissa, bias = _float_layout(element)
    biased = b.add(exponent, const(bias))
    if integer is I32:
        biased = b.trunc(biased, I32)
    return b.bitcast(b.shl(biased, ir.Constant(integer, mantissa)), element)


def _scaled(b: ir.IRBuilder, element, columns: ir.Function, args, shift) -> None:
    """C = (A @ (B·2^s))·2^-s. Scaling by a power of two is exact, so this is the
    product with every partial sum 2^s larger: none is subnormal, no FMA is slow,
    and the roundings are never coarser than the unscaled ones. Should the scaled
    sums overflow (a huge A), or B hold NaN, C is computed again from B unscaled.
    Without memory for the scaled copy, B is used as it is."""
    m, n, k, a, a_rs, a_cs, b_mat, b_rs, b_cs, c, ldc = args
    raw, packed = aligned_malloc(b, b.mul(k, n), element)
    with b.if_else(b.icmp_unsigned("==", raw, ir.Constant(raw.type, None)),
                   likely=False) as (no_memory, copied):
        with no_memory:
            b.call(columns, list(args))
        with copied:
            up = _power_of_two(b, element, shift)
            with for_range(b, const(0), k, name="ck") as kk:
                row = b.gep(b_mat, [b.mul(kk, b_rs)])
                out = b.gep(packed, [b.mul(kk, n)])
                with for_range(b, const(0), n, name="cj") as j:
                    value = b.load(b.gep(row, [b.mul(j, b_cs)]))
                    b.store(b.fmul(value, up), b.gep(out, [j]))
            b.call(columns, [m, n, k, a, a_rs, a_cs, packed, n, const(1), c, ldc])
            free(b, raw)
            with b.if_then(b.not_(_rescale(b, element, m, n, c, ldc, shift)), likely=False):
                b.call(columns, list(args))


def _rescale(b: ir.IRBuilder, element, m, n, c, ldc, shift) -> ir.Value:
    """C *= 2^-s (one rounding per element); returns whether every element is finite."""
    fabs = b.module.declare_intrinsic("llvm.fabs", [element])
    down = _power_of_two(b, element, b.neg(shift))
    finite = b.alloca(ir.IntType(1), name="finite")
    b.store(ir.Constant(ir.IntType(1), 1), finite)
    with for_range(b, const(0), m, name="ri") as i:
        row = b.gep(c, [b.mul(i, ldc)])
        with for_range(b, const(0), n, name="rj") as j:
            slot = b.gep(row, [j])
            value = b.load(slot)
            ok = b.fcmp_ordered("<", b.call(fabs, [value]), ir.Constant(element, float("inf")))
            b.store(b.and_(b.load(finite), ok), finite)
            b.store(b.fmul(value, down), slot)
    return b.load(finite)


def _columns_function(module: ir.Module, element: ir.Type, lanes: int) -> ir.Function:
    """void columns(gemm args): column groups of 8, 4, 2, 1 until N is covered."""
    name = f"xlapy_gemm_thin_columns_{element}"
    if name in module.globals:
        return module.globals[name]
    fn, b = internal_function(module, gemm_type(element), name)
    m, n, k, a, _a_rs, a_cs, b_mat, b_rs, b_cs, c, ldc = fn.args
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
    C[:, 0:cols] = A @ B[:, 0:cols], A column-major (rows adjacent). Tiles span
    ACCUMULATORS / cols vectors along M, so narrow groups keep as many independent
    sums in flight as wide ones (one column's sums alone would wait on each FMA's
    latency); the rows left over go a vector at a time, the last one masked."""
    name = f"xlapy_gemm_thin{cols}_{element}"
    if name in module.globals:
        return module.globals[name]
    ptr = element.as_pointer()
    signature = ir.FunctionType(ir.VoidType(), [I64, I64, ptr, I64, ptr, I64, I64, ptr, I64])
    fn, b = internal_function(module, signature, name)
    m, k, a, a_cs, b_mat, b_rs, b_cs, c, ldc = fn.args
    operands = (k, a, a_cs, b_mat, b_rs, b_cs, c, ldc)
    span = max(1, ACCUMULATORS // cols) * lanes
    wide = b.mul(b.sdiv(m, const(span)), const(span))
    with for_range(b, const(0), wide, const(span), name="mt") as m0:
        _tile(b, element, lanes, cols, span // lanes, m0, None, lanes, *operands)
    single = b.mul(b.sdiv(m, const(lanes)), const(lanes))
    with for_range(b, wide, single, const(lanes), name="mv") as m0:
        _tile(b, element, lanes, cols, 1, m0, None, lanes, *operands)
    rest = b.sub(m, single)
    with b.if_then(b.icmp_signed(">", rest, const(0))):
        _tile(b, element, lanes, cols, 1, single, lane_mask(b, rest, lanes), rest, *operands)
    b.ret_void()
    return fn


def _tile(b: ir.IRBuilder, element, lanes: int, cols: int, vectors: int, m0, mask, rows, k,
          a, a_cs, b_mat, b_rs, b_cs, c, ldc) -> None:
    """C[m0 : m0 + vectors·lanes (or rows, masked), 0:cols]: vectors x cols sums over k,
    then stored lane by lane."""
    vector = ir.VectorType(element, lanes)
    fma = fma_intrinsic(b.module, vector)
    align = element_bytes(element)
    zero = ir.Constant(vector, None)
    accs = [[Accumulator(b, zero, name=f"t{v}_{j}") for j in range(cols)]
            for v in range(vectors)]
    with for_range(b, const(0), k, name="kt") as kk:
        for acc in (x for row in accs for x in row):
            acc.enter()
        base = b.add(b.mul(kk, a_cs), m0)
        columns = []
        for v in range(vectors):
            source = b.bitcast(b.gep(a, [b.add(base, const(v * lanes))]), vector.as_pointer())
            columns.append(b.load(source, align=align) if mask is None
                           else masked_load(b, source, mask, align))
        row = b.gep(b_mat, [b.mul(kk, b_rs)])
        for j in range(cols):
            scalar = splat(b, b.load(b.gep(row, [b.mul(const(j), b_cs)])), lanes)
            for v in range(vectors):
                accs[v][j].set(b.call(fma, [columns[v], scalar, accs[v][j].value]))
        for acc in (x for row in accs for x in row):
            acc.close()
    results = [[acc.result(b) for acc in row] for row in accs]   # the exit block's phis first
    for v, sums in enumerate(results):
        first = b.add(m0, const(v * lanes))
        if mask is None:
            for lane in range(lanes):
                out = b.gep(c, [b.mul(b.add(first, const(lane)), ldc)])
                for j, total in enumerate(sums):
                    b.store(b.extract_element(total, ir.Constant(I32, lane)),
                            b.gep(out, [const(j)]))
            continue
        with for_range(b, const(0), rows, name="lane") as lane:
            out = b.gep(c, [b.mul(b.add(first, lane), ldc)])
            for j, total in enumerate(sums):
                b.store(b.extract_element(total, lane), b.gep(out, [const(j)]))
