"""Kernels over a fusion's output, values from the shared element generators.

Three shapes of kernel, chosen per fusion as XLA:GPU's emitters are:
- the loop kernel: each thread computes elements `gtid, gtid + threads, ...`
  of the output in its layout's order (a grid-stride loop);
- the row kernel, for fusions whose reductions reduce the minor dimensions
  (a softmax, a layernorm, `sum(x, axis=-1)`): one block per row, the row's
  reductions computed by the whole block (`reductions.py`) and the row's
  elements then written by its threads — a softmax is one kernel;
- the column kernel, for reductions of the major dimensions: a block per 32
  output columns, its threads splitting the rows and combining through
  shared memory.
Any reduction a kernel cannot do cooperatively (asked for at an index that
differs between the block's threads) runs the generator's own loop in each
thread: slower, never wrong.
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.backends.gpu import reductions
from xlapy.backends.gpu.thunks import Launch
from xlapy.codegen import ir_types as T
from xlapy.codegen.generator import Generator
from xlapy.codegen.ir_array import minor_to_major
from xlapy.codegen.loop_nest import group_leaves
from xlapy.codegen.scope import OUTSIDE, Ix, Scope
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode as Op

BLOCK = 256
MAX_GRID = 65535 * 4
"""Blocks of a grid-stride kernel: enough to fill any GPU several times over."""


def _i64(value: int) -> ir.Constant:
    return ir.Constant(T.I64, value)


def roots_of(instruction: HloInstruction) -> list[HloInstruction]:
    if instruction.opcode is Op.FUSION:
        root = instruction.attr("calls").root_instruction
        return list(root.operands) if root.opcode is Op.TUPLE else [root]
    return [instruction]


def _leaf_shape(root: HloInstruction):
    return root.shape.leaves()[0][1] if root.shape.is_tuple else root.shape


def delinearize(b: ir.IRBuilder, position: ir.Value, shape, depth: int,
                skip: tuple[int, ...] = ()) -> list:
    """The index of the element at `position` in `shape`'s layout order (dimensions
    in `skip` left as None), as Ix of `depth`."""
    index: list = [None] * shape.rank
    order = [d for d in minor_to_major(shape) if d not in skip]
    rest = position
    for n, dim in enumerate(order):
        size = shape.dimensions[dim]
        if size == 1:
            index[dim] = Ix.const(0)
            continue
        last = all(shape.dimensions[d] == 1 for d in order[n + 1:])
        value = rest if last else b.urem(rest, _i64(size))
        index[dim] = Ix(value, depth)
        if not last:
            rest = b.udiv(rest, _i64(size))
    return index


def _store(b, out, value, index) -> None:
    position = [i.value for i in index]
    if isinstance(out, list):
        for leaf, part in zip(out, value):
            leaf.store(b, part, position)
    else:
        out.store(b, value, position)


def emit(k, instruction: HloInstruction) -> Launch:
    """Emit the body of kernel `k` (`emitter.Kernel`) computing `instruction`; the
    launch it needs."""
    roots = roots_of(instruction)
    targets = group_leaves(roots, k.outputs)
    plan = reductions.plan_for(instruction, roots)
    if plan is not None and plan.kind == "row":
        return _row_kernel(k, roots, targets, plan)
    if plan is not None and plan.kind == "column":
        return _column_kernel(k, roots, targets, plan)
    return _loop_kernel(k, roots, targets)


def _loop_kernel(k, roots, targets) -> Launch:
    b = k.b
    scope = Scope(b)
    g = Generator(k.context, scope, k.arrays)
    thread, width, block, blocks = k.coords.as_i64(b)
    first = b.add(b.mul(block, width), thread)
    stride = b.mul(blocks, width)
    groups: dict = {}
    for root, out in zip(roots, targets):
        groups.setdefault(_leaf_shape(root).dimensions, []).append((root, out))
    largest = 1
    for members in groups.values():
        shape = _leaf_shape(members[0][0])
        n = shape.element_count
        largest = max(largest, n)
        if n == 0:
            continue
        with scope.loop(OUTSIDE, first, _i64(n), name="p", step=stride) as p:
            index = delinearize(b, p.value, shape, p.depth)
            for root, out in members:
                _store(b, out, g.value(root, tuple(index)), index)
    b.ret_void()
    return Launch(grid=max(1, min(MAX_GRID, -(-largest // BLOCK))), block=BLOCK)


def _row_kernel(k, roots, targets, plan) -> Launch:
    """Block per row: rows in a grid-stride loop, the row's elements over the threads."""
    b = k.b
    scope = Scope(b)
    g = Generator(k.context, scope, k.arrays)
    thread, width, block, blocks = k.coords.as_i64(b)
    reductions.install(g, k, plan)
    shape = _leaf_shape(roots[0])
    rows = plan.rows
    whole_row = shape.element_count == rows   # the outputs are the reductions' shape
    minor = () if whole_row else (minor_to_major(shape)[0],)
    with scope.loop(OUTSIDE, block, _i64(rows), name="row", step=blocks) as row:
        index = delinearize(b, row.value, shape, row.depth, minor)
        if whole_row:
            values = [g.value(root, tuple(index)) for root in roots]
            with scope.at(row.depth):
                with b.if_then(b.icmp_unsigned("==", thread, _i64(0))):
                    for out, value in zip(targets, values):
                        _store(b, out, value, index)
        else:
            d = minor[0]
            with scope.loop(row.depth, thread, _i64(shape.dimensions[d]), name="j",
                            step=width) as j:
                index[d] = j
                for root, out in zip(roots, targets):
                    _store(b, out, g.value(root, tuple(index)), index)
    b.ret_void()
    return Launch(grid=max(1, min(MAX_GRID, rows)), block=plan.block, barriers=True)


def _column_kernel(k, roots, targets, plan) -> Launch:
    """A block per `columns` outputs (a warp's width); its threads split the rows."""
    b = k.b
    scope = Scope(b)
    g = Generator(k.context, scope, k.arrays)
    thread, width, block, blocks = k.coords.as_i64(b)
    columns = reductions.column_width(b, width)
    reductions.install(g, k, plan)
    shape = _leaf_shape(roots[0])
    n = shape.element_count
    tiles = b.udiv(b.add(_i64(n), b.sub(columns, _i64(1))), columns)
    lane = b.urem(thread, columns)
    first_row = b.icmp_unsigned("<", thread, columns)
    with scope.loop(OUTSIDE, block, tiles, name="tile", step=blocks) as tile:
        column = b.add(b.mul(tile.value, columns), lane)
        inside = b.icmp_unsigned("<", column, _i64(n))
        clamped = b.select(inside, column, _i64(n - 1))
        index = delinearize(b, clamped, shape, tile.depth)
        values = [g.value(root, tuple(index)) for root in roots]
        with scope.at(tile.depth):
            with b.if_then(b.and_(inside, first_row)):
                for out, value in zip(targets, values):
                    _store(b, out, value, index)
    b.ret_void()
    grid = max(1, min(MAX_GRID, -(-n // reductions.WARP)))
    return Launch(grid=grid, block=plan.block, barriers=True)
