"""Parsing of shapes, instruction attributes, module header attributes and the
stack-frame tables of XLA's HLO text.

Each attribute is read into the Python type `attributes.attribute_kind` names
for it; attributes xlapy does not interpret are kept as `RawAttribute` text,
verbatim, so that they print back unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xlapy.hlo.attributes import (
    ATTRIBUTE_ENUMS,
    AttrKind,
    ComputationLayout,
    ConvolutionDimensionNumbers,
    InputOutputAlias,
    IotaReplicaGroups,
    OpMetadata,
    PaddingConfig,
    PaddingDimension,
    Precision,
    RawAttribute,
    SliceRange,
    Window,
    WindowDimension,
    attribute_kind,
)
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.lexer import OPENERS, NanValue, Tok, Token, TokenStream
from xlapy.hlo.literal_text import ElidedFiller, parse_literal
from xlapy.hlo.shape import Layout, Shape

MAX_NESTING = 64
"""Deepest tuple nesting accepted in a shape (XLA also bounds recursion)."""

ComputationLookup = Callable[[Token], object]


# -- shapes ---------------------------------------------------------------------------------
def parse_shape_tokens(stream: TokenStream, depth: int = 0) -> Shape:
    """`f32[2,3]{1,0}`, `(f32[], s32[4])`, `token[]`, `f32[<=4]`.

    An array shape written without a layout gets XLA's default (row-major)
    layout, as XLA's parser gives it (`fill_missing_layouts`).
    """
    if depth > MAX_NESTING:
        raise stream.error("shape is nested too deeply")
    if stream.accept(Tok.LPAREN):
        shapes = []
        if not stream.at(Tok.RPAREN):
            while True:
                shapes.append(parse_shape_tokens(stream, depth + 1))
                if not stream.accept(Tok.COMMA):
                    break
        stream.expect(Tok.RPAREN, "',' or ')'")
        return Shape.tuple(shapes)
    element_type = stream.expect(Tok.PRIMITIVE_TYPE, "a shape").value
    stream.expect(Tok.LSQUARE, "'['")
    dims: list[int] = []
    dynamic: list[bool] = []
    if not stream.at(Tok.RSQUARE):
        while True:
            is_dynamic = bool(stream.accept(Tok.LEQ))
            if stream.at(Tok.QUESTION):
                raise stream.error("unbounded dynamic dimensions '?' are not supported")
            size = stream.expect(Tok.INT, "a dimension size")
            if size.value < 0 or size.value >= 1 << 63:
                raise stream.error(f"dimension size {size.text} is out of range", size)
            dims.append(size.value)
            dynamic.append(is_dynamic)
            if not stream.accept(Tok.COMMA):
                break
    stream.expect(Tok.RSQUARE, "',' or ']'")
    layout = None
    if stream.at(Tok.LBRACE) and stream.peek().kind in (Tok.INT, Tok.COLON):
        layout = _parse_layout(stream, len(dims))
    if element_type in (PrimitiveType.TOKEN, PrimitiveType.OPAQUE):
        if dims:
            raise stream.error(f"{element_type.value} shapes have no dimensions")
        return Shape(element_type)
    if layout is None:
        layout = Layout.descending(len(dims))
    return Shape(element_type, tuple(dims), layout, (), tuple(dynamic) if any(dynamic) else ())


def _parse_layout(stream: TokenStream, rank: int) -> Layout:
    """`{1,0}` or `{1,0:T(8,128)S(1)}`; what follows the colon is kept verbatim."""
    brace = stream.expect(Tok.LBRACE)
    minor_to_major = []
    while stream.at(Tok.INT):
        minor_to_major.append(stream.advance().value)
        if not stream.accept(Tok.COMMA):
            break
    extras = ""
    if stream.at(Tok.COLON):
        start = stream.tok.end
        end = _layout_extras_end(stream, start)
        extras = stream.text[start:end].strip()
        stream.reset(end)
    stream.expect(Tok.RBRACE, "'}' to end the layout")
    if len(minor_to_major) != rank:
        raise stream.error(f"layout has {len(minor_to_major)} dimensions but the shape has "
                           f"rank {rank}", brace)
    return Layout(tuple(minor_to_major), extras)


def _layout_extras_end(stream: TokenStream, start: int) -> int:
    depth = 0
    for i in range(start, len(stream.text)):
        char = stream.text[i]
        if char == "{":
            depth += 1
        elif char == "}":
            if depth == 0:
                return i
            depth -= 1
    raise stream.error("unclosed layout", start)


# -- instruction attributes -------------------------------------------------------------------
def kind_of(opcode_text: str, name: str) -> AttrKind:
    """How attribute `name` of an `opcode_text` instruction is spelled."""
    return attribute_kind(opcode_text, name)


def parse_attribute(stream: TokenStream, opcode_text: str, name: str,
                    lookup: ComputationLookup):
    """The value after `name=`, typed by its AttrKind."""
    kind = kind_of(opcode_text, name)
    return _PARSERS[kind](stream, name, lookup)


def _int(stream: TokenStream, name: str, lookup=None) -> int:
    return stream.expect(Tok.INT, f"an integer for {name}=").value


def _float(stream: TokenStream, name: str, lookup=None) -> float:
    token = stream.tok
    if token.is_keyword("inf"):
        stream.advance()
        return float("inf")
    if token.kind not in (Tok.INT, Tok.DECIMAL, Tok.NEG_INF):
        raise stream.unexpected(f"a number for {name}=")
    stream.advance()
    if isinstance(token.value, NanValue):
        return float("-nan") if token.value.negative else float("nan")
    return float(token.value)


def _bool(stream: TokenStream, name: str, lookup=None) -> bool:
    if stream.at_keyword("true") or stream.at_keyword("false"):
        return stream.advance().text == "true"
    raise stream.unexpected(f"true or false for {name}=")


def _string(stream: TokenStream, name: str, lookup=None) -> str:
    return stream.expect(Tok.STRING, f"a string for {name}=").value


def _braced_list(stream: TokenStream, item: Callable[[], object],
                 opening: Tok = Tok.LBRACE) -> tuple:
    closing = OPENERS[opening]
    stream.expect(opening, opening.value)
    items = []
    if not stream.at(closing):
        while True:
            items.append(item())
            if not stream.accept(Tok.COMMA):
                break
    stream.expect(closing, f"',' or {closing.value}")
    return tuple(items)


def _int_list(stream: TokenStream, name: str, lookup=None, opening: Tok = Tok.LBRACE):
    return _braced_list(stream, lambda: _int(stream, name), opening)


def _int_list_list(stream: TokenStream, name: str, lookup=None):
    return _braced_list(stream, lambda: _int_list(stream, name))


def _replica_groups(stream: TokenStream, name: str, lookup=None):
    """`{{0,1},{2,3}}`, or the iota form `[2,2]<=[4]` / `[2,2]<=[2,2]T(1,0)`."""
    if not stream.at(Tok.LSQUARE):
        return _int_list_list(stream, name)
    start = stream.tok
    group_shape = _int_list(stream, name, opening=Tok.LSQUARE)
    if len(group_shape) != 2:
        raise stream.error(f"iota replica groups need a [groups,size] shape, found "
                           f"{len(group_shape)} dimensions", start)
    stream.expect(Tok.LEQ, "'<='")
    reshape_dims = _int_list(stream, name, opening=Tok.LSQUARE)
    transpose: tuple = ()
    if stream.at(Tok.IDENT) and stream.tok.text == "T":
        stream.advance()
        transpose = _int_list(stream, name, opening=Tok.LPAREN)
    problem = _iota_groups_problem(group_shape, reshape_dims, transpose)
    if problem:
        raise stream.error(f"iota replica groups {problem}", start)
    return IotaReplicaGroups(group_shape, reshape_dims, transpose)


MAX_REPLICA_IDS = 1 << 20
"""Most device ids iota replica groups may name: they are expanded into lists."""


def _iota_groups_problem(group_shape: tuple, reshape_dims: tuple, transpose: tuple) -> str:
    """Why `[g,s]<=[dims]T(perm)` names no valid groups (XLA's IotaTileAssignment
    rules: one id count on both sides, a permutation of the dims), or ''."""
    if any(d < 0 for d in group_shape + reshape_dims):
        return "have a negative dimension"
    count = math.prod(reshape_dims)
    if math.prod(group_shape) != count:
        return (f"{group_shape[0]}x{group_shape[1]} ids do not match the {count} ids of "
                f"the iota")
    if count > MAX_REPLICA_IDS:
        return f"name {count} device ids; at most {MAX_REPLICA_IDS} are supported"
    if transpose and sorted(transpose) != list(range(len(reshape_dims))):
        return f"transpose {list(transpose)} is not a permutation of the {len(reshape_dims)} dims"
    return ""


def _computation(stream: TokenStream, name: str, lookup: ComputationLookup):
    if stream.at(Tok.LBRACE):
        raise stream.error(f"inline computations are not supported in {name}=; "
                           "define the computation first and refer to it by name")
    if not stream.at(Tok.NAME, Tok.IDENT):
        raise stream.unexpected(f"a computation name for {name}=")
    return lookup(stream.advance())


def _computation_list(stream: TokenStream, name: str, lookup: ComputationLookup):
    return _braced_list(stream, lambda: _computation(stream, name, lookup))


def _window(stream: TokenStream, name: str, lookup=None) -> Window:
    """`{size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x0}`."""
    brace = stream.expect(Tok.LBRACE)
    fields: dict[str, list] = {}
    while not stream.at(Tok.RBRACE):
        key = stream.expect(Tok.ATTRIBUTE_NAME, "a window field such as size=")
        if key.value in fields:
            raise stream.error(f"window field {key.value}= appears twice", key)
        if key.value == "pad":
            fields["pad"] = _pad_pairs(stream)
        elif key.value in ("size", "stride", "lhs_dilate", "rhs_dilate", "rhs_reversal"):
            fields[key.value] = _dxd(stream, key.value)
        else:
            raise stream.error(f"unknown window field {key.value}=", key)
    stream.expect(Tok.RBRACE)
    sizes = fields.get("size", [])
    for key, values in fields.items():
        if len(values) != len(sizes):
            raise stream.error(f"window field {key}= has {len(values)} dimensions but "
                               f"size= has {len(sizes)}", brace)
    n = len(sizes)

    def get(key, default):
        return fields.get(key, [default] * n)

    return Window(tuple(
        WindowDimension(size=sizes[i], stride=get("stride", 1)[i],
                        padding_low=get("pad", (0, 0))[i][0],
                        padding_high=get("pad", (0, 0))[i][1],
                        window_dilation=get("rhs_dilate", 1)[i],
                        base_dilation=get("lhs_dilate", 1)[i],
                        window_reversal=get("rhs_reversal", 0)[i] == 1)
        for i in range(n)))


def _dxd(stream: TokenStream, name: str) -> list[int]:
    if stream.at(Tok.INT):
        return [stream.advance().value]
    return [int(v) for v in stream.expect(Tok.DXD, f"a number or NxM for {name}=").text.split("x")]


def _pad_pairs(stream: TokenStream) -> list[tuple[int, int]]:
    token = stream.expect(Tok.PAD, "a padding like 0_0x1_1")
    pairs = []
    for part in token.text.split("x"):
        numbers = [int(v) for v in part.split("_")]
        if len(numbers) != 2:
            raise stream.error("window padding needs low_high per dimension", token)
        pairs.append((numbers[0], numbers[1]))
    return pairs


def _dim_labels(stream: TokenStream, name: str, lookup=None):
    token = stream.expect(Tok.DIM_LABELS, "dimension labels like b01f_01io->b01f")
    try:
        return ConvolutionDimensionNumbers.from_text(token.text)
    except ValueError as e:
        raise stream.error(str(e), token) from None


def _slice(stream: TokenStream, name: str, lookup=None):
    def one_range():
        numbers = _braced_list_with(stream, Tok.LSQUARE, Tok.COLON, name)
        if len(numbers) not in (2, 3):
            raise stream.error(f"a slice range is [start:limit] or [start:limit:stride], "
                               f"found {len(numbers)} numbers")
        return SliceRange(*numbers)

    return _braced_list(stream, one_range)


def _braced_list_with(stream: TokenStream, opening: Tok, separator: Tok, name: str) -> list:
    closing = OPENERS[opening]
    stream.expect(opening, opening.value)
    numbers = [_int(stream, name)]
    while stream.accept(separator):
        numbers.append(_int(stream, name))
    stream.expect(closing, f"{separator.value} or {closing.value}")
    return numbers


def _padding(stream: TokenStream, name: str, lookup=None) -> PaddingConfig:
    token = stream.expect(Tok.PAD, "a padding like 0_0x1_1_1")
    dims = []
    for part in token.text.split("x"):
        dims.append(PaddingDimension(*(int(v) for v in part.split("_"))))
    return PaddingConfig(tuple(dims))


def _enum(stream: TokenStream, name: str, lookup=None):
    enum_type = ATTRIBUTE_ENUMS.get(name)
    if enum_type is None:
        return _raw(stream, name)
    token = stream.expect(Tok.IDENT, f"a value for {name}=")
    try:
        return enum_type(token.text)
    except ValueError:
        choices = ", ".join(member.value for member in enum_type)
        raise stream.error(f"unknown {name} '{token.text}'; expected one of {choices}",
                           token) from None


def _precision_list(stream: TokenStream, name: str, lookup=None):
    def one():
        token = stream.expect(Tok.IDENT, "a precision (default, high, highest)")
        try:
            return Precision(token.text.lower())
        except ValueError:
            raise stream.error(f"unknown precision '{token.text}'", token) from None

    return _braced_list(stream, one)


def _metadata(stream: TokenStream, name: str, lookup=None):
    """`{op_type="dot" op_name="..." source_line=3}`; values other than strings,
    integers and booleans (`profile_type={...}`) keep the whole attribute raw."""
    start = stream.tok.start
    stream.expect(Tok.LBRACE)
    items: list[tuple[str, object]] = []
    while not stream.at(Tok.RBRACE):
        if stream.accept(Tok.COMMA):
            continue
        key = stream.expect(Tok.ATTRIBUTE_NAME, "a metadata field such as op_name=")
        if any(k == key.value for k, _ in items):
            raise stream.error(f"metadata field {key.value}= appears twice", key)
        token = stream.tok
        if token.kind in (Tok.STRING, Tok.INT):
            items.append((key.value, stream.advance().value))
        elif token.is_keyword("true") or token.is_keyword("false"):
            items.append((key.value, stream.advance().text == "true"))
        else:
            stream.reset(start)
            return _raw(stream, name)
    stream.expect(Tok.RBRACE)
    return OpMetadata(tuple(items))


def _shape_list(stream: TokenStream, name: str, lookup=None):
    return _braced_list(stream, lambda: parse_shape_tokens(stream))


def _raw(stream: TokenStream, name: str, lookup=None) -> RawAttribute:
    """The value's source text, verbatim: one token or bracketed group, plus any
    tokens or groups glued to it without whitespace (`[2,2]<=[4]T(1,0)`), or a
    shape and any literal after it (`outfeed_shape=f32[2]{0}`, custom-call's
    `literal=s32[2]{0} {1, 2}`)."""
    first = stream.tok
    stops = (Tok.EOF, Tok.COMMA, Tok.RBRACE, Tok.RPAREN, Tok.RSQUARE)
    if first.kind in stops:
        raise stream.unexpected(f"a value for {name}=")
    if first.kind is Tok.PRIMITIVE_TYPE:
        shape = parse_shape_tokens(stream)
        if stream.at(Tok.LBRACE, Tok.LPAREN, Tok.INT, Tok.DECIMAL, Tok.NEG_INF) or any(
                stream.at_keyword(word) for word in ("true", "false", "inf")):
            parse_literal(stream, shape, ElidedFiller())
        return RawAttribute(stream.text[first.start:stream.last_end])
    end = None
    while True:
        token = stream.tok
        if end is not None and (token.start != end or token.kind in stops):
            break
        if token.kind is Tok.ERROR:
            raise stream.unexpected(f"a value for {name}=")
        if token.kind in OPENERS:
            end = stream.lexer.balanced_end(token.start)
            stream.reset(end)
        else:
            end = stream.advance().end
    return RawAttribute(stream.text[first.start:end])


def parse_instruction_names(stream: TokenStream, check: Callable[[Token], None]) -> RawAttribute:
    """`{%a, %b}` (control-predecessors): each name checked, the text kept raw."""
    start = stream.tok.start

    def one():
        if not stream.at(Tok.NAME, Tok.IDENT):
            raise stream.unexpected("an instruction name")
        check(stream.advance())

    _braced_list(stream, one)
    return RawAttribute(stream.text[start:stream.last_end])


_PARSERS = {
    AttrKind.INT: _int,
    AttrKind.FLOAT: _float,
    AttrKind.BOOL: _bool,
    AttrKind.STRING: _string,
    AttrKind.INT_LIST: _int_list,
    AttrKind.INT_LIST_LIST: _int_list_list,
    AttrKind.REPLICA_GROUPS: _replica_groups,
    AttrKind.COMPUTATION: _computation,
    AttrKind.COMPUTATION_LIST: _computation_list,
    AttrKind.WINDOW: _window,
    AttrKind.DIM_LABELS: _dim_labels,
    AttrKind.SLICE: _slice,
    AttrKind.PADDING: _padding,
    AttrKind.ENUM: _enum,
    AttrKind.PRECISION_LIST: _precision_list,
    AttrKind.METADATA: _metadata,
    AttrKind.SHAPE_LIST: _shape_list,
    AttrKind.RAW: _raw,
}


# -- module header ----------------------------------------------------------------------------
def parse_module_attribute(stream: TokenStream, name: str):
    """A header attribute after `HloModule name,`; see attributes.MODULE_ATTRIBUTE_KINDS."""
    if name == "entry_computation_layout":
        return _computation_layout(stream)
    if name == "input_output_alias":
        return _input_output_alias(stream)
    if name == "is_scheduled":
        return _bool(stream, name)
    if name in ("replica_count", "num_partitions"):
        return _int(stream, name)
    return _raw(stream, name)


def _computation_layout(stream: TokenStream) -> ComputationLayout:
    stream.expect(Tok.LBRACE)
    parameters = _braced_list(stream, lambda: parse_shape_tokens(stream), Tok.LPAREN)
    stream.expect(Tok.ARROW, "'->'")
    result = parse_shape_tokens(stream)
    stream.expect(Tok.RBRACE)
    return ComputationLayout(parameters, result)


def _input_output_alias(stream: TokenStream) -> tuple[InputOutputAlias, ...]:
    """`{ {0}: (1, {}, may-alias), {1}: (0, {1}) }`."""
    def one():
        output_index = _int_list(stream, "input_output_alias")
        stream.expect(Tok.COLON, "':'")
        stream.expect(Tok.LPAREN, "'('")
        parameter = _int(stream, "input_output_alias")
        stream.expect(Tok.COMMA, "','")
        parameter_index = _int_list(stream, "input_output_alias")
        kind = ""
        if stream.accept(Tok.COMMA):
            token = stream.expect(Tok.IDENT, "may-alias or must-alias")
            if token.text not in ("may-alias", "must-alias"):
                raise stream.error(f"unknown alias kind '{token.text}'; expected may-alias "
                                   "or must-alias", token)
            kind = token.text
        stream.expect(Tok.RPAREN, "')'")
        return InputOutputAlias(output_index, parameter, parameter_index, kind)

    return _braced_list(stream, one)


_FRAME_TABLE_FIELDS = {
    "FileLocations": ("file_name_id", "function_name_id", "line", "end_line", "column",
                      "end_column"),
    "StackFrames": ("file_location_id", "parent_frame_id"),
}


def parse_frame_tables(stream: TokenStream) -> str:
    """The FileNames / FunctionNames / FileLocations / StackFrames tables, checked
    against XLA's grammar and returned as their verbatim source text."""
    start = stream.tok.start
    end = stream.advance().end  # FileNames
    for table in ("FileNames", "FunctionNames", "FileLocations", "StackFrames"):
        if table != "FileNames":
            if not stream.at_keyword(table):
                raise stream.unexpected(f"'{table}'")
            end = stream.advance().end
        while stream.at(Tok.INT):
            stream.advance()
            if table in _FRAME_TABLE_FIELDS:
                end = _frame_entry(stream, table)
            else:
                end = stream.expect(Tok.STRING, "a quoted name").end
    return stream.text[start:end]


def _frame_entry(stream: TokenStream, table: str) -> int:
    brace = stream.expect(Tok.LBRACE)
    fields = _FRAME_TABLE_FIELDS[table]
    seen = set()
    while not stream.at(Tok.RBRACE):
        if stream.accept(Tok.COMMA):
            continue
        key = stream.expect(Tok.ATTRIBUTE_NAME, f"a {table} field such as {fields[0]}=")
        if key.value not in fields or key.value in seen:
            raise stream.error(f"unexpected field {key.value}= in {table}", key)
        seen.add(key.value)
        _int(stream, key.value)
    missing = [f for f in fields if f not in seen]
    if missing:
        raise stream.error(f"{table} entry is missing {missing[0]}=", brace)
    return stream.expect(Tok.RBRACE).end
