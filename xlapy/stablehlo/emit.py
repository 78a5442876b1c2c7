"""The syntax tree to an HloModule, through xlapy's builder.

Functions become computations (the entry is `@main`, or the one public
function), `func.call` a `call`. MLIR regions become called computations. A
region may use values defined outside it, which HLO computations cannot, so
the emitter passes such captured values in: as extra loop state of a `while`,
as the operand of a `conditional` branch; reducers and comparators (which
take only scalars) may capture only constants, which are copied in.

Every op's results are checked against the types the text declares, so a
lowering that disagrees with StableHLO is a ParseError at the op, not a wrong
module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from xlapy.errors import ParseError, XlapyError
from xlapy.hlo.builder import ComputationBuilder, ModuleBuilder
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.stablehlo.context import OpContext
from xlapy.stablehlo.lexer import Cursor
from xlapy.stablehlo.ops import OPS
from xlapy.stablehlo.syntax import Block, Func, Module, Op, Region, ValueRef

Capture = Callable[[str, int], "list[HloInstruction] | None"]


class Scope:
    """SSA names to instructions (a list: one per result of the defining op). A name
    not defined here is asked of `capture` (with the position of the use)."""

    def __init__(self, emitter: Emitter, capture: Capture | None = None):
        self.emitter = emitter
        self.values: dict[str, list[HloInstruction]] = {}
        self.capture = capture

    def define(self, name: str, instructions: list[HloInstruction], pos: int) -> None:
        if name in self.values:
            raise self.emitter.error(f"value {name} is defined twice", pos)
        self.values[name] = instructions

    def all_of(self, name: str, pos: int) -> list[HloInstruction]:
        if name in self.values:
            return self.values[name]
        found = self.capture(name, pos) if self.capture is not None else None
        if found is None:
            raise self.emitter.error(f"use of undefined value {name}", pos)
        self.values[name] = found
        return found

    def lookup(self, ref: ValueRef) -> HloInstruction:
        values = self.all_of(ref.name, ref.pos)
        if ref.index is None:
            if len(values) != 1:
                raise self.emitter.error(f"{ref.name} has {len(values)} results; name one as "
                                         f"{ref.name}#N", ref.pos)
            return values[0]
        if ref.index >= len(values):
            raise self.emitter.error(f"{ref.name} has {len(values)} result(s); there is no "
                                     f"{ref.name}#{ref.index}", ref.pos)
        return values[ref.index]


class Emitter:
    def __init__(self, module: Module, cursor: Cursor):
        self.module = module
        self.cursor = cursor
        self.mb = ModuleBuilder(module.name)
        self.functions: dict[str, HloComputation] = {}
        self.in_progress: set[str] = set()

    def error(self, message: str, pos: int) -> ParseError:
        return self.cursor.error(message, pos)

    # -- functions ----------------------------------------------------------------------
    def build(self) -> HloModule:
        entry = self._entry()
        computation = self._function(entry, entry=True)
        try:
            module = self.mb.build(computation)
        except XlapyError as e:
            raise self.error(f"the module does not verify: {e}", entry.pos) from e
        for key, name in (("mhlo.num_partitions", "num_partitions"),
                          ("mhlo.num_replicas", "replica_count")):
            count = getattr(self.module.attrs.get(key), "value", self.module.attrs.get(key))
            if isinstance(count, int) and count > 1:
                module.attributes[name] = count
        return module

    def _entry(self) -> Func:
        funcs = self.module.funcs
        if "main" in funcs:
            return funcs["main"]
        public = [f for f in funcs.values() if f.visibility == "public"]
        if len(public) != 1:
            raise self.error("no entry function: expected @main or exactly one public "
                             "func.func", self.module.pos)
        return public[0]

    def function(self, name: str, pos: int) -> HloComputation:
        """The computation of function @name (built on first use)."""
        if name in self.functions:
            return self.functions[name]
        func = self.module.funcs.get(name)
        if func is None:
            raise self.error(f"call to undefined function @{name}", pos)
        if name in self.in_progress:
            raise self.error(f"recursive call to @{name}: HLO has no recursion", pos)
        self.in_progress.add(name)
        self.functions[name] = self._function(func)
        self.in_progress.discard(name)
        return self.functions[name]

    def _function(self, func: Func, entry: bool = False) -> HloComputation:
        b = self.mb.computation("main" if entry else func.name)
        scope = Scope(self)
        for i, (name, shape, _) in enumerate(func.args):
            if not (shape.is_array or shape.is_tuple or shape.is_token):
                raise self.error(f"argument {name} of @{func.name} has no HLO shape", func.pos)
            scope.define(name, [b.parameter(i, shape, f"Arg_{i}")], func.pos)
        returned = self.block(b, func.body, scope, func.pos)
        if len(returned) != len(func.result_types) or not all(
                _same(r.shape, t) for r, t in zip(returned, func.result_types)):
            got = ", ".join(r.shape.to_text(False) for r in returned)
            want = ", ".join(t.to_text(False) for t in func.result_types)
            raise self.error(f"@{func.name} returns ({got}) but declares ({want})", func.pos)
        if not returned:
            raise self.error(f"@{func.name} returns nothing; an HLO computation needs a "
                             "result", func.pos)
        root = returned[0] if len(returned) == 1 else b.tuple(returned)
        return b.build(root)

    # -- blocks and ops -----------------------------------------------------------------
    def block(self, b: ComputationBuilder, block: Block, scope: Scope, pos: int
              ) -> list[HloInstruction]:
        """Emit the ops of `block`; returns what its terminating `return` returns."""
        for i, op in enumerate(block.ops):
            if op.kind == "return":
                if i != len(block.ops) - 1:
                    raise self.error("return must be the last op of its block",
                                     block.ops[i + 1].pos)
                return [scope.lookup(ref) for ref in op.operands]
            self.operation(b, op, scope)
        raise self.error("region or function body does not end with a return", pos)

    def operation(self, b: ComputationBuilder, op: Op, scope: Scope) -> None:
        lowering = OPS.get(op.kind)
        if lowering is None:
            raise self.error(f"unknown or unsupported operation '{op.name}'", op.pos)
        args = [scope.lookup(ref) for ref in op.operands]
        ctx = OpContext(self, b, op, args, scope)
        try:
            results = lowering(ctx)
        except ParseError:
            raise
        except (XlapyError, ValueError, TypeError, KeyError, IndexError, AttributeError,
                ZeroDivisionError, OverflowError) as e:
            raise self.error(f"{op.name}: {e}", op.pos) from e
        if len(results) != op.result_count:
            raise self.error(f"{op.name} gives {len(results)} result(s) but the text names "
                             f"{op.result_count}", op.pos)
        for i, (result, declared) in enumerate(zip(results, op.result_types or [])):
            if not _same(result.shape, declared):
                raise self.error(f"{op.name}: result {i} is declared "
                                 f"{declared.to_text(False)} but computes "
                                 f"{result.shape.to_text(False)}", op.pos)
        taken = 0
        for name, count in op.results:
            scope.define(name, results[taken:taken + count], op.pos)
            taken += count

    # -- regions ------------------------------------------------------------------------
    def isolated_region(self, b: ComputationBuilder, region: Region, name: str,
                        outer: Scope) -> HloComputation:
        """A region whose block arguments are the computation's parameters (reducers,
        comparators, scatter updates). It may capture only constants."""
        sub = b.subcomputation(name)

        def copy_constant(value: str, pos: int):
            found = outer.all_of(value, pos)
            if any(v.opcode is not Opcode.CONSTANT for v in found):
                raise self.error(f"{value} is used inside a {name} region but defined outside "
                                 "it; only constants may be captured there", pos)
            return [sub.constant(v.literal, v.shape.element_type) for v in found]

        scope = Scope(self, copy_constant)
        for i, (arg, shape) in enumerate(region.block.args):
            scope.define(arg, [sub.parameter(i, shape, f"Arg_{i}")], region.pos)
        returned = self.block(sub, region.block, scope, region.pos)
        if not returned:
            raise self.error(f"the {name} region returns nothing", region.pos)
        return sub.build(returned[0] if len(returned) == 1 else sub.tuple(returned))

    def state_region(self, b: ComputationBuilder, region: Region, name: str,
                     state: list[Shape], captured: Captured,
                     ) -> tuple[ComputationBuilder, list[HloInstruction], list[HloInstruction]]:
        """A region that takes one tuple parameter: its block arguments (`state`, bound
        in order) followed by the `captured` outer values. Returns the builder, what
        the region returns, and the captured values as seen inside."""
        sub = b.subcomputation(name)
        shapes = list(state) + [c.shape for c in captured.values]
        param = sub.parameter(0, Shape.tuple(shapes), "arg_tuple")
        elements = [sub.get_tuple_element(param, i) for i in range(len(shapes))]
        scope = Scope(self)
        args = region.block.args
        if len(args) != len(state):
            raise self.error(f"the {name} region takes {len(args)} argument(s), expected "
                             f"{len(state)}", region.pos)
        for (arg, _), element in zip(args, elements):
            scope.define(arg, [element], region.pos)
        inside = elements[len(state):]
        for value_name, first, count in captured.slots:
            scope.values.setdefault(value_name, inside[first:first + count])
        returned = self.block(sub, region.block, scope, region.pos)
        return sub, returned, inside

    def captures(self, regions: Iterable[Region], scope: Scope) -> Captured:
        """The outer values the regions use."""
        captured = Captured([], [])
        for name, pos in free_names(regions):
            found = scope.all_of(name, pos)
            captured.slots.append((name, len(captured.values), len(found)))
            captured.values.extend(found)
        return captured


@dataclass
class Captured:
    """Outer values regions use, flattened; `slots` says where each name's values sit:
    (name, first index, count)."""

    values: list[HloInstruction]
    slots: list[tuple[str, int, int]]


def free_names(regions: Iterable[Region]) -> list[tuple[str, int]]:
    """Names the regions use but do not define (with a use's position), in order."""
    found: dict[str, int] = {}

    def walk(block: Block, defined: set[str]) -> None:
        defined = defined | {name for name, _ in block.args}
        for op in block.ops:
            for ref in op.operands:
                if ref.name not in defined and ref.name not in found:
                    found[ref.name] = ref.pos
            for region in op.regions:
                walk(region.block, defined)
            defined |= {name for name, _ in op.results}

    for region in regions:
        walk(region.block, set())
    return list(found.items())


def _same(shape: Shape, declared: Shape) -> bool:
    if shape.is_tuple or declared.is_tuple:
        return shape.is_tuple and declared.is_tuple and \
            len(shape.tuple_shapes) == len(declared.tuple_shapes) and \
            all(_same(a, b) for a, b in zip(shape.tuple_shapes, declared.tuple_shapes))
    return shape.compatible(declared)


def emit(module: Module, cursor: Cursor) -> HloModule:
    return Emitter(module, cursor).build()
