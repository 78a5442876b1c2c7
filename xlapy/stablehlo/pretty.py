"""StableHLO's pretty (custom) op forms, read into the generic form's attributes.

Most pretty forms are one pattern: comma-separated items, each an operand
(`%x`), a `key = value` (`dims = [0, 1]`, `contracting_dims = [1] x [0]`), a
bare keyword (`LT`, `SIGNED`) or an attribute (`dense<...>`), then an optional
attribute dictionary and `: type signature`. `default` reads that pattern and
`_GENERIC_NAMES` renames its keys to the generic ones. Forms that do not fit
(reduce, while, convolution, calls, top_k) have their own readers below.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from xlapy.hlo.shape import Shape
from xlapy.stablehlo.attributes import Enum, Struct, Symbol, parse_conv_labels
from xlapy.stablehlo.lexer import Tok
from xlapy.stablehlo.syntax import Block, Op, Region, ValueRef, canonical_kind
from xlapy.stablehlo.types import parse_type

if TYPE_CHECKING:
    from xlapy.stablehlo.parser import Parser

_GENERIC_NAMES: dict[str, dict[str, str]] = {
    "broadcast_in_dim": {"dims": "broadcast_dimensions"},
    "transpose": {"dims": "permutation"},
    "reverse": {"dims": "dimensions"},
    "iota": {"dim": "iota_dimension"},
    "concatenate": {"dim": "dimension"},
    "dynamic_slice": {"sizes": "slice_sizes"},
    "pad": {"low": "edge_padding_low", "high": "edge_padding_high",
            "interior": "interior_padding"},
    "rng_bit_generator": {"algorithm": "rng_algorithm"},
    "fft": {"type": "fft_type", "length": "fft_length"},
    "dot_general": {"precision": "precision_config"},
    "dot": {"precision": "precision_config"},
    "convolution": {"stride": "window_strides", "pad": "padding", "lhs_dilate": "lhs_dilation",
                    "rhs_dilate": "rhs_dilation", "reverse": "window_reversal",
                    "dim_numbers": "dimension_numbers"},
}
"""pretty key -> generic attribute name, per op kind."""

_KEYWORDS: dict[str, tuple[str, ...]] = {
    "compare": ("comparison_direction", "compare_type"),
}
"""The attributes bare keywords stand for, in order, per op kind."""


def default(p: Parser, op: Op) -> None:
    """Items, an optional attribute dictionary and an optional `: signature`."""
    c = p.cursor
    keywords: list[str] = []
    while _item(p, op, keywords) and c.accept(","):
        pass
    if c.peek_is("{"):
        op.attrs.update(p.dictionary())
    if c.accept(":"):
        p.signature(op)
    elif op.result_count:
        raise c.unexpected(f"':' and the type of {op.name}")
    else:
        op.result_types = []
    _normalize(p, op, keywords)


def _item(p: Parser, op: Op, keywords: list[str]) -> bool:
    """Read one item into `op`; False when the next token starts none."""
    c = p.cursor
    token = c.peek()
    if token.kind is Tok.VALUE:
        op.operands.append(p.value_ref())
        if c.peek_is("["):
            _bracket_suffix(p, op)
        return True
    if token.kind is Tok.BARE and "." not in token.text:
        saved = c.pos
        c.next()
        if c.accept("="):
            value = p.attribute()
            if c.peek_is("x"):
                c.next()
                value = (value, p.attribute())
            op.attrs[token.text] = value
            return True
        c.pos = saved
        if token.text in ("dense", "array", "true", "false"):
            op.attrs["value"] = p.attribute()
            return True
        if token.text == "loc":
            return False
        c.next()
        keywords.append(token.text)
        return True
    if token.kind is Tok.STRING:
        op.attrs["name"] = c.next().value
        return True
    if token.kind is Tok.HASH:
        op.attrs["value"] = p.attribute()
        return True
    return False


def _bracket_suffix(p: Parser, op: Op) -> None:
    """`%t[0]` (get_tuple_element) or `%x [0:4, 1:5:2]` (slice)."""
    c = p.cursor
    c.expect("[")
    starts, limits, strides = [], [], []
    while not c.accept("]"):
        start = c.expect_kind(Tok.INT, "an index").value
        if c.accept(":"):
            starts.append(start)
            limits.append(c.expect_kind(Tok.INT, "a slice limit").value)
            strides.append(c.expect_kind(Tok.INT, "a slice stride").value
                           if c.accept(":") else 1)
        else:
            op.attrs["index"] = start
        if not c.peek_is("]"):
            c.expect(",", "or ']'")
    if starts:
        op.attrs.update(start_indices=starts, limit_indices=limits, strides=strides)


def _normalize(p: Parser, op: Op, keywords: list[str]) -> None:
    names = _GENERIC_NAMES.get(op.kind, {})
    for key in list(op.attrs):
        if key in names:
            op.attrs[names[key]] = op.attrs.pop(key)
    slots = _KEYWORDS.get(op.kind, ())
    if len(keywords) > len(slots):
        raise p.cursor.error(f"unexpected keyword '{keywords[len(slots)]}' in {op.name}",
                             op.pos)
    for slot, word in zip(slots, keywords):
        op.attrs[slot] = Enum(slot, word)
    if op.kind in ("dot_general", "dot"):
        _dot_numbers(p, op)
    if op.kind == "reduce_precision" and "format" in op.attrs:
        fmt = op.attrs.pop("format")
        m = re.fullmatch(r"e(\d+)m(\d+)", getattr(fmt, "value", ""))
        if m is None:
            raise p.cursor.error(f"bad reduce_precision format {fmt!r} (want eXmY)", op.pos)
        op.attrs.update(exponent_bits=int(m.group(1)), mantissa_bits=int(m.group(2)))


def _dot_numbers(p: Parser, op: Op) -> None:
    fields = {}
    for pretty, generic in (("batching_dims", "batching_dimensions"),
                            ("contracting_dims", "contracting_dimensions")):
        if pretty not in op.attrs:
            continue
        pair = op.attrs.pop(pretty)
        if not isinstance(pair, tuple):
            raise p.cursor.error(f"{pretty} needs 'lhs x rhs' in {op.name}", op.pos)
        fields[f"lhs_{generic}"], fields[f"rhs_{generic}"] = pair
    if fields:
        op.attrs["dot_dimension_numbers"] = Struct("dot", fields)


# -- forms of their own -------------------------------------------------------------------
def reduce(p: Parser, op: Op) -> None:
    """`(%x init: %i), ... applies stablehlo.add across dimensions = [1] : sig` or
    `... across dimensions = [1] : sig reducer(%a: t, %b: t) (%c: t, %d: t) { body }`."""
    c = p.cursor
    if c.peek().kind is Tok.STRING or not c.peek_is("("):
        return default(p, op)
    inputs, inits = [], []
    while True:
        c.expect("(")
        inputs.append(p.value_ref())
        c.expect("init")
        c.expect(":")
        inits.append(p.value_ref())
        c.expect(")")
        if not c.accept(","):
            break
    op.operands = inputs + inits
    applied = None
    if c.accept("applies"):
        name = c.expect_kind(Tok.BARE, "the reduction op")
        applied = (name.text, name.start)
    c.expect("across", "in the reduce")
    c.expect("dimensions")
    c.expect("=")
    op.attrs["dimensions"] = p.attribute()
    if c.peek_is("{"):
        op.attrs.update(p.dictionary())
    c.expect(":", "before the reduce's type")
    p.signature(op)
    if applied is not None:
        op.regions.append(_applied_region(p, op, *applied))
        return
    c.expect("reducer", "(the reduce's body)")
    groups = []
    while c.peek_is("("):
        c.next()
        group = []
        while not c.accept(")"):
            arg = c.expect_kind(Tok.VALUE, "a reducer argument")
            c.expect(":")
            group.append((arg.value[0], parse_type(c)))
            c.accept(",")
        if len(group) != 2:
            raise c.error("each reducer group names two arguments (accumulator, element)")
        groups.append(group)
    args = [g[0] for g in groups] + [g[1] for g in groups]
    op.regions.append(p.region(args))


def _applied_region(p: Parser, op: Op, name: str, pos: int) -> Region:
    """The body `applies stablehlo.add` stands for: (acc, x) -> add(acc, x)."""
    if op.operand_types is None or len(op.operands) != 2:
        raise p.cursor.error(f"'applies {name}' needs one input and a functional type", pos)
    scalar = Shape.scalar(op.operand_types[-1].element_type)
    names = ("%lhs", "%rhs")
    body = Op(name, canonical_kind(name), pos, [("%result", 1)],
              [ValueRef(n, None, pos) for n in names], result_types=[scalar])
    ret = Op("stablehlo.return", "return", pos, [], [ValueRef("%result", None, pos)],
             result_types=[])
    return Region(Block([(n, scalar) for n in names], [body, ret]), pos)


def while_(p: Parser, op: Op) -> None:
    """`(%iterArg = %init, ...) : types [attributes {...}] cond { ... } do { ... }`."""
    c = p.cursor
    if c.peek().kind is Tok.STRING or not c.peek_is("("):
        return default(p, op)
    c.next()
    names = []
    while not c.accept(")"):
        arg = c.expect_kind(Tok.VALUE, "a loop variable (%iterArg = %init)")
        names.append(arg.value[0])
        c.expect("=")
        op.operands.append(p.value_ref())
        if not c.peek_is(")"):
            c.expect(",", "or ')' between loop variables")
    c.expect(":", "before the loop's types")
    p.signature(op)
    if c.accept("attributes"):
        op.attrs.update(p.dictionary())
    args = list(zip(names, op.result_types))
    c.expect("cond", "(the loop's condition region)")
    op.regions.append(p.region(args))
    c.expect("do", "(the loop's body region)")
    op.regions.append(p.region(args))


def convolution(p: Parser, op: Op) -> None:
    """`(%lhs, %rhs) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window =
    {stride = [..], pad = [[..]], ...} {attrs} : sig`."""
    c = p.cursor
    c.expect("(")
    op.operands = p.value_list(")")
    while True:
        key = c.expect_kind(Tok.BARE, "'dim_numbers' or 'window'")
        c.expect("=")
        if key.text == "dim_numbers":
            op.attrs["dimension_numbers"] = Struct("conv", {"labels": parse_conv_labels(c)})
        elif key.text == "window":
            op.attrs.update(p.dictionary())
        else:
            op.attrs[key.text] = p.attribute()
        if not c.accept(","):
            break
    if c.peek_is("{"):
        op.attrs.update(p.dictionary())
    c.expect(":", "before the convolution's type")
    p.signature(op)
    _normalize(p, op, [])


def call(p: Parser, op: Op) -> None:
    """`call @f(%a, %b) : (types) -> types` and `custom_call @target(%a) {attrs} : sig`."""
    c = p.cursor
    if c.peek().kind is Tok.STRING:
        return default(p, op)
    callee = c.expect_kind(Tok.SYMBOL, "the callee (@name)")
    c.expect("(")
    op.operands = p.value_list(")")
    key = "callee" if op.kind == "call" else "call_target_name"
    op.attrs[key] = Symbol(callee.value) if key == "callee" else callee.value
    if c.peek_is("{"):
        op.attrs.update(p.dictionary())
    c.expect(":", f"before the type of {op.name}")
    p.signature(op)


def top_k(p: Parser, op: Op) -> None:
    """`chlo.top_k(%x, k = 3) : t -> (t, t)`."""
    c = p.cursor
    c.expect("(")
    op.operands.append(p.value_ref())
    while c.accept(","):
        key = c.expect_kind(Tok.BARE, "an attribute name")
        c.expect("=")
        op.attrs[key.text] = p.attribute()
    c.expect(")")
    if c.peek_is("{"):
        op.attrs.update(p.dictionary())
    c.expect(":")
    p.signature(op)


PRETTY = {
    "reduce": reduce,
    "while": while_,
    "convolution": convolution,
    "call": call,
    "custom_call": call,
    "chlo.top_k": top_k,
}
"""Op kinds whose pretty form has a reader of its own; the rest use `default`."""
