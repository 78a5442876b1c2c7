"""The GEMM micro-kernel: one MR x NR tile of C from packed panels of A and B.

The tile lives in MR * NV vector registers of `lanes` elements (NR = NV *
lanes). Each step k loads NV vectors of the packed B panel (NR contiguous
values) and, for each of the MR rows, broadcasts one value of the packed A
panel and does NV `llvm.fmuladd`s into that row's accumulators. After the k loop
the tile is stored to C, or added to it when an earlier K block already
wrote C (`first` false). Tiles cut by the edge of C (mr < MR or nr < NR) go
through a small stack tile so no store leaves C.

The sizes (`Blocking`) follow the vector width of the target: the tile must
fit the register file (MR * NV accumulators + NV B vectors + a broadcast),
the A micro-panel (MR x KC) stays in L1 while B micro-panels stream from L2.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import llvmlite.ir as ir

from xlapy.backends.cpu.llvm_target import host_target
from xlapy.codegen.loops import Accumulator, const, for_range

I1 = ir.IntType(1)
I32 = ir.IntType(32)
I64 = ir.IntType(64)


@dataclass(frozen=True)
class Blocking:
    """Register tile (mr x nv vectors of `lanes`) and cache blocks (kc, mc, nc) of one GEMM."""

    lanes: int
    mr: int
    nv: int
    kc: int
    mc: int
    nc: int

    def __post_init__(self):
        # Packed blocks are sized MC x KC and KC x NC: whole panels must fit them.
        if self.mc % self.mr or self.nc % self.nr:
            raise ValueError(f"{self}: MC must be a multiple of MR and NC of NR")

    @property
    def nr(self) -> int:
        return self.nv * self.lanes


def vector_bits(module: ir.Module) -> int:
    """The widest vector the module's target computes in natively: from the
    features it is compiled for (`xlapy_target_features`, set for ahead-of-time
    objects), else this machine's; 128 when unknown (SSE2 and NEON have it)."""
    features = getattr(module, "xlapy_target_features", None)
    if features is None:
        triple, _, features = host_target()
        if module.triple != triple:
            return 128
    flags = set(features.split(","))
    if "+avx512f" in flags:
        return 512
    if "+avx2" in flags or "+avx" in flags:
        return 256
    return 128


def blocking(element_bytes: int, bits: int) -> Blocking:
    """Tile and block sizes for an f32 (4) or f64 (8) GEMM with `bits`-wide vectors.

    AVX-512's 32 vector registers hold 12 x 2 accumulators, AVX's 16 hold 6 x 2,
    SSE's and NEON's 4 x 3 (plus the B vectors and a broadcast). The A
    micro-panel (MR x KC, ~18 KiB) stays in L1 (48 KiB), the packed B block
    (KC x NC, 1-1.1 MiB) in L2 (2 MiB); the A block (MC x KC) in L3. Measured on
    the 2-core AVX-512 machine with 1024^3 products.
    """
    lanes = bits // (8 * element_bytes)
    if bits >= 512:
        mr, nv = 12, 2
    elif bits >= 256:
        mr, nv = 6, 2
    else:
        mr, nv = 4, 3
    nr = nv * lanes
    kc, nc = (384, 768) if element_bytes == 4 else (256, 512)
    nc = nc // nr * nr
    mc = 1536 // mr * mr
    return Blocking(lanes=lanes, mr=mr, nv=nv, kc=kc, mc=mc, nc=nc)


def fma_intrinsic(module: ir.Module, vector: ir.VectorType) -> ir.Function:
    """`llvm.fmuladd`: one FMA instruction where the target has them (as BLAS does),
    a multiply and an add where it has not (never a libm `fma` call)."""
    suffix = {"float": "f32", "double": "f64"}[str(vector.element)]
    name = f"llvm.fmuladd.v{vector.count}{suffix}"
    if name in module.globals:
        return module.globals[name]
    return ir.Function(module, ir.FunctionType(vector, [vector] * 3), name)


def lane_mask(b: ir.IRBuilder, count: ir.Value, lanes: int) -> ir.Value:
    """<lanes x i1>: lane j is on when j < count (an i64; <= 0 turns every lane off)."""
    indices = ir.Constant(ir.VectorType(I64, lanes), list(range(lanes)))
    return b.icmp_signed("<", indices, splat(b, count, lanes))


def masked_load(b: ir.IRBuilder, ptr: ir.Value, mask: ir.Value, align: int) -> ir.Value:
    """`llvm.masked.load` of the vector at `ptr`: lanes off in `mask` are not read (no
    fault past an edge) and come back as zero."""
    vector = ptr.type.pointee
    return b.call(_masked_intrinsic(b.module, "load", vector),
                  [ptr, ir.Constant(I32, align), mask, ir.Constant(vector, None)])


def masked_store(b: ir.IRBuilder, value: ir.Value, ptr: ir.Value, mask: ir.Value,
                 align: int) -> None:
    """`llvm.masked.store`: only the lanes on in `mask` are written."""
    b.call(_masked_intrinsic(b.module, "store", value.type),
           [value, ptr, ir.Constant(I32, align), mask])


def _masked_intrinsic(module: ir.Module, kind: str, vector: ir.VectorType) -> ir.Function:
    suffix = {"float": "f32", "double": "f64"}[str(vector.element)]
    name = f"llvm.masked.{kind}.v{vector.count}{suffix}.p0"
    if name in module.globals:
        return module.globals[name]
    mask = ir.VectorType(I1, vector.count)
    if kind == "load":
        signature = ir.FunctionType(vector, [vector.as_pointer(), I32, mask, vector])
    else:
        signature = ir.FunctionType(ir.VoidType(), [vector, vector.as_pointer(), I32, mask])
    return ir.Function(module, signature, name)


def gemm_type(element: ir.Type) -> ir.FunctionType:
    """void gemm(i64 M, i64 N, i64 K, T* A, i64 a_rs, i64 a_cs, T* B, i64 b_rs, i64 b_cs,
    T* C, i64 ldc)"""
    ptr = element.as_pointer()
    return ir.FunctionType(ir.VoidType(), [I64, I64, I64, ptr, I64, I64, ptr, I64, I64, ptr, I64])


def internal_function(module: ir.Module, ftype: ir.FunctionType,
                      name: str) -> tuple[ir.Function, ir.IRBuilder]:
    """A new internal function `name` of `ftype` and a builder at its entry block (the
    callers return the existing one when `name` is already defined)."""
    fn = ir.Function(module, ftype, name)
    fn.linkage = "internal"
    return fn, ir.IRBuilder(fn.append_basic_block("entry"))


def micro_kernel_type(element: ir.Type) -> ir.FunctionType:
    """void micro(i64 kc, T* a, i64 a_rs, i64 a_cs, T* b_panel, T* c, i64 ldc, i64 mr, i64 nr,
    i1 first)"""
    ptr = element.as_pointer()
    return ir.FunctionType(ir.VoidType(), [I64, ptr, I64, I64, ptr, ptr, I64, I64, I64, I1])


def micro_kernel(module: ir.Module, element: ir.Type, blk: Blocking, name: str,
                 packed_a: bool, rows: int | None = None) -> ir.Function:
    """The micro-kernel for `element` (float or double) and `blk`, emitted once per module.

    With `packed_a` A is a packed panel (A[i, k] at a[k * MR + i], zero-padded
    rows; a_rs and a_cs are ignored); otherwise A is read in place,
    A[i, k] = a[i * a_rs + k * a_cs], and rows i >= mr read row 0 instead (their
    results are dropped), so small products need not pack A at all. With
    `rows` (one of `short_rows(blk)`) the tile is that many rows of the panel:
    the kernel for the last rows of M (see `short_rows`).
    """
    if name in module.globals:
        return module.globals[name]
    panel = blk.mr   # (A's packed panels stay MR wide: a short tile reads their first rows)
    blk = blk if rows is None else replace(blk, mr=rows)
    fn = ir.Function(module, micro_kernel_type(element), name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")  # one copy, called from every macro-kernel tile
    kc, a, a_rs, a_cs, b_panel, c, ldc, mr, nr, first = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    tile = b.alloca(element, size=blk.mr * blk.nr, name="edge_tile")
    tile.align = 64
    if packed_a:
        a_rows = [b.gep(a, [const(i)]) for i in range(blk.mr)]
        a_cs = const(panel)
    else:
        a_rows = [b.gep(a, [b.mul(b.select(b.icmp_signed("<", const(i), mr), const(i), const(0)),
                                  a_rs)]) for i in range(blk.mr)]
    accumulators = _k_loop(b, element, blk, kc, a_rows, a_cs, b_panel)

    full_block = fn.append_basic_block("full_tile")
    edge_block = fn.append_basic_block("edge_tile")
    is_full = b.and_(b.icmp_signed("==", mr, const(blk.mr)), b.icmp_signed("==", nr, const(blk.nr)))
    b.cbranch(is_full, full_block, edge_block)
    b.position_at_end(full_block)
    _store_full(b, element, blk, accumulators, c, ldc, first)
    b.ret_void()
    b.position_at_end(edge_block)
    _store_edge(b, element, blk, accumulators, tile, c, ldc, mr, nr, first)
    b.ret_void()
    return fn


def short_rows(blk: Blocking) -> list[int]:
    """Row counts of the shorter tiles for M's last rows, where MR does not divide
    M: a third and two thirds of MR (4 and 8 of AVX-512's 12). Computing the
    whole MR-row tile there wasted a panel's work on zeros: 8 of 108 rows of a
    100-row product, 8 of 516 of each thread's half of a 1024-row one."""
    if blk.mr % 3:
        return []
    return [blk.mr // 3, 2 * blk.mr // 3]


def element_bytes(element: ir.Type) -> int:
    return 8 if isinstance(element, ir.DoubleType) else 4


def _k_loop(b: ir.IRBuilder, element: ir.Type, blk: Blocking, kc, a_rows, a_cs, b_panel):
    """The FMA loop over k (A[i, k] at a_rows[i][k * a_cs]); the MR x NV accumulators
    after it. Unrolled UNROLL times, then one k at a time for the rest."""
    vector = ir.VectorType(element, blk.lanes)
    zero = ir.Constant(vector, None)
    values = [[zero] * blk.nv for _ in range(blk.mr)]
    unrolled = b.mul(b.sdiv(kc, const(UNROLL)), const(UNROLL))
    for start, stop, step in ((const(0), unrolled, UNROLL), (unrolled, kc, 1)):
        accs = [[Accumulator(b, values[i][v], name=f"c{i}_{v}") for v in range(blk.nv)]
                for i in range(blk.mr)]
        with for_range(b, start, stop, const(step), name="k") as k:
            for acc in _flat(accs):
                acc.enter()
            current = [[acc.value for acc in row] for row in accs]
            for u in range(step):
                current = _k_step(b, vector, blk, b.add(k, const(u)), a_rows, a_cs, b_panel,
                                  current)
            for row, new in zip(accs, current):
                for acc, value in zip(row, new):
                    acc.set(value)
            for acc in _flat(accs):
                acc.close()
        values = [[acc.result(b) for acc in row] for row in accs]
    return values


UNROLL = 4
"""k steps per iteration of the micro-kernel's loop: its counter, compare and
branch are then a sixteenth of the work beside 96 FMAs, not a sixth beside 24."""


def _k_step(b: ir.IRBuilder, vector, blk: Blocking, k, a_rows, a_cs, b_panel, accs):
    fma = fma_intrinsic(b.module, vector)
    vector_align = blk.lanes * element_bytes(vector.element)
    b_row = b.gep(b_panel, [b.mul(k, const(blk.nr))])
    b_vectors = [b.load(b.bitcast(b.gep(b_row, [const(v * blk.lanes)]), vector.as_pointer()),
                        align=vector_align) for v in range(blk.nv)]
    a_offset = b.mul(k, a_cs)
    out = []
    for i in range(blk.mr):
        broadcast = splat(b, b.load(b.gep(a_rows[i], [a_offset])), blk.lanes)
        out.append([b.call(fma, [broadcast, b_vectors[v], accs[i][v]]) for v in range(blk.nv)])
    return out


def splat(b: ir.IRBuilder, value: ir.Value, lanes: int) -> ir.Value:
    vector = ir.VectorType(value.type, lanes)
    one = b.insert_element(ir.Constant(vector, ir.Undefined), value, ir.Constant(I32, 0))
    return b.shuffle_vector(one, ir.Constant(vector, ir.Undefined),
                            ir.Constant(ir.VectorType(I32, lanes), [0] * lanes))


def _flat(rows):
    return [x for row in rows for x in row]


def _store_full(b: ir.IRBuilder, element, blk: Blocking, accs, c, ldc, first) -> None:
    """C tile = acc (first K block) or C tile + acc, with unaligned vector accesses."""
    vector_ptr = ir.VectorType(element, blk.lanes).as_pointer()
    align = element_bytes(element)
    pointers = [[b.bitcast(b.gep(c, [b.add(b.mul(const(i), ldc), const(v * blk.lanes))]),
                           vector_ptr) for v in range(blk.nv)] for i in range(blk.mr)]
    with b.if_else(first) as (then, otherwise):
        with then:
            for ptr, acc in zip(_flat(pointers), _flat(accs)):
                b.store(acc, ptr, align=align)
        with otherwise:
            for ptr, acc in zip(_flat(pointers), _flat(accs)):
                b.store(b.fadd(b.load(ptr, align=align), acc), ptr, align=align)


def _store_edge(b: ir.IRBuilder, element, blk: Blocking, accs, tile, c, ldc, mr, nr,
                first) -> None:
    """The tile through the stack, then only its mr x nr corner into C."""
    vector_ptr = ir.VectorType(element, blk.lanes).as_pointer()
    for i in range(blk.mr):
        for v in range(blk.nv):
            slot = b.gep(tile, [const(i * blk.nr + v * blk.lanes)])
            b.store(accs[i][v], b.bitcast(slot, vector_ptr), align=64)
    with for_range(b, const(0), mr, name="ei") as i:
        tile_row = b.gep(tile, [b.mul(i, const(blk.nr))])
        c_row = b.gep(c, [b.mul(i, ldc)])
        with for_range(b, const(0), nr, name="ej") as j:
            value = b.load(b.gep(tile_row, [j]))
            c_ptr = b.gep(c_row, [j])
            total = b.select(first, value, b.fadd(b.load(c_ptr), value))
            b.store(total, c_ptr)
