"""Matrix-vector products (GEMM with M = 1 or N = 1), vectorised without packing.

A product with one output row or column is y[i] = sum_k X[i, k] * v[k]
(N = 1: X = A, v = B's column, y = C's column; M = 1: X = B transposed,
v = A's row, y = C's row). Each element of X is used once, so packing
would only add memory traffic and the blocked kernel's register tile would
be mostly padding. Two loop shapes, chosen by X's layout:

    dot form   (X and v contiguous along k)   vectors along k, a few rows at a
               time, each row's vector of partial sums added up at the end
    axpy form  (X and y contiguous along i)   vectors along i: y += X[:, k:k+8] @
               v[k:k+8] for each group of 8 columns, masked at the end of i

Any other layout goes back to the caller (`gemv` returns "not handled").
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.backends.cpu.kernels.gemm_microkernel import (
    element_bytes,
    fma_intrinsic,
    internal_function,
    lane_mask,
    masked_load,
    masked_store,
    splat,
)
from xlapy.codegen.loops import Accumulator, const, for_range

I1 = ir.IntType(1)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
_ROWS = 4
"""Rows of X per dot-form step (each with two vector accumulators)."""
_COLUMNS = 8
"""Columns of X per axpy-form pass over y."""


def gemv(b: ir.IRBuilder, lanes: int, args) -> ir.Value:
    """Emit the M = 1 / N = 1 cases of gemm `args`; returns an i1 that is true when
    the product was computed here (false: the layout fits neither form)."""
    m, n, k, a, a_rs, a_cs, b_mat, b_rs, b_cs, c, ldc = args
    # N = 1: X = A (rows i, stride a_rs; along k a_cs), v = B[:, 0] (stride b_rs), y stride ldc.
    # M = 1: X = B^T (rows i = columns of B, stride b_cs; along k b_rs), v = A[0, :], y stride 1.
    column = b.icmp_signed("==", n, const(1))
    rows = b.select(column, m, n)
    x = b.select(column, a, b_mat)
    x_is = b.select(column, a_rs, b_cs)
    x_ks = b.select(column, a_cs, b_rs)
    v = b.select(column, b_mat, a)
    v_s = b.select(column, b_rs, a_cs)
    y_s = b.select(column, ldc, const(1))
    vector_case = b.or_(column, b.icmp_signed("==", m, const(1)))
    one = const(1)
    dot_form = b.and_(vector_case, b.and_(b.icmp_signed("==", x_ks, one),
                                          b.icmp_signed("==", v_s, one)))
    axpy_form = b.and_(vector_case, b.and_(b.icmp_signed("==", x_is, one),
                                           b.icmp_signed("==", y_s, one)))
    element = a.type.pointee
    with b.if_then(dot_form):
        b.call(_dot_form(b.module, element, lanes), [rows, k, x, x_is, v, c, y_s])
    with b.if_then(b.and_(axpy_form, b.not_(dot_form))):
        b.call(_axpy_form(b.module, element, lanes), [rows, k, x, x_ks, v, v_s, c])
    return b.or_(dot_form, axpy_form)


def _dot_form(module: ir.Module, element: ir.Type, lanes: int) -> ir.Function:
    """void dot(i64 rows, i64 k, T* x, i64 x_is, T* v, T* y, i64 y_s): y[i] = x[i, :] . v"""
    name = f"xlapy_gemv_dot_{element}"
    if name in module.globals:
        return module.globals[name]
    ptr = element.as_pointer()
    fn, b = internal_function(
        module, ir.FunctionType(ir.VoidType(), [I64, I64, ptr, I64, ptr, ptr, I64]), name)
    rows, k, x, x_is, v, y, y_s = fn.args
    body = b.mul(b.sdiv(rows, const(_ROWS)), const(_ROWS))
    with for_range(b, const(0), body, const(_ROWS), name="i") as i:
        _dot_rows(b, element, lanes, _ROWS, i, k, x, x_is, v, y, y_s)
    with for_range(b, body, rows, name="it") as i:
        _dot_rows(b, element, lanes, 1, i, k, x, x_is, v, y, y_s)
    b.ret_void()
    return fn


def _dot_rows(b: ir.IRBuilder, element, lanes: int, count: int, i, k, x, x_is, v, y,
              y_s) -> None:
    """y[i:i+count]: two interleaved vector sums per row over whole 2W-steps of k, the
    rest of k as two masked vectors, then each row's vector added up across lanes."""
    vector = ir.VectorType(element, lanes)
    fma = fma_intrinsic(b.module, vector)
    align = element_bytes(element)
    row_ptrs = [b.gep(x, [b.mul(b.add(i, const(r)), x_is)]) for r in range(count)]
    step = 2 * lanes
    body = b.mul(b.sdiv(k, const(step)), const(step))
    zero = ir.Constant(vector, None)
    accs = [[Accumulator(b, zero, name=f"d{r}_{u}") for u in range(2)] for r in range(count)]
    with for_range(b, const(0), body, const(step), name="kk") as kk:
        for acc in (a for row in accs for a in row):
            acc.enter()
        for u in range(2):
            offset = b.add(kk, const(u * lanes))
            v_vec = b.load(_vector_at(b, vector, v, offset), align=align)
            for r in range(count):
                x_vec = b.load(_vector_at(b, vector, row_ptrs[r], offset), align=align)
                accs[r][u].set(b.call(fma, [x_vec, v_vec, accs[r][u].value]))
        for acc in (a for row in accs for a in row):
            acc.close()
    sums = [[acc.result(b) for acc in row] for row in accs]
    for u in range(2):
        offset = b.add(body, const(u * lanes))
        mask = lane_mask(b, b.sub(k, offset), lanes)
        v_vec = masked_load(b, _vector_at(b, vector, v, offset), mask, align)
        for r in range(count):
            x_vec = masked_load(b, _vector_at(b, vector, row_ptrs[r], offset), mask, align)
            sums[r][u] = b.call(fma, [x_vec, v_vec, sums[r][u]])
    for r in range(count):
        total = horizontal_sum(b, b.fadd(sums[r][0], sums[r][1]))
        b.store(total, b.gep(y, [b.mul(b.add(i, const(r)), y_s)]))


def horizontal_sum(b: ir.IRBuilder, vector: ir.Value) -> ir.Value:
    """The lanes of `vector` added as a balanced tree (a fixed order: deterministic)."""
    width = vector.type.count
    while width > 1:
        width //= 2
        low = b.shuffle_vector(vector, vector, ir.Constant(ir.VectorType(I32, width),
                                                           list(range(width))))
        high = b.shuffle_vector(vector, vector, ir.Constant(ir.VectorType(I32, width),
                                                            list(range(width, 2 * width))))
        vector = b.fadd(low, high)
    return b.extract_element(vector, ir.Constant(I32, 0))


def _axpy_form(module: ir.Module, element: ir.Type, lanes: int) -> ir.Function:
    """void axpy(i64 rows, i64 k, T* x, i64 x_ks, T* v, i64 v_s, T* y):
    y[i] = sum over k of x[i + k * x_ks] * v[k * v_s].

    y is zeroed, then each pass adds `_COLUMNS` columns of x times their v values
    down all of y: x is read in a few long unit-stride streams and y stays in
    cache between passes."""
    name = f"xlapy_gemv_axpy_{element}"
    if name in module.globals:
        return module.globals[name]
    ptr = element.as_pointer()
    fn, b = internal_function(
        module, ir.FunctionType(ir.VoidType(), [I64, I64, ptr, I64, ptr, I64, ptr]), name)
    rows, k, x, x_ks, v, v_s, y = fn.args
    with for_range(b, const(0), rows, name="z") as i:
        b.store(ir.Constant(element, 0), b.gep(y, [i]))
    body = b.mul(b.sdiv(k, const(_COLUMNS)), const(_COLUMNS))
    with for_range(b, const(0), body, const(_COLUMNS), name="kb") as kb:
        _axpy_pass(b, element, lanes, _COLUMNS, kb, rows, x, x_ks, v, v_s, y)
    with for_range(b, body, k, name="kt") as kt:
        _axpy_pass(b, element, lanes, 1, kt, rows, x, x_ks, v, v_s, y)
    b.ret_void()
    return fn


def _axpy_pass(b: ir.IRBuilder, element, lanes: int, columns: int, k0, rows, x, x_ks, v, v_s,
               y) -> None:
    """y += x[:, k0 : k0 + columns] @ v[k0 : k0 + columns], whole vectors then a masked one."""
    vector = ir.VectorType(element, lanes)
    fma = fma_intrinsic(b.module, vector)
    align = element_bytes(element)
    ks = [b.add(k0, const(c)) for c in range(columns)]
    scales = [splat(b, b.load(b.gep(v, [b.mul(kk, v_s)])), lanes) for kk in ks]
    cols = [b.gep(x, [b.mul(kk, x_ks)]) for kk in ks]

    def update(i, mask):
        def load(base):
            ptr = _vector_at(b, vector, base, i)
            return b.load(ptr, align=align) if mask is None else masked_load(b, ptr, mask, align)

        total = load(y)
        for col, scale in zip(cols, scales):
            total = b.call(fma, [load(col), scale, total])
        ptr = _vector_at(b, vector, y, i)
        if mask is None:
            b.store(total, ptr, align=align)
        else:
            masked_store(b, total, ptr, mask, align)

    body = b.mul(b.sdiv(rows, const(lanes)), const(lanes))
    with for_range(b, const(0), body, const(lanes), name="iv") as i:
        update(i, None)
    with b.if_then(b.icmp_signed("<", body, rows)):
        update(body, lane_mask(b, b.sub(rows, body), lanes))


def _vector_at(b: ir.IRBuilder, vector: ir.VectorType, base, offset) -> ir.Value:
    return b.bitcast(b.gep(base, [offset]), vector.as_pointer())
