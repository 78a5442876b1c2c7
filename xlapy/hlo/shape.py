"""Shapes: arrays (element type, dimensions, layout), tuples and tokens.

A Shape is immutable and hashable. Equality includes the layout; use
`compatible` where XLA's ShapeUtil::Compatible would (same type and dims,
layouts ignored), which is what shape inference and the verifier compare.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xlapy.hlo.dtypes import PrimitiveType


@dataclass(frozen=True)
class Layout:
    """`minor_to_major` lists dimensions from fastest- to slowest-varying.

    `extras` holds whatever XLA prints after a colon inside the layout braces
    (tiles `T(8,128)`, element size `E(4)`, memory space `S(1)`): kept verbatim
    so that it prints back, but not interpreted.
    """

    minor_to_major: tuple[int, ...]
    extras: str = ""

    @staticmethod
    def descending(rank: int) -> Layout:
        """Row-major: the last dimension varies fastest, XLA's default."""
        return Layout(tuple(range(rank - 1, -1, -1)))

    def __str__(self) -> str:
        dims = ",".join(str(d) for d in self.minor_to_major)
        return "{" + dims + (":" + self.extras if self.extras else "") + "}"


@dataclass(frozen=True)
class Shape:
    """An HLO shape. Build with `Shape.array`, `Shape.tuple`, `Shape.token`."""

    element_type: PrimitiveType
    dimensions: tuple[int, ...] = ()
    layout: Layout | None = None
    tuple_shapes: tuple[Shape, ...] = ()
    dynamic_dimensions: tuple[bool, ...] = ()
    """Per dimension: True where the size is a bound (`<=N`) rather than exact."""

    # -- construction -----------------------------------------------------------------
    @staticmethod
    def array(element_type: PrimitiveType | str, dimensions=(), layout=None) -> Shape:
        """An array shape; `layout` is a Layout, a minor_to_major tuple, or None."""
        if isinstance(element_type, str):
            element_type = PrimitiveType.from_text(element_type)
        if layout is not None and not isinstance(layout, Layout):
            layout = Layout(tuple(layout))
        return Shape(element_type, tuple(int(d) for d in dimensions), layout)

    @staticmethod
    def scalar(element_type: PrimitiveType | str) -> Shape:
        return Shape.array(element_type, ())

    @staticmethod
    def tuple(shapes) -> Shape:  # noqa: A003 - XLA's name
        return Shape(PrimitiveType.TUPLE, tuple_shapes=tuple(shapes))

    @staticmethod
    def token() -> Shape:
        return Shape(PrimitiveType.TOKEN)

    # -- queries ----------------------------------------------------------------------
    @property
    def is_array(self) -> bool:
        return self.element_type.is_array_type

    @property
    def is_tuple(self) -> bool:
        return self.element_type is PrimitiveType.TUPLE

    @property
    def is_token(self) -> bool:
        return self.element_type is PrimitiveType.TOKEN

    @property
    def rank(self) -> int:
        return len(self.dimensions)

    @property
    def is_scalar(self) -> bool:
        return self.is_array and not self.dimensions

    @property
    def is_dynamic(self) -> bool:
        return any(self.dynamic_dimensions)

    @property
    def element_count(self) -> int:
        return math.prod(self.dimensions)

    def major_to_minor(self) -> list[int]:
        """Dimensions from slowest- to fastest-varying in memory (row-major without a
        layout, or with one that does not cover every dimension)."""
        if self.layout is None or len(self.layout.minor_to_major) != self.rank:
            return list(range(self.rank))
        return list(reversed(self.layout.minor_to_major))

    @property
    def dtype(self):
        """The NumPy dtype of an array shape's elements."""
        return self.element_type.numpy

    @property
    def byte_size(self) -> int:
        """Bytes of a dense array buffer; for a tuple, the sum over its leaves."""
        if self.is_tuple:
            return sum(s.byte_size for s in self.tuple_shapes)
        if self.is_token:
            return 0
        return self.element_count * self.element_type.byte_size

    def leaves(self) -> list[tuple[tuple[int, ...], Shape]]:
        """(index, shape) for every non-tuple subshape, in depth-first order."""
        if not self.is_tuple:
            return [((), self)]
        return [((i,) + index, leaf)
                for i, sub in enumerate(self.tuple_shapes) for index, leaf in sub.leaves()]

    def subshape(self, index) -> Shape:
        """The shape at a ShapeIndex (a sequence of tuple positions)."""
        shape = self
        for i in index:
            shape = shape.tuple_shapes[i]
        return shape

    def compatible(self, other: Shape) -> bool:
        """Same element types and dimensions throughout; layouts ignored."""
        if self.element_type is not other.element_type:
            return False
        if self.is_tuple:
            return len(self.tuple_shapes) == len(other.tuple_shapes) and all(
                a.compatible(b) for a, b in zip(self.tuple_shapes, other.tuple_shapes))
        return self.dimensions == other.dimensions

    # -- rewriting --------------------------------------------------------------------
    def with_layout(self, layout) -> Shape:
        if layout is not None and not isinstance(layout, Layout):
            layout = Layout(tuple(layout))
        return Shape(self.element_type, self.dimensions, layout, self.tuple_shapes,
                     self.dynamic_dimensions)

    def with_default_layout(self) -> Shape:
        """Row-major layouts on every array, as XLA's builder gives them."""
        if self.is_tuple:
            return Shape.tuple(s.with_default_layout() for s in self.tuple_shapes)
        if not self.is_array or self.layout is not None:
            return self
        return self.with_layout(Layout.descending(self.rank))

    def without_layout(self) -> Shape:
        if self.is_tuple:
            return Shape.tuple(s.without_layout() for s in self.tuple_shapes)
        return self.with_layout(None)

    def with_element_type(self, element_type: PrimitiveType) -> Shape:
        return Shape(element_type, self.dimensions, self.layout, self.tuple_shapes,
                     self.dynamic_dimensions)

    # -- printing ---------------------------------------------------------------------
    def to_text(self, print_layout: bool = True) -> str:
        """XLA's spelling: `f32[2,3]{1,0}`, `(f32[], s32[4]{0})`, `token[]`; long
        tuples carry a `/*index=N*/` marker before every fifth element, as XLA prints."""
        if self.is_tuple:
            parts = [(f"/*index={i}*/" if i and i % 5 == 0 else "") + s.to_text(print_layout)
                     for i, s in enumerate(self.tuple_shapes)]
            return "(" + ", ".join(parts) + ")"
        if self.is_token or self.element_type is PrimitiveType.OPAQUE:
            return f"{self.element_type.value}[]"
        dynamic = self.dynamic_dimensions or (False,) * self.rank
        dims = ",".join(("<=" if dyn else "") + str(d)
                        for d, dyn in zip(self.dimensions, dynamic))
        text = f"{self.element_type.value}[{dims}]"
        if print_layout and self.layout is not None and (self.rank or self.layout.extras):
            text += str(self.layout)
        return text

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return f"Shape({self.to_text()!r})"
