"""Reductions over the major dimensions of a row-major array ("column" reductions).

A bias gradient sums f32[batch, seq, features] over batch and seq: each of the
`features` outputs is a sum down a column. Computed one output at a time (what
the element generator does) that is a strided scalar loop per output. Here
the whole rows are folded into the outputs instead:

    out[j] = init                       for every j of a chunk of the columns
    for each row r:  out[j] = out[j] (+) x[r, j]

so the inner loop runs along the minor dimension, unit-stride and vectorised,
and each output still combines its elements in row order. Chunks of columns
are split between threads. Reduced dimensions in the middle (a mean over the
sequence of f32[batch, seq, hidden]) make a batch of such reductions, one per
value of the dimensions before them.

Roots computed from the reductions per column (a mean's division, a
variance's scaling) run once the rows are folded, reading the running values;
a reduction only they read runs in a stack array of the chunk's columns.

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
from xlapy.codegen.ir_array import IrArray, is_row_major
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
    """The shape every reduce reduces: dims [lead, lead + reduced) of it."""
    lead: int
    """Dimensions before the reduced ones: each of their values is a batch of its own."""
    reduced: int
    batches: int
    rows: int
    columns: int
    roots: list[HloInstruction]
    reduces: list[HloInstruction]
    """Every reduce of the kernel: roots, and those only an epilogue reads."""


def _plan(instruction) -> _Plan | None:
    """The plan when `instruction` (a reduce, or a fusion) reduces the same major
    dims of one shape, its roots being those reduces, elementwise values of that
    shape, or epilogues of the reduces (values per column: a mean's division, a
    variance's scaling); else None."""
    if instruction.opcode is Op.REDUCE:
        roots, inside, users = [instruction], [instruction], {}
        if not is_row_major(instruction.operands[0].shape):
            return None
    elif instruction.opcode is Op.FUSION:
        computation = instruction.attr("calls")
        root = computation.root_instruction
        roots = list(root.operands) if root.opcode is Op.TUPLE else [root]
        inside, users = computation.instructions, computation.users()
    else:
        return None
    reduces = [i for i in inside if i.opcode is Op.REDUCE]
    if not reduces or any(r.shape.is_tuple or not is_row_major(r.shape) for r in roots):
        return None
    shape = reduces[0].operands[0].shape
    dims = sorted(reduces[0].attr("dimensions") or ())
    if not dims:
        return None
    lead, reduced = dims[0], len(dims)
    for r in reduces:
        if not _simple_column_reduce(r, shape, lead, reduced):
            return None
    batches = _product(shape.dimensions[:lead])
    columns = _product(shape.dimensions[lead + reduced:])
    after = _after_reduces(reduces, users)
    for i in after.values():   # what reads a reduce is a value per column, computed after the rows
        if i.opcode is not Op.TUPLE and i.shape.element_count != batches * columns:
            return None
    for r in roots:
        if r.opcode is not Op.REDUCE and id(r) not in after and \
                r.shape.dimensions != shape.dimensions:
            return None
        if r.opcode is not Op.REDUCE and id(r) in after and not is_row_major(r.shape):
            return None
    rows = _product(shape.dimensions[lead:lead + reduced])
    if rows < 2 or columns < 16:
        return None
    return _Plan(shape, lead, reduced, batches, rows, columns, roots, reduces)


def _after_reduces(reduces: list[HloInstruction], users: dict) -> dict[int, HloInstruction]:
    """Every instruction that depends on one of `reduces` (not the reduces)."""
    found: dict[int, HloInstruction] = {}
    stack = [u for r in reduces for u in users.get(id(r), ())]
    while stack:
        i = stack.pop()
        if id(i) not in found and i.opcode is not Op.REDUCE:
            found[id(i)] = i
            stack.extend(users.get(id(i), ()))
    return found


def _simple_column_reduce(reduce: HloInstruction, shape: Shape, lead: int, reduced: int) -> bool:
    if len(reduce.operands) != 2:
        return False
    operand = reduce.operands[0]
    ptype = reduce.shape.element_type
    dims = sorted(reduce.attr("dimensions") or ())
    return (ptype in _TYPES and operand.shape.element_type is ptype
            and operand.shape.dimensions == shape.dimensions
            and dims == list(range(lead, lead + reduced)) and lead + reduced < shape.rank
            and simple_reducer(reduce.attr("to_apply")) is not None)


def emit_column_reduction(cg, instruction) -> bool:
    plan = _plan(instruction)
    if plan is None:
        return False
    k = cg.loop_kernel(instruction)
    scope = Scope(k.b)
    g = Generator(codegen.KernelContext(cg, k.b), scope, k.arrays)
    chunk = _chunk(plan.columns, plan.batches, cg.options.threads)
    _emit_loops(g, scope, plan, k.outputs, k.begin, k.end, chunk)
    k.b.ret_void()
    items = plan.batches * -(-plan.columns // chunk)
    cg.call_kernel(k.fn, k.slices, items, plan.batches * plan.rows * plan.columns)
    return True


def _chunk(columns: int, batches: int, threads: int) -> int:
    """Columns per chunk: enough chunks for every thread, in whole vectors."""
    share = -(-columns // max(-(-threads // batches), 1))
    return max(MIN_CHUNK, min(MAX_CHUNK, -(-share // MIN_CHUNK) * MIN_CHUNK))


class _Running:
    """Where a reduce's running values live: its output (a root reduce; column j is
    element j, the output being row-major) or, for a reduce only an epilogue reads,
    a stack array of the chunk's columns."""

    def __init__(self, scope: Scope, reduce: HloInstruction, array: IrArray | None):
        self.array = array
        self.elem = T.storage_type(reduce.shape.element_type)
        self.buffer = None if array is not None else scope.alloca(
            ir.ArrayType(self.elem, MAX_CHUNK))

    def address(self, b, j, at: _Chunk):
        if self.buffer is None:   # the batch's columns, then column j
            return b.gep(self.array.ptr, [b.add(at.base, j)], inbounds=True)
        return b.gep(self.buffer, [ir.Constant(T.I64, 0), b.sub(j, at.lo)], inbounds=True)


@dataclass
class _Chunk:
    """One work item: columns [lo, hi) of batch `batch` (an Ix; `base` is its first
    output element, batch * columns)."""
    batch: Ix
    base: ir.Value
    lo: ir.Value
    hi: ir.Value


def _emit_loops(g: Generator, scope: Scope, plan: _Plan, out: list[IrArray], begin, end,
                chunk: int) -> None:
    b = g.b
    c = lambda v: ir.Constant(T.I64, v)  # noqa: E731
    outputs = {id(root): array for root, array in zip(plan.roots, out)}
    running = {id(r): _Running(scope, r, outputs.get(id(r))) for r in plan.reduces}
    blocked = {id(r): _Blocked(scope, running[id(r)]) for r in plan.reduces
               if plan.rows > BLOCK_ROWS and _float_sum(r)}
    chunks = -(-plan.columns // chunk)
    with scope.loop(scope.depth, begin, end, name="chunk") as k:
        with scope.at(k.depth):
            batch = b.udiv(k.value, c(chunks))
            lo = b.mul(b.urem(k.value, c(chunks)), c(chunk))
            hi = b.add(lo, c(chunk))
            hi = b.select(b.icmp_signed("<", hi, c(plan.columns)), hi, c(plan.columns))
            at = _Chunk(Ix(batch, k.depth), b.mul(batch, c(plan.columns)), lo, hi)
        with scope.loop(scope.depth, lo, hi, name="j0") as j:
            for r in plan.reduces:
                b.store(g.value(r.operands[1], ()), running[id(r)].address(b, j.value, at))
                if id(r) in blocked:
                    blocked[id(r)].clear(b, "lost", b.sub(j.value, lo), 0.0)
        if not blocked:
            _fold_rows(g, scope, plan, outputs, running, at, c(0), c(plan.rows), {})
        else:
            _fold_blocks(g, scope, plan, outputs, running, blocked, at)
        epilogues = [(r, outputs[id(r)]) for r in plan.roots if _is_epilogue(r, plan)]
        if epilogues:
            _emit_epilogues(g, scope, plan, running, epilogues, at)


def _fold_blocks(g, scope, plan, outputs, running, blocked, at: _Chunk) -> None:
    b = g.b
    c = lambda v: ir.Constant(T.I64, v)  # noqa: E731
    with scope.loop(scope.depth, c(0), c(plan.rows), name="blk", step=BLOCK_ROWS) as start:
        with scope.at(start.depth):
            stop = b.add(start.value, c(BLOCK_ROWS))
            stop = b.select(b.icmp_signed("<", stop, c(plan.rows)), stop, c(plan.rows))
        with scope.loop(scope.depth, at.lo, at.hi, name="j1") as j:
            for block in blocked.values():
                block.clear(b, "partial", b.sub(j.value, at.lo), -0.0)
        _fold_rows(g, scope, plan, outputs, running, at, start.value, stop, blocked)
        with scope.loop(scope.depth, at.lo, at.hi, name="j2") as j:
            for block in blocked.values():
                block.add_partial(b, j.value, at)
    with scope.loop(scope.depth, at.lo, at.hi, name="j3") as j:
        for block in blocked.values():
            block.finish(b, j.value, at)


def _emit_epilogues(g, scope, plan, running, epilogues, at: _Chunk) -> None:
    """The per-column roots, once every row is folded: each reduce reads as its
    running value at the column."""
    b = g.b
    with scope.loop(scope.depth, at.lo, at.hi, name="je") as j:
        for r in plan.reduces:
            g.generated[id(r)] = lambda index, r=r, j=j: b.load(
                running[id(r)].address(b, j.value, at))
        try:
            with scope.at(j.depth):
                flat = Ix(b.add(at.base, j.value), j.depth)
            for root, array in epilogues:   # row-major, one element per batch and column
                index = _unflatten(g, flat, root.shape.dimensions)
                array.store(b, g.value(root, tuple(index)), [i.value for i in index])
        finally:
            for r in plan.reduces:
                g.generated.pop(id(r), None)


def _fold_rows(g: Generator, scope: Scope, plan: _Plan, outputs: dict, running: dict,
               at: _Chunk, first_row, stop_row, blocked: dict) -> None:
    """Rows [first_row, stop_row) of the chunk's batch folded into the running values
    of its columns (a blocked sum's into its block partials), the elementwise roots
    stored as the rows go by."""
    b = g.b
    dims = plan.shape.dimensions
    batch = _unflatten(g, at.batch, dims[:plan.lead]) if plan.lead else []
    with scope.loop(scope.depth, first_row, stop_row, name="row") as r:
        row = _unflatten(g, r, dims[plan.lead:plan.lead + plan.reduced])
        with scope.loop(scope.depth, at.lo, at.hi, name="j") as j:
            column = _unflatten(g, j, dims[plan.lead + plan.reduced:])
            index = tuple(batch + row + column)
            where = [i.value for i in index]
            for root in plan.roots:
                if root.opcode is not Op.REDUCE and not _is_epilogue(root, plan):
                    outputs[id(root)].store(b, g.value(root, index), where)
            for reduce in plan.reduces:
                value = g.value(reduce.operands[0], index)
                ptype = reduce.shape.element_type
                if id(reduce) in blocked:
                    slot = blocked[id(reduce)].slot(b, "partial", b.sub(j.value, at.lo))
                else:
                    slot = running[id(reduce)].address(b, j.value, at)
                b.store(combine(b, reduce.attr("to_apply"), [b.load(slot)], [value],
                                [ptype])[0], slot)


def _is_epilogue(root: HloInstruction, plan: _Plan) -> bool:
    """A root computed per column after the rows (the others but the reduces are
    elementwise values of the reduced shape, stored as the rows go by)."""
    return root.opcode is not Op.REDUCE and \
        root.shape.element_count == plan.batches * plan.columns


def _float_sum(reduce: HloInstruction) -> bool:
    return reduce.shape.element_type in (P.F32, P.F64) and \
        simple_reducer(reduce.attr("to_apply")) is Op.ADD


class _Blocked:
    """A float sum over more than BLOCK_ROWS rows: blocks of BLOCK_ROWS rows into
    fresh partials (per column of the chunk, on the stack), each added to the
    running value with Neumaier's compensation, whose lost low parts are added last."""

    def __init__(self, scope: Scope, running: _Running):
        self.running = running
        self.elem = running.elem
        buffer = ir.ArrayType(self.elem, MAX_CHUNK)
        self.buffers = {"partial": scope.alloca(buffer), "lost": scope.alloca(buffer)}

    def slot(self, b, which: str, offset):
        return b.gep(self.buffers[which], [ir.Constant(T.I64, 0), offset], inbounds=True)

    def clear(self, b, which: str, offset, value: float) -> None:
        b.store(ir.Constant(self.elem, value), self.slot(b, which, offset))

    def add_partial(self, b, j, at: _Chunk) -> None:
        offset = b.sub(j, at.lo)
        add_compensated(b, self.running.address(b, j, at),
                        b.load(self.slot(b, "partial", offset)), self.slot(b, "lost", offset))

    def finish(self, b, j, at: _Chunk) -> None:
        total = self.running.address(b, j, at)
        b.store(b.fadd(b.load(total), b.load(self.slot(b, "lost", b.sub(j, at.lo)))), total)


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
