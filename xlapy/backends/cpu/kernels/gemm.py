"""GEMM in LLVM IR: C = A @ B for any strides, every numeric element type, on threads.

`gemm_function(module, dtype, threads)` emits (once per module, dtype and
thread count) the function the dot emitter calls:

    void gemm(i64 M, i64 N, i64 K,
              T* A, i64 a_row_stride, i64 a_col_stride,    A[m, k] = A[m * rs + k * cs]
              T* B, i64 b_row_stride, i64 b_col_stride,    B[k, n]
              T* C, i64 ldc)                                C[m, n] = C[m * ldc + n]

Strides are in elements and may be anything (transposes, slices, negative,
0 along a dimension of size 1); C is overwritten (K = 0 gives zeros) and
must not overlap A or B. f32 and f64 run the packed, blocked, vectorised
kernel (`gemm_blocked`, with `gemm_gemv` for matrix-vector shapes); the
other types a simple loop nest (`gemm_simple`) with the interpreter's
accumulation rules. When the product is big enough to pay for thread
start-up, C is cut into `threads` bands of whole micro-tiles along N (or
along M when M has more tiles) and each thread runs the single-threaded
kernel on its band with its own packing buffers.

Rounding: f32/f64 products are fused multiply-adds summed in the element
type, in an order fixed by the blocking (deterministic for a given machine
and thread count; threads split C, never a sum).
"""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np

from xlapy.backends.cpu import parallel
from xlapy.backends.cpu.kernels.gemm_blocked import blocked_gemm, gemm_type, imin
from xlapy.backends.cpu.kernels.gemm_microkernel import blocking, short_rows, vector_bits
from xlapy.backends.cpu.kernels.gemm_simple import simple_gemm
from xlapy.codegen import ir_types
from xlapy.codegen.loops import const
from xlapy.hlo.dtypes import PrimitiveType as P

I32 = ir.IntType(32)
I64 = ir.IntType(64)
I8P = ir.IntType(8).as_pointer()

MACS_PER_THREAD = 1 << 16
"""Multiply-adds a thread must get before handing it a band (~2 us on the pool)
pays: the kernels do 2-10e9 of them per second and core, so 64k take 5-30 us."""


def gemm_function(module: ir.Module, dtype, threads: int) -> ir.Function:
    """The `gemm` for NumPy dtype `dtype` using up to `threads` threads (internal linkage)."""
    ptype = P.from_numpy(dtype)
    ir_types.check_native(ptype, "dot")
    name = f"xlapy_gemm_{ptype.value}_t{threads}"
    if name in module.globals:
        return module.globals[name]
    serial, tile_m, tile_n = _serial_gemm(module, ptype)
    if threads <= 1:
        return serial
    return _threaded(module, name, serial, threads, tile_m, tile_n)


def _serial_gemm(module: ir.Module, ptype: P) -> tuple[ir.Function, int, int]:
    """The single-threaded kernel for `ptype` and its tile (the unit bands are cut in)."""
    simple = simple_gemm(module, ptype, f"xlapy_gemm_{ptype.value}_simple")
    if ptype not in (P.F32, P.F64):
        return simple, 1, 1
    element = ir_types.storage_type(ptype)
    blk = blocking(np.dtype(ptype.numpy).itemsize, vector_bits(module))
    fn = blocked_gemm(module, element, blk, f"xlapy_gemm_{ptype.value}_blocked", simple)
    # bands of M are cut at the shortest tile's rows: 1024 rows are two bands of 512
    # (42 tiles of 12 and one of 8 each), not 516 and 508 (43 tiles each)
    return fn, min([blk.mr, *short_rows(blk)]), blk.nr


def _threaded(module: ir.Module, name: str, serial: ir.Function, threads: int, tile_m: int,
              tile_n: int) -> ir.Function:
    """gemm that runs `serial` on bands of C in parallel when the product is big enough."""
    element = serial.args[3].type.pointee
    context = ir.LiteralStructType(list(gemm_type(element).args) + [I64] * 3)
    task = _band_task(module, f"{name}.band", serial, context, tile_m, tile_n)
    fn = ir.Function(module, gemm_type(element), name)
    fn.linkage = "internal"
    m, n, k = fn.args[:3]
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    work = b.mul(b.mul(m, n), k)
    count = imin(b, const(threads), b.sdiv(work, const(MACS_PER_THREAD)))
    with b.if_then(b.icmp_signed("<", count, const(2))):
        b.call(serial, fn.args)
        b.ret_void()
    tiles_m = _ceil_div(b, m, tile_m)
    tiles_n = _ceil_div(b, n, tile_n)
    # Every band packs all of the operand it does not cut (B across bands of M,
    # A across bands of N): cut the dimension whose uncut operand is smaller,
    # by elements, not tiles (a 100x784 @ 784x128 cuts N: A is read in place);
    # a square product cuts M
    split_n = b.and_(b.icmp_signed(">", n, m), b.icmp_signed(">=", tiles_n, const(2)))
    split_n = b.or_(split_n, b.icmp_signed("<", tiles_m, const(2)))
    tiles = b.select(split_n, tiles_n, tiles_m)
    count = imin(b, count, tiles)
    ctx = b.alloca(context)
    for field, value in enumerate(list(fn.args) + [b.zext(split_n, I64), tiles, count]):
        b.store(value, b.gep(ctx, [const(0), ir.Constant(I32, field)]))
    # one band per thread (n = count: the pool cuts no finer): each band packs the
    # operand it does not cut, so more bands would pack it more times
    b.call(parallel.parallel_for(module), [task, b.bitcast(ctx, I8P), count, count])
    b.ret_void()
    return fn


def _band_task(module: ir.Module, name: str, serial: ir.Function, context: ir.Type,
               tile_m: int, tile_n: int) -> ir.Function:
    """task(ctx, begin, end): the gemm of bands [begin, end), each an equal share of
    the tiles of N (or of M)."""
    fn = ir.Function(module, parallel.TASK_TYPE, name)
    fn.linkage = "internal"
    ctx_raw, first_band, last_band = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ctx = b.bitcast(ctx_raw, context.as_pointer())
    m, n, k, a, a_rs, a_cs, b_mat, b_rs, b_cs, c, ldc, split_n, tiles, count = (
        b.load(b.gep(ctx, [const(0), ir.Constant(I32, i)])) for i in range(14))
    begin = b.sdiv(b.mul(first_band, tiles), count)
    end = b.sdiv(b.mul(last_band, tiles), count)
    with b.if_else(b.trunc(split_n, ir.IntType(1))) as (along_n, along_m):
        with along_n:
            start = b.mul(begin, const(tile_n))
            stop = imin(b, b.mul(end, const(tile_n)), n)
            b.call(serial, [m, b.sub(stop, start), k, a, a_rs, a_cs,
                            b.gep(b_mat, [b.mul(start, b_cs)]), b_rs, b_cs,
                            b.gep(c, [start]), ldc])
        with along_m:
            start = b.mul(begin, const(tile_m))
            stop = imin(b, b.mul(end, const(tile_m)), m)
            b.call(serial, [b.sub(stop, start), n, k, b.gep(a, [b.mul(start, a_rs)]), a_rs,
                            a_cs, b_mat, b_rs, b_cs, b.gep(c, [b.mul(start, ldc)]), ldc])
    b.ret_void()
    return fn


def _ceil_div(b: ir.IRBuilder, x: ir.Value, d: int) -> ir.Value:
    return b.sdiv(b.add(x, const(d - 1)), const(d))
