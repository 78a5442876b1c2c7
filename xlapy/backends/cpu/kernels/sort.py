"""`sort`: a stable bottom-up merge sort per row, the comparator emitted inline.

Each row (every index of the dimensions other than the sorted one) is
sorted on its own, so the kernel honours [begin, end) over rows and large
sorts run on threads. A row's elements of the operands the comparator reads
are copied, with their positions, into contiguous scratch (malloc'd once per
call, two banks); merge passes of doubling width move these records between
the banks; a branch-free merge takes the right run's element only when the
comparator says it is strictly before the left's, which keeps the sort
stable. The sorted records are the outputs of the operands they hold; every
other operand is gathered through the sorted positions.

Always stable, as the interpreter (XLA allows any order of equal elements
when is_stable=false). For a comparator that is a strict weak order, the
result is the interpreter's exactly; one that is not (NaN under a plain
float compare) still yields a permutation, which may differ from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import llvmlite.ir as ir
import numpy as np

from xlapy.backends.cpu.kernels.heap import libc
from xlapy.backends.cpu.kernels.in_place import (
    check_scalar_computation,
    new_kernel,
    undefined,
)
from xlapy.backends.cpu.special_kernels import special
from xlapy.codegen import ir_types as T
from xlapy.codegen.ir_array import IrArray, minor_to_major, strides
from xlapy.codegen.loops import Accumulator, for_range
from xlapy.codegen.scalar_computation import emit_scalar_computation
from xlapy.errors import CompileError
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.opcode import Opcode as Op

_ALIGN = 64
LANES = 4
"""Independent merges one long merge is cut into: a merge step waits on the previous
one (position -> load -> compare -> position), so interleaving four hides the latency."""
LANE_MIN = 64
"""Merges shorter than this run as one (the cut costs LANES - 1 binary searches)."""
UNROLLED_MAX = 16
"""Rows up to this long get their merge passes emitted one by one."""


def _i64(value: int) -> ir.Constant:
    return ir.Constant(T.I64, value)


@dataclass(frozen=True)
class _Plan:
    """What the kernel needs to know about one sort, all static."""

    dim: int                 # the sorted dimension
    n: int                   # its size
    rows: int                # independent rows
    others: tuple            # the other dimensions, major to minor in operand 0's layout
    types: tuple             # element type per operand
    keys: tuple              # operands the comparator reads (their records move)
    index_type: ir.IntType   # of the positions in the records
    comparator: object

    @staticmethod
    def of(instruction) -> _Plan:
        shape = instruction.operands[0].shape
        dim = (instruction.attr("dimensions") or (shape.rank - 1,))[0]
        comparator = instruction.attr("to_apply")
        if comparator is None:
            raise CompileError(f"{instruction.name}: sort without a comparator")
        n = shape.dimensions[dim]
        others = tuple(d for d in reversed(minor_to_major(shape)) if d != dim)
        types = tuple(o.shape.element_type for o in instruction.operands)
        for t in types:
            T.check_native(t, instruction.name)
        return _Plan(dim=dim, n=n, rows=shape.element_count // max(n, 1), others=others,
                     types=types, keys=_read_operands(comparator, len(types)),
                     index_type=T.I32 if n < 2**31 else T.I64, comparator=comparator)

    @property
    def passes(self) -> int:
        return int(np.ceil(np.log2(self.n))) if self.n > 1 else 0

    @property
    def positions(self) -> bool:
        """Whether records carry positions: only operands the comparator never reads
        need them (gathered through the sorted positions)."""
        return len(self.keys) < len(self.types)

    def work(self) -> int:
        per_compare = 4 + len(self.comparator.instructions)
        return self.rows * self.n * max(self.passes, 1) * per_compare


def _read_operands(comparator, count: int) -> tuple:
    """Operands whose parameters (2k: left, 2k+1: right) the comparator's root reads."""
    seen, stack, read = set(), [comparator.root_instruction], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.opcode is Op.PARAMETER:
            read.add(node.parameter_number // 2)
        stack.extend(node.operands)
    return tuple(k for k in range(count) if k in read)


@special(Op.SORT)
def sort_kernel(cg, instruction) -> bool:
    """One kernel over the rows; the comparator is checked before anything is emitted."""
    operands = cg.kernel_operands(instruction)
    outputs = cg.output_leaves(instruction)
    if instruction.operands[0].shape.element_count == 0:
        return True
    plan = _Plan.of(instruction)
    slices = [s for _, s in operands] + [s for _, _, s in outputs]
    check_scalar_computation(plan.comparator)
    fn, b, pointers, begin, end = new_kernel(cg, instruction, "sort", slices, len(operands))
    ins = [IrArray(b, p, o.shape) for (o, _), p in zip(operands, pointers)]
    outs = [IrArray(b, p, shape) for (_, shape, _), p in zip(outputs, pointers[len(operands):])]
    _emit(b, plan, ins, outs, begin, end)
    cg.call_kernel(fn, slices, plan.rows, plan.work())
    return True


# -- the kernel -----------------------------------------------------------------------------
class _Bank:
    """One set of record arrays: a key array per read operand and, when needed, a
    position array."""

    def __init__(self, keys: dict, positions: ir.Value | None):
        self.keys = keys
        self.positions = positions

    def arrays(self) -> list:
        return [*self.keys.values()] + ([self.positions] if self.positions else [])

    @staticmethod
    def select(b, flag, on_true: _Bank, on_false: _Bank) -> _Bank:
        keys = {k: b.select(flag, on_true.keys[k], on_false.keys[k]) for k in on_true.keys}
        positions = on_true.positions and b.select(flag, on_true.positions, on_false.positions)
        return _Bank(keys, positions)


def _emit(b: ir.IRBuilder, plan: _Plan, ins: list, outs: list, begin, end) -> None:
    banks, scratch = _allocate(b, plan)
    with for_range(b, begin, end, name="row") as row:
        coordinates = _coordinates(b, plan, ins[0].shape, row)
        bases_in = [_row_base(b, a, coordinates) for a in ins]
        bases_out = [_row_base(b, a, coordinates) for a in outs]
        _load_row(b, plan, ins, bases_in, banks[0])
        _merge_passes(b, plan, banks)
        _store_row(b, plan, ins, bases_in, outs, bases_out, banks[plan.passes % 2])
    b.call(libc(b.module, "free", ir.VoidType(), [T.I8P]), [scratch])
    b.ret_void()


def _allocate(b: ir.IRBuilder, plan: _Plan):
    """Two banks of n records in one malloc'd block (each array 64-byte aligned)."""
    sizes = [np.dtype(plan.types[k].numpy).itemsize for k in plan.keys]
    sizes.append(plan.index_type.width // 8 if plan.positions else 0)
    spans = [-(-plan.n * s // _ALIGN) * _ALIGN for s in sizes]
    total = 2 * sum(spans)
    malloc = libc(b.module, "malloc", T.I8P, [T.I64])
    scratch = b.call(malloc, [_i64(total + _ALIGN)])
    address = b.ptrtoint(scratch, T.I64)
    aligned = b.and_(b.add(address, _i64(_ALIGN - 1)), _i64(-_ALIGN))
    base = b.gep(scratch, [b.sub(aligned, address)])
    banks, offset = [], 0
    for _ in range(2):
        arrays = []
        for k, span in zip([*plan.keys, None], spans):
            t = plan.index_type if k is None else T.storage_type(plan.types[k])
            arrays.append(b.bitcast(b.gep(base, [_i64(offset)]), t.as_pointer()))
            offset += span
        banks.append(_Bank(dict(zip(plan.keys, arrays[:-1])),
                           arrays[-1] if plan.positions else None))
    return banks, scratch


def _coordinates(b, plan: _Plan, shape, row) -> dict:
    """Row number -> its coordinate in each non-sorted dimension."""
    coordinates, rest = {}, row
    for d in reversed(plan.others):
        size = shape.dimensions[d]
        coordinates[d] = b.urem(rest, _i64(size)) if d != plan.others[0] else rest
        rest = b.udiv(rest, _i64(size))
    return coordinates


def _row_base(b, array: IrArray, coordinates: dict) -> ir.Value:
    """Pointer to the row's element 0 in `array`."""
    index = [coordinates.get(d, _i64(0)) for d in range(array.shape.rank)]
    return array.address(b, index)


def _stride(array: IrArray, dim: int) -> ir.Constant:
    return _i64(strides(array.shape)[dim])


def _load_row(b, plan: _Plan, ins: list, bases: list, bank: _Bank) -> None:
    """bank <- the row's keys and positions 0..n-1."""
    with for_range(b, 0, plan.n, name="load") as p:
        for k in plan.keys:
            source = b.gep(bases[k], [b.mul(p, _stride(ins[k], plan.dim))])
            b.store(b.load(source), b.gep(bank.keys[k], [p]))
        if plan.positions:
            position = b.trunc(p, plan.index_type) if plan.index_type is not T.I64 else p
            b.store(position, b.gep(bank.positions, [p]))


def _store_row(b, plan: _Plan, ins, bases_in, outs, bases_out, bank: _Bank) -> None:
    """outputs <- the sorted records, or the operand at the sorted positions."""
    with for_range(b, 0, plan.n, name="store") as p:
        position = None
        if plan.positions:
            position = b.load(b.gep(bank.positions, [p]))
            if plan.index_type is not T.I64:
                position = b.zext(position, T.I64)
        for k, out in enumerate(outs):
            target = b.gep(bases_out[k], [b.mul(p, _stride(out, plan.dim))])
            if k in bank.keys:
                source = b.gep(bank.keys[k], [p])
            else:
                source = b.gep(bases_in[k], [b.mul(position, _stride(ins[k], plan.dim))])
            b.store(b.load(source), target)


def _merge_passes(b, plan: _Plan, banks: list) -> None:
    """Pass q merges runs of width 2**q from bank q % 2 into the other bank: narrow runs
    LANES pairs at a time, wide ones each cut into LANES pieces."""
    if plan.passes == 0:
        return
    if plan.n <= UNROLLED_MAX:   # short rows: passes unrolled, every loop bound a constant
        for q in range(plan.passes):
            _unrolled_pass(b, plan, banks[q % 2], banks[1 - q % 2], 1 << q)
        return
    with for_range(b, 0, plan.passes, name="pass") as q:
        odd = b.trunc(q, T.I1)
        source = _Bank.select(b, odd, banks[1], banks[0])
        target = _Bank.select(b, odd, banks[0], banks[1])
        width = b.shl(_i64(1), q)
        if plan.n <= LANE_MIN:
            _narrow_pass(b, plan, source, target, width)
        else:
            with b.if_else(b.icmp_signed("<", width, _i64(LANE_MIN))) as (narrow, wide):
                with narrow:
                    _narrow_pass(b, plan, source, target, width)
                with wide:
                    _wide_pass(b, plan, source, target, width)


def _narrow_pass(b, plan: _Plan, source: _Bank, target: _Bank, width) -> None:
    """Groups of LANES whole run pairs merged side by side, then the rest one by one."""
    n = _i64(plan.n)
    double = b.shl(width, _i64(1))
    group = b.mul(double, _i64(LANES))
    whole = b.mul(b.udiv(n, group), group)
    with for_range(b, 0, whole, group, name="group") as lo:
        lanes = []
        for k in range(LANES):
            start = b.add(lo, b.mul(double, _i64(k)))
            mid = b.add(start, width)
            lanes.append((start, mid, mid, b.add(mid, width), start))
        _merge_loop(b, plan, source, target, lanes, _i64(0), double)
    with for_range(b, whole, n, double, name="run") as lo:
        mid = _min(b, b.add(lo, width), n)
        hi = _min(b, b.add(lo, double), n)
        _merge_loop(b, plan, source, target, [(lo, mid, mid, hi, lo)], _i64(0), b.sub(hi, lo))


def _unrolled_pass(b, plan: _Plan, source: _Bank, target: _Bank, width: int) -> None:
    """One pass of a short row, every bound a constant: its run pairs merged side by
    side, LANES at a time."""
    pairs = []
    for lo in range(0, plan.n, 2 * width):
        mid, hi = min(lo + width, plan.n), min(lo + 2 * width, plan.n)
        pairs.append((_i64(lo), _i64(mid), _i64(mid), _i64(hi), _i64(lo), hi - lo))
    for at in range(0, len(pairs), LANES):
        group = pairs[at:at + LANES]
        steps = min(p[-1] for p in group)
        ends = _merge_loop(b, plan, source, target, [p[:5] for p in group], _i64(0),
                           _i64(steps))
        for p, (i, j) in zip(group, ends):
            if p[-1] > steps:   # a shorter last pair: its partner lanes finish alone
                _merge_loop(b, plan, source, target, [(i, p[1], j, p[3], p[4])], _i64(steps),
                            _i64(p[-1]))


def _wide_pass(b, plan: _Plan, source: _Bank, target: _Bank, width) -> None:
    """Each run pair cut into LANES merges (a short last one merged whole)."""
    n = _i64(plan.n)
    double = b.shl(width, _i64(1))
    with for_range(b, 0, n, double, name="run") as lo:
        mid = _min(b, b.add(lo, width), n)
        hi = _min(b, b.add(lo, double), n)
        with b.if_else(b.icmp_signed(">=", b.sub(hi, lo), _i64(LANE_MIN))) as (lanes, one):
            with lanes:
                _merge_lanes(b, plan, source, target, lo, mid, hi)
            with one:
                _merge_loop(b, plan, source, target, [(lo, mid, mid, hi, lo)], _i64(0),
                            b.sub(hi, lo))


def _min(b, x, y):
    return b.select(b.icmp_signed("<", x, y), x, y)


def _merge_lanes(b, plan: _Plan, source: _Bank, target: _Bank, lo, mid, hi) -> None:
    """Output k·q.. of the merge starts where the merge path crosses it (a binary
    search), so the lanes are merges of disjoint pieces: a permutation even for a
    comparator that is no strict weak order. The last lane takes the remainder."""
    length = b.sub(hi, lo)
    q = b.udiv(length, _i64(LANES))
    outputs = [b.mul(q, _i64(k)) for k in range(LANES)] + [length]
    lefts = [_i64(0)] + [_split(b, plan, source, lo, mid, hi, s) for s in outputs[1:-1]] + \
        [b.sub(mid, lo)]
    lanes = []
    for k in range(LANES):
        rights = [b.sub(outputs[e], lefts[e]) for e in (k, k + 1)]
        lanes.append((b.add(lo, lefts[k]), b.add(lo, lefts[k + 1]), b.add(mid, rights[0]),
                      b.add(mid, rights[1]), b.add(lo, outputs[k])))
    ends = _merge_loop(b, plan, source, target, lanes, _i64(0), q)
    _, left_end, _, right_end, out = lanes[-1]
    tail = [(ends[-1][0], left_end, ends[-1][1], right_end, out)]
    _merge_loop(b, plan, source, target, tail, q, b.sub(outputs[-1], outputs[-2]))


def _split(b, plan: _Plan, source: _Bank, lo, mid, hi, s) -> ir.Value:
    """How many left-run elements the first `s` outputs of the stable merge hold: the
    smallest a such that left[a] does not precede right[s - a - 1]."""
    low0 = _max(b, _i64(0), b.sub(s, b.sub(hi, mid)))
    high0 = _min(b, s, b.sub(mid, lo))
    fn = b.function
    before_block = b.block
    head, body, done = (fn.append_basic_block(f"split.{x}") for x in ("head", "body", "done"))
    b.branch(head)
    b.position_at_end(head)
    low, high = b.phi(T.I64, "low"), b.phi(T.I64, "high")
    low.add_incoming(low0, before_block)
    high.add_incoming(high0, before_block)
    b.cbranch(b.icmp_signed("<", low, high), body, done)
    b.position_at_end(body)
    m = b.lshr(b.add(low, high), _i64(1))
    left = _record(b, source, b.add(lo, m))
    right = _record(b, source, b.add(mid, b.sub(b.sub(s, m), _i64(1))))
    right_first = _less(b, plan, right, left)
    low.add_incoming(b.select(right_first, low, b.add(m, _i64(1))), b.block)
    high.add_incoming(b.select(right_first, m, high), b.block)
    b.branch(head)
    b.position_at_end(done)
    return low


def _merge_loop(b, plan: _Plan, source: _Bank, target: _Bank, lanes: list, start, stop):
    """Steps start..stop of merges running side by side, branch-free: each lane is
    (left position, left end, right position, right end, output base); both heads are
    read and the right one taken only when it is strictly before the left. Returns
    each lane's (left, right) positions after the loop."""
    state = [(Accumulator(b, i0, "left"), Accumulator(b, j0, "right"))
             for i0, _, j0, _, _ in lanes]
    last = _i64(plan.n - 1)
    with for_range(b, start, stop, name="merge") as t:
        for i, j in state:
            i.enter()
            j.enter()
        for (i, j), (_, left_end, _, right_end, base) in zip(state, lanes):
            left_open = b.icmp_signed("<", i.value, left_end)
            right_open = b.icmp_signed("<", j.value, right_end)
            left = _record(b, source, _min(b, i.value, last))
            right = _record(b, source, _min(b, j.value, last))
            take_right = b.and_(right_open, b.or_(b.not_(left_open),
                                                  _less(b, plan, right, left)))
            out = b.add(base, t)
            for a, x, y in zip(target.arrays(), right, left):
                b.store(b.select(take_right, x, y), b.gep(a, [out]))
            step = b.zext(take_right, T.I64)
            i.set(b.add(i.value, b.sub(_i64(1), step)))
            j.set(b.add(j.value, step))
        for i, j in state:
            i.close()
            j.close()
    return [(i.result(b), j.result(b)) for i, j in state]


def _record(b, bank: _Bank, at) -> list:
    """The raw keys and the position at index `at` of a bank."""
    return [b.load(b.gep(a, [at])) for a in bank.arrays()]


def _max(b, x, y):
    return b.select(b.icmp_signed(">", x, y), x, y)


def _less(b, plan: _Plan, lhs: list, rhs: list) -> ir.Value:
    """The comparator on two records (raw keys, positions last): lhs before rhs."""
    args = []
    for k, ptype in enumerate(plan.types):
        if k in plan.keys:
            position = plan.keys.index(k)
            args += [_compute(b, lhs[position], ptype), _compute(b, rhs[position], ptype)]
        else:
            unused = undefined(ptype)
            args += [unused, unused]
    return emit_scalar_computation(b, plan.comparator, args)


def _compute(b, raw, ptype: P):
    """A stored element as the comparator's compute-form argument."""
    if ptype in (P.C64, P.C128):
        return (b.extract_value(raw, 0), b.extract_value(raw, 1))
    return T.widen(b, raw, ptype)
