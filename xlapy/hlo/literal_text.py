"""Constants in XLA's text format: literals parsed into NumPy arrays and printed back.

Printing follows XLA's `literal.cc` one-line form (`{1, 2}`, `{ { 1, 2 }, { 3, 4 } }`,
`/*i0=0*/` markers from rank 4 up, pred arrays as 0/1, tuples as `( a, b )`);
floats are spelled as `literal_floats` describes. Parsing follows `hlo_parser.cc`:
numbers are read as doubles and rounded to the element type, out-of-range
values are errors, pred accepts `true`, `false` or integers, and an elided
`{...}` is filled the way XLA fills it (see ElidedFiller). Big int, float and
pred arrays are read by a vectorised path that hands anything unusual to the
exact token-by-token one.

One deliberate difference: XLA reads `-0` as +0; we keep the sign, so a
printed negative zero parses back bit for bit.
"""
from __future__ import annotations

import math
import re

import ml_dtypes
import numpy as np

from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.lexer import NanValue, Tok, Token, TokenStream
from xlapy.hlo.literal_floats import (
    DOUBLE_QUIET_NAN,
    float_texts,
    format_float,
    round_doubles,
    store_nan,
)
from xlapy.hlo.shape import Shape

P = PrimitiveType


# -- printing -----------------------------------------------------------------------------
def literal_to_text(value, shape: Shape) -> str:
    """A constant's value as XLA prints it inside `constant(...)`."""
    if shape.is_tuple:
        parts = [literal_to_text(v, s) for v, s in zip(value, shape.tuple_shapes)]
        return "( " + ", ".join(parts) + " )"
    array = np.asarray(value)
    element_type = shape.element_type
    if array.ndim == 0:
        return format_element(array[()], element_type)
    return _nested_text(_element_texts(array.reshape(-1), element_type), array.shape)


def format_element(value, element_type: PrimitiveType) -> str:
    """One scalar the way XLA's GetAsString spells it (`true`, `-3`, `1e-05`, `(1, 2)`)."""
    if element_type is P.PRED:
        return "true" if bool(value) else "false"
    if element_type.is_complex:
        part = element_type.component_type
        return f"({format_float(value.real, part)}, {format_float(value.imag, part)})"
    if element_type.is_float:
        return format_float(value, element_type)
    return str(int(value))


def _element_texts(flat: np.ndarray, element_type: PrimitiveType) -> list[str]:
    """Texts of a flat array's elements, as in an array constant (pred as 0/1)."""
    if element_type is P.PRED:
        return ["1" if v else "0" for v in flat.tolist()]
    if element_type.is_float:
        return float_texts(flat, element_type)
    if element_type.is_integral and element_type.bit_width >= 8:
        return [str(v) for v in flat.tolist()]
    return [format_element(v, element_type) for v in flat]


def _nested_text(texts: list[str], dims: tuple[int, ...]) -> str:
    """XLA's one-line nesting of a row-major list of element texts."""
    rank = len(dims)
    strides = [math.prod(dims[i + 1:]) for i in range(rank)]

    def open_brace(level: int, prefix: tuple[int, ...]) -> str:
        if rank == 1:
            return "{"
        if level == rank - 1:
            return "{" if dims[level] <= 1 else "{ "
        if rank > 3 and prefix:
            marker = f"{{ /*i{len(prefix) - 1}={prefix[-1]}*/"
            return marker + (" " if dims[level] > 0 else "")
        return "{ "

    def close_brace(level: int) -> str:
        if rank == 1:
            return "}"
        if level == rank - 1:
            return "}" if dims[level] <= 1 else " }"
        return " }"

    def render(level: int, prefix: tuple[int, ...], offset: int) -> str:
        if level == rank:
            return texts[offset]
        items = [render(level + 1, prefix + (i,), offset + i * strides[level])
                 for i in range(dims[level])]
        return open_brace(level, prefix) + ", ".join(items) + close_brace(level)

    return render(0, (), 0)




# -- parsing --------------------------------------------------------------------------------
_NUMBER_TOKENS = (Tok.INT, Tok.DECIMAL, Tok.NEG_INF)


MAX_ELIDED_BYTES = 1 << 28
"""Largest elided constant `{...}` the parser makes up values for (256 MiB): the
values exist only in memory, so a typo in its shape must not allocate terabytes."""
MAX_CONSTANT_RANK = 64 if int(np.__version__.split(".")[0]) >= 2 else 32
"""NumPy's limit on array dimensions, hence on a constant's rank."""
_MAX_ARRAY_BYTES = int(np.iinfo(np.intp).max)


class ElidedFiller:
    """Values for an elided constant `{...}`, made the way XLA's parser makes them.

    XLA (with its default `fill_shortform_constants_with_random_values`) writes
    a running 32-bit counter into the literal's bytes, word by word (each byte
    masked to 0/1 for pred), and a running 8-bit counter into the `size % 4`
    bytes starting at byte `size / 4` (sic). Its counters live for the whole
    process; ours live for one `parse_module` call, which is what XLA does for
    the first module a process parses. Sub-byte types keep only their low bits.
    """

    _CHUNK = 1 << 20
    """Words written per step, so the counter never needs a second full-size array."""

    def __init__(self):
        self.word = 0
        self.byte = 0

    def fill(self, shape: Shape) -> np.ndarray:
        element_type = shape.element_type
        dtype = element_type.numpy
        size = shape.element_count * dtype.itemsize
        mask = 0x01010101 if element_type is P.PRED else 0xFFFFFFFF
        words = size // 4
        raw = np.zeros(size, np.uint8)
        counter = raw[:words * 4].view("<u4")
        for begin in range(0, words, self._CHUNK):
            end = min(begin + self._CHUNK, words)
            counter[begin:end] = (np.arange(begin, end, dtype=np.uint64) + self.word) & mask
        self.word = (self.word + words) & 0xFFFFFFFF
        for i in range(size % 4):
            raw[size // 4 + i] = self.byte & mask & 0xFF
            self.byte = (self.byte + 1) & 0xFF
        if element_type.bit_width < 8:
            np.bitwise_and(raw, (1 << element_type.bit_width) - 1, out=raw)
        return raw.view(dtype).reshape(shape.dimensions)


def parse_literal(stream: TokenStream, shape: Shape, filler: ElidedFiller):
    """The value of `constant(...)` for `shape`: a NumPy array, or a tuple of them."""
    if shape.is_tuple:
        return _parse_tuple(stream, shape, filler)
    if not shape.is_array:
        raise stream.error(f"constants of shape {shape} are not supported")
    if shape.rank > MAX_CONSTANT_RANK:
        raise stream.error(f"constants of rank {shape.rank} are not supported (at most "
                           f"{MAX_CONSTANT_RANK} dimensions)")
    nonzero = math.prod(d for d in shape.dimensions if d) * shape.element_type.numpy.itemsize
    if nonzero > _MAX_ARRAY_BYTES:  # NumPy's rule, even for arrays with no elements
        raise stream.error(f"constant of shape {shape} is too big for an array (its nonzero "
                           f"dimensions span {nonzero} bytes)")
    if shape.rank and stream.at(Tok.LBRACE) and stream.peek().kind is Tok.DOTS:
        brace = stream.advance()
        stream.advance()
        stream.expect(Tok.RBRACE, "'}' after '...'")
        size = shape.element_count * shape.element_type.numpy.itemsize
        if size > MAX_ELIDED_BYTES:
            raise stream.error(f"elided constant of shape {shape} would take {size} bytes; "
                               f"xlapy makes up values for at most {MAX_ELIDED_BYTES}", brace)
        return filler.fill(shape)
    start = stream.tok
    room = len(stream.text) - start.start
    if shape.rank and _cells(shape.dimensions) > room:  # each takes a character at least
        raise stream.error(f"constant of shape {shape} needs {_cells(shape.dimensions)} "
                           f"values or braces but only {room} characters of text remain")
    if shape.rank == 0:
        if stream.at(Tok.LBRACE):
            raise stream.error(f"constant of shape {shape} has more levels of braces than "
                               "its rank 0")
        leaves = [_parse_leaf(stream, shape)]
    else:
        array = _parse_dense_fast(stream, shape)
        if array is not None:
            return array
        leaves = []
        _check_nesting(stream, _parse_nested(stream, shape, 0), shape, 0, (), leaves)
    return _to_array(stream, leaves, shape, start)


def _cells(dims: tuple[int, ...]) -> int:
    """Values a constant of these dimensions spells, or the `{}` groups of its
    innermost written level when a dimension is 0 (`f32[4,0]` is `{ {}, {}, {}, {} }`)."""
    return math.prod(dims[:dims.index(0)] if 0 in dims else dims)


def _parse_tuple(stream: TokenStream, shape: Shape, filler: ElidedFiller) -> tuple:
    opening = stream.expect(Tok.LPAREN, "'(' to start a tuple constant")
    parts = shape.tuple_shapes
    values: list = []
    if not stream.at(Tok.RPAREN):
        while True:
            if len(values) == len(parts):
                raise stream.error(f"tuple constant has more than {len(parts)} elements "
                                   f"but shape {shape} needs {len(parts)}")
            values.append(parse_literal(stream, parts[len(values)], filler))
            if not stream.accept(Tok.COMMA):
                break
    stream.expect(Tok.RPAREN, "')'")
    if len(values) != len(parts):
        raise stream.error(f"tuple constant has {len(values)} elements but shape {shape} "
                           f"needs {len(parts)}", opening)
    return tuple(values)


class _Group:
    """A braced sub-array as written, before it is checked against the shape."""

    def __init__(self, brace: Token, items: list):
        self.brace = brace
        self.items = items


def _parse_nested(stream: TokenStream, shape: Shape, depth: int):
    if not stream.at(Tok.LBRACE):
        if depth != shape.rank:
            raise stream.error(f"constant of shape {shape} needs {shape.rank} levels of "
                               f"braces but this value is inside {depth}")
        return _parse_leaf(stream, shape)
    brace = stream.advance()
    if depth == shape.rank:
        raise stream.error(f"constant of shape {shape} has more levels of braces than "
                           f"its rank {shape.rank}", brace)
    items = []
    while not stream.at(Tok.RBRACE):
        items.append(_parse_nested(stream, shape, depth + 1))
        if not stream.accept(Tok.COMMA):
            break
    stream.expect(Tok.RBRACE, "',' or '}'")
    return _Group(brace, items)


def _check_nesting(stream, node: _Group, shape: Shape, level: int, index: tuple,
                   leaves: list) -> None:
    needed = shape.dimensions[level]
    if len(node.items) != needed:
        where = f" at index [{','.join(map(str, index))}]" if index else ""
        raise stream.error(f"constant has {len(node.items)} elements{where} but shape "
                           f"{shape} needs {needed}", node.brace)
    if level == shape.rank - 1:
        leaves.extend(node.items)
        return
    for i, item in enumerate(node.items):
        _check_nesting(stream, item, shape, level + 1, index + (i,), leaves)


def _parse_leaf(stream: TokenStream, shape: Shape):
    """One element: a number/bool token, or `(re, im)` tokens for complex types."""
    token = stream.tok
    if token.kind is Tok.DOTS:
        raise stream.error("'...' may only stand for a whole constant: write {...}")
    if shape.element_type.is_complex:
        stream.expect(Tok.LPAREN, "'(' to start a complex value like (1, 2)")
        real = _number_token(stream)
        stream.expect(Tok.COMMA, "','")
        imag = _number_token(stream)
        stream.expect(Tok.RPAREN, "')'")
        return (real, imag)
    if token.kind in _NUMBER_TOKENS or token.is_keyword("inf") or token.is_keyword("true") \
            or token.is_keyword("false"):
        return stream.advance()
    raise stream.unexpected("a number")


def _number_token(stream: TokenStream) -> Token:
    if stream.at(*_NUMBER_TOKENS) or stream.at_keyword("inf"):
        return stream.advance()
    raise stream.unexpected("a number")


def _to_array(stream: TokenStream, leaves: list, shape: Shape, start: Token) -> np.ndarray:
    element_type = shape.element_type
    if element_type is P.PRED:
        values = [_pred_value(stream, leaf) for leaf in leaves]
        array = np.array(values, dtype=np.bool_)
    elif element_type.is_integral:
        array = _integer_array(stream, leaves, element_type)
    elif element_type.is_float:
        array = _float_array(stream, leaves, element_type)
    elif element_type.is_complex:
        part = element_type.component_type
        real = _float_array(stream, [leaf[0] for leaf in leaves], part)
        imag = _float_array(stream, [leaf[1] for leaf in leaves], part)
        array = np.empty(len(leaves), dtype=element_type.numpy)
        array.real, array.imag = real, imag  # part by part: NaN payloads stay exact
    else:
        raise stream.error(f"constants of element type {element_type.value} are not "
                           "supported", start)
    return array.reshape(shape.dimensions)


def _pred_value(stream: TokenStream, token: Token) -> bool:
    if token.is_keyword("true") or token.is_keyword("false"):
        return token.text == "true"
    if token.kind is Tok.INT:
        return token.value != 0
    raise stream.error(f"expected true, false or an integer for a pred constant but found "
                       f"{token.describe()}", token)


def _integer_array(stream: TokenStream, leaves: list, element_type: PrimitiveType):
    info = ml_dtypes.iinfo(element_type.numpy)
    values = []
    for token in leaves:
        if token.kind is not Tok.INT:
            raise stream.error(f"expected an integer for element type {element_type.value} "
                               f"but found {token.describe()}", token)
        value = token.value
        if value >= 1 << 63:  # XLA's lexer keeps 64 bits: 2^63.. wrap to negatives
            value -= 1 << 64
        if element_type.is_unsigned_int:
            value %= 1 << 64
        if not int(info.min) <= value <= int(info.max):
            raise stream.error(f"value {token.text} is out of range for "
                               f"{element_type.value} ({info.min} to {info.max})", token)
        values.append(value)
    return np.array(values, dtype=element_type.numpy)


def _float_array(stream: TokenStream, leaves: list, element_type: PrimitiveType):
    doubles = np.array([_double(stream, token) for token in leaves], dtype=np.float64)
    array, overflow = round_doubles(doubles, element_type)
    if overflow.any():
        token = leaves[int(np.argmax(overflow))]
        raise stream.error(f"value {token.text} is out of range for {element_type.value}", token)
    for i, token in enumerate(leaves):
        if isinstance(token.value, NanValue):
            _set_nan(stream, array, i, token, element_type)
    return array


def _double(stream: TokenStream, token: Token) -> float:
    if token.kind is Tok.INT:
        if token.value == 0 and token.text.startswith("-"):
            return -0.0
        return float(token.value)
    if token.kind is Tok.NEG_INF:
        return -math.inf
    if token.is_keyword("inf"):
        return math.inf
    if token.kind is Tok.DECIMAL:
        value = token.value
        if isinstance(value, NanValue):
            return -math.nan if value.negative else math.nan
        return value
    raise stream.error(f"expected a number but found {token.describe()}", token)


def _set_nan(stream: TokenStream, array: np.ndarray, i: int, token: Token,
             element_type: PrimitiveType) -> None:
    """Give element `i` the NaN bits `token` spells (sign and payload)."""
    problem = store_nan(array, i, token.value, element_type)
    if problem:
        raise stream.error(problem, token)


# -- the fast path for big dense constants ---------------------------------------------------
_STRUCTURE = b"{},"
_WHITESPACE = b" \t\n\r\f\v"
_TO_HASH = bytes.maketrans(bytes(b for b in range(256) if b not in _STRUCTURE + _WHITESPACE),
                           b"#" * (256 - len(_STRUCTURE + _WHITESPACE)))
_TO_SPACE = bytes.maketrans(_STRUCTURE, b"   ")
_NUMERIC_CHARS = b"0123456789.eE+-" + _STRUCTURE + _WHITESPACE
_INTEGER_CHARS = b"0123456789-" + _STRUCTURE + _WHITESPACE
_FLOAT_TOKEN = re.compile(rb"-?(?:(?:\d+\.?\d*|\d*\.\d+)(?:[eE][+-]?\d+)?|inf"
                          rb"|nan(?:\(0x[0-9a-fA-F]+\))?)")
_BARE_POINT = re.compile(rb"(?<![0-9-])\.")
"""A '.' that starts a number: XLA's lexer rejects `.5` (it wants `0.5` or `-.5`)."""


def _parse_dense_fast(stream: TokenStream, shape: Shape) -> np.ndarray | None:
    """A well-formed int, float or pred array constant read with bytes-level
    string operations instead of token by token; None sends anything unusual
    (comments, odd tokens, out-of-range values) to the exact path, which also
    reports errors."""
    element_type = shape.element_type
    if not (element_type is P.PRED or element_type.is_integral or element_type.is_float):
        return None
    if not stream.at(Tok.LBRACE):
        return None
    start = stream.tok.start
    end = _matching_brace(stream.text, start)
    if end is None:
        return None
    body = stream.text[start:end].encode("utf-8", "surrogatepass")
    if b"/" in body or _slots(body) != _skeleton(shape.dimensions):
        return None
    try:
        array = _fast_values(body.translate(_TO_SPACE).split(), body, element_type)
    except (ValueError, OverflowError):
        return None
    if array is None:
        return None
    stream.reset(end)
    return array.reshape(shape.dimensions)


def _slots(body: bytes) -> bytes:
    """`{ {1, 2.5}, {3, 4} }` -> `{{#,#},{#,#}}`; two numbers in one slot give `# #`."""
    marked = b" ".join(body.translate(_TO_HASH).split())
    if b"# #" in marked:
        return b""
    marked = marked.replace(b" ", b"")
    while b"##" in marked:
        marked = marked.replace(b"####", b"#").replace(b"##", b"#")
    return marked


def _skeleton(dims: tuple[int, ...]) -> bytes:
    """The slots of a constant of these dimensions, as `_slots` spells them; nothing
    inside a dimension of size 0 is spelled (nor built: `f32[0,99999999999]`)."""
    text = b"#"
    if 0 in dims:
        dims, text = dims[:dims.index(0)], b"{}"
    for size in reversed(dims):
        text = b"{" + b",".join([text] * size) + b"}"
    return text


def _fast_values(tokens: list[bytes], body: bytes, element_type: PrimitiveType):
    if element_type is P.PRED:
        if any(t not in (b"true", b"false") and not t.lstrip(b"-").isdigit() for t in tokens):
            return None
        return np.array([t == b"true" if t[0] in b"tf" else int(t) != 0 for t in tokens],
                        dtype=np.bool_)
    if element_type.is_integral:
        if body.translate(None, _INTEGER_CHARS):  # any other character
            return None
        wide = np.uint64 if element_type.is_unsigned_int and b"-" not in body else np.int64
        values = np.array(tokens, dtype=bytes).astype(wide) if tokens else np.zeros(0, wide)
        info = ml_dtypes.iinfo(element_type.numpy)
        if values.size and not (info.min <= values.min() and values.max() <= info.max):
            return None
        return values.astype(element_type.numpy)
    return _fast_floats(tokens, body, element_type)


def _fast_floats(tokens: list[bytes], body: bytes, element_type: PrimitiveType):
    if body.count(b"+") != body.count(b"e+") + body.count(b"E+") or _BARE_POINT.search(body):
        return None
    nans: dict[int, NanValue | None] = {}
    if body.translate(None, _NUMERIC_CHARS):  # inf, nan, or something XLA would reject
        for i, token in enumerate(tokens):
            if token.translate(None, b"0123456789.-") and not _FLOAT_TOKEN.fullmatch(token):
                return None
            if b"nan" in token:
                nans[i] = _nan_value(token.decode())
                tokens[i] = b"nan"
    if None in nans.values():
        return None
    doubles = np.array(tokens, dtype=bytes).astype(np.float64) if tokens else np.zeros(0)
    for i, nan in nans.items():
        doubles[i] = -math.nan if nan.negative else math.nan
    array, overflow = round_doubles(doubles, element_type)
    if overflow.any():
        return None
    for i, nan in nans.items():
        if store_nan(array, i, nan, element_type):
            return None
    return array


def _nan_value(text: str) -> NanValue | None:
    """`-nan(0x7)` as a NanValue; None for a payload the lexer would reject."""
    negative = text.startswith("-")
    if "(" not in text:
        return NanValue(negative)
    payload = int(text[text.index("(") + 3:-1], 16)
    return NanValue(negative, payload) if 0 < payload < DOUBLE_QUIET_NAN << 1 else None


def _matching_brace(text: str, start: int) -> int | None:
    depth = 0
    for match in _BRACES.finditer(text, start):
        depth += 1 if match.group() == "{" else -1
        if depth == 0:
            return match.end()
    return None


_BRACES = re.compile(r"[{}]")
