"""The parser of XLA's HLO text format: modules, computations, instructions.

Reads both forms XLA prints: the long one of dumps and optimised modules
(`%` names, operand shapes inline, computation signatures) and the short one
of `jax.jit(f).lower(x).as_text(dialect="hlo")`. Like XLA's parser it gives
every array shape written without a layout the default row-major layout,
infers result shapes that are left out (where XLA can), takes the last
computation as the entry when none is marked ENTRY, and the last instruction
as the root when none is marked ROOT. Called computations and operands must
be defined before they are used; instruction names are unique within their
computation (XLA allows the same name in different computations). An elided
constant `{...}` gets the values XLA's parser makes up for it (see
literal_text.ElidedFiller). Malformed text raises ParseError with the line
and column of the problem.
"""

from __future__ import annotations

from xlapy.errors import ParseError, ShapeError
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.lexer import Tok, Token, TokenStream
from xlapy.hlo.literal_text import ElidedFiller, parse_literal
from xlapy.hlo.opcode import VARIADIC, Opcode
from xlapy.hlo.parse_attributes import (
    MAX_NESTING,
    parse_attribute,
    parse_frame_tables,
    parse_instruction_names,
    parse_module_attribute,
    parse_shape_tokens,
)
from xlapy.hlo.shape import Shape
from xlapy.hlo.shape_inference import infer_shape

CAN_INFER_SHAPE = frozenset(Opcode[name] for name in """
    ABS ACOS ACOSH ADD ADD_DEPENDENCY AFTER_ALL AND ASIN ASINH ATAN ATAN2 ATANH
    BATCH_NORM_GRAD BATCH_NORM_INFERENCE BATCH_NORM_TRAINING BROADCAST CALL CBRT CEIL CHOLESKY
    CLAMP CLZ COMPARE COMPLEX CONCATENATE CONDITIONAL CONVOLUTION COPY COS COSH DIVIDE DOMAIN
    DOT ERF EXP EXPM1 FFT FLOOR GATHER GET_DIMENSION_SIZE GET_TUPLE_ELEMENT IMAG IS_FINITE LOG
    LOG1P LOGISTIC MAP MAXIMUM MINIMUM MULHI MULTIPLY NEGATE NOT OPTIMIZATION_BARRIER OR PAD
    PARTITION_ID POPCNT POWER RAGGED_DOT REAL REDUCE REDUCE_WINDOW REMAINDER REPLICA_ID REVERSE
    ROUND_NEAREST_AFZ ROUND_NEAREST_EVEN RSQRT SCALED_DOT SCAN SCATTER SELECT SELECT_AND_SCATTER
    SET_DIMENSION_SIZE SHIFT_LEFT SHIFT_RIGHT_ARITHMETIC SHIFT_RIGHT_LOGICAL SIGN SIN SINH SORT
    SQRT SUBTRACT TAN TANH TOPK TRANSPOSE TRIANGULAR_SOLVE TUPLE WHILE XOR
""".split())
"""Opcodes whose result shape may be left out of the text (XLA's CanInferShape)."""

_NAME_TOKENS = (Tok.NAME, Tok.IDENT)
_OPCODE_TEXTS = frozenset(op.value for op in Opcode)


def parse_module(text: str | bytes) -> HloModule:
    """Parse XLA's HLO text (short or long form) into a module; ParseError if malformed.

    Bytes are decoded as UTF-8; bytes that are not UTF-8 are a ParseError at
    their line and column. Every instruction, and the module, records where it
    was defined (`source_position`), so the verifier can say where a parsed
    module is wrong.
    """
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = decode_utf8(bytes(text))
    parser = _ModuleParser(text)
    try:
        return parser.parse()
    except RecursionError:
        raise parser.stream.error("the text is nested too deeply to parse") from None


def decode_utf8(data: bytes) -> str:
    """`data` as text; ParseError at the line and column of the first byte that is
    not UTF-8 (the column counts the characters before it on its line, plus one)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line_start = data.rfind(b"\n", 0, e.start) + 1
        line_end = data.find(b"\n", e.start)
        source = data[line_start:line_end if line_end >= 0 else len(data)]
        column = len(data[line_start:e.start].decode("utf-8", "replace")) + 1
        raise ParseError(f"invalid UTF-8: byte 0x{data[e.start]:02x} ({e.reason})",
                         data.count(b"\n", 0, e.start) + 1, column,
                         source.decode("utf-8", "replace").rstrip("\r")) from None


def parse_shape(text: str) -> Shape:
    """Parse a shape such as "f32[2,3]{1,0}", "(f32[], s32[4])" or "token[]".

    As in XLA, an array shape written without a layout gets the default
    row-major layout.
    """
    stream = TokenStream(text)
    shape = parse_shape_tokens(stream)
    if not stream.at(Tok.EOF):
        raise stream.unexpected("the end of the shape")
    return shape


class _ModuleParser:
    """One parse of one module text."""

    def __init__(self, text: str):
        self.stream = TokenStream(text)
        self.filler = ElidedFiller()
        self.computations: dict[str, HloComputation] = {}

    # -- module -------------------------------------------------------------------------
    def parse(self) -> HloModule:
        stream = self.stream
        if not stream.at_keyword("HloModule"):
            raise stream.unexpected("'HloModule'")
        header = stream.advance()
        module = HloModule(self._name("a module name")[0])
        module.source_position = self._position(header)
        while stream.accept(Tok.COMMA):
            key = self._attribute_name()
            if key.value in module.attributes:
                raise stream.error(f"module attribute {key.value}= appears twice", key)
            module.attributes[key.value] = parse_module_attribute(stream, key.value)
        if stream.at_keyword("FileNames"):
            module.frame_tables = parse_frame_tables(stream)
        order: list[HloComputation] = []
        entry = None
        while not stream.at(Tok.EOF):
            marker = stream.tok
            computation, is_entry = self._computation()
            if is_entry:
                if entry is not None:
                    raise stream.error("only one computation may be marked ENTRY", marker)
                entry = computation
            order.append(computation)
        if not order:
            raise stream.unexpected("a computation")
        entry = entry or order[-1]
        for computation in order:
            if computation is not entry:
                module.add_computation(computation)
        module.add_computation(entry, entry=True)
        return module

    def _name(self, what: str) -> tuple[str, Token]:
        if not self.stream.at(*_NAME_TOKENS):
            raise self.stream.unexpected(what)
        token = self.stream.advance()
        return token.value, token

    def _attribute_name(self) -> Token:
        """`name=` (XLA's spelling), also accepting `name =`."""
        stream = self.stream
        if stream.at(Tok.IDENT) and stream.peek().kind is Tok.EQUAL:
            token = stream.advance()
            stream.advance()
            return token
        return stream.expect(Tok.ATTRIBUTE_NAME, "an attribute name")

    # -- computations -------------------------------------------------------------------
    def _computation(self) -> tuple[HloComputation, bool]:
        stream = self.stream
        is_entry = stream.at_keyword("ENTRY")
        if is_entry:
            stream.advance()
        name, name_token = self._name("a computation name")
        if name in self.computations:
            raise stream.error(f"computation %{name} is already defined", name_token)
        signature = None
        if stream.at(Tok.LPAREN):
            self._parameter_list()
            stream.expect(Tok.ARROW, "'->'")
            signature = (stream.tok, parse_shape_tokens(stream))
        computation = self._instructions(name, name_token)
        if signature is not None:
            token, shape = signature
            root = computation.root_instruction
            if not shape.compatible(root.shape):
                raise stream.error(f"computation %{name} returns {shape.to_text(False)} but "
                                   f"its root %{root.name} has shape "
                                   f"{root.shape.to_text(False)}", token)
        while stream.accept(Tok.COMMA):
            key = self._attribute_name()
            if key.value != "execution_thread":
                raise stream.error(f"unexpected attribute {key.value}= after computation "
                                   f"%{name}; only execution_thread= may follow", key)
            thread = stream.expect(Tok.STRING, "a thread name string").value
            computation.execution_thread = None if thread == "main" else thread
        self.computations[name] = computation
        return computation, is_entry

    def _parameter_list(self) -> None:
        """`(p0: f32[2], p1: s32[])`; XLA reads and ignores it, and so do we."""
        stream = self.stream
        stream.expect(Tok.LPAREN)
        if stream.accept(Tok.RPAREN):
            return
        while True:
            self._name("a parameter name")
            stream.accept(Tok.COLON)
            parse_shape_tokens(stream)
            if not stream.accept(Tok.COMMA):
                break
        stream.expect(Tok.RPAREN, "',' or ')'")

    def _instructions(self, name: str, name_token: Token) -> HloComputation:
        stream = self.stream
        stream.expect(Tok.LBRACE, "'{' to start the body of computation %" + name)
        computation = HloComputation(name)
        table: dict[str, HloInstruction] = {}
        parameters: dict[int, Token] = {}
        root = None
        while not stream.at(Tok.RBRACE):
            if stream.at(Tok.EOF):
                raise stream.unexpected(f"'}}' to end computation %{name}")
            marker = stream.tok
            instruction, is_root = self._instruction(table, parameters)
            if is_root:
                if root is not None:
                    raise stream.error(f"computation %{name} has more than one ROOT", marker)
                root = instruction
            table[instruction.name] = instruction
            computation.add_instruction(instruction)
        stream.expect(Tok.RBRACE)
        if not computation.instructions:
            raise stream.error(f"computation %{name} has no instructions", name_token)
        if sorted(parameters) != list(range(len(parameters))):
            numbers = ", ".join(map(str, sorted(parameters)))
            raise stream.error(f"computation %{name} has parameters numbered {numbers}; they "
                               f"must be numbered 0 to {len(parameters) - 1}", name_token)
        if root is not None:
            computation.root_instruction = root
        return computation

    # -- instructions -------------------------------------------------------------------
    def _instruction(self, table: dict, parameters: dict) -> tuple[HloInstruction, bool]:
        """`[ROOT] name = [shape] opcode(operands) [, attr=value]*`."""
        stream = self.stream
        is_root = stream.at_keyword("ROOT")
        if is_root:
            stream.advance()
        if stream.at(Tok.ATTRIBUTE_NAME):  # `x=f32[] ...` written without spaces
            name_token = stream.advance()
            name = name_token.value
        else:
            name, name_token = self._name("an instruction name")
            stream.expect(Tok.EQUAL, "'='")
        if name in table:
            raise stream.error(f"instruction %{name} is already defined in this computation",
                               name_token)
        shape = parse_shape_tokens(stream) if stream.at(Tok.PRIMITIVE_TYPE, Tok.LPAREN) else None
        opcode_token = stream.tok
        opcode = self._opcode()
        if shape is None and opcode not in CAN_INFER_SHAPE:
            raise stream.error(f"{opcode.value} needs its result shape written before the "
                               "opcode", opcode_token)
        literal = parameter_number = None
        operands: list[HloInstruction] = []
        if opcode is Opcode.PARAMETER:
            parameter_number = self._parameter_number(parameters)
        elif opcode is Opcode.CONSTANT:
            stream.expect(Tok.LPAREN)
            literal = parse_literal(stream, shape, self.filler)
            stream.expect(Tok.RPAREN)
        else:
            operands = self._operands(table)
            arity = opcode.arity
            if arity != VARIADIC and len(operands) != arity:
                raise stream.error(f"{opcode.value} takes {arity} operand"
                                   f"{'s' if arity != 1 else ''} but has {len(operands)}",
                                   opcode_token)
        attrs = self._attributes(opcode, table)
        if shape is None:
            shape = self._infer_shape(opcode, operands, attrs, opcode_token)
        instruction = HloInstruction(opcode, shape, operands, attrs, name=name,
                                     literal=literal, parameter_number=parameter_number)
        instruction.source_position = self._position(name_token)
        return instruction, is_root

    def _position(self, token: Token) -> tuple[int, int]:
        line, column, _ = self.stream.lexer.location(token.start)
        return line, column

    def _opcode(self) -> Opcode:
        stream = self.stream
        token = stream.tok
        if token.kind is not Tok.IDENT:
            raise stream.unexpected("an opcode")
        try:
            opcode = Opcode.from_text(token.text)
        except KeyError:
            message = f"unknown opcode '{token.text}'"
            base, _, suffix = token.text.rpartition("-")
            if suffix in ("start", "update", "done") and base in _OPCODE_TEXTS:
                message += (f" (XLA's shorthand for an async {base}, which xlapy does not "
                            "read; write async-start/async-done with calls=)")
            raise stream.error(message, token) from None
        stream.advance()
        return opcode

    def _parameter_number(self, parameters: dict) -> int:
        stream = self.stream
        stream.expect(Tok.LPAREN)
        token = stream.expect(Tok.INT, "a parameter number")
        stream.expect(Tok.RPAREN)
        number = token.value
        if number < 0:
            raise stream.error("parameter number must be >= 0", token)
        if number in parameters:
            raise stream.error(f"parameter number {number} is used twice", token)
        parameters[number] = token
        return number

    def _operands(self, table: dict) -> list[HloInstruction]:
        """`(a, b)` or, in the long form, `(f32[2]{0} %a, f32[2]{0} %b)`."""
        stream = self.stream
        stream.expect(Tok.LPAREN)
        operands: list[HloInstruction] = []
        if stream.accept(Tok.RPAREN):
            return operands
        while True:
            declared = None
            if stream.at(Tok.PRIMITIVE_TYPE, Tok.LPAREN):
                declared = (stream.tok, parse_shape_tokens(stream))
            name, token = self._name("an operand name")
            operand = table.get(name)
            if operand is None:
                raise stream.error(f"undefined operand %{name}", token)
            if declared is not None and not declared[1].compatible(operand.shape):
                raise stream.error(f"operand %{name} is written with shape "
                                   f"{declared[1].to_text(False)} but has shape "
                                   f"{operand.shape.to_text(False)}", declared[0])
            operands.append(operand)
            if not stream.accept(Tok.COMMA):
                break
        stream.expect(Tok.RPAREN, "',' or ')'")
        return operands

    def _attributes(self, opcode: Opcode, table: dict) -> dict:
        stream = self.stream
        attrs: dict = {}
        while stream.accept(Tok.COMMA):
            key = self._attribute_name()
            if key.value in attrs:
                raise stream.error(f"attribute {key.value}= appears twice", key)
            if key.value == "control-predecessors":
                attrs[key.value] = parse_instruction_names(
                    stream, lambda token: self._check_defined(token, table))
            else:
                attrs[key.value] = parse_attribute(stream, opcode.value, key.value,
                                                   self._computation_named)
        return attrs

    def _check_defined(self, token: Token, table: dict) -> None:
        if token.value not in table:
            raise self.stream.error(f"undefined control predecessor %{token.value}", token)

    def _computation_named(self, token: Token) -> HloComputation:
        computation = self.computations.get(token.value)
        if computation is None:
            raise self.stream.error(f"unknown computation %{token.value}", token)
        return computation

    def _infer_shape(self, opcode: Opcode, operands: list, attrs: dict,
                     token: Token) -> Shape:
        """The result shape XLA would infer, with default layouts."""
        shapes = [operand.shape for operand in operands]
        # a tuple is checked before inference, which costs its size: see _size_problem
        problem = _size_problem(Shape.tuple(shapes)) if opcode is Opcode.TUPLE else ""
        if not problem:
            try:
                shape = infer_shape(opcode, shapes, attrs)
            except ShapeError as e:
                raise self.stream.error(f"cannot infer the result shape of {opcode.value}: "
                                        f"{e}", token) from None
            problem = _size_problem(shape)
        if problem:
            raise self.stream.error(f"the inferred result shape of {opcode.value} {problem}",
                                    token)
        return shape.with_default_layout()


MAX_INFERRED_SHAPE_NODES = 1 << 13
"""Most subshapes an inferred tuple shape may have. Tuples of tuples of one operand
(`t2 = tuple(t1, t1)`) double at each step; written shapes are bounded by the text."""


def _size_problem(shape: Shape) -> str:
    """Why an inferred shape is too big to keep (see MAX_INFERRED_SHAPE_NODES,
    MAX_NESTING), or ''. Stops counting at the limit, so it costs little."""
    nodes = 0
    stack = [(shape, 0)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > MAX_INFERRED_SHAPE_NODES:
            return f"has more than {MAX_INFERRED_SHAPE_NODES} subshapes"
        if depth > MAX_NESTING:
            return f"nests tuples more than {MAX_NESTING} deep"
        stack.extend((sub, depth + 1) for sub in node.tuple_shapes)
    return ""
