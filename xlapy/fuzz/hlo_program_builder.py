"""Building blocks of the random HLO programs (`hlo_programs`): element types,
the values a program has made, and the computations it is writing.

A `Program` writes one module. A step (the functions of `hlo_programs_steps`,
`hlo_programs_ops` and `hlo_programs_control`, tabled in `hlo_programs`)
takes a value from the pool of the computation being written and adds
instructions that use it. A control-flow step opens a nested computation
(`Program.open`), grows it with the same steps (`Program.grow`) and closes it
with a root (`Program.close`): a loop body or a branch is as random as the
entry. A nested computation has no parameters to add, so a step that wants a
fresh input there gets one made from what the computation has (`fresh`).
Instruction names carry their computation's prefix, so they are unique across
the module, as XLA's text format wants.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from xlapy.fuzz.f32_programs import _dims

FLOATS = ("f32", "f64", "bf16", "f16")
INTS = {"s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
        "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
COMPLEX = {"c64": "f32", "c128": "f64"}
"""Complex types and the type of their parts."""
WIDTH = {"pred": 8, "s8": 8, "u8": 8, "s16": 16, "u16": 16, "f16": 16, "bf16": 16,
         "s32": 32, "u32": 32, "f32": 32, "s64": 64, "u64": 64, "f64": 64, "c64": 64,
         "c128": 128}
"""Bits per element."""


def is_float(t: str) -> bool:
    return t in FLOATS


def is_int(t: str) -> bool:
    return t in INTS


def is_complex(t: str) -> bool:
    return t in COMPLEX


def is_signed(t: str) -> bool:
    return t[0] == "s"


def literal(t: str, value) -> str:
    """A constant's text: complex constants are (re, im) pairs."""
    if t == "pred" and not isinstance(value, str):
        return "true" if value else "false"
    return f"({value}, 0)" if is_complex(t) else str(value)


def shape_text(structure) -> str:
    """The shape of a Value, or of a (nested) list of Values as a tuple."""
    if isinstance(structure, Value):
        return _dims(structure.dims, structure.type)
    return "(" + ", ".join(shape_text(s) for s in structure) + ")"


def leaves(structure) -> list:
    if isinstance(structure, Value):
        return [structure]
    return [v for s in structure for v in leaves(s)]


@dataclass(frozen=True)
class Value:
    name: str
    type: str
    dims: tuple


@dataclass
class Scope:
    """A computation being written: its lines and the values its steps may use."""

    prefix: str
    entry: bool = False
    scalar: bool = False
    """A map's body: only scalars may be made."""
    lines: list[str] = field(default_factory=list)
    pool: list[Value] = field(default_factory=list)
    indices: list[Value] = field(default_factory=list)
    """s32[] values a dynamic start may use (a loop's counter)."""
    line_of: dict[str, int] = field(default_factory=dict)
    params: int = 0


Step = Callable[["Program", Value], None]


class Program:
    """One module under construction; `steps` and `kinds` are the step table and
    the weighted list of its names that `grow` draws from."""

    def __init__(self, seed: int, steps: dict[str, Step], kinds: tuple[str, ...]):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.steps = steps
        self.kinds = kinds
        self.computations: dict[str, str] = {}
        self.scopes = [Scope("v", entry=True)]
        self.numbered = 0

    # -- randomness -----------------------------------------------------------------------
    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def int(self, low: int, high: int) -> int:
        """A random integer in [low, high]."""
        return int(self.rng.integers(low, high + 1))

    def small(self, t: str, low: int, high: int) -> int:
        """A random constant of type t in [low, high] ([0, high] if t is unsigned)."""
        return self.int(0 if t[0] == "u" else low, high)

    def choice(self, options):
        return options[int(self.rng.integers(len(options)))]

    # -- the computation being written ----------------------------------------------------
    @property
    def scope(self) -> Scope:
        return self.scopes[-1]

    @property
    def pool(self) -> list[Value]:
        return self.scope.pool

    @property
    def depth(self) -> int:
        """How many computations deep the step being taken is (0: the entry)."""
        return len(self.scopes) - 1

    def emit(self, shape: str, text: str) -> str:
        """A new line `name = shape text`; its name."""
        scope = self.scope
        name = f"{scope.prefix}{len(scope.lines)}"
        scope.line_of[name] = len(scope.lines)
        scope.lines.append(f"  {name} = {shape} {text}")
        return name

    def add(self, t: str, dims, text: str, pooled: bool = True, layout: str = "") -> Value:
        """A new instruction of type t and `dims` (in `layout`, or now and then in a
        random non-default one: results are logical, layouts only physical)."""
        if not layout and len(dims) >= 2 and self.chance(0.04):
            layout = self.layout(len(dims))
        value = Value(self.emit(_dims(dims, t) + layout, text), t, tuple(dims))
        if pooled:
            self.pool.append(value)
        return value

    def parameter(self, t: str, dims, pooled: bool = False) -> Value:
        """A new parameter of the entry (now and then in a non-default layout: the
        executable lays the argument out); in a nested computation, a fresh value."""
        if not self.scope.entry:
            return self.fresh(t, dims)
        self.scope.params += 1
        layout = self.layout(len(dims)) if len(dims) >= 2 and self.chance(0.1) else ""
        return self.add(t, dims, f"parameter({self.scope.params - 1})", pooled, layout)

    def layout(self, rank: int) -> str:
        """A layout other than the default (row-major) one, as text."""
        order = [int(i) for i in self.rng.permutation(rank)]
        if order == list(reversed(range(rank))):
            order.reverse()
        return "{" + ",".join(map(str, order)) + "}"

    def constant(self, t: str, value) -> Value:
        return self.add(t, (), f"constant({literal(t, value)})", pooled=False)

    def splat(self, t: str, dims, value) -> Value:
        """A constant broadcast to `dims`."""
        c = self.constant(t, value)
        if not dims:
            return c
        return self.add(t, dims, f"broadcast({c.name}), dimensions={{}}", pooled=False)

    def fresh(self, t: str, dims) -> Value:
        """A value of type t and `dims` made inside a nested computation: one the
        computation has, or an iota (along a random dimension) plus a constant."""
        dims = tuple(dims)
        same = [v for v in self.pool if v.type == t and v.dims == dims]
        if same and self.chance(0.6):
            return self.choice(same)
        if not dims:
            return self.constant(t, self.small(t, -3, 5) if t != "pred" else self.chance(0.5))
        axis = self.int(0, len(dims) - 1)
        if t == "pred":
            count = self.add("s32", dims, f"iota(), iota_dimension={axis}", pooled=False)
            bound = self.splat("s32", dims, self.int(0, 3))
            return self.add("pred", dims, f"compare({count.name}, {bound.name}), direction=LT",
                            pooled=False)
        count = self.add(t, dims, f"iota(), iota_dimension={axis}", pooled=False)
        offset = self.splat(t, dims, self.small(t, -3, 3))
        return self.add(t, dims, f"add({count.name}, {offset.name})", pooled=False)

    def partner(self, v: Value) -> Value:
        """Another pooled value of v's type and dimensions (v itself if none)."""
        same = [p for p in self.pool if p.type == v.type and p.dims == v.dims]
        return self.choice(same) if same else v

    def newest(self, t: str, dims) -> Value:
        """The latest pooled value of type t and `dims` (often), or any such (sometimes),
        or a fresh one: what a loop body or a branch gives back."""
        same = [p for p in self.pool if p.type == t and p.dims == tuple(dims)]
        if not same:
            return self.fresh(t, dims)
        return same[-1] if self.chance(0.7) else self.choice(same)

    def is_entry_parameter(self, v: Value) -> bool:
        """Whether v is a parameter of the entry: its values are the same on every
        backend, where a computed float may differ in its last bit."""
        if not self.scope.entry:
            return False
        return "parameter(" in self.scope.lines[self.scope.line_of[v.name]]

    def mark_root(self, v: Value) -> None:
        """v's own line becomes the computation's root (wherever it is)."""
        number = self.scope.line_of[v.name]
        self.scope.lines[number] = self.scope.lines[number].replace("  ", "  ROOT ", 1)

    # -- growing ----------------------------------------------------------------------------
    def grow(self, count: int, kinds: tuple[str, ...] | None = None) -> None:
        """`count` random steps, each on a random pooled value."""
        for _ in range(count):
            if not self.pool:
                return
            v = self.choice(self.pool)
            self.steps[self.choice(kinds or self.kinds)](self, v)

    # -- nested computations --------------------------------------------------------------
    def open(self, kind: str, params: list, scalar: bool = False) -> tuple[str, list]:
        """Start computation `kind<n>` with parameters of the shapes of `params` (Values
        or nested lists of them); (its name, the parameters as Values in the same
        structure, tuples taken apart), all pooled."""
        self.numbered += 1
        name = f"{kind}{self.numbered}"
        self.scopes.append(Scope(f"{name}_", scalar=scalar))
        inside = []
        for number, structure in enumerate(params):
            name_of = self.emit(shape_text(structure), f"parameter({number})")
            inside.append(self._unpack(name_of, structure))
        return name, inside

    def _unpack(self, name: str, structure):
        if isinstance(structure, Value):
            value = Value(name, structure.type, structure.dims)
            self.pool.append(value)
            return value
        parts = []
        for index, part in enumerate(structure):
            element = self.emit(shape_text(part), f"get-tuple-element({name}), index={index}")
            parts.append(self._unpack(element, part))
        return parts

    def close(self, name: str, root) -> None:
        """Finish computation `name` with `root` (a Value of it, or a list: a tuple)."""
        if isinstance(root, Value):
            self.mark_root(root)
        else:
            names = ", ".join(self.tuple_of(r) for r in root)
            self.scope.lines.append(f"  ROOT {self.scope.prefix}root = {shape_text(root)} "
                                    f"tuple({names})")
        body = "\n".join(self.scope.lines)
        self.scopes.pop()
        self.computations[name] = f"{name} {{\n{body}\n}}\n"

    def tuple_of(self, structure) -> str:
        """The name of a value: a Value's own, or a new tuple of a list's."""
        if isinstance(structure, Value):
            return structure.name
        names = ", ".join(self.tuple_of(s) for s in structure)
        return self.emit(shape_text(structure), f"tuple({names})")

    def unpack_result(self, name: str, structure, pooled: bool = True) -> list:
        """The leaves of tuple-shaped instruction `name` (of `structure`'s shape) as
        Values of the current computation."""
        out = []
        for index, part in enumerate(structure):
            element = self.emit(shape_text(part), f"get-tuple-element({name}), index={index}")
            if isinstance(part, Value):
                value = Value(element, part.type, part.dims)
                if pooled:
                    self.pool.append(value)
                out.append(value)
            else:
                out.extend(self.unpack_result(element, part, pooled))
        return out

    # -- shared computations ----------------------------------------------------------------
    def reducer(self, kind: str, t: str) -> str:
        name = f"{kind}_{t}"
        self.computations.setdefault(name, _reducer_text(name, kind, t))
        return name

    def module_text(self) -> str:
        body = "\n".join(self.scopes[0].lines)
        comps = "\n".join(self.computations.values())
        return f"HloModule random_{self.seed}\n\n{comps}\nENTRY main {{\n{body}\n}}\n"


def _reducer_text(name: str, kind: str, t: str) -> str:
    op = {"add": "add", "max": "maximum", "min": "minimum", "mul": "multiply",
          "and": "and", "or": "or"}[kind]
    x = name + "_"  # names are unique across a module
    return (f"{name} {{\n  {x}a = {t}[] parameter(0)\n  {x}b = {t}[] parameter(1)\n"
            f"  ROOT {x}c = {t}[] {op}({x}a, {x}b)\n}}\n")


def identity(kind: str, t: str) -> str:
    """The text of `kind`'s identity in type t."""
    if kind in ("add", "or"):
        return "false" if t == "pred" else literal(t, 0)
    if kind in ("mul", "and"):
        return "true" if t == "pred" else literal(t, 1)
    if t in INTS:
        limits = np.iinfo(INTS[t])
        return str(limits.min if kind == "max" else limits.max)
    return "-inf" if kind == "max" else "inf"
