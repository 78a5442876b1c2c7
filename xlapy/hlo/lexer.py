"""The lexer of XLA's HLO text format, and the token stream the parsers read.

Tokens follow XLA's `hlo_lexer.cc`: an identifier directly followed by `=`
is an attribute name (`dimensions=`), one directly followed by `:` or led by
`%` is a name (`%add.3`, `p0:`), numbers come with the patterns XLA spells
with digits (`3x3` windows, `0_0x1_1` paddings, `b01f_01io->b01f` dimension
labels), strings are C-escaped, and `/* */` and `//` comments are skipped.

The lexer is stateless: `Lexer.lex(pos)` returns the token at or after `pos`,
so the parser may look ahead or back up by remembering a token.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import NamedTuple

from xlapy.errors import ParseError
from xlapy.hlo.dtypes import PrimitiveType


class Tok(enum.Enum):
    EOF = "end of input"
    ERROR = "invalid text"
    EQUAL = "'='"
    COMMA = "','"
    COLON = "':'"
    ASTERISK = "'*'"
    QUESTION = "'?'"
    OCTOTHORP = "'#'"
    PLUS = "'+'"
    TILDE = "'~'"
    LSQUARE = "'['"
    RSQUARE = "']'"
    LBRACE = "'{'"
    RBRACE = "'}'"
    LPAREN = "'('"
    RPAREN = "')'"
    ARROW = "'->'"
    LEQ = "'<='"
    DOTS = "'...'"
    NAME = "a name"                  # %add.3, or p0: (the colon is consumed)
    ATTRIBUTE_NAME = "an attribute name"  # dimensions= (the '=' is consumed)
    IDENT = "an identifier"
    KEYWORD = "a keyword"            # HloModule, ENTRY, ROOT, true, inf, ...
    PRIMITIVE_TYPE = "an element type"
    DIM_LABELS = "dimension labels"  # b01f_01io->b01f
    DXD = "a DxD pattern"            # 3x3
    PAD = "a padding pattern"        # 0_0x1_1_1
    INT = "an integer"
    DECIMAL = "a number"             # 1.5, 1e-05, nan, -nan, nan(0x7)
    NEG_INF = "'-inf'"
    STRING = "a string"


KEYWORDS = frozenset({
    "true", "false", "inf", "HloModule", "ENTRY", "ROOT", "FileLocations", "FileNames",
    "FunctionNames", "StackFrames", "maximal", "replicated", "manual",
    "last_tile_dim_replicate", "shard_as", "shard_like", "unknown", "unreduced",
})

OPENERS = {Tok.LBRACE: Tok.RBRACE, Tok.LPAREN: Tok.RPAREN, Tok.LSQUARE: Tok.RSQUARE}


class Token(NamedTuple):
    """One token: `text` is its source slice, `value` its meaning.

    `value` is the name for NAME/ATTRIBUTE_NAME, the int for INT, the float
    for DECIMAL (NaN payloads kept as `NanValue`), the unescaped str for
    STRING, the PrimitiveType for PRIMITIVE_TYPE and the error message for
    ERROR; otherwise the text.
    """

    kind: Tok
    text: str
    value: object
    start: int
    end: int

    def is_keyword(self, word: str) -> bool:
        return self.kind is Tok.KEYWORD and self.text == word

    def describe(self) -> str:
        """How an error message names this token: `','`, `'fooo'`, end of input."""
        if self.kind is Tok.EOF:
            return "end of input"
        text = self.text if len(self.text) <= 40 else self.text[:37] + "..."
        return "'" + text + "'"


@dataclass(frozen=True)
class NanValue:
    """A NaN literal: its sign and, if one was written, its payload `nan(0x...)`."""

    negative: bool
    payload: int | None = None


_WS_OR_COMMENT = re.compile(r"(?:\s+|//[^\n\r]*|/\*.*?\*/)*", re.DOTALL)
_IDENT_CHARS = re.compile(r"[A-Za-z0-9_.\-]*")
_FLOAT = re.compile(r"-?(?:(?:\d+|\d+\.\d*|\d*\.\d+)[eE][+-]?\d+|\d+\.\d*|\d*\.\d+)")
_DIM_LABELS = re.compile(r"[0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,}")
_DXD = re.compile(r"[0-9]+(?:x[0-9]+)+")
_PAD = re.compile(r"-?[0-9]+_-?[0-9]+(?:_[0-9]+)?(?:x-?[0-9]+_-?[0-9]+(?:_[0-9]+)?)*")
_INT = re.compile(r"-?\d+")
_NAN_PAYLOAD = re.compile(r"\(0x([0-9a-fA-F]+)\)")
_STRINGS = {'"': re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL),
            "'": re.compile(r"'(?:[^'\\]|\\.)*'", re.DOTALL)}
_PUNCTUATION = {"=": Tok.EQUAL, ",": Tok.COMMA, ":": Tok.COLON, "*": Tok.ASTERISK,
                "#": Tok.OCTOTHORP, "+": Tok.PLUS, "~": Tok.TILDE, "[": Tok.LSQUARE,
                "]": Tok.RSQUARE, "{": Tok.LBRACE, "}": Tok.RBRACE, "(": Tok.LPAREN,
                ")": Tok.RPAREN}
_DOUBLE_NAN_PAYLOAD_MASK = (1 << 52) - 1
_INT_MIN, _UINT_MAX = -(1 << 63), (1 << 64) - 1


class Lexer:
    """Tokens of one source text, produced on demand from any position."""

    def __init__(self, text: str):
        self.text = text
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    # -- positions ----------------------------------------------------------------------
    def location(self, pos: int) -> tuple[int, int, str]:
        """1-based line and column of `pos`, and the text of that line."""
        lo, hi = 0, len(self._line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._line_starts[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        start = self._line_starts[lo]
        end = self.text.find("\n", start)
        line = self.text[start:] if end < 0 else self.text[start:end]
        return lo + 1, pos - start + 1, line.rstrip("\r")

    def error(self, message: str, pos: int) -> ParseError:
        line, column, source = self.location(pos)
        return ParseError(message, line, column, source)

    def skip_space(self, pos: int) -> int:
        """The first position at or after `pos` that is not whitespace or a comment."""
        return _WS_OR_COMMENT.match(self.text, pos).end()

    # -- tokens -------------------------------------------------------------------------
    def lex(self, pos: int) -> Token:
        """The token at or after `pos`; an ERROR token says what is wrong."""
        pos = self.skip_space(pos)
        text = self.text
        if pos >= len(text):
            return Token(Tok.EOF, "", None, len(text), len(text))
        char = text[pos]
        if char.isascii() and (char.isalpha() or char == "_"):
            return self._identifier(pos)
        if char.isdigit() or char in "-?":
            if text.startswith("->", pos):
                return Token(Tok.ARROW, "->", "->", pos, pos + 2)
            return self._number(pos)
        if char in _PUNCTUATION:
            return Token(_PUNCTUATION[char], char, char, pos, pos + 1)
        if char == "%":
            return self._percent_name(pos)
        if char in _STRINGS:
            return self._string(pos)
        if text.startswith("<=", pos):
            return Token(Tok.LEQ, "<=", "<=", pos, pos + 2)
        if text.startswith("...", pos):
            return Token(Tok.DOTS, "...", "...", pos, pos + 3)
        if text.startswith("/*", pos):
            return self._error("unterminated comment", pos, pos + 2)
        return self._error(f"unexpected character {char!r}", pos, pos + 1)

    def _error(self, message: str, start: int, end: int) -> Token:
        return Token(Tok.ERROR, self.text[start:end], message, start, end)

    def _identifier(self, pos: int) -> Token:
        text = self.text
        end = _IDENT_CHARS.match(text, pos + 1).end()
        word = text[pos:end]
        following = text[end:end + 1]
        if following == ":":
            return Token(Tok.NAME, text[pos:end + 1], word, pos, end + 1)
        if following == "=":
            return Token(Tok.ATTRIBUTE_NAME, text[pos:end + 1], word, pos, end + 1)
        element_type = _PRIMITIVE_TYPES.get(word)
        if element_type is not None:
            return Token(Tok.PRIMITIVE_TYPE, word, element_type, pos, end)
        if word == "nan":
            return self._nan(pos, end, negative=False)
        if word in KEYWORDS:
            return Token(Tok.KEYWORD, word, word, pos, end)
        labels = _DIM_LABELS.match(text, pos)
        if labels:
            return Token(Tok.DIM_LABELS, labels.group(), labels.group(), pos, labels.end())
        return Token(Tok.IDENT, word, word, pos, end)

    def _percent_name(self, pos: int) -> Token:
        text = self.text
        first = text[pos + 1:pos + 2]
        if not (first.isascii() and (first.isalpha() or first == "_")):
            return self._error("expected a name after '%'", pos, pos + 1)
        end = _IDENT_CHARS.match(text, pos + 2).end()
        return Token(Tok.NAME, text[pos:end], text[pos + 1:end], pos, end)

    def _number(self, pos: int) -> Token:
        text = self.text
        match = _INT.match(text, pos)
        if match and not _continues_number(text, match.end()):  # the common case
            return self._int(match)
        for pattern, kind in ((_FLOAT, Tok.DECIMAL), (_DIM_LABELS, Tok.DIM_LABELS),
                              (_DXD, Tok.DXD), (_PAD, Tok.PAD)):
            match = pattern.match(text, pos)
            if match:
                word = match.group()
                if kind in (Tok.DXD, Tok.PAD) and any(
                        int_value(n) is None for n in re.split("[x_]", word)):
                    return self._error(f"a number in {word[:40]!r} does not fit in 64 bits",
                                       pos, match.end())
                value = float(word) if kind is Tok.DECIMAL else word
                return Token(kind, word, value, pos, match.end())
        if match:
            return self._int(match)
        if text.startswith("-inf", pos) and not _continues_identifier(text, pos + 4):
            return Token(Tok.NEG_INF, "-inf", float("-inf"), pos, pos + 4)
        if text.startswith("-nan", pos) and not _continues_identifier(text, pos + 4):
            return self._nan(pos, pos + 4, negative=True)
        if text[pos] == "?":
            return Token(Tok.QUESTION, "?", "?", pos, pos + 1)
        return self._error("expected a number after '-'", pos, pos + 1)

    def _int(self, match: re.Match) -> Token:
        value = int_value(match.group())
        if value is None:
            shown = match.group() if len(match.group()) <= 40 else match.group()[:37] + "..."
            return self._error(f"integer {shown} does not fit in 64 bits",
                               match.start(), match.end())
        return Token(Tok.INT, match.group(), value, match.start(), match.end())

    def _nan(self, start: int, end: int, negative: bool) -> Token:
        payload = None
        match = _NAN_PAYLOAD.match(self.text, end)
        if self.text.startswith("(", end):
            if not match:
                return self._error("expected a NaN payload like nan(0x1)", start, end + 1)
            payload = int(match.group(1), 16)
            if not 0 < payload <= _DOUBLE_NAN_PAYLOAD_MASK:
                return self._error(f"NaN payload 0x{payload:x} is out of range", start,
                                   match.end())
            end = match.end()
        return Token(Tok.DECIMAL, self.text[start:end], NanValue(negative, payload), start, end)

    def _string(self, pos: int) -> Token:
        match = _STRINGS[self.text[pos]].match(self.text, pos)
        if not match:
            return self._error("unterminated string", pos, pos + 1)
        try:
            value = unescape_c_string(match.group()[1:-1])
        except ValueError as e:
            return self._error(str(e), pos, match.end())
        return Token(Tok.STRING, match.group(), value, pos, match.end())

    def balanced_end(self, pos: int) -> int:
        """End of the bracketed group opening at `pos`, found character by character.

        Quoted strings are skipped whole, so JSON such as `{"a":"}"}` is one
        group; raises ParseError if the brackets do not balance.
        """
        text = self.text
        closing = {"{": "}", "(": ")", "[": "]"}
        stack: list[tuple[str, int]] = []
        i = pos
        while i < len(text):
            char = text[i]
            if char in _STRINGS:
                match = _STRINGS[char].match(text, i)
                if match:
                    i = match.end()
                    continue
                if char == '"':
                    raise self.error("unterminated string", i)
                # a lone apostrophe (`{it's}`) is just a character, as in XLA's JSON lexing
            if char in closing:
                stack.append((closing[char], i))
            elif char in "})]":
                if not stack or stack[-1][0] != char:
                    raise self.error(f"unbalanced {char!r}", i)
                stack.pop()
                if not stack:
                    return i + 1
            i += 1
        raise self.error(f"unclosed {text[stack[-1][1]]!r}", stack[-1][1])


def int_value(text: str) -> int | None:
    """A decimal integer's value, or None outside -2^63..2^64-1. The digits are
    counted before `int` reads them: Python refuses over 4,300 of them."""
    digits = text.lstrip("-").lstrip("0")
    if len(digits) > 20:
        return None
    value = -int(digits or "0") if text.startswith("-") else int(digits or "0")
    return value if _INT_MIN <= value <= _UINT_MAX else None


def _continues_number(text: str, pos: int) -> bool:
    """Whether the digits ending at `pos` may go on as a float, a pattern or labels."""
    return pos < len(text) and (text[pos].isalnum() or text[pos] in "._?")


def _continues_identifier(text: str, pos: int) -> bool:
    return pos < len(text) and (text[pos].isalnum() or text[pos] in "_.")


_PRIMITIVE_TYPES = {t.value: t for t in PrimitiveType if t is not PrimitiveType.TUPLE}


# -- C escapes, as absl::CEscape / CUnescape spell them -----------------------------------
_SIMPLE_ESCAPES = {"n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11, "\\": 92,
                   "'": 39, '"': 34, "?": 63}
_ESCAPE_OUT = {10: "\\n", 13: "\\r", 9: "\\t", 34: '\\"', 39: "\\'", 92: "\\\\"}


def unescape_c_string(body: str) -> str:
    """The text a C-escaped string body stands for; bytes that are not UTF-8 survive
    as surrogate escapes, so `escape_c_string` gives back the same body."""
    if "\\" not in body:
        return body
    out = bytearray()
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out += char.encode("utf-8", "surrogateescape")
            i += 1
            continue
        code = body[i + 1:i + 2]
        if code in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[code])
            i += 2
        elif code in "01234567" and code:
            digits = re.match(r"[0-7]{1,3}", body[i + 1:]).group()
            if int(digits, 8) > 255:
                raise ValueError(f"octal escape \\{digits} is out of range")
            out.append(int(digits, 8))
            i += 1 + len(digits)
        elif code == "x":
            match = re.match(r"[0-9a-fA-F]+", body[i + 2:])
            if not match or int(match.group(), 16) > 255:
                raise ValueError("bad hex escape in string")
            out.append(int(match.group(), 16))
            i += 2 + len(match.group())
        elif code in ("u", "U"):
            width = 4 if code == "u" else 8
            digits = body[i + 2:i + 2 + width]
            if not re.fullmatch(f"[0-9a-fA-F]{{{width}}}", digits):
                raise ValueError(f"bad \\{code} escape in string")
            out += chr(int(digits, 16)).encode("utf-8", "surrogatepass")
            i += 2 + width
        else:
            raise ValueError(f"invalid escape sequence \\{code} in string")
    return out.decode("utf-8", "surrogateescape")


def escape_c_string(value: str) -> str:
    """`value` C-escaped the way XLA prints strings (absl::CEscape of its UTF-8 bytes)."""
    data = value.encode("utf-8", "surrogateescape")
    if all(32 <= b < 127 and b not in _ESCAPE_OUT for b in data):
        return value
    return "".join(_ESCAPE_OUT.get(b) or (chr(b) if 32 <= b < 127 else f"\\{b:03o}")
                   for b in data)


# -- the token stream ---------------------------------------------------------------------
class TokenStream:
    """A cursor over the tokens of a text with the helpers every parser needs."""

    def __init__(self, text: str):
        self.lexer = Lexer(text)
        self.text = text
        self.tok = self.lexer.lex(0)
        self.last_end = 0
        """End of the token consumed last."""

    def advance(self) -> Token:
        """Consume the current token and return it."""
        token = self.tok
        self.last_end = token.end
        self.tok = self.lexer.lex(token.end)
        return token

    def reset(self, pos: int) -> None:
        """Continue lexing at source position `pos` (what precedes it counts as consumed)."""
        self.last_end = pos
        self.tok = self.lexer.lex(pos)

    def peek(self) -> Token:
        """The token after the current one."""
        if self.tok.kind is Tok.EOF:
            return self.tok
        return self.lexer.lex(self.tok.end)

    def at(self, *kinds: Tok) -> bool:
        return self.tok.kind in kinds

    def at_keyword(self, word: str) -> bool:
        return self.tok.is_keyword(word)

    def accept(self, kind: Tok) -> Token | None:
        """Consume the current token if it is of `kind`."""
        if self.tok.kind is kind:
            return self.advance()
        return None

    def expect(self, kind: Tok, what: str | None = None) -> Token:
        """Consume a token of `kind` or raise "expected WHAT but found X"."""
        if self.tok.kind is kind:
            return self.advance()
        raise self.unexpected(what or kind.value)

    def unexpected(self, what: str) -> ParseError:
        """"expected WHAT but found X" at the current token (or the lexer's own error)."""
        token = self.tok
        if token.kind is Tok.ERROR:
            return self.lexer.error(token.value, token.start)
        return self.lexer.error(f"expected {what} but found {token.describe()}", token.start)

    def error(self, message: str, at: Token | int | None = None) -> ParseError:
        """A ParseError at a token, a position, or the current token."""
        if at is None:
            at = self.tok
        pos = at.start if isinstance(at, Token) else at
        return self.lexer.error(message, pos)
