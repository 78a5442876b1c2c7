"""Helpers for the shape-inference tests: shapes and computations from short
text, and one-line calls of infer_shape, so a test case reads like HLO."""

from __future__ import annotations

import re

from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.hlo.shape_inference import infer_shape

_ARRAY = re.compile(r"\s*([a-z0-9]+)\[([^\]]*)\]\s*")


def S(text: str) -> Shape:
    """`f32[2,3]`, `(f32[], s32[4])`, `token[]`, `s32[<=4]` -> Shape (no layout)."""
    shape, rest = _parse(text.strip())
    assert not rest.strip(), f"trailing text in {text!r}"
    return shape


def _parse(text: str) -> tuple[Shape, str]:
    if text.startswith("("):
        text, elements = text[1:].lstrip(), []
        while not text.startswith(")"):
            element, text = _parse(text)
            elements.append(element)
            text = text.lstrip().removeprefix(",").lstrip()
        return Shape.tuple(elements), text[1:]
    match = _ARRAY.match(text)
    assert match, f"not a shape: {text!r}"
    name, dims = match.groups()
    rest = text[match.end():]
    if name == "token":
        return Shape.token(), rest
    parts = [d.strip() for d in dims.split(",") if d.strip()]
    dynamic = tuple(p.startswith("<=") for p in parts)
    sizes = tuple(int(p.removeprefix("<=")) for p in parts)
    return Shape(PrimitiveType.from_text(name), sizes, None, (),
                 dynamic if any(dynamic) else ()), rest


def T(shape: Shape) -> str:
    """Shape -> text without layout (what tests compare against)."""
    return shape.to_text(print_layout=False)


def computation(name: str, params, result: str) -> HloComputation:
    """A computation with parameters of shapes `params` returning `result`."""
    parameters = [HloInstruction(Opcode.PARAMETER, S(p), name=f"{name}.p{i}", parameter_number=i)
                  for i, p in enumerate(params)]
    root = HloInstruction(Opcode.CUSTOM_CALL, S(result), parameters, name=f"{name}.root")
    return HloComputation(name, parameters + [root])


def reducer(element: str = "f32", n: int = 1) -> HloComputation:
    """A scalar reducer of n inputs of type `element`."""
    scalar = f"{element}[]"
    result = scalar if n == 1 else "(" + ", ".join([scalar] * n) + ")"
    return computation(f"reduce_{element}_{n}", [scalar] * (2 * n), result)


def infer(opcode: str, *operands, declared: str | None = None, **attrs) -> str:
    """infer_shape on text operands (other objects pass as they are); returns the
    result as text."""
    shape = infer_shape(Opcode.from_text(opcode),
                        [S(o) if isinstance(o, str) else o for o in operands], attrs,
                        S(declared) if declared else None)
    assert shape.layout is None and all(leaf.layout is None for _, leaf in shape.leaves())
    return T(shape)


def window(size: str, stride: str = "", pad: str = "", lhs_dilate: str = "",
           rhs_dilate: str = ""):
    """A Window from XLA's spelling: window("3x3", stride="2x2", pad="0_1x0_1")."""
    from xlapy.hlo.attributes import Window, WindowDimension

    sizes = [int(s) for s in size.split("x")] if size else []
    n = len(sizes)

    def each(text, default):
        return text.split("x") if text else [default] * n

    dims = []
    for s, st, p, ld, rd in zip(sizes, each(stride, "1"), each(pad, "0_0"),
                                each(lhs_dilate, "1"), each(rhs_dilate, "1")):
        low, high = (int(v) for v in p.split("_"))
        dims.append(WindowDimension(s, int(st), low, high, int(rd), int(ld)))
    return Window(tuple(dims))


def padding(text: str):
    """A PaddingConfig from XLA's spelling `0_0x1_2_1` (negatives allowed)."""
    from xlapy.hlo.attributes import PaddingConfig, PaddingDimension

    dims = []
    for part in text.split("x"):
        values = [int(v) for v in re.findall(r"-?\d+", part)]
        dims.append(PaddingDimension(*values))
    return PaddingConfig(tuple(dims))


def slices(*ranges: tuple[int, ...]):
    """slice={[a:b:s], ...} from (start, limit[, stride]) tuples."""
    from xlapy.hlo.attributes import SliceRange

    return tuple(SliceRange(*r) for r in ranges)
