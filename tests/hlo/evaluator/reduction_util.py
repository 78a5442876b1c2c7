"""Shared pieces of the interpreter's reduction and sort tests: HLO type
names, random samples per type, tolerant comparison, a tiny builder for
hand-written scalar bodies, the bodies and references the reduce and
reduce-window tests share, and running a whole HLO text module."""

from __future__ import annotations

import numpy as np

from xlapy.hlo.attributes import ComparisonDirection, ComparisonType, Window, WindowDimension
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.evaluator.evaluator import Evaluator
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


# -- bodies and references shared by the reduce and reduce-window tests --------------------
NUMPY_REDUCERS = {
    "add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
}
PRED_REDUCERS = {"add": np.logical_or, "multiply": np.logical_and, "maximum": np.logical_or,
                 "minimum": np.logical_and, "and": np.logical_and, "or": np.logical_or,
                 "xor": np.logical_xor}


def affine_body(name: str) -> HloComputation:
    """f(acc, x) = acc * 2 + x: not associative, so it shows the fold order."""
    b = Body(f"affine_{name}")
    acc, x = b.param(0, name), b.param(1, name)
    two = b.const(2, name)
    return b.build(b.op(Opcode.ADD, name, b.op(Opcode.MULTIPLY, name, acc, two), x))


def concat_body() -> HloComputation:
    """(a, 10^len a) ⊕ (b, 10^len b) = (a·10^len b + b, 10^len a · 10^len b): digit
    strings concatenated, associative but not commutative, so the result spells
    out the order in which elements were combined."""
    b = Body("concat")
    a, pa, x, px = (b.param(i, "s64") for i in range(4))
    joined = b.op(Opcode.ADD, "s64", b.op(Opcode.MULTIPLY, "s64", a, px), x)
    scale = b.op(Opcode.MULTIPLY, "s64", pa, px)
    return b.build(b.op(Opcode.TUPLE, Shape.tuple([Shape.scalar("s64")] * 2), joined, scale))


def digits_of(values) -> int:
    return int("".join(str(int(v)) for v in values) or "0")


def argmax_body(name: str) -> HloComputation:
    """JAX's argmax reducer: the larger value wins, ties keep the lower index."""
    b = Body(f"argmax_{name}")
    av, ai, xv, xi = b.param(0, name), b.param(1, "s32"), b.param(2, name), b.param(3, "s32")
    gt = b.compare(xv, av, "GT")
    eq = b.compare(xv, av, "EQ")
    lower = b.compare(xi, ai, "LT")
    take = b.op(Opcode.OR, "pred", gt, b.op(Opcode.AND, "pred", eq, lower))
    return b.build(b.op(Opcode.TUPLE, Shape.tuple([Shape.scalar(name), Shape.scalar("s32")]),
                        b.op(Opcode.SELECT, name, take, xv, av),
                        b.op(Opcode.SELECT, "s32", take, xi, ai)))


def jax_arg_body(name: str, direction: str) -> HloComputation:
    """JAX's argmax (GT) / argmin (LT) reducer: NaN wins, then the better value,
    and among equal values the lower index."""
    b = Body(f"jax_arg{direction}_{name}")
    av, ai, xv, xi = b.param(0, name), b.param(1, "s32"), b.param(2, name), b.param(3, "s32")
    pick_value = b.op(Opcode.OR, "pred", b.compare(av, xv, direction), b.compare(av, av, "NE"))
    tie = b.op(Opcode.AND, "pred", b.compare(av, xv, "EQ"), b.compare(ai, xi, "LT"))
    pick_index = b.op(Opcode.OR, "pred", pick_value, tie)
    return b.build(b.op(Opcode.TUPLE, Shape.tuple([Shape.scalar(name), Shape.scalar("s32")]),
                        b.op(Opcode.SELECT, name, pick_value, av, xv),
                        b.op(Opcode.SELECT, "s32", pick_index, ai, xi)))


def sequential_fold(body: HloComputation, inputs: list, inits: list) -> list:
    """The old definition: init, then each element of the last axis in order, one
    body evaluation per element. Returns the running values (one array per
    output, shaped like the inputs); the reduction is the last of them."""
    evaluator = Evaluator()
    running = [np.empty(inputs[0].shape, dtype=np.asarray(init).dtype) for init in inits]
    for row in np.ndindex(*inputs[0].shape[:-1]):
        accs = list(inits)
        for k in range(inputs[0].shape[-1]):
            value = evaluator.call(body, [*accs, *(np.asarray(x[row + (k,)]) for x in inputs)])
            accs = list(value) if isinstance(value, tuple) else [value]
            for out, acc in zip(running, accs):
                out[row + (k,)] = acc
    return running
