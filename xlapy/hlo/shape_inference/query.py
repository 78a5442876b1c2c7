"""The question a shape rule answers, and the rule table.

A `Query` holds one instruction's opcode, operand shapes, attributes and
(optionally) the shape the instruction declares. Its helpers read operands and
attributes with their exact types from `attributes.py`, and `fail` raises a
ShapeError whose message starts with the opcode, so every rule reports what is
wrong in the same voice: "dot: lhs contracting dimension 1 (size 3) ...".
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, NoReturn

from xlapy.errors import ShapeError
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

REQUIRED = object()
"""Default marker: the attribute must be present."""


def text(shape: Shape) -> str:
    """A shape as XLA prints it, without layout: `f32[2,3]`, `(s32[], token[])`."""
    return shape.to_text(print_layout=False)


def braces(values) -> str:
    """`(1, 2)` -> `{1,2}`, the way XLA prints an int list attribute."""
    return "{" + ",".join(str(v) for v in values) + "}"


def array(element_type: PrimitiveType, dimensions, dynamic=()) -> Shape:
    """An array shape without layout; `dynamic` marks bounded dimensions."""
    dims = tuple(int(d) for d in dimensions)
    dynamic = tuple(bool(d) for d in dynamic)
    if not any(dynamic):
        dynamic = ()
    return Shape(element_type, dims, None, (), dynamic)


def with_dims(shape: Shape, dimensions, element_type: PrimitiveType | None = None) -> Shape:
    """`shape` with new static dimensions (and optionally a new element type)."""
    return array(element_type or shape.element_type, dimensions)


class Query:
    """One shape-inference request: read operands/attributes or fail clearly."""

    def __init__(self, opcode: Opcode, operands: list[Shape], attrs: dict[str, Any],
                 declared: Shape | None):
        self.opcode = opcode
        self.operands = operands
        self.attrs = attrs
        self.declared = declared

    @property
    def name(self) -> str:
        return self.opcode.value

    def fail(self, message: str) -> NoReturn:
        raise ShapeError(f"{self.name}: {message}")

    # -- operands ---------------------------------------------------------------------
    def count(self, expected: int) -> None:
        if len(self.operands) != expected:
            self.fail(f"expects {expected} operand(s), got {len(self.operands)}")

    def count_at_least(self, minimum: int) -> None:
        if len(self.operands) < minimum:
            self.fail(f"expects at least {minimum} operand(s), got {len(self.operands)}")

    def array(self, i: int, role: str = "") -> Shape:
        """Operand `i`, which must be an array (not a tuple or token)."""
        shape = self.operands[i]
        if not shape.is_array:
            self.fail(f"{role or f'operand {i}'} must be an array, but has shape {text(shape)}")
        return shape

    def arrays(self, start: int = 0, stop: int | None = None) -> list[Shape]:
        stop = len(self.operands) if stop is None else stop
        return [self.array(i) for i in range(start, stop)]

    def token(self, i: int) -> Shape:
        shape = self.operands[i]
        if not shape.is_token:
            self.fail(f"operand {i} must be a token, but has shape {text(shape)}")
        return shape

    def tuple_operand(self, i: int, minimum: int = 0) -> Shape:
        shape = self.operands[i]
        if not shape.is_tuple or len(shape.tuple_shapes) < minimum:
            self.fail(f"operand {i} must be a tuple of at least {minimum} elements, "
                      f"but has shape {text(shape)}")
        return shape

    def scalar(self, i: int, role: str = "") -> Shape:
        shape = self.array(i, role)
        if shape.rank:
            self.fail(f"{role or f'operand {i}'} must be a scalar, but has shape {text(shape)}")
        return shape

    # -- attributes -------------------------------------------------------------------
    def _get(self, name: str, default):
        if name in self.attrs and self.attrs[name] is not None:
            return self.attrs[name]
        if default is REQUIRED:
            self.fail(f"needs the attribute {name}")
        return default

    def integer(self, name: str, default: Any = REQUIRED) -> int:
        value = self._get(name, default)
        if value is default and default is not REQUIRED:
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(f"attribute {name} must be an int, got {value!r}")
        return value

    def integers(self, name: str, default: Any = REQUIRED) -> tuple[int, ...]:
        value = self._get(name, default)
        if not isinstance(value, (tuple, list)) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in value):
            self.fail(f"attribute {name} must be a list of ints, got {value!r}")
        return tuple(value)

    def single_dimension(self, name: str = "dimensions") -> int:
        """An attribute spelled `dimensions={d}` that holds exactly one dimension."""
        dims = self.integers(name)
        if len(dims) != 1:
            self.fail(f"attribute {name}={braces(dims)} must hold exactly one dimension")
        return dims[0]

    def flag(self, name: str, default: Any = REQUIRED) -> bool:
        value = self._get(name, default)
        if not isinstance(value, bool):
            self.fail(f"attribute {name} must be true or false, got {value!r}")
        return value

    def typed(self, name: str, cls: type, default: Any = REQUIRED):
        """An attribute whose value must be an instance of `cls` (an enum or dataclass)."""
        value = self._get(name, default)
        if value is default and default is not REQUIRED:
            return value
        if not isinstance(value, cls):
            kind = "one of " + ", ".join(m.value for m in cls) if issubclass(
                cls, enum.Enum) else cls.__name__
            self.fail(f"attribute {name} must be {kind}, got {value!r}")
        return value

    def computation(self, name: str):
        """A called computation; checks it has a root and numbered parameters."""
        value = self._get(name, REQUIRED)
        if not isinstance(value, HloComputation):
            self.fail(f"attribute {name} must be a computation, got {value!r}")
        self.signature(value, name)
        return value

    def computations(self, name: str) -> tuple:
        value = self._get(name, REQUIRED)
        if not isinstance(value, (tuple, list)) or not all(
                isinstance(c, HloComputation) for c in value):
            self.fail(f"attribute {name} must be a list of computations, got {value!r}")
        for computation in value:
            self.signature(computation, name)
        return tuple(value)

    def signature(self, computation, role: str) -> tuple[list[Shape], Shape]:
        """(parameter shapes, result shape) of a called computation."""
        if computation.root_instruction is None:
            self.fail(f"{role} computation {computation.name} has no root instruction")
        numbers = sorted(p.parameter_number for p in computation.parameters
                         if isinstance(p.parameter_number, int))
        if numbers != list(range(computation.num_parameters)):
            self.fail(f"{role} computation {computation.name} has parameter numbers "
                      f"{numbers}, not 0..{computation.num_parameters - 1}")
        return computation.program_shape()

    # -- the declared result ----------------------------------------------------------
    def declared_shape(self, why: str) -> Shape:
        if self.declared is None:
            self.fail(f"{why} only the instruction's declared shape says so; "
                      f"call infer_shape(..., declared=shape)")
        return self.declared

    def declared_array(self, why: str) -> Shape:
        shape = self.declared_shape(why)
        if not shape.is_array:
            self.fail(f"the result must be an array, but is declared {text(shape)}")
        return shape


# -- the rule table -------------------------------------------------------------------
Rule = Callable[[Query], Shape]
RULES: dict[Opcode, Rule] = {}
DECLARED: set[Opcode] = set()
"""Opcodes whose result is only partly implied by operands and attributes: their
rules need the instruction's declared shape (e.g. convert's element type)."""


def rule(*opcodes: Opcode, declared: bool = False) -> Callable[[Rule], Rule]:
    """Register the decorated function as the shape rule for `opcodes`."""

    def register(fn: Rule) -> Rule:
        for opcode in opcodes:
            if opcode in RULES:
                raise RuntimeError(f"two shape rules for {opcode.value}")
            RULES[opcode] = fn
            if declared:
                DECLARED.add(opcode)
        return fn

    return register
