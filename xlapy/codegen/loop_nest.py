"""Loop kernels: an output (or several, for a multi-output fusion) computed
element by element from a generator, in one loop nest over the output in
its layout's order, the innermost loop over the minor dimension so LLVM
vectorises it. The outermost loop runs over [begin, end), which is how a
backend splits the kernel between threads (the CPU's `parallel.py`)."""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.codegen import ir_types as T
from xlapy.codegen.generator import Generator
from xlapy.codegen.ir_array import minor_to_major
from xlapy.codegen.scope import Ix, Scope
from xlapy.hlo.ir import HloInstruction

TILE = 32
"""Side of the square tiles a transposing kernel walks: a tile of the source
and one of the destination both stay in L1 (2 x 32 x 32 x 8 bytes)."""


def emit_nest(g: Generator, root: HloInstruction, out, begin, end, tiled: bool = False,
              also: tuple = ()) -> None:
    """out[i] = g.value(root, i) for every index i, outermost dimension in [begin, end).
    `out` is an IrArray, or a list of them for a tuple-shaped root (a variadic
    reduce), whose leaves share one shape. `tiled` walks the two innermost
    dimensions in TILE x TILE squares, for kernels that transpose: reads along
    one dimension and writes along the other then both stay in cache. `also`:
    more (root, out) pairs of the same shape and layout, stored at each index
    too, so the values the roots share are computed once (every value at an
    index is computed before any is stored)."""
    pairs = [(root, out), *also]
    out = out[0] if isinstance(out, list) else out
    shape = out.shape
    order = list(reversed(minor_to_major(shape)))   # major to minor
    index: list[Ix | None] = [None] * shape.rank
    scope = g.scope

    tiled = tiled and shape.rank >= 2 and \
        min(shape.dimensions[d] for d in order[-2:]) >= TILE

    def tiles(k: int):
        """The last two levels, tile by tile."""
        outer_dim, inner_dim = order[-2], order[-1]
        lo, hi = (begin, end) if k == 0 else (0, shape.dimensions[outer_dim])
        hi_v = hi if not isinstance(hi, int) else ir.Constant(T.I64, hi)
        inner_size = shape.dimensions[inner_dim]
        with scope.loop(scope.depth, lo, hi, name="ta", step=TILE) as a0:
            with scope.loop(scope.depth, 0, inner_size, name="tc", step=TILE) as c0:
                with scope.at(scope.depth):
                    b = g.b
                    a_end = b.add(a0.value, ir.Constant(T.I64, TILE))
                    a_end = b.select(b.icmp_signed("<", a_end, hi_v), a_end, hi_v)
                    c_end = b.add(c0.value, ir.Constant(T.I64, TILE))
                    limit = ir.Constant(T.I64, inner_size)
                    c_end = b.select(b.icmp_signed("<", c_end, limit), c_end, limit)
                with scope.loop(scope.depth, a0.value, a_end, name=f"d{outer_dim}") as a:
                    index[outer_dim] = a
                    with scope.loop(scope.depth, c0.value, c_end, name=f"d{inner_dim}") as c:
                        index[inner_dim] = c
                        level(len(order))

    def level(k: int):
        if tiled and k == len(order) - 2:
            tiles(k)
            return
        if k == len(order):
            values = [g.value(r, tuple(index)) for r, _ in pairs]
            position = [i.value for i in index]
            for (_, target), value in zip(pairs, values):
                if isinstance(target, list):
                    for leaf, part in zip(target, value):
                        leaf.store(g.b, part, position)
                else:
                    target.store(g.b, value, position)
            return
        dim = order[k]
        lo, hi = (begin, end) if k == 0 else (0, shape.dimensions[dim])
        with scope.loop(scope.depth, lo, hi, name=f"d{dim}") as iv:
            index[dim] = iv
            level(k + 1)

    if shape.element_count == 0:
        return
    level(0)


def outer_extent(shape) -> int:
    """Size of the dimension the kernel's [begin, end) range runs over (1 for scalars)."""
    if shape.rank == 0:
        return 1
    return shape.dimensions[minor_to_major(shape)[-1]]


def kernel_function(module: ir.Module, name: str, n_pointers: int,
                    noalias: bool) -> tuple[ir.Function, ir.IRBuilder, list, ir.Value, ir.Value]:
    """`void name(i8* p0, ..., i64 begin, i64 end)`; returns (fn, builder positioned in
    the body, pointer args, begin, end)."""
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [T.I8P] * n_pointers +
                                             [T.I64, T.I64]), name)
    fn.linkage = "internal"
    fn.attributes.add("noinline")   # optimised on its own: one huge entry would be slow
    if noalias:
        for arg in fn.args[:n_pointers]:
            arg.add_attribute("noalias")
    entry = fn.append_basic_block("entry")
    b = ir.IRBuilder(entry)
    body = fn.append_basic_block("body")
    b.branch(body)
    b.position_at_end(body)
    return fn, b, list(fn.args[:n_pointers]), fn.args[n_pointers], fn.args[n_pointers + 1]


def new_scope(b: ir.IRBuilder) -> Scope:
    return Scope(b)


def group_leaves(roots, out_arrays):
    """Per root, its output array, or the list of arrays of a tuple-shaped root."""
    targets, at = [], 0
    for root in roots:
        if root.shape.is_tuple:
            count = len(root.shape.leaves())
            targets.append(out_arrays[at:at + count])
            at += count
        else:
            targets.append(out_arrays[at])
            at += 1
    return targets
