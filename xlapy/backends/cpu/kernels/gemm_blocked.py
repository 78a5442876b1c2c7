"""Blocked GEMM for f32 and f64: the GotoBLAS / BLIS loop nest around the micro-kernel.

    for ic in M by MC:                  A block (MC x KC) packed, lives in L3
      for pc in K by KC:
        pack A[ic.., pc..]              MR-row panels, k-major: any strides in
        for jc in N by NC:              B block (KC x NC) packed, lives in L2
          pack B[pc.., jc..]            NR-column panels, k-major
          for ir in MC by MR:           A micro-panel (MR x KC) stays in L1
            for jr in NC by NR:         B micro-panels stream from L2
              micro-kernel -> C tile    (stored on the first K block, added after)

Packing absorbs the operands' strides (transposes, slices), pads edge
panels with zeros and gives the micro-kernel aligned unit-stride reads.
When N spans at most two micro-tiles, A is read in place instead (its
packing would cost as much as the product: the MNIST-sized x @ W), with
one-vector tiles when N fits one vector. Matrix-vector shapes go to
`gemm_gemv`, few columns over a column-major A to `gemm_thin`. Buffers come
from `malloc`, sized to the problem; if malloc fails the simple loop nest
computes the product, so the kernel never fails.
"""

from __future__ import annotations

import dataclasses

import llvmlite.ir as ir

from xlapy.backends.cpu.kernels.gemm_gemv import gemv
from xlapy.backends.cpu.kernels.gemm_microkernel import (
    Blocking,
    element_bytes,
    gemm_type,
    internal_function,
    lane_mask,
    masked_load,
    micro_kernel,
    short_rows,
)
from xlapy.backends.cpu.kernels.gemm_thin import thin
from xlapy.backends.cpu.kernels.heap import aligned_malloc, free
from xlapy.codegen.loops import const, for_range

I8P = ir.IntType(8).as_pointer()
I64 = ir.IntType(64)
"""Packed buffers start on a cache line (and a 512-bit vector)."""


def blocked_gemm(module: ir.Module, element: ir.Type, blk: Blocking, name: str,
                 fallback: ir.Function) -> ir.Function:
    """Single-threaded blocked GEMM of `element` (float/double) with `gemm_type`.

    Matrix-vector products (M or N is 1) go to `gemm_gemv` when their layout
    suits it. Three variants of the nest, chosen per call: A packed (the general case);
    A read in place when N spans at most two micro-tiles (packing A would
    cost as much as the product); and that with one-vector-wide tiles when N
    fits one vector (an MNIST-like x @ W with 10 outputs wastes less)."""
    if name in module.globals:
        return module.globals[name]
    fn, b = internal_function(module, gemm_type(element), name)
    m, n, k, a, a_rs, a_cs, b_mat, b_rs, b_cs, c, ldc = fn.args
    empty = b.or_(b.icmp_signed("<=", m, const(0)), b.icmp_signed("<=", n, const(0)))
    with b.if_then(empty, likely=False):
        b.ret_void()
    with b.if_then(b.icmp_signed("<=", k, const(0)), likely=False):
        zero_matrix(b, m, n, c, ldc)
        b.ret_void()
    with b.if_then(gemv(b, blk.lanes, fn.args)):
        b.ret_void()
    with b.if_then(thin(b, blk.lanes, fn.args)):
        b.ret_void()

    narrow = dataclasses.replace(blk, nv=1)
    in_place = b.icmp_signed("<=", n, const(2 * blk.nr))
    kc_step = k_block(b, blk.kc, k)
    kc_cap = imin(b, kc_step, k)
    a_size = b.mul(imin(b, const(blk.mc), round_up(b, m, blk.mr)), kc_cap)
    a_size = b.select(in_place, const(0), a_size)
    b_size = b.mul(imin(b, const(blk.nc), round_up(b, n, blk.nr)), kc_cap)
    a_raw, a_pack = aligned_malloc(b, a_size, element)
    b_raw, b_pack = aligned_malloc(b, b_size, element)
    failed = b.or_(b.icmp_unsigned("==", a_raw, ir.Constant(I8P, None)),
                   b.icmp_unsigned("==", b_raw, ir.Constant(I8P, None)))
    with b.if_then(failed, likely=False):
        free(b, a_raw)
        free(b, b_raw)
        b.call(fallback, fn.args)
        b.ret_void()

    with b.if_else(in_place) as (a_in_place, a_packed):
        with a_in_place:
            with b.if_else(b.icmp_signed("<=", n, const(narrow.nr))) as (one_vector, wide):
                with one_vector:
                    _loop_nest(b, fn.args, narrow, name, None, b_pack, kc_step)
                with wide:
                    _loop_nest(b, fn.args, blk, name, None, b_pack, kc_step)
        with a_packed:
            _loop_nest(b, fn.args, blk, name, a_pack, b_pack, kc_step)
    free(b, a_raw)
    free(b, b_raw)
    b.ret_void()
    return fn


def k_block(b: ir.IRBuilder, kc: int, k: ir.Value) -> ir.Value:
    """The K block: `kc`, unless the last block would be under half of it; then that
    remainder is shared out over the others (rounded up to the micro-kernel's
    unrolling, 4): K = 784 is two blocks of 392, not 384, 384 and a thin 16
    that reloads and stores C for little work. (Blocks stay under 1.5 kc.)"""
    blocks = b.sdiv(b.add(k, const(kc - 1)), const(kc))
    last = b.sub(k, b.mul(b.sub(blocks, const(1)), const(kc)))
    fewer = b.sub(blocks, const(1))
    thin = b.and_(b.icmp_signed(">=", fewer, const(1)),
                  b.icmp_signed("<", b.mul(last, const(2)), const(kc)))
    safe = b.select(thin, fewer, const(1))
    shared = round_up(b, b.sdiv(b.add(k, b.sub(safe, const(1))), safe), 4)
    return b.select(thin, shared, const(kc))


def _loop_nest(b: ir.IRBuilder, args, blk: Blocking, name: str, a_pack, b_pack,
               kc_step: ir.Value) -> None:
    """The blocked nest for one variant; A is packed into `a_pack` unless it is None."""
    m, n, k, a, a_rs, a_cs, b_mat, b_rs, b_cs, c, ldc = args
    module = b.module
    element = a.type.pointee
    variant = f"{'packed' if a_pack is not None else 'direct'}{blk.nr}"
    pack_a = _packer(module, element, blk.mr, blk.lanes, f"{name}.pack_a")
    pack_b = _packer(module, element, blk.nr, blk.lanes, f"{name}.pack_b{blk.nr}")
    macro = _macro_kernel(module, element, blk, f"{name}.{variant}", a_pack is not None)
    with for_range(b, const(0), m, const(blk.mc), name="ic") as ic:
        mc = imin(b, const(blk.mc), b.sub(m, ic))
        with for_range(b, const(0), k, kc_step, name="pc") as pc:
            kc = imin(b, kc_step, b.sub(k, pc))
            a_block = b.gep(a, [b.add(b.mul(ic, a_rs), b.mul(pc, a_cs))])
            if a_pack is not None:
                b.call(pack_a, [kc, mc, a_block, a_rs, a_cs, a_pack])
                a_block = a_pack
            first = b.icmp_signed("==", pc, const(0))
            with for_range(b, const(0), n, const(blk.nc), name="jc") as jc:
                nc = imin(b, const(blk.nc), b.sub(n, jc))
                b_block = b.gep(b_mat, [b.add(b.mul(pc, b_rs), b.mul(jc, b_cs))])
                b.call(pack_b, [kc, nc, b_block, b_cs, b_rs, b_pack])
                c_block = b.gep(c, [b.add(b.mul(ic, ldc), jc)])
                b.call(macro, [kc, mc, nc, a_block, a_rs, a_cs, b_pack, c_block, ldc, first])


def _macro_kernel(module: ir.Module, element: ir.Type, blk: Blocking, name: str,
                  packed_a: bool) -> ir.Function:
    """void macro(i64 kc, i64 mc, i64 nc, T* a, i64 a_rs, i64 a_cs, T* b_pack, T* c, i64 ldc,
    i1 first): every micro-tile of one A block times one packed B block."""
    if name in module.globals:
        return module.globals[name]
    ptr = element.as_pointer()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [I64, I64, I64, ptr, I64, I64, ptr,
                                                             ptr, I64, ir.IntType(1)]), name)
    fn.linkage = "internal"
    kc, mc, nc, a, a_rs, a_cs, b_pack, c, ldc, first = fn.args
    kernels = [(rows, micro_kernel(module, element, blk, f"{name}.micro{rows}", packed_a, rows))
               for rows in short_rows(blk)]
    kernels.append((blk.mr, micro_kernel(module, element, blk, f"{name}.micro", packed_a)))
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    with for_range(b, const(0), mc, const(blk.mr), name="ir") as i:
        mr = imin(b, const(blk.mr), b.sub(mc, i))
        a_panel = b.gep(a, [b.mul(i, kc if packed_a else a_rs)])
        c_row = b.gep(c, [b.mul(i, ldc)])

        def row_of_tiles(kernels):
            """The panel's tiles by the shortest kernel that covers its mr rows."""
            rows, micro = kernels[0]
            if len(kernels) > 1:
                with b.if_else(b.icmp_signed("<=", mr, const(rows))) as (fits, longer):
                    with fits:
                        row_of_tiles(kernels[:1])
                    with longer:
                        row_of_tiles(kernels[1:])
                return
            with for_range(b, const(0), nc, const(blk.nr), name="jr") as j:
                nr = imin(b, const(blk.nr), b.sub(nc, j))
                b.call(micro, [kc, a_panel, a_rs, a_cs, b.gep(b_pack, [b.mul(j, kc)]),
                               b.gep(c_row, [j]), ldc, mr, nr, first])

        row_of_tiles(kernels)
    b.ret_void()
    return fn


def _packer(module: ir.Module, element: ir.Type, width: int, lanes: int,
            name: str) -> ir.Function:
    """void pack(i64 kc, i64 extent, T* src, i64 across, i64 along_k, T* dst).

    Copies src[k * along_k + x * across] (k < kc, x < extent) into panels of
    `width` values of x: panel p holds dst[p * width * kc + k * width + x'],
    zero where p * width + x' >= extent. A is packed with width MR (x = row),
    B with width NR (x = column). A whole panel whose values run along k (a
    row-major A, a transposed B) is transposed in registers, `lanes` x `lanes`
    at a time."""
    if name in module.globals:
        return module.globals[name]
    ptr = element.as_pointer()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [I64, I64, ptr, I64, I64, ptr]),
                     name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")  # called from two nests: one copy of the code
    kc, extent, src, across, along_k, dst = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    contiguous = b.icmp_signed("==", across, const(1))
    whole = b.select(contiguous, b.mul(b.sdiv(extent, const(width)), const(width)), const(0))
    with b.if_then(contiguous):
        _copy_row_panels(b, element, width, kc, whole, src, along_k, dst)
    with for_range(b, whole, extent, const(width), name="p") as p:
        valid = imin(b, const(width), b.sub(extent, p))
        panel_src = b.gep(src, [b.mul(p, across)])
        panel_dst = b.gep(dst, [b.mul(p, kc)])
        full = b.icmp_signed("==", valid, const(width))
        with b.if_else(contiguous) as (cut, strided):
            with cut:   # (the last panel, short of `width`: whole ones were copied above)
                _copy_cut_panel(b, element, width, kc, panel_src, along_k, panel_dst, valid)
            with strided:
                blocks = b.and_(full, b.icmp_signed("==", along_k, const(1)))
                with b.if_else(blocks) as (transposed, scalar):
                    with transposed:
                        _copy_transposed(b, element, width, lanes, kc, panel_src, across,
                                         panel_dst)
                    with scalar:
                        _copy_columns(b, width, kc, valid, panel_src, across, along_k,
                                      panel_dst)
    b.ret_void()
    return fn


def _copy_transposed(b: ir.IRBuilder, element, width: int, lanes: int, kc, src, across,
                     dst) -> None:
    """A whole panel whose `width` values of x each run along k (unit stride, a
    row-major A or a transposed B): blocks of `lanes` x (fewer at the panel's
    edge, such as A's 12 rows) and `lanes` k are loaded a vector per x,
    transposed in registers and stored a vector per k; the last kc % lanes
    values of k one at a time."""
    vector = ir.VectorType(element, lanes)
    align = element_bytes(element)
    undefined = ir.Constant(vector, ir.Undefined)
    whole = b.mul(b.sdiv(kc, const(lanes)), const(lanes))
    with for_range(b, const(0), whole, const(lanes), name="kt") as k:
        for x0 in range(0, width, lanes):
            count = min(lanes, width - x0)
            rows = [b.load(b.bitcast(b.gep(src, [b.add(b.mul(const(x0 + x), across), k)]),
                                     vector.as_pointer()), align=align)
                    for x in range(count)] + [undefined] * (lanes - count)
            part = ir.VectorType(element, count)
            for j, column in enumerate(transpose(b, rows)):
                if count < lanes:
                    column = b.shuffle_vector(column, undefined, ir.Constant(
                        ir.VectorType(ir.IntType(32), count), list(range(count))))
                target = b.gep(dst, [b.add(b.mul(b.add(k, const(j)), const(width)),
                                           const(x0))])
                b.store(column, b.bitcast(target, part.as_pointer()), align=align)
    with for_range(b, const(0), const(width), name="xt") as x:
        src_x = b.gep(src, [b.mul(x, across)])
        dst_x = b.gep(dst, [x])
        with for_range(b, whole, kc, name="kr") as k:
            b.store(b.load(b.gep(src_x, [k])), b.gep(dst_x, [b.mul(k, const(width))]))


def transpose(b: ir.IRBuilder, rows: list) -> list:
    """The columns of the square matrix whose rows are the vectors `rows` (a power of
    two of them, as long as they are wide): log2(n) rounds of two-vector shuffles,
    each swapping the off-diagonal blocks of one size."""
    n = len(rows)
    rows = list(rows)
    h = n // 2
    while h:
        low = ir.Constant(ir.VectorType(ir.IntType(32), n),
                          [lane if not lane & h else n + lane - h for lane in range(n)])
        high = ir.Constant(ir.VectorType(ir.IntType(32), n),
                           [lane + h if not lane & h else n + lane for lane in range(n)])
        for i in range(n):
            if not i & h:
                rows[i], rows[i + h] = (b.shuffle_vector(rows[i], rows[i + h], low),
                                        b.shuffle_vector(rows[i], rows[i + h], high))
        h //= 2
    return rows


def _copy_row_panels(b: ir.IRBuilder, element, width: int, kc, whole, src, along_k,
                     dst) -> None:
    """The whole panels of a block whose values per k are adjacent (a row-major B),
    k by k: each k's `whole` values are read in one run and dealt out a vector
    per panel. (Panel by panel, each of kc reads was a new row `along_k` apart,
    a 4 KiB stride for a 1024-wide B: a page and two cache misses per vector;
    packing a 1024x1024 B took ~80 µs longer on one thread.)"""
    vector = ir.VectorType(element, width)
    align = element_bytes(element)
    with for_range(b, const(0), kc, name="kw") as k:
        row = b.gep(src, [b.mul(k, along_k)])
        row_dst = b.gep(dst, [b.mul(k, const(width))])
        with for_range(b, const(0), whole, const(width), name="pw") as p:
            value = b.load(b.bitcast(b.gep(row, [p]), vector.as_pointer()), align=align)
            b.store(value, b.bitcast(b.gep(row_dst, [b.mul(p, kc)]), vector.as_pointer()),
                    align=align)


def _copy_cut_panel(b: ir.IRBuilder, element, width: int, kc, src, along_k, dst,
                    valid) -> None:
    """The last panel of a block whose values per k are adjacent, `valid` < `width`
    values wide: a masked load of them per k, zeros in the rest."""
    vector = ir.VectorType(element, width)
    align = element_bytes(element)
    mask = lane_mask(b, valid, width)
    with for_range(b, const(0), kc, name="kv") as k:
        source = b.bitcast(b.gep(src, [b.mul(k, along_k)]), vector.as_pointer())
        b.store(masked_load(b, source, mask, align),
                b.bitcast(b.gep(dst, [b.mul(k, const(width))]), vector.as_pointer()),
                align=align)


def _copy_columns(b: ir.IRBuilder, width: int, kc, valid, src, across, along_k, dst) -> None:
    """Any panel, one x at a time along k (unit-stride reads when along_k is 1, the
    row-major A and transposed B cases); x >= valid is zero-filled."""
    with for_range(b, const(0), valid, name="x") as x:
        src_x = b.gep(src, [b.mul(x, across)])
        dst_x = b.gep(dst, [x])
        with for_range(b, const(0), kc, name="kx") as k:
            b.store(b.load(b.gep(src_x, [b.mul(k, along_k)])),
                    b.gep(dst_x, [b.mul(k, const(width))]))
    zero = ir.Constant(src.type.pointee, 0)
    with for_range(b, valid, const(width), name="xz") as x:
        dst_x = b.gep(dst, [x])
        with for_range(b, const(0), kc, name="kz") as k:
            b.store(zero, b.gep(dst_x, [b.mul(k, const(width))]))


# -- small IR helpers shared by the GEMM emitters ---------------------------------------------
def imin(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    return b.select(b.icmp_signed("<", x, y), x, y)


def round_up(b: ir.IRBuilder, x: ir.Value, multiple: int) -> ir.Value:
    return b.mul(b.sdiv(b.add(x, const(multiple - 1)), const(multiple)), const(multiple))


def zero_matrix(b: ir.IRBuilder, m, n, c, ldc) -> None:
    zero = ir.Constant(c.type.pointee, None)
    with for_range(b, const(0), m, name="zm") as i:
        row = b.gep(c, [b.mul(i, ldc)])
        with for_range(b, const(0), n, name="zn") as j:
            b.store(zero, b.gep(row, [j]))
