"""The syntax tree the parser builds and the emitter lowers: a module of
functions, each a block of operations, some holding regions.

Ops are kept in StableHLO's generic form whichever way they were printed:
`attrs` uses the generic attribute names (`broadcast_dimensions`, not the
pretty `dims`), so the emitter reads one spelling per op. `pos` is a character
offset; the cursor turns it into a line and column for errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xlapy.hlo.shape import Shape


@dataclass(frozen=True)
class ValueRef:
    """A use of a value: `%name` or `%name#index` (index None when not written)."""

    name: str
    index: int | None
    pos: int


@dataclass
class Block:
    args: list[tuple[str, Shape]] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)


@dataclass
class Region:
    block: Block
    pos: int


@dataclass
class Op:
    """One operation. `kind` is the name without its dialect for stablehlo/mhlo ops
    (`add`), `chlo.*` for CHLO, and `return`/`call` for the func dialect's."""

    name: str
    kind: str
    pos: int
    results: list[tuple[str, int]] = field(default_factory=list)  # (name, result count)
    operands: list[ValueRef] = field(default_factory=list)
    attrs: dict = field(default_factory=dict)
    regions: list[Region] = field(default_factory=list)
    operand_types: list[Shape] | None = None
    result_types: list[Shape] | None = None

    @property
    def result_count(self) -> int:
        return sum(count for _, count in self.results)


@dataclass
class Func:
    name: str
    visibility: str
    args: list[tuple[str, Shape, dict]]
    result_types: list[Shape]
    result_attrs: list[dict]
    body: Block
    pos: int


@dataclass
class Module:
    name: str
    attrs: dict
    funcs: dict[str, Func]
    pos: int


def canonical_kind(name: str) -> str:
    """`stablehlo.add` and `mhlo.add` -> `add`; `func.return`, `stablehlo.return` ->
    `return`; `func.call` -> `call`; `chlo.erf` stays."""
    dialect, _, rest = name.partition(".")
    if not rest:
        return name
    if dialect in ("stablehlo", "mhlo", "func"):
        return rest
    return name
