"""What a C caller must know of a compiled computation: its arguments and
results (names, element types, dimensions, bytes) and its scratch size.

Only what plain C can hold travels: arrays of booleans, integers and floats
(f16 and bf16 as their 16 raw bits), row-major, one buffer each. A module
with tuple parameters, complex or 8-bit float types, or other layouts is
refused with a CompileError saying which and why.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xlapy.errors import CompileError
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.ir import HloModule
from xlapy.hlo.shape import Layout, Shape

C_TYPES = {
    P.PRED: "uint8_t", P.S8: "int8_t", P.S16: "int16_t", P.S32: "int32_t", P.S64: "int64_t",
    P.U8: "uint8_t", P.U16: "uint16_t", P.U32: "uint32_t", P.U64: "uint64_t",
    P.F16: "uint16_t", P.BF16: "uint16_t", P.F32: "float", P.F64: "double",
}
"""Element type -> the C type of its storage (f16/bf16: raw bits)."""

ALIGN = 64
"""Bytes: the alignment the temporary buffer needs."""


@dataclass(frozen=True)
class Buffer:
    """One argument or result: a row-major array."""

    name: str
    shape: Shape

    @property
    def dtype(self) -> str:
        return self.shape.element_type.name.lower()

    @property
    def numpy_dtype(self) -> np.dtype:
        return self.shape.dtype

    @property
    def c_type(self) -> str:
        return C_TYPES[self.shape.element_type]

    @property
    def dims(self) -> tuple[int, ...]:
        return tuple(self.shape.dimensions)

    @property
    def count(self) -> int:
        return self.shape.element_count

    @property
    def bytes(self) -> int:
        return self.shape.byte_size

    def describe(self) -> str:
        return f"{self.dtype}[{','.join(str(d) for d in self.dims)}]"


@dataclass(frozen=True)
class Signature:
    name: str
    arguments: tuple[Buffer, ...]
    results: tuple[Buffer, ...]
    temp_bytes: int
    """Bytes of the caller-provided temporary buffer (64-byte aligned)."""


def check_buffer(shape: Shape, what: str) -> None:
    if shape.is_tuple:
        raise CompileError(f"{what} is a tuple; ahead-of-time functions take and return "
                           "arrays (pass the tuple's elements as separate arguments)")
    if shape.element_type not in C_TYPES:
        raise CompileError(f"{what} has element type {shape.element_type.name.lower()}, "
                           "which plain C cannot hold; ahead-of-time compilation supports "
                           + ", ".join(sorted(t.name.lower() for t in C_TYPES)))
    if shape.is_dynamic:
        raise CompileError(f"{what} has dynamic dimensions; ahead-of-time shapes are static")
    layout = shape.layout
    if layout is not None and shape.rank and \
            tuple(layout.minor_to_major) != Layout.descending(shape.rank).minor_to_major:
        raise CompileError(f"{what} has layout {{{','.join(map(str, layout.minor_to_major))}}}; "
                           "ahead-of-time buffers are row-major")


def result_shapes(module: HloModule) -> list[Shape]:
    root = module.entry_computation.root_instruction.shape
    if not root.is_tuple:
        return [root]
    for i, leaf in enumerate(root.tuple_shapes):
        if leaf.is_tuple:
            raise CompileError(f"result {i} is a nested tuple; ahead-of-time results are a "
                               "flat list of arrays")
    return list(root.tuple_shapes)


def signature_of(module: HloModule, name: str, temp_bytes: int) -> Signature:
    entry = module.entry_computation
    arguments = []
    for p in entry.parameters:
        check_buffer(p.shape, f"argument {p.parameter_number} ({p.name})")
        arguments.append(Buffer(p.name, p.shape))
    results = []
    for i, shape in enumerate(result_shapes(module)):
        check_buffer(shape, f"result {i}")
        results.append(Buffer(f"result{i}", shape))
    return Signature(name, tuple(arguments), tuple(results), temp_bytes)
