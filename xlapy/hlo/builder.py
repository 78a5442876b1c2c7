"""Builds HLO computations and modules op by op, like XLA's XlaBuilder.

A `ComputationBuilder` appends instructions to the computation it is building;
each method returns the new HloInstruction, which is the handle later ops take
as an operand. Shapes come from shape inference (or from the method, for ops
whose result XLA reads from the declared shape) and get XLA's default
row-major layouts. Every instruction is checked as it is added, so a bad
program fails at the call that made it: a ShapeError for a shape rule, a
BuilderError for anything else.

Builders of one module share a `ModuleBuilder`, which hands out names unique
across the module in XLA's `base.N` style (`add.3`, `parameter.1`, `region.4`),
caches the common scalar reducers, and assembles the module: callees first,
the entry last, `entry_computation_layout` set as XLA sets it.

    mb = ModuleBuilder("jit_f")
    b = mb.computation("main")
    x = b.parameter(0, Shape.array(PrimitiveType.F32, [8]))
    s = b.reduce(b.exp(x), b.constant(np.float32(0)), [0],
                 b.scalar_reducer(Opcode.ADD, PrimitiveType.F32))
    module = mb.build(b)
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from xlapy.errors import BuilderError, ShapeError, VerifierError
from xlapy.hlo import shape_inference
from xlapy.hlo.attributes import (
    ATTRIBUTE_ENUMS,
    AttrKind,
    ComparisonDirection,
    ComputationLayout,
    IotaReplicaGroups,
    OpMetadata,
    Precision,
    attribute_kind,
)
from xlapy.hlo.builder_control import ControlOps
from xlapy.hlo.builder_elementwise import ElementwiseOps
from xlapy.hlo.builder_ops import ArrayOps, element_type_of, enum_value
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.hlo.verifier import verify as verify_module
from xlapy.hlo.verifier_rules import check_attributes, check_operand_count, shape_problem

__all__ = ["BuilderError", "ComputationBuilder", "ModuleBuilder"]


class ModuleBuilder:
    """Names, shared reducers and assembly for the computations of one module."""

    def __init__(self, name: str):
        self.name = name
        self._next_id = 1
        self.shared: dict[tuple, HloComputation] = {}
        """Called computations reused across the module, by key (reducers, comparators)."""

    def unique_name(self, base: str) -> str:
        """`base.N` with N counting up across the module, as XLA numbers names."""
        name = f"{base}.{self._next_id}"
        self._next_id += 1
        return name

    def computation(self, name: str) -> ComputationBuilder:
        """A builder for a new computation of this module (entry, body, reducer...)."""
        return ComputationBuilder(name, module=self)

    def scalar_reducer(self, opcode: Opcode, element_type) -> HloComputation:
        """`(lhs, rhs) -> opcode(lhs, rhs)` on scalars: one per (opcode, type) per module,
        so every reduce that adds f32 calls the same region."""
        if not isinstance(opcode, Opcode):
            raise BuilderError(f"module {self.name}: reducer opcode {opcode!r} is not an Opcode")
        element_type = self._element_type(element_type)
        key = ("reducer", opcode, element_type)
        if key not in self.shared:
            b = self.computation(f"{opcode.name.lower()}_{element_type.value}")
            scalar = Shape.scalar(element_type)
            b.binary(opcode, b.parameter(0, scalar, "lhs"), b.parameter(1, scalar, "rhs"))
            self.shared[key] = b.build()
        return self.shared[key]

    def scalar_comparator(self, direction, element_type) -> HloComputation:
        """`(lhs, rhs) -> compare(lhs, rhs, direction)`: a sort comparator for one operand,
        shared per (direction, type) like the reducers."""
        element_type = self._element_type(element_type)
        try:
            direction = enum_value(ComparisonDirection, direction)
        except ValueError as e:
            raise BuilderError(f"module {self.name}: {e}") from e
        key = ("comparator", direction, element_type)
        if key not in self.shared:
            b = self.computation(f"compare_{direction.value.lower()}_{element_type.value}")
            scalar = Shape.scalar(element_type)
            b.compare(b.parameter(0, scalar, "lhs"), b.parameter(1, scalar, "rhs"), direction)
            self.shared[key] = b.build()
        return self.shared[key]

    def build(self, entry: ComputationBuilder | HloComputation, verify: bool = True) -> HloModule:
        """The module whose entry is `entry`, holding every computation it calls (callees
        first, the entry last) with `entry_computation_layout` set from the entry's
        signature. A finished HloComputation is used as is (not copied). Runs the
        verifier unless `verify=False`."""
        try:
            entry = as_computation(entry)
        except TypeError as e:
            raise BuilderError(f"module {self.name}: the entry: {e}") from e
        if entry.root_instruction is None:
            raise BuilderError(f"module {self.name}: entry computation {entry.name} has no root")
        module = HloModule(self.name)
        for computation in _callees_first(entry):
            try:
                module.add_computation(computation, entry=computation is entry)
            except ValueError as e:
                raise BuilderError(f"module {self.name}: {e}") from e
        params = entry.parameters
        module.attributes["entry_computation_layout"] = ComputationLayout(
            tuple(p.shape.with_default_layout() for p in params),
            entry.root_instruction.shape.with_default_layout())
        if verify:
            verify_module(module)
        return module

    def _element_type(self, value) -> PrimitiveType:
        try:
            return element_type_of(value)
        except TypeError as e:
            raise BuilderError(f"module {self.name}: {e}") from e


class ComputationBuilder(ElementwiseOps, ArrayOps, ControlOps):
    """Adds instructions to one computation; every op method returns the new
    instruction. Create with `ModuleBuilder.computation`, `subcomputation`, or
    directly (which starts a module of the same name)."""

    def __init__(self, name: str, module: ModuleBuilder | None = None):
        self.module = module if module is not None else ModuleBuilder(name)
        self._computation = HloComputation(self.module.unique_name(name))
        self._built = False
        self._metadata: OpMetadata | None = None

    @property
    def name(self) -> str:
        return self._computation.name

    def subcomputation(self, name: str) -> ComputationBuilder:
        """A builder for a called computation (body, branch, reducer) of the same module."""
        return self.module.computation(name)

    def scalar_reducer(self, opcode: Opcode, element_type) -> HloComputation:
        return self.module.scalar_reducer(opcode, element_type)

    def scalar_comparator(self, direction, element_type) -> HloComputation:
        return self.module.scalar_comparator(direction, element_type)

    def _enum(self, enum_type: type[enum.Enum], value, what: str) -> enum.Enum:
        """`value` (a member, its spelling or its name) as a member of `enum_type`;
        `what` names the argument in the error."""
        try:
            return enum_value(enum_type, value)
        except ValueError as e:
            raise BuilderError(f"{self._where()}: {what}: {e}") from e

    def _error(self, message: str) -> BuilderError:
        """A BuilderError about this computation (for op methods to raise)."""
        return BuilderError(f"{self._where()}: {message}")

    def _shape_of(self, x) -> Shape:
        """The shape of operand `x`, which must be an instruction."""
        if not isinstance(x, HloInstruction):
            raise self._error(f"expected an instruction, got {type(x).__name__} {x!r}")
        return x.shape

    def _operands(self, values, what: str) -> list:
        """One instruction or an iterable of them, as a list (each is checked when the
        instruction is added)."""
        if isinstance(values, HloInstruction):
            return [values]
        if isinstance(values, str | bytes) or not isinstance(values, Iterable):
            raise self._error(f"{what} must be an instruction or a sequence of them, "
                              f"got {type(values).__name__} {values!r}")
        return list(values)

    def _ints(self, values, what: str) -> tuple[int, ...]:
        """`values` (any iterable of integers) as a tuple of ints; `what` names them."""
        try:
            return tuple(int(v) for v in values)
        except (TypeError, ValueError) as e:
            raise self._error(f"{what} must be integers, got {values!r}") from e

    def _element_type(self, value) -> PrimitiveType:
        """A PrimitiveType from itself, its spelling ("f32") or a NumPy dtype."""
        try:
            return element_type_of(value)
        except TypeError as e:
            raise BuilderError(f"{self._where()}: {e}") from e

    def _called(self, computation) -> HloComputation:
        """A computation to call, from an HloComputation or a builder (built now)."""
        try:
            return as_computation(computation)
        except TypeError as e:
            raise BuilderError(f"{self._where()}: {e}") from e

    def set_op_metadata(self, metadata: OpMetadata | None) -> None:
        """Attach `metadata` (source location, op name) to every op added from now on;
        None stops it. How the frontend records where each op came from."""
        self._metadata = metadata

    # -- leaves ---------------------------------------------------------------------------
    def parameter(self, number: int, shape: Shape, name: str | None = None) -> HloInstruction:
        """Parameter `number` of this computation; `name` is the base of its name
        (`parameter.N` by default, the frontend may choose `Arg_0`)."""
        self._check_open()
        if not isinstance(shape, Shape) or shape_problem(shape):
            problem = shape_problem(shape) if isinstance(shape, Shape) else "not a Shape"
            raise BuilderError(f"{self._where()}: parameter({number}): bad shape {shape!r}: "
                               f"{problem}")
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            raise BuilderError(f"{self._where()}: parameter number {number!r} must be an int >= 0")
        for other in self._computation.instructions:
            if other.opcode is Opcode.PARAMETER and other.parameter_number == number:
                raise BuilderError(f"{self._where()}: parameter {number} already exists "
                                   f"({other.name})")
        instruction = HloInstruction(Opcode.PARAMETER, shape.with_default_layout(),
                                     parameter_number=number)
        return self._append(instruction, name or "parameter")

    def constant(self, value, dtype=None) -> HloInstruction:
        """A constant holding `value` (anything np.array takes); its shape is the array's,
        its element type `dtype` if given, else NumPy's (a Python float is f64)."""
        self._check_open()
        try:
            numpy_dtype = self._element_type(dtype).numpy if dtype is not None else None
            literal = np.array(value, dtype=numpy_dtype)
            element_type = PrimitiveType.from_numpy(literal.dtype)
        except (TypeError, ValueError, KeyError) as e:
            raise BuilderError(f"{self._where()}: constant({value!r}): {e}") from e
        shape = Shape.array(element_type, literal.shape).with_default_layout()
        instruction = HloInstruction(Opcode.CONSTANT, shape, literal=literal)
        if self._metadata is not None:
            instruction.attrs["metadata"] = self._metadata
        return self._append(instruction, "constant")

    # -- the generic op -------------------------------------------------------------------
    def add_instruction(self, opcode: Opcode,
                        operands: HloInstruction | Sequence[HloInstruction],
                        shape: Shape | None = None, *, name: str | None = None,
                        **attrs: Any) -> HloInstruction:
        """Add `opcode(operands)` (one instruction or a sequence) with XLA attributes
        `attrs`, kept in the given order.

        The shape is inferred when `shape` is None; a given shape is checked against
        the op's shape rule (and is required where the rule needs it, e.g. reshape).
        Attribute values may be given loosely (lists for tuples, "LT" for
        ComparisonDirection.LT, builders for computations)."""
        self._check_open()
        instruction, call = self._prepare(opcode, operands, attrs, name)
        if self._metadata is not None and "metadata" not in instruction.attrs:
            instruction.attrs["metadata"] = self._metadata
        if shape is not None and (not isinstance(shape, Shape) or shape_problem(shape)):
            problem = shape_problem(shape) if isinstance(shape, Shape) else "not a Shape"
            raise BuilderError(f"{self._where()}: {call}: bad shape {shape!r}: {problem}")
        inferred = self._infer(instruction, call, shape)
        instruction.shape = (shape if shape is not None else inferred).with_default_layout()
        return self._append(instruction, name or opcode.value)

    def infer_shape(self, opcode: Opcode, operands: Sequence[HloInstruction],
                    declared: Shape | None = None, **attrs: Any) -> Shape:
        """What `opcode(operands)` with `attrs` returns, without adding it; `declared`
        supplies what only a declared shape says (convert's or bitcast-convert's
        element type, a dot's preferred type), as in shape_inference.infer_shape."""
        instruction, call = self._prepare(opcode, operands, attrs, None)
        return self._infer(instruction, call, declared, check=False)

    def _prepare(self, opcode: Opcode, operands, attrs: dict, name: str | None
                 ) -> tuple[HloInstruction, str]:
        """A detached instruction with checked operands, operand count and attributes,
        and its call text for error messages."""
        if not isinstance(opcode, Opcode):
            raise BuilderError(f"{self._where()}: {opcode!r} is not an Opcode")
        if opcode in (Opcode.PARAMETER, Opcode.CONSTANT):
            raise BuilderError(f"{self._where()}: add a {opcode.value} with "
                               f"{opcode.value}(), which sets its number or value")
        operands = self._operands(operands, f"{opcode.value} operands")
        instruction = HloInstruction(opcode, None, operands, name=name or opcode.value)
        instruction.parent = self._computation
        call = self._describe(instruction)
        self._check_operands(instruction, call)
        instruction.attrs = {k: self._attribute(opcode, k, v, call) for k, v in attrs.items()}
        try:
            check_operand_count(instruction)
            check_attributes(instruction)
        except VerifierError as e:
            raise BuilderError(f"{self._where()}: {call}: {_reason(e, instruction)}") from e
        return instruction, call

    def _infer(self, instruction: HloInstruction, call: str, declared: Shape | None,
               check: bool = True) -> Shape:
        """The shape rule's result; with `check`, `declared` must agree with it."""
        opcode = instruction.opcode
        if declared is None and not shape_inference.can_infer(opcode):
            raise BuilderError(f"{self._where()}: {call}: {opcode.value} needs an explicit shape")
        shapes = [op.shape for op in instruction.operands]
        try:
            inferred = shape_inference.infer_shape(opcode, shapes, instruction.attrs, declared)
        except ShapeError as e:
            raise ShapeError(f"{self._where()}: {call}: {e}") from e
        if check and declared is not None and not inferred.compatible(declared):
            raise ShapeError(f"{self._where()}: {call}: declared shape "
                             f"{declared.to_text(False)} does not match the inferred shape "
                             f"{inferred.to_text(False)}")
        return inferred

    # -- finishing ------------------------------------------------------------------------
    def build(self, root: HloInstruction | None = None) -> HloComputation:
        """Finish the computation with `root` (default: the last instruction added).
        Building again returns the same computation; adding after it is an error."""
        computation = self._computation
        if self._built:
            if root is None or root is computation.root_instruction:
                return computation
            raise BuilderError(f"{self._where()} is already built with root "
                               f"{computation.root_instruction.name}")
        if not computation.instructions:
            raise BuilderError(f"{self._where()} has no instructions to build")
        if root is not None:
            if not isinstance(root, HloInstruction) or root.parent is not computation:
                raise BuilderError(f"{self._where()}: root {getattr(root, 'name', root)!r} is "
                                   "not an instruction of this computation")
            computation.root_instruction = root
        numbers = sorted(p.parameter_number for p in computation.parameters)
        if numbers != list(range(len(numbers))):
            raise BuilderError(f"{self._where()}: parameter numbers {numbers} are not "
                               f"0..{len(numbers) - 1}")
        self._built = True
        return computation

    # -- helpers --------------------------------------------------------------------------
    def _append(self, instruction: HloInstruction, base: str) -> HloInstruction:
        instruction.name = self.module.unique_name(base)
        return self._computation.add_instruction(instruction)

    def _check_open(self) -> None:
        if self._built:
            raise BuilderError(f"{self._where()} is already built; no more instructions")

    def _where(self) -> str:
        return f"computation {self._computation.name}"

    def _describe(self, instruction: HloInstruction) -> str:
        """The call as text, e.g. `add(x.1 f32[2], y.2 f32[3])`, for error messages."""
        def operand(op) -> str:
            if not isinstance(op, HloInstruction):
                return repr(op)
            shape = op.shape.to_text(False) if isinstance(op.shape, Shape) else "?"
            return f"{op.name} {shape}"
        operands = ", ".join(operand(op) for op in instruction.operands)
        return f"{instruction.opcode.value}({operands})"

    def _check_operands(self, instruction: HloInstruction, call: str) -> None:
        for i, op in enumerate(instruction.operands):
            if not isinstance(op, HloInstruction):
                raise BuilderError(f"{self._where()}: {call}: operand {i} is a "
                                   f"{type(op).__name__}, not an instruction")
            if op.parent is not self._computation:
                owner = op.parent.name if op.parent is not None else "no computation"
                raise BuilderError(
                    f"{self._where()}: {call}: operand {i} ({op.name}) belongs to {owner}; "
                    "an operand must come from the computation being built (pass values "
                    "into a called computation as its parameters)")

    def _attribute(self, opcode: Opcode, name: str, value, call: str):
        """`value` in the exact type attributes.py fixes for attribute `name`."""
        try:
            return normalize_attribute(opcode, name, value)
        except (TypeError, ValueError, KeyError) as e:
            raise BuilderError(f"{self._where()}: {call}: attribute {name}={value!r}: {e}") from e


# -- attribute values --------------------------------------------------------------------
def normalize_attribute(opcode: Opcode, name: str, value):
    """Loose Python values (lists, NumPy ints, enum spellings, builders) as the typed
    value of attribute `name`; anything already typed passes through."""
    kind = attribute_kind(opcode.value, name)
    if kind is AttrKind.COMPUTATION:
        return as_computation(value)
    if kind is AttrKind.COMPUTATION_LIST:
        return tuple(as_computation(c) for c in value)
    if kind is AttrKind.INT and isinstance(value, np.integer):
        return int(value)
    if kind is AttrKind.BOOL and isinstance(value, np.bool_):
        return bool(value)
    if kind is AttrKind.INT_LIST and not isinstance(value, tuple | str):
        return tuple(int(v) for v in value)
    if kind in (AttrKind.INT_LIST_LIST, AttrKind.REPLICA_GROUPS) \
            and not isinstance(value, IotaReplicaGroups):
        return tuple(tuple(int(v) for v in group) for group in value)
    if kind in (AttrKind.SLICE, AttrKind.SHAPE_LIST) and isinstance(value, list | Iterator):
        return tuple(value)
    if kind is AttrKind.PRECISION_LIST and not isinstance(value, tuple):
        return tuple(enum_value(Precision, p) for p in value)
    if kind is AttrKind.ENUM and name in ATTRIBUTE_ENUMS:
        return enum_value(ATTRIBUTE_ENUMS[name], value)
    return value


def as_computation(value) -> HloComputation:
    """A called computation from a finished HloComputation or a builder (built now)."""
    if isinstance(value, HloComputation):
        return value
    if isinstance(value, ComputationBuilder):
        return value.build()
    raise TypeError(f"expected an HloComputation or ComputationBuilder, got "
                    f"{type(value).__name__}")


def _callees_first(entry: HloComputation) -> list[HloComputation]:
    """Every computation reachable from `entry`, each after all it calls."""
    order: list[HloComputation] = []
    seen: set[int] = set()

    def visit(computation: HloComputation) -> None:
        seen.add(id(computation))
        for instruction in computation.instructions:
            for callee in instruction.called_computations:
                if id(callee) not in seen:
                    visit(callee)
        order.append(computation)

    visit(entry)
    return order


def _reason(error: VerifierError, instruction: HloInstruction) -> str:
    """A VerifierError's message without the computation/instruction prefix, which
    the builder replaces with the call."""
    text = str(error)
    prefix = f"in computation {instruction.parent.name}, instruction {instruction.name} " \
             f"({instruction.opcode.value}): "
    return text[len(prefix):] if text.startswith(prefix) else text
