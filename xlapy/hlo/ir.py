"""The HLO IR objects: instructions, computations, modules.

Deliberately small: an instruction is an opcode, a shape, operands and a dict
of typed attributes (see `attributes.py`); analyses, shape inference, the text
format and the builder live in their own modules and work on these objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from xlapy.hlo.attributes import RawAttribute
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.printer import instruction_to_text, module_to_text
from xlapy.hlo.shape import Shape


class HloInstruction:
    """One HLO instruction.

    `attrs` maps XLA's attribute names to typed values in print order;
    `literal` is a constant's value (a NumPy array, or a tuple of them for a
    tuple constant); `parameter_number` a parameter's position;
    `source_position` the 1-based (line, column) of its definition when the
    parser read it from text (a VerifierError about it names that place).
    """

    __slots__ = ("name", "opcode", "shape", "operands", "attrs", "literal",
                 "parameter_number", "parent", "source_position")

    def __init__(self, opcode: Opcode, shape: Shape, operands: Iterable[HloInstruction] = (),
                 attrs: dict[str, Any] | None = None, *, name: str = "",
                 literal: Any = None, parameter_number: int | None = None):
        self.name = name
        self.opcode = opcode
        self.shape = shape
        self.operands = list(operands)
        self.attrs = dict(attrs or {})
        self.literal = literal
        self.parameter_number = parameter_number
        self.parent: HloComputation | None = None
        self.source_position: tuple[int, int] | None = None

    def attr(self, key: str, default: Any = None) -> Any:
        return self.attrs.get(key, default)

    @property
    def called_computations(self) -> list[HloComputation]:
        """Computations this instruction calls, in attribute order."""
        called = []
        for value in self.attrs.values():
            if isinstance(value, HloComputation):
                called.append(value)
            elif isinstance(value, tuple) and value and isinstance(value[0], HloComputation):
                called.extend(value)
        return called

    def operand(self, i: int) -> HloInstruction:
        return self.operands[i]

    def to_text(self, **options) -> str:
        """This instruction as one line of HLO text."""
        return instruction_to_text(self, **options)

    def __repr__(self) -> str:
        return f"<HloInstruction {self.name} = {self.shape} {self.opcode.value}>"


class HloComputation:
    """A list of instructions in a valid order with one root.

    Parameters are the instructions with opcode `parameter`, reachable in
    number order through `parameters`.
    """

    def __init__(self, name: str, instructions: Iterable[HloInstruction] = (),
                 root: HloInstruction | None = None, execution_thread: str | None = None):
        self.name = name
        self.instructions: list[HloInstruction] = []
        self.root_instruction: HloInstruction | None = None
        self.execution_thread = execution_thread
        self.parent: HloModule | None = None
        for instruction in instructions:
            self.add_instruction(instruction)
        if root is not None:
            self.root_instruction = root

    def add_instruction(self, instruction: HloInstruction) -> HloInstruction:
        """Append; the last instruction added is the root until one is set."""
        instruction.parent = self
        self.instructions.append(instruction)
        self.root_instruction = instruction
        return instruction

    @property
    def parameters(self) -> list[HloInstruction]:
        params = [i for i in self.instructions if i.opcode is Opcode.PARAMETER]
        return sorted(params, key=lambda p: p.parameter_number)

    def parameter(self, number: int) -> HloInstruction:
        for instruction in self.instructions:
            if instruction.opcode is Opcode.PARAMETER and instruction.parameter_number == number:
                return instruction
        raise IndexError(f"computation {self.name} has no parameter {number}")

    @property
    def num_parameters(self) -> int:
        return sum(1 for i in self.instructions if i.opcode is Opcode.PARAMETER)

    def instruction(self, name: str) -> HloInstruction:
        for instruction in self.instructions:
            if instruction.name == name:
                return instruction
        raise KeyError(f"computation {self.name} has no instruction {name}")

    def post_order(self) -> list[HloInstruction]:
        """Instructions reachable from the root (plus the rest), operands first."""
        roots = [self.root_instruction] if self.root_instruction is not None else []
        return operand_post_order(roots + self.instructions)

    def users(self) -> dict[int, list[HloInstruction]]:
        """id(instruction) -> the instructions that use it, in program order."""
        result: dict[int, list[HloInstruction]] = {id(i): [] for i in self.instructions}
        for instruction in self.instructions:
            for operand in dict.fromkeys(instruction.operands):
                result.setdefault(id(operand), []).append(instruction)
        return result

    def program_shape(self) -> tuple[list[Shape], Shape]:
        return [p.shape for p in self.parameters], self.root_instruction.shape

    def __iter__(self) -> Iterator[HloInstruction]:
        return iter(self.instructions)

    def __repr__(self) -> str:
        return f"<HloComputation {self.name}: {len(self.instructions)} instructions>"


class HloModule:
    """An entry computation plus every computation it calls.

    `computations` is in print order: callees before callers, the entry last.
    `attributes` holds the header attributes (`entry_computation_layout`,
    `is_scheduled`, `input_output_alias`, ...) in order; `frame_tables` the
    FileNames/FunctionNames/FileLocations/StackFrames text verbatim;
    `source_position` the (line, column) of its `HloModule` header when parsed.
    """

    def __init__(self, name: str):
        self.name = name
        self.source_position: tuple[int, int] | None = None
        self.computations: list[HloComputation] = []
        self.entry_computation: HloComputation | None = None
        self.attributes: dict[str, Any] = {}
        self.frame_tables: str = ""

    def add_computation(self, computation: HloComputation, entry: bool = False) -> HloComputation:
        if any(c.name == computation.name for c in self.computations):
            raise ValueError(f"module {self.name} already has a computation {computation.name}")
        computation.parent = self
        self.computations.append(computation)
        if entry:
            self.entry_computation = computation
        return computation

    def computation(self, name: str) -> HloComputation:
        for computation in self.computations:
            if computation.name == name:
                return computation
        raise KeyError(f"module {self.name} has no computation {name}")

    def to_text(self, **options) -> str:
        """XLA's HLO text (long form by default; `short=True` for JAX's form)."""
        return module_to_text(self, **options)

    def __str__(self) -> str:
        return self.to_text()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HloModule):
            return NotImplemented
        return structural_key(self) == structural_key(other)

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return f"<HloModule {self.name}: {len(self.computations)} computations>"


def operand_post_order(roots: Iterable[HloInstruction], stop=()) -> list[HloInstruction]:
    """Each root and everything it depends on, every instruction after its operands
    and listed once; the operands of instructions whose id is in `stop` are not
    followed."""
    order: list[HloInstruction] = []
    seen: set[int] = set()
    for start in roots:
        if id(start) in seen:
            continue
        stack = [(start, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            if id(node) not in stop:
                stack.extend((op, False) for op in reversed(node.operands) if id(op) not in seen)
    return order


def structural_key(module: HloModule) -> tuple:
    """Everything that makes two modules the same program, as comparable data.

    Names, opcodes, shapes (with layouts), operand wiring, attributes,
    constants bit for bit, header attributes and the entry's identity.
    """

    def value_key(value):
        if isinstance(value, HloComputation):
            return ("computation", value.name)
        if isinstance(value, tuple):
            return tuple(value_key(v) for v in value)
        if isinstance(value, np.ndarray):
            return ("array", value.dtype.str, value.shape, value.tobytes())
        if isinstance(value, RawAttribute):
            return ("raw", value.text)
        return value

    def instruction_key(instruction: HloInstruction):
        return (instruction.name, instruction.opcode, instruction.shape,
                tuple(op.name for op in instruction.operands),
                tuple((k, value_key(v)) for k, v in instruction.attrs.items()),
                value_key(instruction.literal), instruction.parameter_number)

    def computation_key(computation: HloComputation):
        root = computation.root_instruction
        return (computation.name, computation.execution_thread,
                tuple(instruction_key(i) for i in computation.instructions),
                root.name if root is not None else None)

    entry = module.entry_computation.name if module.entry_computation else None
    return (module.name, entry,
            tuple((k, value_key(v)) for k, v in module.attributes.items()),
            module.frame_tables,
            tuple(computation_key(c) for c in module.computations))
