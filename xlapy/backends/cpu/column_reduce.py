"""Reductions over the major dimensions of a row-major array ("column" reductions).

A bias gradient sums f32[batch, seq, features] over batch and seq: each of the
`features` outputs is a sum down a column. Computed one output at a time (what
the element generator does) that is a strided scalar loop per output. Here
the whole rows are folded into the outputs instead:

    out[j] = init                       for every j of a chunk of the columns
    for each row r:  out[j] = out[j] (+) x[r, j]

so the inner loop runs along the minor dimension, unit-stride and vectorised,
and each output still combines its elements in row order. Chunks of columns
are split between threads.

The same loop serves a multi-output fusion whose roots are such reductions of
one shape and elementwise values of that shape (a layernorm's backward pass:
the input gradient plus the gamma and beta gradients). Every root is
computed in the same iteration at the same index, so the expression they
share is computed once per element instead of once per root, and the
elementwise outputs are stored as the rows stream by.

Only simple reducers, stored and computed in the same type. A float sum of
more than `BLOCK_ROWS` rows goes in blocks of that many, each block's partial
added to the total with Neumaier's compensation (`_Blocked`), the scheme of
the element generator's sums with shorter blocks: a block down a column is
summed in order, where a row's is spread over vector accumulators.
"""

from __future__ import annotations

from dataclasses import dataclass

import llvmlite.ir as ir

from xlapy.backends.cpu import codegen
from xlapy.codegen import ir_types as T
from xlapy.codegen.generator import Generator
from xlapy.codegen.ir_array import IrArray, minor_to_major
from xlapy.codegen.reduce_generator import add_compensated, combine
from xlapy.codegen.scalar_computation import simple_reducer
from xlapy.codegen.scope import Ix, Scope
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode as Op
from xlapy.hlo.shape import Shape

BLOCK_ROWS = 256
"""A float sum down more rows than this adds them in blocks of this many, each
block's partial added to the total with a compensation: a sum down a column is
sequential, so its rounding error grows with the block, not the column."""
MAX_CHUNK = 512
"""Columns per chunk at most: their running values stay in L1 while the rows stream by."""
MIN_CHUNK = 16
_TYPES = (P.F32, P.F64, P.S32, P.S64, P.U32, P.U64)


@dataclass
class _Plan:
    shape: Shape
    """The shape every root reduces (its major `reduced` dims) or has."""
    reduced: int
    rows: int
    columns: int
    roots: list[HloInstruction]


def _row_major(shape: Shape) -> bool:
    return list(minor_to_major(shape)) == list(range(shape.rank - 1, -1, -1))


def _plan(instruction) -> _Plan | None:
    """The plan when every root of `instruction` (a reduce, or a fusion) reduces
    the same major dims of one shape or is an elementwise value of that shape,
    at least one reducing; else None."""
    if instruction.opcode is Op.REDUCE:
        roots = [instruction]
        if not _row_major(instruction.operands[0].shape):
            return None
    elif instruction.opcode is Op.FUSION:
        root = instruction.attr("calls").root_instruction
        roots = list(root.operands) if root.opcode is Op.TUPLE else [root]
    else:
        return None
    reduces = [r for r in roots if r.opcode is Op.REDUCE]
    if not reduces or any(r.shape.is_tuple or not _row_major(r.shape) for r in roots):
        return None
    shape = reduces[0].operands[0].shape
    reduced = len(reduces[0].attr("dimensions") or ())
    for r in reduces:
        if not _simple_column_reduce(r, shape, reduced):
            return None
    for r in roots:
        if r.opcode is not Op.REDUCE and r.shape.dimensions != shape.dimensions:
            return None
    rows = 1
    for d in shape.dimensions[:reduced]:
        rows *= d
    columns = shape.element_count // max(rows, 1)
    if rows < 2 or columns < 16:
        return None
    return _Plan(shape, reduced, rows, columns, roots)


def _simple_column_reduce(reduce: HloInstruction, shape: Shape, reduced: int) -> bool:
    if len(reduce.operands) != 2:
        return False
    operand = reduce.operands[0]
    ptype = reduce.shape.element_type
    dims = sorted(reduce.attr("dimensions") or ())
    return (ptype in _TYPES and operand.shape.element_type is ptype
            and operand.shape.dimensions == shape.dimensions
            and dims == list(range(reduced)) and 0 < reduced < shape.rank
            and simple_reducer(reduce.attr("to_apply")) is not None)


def emit_column_reduction(cg, instruction) -> bool:
    plan = _plan(instruction)
    if plan is None:
        return False
    k = cg.loop_kernel(instruction)
    scope = Scope(k.b)
    g = Generator(codegen.KernelContext(cg, k.b), scope, k.arrays)
    chunk = _chunk(plan.columns, cg.options.threads)
    _emit_loops(g, scope, plan, k.outputs, k.begin, k.end, chunk)
    k.b.ret_void()
    cg.call_kernel(k.fn, k.slices, -(-plan.columns // chunk), plan.rows * plan.columns)
    return True


def _chunk(columns: int, threads: int) -> int:
    """Columns per chunk: enough chunks for every thread, in whole vectors."""
    share = -(-columns // max(threads, 1))
    return max(MIN_CHUNK, min(MAX_CHUNK, -(-share // MIN_CHUNK) * MIN_CHUNK))


def _emit_loops(g: Generator, scope: Scope, plan: _Plan, out: list[IrArray], begin, end,
                chunk: int) -> None:
    b = g.b
    c = lambda v: ir.Constant(T.I64, v)  # noqa: E731
    reduces = [(root, array) for root, array in zip(plan.roots, out)
               if root.opcode is Op.REDUCE]
    blocked = {id(root): _Blocked(scope, array) for root, array in reduces
               if plan.rows > BLOCK_ROWS and _float_sum(root)}
    with scope.loop(scope.depth, begin, end, name="chunk") as k:
        with scope.at(k.depth):
            lo = b.mul(k.value, c(chunk))
            hi = b.add(lo, c(chunk))
            hi = b.select(b.icmp_signed("<", hi, c(plan.columns)), hi, c(plan.columns))
        with scope.loop(scope.depth, lo, hi, name="j0") as j:
            column = _unflatten(g, j, plan.shape.dimensions[plan.reduced:])
            for root, array in reduces:
                array.store(b, g.value(root.operands[1], ()), [i.value for i in column])
                if id(root) in blocked:
                    blocked[id(root)].clear(b, "lost", b.sub(j.value, lo), 0.0)
        if not blocked:
            _fold_rows(g, scope, plan, out, lo, hi, c(0), c(plan.rows), {})
            return
        with scope.loop(scope.depth, c(0), c(plan.rows), name="blk", step=BLOCK_ROWS) as start:
            with scope.at(start.depth):
                stop = b.add(start.value, c(BLOCK_ROWS))
                stop = b.select(b.icmp_signed("<", stop, c(plan.rows)), stop, c(plan.rows))
            with scope.loop(scope.depth, lo, hi, name="j1") as j:
                for block in blocked.values():
                    block.clear(b, "partial", b.sub(j.value, lo), -0.0)
            _fold_rows(g, scope, plan, out, lo, hi, start.value, stop,
                       {key: (block, lo) for key, block in blocked.items()})
            with scope.loop(scope.depth, lo, hi, name="j2") as j:
                for block in blocked.values():
                    block.add_partial(b, j.value, lo)
        with scope.loop(scope.depth, lo, hi, name="j3") as j:
            for block in blocked.values():
                block.finish(b, j.value, lo)


def _fold_rows(g: Generator, scope: Scope, plan: _Plan, out: list[IrArray], lo, hi,
               first_row, stop_row, partials: dict) -> None:
    """Rows [first_row, stop_row) folded into the outputs of columns [lo, hi): a
    blocked sum's into its block partials (`partials`), the others' directly."""
    b = g.b
    with scope.loop(scope.depth, first_row, stop_row, name="row") as r:
        row = _unflatten(g, r, plan.shape.dimensions[:plan.reduced])
        with scope.loop(scope.depth, lo, hi, name="j") as j:
            column = _unflatten(g, j, plan.shape.dimensions[plan.reduced:])
            index = tuple(row + column)
            at = [i.value for i in index]
            out_column = [i.value for i in column]
            for root, array in zip(plan.roots, out):
                if root.opcode is not Op.REDUCE:
                    array.store(b, g.value(root, index), at)
            for root, array in zip(plan.roots, out):
                if root.opcode is not Op.REDUCE:
                    continue
                value = g.value(root.operands[0], index)
                ptype = root.shape.element_type
                if id(root) in partials:
                    block, base = partials[id(root)]
                    slot = block.slot(b, "partial", b.sub(j.value, base))
                    b.store(combine(b, root.attr("to_apply"), [b.load(slot)], [value],
                                    [ptype])[0], slot)
                    continue
                total = combine(b, root.attr("to_apply"), [array.load(b, out_column)],
                                [value], [ptype])[0]
                array.store(b, total, out_column)


def _float_sum(reduce: HloInstruction) -> bool:
    return reduce.shape.element_type in (P.F32, P.F64) and \
        simple_reducer(reduce.attr("to_apply")) is Op.ADD


class _Blocked:
    """A float sum over more than BLOCK_ROWS rows: blocks of BLOCK_ROWS rows into
    fresh partials (per column of the chunk, on the stack), each added to the
    output with Neumaier's compensation, whose lost low parts are added last."""

    def __init__(self, scope: Scope, array: IrArray):
        self.array = array
        buffer = ir.ArrayType(array.elem, MAX_CHUNK)
        self.buffers = {"partial": scope.alloca(buffer), "lost": scope.alloca(buffer)}

    def slot(self, b, which: str, offset):
        return b.gep(self.buffers[which], [ir.Constant(T.I64, 0), offset], inbounds=True)

    def clear(self, b, which: str, offset, value: float) -> None:
        b.store(ir.Constant(self.array.elem, value), self.slot(b, which, offset))

    def add_partial(self, b, j, lo) -> None:
        offset = b.sub(j, lo)
        total = b.gep(self.array.ptr, [j], inbounds=True)   # row-major: column j is element j
        add_compensated(b, total, b.load(self.slot(b, "partial", offset)),
                        self.slot(b, "lost", offset))

    def finish(self, b, j, lo) -> None:
        total = b.gep(self.array.ptr, [j], inbounds=True)
        b.store(b.fadd(b.load(total), b.load(self.slot(b, "lost", b.sub(j, lo)))), total)


def _unflatten(g: Generator, flat: Ix, sizes) -> list[Ix]:
    """The row-major multi-index of `flat` over `sizes`, at flat's depth."""
    index = []
    stride = 1
    for size in reversed(sizes):
        def component(b, stride=stride, size=size):
            value = flat.value if stride == 1 else b.udiv(flat.value,
                                                          ir.Constant(T.I64, stride))
            return value if stride * size >= _product(sizes) else \
                b.urem(value, ir.Constant(T.I64, size))
        index.append(Ix.const(0) if size == 1 else g.index_op(flat.depth, component))
        stride *= size
    return list(reversed(index))


def _product(sizes) -> int:
    total = 1
    for s in sizes:
        total *= s
    return total
