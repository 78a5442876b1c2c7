"""Shared pieces of the interpreter's reduction and sort tests: HLO type
names, random samples per type, tolerant comparison, a tiny builder for
hand-written scalar bodies, and running a whole HLO text module."""

from __future__ import annotations

import numpy as np

from xlapy.hlo.attributes import ComparisonDirection, ComparisonType, Window, WindowDimension
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

ALL = ["pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
       "f16", "bf16", "f32", "f64", "c64", "c128"]
INTS = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]
FLOATS = ["f16", "bf16", "f32", "f64"]
REAL = INTS + FLOATS
TOLERANCE = {"f16": 2e-3, "bf16": 1e-2, "f32": 1e-5, "f64": 1e-12, "c64": 1e-5, "c128": 1e-12}


def dt(name: str) -> np.dtype:
    return PrimitiveType.from_text(name).numpy


def arr(name: str, dims=()) -> Shape:
    return Shape.array(name, dims)


def sample(name: str, dims, seed: int = 0, small: bool = False) -> np.ndarray:
    """Random values of an HLO type; `small` keeps sums and products in range."""
    rng = np.random.default_rng(seed)
    dtype = dt(name)
    if name == "pred":
        return rng.random(dims) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = (0, 4) if small else (info.min, info.max)
        return rng.integers(low, high, dims, dtype=dtype, endpoint=True)
    scale = 1.0 if small else 10.0
    real = (rng.standard_normal(dims) * scale).astype(np.float32)
    if dtype.kind == "c":
        return (real + 1j * rng.standard_normal(dims)).astype(dtype)
    return real.astype(dtype)


def close(actual, expected, name: str) -> None:
    expected = np.asarray(expected)
    assert actual.dtype == dt(name) and actual.shape == expected.shape
    if name in TOLERANCE:
        tol = TOLERANCE[name]
        np.testing.assert_allclose(actual.astype(np.complex128), expected.astype(np.complex128),
                                   rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(actual, expected)


class Body:
    """A tiny builder for scalar computations written out by hand."""

    def __init__(self, name: str):
        self.name = name
        self.instructions: list[HloInstruction] = []

    def _add(self, instruction: HloInstruction) -> HloInstruction:
        instruction.name = instruction.name or f"v{len(self.instructions)}"
        self.instructions.append(instruction)
        return instruction

    def param(self, number: int, name: str) -> HloInstruction:
        return self._add(HloInstruction(Opcode.PARAMETER, Shape.scalar(name),
                                        name=f"p{number}", parameter_number=number))

    def const(self, value, name: str) -> HloInstruction:
        return self._add(HloInstruction(Opcode.CONSTANT, Shape.scalar(name),
                                        literal=np.array(value, dtype=dt(name))))

    def op(self, opcode: Opcode, shape: Shape | str, *operands, **attrs) -> HloInstruction:
        shape = Shape.scalar(shape) if isinstance(shape, str) else shape
        return self._add(HloInstruction(opcode, shape, operands, attrs))

    def compare(self, a, b, direction: str, type_: str | None = None) -> HloInstruction:
        attrs = {"direction": ComparisonDirection(direction)}
        if type_:
            attrs["type"] = ComparisonType(type_)
        return self.op(Opcode.COMPARE, "pred", a, b, **attrs)

    def build(self, root: HloInstruction) -> HloComputation:
        return HloComputation(self.name, self.instructions, root=root)


def window(*dims: WindowDimension) -> Window:
    return Window(tuple(dims))


def execute_text(text: str, *args) -> list:
    """Parse, verify and run a module on the interpreter backend."""
    from xlapy.backends.interpreter import InterpreterBackend
    from xlapy.hlo import parse

    return InterpreterBackend().compile(parse(text)).execute(*args)
