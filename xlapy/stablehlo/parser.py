"""StableHLO text to the syntax tree: the module, its functions, blocks and
regions, and operations in MLIR's generic form (`"stablehlo.add"(%a, %b) :
(...) -> ...`). Pretty forms (`stablehlo.add %a, %b : tensor<f32>`) are read
by `pretty.py`, which this parser dispatches to by op name.

`loc(...)` annotations and `#loc` aliases are read and dropped.
"""

from __future__ import annotations

from xlapy.hlo.shape import Shape
from xlapy.stablehlo import pretty
from xlapy.stablehlo.attributes import parse_attribute, parse_dictionary
from xlapy.stablehlo.lexer import Cursor, Tok
from xlapy.stablehlo.syntax import Block, Func, Module, Op, Region, ValueRef, canonical_kind
from xlapy.stablehlo.types import parse_type, parse_type_list


class Parser:
    """Reads one module; `cursor.error` makes every ParseError."""

    def __init__(self, text: str):
        self.cursor = Cursor(text)
        self.aliases: dict = {}

    # -- the module ---------------------------------------------------------------------
    def module(self) -> Module:
        c = self.cursor
        self._alias_definitions()
        start = c.peek()
        if start.kind is Tok.STRING:
            raise c.error("the generic form of builtin.module is not supported; print the "
                          "module in its default (pretty) form")
        if c.peek_is("module"):
            c.next()
            name = c.next().value if c.peek().kind is Tok.SYMBOL else "module"
            attrs = {}
            if c.accept("attributes"):
                attrs = parse_dictionary(c, self.aliases)
            c.expect("{", "opening the module body")
            funcs = self._functions(until="}")
            c.expect("}", "closing the module")
            self._skip_loc()
        else:
            name, attrs = "module", {}
            funcs = self._functions(until=None)
        self._alias_definitions()
        if c.peek().kind is not Tok.EOF:
            raise c.unexpected("end of input after the module")
        if not funcs:
            raise c.error("no func.func in the module", start.start)
        return Module(str(name), attrs, funcs, start.start)

    def _alias_definitions(self) -> None:
        """`#loc1 = loc(...)` and other `#alias = value` lines (before or after the module)."""
        c = self.cursor
        while c.peek().kind is Tok.HASH:
            name = c.next().text[1:]
            c.expect("=", f"after #{name}")
            if c.peek_is("loc"):
                self._skip_loc()
            else:
                self.aliases[name] = parse_attribute(c, self.aliases)

    def _functions(self, until: str | None) -> dict[str, Func]:
        c = self.cursor
        funcs: dict[str, Func] = {}
        while not (c.peek().kind is Tok.EOF or (until and c.peek_is(until))
                   or c.peek().kind is Tok.HASH):
            token = c.peek()
            if not (c.peek_is("func.func") or c.peek_is("func")):
                raise c.unexpected("'func.func' or the end of the module")
            func = self._function()
            if func.name in funcs:
                raise c.error(f"function @{func.name} is defined twice", token.start)
            funcs[func.name] = func
        return funcs

    def _function(self) -> Func:
        c = self.cursor
        start = c.next()
        visibility = "public"
        if c.peek_is("public") or c.peek_is("private") or c.peek_is("nested"):
            visibility = c.next().text
        name = c.expect_kind(Tok.SYMBOL, "the function's @name").value
        c.expect("(", "opening the function's arguments")
        args: list[tuple[str, Shape, dict]] = []
        if not c.accept(")"):
            while True:
                arg = c.expect_kind(Tok.VALUE, "an argument name (%arg0)")
                c.expect(":")
                shape = parse_type(c)
                attrs = parse_dictionary(c, self.aliases) if c.peek_is("{") else {}
                self._skip_loc()
                args.append((arg.value[0], shape, attrs))
                if c.accept(")"):
                    break
                c.expect(",", "or ')' between arguments")
        results, result_attrs = [], []
        if c.accept("->"):
            if c.accept("("):
                if not c.accept(")"):
                    while True:
                        results.append(parse_type(c))
                        result_attrs.append(parse_dictionary(c, self.aliases)
                                            if c.peek_is("{") else {})
                        self._skip_loc()
                        if c.accept(")"):
                            break
                        c.expect(",", "or ')' between result types")
            else:
                results.append(parse_type(c))
                result_attrs.append({})
        if c.accept("attributes"):
            parse_dictionary(c, self.aliases)
        open_brace = c.expect("{", "opening the function body")
        body = Block(args=[(n, s) for n, s, _ in args], ops=self._ops(open_brace.start))
        self._skip_loc()
        return Func(name, visibility, args, results, result_attrs, body, start.start)

    # -- blocks and regions -------------------------------------------------------------
    def _ops(self, open_pos: int) -> list[Op]:
        """Ops up to and including the closing `}` of the block opened at `open_pos`."""
        c = self.cursor
        ops = []
        while not c.accept("}"):
            if c.peek().kind is Tok.EOF:
                raise c.error("unterminated region: '{' has no matching '}'", open_pos)
            ops.append(self.operation())
        return ops

    def region(self, args: list[tuple[str, Shape]] | None = None) -> Region:
        """`{ [^bb0(%a: t, ...):] ops }`; `args` gives the block arguments of a pretty
        region that prints none (a while's cond and body)."""
        c = self.cursor
        open_brace = c.expect("{", "opening a region")
        block = Block(args=list(args or []))
        if c.peek().kind is Tok.BLOCK:
            c.next()
            block.args = []
            if c.accept("("):
                while not c.accept(")"):
                    arg = c.expect_kind(Tok.VALUE, "a block argument")
                    c.expect(":")
                    block.args.append((arg.value[0], parse_type(c)))
                    self._skip_loc()
                    if not c.peek_is(")"):
                        c.expect(",", "or ')' between block arguments")
            c.expect(":", "after the block label")
        block.ops = self._ops(open_brace.start)
        if c.peek().kind is Tok.BLOCK:
            raise c.error("regions with several blocks are not supported")
        return Region(block, open_brace.start)

    # -- operations ---------------------------------------------------------------------
    def operation(self) -> Op:
        c = self.cursor
        start = c.peek()
        results = self._results()
        token = c.next()
        if token.kind is Tok.STRING:
            op = Op(token.value, canonical_kind(token.value), start.start, results)
            self._generic_body(op)
        elif token.kind is Tok.BARE:
            op = Op(token.text, canonical_kind(token.text), start.start, results)
            parse_pretty = pretty.PRETTY.get(op.kind, pretty.default)
            parse_pretty(self, op)
        else:
            raise c.error(f"expected an operation, found '{token.text}'", token.start)
        self._skip_loc()
        return op

    def _results(self) -> list[tuple[str, int]]:
        c = self.cursor
        results: list[tuple[str, int]] = []
        if c.peek().kind is not Tok.VALUE:
            return results
        while True:
            token = c.expect_kind(Tok.VALUE, "a result name")
            name, number = token.value
            if number is not None:
                raise c.error(f"a result name cannot have a '#' suffix: {token.text}",
                              token.start)
            count = 1
            if c.accept(":"):
                count = c.expect_kind(Tok.INT, "the number of results").value
                if count < 1:
                    raise c.error("a result group needs at least one result", token.start)
            results.append((name, count))
            if c.accept("="):
                return results
            c.expect(",", "or '=' after a result name")

    def _generic_body(self, op: Op) -> None:
        """`(operands) [<{properties}>] [(regions)] [{attributes}] : (types) -> types`."""
        c = self.cursor
        c.expect("(", f"opening the operands of \"{op.name}\"")
        op.operands = self.value_list(")")
        if c.peek_is("<"):
            c.next()
            op.attrs.update(parse_dictionary(c, self.aliases))
            c.expect(">", "closing the properties")
        if c.peek_is("("):
            c.next()
            while True:
                op.regions.append(self.region())
                if c.accept(")"):
                    break
                c.expect(",", "or ')' between regions")
        if c.peek_is("{"):
            op.attrs.update(parse_dictionary(c, self.aliases))
        c.expect(":", f"before the type of \"{op.name}\"")
        self.signature(op)

    # -- pieces the pretty forms share ---------------------------------------------------
    def value_ref(self) -> ValueRef:
        token = self.cursor.expect_kind(Tok.VALUE, "a value (%name)")
        name, index = token.value
        return ValueRef(name, index, token.start)

    def value_list(self, closer: str) -> list[ValueRef]:
        """Values separated by commas, up to and including `closer`."""
        c = self.cursor
        values: list[ValueRef] = []
        if c.accept(closer):
            return values
        while True:
            values.append(self.value_ref())
            if c.accept(closer):
                return values
            c.expect(",", f"or '{closer}' between operands")

    def attribute(self, typed: bool = False):
        return parse_attribute(self.cursor, self.aliases, typed=typed)

    def dictionary(self) -> dict:
        return parse_dictionary(self.cursor, self.aliases)

    def signature(self, op: Op) -> None:
        """After the `:`: `(a, b) -> r`, `a -> (r, s)`, or a plain list `a, b`, whose
        last entries are the result types."""
        c = self.cursor
        types = parse_type_list(c)
        if c.accept("->"):
            op.operand_types = types
            op.result_types = parse_type_list(c)
        else:
            op.result_types = types[len(types) - op.result_count:] if op.result_count else []
            if op.result_count and len(types) == 1:
                op.result_types = types * op.result_count
        if len(op.result_types) != op.result_count:
            raise c.error(f"{op.name} declares {len(op.result_types)} result type(s) but "
                          f"defines {op.result_count} result(s)", op.pos)

    def _skip_loc(self) -> None:
        c = self.cursor
        if c.peek_is("loc") and self._next_is_paren():
            c.next()
            c.skip_balanced()

    def _next_is_paren(self) -> bool:
        c = self.cursor
        saved = c.pos
        c.next()
        is_paren = c.peek_is("(")
        c.pos = saved
        return is_paren
