"""The printer of XLA's HLO text format.

`module_to_text(m)` prints XLA's long form (`%` names, operand shapes inline,
computation signatures, `/*index=N*/` every fifth operand and tuple element);
`short=True` prints the form `jax.jit(f).lower(x).as_text(dialect="hlo")`
gives (bare names, no operand shapes, no signatures). Both keep every
attribute and every constant in full, so `parse(m.to_text()) == m`.
"""

from __future__ import annotations

import enum
import numbers

import numpy as np

from xlapy.hlo import ir
from xlapy.hlo.attributes import (
    AttrKind,
    ComputationLayout,
    ConvolutionDimensionNumbers,
    InputOutputAlias,
    IotaReplicaGroups,
    OpMetadata,
    PaddingConfig,
    Precision,
    RawAttribute,
    SliceRange,
    Window,
)
from xlapy.hlo.lexer import Lexer, Tok, escape_c_string
from xlapy.hlo.literal_text import literal_to_text
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.parse_attributes import kind_of
from xlapy.hlo.shape import Shape

__all__ = ["attribute_to_text", "computation_to_text", "instruction_to_text",
           "literal_to_text", "module_to_text", "shape_to_text"]

ANNOTATION_INTERVAL = 5
"""XLA marks every fifth operand and tuple element with `/*index=N*/`."""


def module_to_text(module: ir.HloModule, short: bool = False) -> str:
    """The whole module: header, frame tables, then each computation, entry last."""
    header = "HloModule " + module.name + "".join(
        f", {key}={module_attribute_to_text(value)}" for key, value in module.attributes.items())
    parts = [header]
    if module.frame_tables:
        parts.append(module.frame_tables.strip() + "\n")
    for computation in module.computations:
        is_entry = computation is module.entry_computation
        parts.append(computation_to_text(computation, short=short, is_entry=is_entry))
    return "\n\n".join(parts) + "\n"


def computation_to_text(computation: ir.HloComputation, short: bool = False,
                        is_entry: bool = False) -> str:
    """`%name (p: f32[2]) -> f32[2] {` ... `}`, or `name {` ... `}` in the short form."""
    head = ("ENTRY " if is_entry else "") + _name(computation.name, short)
    if computation.root_instruction is None:
        raise ValueError(f"computation {computation.name} has no instructions")
    if not short:
        parameters = ", ".join(f"{p.name}: {shape_to_text(p.shape, layout=False)}"
                               for p in computation.parameters)
        result = computation.root_instruction.shape
        head += f" ({parameters}) -> {shape_to_text(result, layout=False)}"
    lines = [head + " {"]
    for instruction in computation.instructions:
        prefix = "ROOT " if instruction is computation.root_instruction else ""
        lines.append("  " + prefix + instruction_to_text(instruction, short=short))
    text = "\n".join(lines) + "\n}"
    thread = computation.execution_thread
    if thread is not None and thread != "main":
        text += f', execution_thread="{escape_c_string(thread)}"'
    return text


def instruction_to_text(instruction: ir.HloInstruction, short: bool = False) -> str:
    """`%add.3 = f32[2]{0} add(f32[2]{0} %x, f32[2]{0} %y), metadata={...}` (no ROOT)."""
    opcode = instruction.opcode
    text = (f"{_name(instruction.name, short)} = {shape_to_text(instruction.shape)} "
            f"{opcode.value}({_operands_text(instruction, short)})")
    for key, value in instruction.attrs.items():
        text += f", {key}={attribute_to_text(opcode.value, key, value, short)}"
    return text


def _operands_text(instruction: ir.HloInstruction, short: bool) -> str:
    if instruction.opcode is Opcode.PARAMETER:
        if instruction.parameter_number is None:
            raise ValueError(f"parameter {instruction.name} has no parameter_number")
        return str(instruction.parameter_number)
    if instruction.opcode is Opcode.CONSTANT:
        if instruction.literal is None:
            return "{...}"
        return literal_to_text(instruction.literal, instruction.shape)
    text = ""
    for i, operand in enumerate(instruction.operands):
        if i:
            marked = not short and i % ANNOTATION_INTERVAL == 0
            text += f", /*index={i}*/" if marked else ", "
        if not short:
            text += shape_to_text(operand.shape) + " "
        text += _name(operand.name, short)
    return text


def _name(name: str, short: bool) -> str:
    """`%name`; in the short form just `name`, unless it would not read back as a
    name (`pred`, `ROOT`, `nan`, ...), which keeps its `%`."""
    if short and _is_plain_name(name):
        return name
    return "%" + name


def _is_plain_name(name: str) -> bool:
    token = Lexer(name).lex(0)
    return token.kind is Tok.IDENT and token.end == len(name)


def shape_to_text(shape: Shape, layout: bool = True) -> str:
    """XLA's spelling of a shape, `/*index=5*/` markers in long tuples included."""
    return shape.to_text(print_layout=layout)


# -- attribute values ---------------------------------------------------------------------
def attribute_to_text(opcode_text: str, name: str, value, short: bool = False) -> str:
    """The text after `name=` for an instruction attribute."""
    if isinstance(value, (list, tuple)):
        return _sequence_to_text(kind_of(opcode_text, name), tuple(value), short)
    return _value_to_text(value, short)


def _value_to_text(value, short: bool) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return _float_text(float(value))
    if isinstance(value, str):
        return '"' + escape_c_string(value) + '"'
    if isinstance(value, ir.HloComputation):
        return _name(value.name, short)
    if isinstance(value, Shape):
        return shape_to_text(value)
    if isinstance(value, OpMetadata):
        return "{" + " ".join(f"{k}={_value_to_text(v, short)}" for k, v in value.items) + "}"
    if isinstance(value, (PaddingConfig, Window, SliceRange, ConvolutionDimensionNumbers,
                          IotaReplicaGroups, RawAttribute)):
        return value.to_text()
    if isinstance(value, enum.Enum):
        return str(value.value)
    raise TypeError(f"cannot print attribute value {value!r}")


def _sequence_to_text(kind: AttrKind, items: tuple, short: bool) -> str:
    """Braced lists, spelled as XLA spells each kind: `{1,0}`, `{{0,1},{2,3}}`,
    `{%a, %b}`, `{[0:2], [1:4:2]}`, `{default,highest}`, `{f32[2]{0}, s32[]}`."""
    if kind in (AttrKind.INT_LIST_LIST, AttrKind.REPLICA_GROUPS) or (
            items and isinstance(items[0], (list, tuple))):
        return "{" + ",".join("{" + ",".join(map(str, group)) + "}" for group in items) + "}"
    if items and isinstance(items[0], Precision):
        return "{" + ",".join(p.value for p in items) + "}"
    if items and isinstance(items[0], (ir.HloComputation, SliceRange, Shape)):
        return "{" + ", ".join(_value_to_text(item, short) for item in items) + "}"
    return "{" + ",".join(_value_to_text(item, short) for item in items) + "}"


def _float_text(value: float) -> str:
    """XLA prints float attributes with 6 significant digits; use more when needed
    so that the value reads back exactly."""
    text = f"{value:.6g}"
    return text if float(text) == value or value != value else repr(value)


# -- module header ----------------------------------------------------------------------------
def module_attribute_to_text(value) -> str:
    """A header attribute's value: entry_computation_layout, input_output_alias, ..."""
    if isinstance(value, ComputationLayout):
        return value.to_text()
    if isinstance(value, tuple) and all(isinstance(v, InputOutputAlias) for v in value):
        if not value:
            return "{}"
        return "{ " + ", ".join(_alias_text(alias) for alias in value) + " }"
    return _value_to_text(value, short=False)


def _alias_text(alias: InputOutputAlias) -> str:
    def index(values):
        return "{" + ",".join(map(str, values)) + "}"

    kind = f", {alias.kind}" if alias.kind else ""
    return f"{index(alias.output_index)}: ({alias.parameter_number}, " \
           f"{index(alias.parameter_index)}{kind})"
