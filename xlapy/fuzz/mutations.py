"""Seeded mutations of HLO texts, the malformed input thrown at the parser.

A mutation is a pure function of (seed, index): the corpus text it starts
from, the kind of damage and where it lands all come from a generator seeded
with both numbers, so a failing case is named by them and rebuilt with
`mutate(seed, index)`. The corpus is the project's own HLO (tests/hlo/corpus,
tests/hlo/text_samples, benchmarks/data), read in sorted order; the kinds:

- `delete_tokens`, `duplicate_token`, `swap_tokens`, `replace_token`: token
  edits, tokens found by the project's own lexer;
- `odd_character`: control characters, lone surrogates, non-ASCII digits, a
  BOM, put anywhere (inside numbers, names and strings too);
- `truncate_line`, `truncate_text`: a line, or the whole text, cut short;
- `huge_number`: a number replaced by one past every limit (`1e999999`,
  400 or 5,000 digits, 2^64, NaN payloads of 400 hex digits);
- `tweak_number`: a number replaced by a small or edge value (-1, 0, 64,
  2^31-1): out-of-range indices that still parse, for the verifier;
- `huge_shape`: dimensions whose product is terabytes, or an inserted
  constant of such a shape (elided `{...}` or not) that must not be allocated;
- `deep_nesting`: tuple shapes, literal braces, attribute brackets, ranks,
  instruction chains and call chains thousands deep;
- `invalid_utf8`, `byte_flip`: the text as bytes, with an invalid sequence
  or flipped bits (the parser accepts bytes);
- `junk_attribute`: an attribute added or an existing value replaced by junk;
- `splice_lines`: lines of another corpus text pasted in.

What a mutation adds is bounded (tens of kB), so a correct parser answers
each one well within the campaign's second: that limit is there to catch
quadratic work and hangs, not big inputs.
"""

from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass
from pathlib import Path

from xlapy.hlo.attributes import ATTRIBUTE_KINDS
from xlapy.hlo.lexer import Lexer, Tok
from xlapy.hlo.opcode import Opcode

_CORPUS_DIRS = ("tests/hlo/corpus", "tests/hlo/text_samples", "benchmarks/data")


@dataclass(frozen=True)
class Mutation:
    """One mutated text: `data` is a str, or bytes for the byte-level kinds."""

    seed: int
    index: int
    kind: str
    source: str
    """The corpus file it was made from, relative to the checkout."""
    data: str | bytes
    note: str
    """What was done, for a report: "deleted 2 tokens at line 5"."""


@dataclass(frozen=True)
class CorpusText:
    name: str
    text: str

    @functools.cached_property
    def tokens(self) -> list[tuple[int, int, Tok]]:
        """(start, end, kind) of every token, as the project's lexer reads them."""
        lexer, spans, pos = Lexer(self.text), [], 0
        while True:
            token = lexer.lex(pos)
            if token.kind is Tok.EOF:
                return spans
            spans.append((token.start, max(token.end, token.start + 1), token.kind))
            pos = spans[-1][1]

    @functools.cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")


def checkout_root() -> Path:
    """The directory holding the `xlapy` package (the checkout, in an editable install)."""
    return Path(__file__).resolve().parents[2]


@functools.lru_cache(maxsize=4)
def corpus(root: str | None = None) -> tuple[CorpusText, ...]:
    """Every corpus text under `root` (default: the checkout), in sorted order."""
    base = Path(root) if root else checkout_root()
    texts = []
    for directory in _CORPUS_DIRS:
        for path in sorted((base / directory).glob("*.hlo")):
            texts.append(CorpusText(str(path.relative_to(base)), path.read_text("utf-8")))
    if not texts:
        raise FileNotFoundError(f"no HLO corpus under {base} (looked in {', '.join(_CORPUS_DIRS)})")
    return tuple(texts)


def mutate(seed: int, index: int, texts: tuple[CorpusText, ...] | None = None) -> Mutation:
    """Mutation number `index` of campaign `seed`; the same numbers give the same text.

    One mutation in four stacks one to three token-level edits after the first
    (its kind is then the first one's, its note lists them all)."""
    texts = texts or corpus()
    rng = random.Random(f"xlapy-parser-fuzz/{seed}/{index}")
    kind = rng.choice(KINDS)
    source = rng.choice(texts)
    data, note = _MUTATORS[kind](rng, source, texts)
    if isinstance(data, str) and rng.random() < 0.25:
        for _ in range(rng.randint(1, 3)):
            extra = rng.choice(_STACKABLE)
            edited = CorpusText(source.name, data)
            if not edited.tokens:
                break
            data, more = _MUTATORS[extra](rng, edited, texts)
            note += f"; then {extra}: {more}"
    return Mutation(seed, index, kind, source.name, data, note)


# -- token edits --------------------------------------------------------------------------
def _delete_tokens(rng, source, texts):
    tokens = source.tokens
    i = rng.randrange(len(tokens))
    count = rng.choice((1, 1, 1, 2, 3))
    start, end = tokens[i][0], tokens[min(i + count, len(tokens)) - 1][1]
    text = source.text
    return text[:start] + text[end:], f"deleted {count} token(s) at {_where(text, start)}"


def _duplicate_token(rng, source, texts):
    tokens, text = source.tokens, source.text
    start, end, _ = rng.choice(tokens)
    at = end if rng.random() < 0.5 else rng.choice(tokens)[0]
    glue = rng.choice(("", " "))
    copy = glue + text[start:end] + glue
    return text[:at] + copy + text[at:], f"copied {text[start:end]!r} to {_where(text, at)}"


def _swap_tokens(rng, source, texts):
    tokens, text = source.tokens, source.text
    i = rng.randrange(len(tokens))
    j = min(i + 1, len(tokens) - 1) if rng.random() < 0.5 else rng.randrange(len(tokens))
    (a0, a1, _), (b0, b1, _) = sorted((tokens[i], tokens[j]))
    if a0 == b0:
        return text, "swapped a token with itself"
    swapped = text[:a0] + text[b0:b1] + text[a1:b0] + text[a0:a1] + text[b1:]
    return swapped, f"swapped {text[a0:a1]!r} ({_where(text, a0)}) and {text[b0:b1]!r}"


def _replace_token(rng, source, texts):
    tokens, text = source.tokens, source.text
    start, end, _ = rng.choice(tokens)
    pool = rng.choice((_OPCODE_TEXTS, _ODD_TOKENS, [text[s:e] for s, e, _ in tokens]))
    new = rng.choice(pool)
    return text[:start] + new + text[end:], \
        f"replaced {text[start:end]!r} by {new!r} at {_where(text, start)}"


_OPCODE_TEXTS = sorted(op.value for op in Opcode)
_ODD_TOKENS = [
    "ROOT", "ENTRY", "HloModule", "true", "false", "inf", "-inf", "nan", "-nan", "nan(",
    "f32[]", "(f32[], s32[])", "token[]", "opaque[]", "tuple", "pred[2]{0}", "f32[2]{1,0}",
    "%undefined", "undefined", "...", "{...}", "->", "<=", "?", "/*", "*/", "//", "\"", "'",
    "=", ",", ":", "(", ")", "{", "}", "[", "]", "#", "*", "+", "~", "-", "%", "0", "-1",
    "b01f_01io->b01f", "3x3", "0_0x1_1", "\\", "\t", "\n", "\x00", "\u00e9", "\ud800",
]


ODD_CHARACTERS = ("\x00", "\x01", "\x7f", "\r", "\t", "\f", "\v", "\ufeff", "\u2028", "\u00a0",
                  "\u00e9", "\u0660", "\uff11", "\U0001f600", "\ud800", "\udfff", "\udcff", "\\",
                  "\"", "'", "%", "@", "$", "`", "^", "|", "&", ";", "!", "?", "#", "~", ".", "e")


def _odd_character(rng, source, texts):
    """One to three odd characters (controls, lone surrogates, non-ASCII digits and
    letters, a BOM) at random places, inside numbers, names and strings alike."""
    text, placed = source.text, []
    for _ in range(rng.choice((1, 1, 2, 3))):
        at, char = rng.randrange(len(text) + 1), rng.choice(ODD_CHARACTERS)
        text = text[:at] + char + text[at:]
        placed.append(f"{char!r} at {_where(text, at)}")
    return text, ", ".join(placed)


# -- truncation ---------------------------------------------------------------------------
def _truncate_line(rng, source, texts):
    lines = list(source.lines)
    i = rng.randrange(len(lines))
    column = rng.randrange(len(lines[i]) + 1)
    lines[i] = lines[i][:column]
    if rng.random() < 0.25 and i + 1 < len(lines):  # the line also loses its newline
        lines[i:i + 2] = [lines[i] + lines[i + 1]]
    return "\n".join(lines), f"cut line {i + 1} at column {column + 1}"


def _truncate_text(rng, source, texts):
    cut = rng.randrange(len(source.text) + 1)
    return source.text[:cut], f"text cut at {_where(source.text, cut)}"


# -- huge numbers and shapes -----------------------------------------------------------------
HUGE_NUMBERS = (
    "1e999999", "-1e999999", "1e-999999", "1.7976931348623157e309", "3.4028236e38",
    "65520", "4.9e-325", "9" * 400, "-" + "9" * 400, "1" + "0" * 400, "1" + "0" * 5000,
    "-" + "1" * 5000, "0." + "0" * 5000 + "1", "1." + "9" * 5000, "99999999999999999999",
    "18446744073709551615", "18446744073709551616", "9223372036854775807",
    "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "4294967296",
    "2147483648", "-2147483649", "340282366920938463463374607431768211456",
    "nan(0x" + "f" * 400 + ")", "nan(0x0)", "-nan(0xfffffffffffff)", "nan(0x10000000000000)",
    "99999999999x99999999999", "9" * 30 + "x1", "99999999999_99999999999",
    "-99999999999_-99999999999x1_1", "1_1_" + "9" * 30, "-0", "00000000000000000000001",
)
_NUMBER_KINDS = (Tok.INT, Tok.DECIMAL, Tok.DXD, Tok.PAD, Tok.NEG_INF)
SMALL_NUMBERS = ("-2", "-1", "0", "1", "2", "3", "5", "7", "63", "64", "65", "255", "256",
                 "2147483647", "-2147483648", "4294967295", "1.5", "-0.0", "0x1", "2x2",
                 "1_1", "-1_-1", "0_0_0")


def _tweak_number(rng, source, texts):
    """A number replaced by a small or edge value: indices and dimensions that are
    out of range but still parse, for the verifier and shape inference."""
    tokens, text = source.tokens, source.text
    numbers = [t for t in tokens if t[2] in _NUMBER_KINDS] or tokens
    start, end, _ = rng.choice(numbers)
    new = rng.choice(SMALL_NUMBERS)
    return text[:start] + new + text[end:], \
        f"number {text[start:end]!r} at {_where(text, start)} -> {new}"


def _huge_number(rng, source, texts):
    tokens, text = source.tokens, source.text
    numbers = [t for t in tokens if t[2] in _NUMBER_KINDS] or tokens
    start, end, _ = rng.choice(numbers)
    new = rng.choice(HUGE_NUMBERS)
    return text[:start] + new + text[end:], \
        f"number {text[start:end]!r} at {_where(text, start)} -> {_short(new)}"


HUGE_DIMS = (
    "99999999999999999999", "9223372036854775807", "9223372036854775808", "4294967296,4294967296",
    "1000000,1000000,1000000", "65536,65536,65536", "<=99999999999", "0,9223372036854775807",
    "2147483647,2147483647,2147483647,2147483647", ",".join(["2"] * 70), ",".join(["1"] * 200),
    "-1", "1,-1", "", "?", "<=-1", "3037000500,3037000500", "9223372036854775807,2",
)
HUGE_CONSTANTS = (
    "f32[100000,100000,100] constant({...})", "f32[65536,65536] constant({...})",
    "pred[1000000000000] constant({...})", "c128[1000000,1000000] constant({...})",
    "s4[9223372036854775807] constant({...})", "f32[9223372036854775807] constant({1})",
    "f32[100000,100000] constant({ {1} })", "u8[4294967296,4294967296] constant({1, 2})",
    "(f32[100000,100000], s32[]) constant(({...}, 1))", "f32[100000,100000] iota(), "
    "iota_dimension=0", "f32[3037000500,3037000500] constant({...})",
    "bf16[4611686018427387904] constant({...})", "f32[0,9223372036854775807] constant({})",
    "f32[2,0,4294967296] constant({ {}, {} })", "s32[4294967296,0] constant({...})",
)
_SHAPE = re.compile(r"\b(?:pred|s\d+|u\d+|f\d+\w*|bf16|c64|c128)\[([^\]\n]*)\]")


def _huge_shape(rng, source, texts):
    text = source.text
    shapes = list(_SHAPE.finditer(text))
    if shapes and rng.random() < 0.6:
        match = rng.choice(shapes)
        dims = rng.choice(HUGE_DIMS)
        new = text[:match.start(1)] + dims + text[match.end(1):]
        return new, f"shape at {_where(text, match.start())} -> [{_short(dims)}]"
    line = rng.choice(HUGE_CONSTANTS)
    return _insert_in_body(rng, source, [f"fz.huge = {line}"]), f"inserted {line!r}"


# -- deep nesting -----------------------------------------------------------------------------
_DEPTHS = (65, 100, 300, 1000, 3000, 10000)


def _deep_nesting(rng, source, texts):
    depth = rng.choice(_DEPTHS)
    variant = rng.choice(_NESTINGS)
    return variant(rng, source, depth), f"{variant.__name__.strip('_')} {depth} deep"


def _tuple_shape(rng, source, depth):
    text = source.text
    shapes = list(_SHAPE.finditer(text))
    if not shapes:
        return text
    match = rng.choice(shapes)
    return text[:match.start()] + "(" * depth + match.group() + ")" * depth + text[match.end():]


def _literal_braces(rng, source, depth):
    line = f"fz.deep = f32[1] constant({'{' * depth}1{'}' * depth})"
    return _insert_in_body(rng, source, [line])


def _rank(rng, source, depth):
    dims = ",".join(["1"] * depth)
    line = f"fz.rank = f32[{dims}] constant({'{' * depth}1{'}' * depth})"
    return _insert_in_body(rng, source, [line])


def _attribute_brackets(rng, source, depth):
    opening, closing = rng.choice((("{", "}"), ("(", ")"), ("[", "]"), ('{"a":', "}")))
    value = opening * depth + "1" + closing * depth
    name = rng.choice(("backend_config", "frontend_attributes", "sharding", "fz_unknown",
                       "metadata", "dimensions", "to_apply"))
    return _append_to_instruction(rng, source, f", {name}={value}")


def _instruction_chain(rng, source, depth):
    """A chain of instructions each using the one before; `tuple(x, x)` doubles the
    inferred shape at every step."""
    opcode = rng.choice(("tuple", "negate", "copy", "f32[] negate", "get-tuple-element",
                         "tuple(x, x)"))
    length = min(depth, 3000)
    lines = ["fz.0 = f32[] constant(1)"]
    for i in range(1, length):
        if opcode == "get-tuple-element":
            line = f"fz.{i} = tuple(fz.{i - 1})" if i % 2 else \
                f"fz.{i} = get-tuple-element(fz.{i - 1}), index=0"
        elif opcode == "tuple(x, x)":
            line = f"fz.{i} = tuple(fz.{i - 1}, fz.{i - 1})"
        else:
            line = f"fz.{i} = {opcode}(fz.{i - 1})"
        lines.append(line)
    return _insert_in_body(rng, source, lines)


def _call_chain(rng, source, depth):
    """Computations each calling the one before, inserted before the first computation."""
    length = min(depth, 1500)
    parts = ["fz.c0 {\n  p.0 = f32[] parameter(0)\n  ROOT r.0 = f32[] negate(p.0)\n}\n"]
    for i in range(1, length):
        parts.append(f"fz.c{i} {{\n  p.{i} = f32[] parameter(0)\n"
                     f"  ROOT r.{i} = f32[] call(p.{i}), to_apply=fz.c{i - 1}\n}}\n")
    text = source.text
    at = _first_computation(text)
    return text[:at] + "".join(parts) + text[at:]


def _tuple_constant(rng, source, depth):
    shape = "(" * depth + "f32[]" + ")" * depth
    literal = "(" * depth + "1" + ")" * depth
    return _insert_in_body(rng, source, [f"fz.tc = {shape} constant({literal})"])


_NESTINGS = (_tuple_shape, _literal_braces, _rank, _attribute_brackets, _instruction_chain,
             _call_chain, _tuple_constant)


# -- bytes ----------------------------------------------------------------------------------
BAD_UTF8 = (b"\xff", b"\xfe", b"\x80", b"\xbf", b"\xc0\x80", b"\xc3", b"\xc3\x28", b"\xe2\x82",
            b"\xe2\x28\xa1", b"\xed\xa0\x80", b"\xf0\x28\x8c\xbc", b"\xf4\x90\x80\x80",
            b"\xf8\x88\x80\x80\x80", b"\xef\xbf\xbe\xff", b"\x00\xff")


def _invalid_utf8(rng, source, texts):
    data = source.text.encode("utf-8")
    at = rng.randrange(len(data) + 1)
    bad = rng.choice(BAD_UTF8)
    drop = rng.choice((0, 0, 1, len(bad)))
    return data[:at] + bad + data[at + drop:], f"{bad!r} at byte {at}"


def _byte_flip(rng, source, texts):
    data = bytearray(source.text.encode("utf-8"))
    flips = rng.choice((1, 1, 2, 3, 8))
    for _ in range(flips):
        at = rng.randrange(len(data))
        data[at] ^= 1 << rng.randrange(8)
    return bytes(data), f"{flips} bit(s) flipped"


# -- attributes -----------------------------------------------------------------------------
ATTRIBUTE_NAMES = sorted(ATTRIBUTE_KINDS) + ["sharding", "backend_config", "frontend_attributes",
                                             "fz_unknown", "control-predecessors"]
JUNK_VALUES = (
    "{}", "{", "}", "{{{}}}", "{0,1,2,3,4,5,6,7,8,9}", "{-1}", "{99999999999}", "{1,1}", "()",
    "[0:1]", "{[0:99999999999999:0]}", "{[5:1:-1]}", "{size=0x0}", "{size=3x3 pad=1_1}",
    "{size=99999999999x99999999999 stride=0x0}", "{stride=2}", "b01f_01io->b01f", "bf_io->bf",
    "?", "%nonexistent", "nonexistent", "\"\\x\"", "\"unterminated", "\"\\777\"", "\"\\u12\"",
    "0_0x99999999_99999999", "1_1_1_1", "true", "-1", "0", "99999999999", "1e999999", "nan",
    "{...}", "<=", "T(1,0)", "[2,2]<=[4]", "[4294967296,4294967296]<=[0]", "[2,2]<=[4]T(9)",
    "{{0,1},{2,3}}", "{{0,0}}", "{op_name=}", "{op_name=\"a\" op_name=\"b\"}", "{source_line=-1}",
    "f32[99999999999]", "(f32[], (s32[]))", "{maximal device=99999999999}", "{replicated",
    "{devices=[99999999999]0}", "{default,high,bogus}", "EQ", "TOTALORDER", "XX", "kLoop",
    "{%p, %p}", "{\"a\"}", "'a'", "{1, 2}", "{(1,2)}", "->", "",
)
_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=.*\)")


def _junk_attribute(rng, source, texts):
    name, value = rng.choice(ATTRIBUTE_NAMES), rng.choice(JUNK_VALUES)
    text = source.text
    existing = [m for m in re.finditer(r"[, ]([\w\-]+)=", text)
                if _INSTRUCTION.match(_line_at(text, m.start()))]
    if existing and rng.random() < 0.5:
        match = rng.choice(existing)
        end = _value_end(text, match.end())
        new = text[:match.end()] + value + text[end:]
        return new, f"{match.group(1)}= at {_where(text, match.start())} -> {value!r}"
    return _append_to_instruction(rng, source, f", {name}={value}"), f"added {name}={value!r}"


def _value_end(text: str, pos: int) -> int:
    """Where an attribute value starting at `pos` ends: a comma or line end at depth 0."""
    depth, quote = 0, ""
    for i in range(pos, len(text)):
        char = text[i]
        if quote:
            quote = "" if char == quote and text[i - 1] != "\\" else quote
        elif char == '"':
            quote = char
        elif char in "{([":
            depth += 1
        elif char in "})]":
            depth -= 1
            if depth < 0:
                return i
        elif char in ",\n" and depth == 0:
            return i
    return len(text)


# -- splicing -------------------------------------------------------------------------------
def _splice_lines(rng, source, texts):
    donor = rng.choice(texts)
    start = rng.randrange(len(donor.lines))
    pasted = donor.lines[start:start + rng.choice((1, 1, 2, 5))]
    lines = list(source.lines)
    at = rng.randrange(len(lines) + 1)
    lines[at:at] = pasted
    return "\n".join(lines), f"{len(pasted)} line(s) of {donor.name}:{start + 1} at line {at + 1}"


# -- helpers --------------------------------------------------------------------------------
def _insert_in_body(rng, source, lines: list[str]) -> str:
    """`lines` as instructions at the start of a random computation's body."""
    text = source.text
    heads = [m.end() for m in re.finditer(r"\{[ \t]*(?://[^\n]*)?\n", text)
             if not text[_line_start(text, m.start()):].startswith("HloModule")]
    at = rng.choice(heads) if heads else len(text)
    return text[:at] + "".join(f"  {line}\n" for line in lines) + text[at:]


def _append_to_instruction(rng, source, suffix: str) -> str:
    """`suffix` at the end of a random instruction line."""
    text = source.text
    ends = [m.end() for m in re.finditer(r"[^\n]*", text) if _INSTRUCTION.match(m.group())]
    at = rng.choice(ends) if ends else len(text)
    return text[:at] + suffix + text[at:]


def _first_computation(text: str) -> int:
    match = re.search(r"^(?!HloModule)\S.*\{[ \t]*$", text, re.MULTILINE)
    return _line_start(text, match.start()) if match else len(text)


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _line_at(text: str, pos: int) -> str:
    end = text.find("\n", pos)
    return text[_line_start(text, pos):end if end >= 0 else len(text)]


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    return f"line {line}, column {pos - _line_start(text, pos) + 1}"


def _short(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:10]}...({len(text)} chars)"


_MUTATORS = {
    "delete_tokens": _delete_tokens, "duplicate_token": _duplicate_token,
    "swap_tokens": _swap_tokens, "replace_token": _replace_token, "odd_character": _odd_character,
    "truncate_line": _truncate_line, "truncate_text": _truncate_text,
    "huge_number": _huge_number, "tweak_number": _tweak_number, "huge_shape": _huge_shape,
    "deep_nesting": _deep_nesting,
    "invalid_utf8": _invalid_utf8, "byte_flip": _byte_flip,
    "junk_attribute": _junk_attribute, "splice_lines": _splice_lines,
}
KINDS: tuple[str, ...] = tuple(_MUTATORS)
"""Every kind of mutation, each drawn with the same probability."""
_STACKABLE = ("delete_tokens", "duplicate_token", "swap_tokens", "replace_token", "odd_character",
              "tweak_number", "junk_attribute", "truncate_line")
