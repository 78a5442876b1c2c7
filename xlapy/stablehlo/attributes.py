"""MLIR attribute values as StableHLO prints them, read into plain Python.

    1 : i32, 2.5, true, "text", unit   ->  int, float, bool, str, True
    [a, b], array<i64: 1, 2>           ->  list
    {k = v, flag}                      ->  dict (a flag without value is True)
    dense<...> : tensor<...>           ->  Dense (elements, turned into NumPy by `to_numpy`)
    #stablehlo<precision DEFAULT>      ->  Enum("precision", "DEFAULT"); bare LT: Enum(None, "LT")
    #stablehlo.gather<k = v, ...>      ->  Struct("gather", {k: v})
    @callee                            ->  Symbol("callee")
    tensor<f32>, i32                   ->  Shape

Op parsers give attributes a meaning; this module only reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.shape import Shape
from xlapy.stablehlo.lexer import Cursor, Tok
from xlapy.stablehlo.types import element_type, parse_type


@dataclass(frozen=True)
class Enum:
    """An enumeration value: `kind` is its attribute kind (`precision`) or None for a
    bare keyword."""

    kind: str | None
    value: str


@dataclass(frozen=True)
class Struct:
    """A dialect attribute with named fields (`#stablehlo.gather<...>`); `raw` keeps the
    text of one whose body is not `key = value` pairs."""

    name: str
    fields: dict = field(default_factory=dict)
    raw: str = ""


@dataclass(frozen=True)
class Symbol:
    name: str


@dataclass(frozen=True)
class HexBits:
    """A hexadecimal element of a dense literal: bits for floats, a value for integers."""

    value: int


@dataclass
class Dense:
    """`dense<...>`: nested lists of scalars, one scalar (a splat) or a hex string of
    raw little-endian bytes; `shape` is the type printed after it, when one was."""

    elements: object
    shape: Shape | None = None
    offset: int = 0


@dataclass(frozen=True)
class Typed:
    """A scalar with its type (`1 : i32`); ints and floats are usually unwrapped."""

    value: object
    shape: Shape


TYPE_WORDS = frozenset({"tensor", "tuple", "complex"})


def parse_attribute(cursor: Cursor, aliases: dict | None = None, typed: bool = True):
    """The attribute value at the cursor. With `typed`, a following `: type` belongs to
    the value (as in attribute dictionaries); op syntax passes typed=False where a
    colon starts the op's signature."""
    value = _value(cursor, aliases or {})
    if typed and cursor.peek_is(":"):
        cursor.next()
        shape = parse_type(cursor)
        if isinstance(value, Dense):
            value.shape = shape
        elif not isinstance(value, (int, float, bool)):
            value = Typed(value, shape)
    return value


def parse_dictionary(cursor: Cursor, aliases: dict | None = None) -> dict:
    """`{k = v, flag, "quoted.key" = v}` (the cursor at the `{`)."""
    cursor.expect("{")
    out: dict = {}
    if cursor.accept("}"):
        return out
    while True:
        key = cursor.next()
        if key.kind not in (Tok.BARE, Tok.STRING):
            raise cursor.error(f"expected an attribute name, found '{key.text}'", key.start)
        out[key.value] = parse_attribute(cursor, aliases) if cursor.accept("=") else True
        if cursor.accept("}"):
            return out
        cursor.expect(",", "or '}' in the attribute dictionary")


def _value(cursor: Cursor, aliases: dict):
    token = cursor.peek()
    kind, text = token.kind, token.text
    if kind in (Tok.INT, Tok.FLOAT, Tok.STRING):
        cursor.next()
        return token.value
    if kind is Tok.SYMBOL:
        cursor.next()
        return Symbol(token.value)
    if kind is Tok.HASH:
        return _hash(cursor, aliases)
    if kind is Tok.PUNCT and text == "[":
        cursor.next()
        items = cursor.items(lambda c: parse_attribute(c, aliases), "]", "closing the list")
        return items
    if kind is Tok.PUNCT and text == "{":
        return parse_dictionary(cursor, aliases)
    if kind is Tok.PUNCT and text == "!":
        return parse_type(cursor)
    if kind is Tok.BARE:
        return _word(cursor, aliases)
    raise cursor.unexpected("an attribute value")


def _word(cursor: Cursor, aliases: dict):
    token = cursor.peek()
    text = token.text
    if text in ("true", "false"):
        cursor.next()
        return text == "true"
    if text == "unit":
        cursor.next()
        return True
    if text == "dense":
        cursor.next()
        return _dense(cursor)
    if text == "array":
        cursor.next()
        return _array(cursor)
    if text in TYPE_WORDS or element_type(text) is not None:
        return parse_type(cursor)
    cursor.next()
    if cursor.peek_is("<") and text in ("affine_map", "affine_set", "sparse", "opaque"):
        cursor.raw_angle()
        return Struct(text)
    return Enum(None, text)


def _hash(cursor: Cursor, aliases: dict):
    token = cursor.next()
    name = token.text[1:]
    if not cursor.peek_is("<") or cursor.peek().start != token.end:
        if name in aliases:
            return aliases[name]
        return Struct(name)
    dialect, _, attr_name = name.partition(".")
    if not attr_name:  # #stablehlo<precision DEFAULT>
        body, offset = cursor.raw_angle()
        words = body.split(None, 1)
        if len(words) != 2:
            raise cursor.error(f"expected '<kind VALUE>' in #{name}<{body}>", offset)
        return Enum(words[0], words[1].strip())
    if attr_name == "conv":
        cursor.expect("<")
        labels = parse_conv_labels(cursor)
        cursor.expect(">", "closing #stablehlo.conv")
        return Struct("conv", {"labels": labels})
    saved = cursor.pos
    try:
        return Struct(attr_name, _struct_fields(cursor, aliases))
    except Exception:  # not `key = value` pairs: keep the text
        cursor.pos = saved
        body, _ = cursor.raw_angle()
        return Struct(attr_name, raw=body)


def _struct_fields(cursor: Cursor, aliases: dict) -> dict:
    cursor.expect("<")
    fields: dict = {}
    if cursor.accept(">"):
        return fields
    while True:
        key = cursor.expect_kind(Tok.BARE, "a field name")
        cursor.expect("=")
        fields[key.text] = parse_attribute(cursor, aliases, typed=False)
        if cursor.accept(">"):
            return fields
        cursor.expect(",", "or '>' between fields")


def parse_conv_labels(cursor: Cursor) -> str:
    """`[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` as XLA's dim_labels `b01f_01io->b01f`."""
    parts = [_label_list(cursor)]
    cursor.expect("x", "between the input and kernel dimension labels")
    parts.append(_label_list(cursor))
    cursor.expect("->", "before the output dimension labels")
    output = _label_list(cursor)
    return f"{parts[0]}_{parts[1]}->{output}"


def _label_list(cursor: Cursor) -> str:
    cursor.expect("[")
    labels = []
    while True:
        token = cursor.next()
        if token.kind not in (Tok.BARE, Tok.INT) or len(token.text) != 1:
            raise cursor.error(f"expected a dimension label (b, f, i, o or a digit), found "
                               f"'{token.text}'", token.start)
        labels.append(token.text)
        if cursor.accept("]"):
            return "".join(labels)
        cursor.expect(",", "or ']' between dimension labels")


def _array(cursor: Cursor) -> list:
    """`array<i64: 1, 2>`, `array<i1: true>`, `array<i64>`."""
    cursor.expect("<")
    parse_type(cursor)
    items = []
    if cursor.accept(":"):
        items.append(_value(cursor, {}))
        while cursor.accept(","):
            items.append(_value(cursor, {}))
    cursor.expect(">", "closing array<...>")
    return items


def _dense(cursor: Cursor) -> Dense:
    start = cursor.expect("<")
    if cursor.accept(">"):
        return Dense([], offset=start.start)
    token = cursor.peek()
    if token.kind is Tok.STRING:
        cursor.next()
        elements = token.value
    else:
        elements = _dense_element(cursor)
    cursor.expect(">", "closing dense<...>")
    return Dense(elements, offset=start.start)


def _dense_element(cursor: Cursor):
    token = cursor.peek()
    if cursor.accept("["):
        return cursor.items(_dense_element, "]", "closing the list of elements")
    if cursor.accept("("):
        real = _dense_element(cursor)
        cursor.expect(",", "between the real and imaginary parts")
        imag = _dense_element(cursor)
        cursor.expect(")")
        return complex(_number(real), _number(imag))
    cursor.next()
    if token.kind is Tok.INT and token.text.lstrip("-").startswith("0x"):
        return HexBits(token.value)
    if token.kind in (Tok.INT, Tok.FLOAT):
        return token.value
    if token.kind is Tok.BARE and token.text in ("true", "false"):
        return token.text == "true"
    if token.kind is Tok.BARE and token.text in ("inf", "nan"):
        return float(token.text)
    raise cursor.error(f"expected a dense element, found '{token.text}'", token.start)


def _number(value):
    return value.value if isinstance(value, HexBits) else value


# -- dense elements to NumPy --------------------------------------------------------------
def to_numpy(dense: Dense, shape: Shape) -> np.ndarray:
    """The array `dense` holds as a value of `shape`; ValueError if it cannot."""
    if not shape.is_array:
        raise ValueError(f"a dense literal needs a tensor type, got {shape.to_text(False)}")
    element = shape.element_type
    dtype = element.numpy
    dims = tuple(shape.dimensions)
    elements = dense.elements
    if isinstance(elements, str):
        return _from_hex(elements, element, dims)
    if isinstance(elements, list):
        flat, found = _flatten(elements)
        if found != dims and not (found == (0,) and 0 in dims):
            raise ValueError(f"dense literal of shape {list(found)} for tensor "
                             f"{shape.to_text(False)}")
        values = [_scalar(v, element) for v in flat]
        return np.array(values, dtype=dtype).reshape(dims)
    return np.full(dims, _scalar(elements, element), dtype=dtype)


def _flatten(items) -> tuple[list, tuple[int, ...]]:
    if not isinstance(items, list):
        return [items], ()
    if not items:
        return [], (0,)
    parts = [_flatten(item) for item in items]
    inner = parts[0][1]
    if any(p[1] != inner for p in parts):
        raise ValueError("ragged dense literal")
    return [v for p in parts for v in p[0]], (len(items), *inner)


def _scalar(value, element: PrimitiveType):
    dtype = element.numpy
    if isinstance(value, HexBits):
        if element.is_float:
            width = np.dtype(dtype).itemsize
            bits = np.array(value.value & ((1 << (8 * width)) - 1), dtype=f"u{width}")
            return bits.view(dtype)[()]
        value = value.value
    if isinstance(value, bool):
        return value
    if element.is_pred:
        return bool(value)
    if element.is_integral:
        if isinstance(value, float):
            raise ValueError(f"float {value} in an integer literal")
        bits = np.dtype(dtype).itemsize * 8
        value = value & ((1 << bits) - 1)  # two's complement wrap, as MLIR prints
        if element.is_signed_int and value >= 1 << (bits - 1):
            value -= 1 << bits
        return value
    if isinstance(value, complex) and not element.is_complex:
        raise ValueError(f"complex {value} in a real literal")
    return value


def _from_hex(text: str, element: PrimitiveType, dims: tuple[int, ...]) -> np.ndarray:
    if not text.startswith("0x"):
        raise ValueError(f"a dense string must be hex bytes '0x...', got {text[:20]!r}")
    data = bytes.fromhex(text[2:])
    dtype = np.dtype(element.numpy)
    count = int(np.prod(dims, dtype=np.int64))
    if element.is_pred:
        array = np.frombuffer(data, dtype=np.uint8).astype(bool)
    else:
        if len(data) % dtype.itemsize:
            raise ValueError(f"{len(data)} bytes is not a whole number of {element.value}")
        array = np.frombuffer(data, dtype=dtype.newbyteorder("<")).astype(dtype)
    if array.size == 1 and count != 1:
        return np.full(dims, array[0], dtype=dtype)
    if array.size != count:
        raise ValueError(f"{array.size} elements in the hex literal, {count} in the type")
    return array.reshape(dims)
