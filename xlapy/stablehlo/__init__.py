"""StableHLO (and MHLO) in MLIR's text form, read into an xlapy HloModule.

`parse(text)` takes what `jax.jit(f).lower(*args).as_text()` prints by default;
`is_stablehlo(text)` tells it from XLA's HLO text, so `xlapy.execute` can take
either. Anything the parser does not understand is an `xlapy.errors.ParseError`
with its line and column.
"""

from __future__ import annotations

import re

from xlapy.errors import ParseError
from xlapy.hlo.ir import HloModule
from xlapy.stablehlo.emit import emit
from xlapy.stablehlo.parser import Parser

_STABLEHLO_START = re.compile(r"\A(?:\s|//[^\n]*\n|#[\w.$-]+\s*=[^\n]*\n)*"
                              r"(?:module\b|func\.func\b|\"builtin\.module\")")


def is_stablehlo(text: str | bytes) -> bool:
    """Whether `text` looks like MLIR (a `module`, `func.func`, or `#loc` aliases first)
    rather than XLA's HLO text (which starts with `HloModule`)."""
    if isinstance(text, bytes):
        text = text[:4096].decode("utf-8", "replace")
    return bool(_STABLEHLO_START.match(text)) or ("func.func" in text
                                                  and not text.lstrip().startswith("HloModule"))


def parse(text: str | bytes) -> HloModule:
    """The HloModule of a StableHLO module; ParseError (line, column) if the text is
    malformed or uses an op xlapy cannot lower. The module is verified."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ParseError(f"invalid UTF-8 at byte {e.start}") from e
    if not isinstance(text, str):
        raise ParseError(f"expected StableHLO text, got {type(text).__name__}")
    parser = Parser(text)
    return emit(parser.module(), parser.cursor)


__all__ = ["ParseError", "is_stablehlo", "parse"]
