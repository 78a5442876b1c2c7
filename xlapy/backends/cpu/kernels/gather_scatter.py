"""gather (an element generator, so it fuses) and scatter (a sequential kernel).

Both use XLA's full dimension numbers, batching dims included, with the
interpreter's bounds rules (`hlo/evaluator/indexing.py`): gather
clamps each start so the whole slice is in bounds; scatter skips a window
any part of which would fall outside. Scatter applies its updates one by one
in the interpreter's order (scatter index major, window index minor), so
duplicate indices combine deterministically under any combiner.
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.backends.cpu.control_flow import memcpy
from xlapy.backends.cpu.kernels.in_place import (
    check_scalar_computation,
    loop_nest,
    major_to_minor,
    new_kernel,
    overlapping,
    raw_copy,
)
from xlapy.backends.cpu.special_kernels import special
from xlapy.codegen import ir_types as T
from xlapy.codegen.generator import Generator
from xlapy.codegen.indices import as_index, clamp
from xlapy.codegen.ir_array import IrArray, minor_to_major
from xlapy.codegen.loops import for_range
from xlapy.codegen.scalar_computation import emit_scalar_computation
from xlapy.codegen.scope import Ix
from xlapy.codegen.tables import generates
from xlapy.errors import CompileError
from xlapy.hlo.opcode import Opcode as Op


# -- gather ---------------------------------------------------------------------------------
@special(Op.GATHER)
def gather_kernel(cg, instruction) -> bool:
    """An unfused gather is a loop kernel over its output, like any element generator."""
    cg.emit_loop_kernel(instruction)
    return True


@generates(Op.GATHER)
def gather_element(g: Generator, instruction, index):
    """operand[clamped start + offset]: the batch coordinates of `index` pick an index
    vector, its offset coordinates a position inside the slice."""
    operand, indices = instruction.operands
    offset_dims = tuple(instruction.attr("offset_dims") or ())
    collapsed = set(instruction.attr("collapsed_slice_dims") or ())
    index_map = tuple(instruction.attr("start_index_map") or ())
    operand_batching = tuple(instruction.attr("operand_batching_dims") or ())
    indices_batching = tuple(instruction.attr("start_indices_batching_dims") or ())
    vector_dim = instruction.attr("index_vector_dim")
    sizes = tuple(instruction.attr("slice_sizes") or ())
    if operand.shape.rank == 0:
        return g.operand_at(instruction, 0, ())
    batch = [index[d] for d in range(instruction.shape.rank) if d not in offset_dims]
    batch_of = _batch_coordinates(indices.shape.rank, vector_dim, batch)
    kept = [d for d in range(operand.shape.rank) if d not in collapsed and
            d not in operand_batching]
    offsets = {d: index[offset_dims[k]] for k, d in enumerate(kept)}
    operand_index = []
    for d, dim in enumerate(operand.shape.dimensions):
        offset = offsets.get(d, Ix.const(0))
        if d in operand_batching:
            operand_index.append(batch_of[indices_batching[operand_batching.index(d)]])
        elif d in index_map:
            component = _component(g, indices, batch_of, vector_dim, index_map.index(d))
            start = g.index_op(component.depth, lambda b, c=component, hi=dim - sizes[d]:
                               clamp(b, c.value, 0, hi))
            operand_index.append(_add(g, start, offset))
        else:
            operand_index.append(offset)
    return g.operand_at(instruction, 0, tuple(operand_index))


def _batch_coordinates(rank: int, vector_dim: int, batch: list) -> dict:
    """indices dim -> the batch coordinate it takes (every dim but the index vector's)."""
    dims = [d for d in range(rank) if d != vector_dim]
    return dict(zip(dims, batch))


def _component(g: Generator, indices, batch_of: dict, vector_dim: int, k: int) -> Ix:
    """Component k of the index vector at these batch coordinates, as an i64 Ix."""
    rank = indices.shape.rank
    position = tuple(Ix.const(k) if d == vector_dim else batch_of[d] for d in range(rank))
    value = g.value(indices, position)
    ptype = indices.shape.element_type
    return g.index_op(g.depth(indices, position), lambda b: as_index(b, value, ptype))


def _add(g: Generator, a: Ix, b: Ix) -> Ix:
    if isinstance(b.value, ir.Constant) and b.value.constant == 0:
        return a
    return g.index_op(max(a.depth, b.depth), lambda builder: builder.add(a.value, b.value))


# -- scatter --------------------------------------------------------------------------------
@special(Op.SCATTER)
def scatter_kernel(cg, instruction) -> bool:
    """Copy each operand to its output (unless they share a buffer), then apply the
    updates in order. One call, not split: updates may hit the same element."""
    count = (len(instruction.operands) - 1) // 2
    arrays = instruction.operands[:count]
    outputs = cg.output_leaves(instruction)
    operands = cg.kernel_operands(instruction)
    copies = [k for k, (_, _, s) in enumerate(outputs) if s != cg.slice_of(arrays[k])]
    slices = [s for _, s in operands] + [s for _, _, s in outputs]
    read = [s for k, (_, s) in enumerate(operands) if k >= count or k in copies]
    noalias = not overlapping(read + [s for _, _, s in outputs], len(read))
    check_scalar_computation(instruction.attr("to_apply"))
    fn, b, pointers, _, _ = new_kernel(cg, instruction, "scatter", slices, len(operands),
                                       noalias)
    ins = [IrArray(b, p, o.shape) for (o, _), p in zip(operands, pointers)]
    outs = [IrArray(b, p, shape) for (_, shape, _), p in zip(outputs, pointers[len(operands):])]
    for k in copies:
        _copy(b, ins[k], outs[k])
    emit_updates(b, instruction, ins[count], ins[count + 1:], outs)
    b.ret_void()
    updates = instruction.operands[count + 1]
    cg.call_kernel(fn, slices, 1, updates.shape.element_count)
    return True


def _copy(b: ir.IRBuilder, source: IrArray, target: IrArray) -> None:
    if minor_to_major(source.shape) == minor_to_major(target.shape):
        memcpy(b, b.bitcast(target.ptr, T.I8P), b.bitcast(source.ptr, T.I8P),
               source.shape.byte_size)
        return
    loop_nest(b, target.shape.dimensions, major_to_minor(target.shape),
              lambda index: raw_copy(b, source, target, index, index))


def emit_updates(b, instruction, indices: IrArray, updates: list, outs: list) -> None:
    """For each scatter index in order: the window's start, the bounds check, and the
    combiner applied to every window element."""
    window_dims = tuple(instruction.attr("update_window_dims") or ())
    inserted = set(instruction.attr("inserted_window_dims") or ())
    index_map = tuple(instruction.attr("scatter_dims_to_operand_dims") or ())
    operand_batching = tuple(instruction.attr("input_batching_dims") or ())
    indices_batching = tuple(instruction.attr("scatter_indices_batching_dims") or ())
    vector_dim = instruction.attr("index_vector_dim")
    combiner = instruction.attr("to_apply")
    if combiner is None or vector_dim is None:
        raise CompileError(f"{instruction.name}: scatter without to_apply/index_vector_dim")
    shape = outs[0].shape
    update_shape = updates[0].shape
    scatter_dims = [d for d in range(update_shape.rank) if d not in window_dims]
    skipped = inserted | set(operand_batching)
    windowed = [d for d in range(shape.rank) if d not in skipped]
    window = [1] * shape.rank
    for d, u in zip(windowed, window_dims):
        window[d] = update_shape.dimensions[u]
    index_dims = [d for d in range(indices.shape.rank) if d != vector_dim]

    def per_scatter_index(update_index: list):
        batch_of = dict(zip(index_dims, [update_index[d] for d in scatter_dims]))
        starts, inside = [], ir.Constant(T.I1, 1)
        for d, dim in enumerate(shape.dimensions):
            if d in operand_batching:
                start = batch_of[indices_batching[operand_batching.index(d)]]
            elif d in index_map:
                position = [ir.Constant(T.I64, index_map.index(d)) if e == vector_dim
                            else batch_of[e] for e in range(indices.shape.rank)]
                start = as_index(b, indices.load(b, position), indices.shape.element_type)
            else:
                start = ir.Constant(T.I64, 0)
            ok = b.and_(b.icmp_signed(">=", start, ir.Constant(T.I64, 0)),
                        b.icmp_signed("<=", start, ir.Constant(T.I64, dim - window[d])))
            inside = b.and_(inside, ok)
            starts.append(start)
        with b.if_then(inside):
            _apply_window(b, combiner, starts, windowed, window_dims, update_index, updates,
                          outs)

    def scatter_loops(k: int, update_index: list):
        if k == len(scatter_dims):
            per_scatter_index(update_index)
            return
        d = scatter_dims[k]
        with for_range(b, 0, update_shape.dimensions[d], name=f"s{d}") as iv:
            update_index[d] = iv
            scatter_loops(k + 1, update_index)

    if update_shape.element_count:
        scatter_loops(0, [None] * update_shape.rank)


def _apply_window(b, combiner, starts, windowed, window_dims, update_index, updates, outs):
    """out[start + w] = combiner(out[start + w], update[s, w]) over the window w."""
    sizes = [updates[0].shape.dimensions[u] for u in window_dims]

    def body(w: list):
        index = list(update_index)
        target = list(starts)
        for d, u, offset in zip(windowed, window_dims, w):
            index[u] = offset
            target[d] = b.add(starts[d], offset)
        current = [o.load(b, target) for o in outs]
        new = [u.load(b, index) for u in updates]
        value = emit_scalar_computation(b, combiner, current + new)
        values = list(value) if len(outs) > 1 else [value]
        for o, v in zip(outs, values):
            o.store(b, v, target)

    loop_nest(b, sizes, list(range(len(sizes))), body)
