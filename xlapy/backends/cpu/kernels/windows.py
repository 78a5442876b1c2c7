"""Windowed ops: `reduce-window` as an element generator, `select-and-scatter`
as a native kernel, and the window arithmetic and sizes convolution shares.

A window position maps output coordinate o and window offset w to the
base-dilated, padded input coordinate t = o*stride + w*window_dilation -
padding_low. It reads a real element when 0 <= t < (n-1)*base_dilation + 1
and t is a multiple of the base dilation; otherwise it falls into padding or
a dilation hole. Loads always use a clamped index (so they stay in bounds)
and the validity flag picks the result with `select`, branch-free.

reduce-window: one output element is init ⊕ the window's valid elements in
row-major window order (padding is skipped, so it contributes the init
value, as in the interpreter). Being a generator it fuses, and unfused it
runs as a loop kernel over the output.

select-and-scatter: the output starts as init; each source element scans its
window in row-major order (the first valid element is selected, a later one
replaces it where select(selected, current) is false, so `ge` keeps the
first maximum) and is combined into the selected output element with the
scatter computation, source elements in row-major order. The selections of
a run of source elements are computed first (a vectorisable loop), then the
scatters one by one; the kernel is split between threads over dimension 0
when the window there is a single element.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import llvmlite.ir as ir

from xlapy.backends.cpu import codegen
from xlapy.backends.cpu.kernels.scan import emit_scan
from xlapy.backends.cpu.special_kernels import special
from xlapy.codegen import ir_types as T
from xlapy.codegen.elemental import convert
from xlapy.codegen.generator import Generator, select_value
from xlapy.codegen.ir_array import IrArray, minor_to_major
from xlapy.codegen.loop_nest import emit_nest, kernel_function, outer_extent
from xlapy.codegen.loops import for_range
from xlapy.codegen.reduce_generator import combine
from xlapy.codegen.scalar_computation import emit_scalar_computation
from xlapy.codegen.scope import Ix, Scope, depth_of
from xlapy.codegen.tables import generates
from xlapy.hlo.attributes import Window, WindowDimension
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.opcode import Opcode as Op

UNROLLED_WINDOW = 32
"""Generator windows up to this many elements are emitted as straight-line code."""


def _c(value: int) -> ir.Constant:
    return ir.Constant(T.I64, value)


# -- window arithmetic ----------------------------------------------------------------------
def always_valid(dim: WindowDimension, in_size: int, out_size: int) -> bool:
    """Whether every (output, window offset) pair of `dim` reads a real element."""
    if dim.base_dilation != 1 or in_size == 0:
        return False
    last = (out_size - 1) * dim.stride + (dim.size - 1) * dim.window_dilation - dim.padding_low
    return dim.padding_low <= 0 and last < in_size


def window_position(b: ir.IRBuilder, out: ir.Value, offset: ir.Value, dim: WindowDimension,
                    in_size: int, out_size: int):
    """(clamped input index, i1 validity or None when always valid) of output coordinate
    `out` and window offset `offset` (i64 values) along `dim`."""
    t = out if dim.stride == 1 else b.mul(out, _c(dim.stride))
    if not (isinstance(offset, ir.Constant) and offset.constant == 0):
        w = offset if dim.window_dilation == 1 else b.mul(offset, _c(dim.window_dilation))
        t = b.add(t, w)
    if dim.padding_low:
        t = b.sub(t, _c(dim.padding_low))
    if always_valid(dim, in_size, out_size):
        return t, None
    extent = (in_size - 1) * dim.base_dilation + 1 if in_size else 0
    valid = b.and_(b.icmp_signed(">=", t, _c(0)), b.icmp_signed("<", t, _c(extent)))
    if dim.base_dilation > 1:
        valid = b.and_(valid, b.icmp_signed("==", b.srem(t, _c(dim.base_dilation)), _c(0)))
        t = b.sdiv(t, _c(dim.base_dilation))
    lo, hi = _c(0), _c(max(in_size - 1, 0))
    t = b.select(b.icmp_signed("<", t, lo), lo, t)
    t = b.select(b.icmp_signed(">", t, hi), hi, t)
    return t, valid


def and_all(b: ir.IRBuilder, flags):
    """The conjunction of the i1 values in `flags` that are not None (None if none)."""
    result = None
    for flag in flags:
        if flag is not None:
            result = flag if result is None else b.and_(result, flag)
    return result


def offset_nest(g: Generator, sizes, body, unroll: bool = True) -> None:
    """body(offsets) for every window offset in row-major order, one Ix per dim: a
    straight line of constant offsets for windows of up to UNROLLED_WINDOW elements
    (LLVM does not unroll loops here; without inner loops the loop over the output
    vectorises), else loops (size-1 dims are the constant 0)."""
    if unroll and math.prod(sizes) <= UNROLLED_WINDOW:
        for offsets in all_offsets(sizes):
            body(tuple(Ix.const(w) for w in offsets))
        return
    offsets: list[Ix] = []

    def level(k: int):
        if k == len(sizes):
            body(tuple(offsets))
            return
        if sizes[k] == 1:
            offsets.append(Ix.const(0))
            level(k + 1)
            offsets.pop()
            return
        with g.scope.loop(g.scope.depth, 0, sizes[k], name=f"w{k}") as iv:
            offsets.append(iv)
            level(k + 1)
            offsets.pop()

    level(0)


def all_offsets(sizes) -> list[tuple[int, ...]]:
    """Every window offset in row-major order."""
    offsets = [()]
    for size in sizes:
        offsets = [o + (w,) for o in offsets for w in range(size)]
    return offsets


def offset_loops(b: ir.IRBuilder, dims, body) -> None:
    """body(offsets, flat) for every window offset in row-major order (flat: the
    offset's row-major number, an i64)."""
    def level(k, offsets, flat):
        if k == len(dims):
            body(offsets, flat)
            return
        size = dims[k].size
        if size == 1:
            level(k + 1, offsets + [_c(0)], flat)
            return
        with for_range(b, 0, size, name=f"w{k}") as w:
            level(k + 1, offsets + [w], b.add(b.mul(flat, _c(size)), w))

    level(0, [], _c(0))


def input_index(g: Generator, out_index, offsets, dims, in_sizes, out_sizes):
    """(input index as Ix per dim, validity i1 or None) for window `offsets` at
    output `out_index`; each component emitted at the depth it depends on."""
    index, flags = [], []
    for o, w, dim, n_in, n_out in zip(out_index, offsets, dims, in_sizes, out_sizes):
        trivial = (dim.size == 1 and dim.padding_low == 0 and dim.stride == 1 and
                   dim.base_dilation == 1 and n_in == n_out)
        if trivial:
            index.append(o)
            continue
        depth = max(o.depth, w.depth)
        with g.scope.at(depth):
            value, valid = window_position(g.b, o.value, w.value, dim, n_in, n_out)
        index.append(Ix(value, depth))
        flags.append(valid)
    depth = depth_of(index)
    with g.scope.at(depth):
        return tuple(index), and_all(g.b, flags)


# -- convolution: sizes and arithmetic in the accumulation type ----------------------------
_INTS = (P.S8, P.S16, P.S32, P.S64, P.U8, P.U16, P.U32, P.U64)
COMPLEX = (P.C64, P.C128)


@dataclass(frozen=True)
class Geometry:
    """A convolution's sizes in XLA's canonical terms."""

    dims: tuple[WindowDimension, ...]
    in_sizes: tuple[int, ...]       # input spatial sizes
    out_sizes: tuple[int, ...]      # output spatial sizes
    batch: int                      # input batch
    out_features: int
    kernel_features: int            # input features per group
    feature_groups: int
    batch_groups: int

    @property
    def groups(self) -> int:
        return self.feature_groups * self.batch_groups

    @property
    def group_out(self) -> int:
        return self.out_features // self.groups

    @property
    def group_batch(self) -> int:
        return self.batch // self.batch_groups

    @property
    def window_count(self) -> int:
        return math.prod(d.size for d in self.dims)


def geometry(instruction) -> Geometry:
    lhs, rhs = instruction.operands
    d = instruction.attr("dim_labels")
    kernel_sizes = [rhs.shape.dimensions[k] for k in d.kernel_spatial_dimensions]
    window = instruction.attr("window") or Window(())
    dims = window.dimensions or tuple(WindowDimension(s) for s in kernel_sizes)
    return Geometry(
        dims=tuple(dims),
        in_sizes=tuple(lhs.shape.dimensions[k] for k in d.input_spatial_dimensions),
        out_sizes=tuple(instruction.shape.dimensions[k] for k in d.output_spatial_dimensions),
        batch=lhs.shape.dimensions[d.input_batch_dimension],
        out_features=rhs.shape.dimensions[d.kernel_output_feature_dimension],
        kernel_features=rhs.shape.dimensions[d.kernel_input_feature_dimension],
        feature_groups=int(instruction.attr("feature_group_count", 1) or 1),
        batch_groups=int(instruction.attr("batch_group_count", 1) or 1))


def accumulation_type(out: P, inputs) -> P:
    """What the sum runs in: as the interpreter, except that integer results of integer
    operands wrap in their own width (the same result, modulo 2^n) and f32 sums in f32."""
    if out is P.PRED:
        return P.S64
    if out in _INTS:
        if all(t in _INTS or t is P.PRED for t in inputs):
            return out
        return P.S64 if out in (P.S8, P.S16, P.S32, P.S64) else P.U64
    if out in (P.F16, P.BF16):
        return P.F32
    if out is P.F32:
        return P.F64 if any(t in (P.F64, P.C128) for t in inputs) else P.F32
    return out


def _part(t: P) -> P:
    return P.F32 if t is P.C64 else P.F64


def to_type(b: ir.IRBuilder, value, source: P, target: P):
    """convert, extended to complex values (a complex value to a real type keeps its
    real part, as the interpreter's accumulation does)."""
    if source in COMPLEX and target in COMPLEX:
        return tuple(convert(b, v, _part(source), _part(target)) for v in value)
    if source in COMPLEX:
        return convert(b, value[0], _part(source), target)
    if target in COMPLEX:
        part = convert(b, value, source, _part(target))
        return part, ir.Constant(part.type, 0.0)
    return convert(b, value, source, target)


def multiply_add(b: ir.IRBuilder, acc, x, y, t: P):
    """acc + x*y in type t; the float sum may be reassociated (it is a reduction)."""
    if t in COMPLEX:
        re = b.fsub(b.fmul(x[0], y[0]), b.fmul(x[1], y[1]))
        im = b.fadd(b.fmul(x[0], y[1]), b.fmul(x[1], y[0]))
        return (b.fadd(acc[0], re, flags=("reassoc",)), b.fadd(acc[1], im, flags=("reassoc",)))
    if t in (P.F32, P.F64):
        return b.fadd(acc, b.fmul(x, y), flags=("reassoc",))
    return b.add(acc, b.mul(x, y))


# -- reduce-window --------------------------------------------------------------------------
@generates(Op.REDUCE_WINDOW)
def reduce_window_element(g: Generator, instruction, index):
    n = len(instruction.operands) // 2
    inputs, inits = instruction.operands[:n], instruction.operands[n:]
    dims = instruction.attr("window").dimensions
    in_sizes = inputs[0].shape.dimensions
    out_sizes = _leaf_shapes(instruction)[0].dimensions
    init_values = [g.value(init, ()) for init in inits]
    if 0 in in_sizes:   # no element to read: every window is empty
        depth = max(g.depth(init, ()) for init in inits)
        return (init_values[0] if n == 1 else tuple(init_values)), depth
    leaf_types = [x.shape.element_type for x in inputs]
    reducer = instruction.attr("to_apply")
    depth = depth_of(index)
    scope = g.scope
    with scope.at(depth):
        slots = [stack_slot(scope, v) for v in init_values]

        def body(offsets):
            source, valid = input_index(g, index, offsets, dims, in_sizes, out_sizes)
            elements = [g.value(x, source) for x in inputs]
            b = g.b
            accs = [load_slot(b, s) for s in slots]
            new = _combine(b, reducer, accs, elements, leaf_types)
            for slot, acc, value in zip(slots, accs, new):
                store_slot(b, slot, value if valid is None else select_value(b, valid, value, acc))

        offset_nest(g, [d.size for d in dims], body)
        result = [load_slot(g.b, s) for s in slots]
    return (result[0] if n == 1 else tuple(result)), depth


def _combine(b, reducer, accs, elements, leaf_types) -> list:
    """reduce_generator.combine, but a single complex value stays one (re, im) value."""
    if len(accs) == 1 and leaf_types[0] in (P.C64, P.C128):
        return [emit_scalar_computation(b, reducer, [accs[0], elements[0]])]
    return combine(b, reducer, accs, elements, leaf_types)


def _leaf_shapes(instruction):
    shape = instruction.shape
    return list(shape.tuple_shapes) if shape.is_tuple else [shape]


def stack_slot(scope: Scope, value):
    """A stack slot (a tuple of them for a tuple value) holding `value`."""
    slot = tuple(scope.alloca(v.type) for v in value) if isinstance(value, tuple) else \
        scope.alloca(value.type)
    store_slot(scope.b, slot, value)
    return slot


def store_slot(b, slot, value):
    if isinstance(slot, tuple):
        for s, v in zip(slot, value):
            b.store(v, s)
    else:
        b.store(value, slot)


def load_slot(b, slot):
    return tuple(b.load(s) for s in slot) if isinstance(slot, tuple) else b.load(slot)


class _Leaves:
    """Several same-shaped output arrays stored together from a tuple value (a
    variadic reduce-window), looking like one IrArray to `emit_nest`."""

    def __init__(self, arrays: list[IrArray]):
        self.arrays = arrays
        self.shape = arrays[0].shape

    def store(self, b, value, index) -> None:
        for array, leaf in zip(self.arrays, value):
            array.store(b, leaf, index)


def emit_generated_kernel(cg, instruction, work_per_element: int) -> None:
    """A loop kernel over the output of `instruction` (a tuple of same-shaped leaves
    allowed) from its element generator, split over threads by the outer dimension;
    like the generic loop kernel, with the op's real cost for the thread decision."""
    k = cg.loop_kernel(instruction, fused_parameters=False)
    g = Generator(codegen.KernelContext(cg, k.b), Scope(k.b), k.arrays)
    out = k.outputs[0] if len(k.outputs) == 1 and not instruction.shape.is_tuple else \
        _Leaves(k.outputs)
    emit_nest(g, instruction, out, k.begin, k.end)
    k.b.ret_void()
    cg.call_kernel(k.fn, k.slices, outer_extent(out.shape),
                   out.shape.element_count * max(work_per_element, 1))


@special(Op.REDUCE_WINDOW)
def reduce_window_kernel(cg, instruction) -> bool:
    """Unfused: a running reduction as a scan (`scan.py`), any other as a loop
    kernel over the output from the generator."""
    if emit_scan(cg, instruction):
        return True
    dims = instruction.attr("window").dimensions
    emit_generated_kernel(cg, instruction, math.prod(d.size for d in dims))
    return True


# -- select-and-scatter ---------------------------------------------------------------------
SCANNED_WINDOW = 64
"""Windows up to this many elements are scanned by straight-line code."""
CHUNK = 512
"""Source elements whose selections are computed together (a vectorisable loop) before
they are scattered one by one; their targets live in a stack array of this length."""


@special(Op.SELECT_AND_SCATTER)
def select_and_scatter_kernel(cg, instruction) -> bool:
    """Split over the operand's dimension 0 when its window there is one element
    (each output row then only receives source rows mapped to it): a thread fills
    its rows with init and scatters the source rows that select into them."""
    operands = cg.kernel_operands(instruction)
    out_slice = cg.output_leaves(instruction)[0][2]
    slices = [s for _, s in operands] + [out_slice]
    name = f"k{cg._kernels}_{codegen.symbol_name(instruction.name)}"
    cg._kernels += 1
    fn, b, pointers, begin, end = kernel_function(cg.llmod, name, 4,
                                                  noalias=codegen.disjoint(slices, len(operands)))
    operand, source, init = instruction.operands
    dims = instruction.attr("window").dimensions
    arrays = [IrArray(b, p, o.shape) for p, o in zip(pointers, instruction.operands)]
    out = IrArray(b, pointers[3], instruction.shape)
    split = operand.shape.rank > 0 and dims[0].size == 1 and dims[0].base_dilation == 1
    if not split:
        begin, end = _c(0), _c(operand.shape.dimensions[0] if operand.shape.rank else 1)
    _fill(b, out, arrays[2].load(b, []), begin, end)
    if operand.shape.element_count and source.shape.element_count:
        rows = _source_rows(b, dims[0], source.shape.dimensions[0], begin, end) if split \
            else None
        _scatter(b, instruction, arrays[0], arrays[1], out, rows)
    b.ret_void()
    window = math.prod(d.size for d in dims)
    n = operand.shape.dimensions[0] if split else 1
    cg.call_kernel(fn, slices, n, source.shape.element_count * window * 4)
    return True


def _source_rows(b: ir.IRBuilder, dim: WindowDimension, count: int, begin, end):
    """[first, end) of the source rows i whose target row i*stride - padding_low lies in
    the operand rows [begin, end)."""

    def first_at_or_after(row):
        t = b.add(row, _c(dim.padding_low))
        t = b.select(b.icmp_signed("<", t, _c(0)), _c(0), t)
        t = b.sdiv(b.add(t, _c(dim.stride - 1)), _c(dim.stride))
        return b.select(b.icmp_signed(">", t, _c(count)), _c(count), t)

    return first_at_or_after(begin), first_at_or_after(end)


def _fill(b: ir.IRBuilder, out: IrArray, value, begin, end) -> None:
    """out = value on the rows [begin, end) of dimension 0 (every element for a scalar),
    in physical order (a vectorised store loop when dimension 0 is the major one)."""
    shape = out.shape
    if shape.element_count == 0:
        return
    order = list(reversed(minor_to_major(shape)))
    if not order or order[0] == 0:
        row = shape.element_count // max(shape.dimensions[0], 1) if order else 1
        lo = b.mul(begin, _c(row))
        with for_range(b, lo, b.mul(end, _c(row)), name="fill") as i:
            T.store(b, value, b.gep(out.ptr, [i], inbounds=True), out.ptype)
        return
    index = [None] * shape.rank

    def level(k):
        if k == len(order):
            out.store(b, value, index)
            return
        dim = order[k]
        lo, hi = (begin, end) if dim == 0 else (0, shape.dimensions[dim])
        with for_range(b, lo, hi, name=f"fill{dim}") as i:
            index[dim] = i
            level(k + 1)

    level(0)


def _scatter(b: ir.IRBuilder, instruction, operand: IrArray, source: IrArray, out: IrArray,
             rows) -> None:
    """Source elements in row-major order, CHUNK of a row at a time: first every
    element's selected target (or -1) into a stack array, then the scatters."""
    rank = source.shape.rank
    last = source.shape.dimensions[-1] if rank else 1
    chunk = min(last, CHUNK)
    entry = b.function.entry_basic_block
    with b.goto_block(entry):
        b.position_at_start(entry)
        targets = b.alloca(ir.ArrayType(T.I64, chunk), name="targets")
    targets = b.bitcast(targets, T.I64.as_pointer())
    prefix: list[ir.Value] = []

    def row(lo, hi):
        with for_range(b, lo, hi, step=chunk, name="chunk") as start:
            stop = b.add(start, _c(chunk))
            stop = b.select(b.icmp_signed("<", stop, hi), stop, hi)
            with for_range(b, start, stop, name="sel") as j:
                index = prefix + [j] if rank else []
                slot = b.gep(targets, [b.sub(j, start)], inbounds=True)
                b.store(selected_position(b, instruction, operand, out, index), slot)
            with for_range(b, start, stop, name="sct") as j:
                index = prefix + [j] if rank else []
                where = b.load(b.gep(targets, [b.sub(j, start)], inbounds=True))
                with b.if_then(b.icmp_signed(">=", where, _c(0))):
                    target = b.gep(out.ptr, [where], inbounds=True)
                    old = T.load(b, target, out.ptype)
                    new = emit_scalar_computation(b, instruction.attr("scatter"),
                                                  [old, source.load(b, index)])
                    T.store(b, new, target, out.ptype)

    def level(k):
        lo, hi = rows if k == 0 and rows is not None else (_c(0), _c(source.shape.dimensions[k]))
        if k == rank - 1:
            row(lo, hi)
            return
        with for_range(b, lo, hi, name=f"s{k}") as i:
            prefix.append(i)
            level(k + 1)
            prefix.pop()

    if rank == 0:
        row(_c(0), _c(1))
    else:
        level(0)


def selected_position(b: ir.IRBuilder, instruction, operand: IrArray, out: IrArray,
                      s_index):
    """The output offset the window of source element `s_index` selects, -1 if none:
    the scan over the window's valid elements in row-major order, branch-free."""
    dims = instruction.attr("window").dimensions
    state = (T.constant(operand.ptype, 0), ir.Constant(T.I1, 0), _c(-1))
    if math.prod(d.size for d in dims) <= SCANNED_WINDOW:
        for offsets in all_offsets([d.size for d in dims]):
            state = _select_step(b, instruction, operand, out, s_index,
                                 [_c(w) for w in offsets], state)
        return state[2]
    slots = [_raw_slot(b, v) for v in state]
    for slot, value in zip(slots, state):
        store_slot(b, slot, value)

    def level(k, offsets):
        if k == len(dims):
            new = _select_step(b, instruction, operand, out, s_index, offsets,
                               [load_slot(b, s) for s in slots])
            for slot, value in zip(slots, new):
                store_slot(b, slot, value)
            return
        with for_range(b, 0, dims[k].size, name=f"w{k}") as w:
            level(k + 1, offsets + [w])

    level(0, [])
    return b.load(slots[2])


def _select_step(b: ir.IRBuilder, instruction, operand: IrArray, out: IrArray, s_index,
                 offsets, state):
    """(selected, chosen, where) after looking at one window offset."""
    selected, chosen, where = state
    dims = instruction.attr("window").dimensions
    out_sizes = instruction.operands[1].shape.dimensions
    pairs = [window_position(b, o, w, d, n_in, n_out) for o, w, d, n_in, n_out in
             zip(s_index, offsets, dims, operand.shape.dimensions, out_sizes)]
    index = [p[0] for p in pairs]
    valid = and_all(b, [p[1] for p in pairs])
    current = operand.load(b, index)
    keep = emit_scalar_computation(b, instruction.attr("select"), [selected, current])
    take = b.or_(b.not_(chosen), b.not_(keep))
    if valid is not None:
        take = b.and_(take, valid)
    return (select_value(b, take, current, selected),
            ir.Constant(T.I1, 1) if valid is None else b.or_(chosen, valid),
            b.select(take, out.linear(b, index), where))


def _raw_slot(b: ir.IRBuilder, value):
    """Stack slot(s) for `value` in the function's entry block."""
    entry = b.function.entry_basic_block
    with b.goto_block(entry):
        b.position_at_start(entry)
        if isinstance(value, tuple):
            return tuple(b.alloca(v.type) for v in value)
        return b.alloca(value.type)
