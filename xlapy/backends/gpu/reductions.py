"""Reductions computed by a whole block: XLA:GPU's row and column reduction emitters.

A row reduction (the reduced dimensions are the minor ones of its input)
gives a block one row: each thread folds the elements `thread, thread +
block, ...` (adjacent threads read adjacent elements), the 32 lanes of a
warp combine with shuffles, the warps through shared memory, and the result
is broadcast back to every thread. A column reduction (the major dimensions
reduced) gives each thread of a warp one output column and splits the rows
between the block's warps; their partial results meet in shared memory.

The reducer need not have an identity: each partial result carries a flag
saying whether it has seen an element, so the init value is applied exactly
once, at the end, as the interpreter applies it. The element order differs
from the interpreter's (as XLA's does), within the float tolerance of a
reassociated sum.

`install` hooks the cooperative versions into a kernel's generator: asked
for a reduction at an index that is the same for the whole block (the row
or column the block owns), the generator gets the block's result; asked at
any other index, the ordinary per-thread loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import llvmlite.ir as ir

from xlapy.codegen import ir_types as T
from xlapy.codegen import reduce_generator
from xlapy.codegen.ir_array import minor_to_major
from xlapy.codegen.scalar_computation import emit_scalar_computation
from xlapy.codegen.scope import Ix, depth_of
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode as Op

WARP = 32
ROW_BLOCK = 256
COLUMN_BLOCK = 256
MIN_EXTENT = 32
"""Reduced extents below this are left to the loop kernel's per-thread loops."""
_SHUFFLED = frozenset({P.PRED, P.S8, P.S16, P.S32, P.S64, P.U8, P.U16, P.U32, P.U64,
                       P.F16, P.BF16, P.F32, P.F64})


def _i64(value: int) -> ir.Constant:
    return ir.Constant(T.I64, value)


@dataclass
class Plan:
    kind: str
    """"row" or "column"."""
    reduces: list[HloInstruction]
    rows: int
    """Row kernels: how many rows (blocks of work) the outputs have."""
    block: int


def kind_of(reduce: HloInstruction) -> str | None:
    """"row" when the reduced dimensions are the minor ones of the input's layout,
    "column" when they are the major ones, else None."""
    source = reduce.operands[0].shape
    reduced = set(reduce.attr("dimensions") or ())
    order = minor_to_major(source)
    if not reduced or len(reduced) == source.rank:
        return "row" if reduced else None
    if set(order[:len(reduced)]) == reduced:
        return "row"
    if set(order[len(order) - len(reduced):]) == reduced:
        return "column"
    return None


def _extent(reduce: HloInstruction) -> int:
    source = reduce.operands[0].shape
    n = 1
    for d in reduce.attr("dimensions") or ():
        n *= source.dimensions[d]
    return n


def _cooperative(reduce: HloInstruction) -> bool:
    n = len(reduce.operands) // 2
    return all(o.shape.element_type in _SHUFFLED for o in reduce.operands[:n])


def plan_for(instruction: HloInstruction, roots: list[HloInstruction]) -> Plan | None:
    """How to emit `instruction` (a fusion or a reduce) with its reductions shared by
    a block, or None for the plain loop kernel."""
    inner = instruction.attr("calls").instructions if instruction.opcode is Op.FUSION \
        else [instruction]
    reduces = [i for i in inner if i.opcode is Op.REDUCE and _cooperative(i)
               and _extent(i) >= MIN_EXTENT and i.operands[0].shape.element_count > 0]
    if not reduces:
        return None
    kinds = {kind_of(r) for r in reduces}
    shapes = {(r.shape.leaves()[0][1] if r.shape.is_tuple else r.shape).element_count
              for r in reduces}
    leaves = [(r.shape.leaves()[0][1] if r.shape.is_tuple else r.shape) for r in roots]
    if len(kinds) != 1 or len(shapes) != 1 or len({s.dimensions for s in leaves}) != 1:
        return None
    kind, count, out = kinds.pop(), shapes.pop(), leaves[0]
    if kind == "row":
        minor = out.dimensions[minor_to_major(out)[0]] if out.rank else 1
        if out.element_count != count and (out.rank == 0 or out.element_count // minor != count):
            return None
        return Plan("row", reduces, count, ROW_BLOCK)
    if kind == "column" and out.element_count == count:
        return Plan("column", reduces, count, COLUMN_BLOCK)
    return None


def column_width(b: ir.IRBuilder, block_size: ir.Value) -> ir.Value:
    """Columns per block: a warp's width, or the whole block when it is smaller."""
    return b.select(b.icmp_unsigned("<", block_size, _i64(WARP)), block_size, _i64(WARP))


def install(g, k, plan: Plan) -> None:
    """Make `g` compute `plan`'s reductions cooperatively where it can."""
    for reduce in plan.reduces:
        g.generated[id(reduce)] = _Hook(g, k, plan, reduce)


class _Hook:
    def __init__(self, g, k, plan: Plan, reduce: HloInstruction):
        self.g, self.k, self.plan, self.reduce = g, k, plan, reduce

    def __call__(self, index):
        g = self.g
        depth = depth_of(index)
        if depth > 0:   # not one value per block: each thread loops on its own
            return reduce_generator.reduce_element(g, self.reduce, index)[0]
        with g.scope.at(depth):
            if self.plan.kind == "row":
                return _row(g, self.k, self.reduce, index, depth)
            return _column(g, self.k, self.reduce, index, depth)


# -- the fold of one thread's elements ---------------------------------------------------
class _Partial:
    """A thread's partial result: one slot per reduced operand, and whether it has
    seen an element."""

    def __init__(self, g, reduce: HloInstruction):
        self.count = len(reduce.operands) // 2
        self.types = [o.shape.element_type for o in reduce.operands[:self.count]]
        self.computation = reduce.attr("to_apply")
        scope = g.scope
        self.slots = [scope.alloca(T.compute_type(t)) for t in self.types]
        self.seen = scope.alloca(T.I1)

    def clear(self, b) -> None:
        b.store(ir.Constant(T.I1, 0), self.seen)

    def fold(self, b, values: list) -> None:
        current = [b.load(s) for s in self.slots]
        combined = self.combine(b, current, values)
        seen = b.load(self.seen)
        for slot, c, v in zip(self.slots, combined, values):
            b.store(b.select(seen, c, v), slot)
        b.store(ir.Constant(T.I1, 1), self.seen)

    def combine(self, b, lhs: list, rhs: list) -> list:
        out = emit_scalar_computation(b, self.computation, [*lhs, *rhs])
        return list(out) if isinstance(out, tuple) else [out]

    def merge(self, b, values: list, valid: ir.Value) -> None:
        """Fold another partial (`values`, present when `valid`) into this one."""
        current = [b.load(s) for s in self.slots]
        seen = b.load(self.seen)
        combined = self.combine(b, current, values)
        for slot, c, cur, v in zip(self.slots, combined, current, values):
            b.store(b.select(seen, b.select(valid, c, cur), v), slot)
        b.store(b.or_(seen, valid), self.seen)

    def load(self, b) -> tuple[list, ir.Value]:
        return [b.load(s) for s in self.slots], b.load(self.seen)

    def finish(self, b, inits: list) -> list:
        """init combined with the partial, or init alone when no element was seen."""
        values, seen = self.load(b)
        combined = self.combine(b, inits, values)
        return [b.select(seen, c, i) for c, i in zip(combined, inits)]


def _fold_range(g, reduce, partial: _Partial, index, depth, start, stop, step, order):
    """partial <- fold of the reduced elements start, start + step, ... < stop (flat
    positions over the reduced dimensions in `order`, fastest first)."""
    source = reduce.operands[0].shape
    reduced = sorted(reduce.attr("dimensions") or ())
    kept = [d for d in range(source.rank) if d not in reduced]
    b = g.b
    with g.scope.loop(depth, start, stop, name="r", step=step) as k:
        full: list = [None] * source.rank
        for d, i in zip(kept, index):
            full[d] = i
        rest = k.value
        for n, d in enumerate(order):
            size = source.dimensions[d]
            last = n == len(order) - 1
            full[d] = Ix(rest if last else b.urem(rest, _i64(size)), k.depth)
            if not last:
                rest = b.udiv(rest, _i64(size))
        values = [g.value(o, tuple(full)) for o in reduce.operands[:partial.count]]
        partial.fold(b, values)


def _inits(g, reduce):
    n = len(reduce.operands) // 2
    return [g.value(o, ()) for o in reduce.operands[n:]]


def _result(values: list):
    return values[0] if len(values) == 1 else tuple(values)


# -- rows ------------------------------------------------------------------------------------
def _row(g, k, reduce, index, depth):
    b = g.b
    target = k.target
    thread, width, _, _ = k.coords.as_i64(b)
    source = reduce.operands[0].shape
    reduced = set(reduce.attr("dimensions") or ())
    order = [d for d in minor_to_major(source) if d in reduced]
    partial = _Partial(g, reduce)
    partial.clear(b)
    _fold_range(g, reduce, partial, index, depth, thread, _i64(_extent(reduce)), width, order)
    lane = b.urem(thread, _i64(WARP))
    warp = b.udiv(thread, _i64(WARP))
    active = b.select(b.icmp_unsigned("<", width, _i64(WARP)), width, _i64(WARP))
    _warp_tree(b, target, partial, lane, active)
    types = [T.compute_type(t) for t in partial.types]
    shared = [target.shared_array(b.module, _entry(b), t, WARP, "row_partial") for t in types]
    shared_seen = target.shared_array(b.module, _entry(b), T.I8, WARP, "row_seen")
    values, seen = partial.load(b)
    with b.if_then(b.icmp_unsigned("==", lane, _i64(0))):
        for array, value in zip(shared, values):
            b.store(value, b.gep(array, [warp]))
        b.store(b.zext(seen, T.I8), b.gep(shared_seen, [warp]))
    target.barrier(b)
    warps = b.udiv(b.add(width, _i64(WARP - 1)), _i64(WARP))
    broadcast = [target.shared_array(b.module, _entry(b), t, 1, "row_result") for t in types]
    inits = _inits(g, reduce)
    with b.if_then(b.icmp_unsigned("==", warp, _i64(0))):
        present = b.icmp_unsigned("<", lane, warps)
        safe = b.select(present, lane, _i64(0))
        partial.clear(b)
        partial.merge(b, [b.load(b.gep(a, [safe])) for a in shared],
                      b.and_(present, b.trunc(b.load(b.gep(shared_seen, [safe])), T.I1)))
        _warp_tree(b, target, partial, lane, b.select(b.icmp_unsigned("<", warps, active),
                                                      warps, active))
        final = partial.finish(b, inits)
        with b.if_then(b.icmp_unsigned("==", lane, _i64(0))):
            for array, value in zip(broadcast, final):
                b.store(value, array)
    target.barrier(b)
    return _result([b.load(a) for a in broadcast])


def _warp_tree(b, target, partial: _Partial, lane, active) -> None:
    """Combine the partials of a warp's lanes into lane 0's (lanes at or past `active`
    hold nothing)."""
    for offset in (16, 8, 4, 2, 1):
        values, seen = partial.load(b)
        others = [_shuffle(b, target, v, offset) for v in values]
        other_seen = b.trunc(_shuffle(b, target, b.zext(seen, T.I32), offset), T.I1)
        inside = b.icmp_unsigned("<", b.add(lane, _i64(offset)), active)
        partial.merge(b, others, b.and_(other_seen, inside))


def _shuffle(b, target, value: ir.Value, offset: int) -> ir.Value:
    """`value` of the lane `offset` above, for any scalar compute type."""
    t = value.type
    if isinstance(t, ir.IntType) and t.width == 32:
        return target.shuffle_down(b, value, offset)
    if isinstance(t, ir.IntType) and t.width < 32:
        return b.trunc(target.shuffle_down(b, b.zext(value, T.I32), offset), t)
    if isinstance(t, ir.FloatType):
        return b.bitcast(target.shuffle_down(b, b.bitcast(value, T.I32), offset), t)
    wide = value if isinstance(t, ir.IntType) else b.bitcast(value, T.I64)
    low = target.shuffle_down(b, b.trunc(wide, T.I32), offset)
    high = target.shuffle_down(b, b.trunc(b.lshr(wide, _i64(32)), T.I32), offset)
    joined = b.or_(b.zext(low, T.I64), b.shl(b.zext(high, T.I64), _i64(32)))
    return joined if isinstance(t, ir.IntType) else b.bitcast(joined, t)


def _entry(b: ir.IRBuilder) -> ir.IRBuilder:
    """A builder at the start of the function's entry block (shared-memory pointers
    are made there once, dominating every use)."""
    entry = b.function.entry_basic_block
    builder = ir.IRBuilder(entry)
    builder.position_at_start(entry)
    return builder


# -- columns ---------------------------------------------------------------------------------
def _column(g, k, reduce, index, depth):
    b = g.b
    target = k.target
    thread, width, _, _ = k.coords.as_i64(b)
    columns = column_width(b, width)
    lane = b.urem(thread, columns)
    row = b.udiv(thread, columns)
    rows = b.udiv(width, columns)
    source = reduce.operands[0].shape
    reduced = set(reduce.attr("dimensions") or ())
    order = [d for d in minor_to_major(source) if d in reduced]
    n = _extent(reduce)
    chunk = b.udiv(b.add(_i64(n), b.sub(rows, _i64(1))), rows)
    start = b.mul(row, chunk)
    stop = b.add(start, chunk)
    stop = b.select(b.icmp_unsigned("<", stop, _i64(n)), stop, _i64(n))
    partial = _Partial(g, reduce)
    partial.clear(b)
    _fold_range(g, reduce, partial, index, depth, start, stop, _i64(1), order)
    types = [T.compute_type(t) for t in partial.types]
    size = WARP * WARP
    shared = [target.shared_array(b.module, _entry(b), t, size, "column_partial") for t in types]
    shared_seen = target.shared_array(b.module, _entry(b), T.I8, size, "column_seen")
    values, seen = partial.load(b)
    at = b.add(b.mul(row, columns), lane)
    for array, value in zip(shared, values):
        b.store(value, b.gep(array, [at]))
    b.store(b.zext(seen, T.I8), b.gep(shared_seen, [at]))
    target.barrier(b)
    partial.clear(b)
    with g.scope.loop(depth, 0, rows, name="part") as r:
        slot = b.add(b.mul(r.value, columns), lane)
        partial.merge(b, [b.load(b.gep(a, [slot])) for a in shared],
                      b.trunc(b.load(b.gep(shared_seen, [slot])), T.I1))
    final = partial.finish(b, _inits(g, reduce))
    target.barrier(b)
    return _result(final)
