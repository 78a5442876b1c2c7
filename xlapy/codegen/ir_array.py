"""An array in memory as the generated code sees it: a typed pointer, a shape
and its layout, and the address of the element at a multi-dimensional index."""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.codegen import ir_types as T
from xlapy.hlo.shape import Layout, Shape


def minor_to_major(shape: Shape) -> tuple[int, ...]:
    layout = shape.layout or Layout.descending(shape.rank)
    return layout.minor_to_major


def is_row_major(shape: Shape) -> bool:
    return list(minor_to_major(shape)) == list(range(shape.rank - 1, -1, -1))


def strides(shape: Shape) -> list[int]:
    """Element strides per logical dimension for the shape's layout."""
    result = [0] * shape.rank
    step = 1
    for dim in minor_to_major(shape):
        result[dim] = step
        step *= shape.dimensions[dim]
    return result


class IrArray:
    """`ptr` points at element 0 (an i8* is cast to the storage type)."""

    def __init__(self, builder: ir.IRBuilder, ptr: ir.Value, shape: Shape):
        self.shape = shape
        self.ptype = shape.element_type
        self.elem = T.storage_type(self.ptype)
        self.ptr = ptr if ptr.type == self.elem.as_pointer() else \
            builder.bitcast(ptr, self.elem.as_pointer())
        self.strides = strides(shape)

    def linear(self, b: ir.IRBuilder, index) -> ir.Value:
        offset = None
        for value, stride, size in zip(index, self.strides, self.shape.dimensions):
            if size == 1:
                continue
            term = value if stride == 1 else b.mul(value, ir.Constant(T.I64, stride),
                                                   flags=("nsw",))
            offset = term if offset is None else b.add(offset, term, flags=("nsw",))
        return offset if offset is not None else ir.Constant(T.I64, 0)

    def address(self, b: ir.IRBuilder, index) -> ir.Value:
        return b.gep(self.ptr, [self.linear(b, index)], inbounds=True)

    def load(self, b: ir.IRBuilder, index):
        return T.load(b, self.address(b, index), self.ptype)

    def store(self, b: ir.IRBuilder, value, index) -> None:
        T.store(b, value, self.address(b, index), self.ptype)
