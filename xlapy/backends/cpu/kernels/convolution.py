"""`convolution`: an element generator for every case (`convolution_generator`,
which this module imports), im2col + GEMM for the big ones.

The fast path (f32/f64, one batch group, feature groups only with enough
outputs each, the output's layout [batch, spatial..., feature] or [batch,
feature, spatial...]) cuts the output into units of one image and a block
of its outermost spatial rows. Per unit it gathers the input patches into a
malloc'd matrix (im2col: a row per output position, a column per window
offset and input feature; column-major when the input's features are not
its minor dimension, so the gather reads runs of the input) and multiplies
it with the kernel, packed once per call, by the GEMM kernel, one product
per feature group. Units are split between threads; a unit's patches stay
small (about `PATCH_BYTES`) so they are still in cache when the GEMM packs
them. If malloc fails the generator computes the units instead.
`output_fusion` runs a kOutput fusion (convolution + elementwise epilogue,
such as bias and relu) the same way, the epilogue applied to each unit in
place right after its product.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import llvmlite.ir as ir

from xlapy.backends.cpu import codegen
from xlapy.backends.cpu.kernels.convolution_generator import (  # registers the generator
    _c,
    features_minor,
)
from xlapy.backends.cpu.kernels.gemm import gemm_function
from xlapy.backends.cpu.kernels.windows import (
    Geometry,
    and_all,
    emit_generated_kernel,
    geometry,
    offset_loops,
    window_position,
)
from xlapy.backends.cpu.special_kernels import special
from xlapy.codegen import ir_types as T
from xlapy.codegen.generator import Generator
from xlapy.codegen.ir_array import IrArray, minor_to_major
from xlapy.codegen.loop_nest import kernel_function
from xlapy.codegen.loops import for_range
from xlapy.codegen.scope import OUTSIDE, Ix, Scope
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.opcode import ELEMENTWISE
from xlapy.hlo.opcode import Opcode as Op

PATCH_BYTES = 1 << 20
"""Rough size of one unit's im2col matrix."""
MIN_GROUP_OUTPUTS = 8
"""Output features per group below which a grouped convolution is not worth a GEMM
per group (a depthwise one is a tiny product each): the generator does it."""


# -- the im2col + GEMM plan ----------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    """How the fast path cuts one convolution (see the module docstring)."""

    geo: Geometry
    ptype: P
    features_last: bool      # output [batch, spatial..., feature], else [batch, feature, ...]
    patches_by_row: bool     # im2col row-major (input features minor), else column-major
    order: tuple[int, ...]   # spatial dims (0..n-1) in the output's physical order
    block: int               # rows of the outermost spatial dim per unit

    @property
    def rows_outer(self) -> int:
        return self.geo.out_sizes[self.order[0]]

    @property
    def inner(self) -> int:
        """Output positions per row of the outermost spatial dim."""
        return math.prod(self.geo.out_sizes[i] for i in self.order[1:])

    @property
    def positions(self) -> int:
        return self.rows_outer * self.inner

    @property
    def blocks(self) -> int:
        return -(-self.rows_outer // self.block)

    @property
    def units(self) -> int:
        return self.geo.batch * self.blocks

    @property
    def group_depth(self) -> int:
        """K of one group's product: window offsets x input features of the group."""
        return self.geo.window_count * self.geo.kernel_features

    @property
    def depth(self) -> int:
        return self.group_depth * self.geo.feature_groups


def gemm_plan(instruction, out_shape, threads: int) -> Plan | None:
    """The fast-path plan for `instruction` writing `out_shape`, or None."""
    lhs, rhs = instruction.operands
    ptype = out_shape.element_type
    if ptype not in (P.F32, P.F64) or lhs.shape.element_type is not ptype or \
            rhs.shape.element_type is not ptype:
        return None
    geo = geometry(instruction)
    if geo.batch_groups != 1 or not geo.dims or 0 in (lhs.shape.element_count,
                                                      rhs.shape.element_count,
                                                      out_shape.element_count):
        return None
    if geo.feature_groups > 1 and geo.group_out < MIN_GROUP_OUTPUTS:
        return None
    d = instruction.attr("dim_labels")
    physical = list(reversed(minor_to_major(out_shape)))
    spatial = list(d.output_spatial_dimensions)
    if physical[0] != d.output_batch_dimension:
        return None
    if physical[-1] == d.output_feature_dimension:
        features_last, rest = True, physical[1:-1]
    elif physical[1] == d.output_feature_dimension:
        features_last, rest = False, physical[2:]
    else:
        return None
    order = tuple(spatial.index(k) for k in rest)
    plan = Plan(geo, ptype, features_last,
                features_minor(lhs.shape, d.input_feature_dimension), order, 1)
    return Plan(geo, ptype, features_last, plan.patches_by_row, order,
                _block(plan, threads))


def _block(plan: Plan, threads: int) -> int:
    """Rows of the outer spatial dim per unit: patches of about PATCH_BYTES, at least
    64 positions (the GEMM packs the kernel once per unit), and units for all threads."""
    item = 4 if plan.ptype is P.F32 else 8
    rows = min(4096, max(64, PATCH_BYTES // max(plan.depth * item, 1)))
    block = max(1, min(plan.rows_outer, rows // max(plan.inner, 1)))
    wanted = -(-threads // plan.geo.batch)     # blocks per image for every thread to work
    if plan.rows_outer >= wanted:
        block = max(1, min(block, plan.rows_outer // wanted))
    return block


# -- emitting the fast path ------------------------------------------------------------------
def emit_units(cg, b: ir.IRBuilder, instruction, plan: Plan, lhs_ptr, rhs_ptr, out_ptr,
               begin, end, threads: int, epilogue=None) -> None:
    """Units [begin, end) of `instruction` into out_ptr by im2col + GEMM; then
    `epilogue(b, image, row0, row1)` per unit, if given. If malloc fails the units
    are computed by the element generator instead."""
    geo, item = plan.geo, T.storage_type(plan.ptype)
    lhs, rhs = instruction.operands
    x = IrArray(b, lhs_ptr, lhs.shape)
    kernel = IrArray(b, rhs_ptr, rhs.shape)
    out = b.bitcast(out_ptr, item.as_pointer())
    raw = b.call(_libc(cg.llmod, "malloc", T.I8P, [T.I64]), [_c(scratch_bytes(plan))])
    packed = b.bitcast(raw, item.as_pointer())
    patches = b.gep(packed, [_c(plan.depth * geo.group_out)])
    gemm = gemm_function(cg.llmod, plan.ptype.numpy, threads)
    with b.if_else(b.icmp_unsigned("==", raw, ir.Constant(T.I8P, None)),
                   likely=False) as (failed, ok):
        with failed:
            with for_range(b, begin, end, name="unit") as u:
                image, row0, row1 = _unit(b, plan, u)
                _emit_region(cg, b, instruction, instruction, {lhs: x, rhs: kernel},
                             IrArray(b, out_ptr, instruction.shape), plan, image, row0, row1)
                if epilogue:
                    epilogue(b, image, row0, row1)
        with ok:
            _pack_kernel(b, instruction, plan, kernel, packed)
            with for_range(b, begin, end, name="unit") as u:
                image, row0, row1 = _unit(b, plan, u)
                rows = b.mul(b.sub(row1, row0), _c(plan.inner))
                _im2col(b, instruction, plan, x, patches, image, row0, row1, rows)
                _products(b, plan, gemm, packed, patches, out, image, row0, rows)
                if epilogue:
                    epilogue(b, image, row0, row1)
            b.call(_libc(cg.llmod, "free", ir.VoidType(), [T.I8P]), [raw])


def scratch_bytes(plan: Plan) -> int:
    """Bytes of one call's scratch: the packed kernel, then a unit's patches."""
    items = plan.depth * plan.geo.group_out + plan.block * plan.inner * plan.depth
    return items * (4 if plan.ptype is P.F32 else 8)


def _unit(b: ir.IRBuilder, plan: Plan, u):
    """(image, first row, end row) of unit u."""
    image = b.udiv(u, _c(plan.blocks))
    row0 = b.mul(b.urem(u, _c(plan.blocks)), _c(plan.block))
    row1 = b.add(row0, _c(plan.block))
    row1 = b.select(b.icmp_signed("<", row1, _c(plan.rows_outer)), row1, _c(plan.rows_outer))
    return image, row0, row1


def _pack_kernel(b: ir.IRBuilder, instruction, plan: Plan, kernel: IrArray, packed) -> None:
    """packed[group][k][o] = kernel[group * group_out + o, c, w (reversed if asked)],
    k = (w, c) or (c, w) as the patches are ordered."""
    geo = plan.geo
    d = instruction.attr("dim_labels")
    windows, cin, gout = geo.window_count, geo.kernel_features, geo.group_out
    with for_range(b, 0, geo.feature_groups, name="pg") as group:
        def body(offsets, flat):
            with for_range(b, 0, cin, name="pc") as c:
                k = b.add(b.mul(flat, _c(cin)), c) if plan.patches_by_row else \
                    b.add(b.mul(c, _c(windows)), flat)
                row = b.mul(b.add(b.mul(group, _c(plan.group_depth)), k), _c(gout))
                with for_range(b, 0, gout, name="po") as o:
                    index = [None] * kernel.shape.rank
                    index[d.kernel_output_feature_dimension] = b.add(b.mul(group, _c(gout)), o)
                    index[d.kernel_input_feature_dimension] = c
                    for kd, w, dim in zip(d.kernel_spatial_dimensions, offsets, geo.dims):
                        index[kd] = b.sub(_c(dim.size - 1), w) if dim.window_reversal else w
                    value = T.load(b, kernel.address(b, index), kernel.ptype)
                    b.store(value, b.gep(packed, [b.add(row, o)], inbounds=True))

        offset_loops(b, geo.dims, body)


def _positions(b: ir.IRBuilder, plan: Plan, row0, row1, body) -> None:
    """body(spatial output index list, row number within the unit) for the unit's
    output positions in the output's physical order."""
    sizes = plan.geo.out_sizes
    index = [None] * len(sizes)

    def level(k, r):
        if k == len(plan.order):
            body(list(index), r)
            return
        dim = plan.order[k]
        lo, hi = (row0, row1) if k == 0 else (0, sizes[dim])
        with for_range(b, lo, hi, name=f"y{dim}") as y:
            index[dim] = y
            local = b.sub(y, row0) if k == 0 else y
            level(k + 1, b.add(b.mul(r, _c(sizes[dim])), local))

    level(0, _c(0))


def _im2col(b: ir.IRBuilder, instruction, plan: Plan, x: IrArray, patches, image, row0, row1,
            rows) -> None:
    """The unit's patch matrix: row-major [position][group, w, c] or column-major
    [group, c, w][position]; zero where the window reads padding."""
    geo = plan.geo
    d = instruction.attr("dim_labels")
    cin, windows = geo.kernel_features, geo.window_count
    zero = ir.Constant(T.storage_type(plan.ptype), 0.0)

    def element(spatial, offsets, group, c, address):
        pairs = [window_position(b, o, w, dim, n_in, n_out) for o, w, dim, n_in, n_out in
                 zip(spatial, offsets, geo.dims, geo.in_sizes, geo.out_sizes)]
        index = [None] * x.shape.rank
        index[d.input_batch_dimension] = image
        index[d.input_feature_dimension] = b.add(b.mul(group, _c(cin)), c)
        for k, (position, _) in zip(d.input_spatial_dimensions, pairs):
            index[k] = position
        value = b.load(x.address(b, index))
        valid = and_all(b, [p[1] for p in pairs])
        b.store(value if valid is None else b.select(valid, value, zero), address)

    def groups(body):
        with for_range(b, 0, geo.feature_groups, name="ig") as group:
            with for_range(b, 0, cin, name="ic") as c:
                body(group, c)

    if plan.patches_by_row:
        def by_row(spatial, r):
            base = b.mul(r, _c(plan.depth))

            def window(offsets, flat):
                def feature(group, c):
                    column = b.add(b.mul(group, _c(plan.group_depth)),
                                   b.add(b.mul(flat, _c(cin)), c))
                    element(spatial, offsets, group, c,
                            b.gep(patches, [b.add(base, column)], inbounds=True))
                groups(feature)
            offset_loops(b, geo.dims, window)
        _positions(b, plan, row0, row1, by_row)
        return

    def by_column(group, c):
        def window(offsets, flat):
            column = b.add(b.mul(group, _c(plan.group_depth)),
                           b.add(b.mul(c, _c(windows)), flat))
            base = b.mul(column, rows)
            _positions(b, plan, row0, row1, lambda spatial, r: element(
                spatial, offsets, group, c, b.gep(patches, [b.add(base, r)], inbounds=True)))
        offset_loops(b, geo.dims, window)
    groups(by_column)


def _products(b: ir.IRBuilder, plan: Plan, gemm, packed, patches, out, image, row0,
              rows) -> None:
    """One GEMM per feature group of the unit's patches with the packed kernel."""
    geo = plan.geo
    kd, gout, total = plan.group_depth, geo.group_out, plan.depth
    start = b.mul(row0, _c(plan.inner))
    with for_range(b, 0, geo.feature_groups, name="gg") as group:
        kernel = b.gep(packed, [b.mul(group, _c(kd * gout))])
        if plan.patches_by_row:
            a = b.gep(patches, [b.mul(group, _c(kd))])
            a_rs, a_cs = _c(total), _c(1)
        else:
            a = b.gep(patches, [b.mul(b.mul(group, _c(kd)), rows)])
            a_rs, a_cs = _c(1), rows
        if plan.features_last:
            c = b.gep(out, [b.add(b.mul(b.add(b.mul(image, _c(plan.positions)), start),
                                        _c(geo.out_features)), b.mul(group, _c(gout)))])
            b.call(gemm, [rows, _c(gout), _c(kd), a, a_rs, a_cs, kernel, _c(gout), _c(1),
                          c, _c(geo.out_features)])
        else:
            first = b.add(b.mul(image, _c(geo.out_features)), b.mul(group, _c(gout)))
            c = b.gep(out, [b.add(b.mul(first, _c(plan.positions)), start)])
            b.call(gemm, [_c(gout), rows, _c(kd), kernel, _c(1), _c(gout), a, a_cs, a_rs,
                          c, _c(plan.positions)])


def _emit_region(cg, b: ir.IRBuilder, root, conv, arrays: dict, out: IrArray, plan: Plan,
                 image, row0, row1) -> None:
    """out[index] = value of `root` over one unit's part of the output (image `image`,
    outer spatial rows [row0, row1)), by the element generator."""
    d = conv.attr("dim_labels")
    outer = d.output_spatial_dimensions[plan.order[0]]
    scope = Scope(b)
    g = Generator(codegen.KernelContext(cg, b), scope, arrays)
    shape = out.shape
    order = list(reversed(minor_to_major(shape)))
    index: list = [None] * shape.rank
    index[d.output_batch_dimension] = Ix(image, OUTSIDE)

    def level(k):
        if k == len(order):
            out.store(g.b, g.value(root, tuple(index)), [i.value for i in index])
            return
        dim = order[k]
        if dim == d.output_batch_dimension:
            level(k + 1)
            return
        lo, hi = (row0, row1) if dim == outer else (0, shape.dimensions[dim])
        with scope.loop(scope.depth, lo, hi, name=f"e{dim}") as iv:
            index[dim] = iv
            level(k + 1)

    level(0)


def _libc(module: ir.Module, name: str, ret: ir.Type, args: list) -> ir.Function:
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, args), name)
    return fn


# -- the kernels -----------------------------------------------------------------------------
MACS_PER_WORK = 16
"""Multiply-adds of the GEMM path per element operation of the parallel cost model
(the GEMM wants ~2M of them per thread, the cost model ~128K operations)."""


def _work(instruction) -> int:
    """The fast path's work for the parallel cost model."""
    geo = geometry(instruction)
    macs = instruction.shape.element_count * geo.window_count * geo.kernel_features
    return macs // MACS_PER_WORK


@special(Op.CONVOLUTION)
def convolution_kernel(cg, instruction) -> bool:
    """im2col + GEMM when the plan applies, else a loop kernel from the generator."""
    threads = cg.options.threads
    plan = gemm_plan(instruction, instruction.shape, threads)
    if plan is None:
        emit_generated_kernel(cg, instruction, geometry(instruction).window_count *
                              geometry(instruction).kernel_features)
        return True
    operands = cg.kernel_operands(instruction)
    out_slice = cg.output_leaves(instruction)[0][2]
    slices = [s for _, s in operands] + [out_slice]
    split = threads == 1 or plan.units >= threads
    fn, b, pointers, begin, end = _kernel(cg, instruction, slices, len(operands))
    emit_units(cg, b, instruction, plan, *pointers, begin, end, 1 if split else threads)
    b.ret_void()
    _call(cg, fn, slices, plan, split, _work(instruction))
    return True


def _kernel(cg, instruction, slices, n_inputs):
    name = f"k{cg._kernels}_{codegen.symbol_name(instruction.name)}"
    cg._kernels += 1
    return kernel_function(cg.llmod, name, len(slices),
                           noalias=codegen.disjoint(slices, n_inputs))


def _call(cg, fn, slices, plan: Plan, split: bool, work: int) -> None:
    if split:
        cg.call_kernel(fn, slices, plan.units, work)
        return
    cg.b.call(fn, [cg._slice_pointer(s, cg.b) for s in slices] + [_c(0), _c(plan.units)])


def output_fusion(cg, instruction) -> bool:
    """A kOutput fusion of a convolution and an elementwise epilogue (bias, relu):
    each unit's convolution goes into the fusion's output by the fast path and the
    epilogue then runs over that unit in place, while it is in cache. False when the
    fusion is not of that form (the generic loop kernel, with the generator, runs it).
    Meant to be tried from the fusion dispatch alongside the dot's."""
    computation = instruction.attr("calls")
    root = computation.root_instruction
    convs = [i for i in computation.instructions if i.opcode is Op.CONVOLUTION]
    if instruction.shape.is_tuple or len(convs) != 1:
        return False
    conv = convs[0]
    if any(o.opcode is not Op.PARAMETER for o in conv.operands) or \
            not _elementwise_epilogue(computation, conv) or \
            conv.shape.element_type is not instruction.shape.element_type or \
            conv.shape.dimensions != instruction.shape.dimensions or \
            minor_to_major(conv.shape) != minor_to_major(instruction.shape):
        return False
    threads = cg.options.threads
    plan = gemm_plan(conv, conv.shape, threads)
    if plan is None:
        return False
    operands = cg.kernel_operands(instruction)
    slices = [s for _, s in operands] + [cg.output_leaves(instruction)[0][2]]
    if not codegen.disjoint(slices, len(operands)):
        return False    # the epilogue reads an operand the product would overwrite
    split = threads == 1 or plan.units >= threads
    fn, b, pointers, begin, end = _kernel(cg, instruction, slices, len(operands))
    params = computation.parameters
    lhs_ptr, rhs_ptr = (pointers[o.parameter_number] for o in conv.operands)
    out_ptr = pointers[-1]

    def epilogue(b, image, row0, row1):
        arrays = {p: IrArray(b, ptr, p.shape) for p, ptr in zip(params, pointers)}
        arrays[conv] = IrArray(b, out_ptr, conv.shape)
        _emit_region(cg, b, root, conv, arrays, IrArray(b, out_ptr, instruction.shape), plan,
                     image, row0, row1)

    emit_units(cg, b, conv, plan, lhs_ptr, rhs_ptr, out_ptr, begin, end,
               1 if split else threads, epilogue if root is not conv else None)
    b.ret_void()
    _call(cg, fn, slices, plan, split, _work(conv))
    return True


def _elementwise_epilogue(computation, conv) -> bool:
    """Every instruction reading the convolution's value, up to the root, is elementwise
    at the output's dimensions (it needs the product at its own index only)."""
    users = computation.users()
    stack, seen = [conv], set()
    root = computation.root_instruction
    while stack:
        node = stack.pop()
        if node is root or id(node) in seen:
            continue
        seen.add(id(node))
        for user in users.get(id(node), []):
            if user.opcode not in ELEMENTWISE or user.shape.dimensions != conv.shape.dimensions:
                return False
            stack.append(user)
    return True
