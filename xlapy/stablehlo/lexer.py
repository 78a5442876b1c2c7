"""The lexer of MLIR's textual form, as StableHLO modules are printed, and the
cursor the parsers read tokens with.

MLIR's grammar is not regular at the level of types (`tensor<3x4xf32>` is one
type, not the identifiers `3x4xf32`), so the cursor lexes on demand and the
type parser may take the raw text of a balanced `<...>` (`raw_angle`). Every
token and every error carries a 1-based line and column.
"""

from __future__ import annotations

import bisect
import enum
import re
from typing import NamedTuple

from xlapy.errors import ParseError


class Tok(enum.Enum):
    EOF = "end of input"
    VALUE = "a value name"          # %0, %arg0, %0#1 (value = (name, result number or None))
    SYMBOL = "a symbol"             # @main, @"quoted"
    BLOCK = "a block label"         # ^bb0
    HASH = "an attribute alias"     # #loc1, #stablehlo.gather, #stablehlo
    BARE = "an identifier"          # stablehlo.add, dense, tensor, LT, x
    STRING = "a string"
    INT = "an integer"              # 12, -3, 0x7FC00000 (value: int)
    FLOAT = "a number"              # 1.5, -2.0e+00 (value: float)
    ARROW = "'->'"
    PUNCT = "punctuation"           # ( ) [ ] { } < > , : = * ? + -


class Token(NamedTuple):
    kind: Tok
    text: str
    value: object
    start: int
    end: int


_TOKEN = re.compile(r"""
    (?P<value>%[A-Za-z_$.\-0-9]+(?:\#[0-9]+)?)
  | (?P<symbol>@(?:"(?:[^"\\]|\\.)*"|[A-Za-z_$.\-0-9]+))
  | (?P<block>\^[A-Za-z_$.\-0-9]+)
  | (?P<hash>\#[A-Za-z_$.\-0-9]+)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<hex>-?0x[0-9A-Fa-f]+)
  | (?P<float>-?[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|-?[0-9]+[eE][-+]?[0-9]+)
  | (?P<int>-?[0-9]+)
  | (?P<bare>[A-Za-z_][A-Za-z_$.0-9]*)
  | (?P<arrow>->)
  | (?P<punct>\.\.\.|[()\[\]{}<>,:=*?+\-|!])
""", re.VERBOSE)
_SPACE = re.compile(r"(?:\s+|//[^\n]*)*")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def unescape(body: str) -> str:
    """An MLIR string literal's body (without quotes) with `\\n`, `\\"` and `\\XX` hex
    escapes resolved."""
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1:i + 2]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif re.fullmatch(r"[0-9A-Fa-f]{2}", body[i + 1:i + 3]):
            out.append(chr(int(body[i + 1:i + 3], 16)))
            i += 3
        else:
            out.append(c)
            i += 1
    return "".join(out)


class Cursor:
    """A position in the text; `peek` and `next` lex the token there on demand."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self._cache: tuple[int, Token] | None = None

    # -- positions and errors -----------------------------------------------------------
    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of character `offset`."""
        line = bisect.bisect_right(self._line_starts, offset) - 1
        return line + 1, offset - self._line_starts[line] + 1

    def error(self, message: str, offset: int | None = None) -> ParseError:
        """A ParseError at `offset` (default: the next token), showing its line."""
        if offset is None:
            offset = self.peek().start
        line, column = self.line_col(offset)
        start = self._line_starts[line - 1]
        end = self.text.find("\n", start)
        source = self.text[start:end if end >= 0 else len(self.text)]
        return ParseError(message, line, column, source.rstrip()[:200])

    # -- tokens -------------------------------------------------------------------------
    def peek(self) -> Token:
        if self._cache is not None and self._cache[0] == self.pos:
            return self._cache[1]
        token = self._lex(self.pos)
        self._cache = (self.pos, token)
        return token

    def next(self) -> Token:
        token = self.peek()
        self.pos = token.end
        return token

    def peek_is(self, text: str) -> bool:
        token = self.peek()
        return token.kind in (Tok.PUNCT, Tok.BARE, Tok.ARROW) and token.text == text

    def accept(self, text: str) -> bool:
        """Consume the punctuation or keyword `text` if it is next."""
        if self.peek_is(text):
            self.next()
            return True
        return False

    def expect(self, text: str, what: str = "") -> Token:
        if not self.peek_is(text):
            raise self.unexpected(f"'{text}'" + (f" {what}" if what else ""))
        return self.next()

    def items(self, parse, close: str, what: str) -> list:
        """`parse(self)` repeated, comma-separated, up to and including `close`
        (the opening bracket already consumed); an empty list when `close` is next."""
        items: list = []
        if self.accept(close):
            return items
        items.append(parse(self))
        while self.accept(","):
            items.append(parse(self))
        self.expect(close, what)
        return items

    def expect_kind(self, kind: Tok, what: str = "") -> Token:
        token = self.peek()
        if token.kind is not kind:
            raise self.unexpected(what or kind.value)
        return self.next()

    def unexpected(self, wanted: str) -> ParseError:
        token = self.peek()
        found = "end of input" if token.kind is Tok.EOF else f"'{token.text}'"
        return self.error(f"expected {wanted}, found {found}", token.start)

    def raw_angle(self) -> tuple[str, int]:
        """The text inside the balanced `<...>` that starts at the next token, and the
        offset of its first character; the cursor moves past the closing `>`."""
        open_token = self.expect("<")
        depth, i = 1, open_token.end
        while i < len(self.text):
            c = self.text[i]
            if c == "<":
                depth += 1
            elif c == ">" and self.text[i - 1] != "-":
                depth -= 1
                if depth == 0:
                    self.pos = i + 1
                    return self.text[open_token.end:i], open_token.end
            elif c == "\n":
                break
            i += 1
        raise self.error("unterminated '<'", open_token.start)

    def skip_balanced(self) -> None:
        """Skip one token, or a whole balanced (...)/[...]/{...}/<...> group."""
        pairs = {"(": ")", "[": "]", "{": "}", "<": ">"}
        first = self.next()
        if first.kind is not Tok.PUNCT or first.text not in pairs:
            return
        stack = [pairs[first.text]]
        while stack:
            token = self.next()
            if token.kind is Tok.EOF:
                raise self.error(f"unterminated '{first.text}'", first.start)
            if token.kind is Tok.PUNCT and token.text in pairs:
                stack.append(pairs[token.text])
            elif token.kind is Tok.PUNCT and token.text == stack[-1]:
                stack.pop()

    def _lex(self, pos: int) -> Token:
        pos = _SPACE.match(self.text, pos).end()
        if pos >= len(self.text):
            return Token(Tok.EOF, "", None, pos, pos)
        m = _TOKEN.match(self.text, pos)
        if m is None and self.text[pos] == '"':
            raise self.error("unterminated string", pos)
        if m is None:
            raise self.error(f"unexpected character {self.text[pos]!r}", pos)
        kind, text = m.lastgroup, m.group()
        end = m.end()
        if kind == "value":
            name, _, number = text.partition("#")
            return Token(Tok.VALUE, text, (name, int(number) if number else None), pos, end)
        if kind == "symbol":
            body = text[1:]
            return Token(Tok.SYMBOL, text, unescape(body[1:-1]) if body[0] == '"' else body,
                         pos, end)
        if kind == "string":
            return Token(Tok.STRING, text, unescape(text[1:-1]), pos, end)
        if kind == "hex":
            return Token(Tok.INT, text, int(text, 16), pos, end)
        if kind == "int":
            return Token(Tok.INT, text, int(text), pos, end)
        if kind == "float":
            return Token(Tok.FLOAT, text, float(text), pos, end)
        simple = {"block": Tok.BLOCK, "hash": Tok.HASH, "bare": Tok.BARE, "arrow": Tok.ARROW,
                  "punct": Tok.PUNCT}
        return Token(simple[kind], text, text, pos, end)

