"""`reduce` as an element generator: one output element = a loop over the
reduced dimensions, emitted at the depth of the output index (once per row in
a row softmax). Float add/multiply reducers are marked `reassoc` (XLA allows
reducers to be reassociated), so LLVM vectorises them with several vector
accumulators; other reducers run in order.

A float max/min propagates NaN. LLVM's `maximum` does it in every step, a
five-instruction chain through the accumulator that holds a row's maximum to
a third of the machine's rate; here the loop keeps a NaN-blind `maxnum` (one
`vmaxps`) and, off the chain, whether a NaN went by, and the result is NaN
if one did."""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.codegen import ir_types as T
from xlapy.codegen import row_stash
from xlapy.codegen.arg_reduce import arg_kind, emit_arg_reduce
from xlapy.codegen.generator import Generator
from xlapy.codegen.intrinsics import intrinsic
from xlapy.codegen.ir_array import minor_to_major
from xlapy.codegen.scalar_computation import emit_scalar_computation, simple_reducer
from xlapy.codegen.scope import depth_of
from xlapy.codegen.tables import generates
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.opcode import Opcode as Op

_FLOATS = (P.F16, P.BF16, P.F32, P.F64)


@generates(Op.REDUCE)
def reduce_element(g: Generator, instruction, index):
    kind = arg_kind(instruction)
    if kind is not None and id(instruction) not in g.overrides:
        return emit_arg_reduce(g, instruction, kind, index)
    n = len(instruction.operands) // 2
    inputs, inits = instruction.operands[:n], instruction.operands[n:]
    reduced = sorted(instruction.attr("dimensions") or ())
    kept = [d for d in range(inputs[0].shape.rank) if d not in reduced]
    leaf_types = [o.shape.element_type for o in inputs]
    depth = depth_of(index)
    override = g.overrides.get(id(instruction))
    init_values = [g.value(init, ()) for init in inits] if override is None else [override[0]]
    bounds = dict(override[1]) if override is not None else None
    scope = g.scope
    stash = row_stash.plan(g, instruction, inputs, reduced, override, tuple(index))
    slots = []
    with scope.at(depth):
        b = g.b
        for value, ptype in zip(init_values, leaf_types):
            slot = _slot(scope, value, ptype)
            _store(b, slot, value)
            slots.append(slot)
        order = [d for d in reversed(minor_to_major(inputs[0].shape)) if d in reduced]
        sizes = inputs[0].shape.dimensions
        loop_index = {}
        compensation = None
        if _blocked_sum(instruction, leaf_types):
            compensation = scope.alloca(init_values[0].type)
            b.store(ir.Constant(init_values[0].type, 0.0), compensation)
            g.compensation[id(instruction)] = compensation
        if stash is not None:
            g.stash_writes[id(instruction)] = stash
        nan_seen = None
        if _nan_tracked(instruction, leaf_types):
            nan_seen = scope.alloca(T.I1)
            b.store(b.fcmp_unordered("uno", init_values[0], init_values[0]), nan_seen)
            g.nan_seen[id(instruction)] = nan_seen
        try:
            _nest(g, instruction, inputs, kept, index, order, sizes, loop_index, slots,
                  leaf_types, depth, bounds)
        finally:
            g.stash_writes.pop(id(instruction), None)
            g.nan_seen.pop(id(instruction), None)
        if stash is not None:
            row_stash.register(g, inputs[0], stash)
        result = [_load(b, s) for s in slots]
        if compensation is not None:
            result = [b.fadd(result[0], b.load(compensation))]
        if nan_seen is not None:
            nan = ir.Constant(result[0].type, float("nan"))
            result = [b.select(b.load(nan_seen), nan, result[0])]
    value = result[0] if n == 1 else tuple(result)
    return value, depth


_BLOCK = 2048
"""Float sums accumulate blocks of this many elements into a fresh partial sum,
then add the partials: the error grows with n / _BLOCK + _BLOCK instead of n."""


def _nest(g, instruction, inputs, kept, index, order, sizes, loop_index, slots, leaf_types,
          depth, bounds=None):
    if not order:
        full = [None] * inputs[0].shape.rank
        for pos, d in enumerate(kept):
            full[d] = index[pos]
        for d, ix in loop_index.items():
            full[d] = ix
        elements = [g.value(x, tuple(full)) for x in inputs]
        b = g.b
        stash = g.stash_writes.get(id(instruction))
        if stash is not None:
            stash.store(b, elements[0], loop_index[stash.dim].value)
        accs = [_load(b, s) for s in slots]
        nan_seen = g.nan_seen.get(id(instruction))
        if nan_seen is not None:
            _track_nan(b, nan_seen, elements[0])
            new = [_nan_blind(b, instruction, accs[0], elements[0])]
        else:
            new = combine(b, instruction.attr("to_apply"), accs, elements, leaf_types)
        for slot, value in zip(slots, new):
            _store(b, slot, value)
        return
    dim, rest = order[0], order[1:]
    lo, hi = bounds.pop(dim) if bounds and dim in bounds else (0, sizes[dim])
    if not rest and _blocked_sum(instruction, leaf_types):
        _blocked(g, instruction, inputs, kept, index, dim, lo, hi, loop_index, slots,
                 leaf_types, depth)
        return
    interleave = None if rest else g.interleave.get(id(instruction))
    with g.scope.loop(g.scope.depth, lo, hi, name=f"r{dim}", interleave=interleave) as iv:
        loop_index[dim] = iv
        _nest(g, instruction, inputs, kept, index, rest, sizes, loop_index, slots, leaf_types,
              depth, bounds)
        del loop_index[dim]


def _nan_tracked(instruction, leaf_types) -> bool:
    return len(leaf_types) == 1 and leaf_types[0] in _FLOATS and \
        simple_reducer(instruction.attr("to_apply")) in (Op.MAXIMUM, Op.MINIMUM)


def _track_nan(b, slot, element) -> None:
    b.store(b.or_(b.load(slot), b.fcmp_unordered("uno", element, element)), slot)


def _nan_blind(b, instruction, acc, element):
    """max/min of two values whose NaN would be discarded anyway (the slot of
    `_track_nan` replaces the result): LLVM may assume none, and emits one instruction."""
    name = "maxnum" if simple_reducer(instruction.attr("to_apply")) is Op.MAXIMUM else "minnum"
    return intrinsic(b, name, [acc, element], fastmath=("nnan", "nsz"))


def _blocked_sum(instruction, leaf_types) -> bool:
    return len(leaf_types) == 1 and leaf_types[0] in _FLOATS and \
        simple_reducer(instruction.attr("to_apply")) is Op.ADD


def _blocked(g, instruction, inputs, kept, index, dim, lo, hi, loop_index, slots, leaf_types,
             depth):
    """The innermost reduced loop as blocks summed into fresh partials."""
    b, scope = g.b, g.scope
    total = slots[0]
    partial = scope.alloca(total.type.pointee)
    minus_zero = ir.Constant(total.type.pointee, -0.0)
    extent = hi - lo if isinstance(lo, int) and isinstance(hi, int) else None
    if extent is not None and extent <= _BLOCK:
        b.store(minus_zero, partial)
        _inner(g, instruction, inputs, kept, index, dim, lo, hi, loop_index, [partial],
               leaf_types, depth)
        add_compensated(b, total, b.load(partial), g.compensation[id(instruction)])
        return
    lo_v = lo if not isinstance(lo, int) else ir.Constant(T.I64, lo)
    hi_v = hi if not isinstance(hi, int) else ir.Constant(T.I64, hi)
    with scope.loop(scope.depth, lo_v, hi_v, name=f"blk{dim}", step=_BLOCK) as start:
        with scope.at(start.depth):
            b.store(minus_zero, partial)
            end = b.add(start.value, ir.Constant(T.I64, _BLOCK))
            end = b.select(b.icmp_signed("<", end, hi_v), end, hi_v)
        _inner(g, instruction, inputs, kept, index, dim, start.value, end, loop_index,
               [partial], leaf_types, depth)
        add_compensated(b, total, b.load(partial), g.compensation[id(instruction)])


def add_compensated(b, total_slot, partial, compensation_slot) -> None:
    """total += partial, keeping the rounding error in `compensation` (Neumaier):
    block partials of a constant array would otherwise round the same way each
    time and drift linearly."""
    total = b.load(total_slot)
    t = b.fadd(total, partial)
    bigger = b.fcmp_ordered(">=", intrinsic(b, "fabs", [total]), intrinsic(b, "fabs", [partial]))
    lost = b.select(bigger, b.fadd(b.fsub(total, t), partial),
                    b.fadd(b.fsub(partial, t), total))
    # past an infinity or NaN the sum is what it is; inf - inf must not poison it
    finite = b.fcmp_ordered("<", intrinsic(b, "fabs", [t]), ir.Constant(t.type, float("inf")))
    lost = b.select(finite, lost, ir.Constant(t.type, 0.0))
    b.store(b.fadd(b.load(compensation_slot), lost), compensation_slot)
    b.store(t, total_slot)


def _inner(g, instruction, inputs, kept, index, dim, lo, hi, loop_index, slots, leaf_types,
           depth):
    with g.scope.loop(g.scope.depth, lo, hi, name=f"r{dim}",
                      interleave=g.interleave.get(id(instruction))) as iv:
        loop_index[dim] = iv
        _nest(g, instruction, inputs, kept, index, [], None, loop_index, slots, leaf_types,
              depth)
        del loop_index[dim]


def combine(b, reducer, accs: list, elements: list, leaf_types: list) -> list:
    """reducer(accs, elements) as a list of values; float add/multiply reassociable."""
    simple = simple_reducer(reducer) if len(accs) == 1 else None
    ptype = leaf_types[0]
    if simple in (Op.ADD, Op.MULTIPLY) and ptype in _FLOATS:
        op = b.fadd if simple is Op.ADD else b.fmul
        return [op(accs[0], elements[0], flags=("reassoc",))]
    if simple in (Op.ADD, Op.MULTIPLY) and ptype not in (P.C64, P.C128) and ptype is not P.PRED:
        return [(b.add if simple is Op.ADD else b.mul)(accs[0], elements[0])]
    if simple in (Op.MAXIMUM, Op.MINIMUM) and ptype in _FLOATS:
        # NaN-propagating; ties of ±0 may differ from the interpreter in sign only
        name = "maximum" if simple is Op.MAXIMUM else "minimum"
        return [intrinsic(b, name, [accs[0], elements[0]])]
    value = emit_scalar_computation(b, reducer, [*accs, *elements] if len(accs) > 1 else
                                    [accs[0], elements[0]])
    # a variadic reducer gives a tuple of values; a complex value is itself a pair
    return list(value) if len(accs) > 1 else [value]


def _slot(scope, value, ptype):
    if isinstance(value, tuple):
        return tuple(scope.alloca(v.type) for v in value)
    return scope.alloca(value.type)


def _store(b, slot, value):
    if isinstance(slot, tuple):
        for s, v in zip(slot, value):
            b.store(v, s)
    else:
        b.store(value, slot)


def _load(b, slot):
    if isinstance(slot, tuple):
        return tuple(b.load(s) for s in slot)
    return b.load(slot)


__all__ = ["add_compensated", "combine", "reduce_element", "ir", "T"]
