"""What an op lowering sees: the builder, the op, its operands as HLO
instructions, and typed access to its attributes. Every lowering in the op
tables is `fn(ctx) -> list of result instructions`, one per StableHLO result.

A missing or ill-typed attribute is a ParseError at the op, never a KeyError.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from xlapy.errors import ParseError
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.shape import Shape
from xlapy.stablehlo.attributes import Dense, Enum, Struct, Typed, to_numpy
from xlapy.stablehlo.syntax import Op

if TYPE_CHECKING:
    from xlapy.hlo.builder import ComputationBuilder

_MISSING: Any = object()


class OpContext:
    """One op being lowered. `emitter` builds regions and functions (emit.Emitter)."""

    def __init__(self, emitter, builder: ComputationBuilder, op: Op,
                 args: list[HloInstruction], scope):
        self.emitter = emitter
        self.b = builder
        self.op = op
        self.args = args
        self.scope = scope

    def error(self, message: str) -> ParseError:
        return self.emitter.error(f"{self.op.name}: {message}", self.op.pos)

    # -- operands and results -----------------------------------------------------------
    def arity(self, *counts: int) -> None:
        """The op takes one of `counts` operands."""
        if len(self.args) not in counts:
            want = " or ".join(str(c) for c in counts)
            raise self.error(f"expected {want} operand(s), got {len(self.args)}")

    def result(self, i: int = 0) -> Shape:
        """The declared type of result `i`."""
        types = self.op.result_types or []
        if i >= len(types):
            raise self.error(f"needs a declared type for result {i}")
        return types[i]

    def unpack(self, instruction: HloInstruction, count: int | None = None) -> list:
        """The results of a tuple-shaped instruction as get-tuple-elements (the
        instruction itself when the op has one result and it is not a tuple)."""
        count = self.op.result_count if count is None else count
        if not instruction.shape.is_tuple:
            return [instruction]
        return [self.b.get_tuple_element(instruction, i) for i in range(count)]

    # -- attributes ---------------------------------------------------------------------
    def attr(self, name: str, default=_MISSING):
        value = self.op.attrs.get(name, _MISSING)
        if value is _MISSING:
            if default is _MISSING:
                raise self.error(f"missing attribute '{name}'")
            return default
        return value.value if isinstance(value, Typed) else value

    def ints(self, name: str, default=_MISSING) -> tuple[int, ...]:
        value = self.attr(name, default)
        if isinstance(value, Dense):
            value = to_numpy(value, value.shape).ravel().tolist() if value.shape else \
                value.elements
        if isinstance(value, int | np.integer) and not isinstance(value, bool):
            return (int(value),)
        if not isinstance(value, list | tuple) or \
                not all(isinstance(v, int | np.integer) for v in value):
            raise self.error(f"attribute '{name}' must be a list of integers, got {value!r}")
        return tuple(int(v) for v in value)

    def int(self, name: str, default=_MISSING) -> int:
        value = self.attr(name, default)
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise self.error(f"attribute '{name}' must be an integer, got {value!r}")
        return int(value)

    def bool(self, name: str, default: bool = False) -> bool:
        value = self.attr(name, default)
        if isinstance(value, list):  # window_reversal and friends
            return any(bool(v) for v in value)
        if not isinstance(value, bool | int):
            raise self.error(f"attribute '{name}' must be a boolean, got {value!r}")
        return bool(value)

    def bools(self, name: str, count: int) -> tuple[bool, ...]:
        value = self.attr(name, None)
        if value is None:
            return (False,) * count
        if isinstance(value, Dense):
            value = value.elements if isinstance(value.elements, list) else [value.elements]
        if not isinstance(value, list) or len(value) != count:
            raise self.error(f"attribute '{name}' must list {count} booleans, got {value!r}")
        return tuple(bool(v) for v in value)

    def word(self, name: str, default=_MISSING) -> str:
        """An enumeration attribute's value (`#stablehlo<precision HIGH>` -> "HIGH")."""
        value = self.attr(name, default)
        if isinstance(value, Enum):
            return value.value
        if isinstance(value, str):
            return value
        raise self.error(f"attribute '{name}' must be an enumeration value, got {value!r}")

    def pairs(self, name: str, count: int) -> list[tuple[int, int]]:
        """`[[lo, hi], ...]` or `dense<...> : tensor<Nx2xi64>` (default all zero)."""
        value = self.attr(name, None)
        if value is None:
            return [(0, 0)] * count
        if isinstance(value, Dense):
            shape = value.shape or Shape.array("s64", [count, 2])
            array = to_numpy(value, shape)
        else:
            array = np.asarray(value)
        if array.size == 0 and count == 0:
            return []
        if array.shape != (count, 2) or array.dtype.kind not in "iu":
            raise self.error(f"attribute '{name}' must be {count} (low, high) pairs, got "
                             f"{value!r}")
        return [(int(lo), int(hi)) for lo, hi in array]

    def struct_ints(self, struct: Struct, names) -> dict[str, tuple[int, ...]]:
        """The integer-list fields `names` of a `#stablehlo.<...>` struct (gather's,
        scatter's, dot's dimension numbers); any other field but index_vector_dim
        is an error."""
        out = {}
        for name in names:
            value = struct.fields.get(name, [])
            if not isinstance(value, list) or not all(isinstance(v, int) for v in value):
                raise self.error(f"{struct.name} field {name} must be a list of integers")
            out[name] = tuple(value)
        unknown = set(struct.fields) - set(names) - {"index_vector_dim"}
        if unknown:
            raise self.error(f"unknown {struct.name} field(s) {sorted(unknown)}")
        return out

    def region(self, index: int, name: str) -> HloComputation:
        """Region `index` as a computation of its own (a reducer, comparator...)."""
        if index >= len(self.op.regions):
            raise self.error(f"expected at least {index + 1} region(s), got "
                             f"{len(self.op.regions)}")
        return self.emitter.isolated_region(self.b, self.op.regions[index], name, self.scope)
