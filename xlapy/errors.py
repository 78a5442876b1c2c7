"""The exceptions xlapy raises; each says what went wrong and where."""

from __future__ import annotations


class XlapyError(Exception):
    """Base of every error xlapy raises on purpose."""


class ParseError(XlapyError, ValueError):
    """Malformed HLO text. Carries the 1-based line and column of the problem."""

    def __init__(self, message: str, line: int = 0, column: int = 0, source_line: str = ""):
        self.message = message
        self.line = line
        self.column = column
        self.source_line = source_line
        where = f"line {line}, column {column}: " if line else ""
        text = where + message
        if source_line:
            text += "\n  " + source_line + "\n  " + " " * max(0, column - 1) + "^"
        super().__init__(text)


class VerifierError(XlapyError, ValueError):
    """An instruction breaks a shape rule or an opcode's contract.

    When the culprit was read from text, `line` and `column` (1-based) say
    where: the instruction's definition, or the `HloModule` header for a rule
    about the whole module; 0 when the IR was built some other way.
    """

    def __init__(self, message: str, instruction=None, *, line: int = 0, column: int = 0):
        self.instruction = instruction
        if instruction is not None:
            comp = instruction.parent.name if instruction.parent is not None else "?"
            message = f"in computation {comp}, instruction {instruction.name} " \
                      f"({instruction.opcode.value}): {message}"
            if not line:
                line, column = getattr(instruction, "source_position", None) or (0, 0)
        self.message = message
        self.line = line
        self.column = column
        super().__init__(message)

    def __str__(self) -> str:
        where = f"line {self.line}, column {self.column}: " if self.line else ""
        return where + self.message


class CompileError(XlapyError):
    """A function or module cannot be compiled; names the operation and why."""


class ExecutionError(XlapyError, RuntimeError):
    """Running a compiled module failed (bad arguments, unsupported op at run time)."""


class ShapeError(XlapyError, ValueError):
    """Shape inference failed: operands and attributes admit no result shape.

    Raised without an instruction name; the verifier and the parser add where.
    """


class BuilderError(XlapyError, ValueError):
    """A builder call that cannot make a valid instruction (not a shape rule: those
    raise ShapeError). Says which call, in which computation, and why."""
