"""The element generator of `convolution`: one output element as a loop over
the kernel window and the group's input features (features innermost when
they are the input's minor dimension) of input x kernel, the input zero where
the window reads padding (`windows.window_position`): XLA's definition with
every attribute (dim_labels in any order, negative padding, lhs/rhs dilation,
window reversal, feature and batch groups) for every element type. When the
output feature is the innermost index, all features of one output position
are computed together into a stack row (the loop over features innermost:
contiguous kernel reads that vectorise). It is what a convolution is inside
a fusion, and the kernel of the convolutions the fast path (`convolution`)
does not take; importing this module registers it.
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.backends.cpu.kernels.windows import (
    COMPLEX,
    Geometry,
    accumulation_type,
    geometry,
    input_index,
    load_slot,
    multiply_add,
    offset_nest,
    stack_slot,
    store_slot,
    to_type,
)
from xlapy.codegen import ir_types as T
from xlapy.codegen.generator import Generator, select_value
from xlapy.codegen.ir_array import minor_to_major
from xlapy.codegen.scope import OUTSIDE, Ix, depth_of
from xlapy.codegen.tables import generates
from xlapy.hlo.attributes import WindowDimension
from xlapy.hlo.opcode import Opcode as Op

MIN_ROW_OUTPUTS = 4
"""Output features per group from which the generator computes all features of an
output position together."""
MAX_ROW = 8192
"""Most output features kept in a stack row."""


def _c(value: int) -> ir.Constant:
    return ir.Constant(T.I64, value)


class _Conv:
    """What the generator needs of one convolution instruction."""

    def __init__(self, instruction):
        self.geo = geometry(instruction)
        self.d = instruction.attr("dim_labels")
        self.lhs, self.rhs = instruction.operands
        self.out_t = instruction.shape.element_type
        self.in_types = (self.lhs.shape.element_type, self.rhs.shape.element_type)
        self.acc_t = accumulation_type(self.out_t, self.in_types)
        self.features_minor = features_minor(self.lhs.shape, self.d.input_feature_dimension)

    def input_value(self, g: Generator, batch: Ix, feature: Ix, spatial, offsets):
        """The input term in the accumulation type: zero where the window reads padding."""
        geo, d = self.geo, self.d
        source, valid = input_index(g, spatial, offsets, geo.dims, geo.in_sizes, geo.out_sizes)
        index = [None] * self.lhs.shape.rank
        index[d.input_batch_dimension] = batch
        index[d.input_feature_dimension] = feature
        for k, ix in zip(d.input_spatial_dimensions, source):
            index[k] = ix
        x = g.value(self.lhs, tuple(index))
        with g.scope.at(max(depth_of(index), depth_of(offsets))):
            if valid is not None:
                x = select_value(g.b, valid, x, T.constant(self.in_types[0], 0))
            return to_type(g.b, x, self.in_types[0], self.acc_t)

    def kernel_value(self, g: Generator, o: Ix, c: Ix, offsets):
        d = self.d
        index = [None] * self.rhs.shape.rank
        index[d.kernel_output_feature_dimension] = o
        index[d.kernel_input_feature_dimension] = c
        for k, w, dim in zip(d.kernel_spatial_dimensions, offsets, self.geo.dims):
            index[k] = _reversed(g, w, dim) if dim.window_reversal else w
        y = g.value(self.rhs, tuple(index))
        with g.scope.at(depth_of(index)):
            return to_type(g.b, y, self.in_types[1], self.acc_t)

    def reduction(self, g: Generator, body, unroll: bool) -> None:
        """body(offsets, c) over the window and a group's input features, features
        innermost when they are the input's minor dimension."""
        sizes = [dim.size for dim in self.geo.dims]
        count = self.geo.kernel_features
        if self.features_minor:
            offset_nest(g, sizes, lambda offsets: _feature_loop(
                g, count, lambda c: body(offsets, c)), unroll)
        else:
            _feature_loop(g, count, lambda c: offset_nest(
                g, sizes, lambda offsets: body(offsets, c), unroll))


@generates(Op.CONVOLUTION)
def convolution_element(g: Generator, instruction, index):
    """One output element; or, when the output feature is the innermost index and the
    groups have several outputs, all features of the output position at once."""
    conv = _Conv(instruction)
    if conv.lhs.shape.element_count == 0 or conv.rhs.shape.element_count == 0:
        return to_type(g.b, T.constant(conv.acc_t, 0), conv.acc_t, conv.out_t), OUTSIDE
    o = index[conv.d.output_feature_dimension]
    others = [ix for k, ix in enumerate(index) if k != conv.d.output_feature_dimension]
    if o.depth > depth_of(others) and conv.geo.group_out >= MIN_ROW_OUTPUTS and \
            conv.acc_t not in COMPLEX and conv.geo.out_features <= MAX_ROW:
        return _row_element(g, conv, index)
    return _single_element(g, conv, index)


def _single_element(g: Generator, conv: _Conv, index):
    d, geo = conv.d, conv.geo
    o = index[d.output_feature_dimension]
    batch, feature_base = _group_offsets(g, geo, index[d.output_batch_dimension], o)
    spatial = [index[k] for k in d.output_spatial_dimensions]
    depth = depth_of(index)
    with g.scope.at(depth):
        slot = stack_slot(g.scope, T.constant(conv.acc_t, 0))

        def accumulate(offsets, c: Ix):
            feature = c if feature_base is None else g.index_op(
                max(c.depth, feature_base.depth),
                lambda b: b.add(c.value, feature_base.value))
            x = conv.input_value(g, batch, feature, spatial, offsets)
            y = conv.kernel_value(g, o, c, offsets)
            store_slot(g.b, slot, multiply_add(g.b, load_slot(g.b, slot), x, y, conv.acc_t))

        conv.reduction(g, accumulate, unroll=True)
        value = to_type(g.b, load_slot(g.b, slot), conv.acc_t, conv.out_t)
    return value, depth


def _row_element(g: Generator, conv: _Conv, index):
    """All output features of one output position into a stack row (the innermost
    loop runs over the features: contiguous kernel reads that vectorise), computed
    once per position; the element is the row's entry."""
    d, geo = conv.d, conv.geo
    o = index[d.output_feature_dimension]
    spatial = [index[k] for k in d.output_spatial_dimensions]
    out_batch = index[d.output_batch_dimension]
    depth = depth_of([ix for k, ix in enumerate(index) if k != d.output_feature_dimension])
    scope = g.scope
    acc_type = T.compute_type(conv.acc_t)
    with scope.at(depth):
        row = scope.alloca(ir.ArrayType(acc_type, geo.out_features), name="row")
        row = g.b.bitcast(row, acc_type.as_pointer())
        zero = T.constant(conv.acc_t, 0)
        with scope.loop(scope.depth, 0, geo.out_features, name="z") as i:
            g.b.store(zero, g.b.gep(row, [i.value], inbounds=True))

        def group_body(group: Ix):
            batch = out_batch if geo.batch_groups == 1 else g.index_op(
                max(group.depth, out_batch.depth), lambda b: b.add(
                    b.mul(group.value, _c(geo.group_batch)), out_batch.value))

            def accumulate(offsets, c: Ix):
                feature = c if geo.feature_groups == 1 else g.index_op(
                    max(group.depth, c.depth), lambda b: b.add(
                        b.mul(group.value, _c(geo.kernel_features)), c.value))
                x = conv.input_value(g, batch, feature, spatial, offsets)
                with scope.loop(scope.depth, 0, geo.group_out, name="og") as og:
                    out = og if geo.groups == 1 else g.index_op(og.depth, lambda b: b.add(
                        b.mul(group.value, _c(geo.group_out)), og.value))
                    y = conv.kernel_value(g, out, c, offsets)
                    b = g.b
                    slot = b.gep(row, [out.value], inbounds=True)
                    b.store(multiply_add(b, b.load(slot), x, y, conv.acc_t), slot)

            conv.reduction(g, accumulate, unroll=False)   # the inner loop vectorises

        _feature_loop(g, geo.groups, group_body, name="grp")
    value_depth = max(depth, o.depth)
    with scope.at(value_depth):
        value = g.b.load(g.b.gep(row, [o.value], inbounds=True))
        return to_type(g.b, value, conv.acc_t, conv.out_t), value_depth


def _group_offsets(g: Generator, geo: Geometry, out_batch: Ix, o: Ix):
    """(input batch Ix, first input feature of the group as an Ix or None)."""
    if geo.groups == 1:
        return out_batch, None
    group = g.index_op(o.depth, lambda b: b.udiv(o.value, _c(geo.group_out)))
    if geo.batch_groups > 1:
        batch = g.index_op(max(group.depth, out_batch.depth), lambda b: b.add(
            b.mul(group.value, _c(geo.group_batch)), out_batch.value))
        return batch, None
    return out_batch, g.index_op(group.depth, lambda b: b.mul(group.value,
                                                              _c(geo.kernel_features)))


def _reversed(g: Generator, w: Ix, dim: WindowDimension) -> Ix:
    return g.index_op(w.depth, lambda b: b.sub(_c(dim.size - 1), w.value))


def _feature_loop(g: Generator, count: int, body, name: str = "c") -> None:
    if count == 1:
        body(Ix.const(0))
        return
    with g.scope.loop(g.scope.depth, 0, count, name=name) as c:
        body(c)


def features_minor(shape, feature_dim: int) -> bool:
    return minor_to_major(shape)[0] == feature_dim
