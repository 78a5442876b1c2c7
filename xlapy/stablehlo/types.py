"""MLIR types as StableHLO uses them (`tensor<2x3xf32>`, `tuple<...>`,
`!stablehlo.token`, bare element types such as `i32`), read as xlapy Shapes.

Only static shapes exist in HLO: a dynamic (`?`) or unranked (`*`) dimension
is a ParseError, as is a quantized or otherwise unknown element type.
"""

from __future__ import annotations

import re

from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.shape import Shape
from xlapy.stablehlo.lexer import Cursor, Tok

_INTEGERS = {"i1": PrimitiveType.PRED, "ui1": PrimitiveType.U1}
for _bits in (2, 4, 8, 16, 32, 64):
    _INTEGERS[f"i{_bits}"] = _INTEGERS[f"si{_bits}"] = PrimitiveType(f"s{_bits}")
    _INTEGERS[f"ui{_bits}"] = PrimitiveType(f"u{_bits}")
_COMPLEX = {"f32": PrimitiveType.C64, "f64": PrimitiveType.C128}
_DIMS = re.compile(r"\s*((?:[0-9?*]+\s*x\s*)*)(.*?)\s*$", re.DOTALL)


def element_type(text: str) -> PrimitiveType | None:
    """The PrimitiveType MLIR spells `text` (`f32`, `ui8`, `f8E4M3FN`,
    `complex<f32>`), or None."""
    text = text.strip()
    if text in _INTEGERS:
        return _INTEGERS[text]
    if text.startswith("complex<") and text.endswith(">"):
        return _COMPLEX.get(text[len("complex<"):-1].strip())
    if text == "index":
        return PrimitiveType.S64
    if re.fullmatch(r"b?f[0-9]+(?:E[0-9]+M[0-9]+[A-Z]*)?", text):
        try:
            return PrimitiveType.from_text(text.lower())
        except KeyError:
            return None
    return None


def parse_type(cursor: Cursor) -> Shape:
    """The type at the cursor as a Shape (an element type alone is a scalar)."""
    token = cursor.peek()
    if token.kind is Tok.BARE and token.text == "tensor":
        cursor.next()
        body, offset = cursor.raw_angle()
        return _tensor(cursor, body, offset)
    if token.kind is Tok.BARE and token.text == "tuple":
        cursor.next()
        cursor.expect("<")
        return Shape.tuple(cursor.items(parse_type, ">", "closing the tuple type"))
    if token.kind is Tok.PUNCT and token.text == "!":
        cursor.next()
        name = cursor.expect_kind(Tok.BARE, "a dialect type name after '!'")
        if name.text in ("stablehlo.token", "mhlo.token"):
            return Shape.token()
        raise cursor.error(f"unsupported type '!{name.text}'", token.start)
    if token.kind is Tok.BARE:
        if token.text == "complex":
            cursor.next()
            body, _ = cursor.raw_angle()
            text = f"complex<{body}>"
        else:
            cursor.next()
            text = token.text
        element = element_type(text)
        if element is None:
            raise cursor.error(f"unknown type '{text}'", token.start)
        return Shape.scalar(element)
    raise cursor.unexpected("a type")


def parse_type_list(cursor: Cursor) -> list[Shape]:
    """`t` or `t, t` (stopping at anything else), or a parenthesised `(t, t)`."""
    if cursor.accept("("):
        return cursor.items(parse_type, ")", "closing the type list")
    types = [parse_type(cursor)]
    while cursor.peek_is(",") and _type_follows(cursor):
        cursor.next()
        types.append(parse_type(cursor))
    return types


def _type_follows(cursor: Cursor) -> bool:
    """Whether a type follows the comma at the cursor (and not, say, an attribute)."""
    saved = cursor.pos
    cursor.next()
    token = cursor.peek()
    cursor.pos = saved
    return (token.kind is Tok.BARE and (token.text in ("tensor", "tuple", "complex")
                                        or element_type(token.text) is not None)) \
        or (token.kind is Tok.PUNCT and token.text == "!")


def _tensor(cursor: Cursor, body: str, offset: int) -> Shape:
    comma = _top_level_comma(body)  # `tensor<4xf32, #encoding>`: the encoding is dropped
    m = _DIMS.match(body if comma < 0 else body[:comma])
    dims_text, element_text = m.group(1), m.group(2)
    dims = [d.strip() for d in dims_text.split("x") if d.strip()]
    for d in dims:
        if not d.isdigit():
            kind = "unranked" if d == "*" else "dynamic"
            raise cursor.error(f"{kind} dimension '{d}' in tensor<{body}>: HLO needs static "
                               "shapes", offset)
    element = element_type(element_text)
    if element is None:
        raise cursor.error(f"unknown element type '{element_text}' in tensor<{body}>", offset)
    return Shape.array(element, [int(d) for d in dims])


def _top_level_comma(text: str) -> int:
    depth = 0
    for i, c in enumerate(text):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "," and depth == 0:
            return i
    return -1
