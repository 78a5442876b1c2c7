"""GPU kernels that are not one element per thread, reusing the CPU's emitters
where those are written against a bare builder.

`rng-bit-generator` runs the CPU's Philox and ThreeFry emitters
(`kernels/rng.py`), each thread taking a contiguous run of counter blocks,
then one thread writes the new state.

`sort` copies its operands to its outputs and sorts each row in place with a
stable insertion sort, one thread per row. It is the interpreter's order
exactly (equal elements keep their order) and slow for long rows: a
shared-memory bitonic sort is the fast path still to come.

`scatter` applies its updates in the interpreter's order, so duplicate
indices combine deterministically under any combiner: a copy kernel, then
one thread walking the updates (`gather_scatter.emit_updates`, the CPU's
code). Correct for every combiner; a parallel scatter with atomics for
`add` is the fast path still to come.

`select-and-scatter` (max-pool gradients) gathers instead of scattering, so
it needs neither atomics nor a second pass: one thread per output element
starts from init and walks the source elements whose windows cover it, in
row-major order; each one's selection is the CPU's window scan
(`windows.selected_position`: the first valid element, replaced where
select(selected, current) is false), and where it picked this element its source value is
combined in. That is the interpreter's order of scatters for every target,
so ties and any scatter computation match it exactly. The cost per element
is (windows covering it) x (window size): small for pooling windows.
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.backends.cpu.kernels import gather_scatter, rng, windows
from xlapy.backends.gpu.loop_kernel import BLOCK, MAX_GRID, delinearize
from xlapy.backends.gpu.thunks import KernelThunk, Launch
from xlapy.codegen import ir_types as T
from xlapy.codegen.ir_array import IrArray
from xlapy.codegen.loops import for_range
from xlapy.codegen.scalar_computation import emit_scalar_computation
from xlapy.errors import CompileError
from xlapy.hlo.opcode import Opcode as Op


def _i64(value: int) -> ir.Constant:
    return ir.Constant(T.I64, value)


def _first_thread(b, k) -> ir.Value:
    return b.icmp_unsigned("==", b.or_(k.coords.thread, k.coords.block),
                           k.coords.thread.type(0))


def _scatter(emitter, instruction) -> list:
    count = (len(instruction.operands) - 1) // 2
    arrays = instruction.operands[:count]
    thunks = []
    outputs = instruction.shape.leaves() if instruction.shape.is_tuple \
        else [((), instruction.shape)]
    out_slices = [emitter.slice_of(instruction, index) for index, _ in outputs]
    thunks += emitter.copies([emitter.slice_of(a) for a in arrays], out_slices)
    gather_scatter.check_scalar_computation(instruction.attr("to_apply"))
    rest = instruction.operands[count:]
    slices = [emitter.slice_of(o) for o in rest] + out_slices
    k = emitter.new_kernel(instruction, slices, "_updates")
    b = k.b
    ins = [IrArray(b, p, o.shape) for o, p in zip(rest, k.pointers)]
    outs = [IrArray(b, p, shape) for (_, shape), p in zip(outputs, k.pointers[len(rest):])]
    with b.if_then(_first_thread(b, k)):
        gather_scatter.emit_updates(b, instruction, ins[0], ins[1:], outs)
    b.ret_void()
    return thunks + [KernelThunk(k.name, slices, Launch(1, 1), instruction.name)]


def _rng_bit_generator(emitter, instruction) -> list:
    plan = rng.RngPlan.of(instruction)
    if plan is None:
        raise CompileError(f"{instruction.name}: the GPU backend cannot compile "
                           "rng-bit-generator: this element type or state shape has no "
                           "native generator")
    state = emitter.slice_of(instruction.operands[0])
    state_out, data_out = (emitter.slice_of(instruction, (i,)) for i in (0, 1))
    thunks = []
    if plan.blocks > 0:
        k = emitter.new_kernel(instruction, [state, data_out], "_data")
        b = k.b
        thread, width, block, blocks = k.coords.as_i64(b)
        threads = b.mul(blocks, width)
        per_thread = b.udiv(b.add(_i64(plan.blocks), b.sub(threads, _i64(1))), threads)
        begin = b.mul(b.add(b.mul(block, width), thread), per_thread)
        end = b.add(begin, per_thread)
        end = b.select(b.icmp_unsigned("<", end, _i64(plan.blocks)), end, _i64(plan.blocks))
        rng.emit_data(b, plan, k.pointers, begin, end)   # returns from the kernel
        grid = max(1, min(MAX_GRID, -(-plan.blocks // BLOCK)))
        thunks.append(KernelThunk(k.name, [state, data_out], Launch(grid, BLOCK),
                                  instruction.name))
    k = emitter.new_kernel(instruction, [state, state_out], "_state")
    b = k.b
    done = b.function.append_basic_block("done")
    work = b.function.append_basic_block("state")
    b.cbranch(_first_thread(b, k), work, done)
    b.position_at_end(done)
    b.ret_void()
    b.position_at_end(work)
    rng.emit_state(b, plan, k.pointers)   # returns from the kernel
    return thunks + [KernelThunk(k.name, [state, state_out], Launch(1, 1), instruction.name)]


def _sort(emitter, instruction) -> list:
    operands = instruction.operands
    shape = operands[0].shape
    dim = (instruction.attr("dimensions") or (shape.rank - 1,))[0]
    comparator = instruction.attr("to_apply")
    if comparator is None:
        raise CompileError(f"{instruction.name}: sort without a comparator")
    gather_scatter.check_scalar_computation(comparator)
    types = [o.shape.element_type for o in operands]
    for t in types:
        T.check_native(t, instruction.name)
    outputs = instruction.shape.leaves() if instruction.shape.is_tuple \
        else [((), instruction.shape)]
    slices = [emitter.slice_of(instruction, index) for index, _ in outputs]
    thunks = emitter.copies([emitter.slice_of(o) for o in operands], slices)
    n = shape.dimensions[dim]
    rows = shape.element_count // max(n, 1)
    if n < 2 or rows == 0:
        return thunks
    k = emitter.new_kernel(instruction, slices, "_rows")
    b = k.b
    arrays = [IrArray(b, p, s) for (_, s), p in zip(outputs, k.pointers)]
    thread, width, block, blocks = k.coords.as_i64(b)
    first = b.add(b.mul(block, width), thread)
    with for_range(b, first, _i64(rows), b.mul(blocks, width), name="row") as row:
        index = delinearize(b, row, shape, 0, (dim,))

        def at(position):
            full = [i.value if d != dim else position for d, i in enumerate(index)]
            return [a.address(b, full) for a in arrays]

        with for_range(b, 1, n, name="i") as i:
            _sift_down(b, at, i, types, comparator)
    b.ret_void()
    grid = max(1, min(MAX_GRID, -(-rows // BLOCK)))
    return thunks + [KernelThunk(k.name, slices, Launch(grid, BLOCK), instruction.name)]


def _sift_down(b, at, i, types, comparator) -> None:
    """Move the record at `i` down while it is strictly before its left neighbour
    (stable: equal records never pass each other)."""
    fn = b.function
    check = fn.append_basic_block("sift.check")
    swap = fn.append_basic_block("sift.swap")
    done = fn.append_basic_block("sift.done")
    entry = b.block
    b.branch(check)
    b.position_at_end(check)
    j = b.phi(T.I64, name="j")
    j.add_incoming(i, entry)
    left = b.sub(j, _i64(1))
    here, there = at(j), at(left)
    raw_here = [T.load(b, p, t) for p, t in zip(here, types)]
    raw_there = [T.load(b, p, t) for p, t in zip(there, types)]
    args = []
    for x, y in zip(raw_here, raw_there):
        args += [x, y]
    before = emit_scalar_computation(b, comparator, args)
    go = b.and_(b.icmp_signed(">", j, _i64(0)), before)
    b.cbranch(go, swap, done)
    b.position_at_end(swap)
    for p, q, x, y, t in zip(here, there, raw_here, raw_there, types):
        T.store(b, y, p, t)
        T.store(b, x, q, t)
    j.add_incoming(left, swap)
    b.branch(check)
    b.position_at_end(done)


def _select_and_scatter(emitter, instruction) -> list:
    operand, source, init = instruction.operands
    T.check_native(operand.shape.element_type, instruction.name)
    for attr in ("select", "scatter"):
        gather_scatter.check_scalar_computation(instruction.attr(attr))
    slices = [emitter.slice_of(o) for o in instruction.operands] + [emitter.slice_of(instruction)]
    shape = instruction.shape
    if shape.element_count == 0:
        return []
    k = emitter.new_kernel(instruction, slices)
    b = k.b
    operand_array, source_array, init_array = (IrArray(b, p, o.shape) for p, o in
                                               zip(k.pointers, instruction.operands))
    out = IrArray(b, k.pointers[3], shape)
    start = init_array.load(b, [])
    acc = b.alloca(start.type, name="acc")   # in the entry block: once per thread
    thread, width, block, blocks = k.coords.as_i64(b)
    first = b.add(b.mul(block, width), thread)
    n = shape.element_count
    with for_range(b, first, _i64(n), b.mul(blocks, width), name="e") as position:
        index = [i.value for i in delinearize(b, position, shape, 0)]
        b.store(start, acc)
        if source.shape.element_count:
            here = out.linear(b, index)

            def gather(s_index):
                where = windows.selected_position(b, instruction, operand_array, out, s_index)
                with b.if_then(b.icmp_signed("==", where, here)):
                    value = emit_scalar_computation(b, instruction.attr("scatter"),
                                                    [b.load(acc), source_array.load(b, s_index)])
                    b.store(value, acc)

            _covering_windows(b, instruction, index, gather)
        out.store(b, b.load(acc), index)
    b.ret_void()
    grid = max(1, min(MAX_GRID, -(-n // BLOCK)))
    return [KernelThunk(k.name, slices, Launch(grid, BLOCK), instruction.name)]


def _covering_windows(b, instruction, index, body) -> None:
    """body(source index) for every source element, in row-major order, whose window
    along each dimension may hold the operand element at `index`: the o with
    o*stride + w*window_dilation - padding_low == index*base_dilation for a w in
    [0, size), clamped to the source's extent (a superset; the selection decides)."""
    dims = instruction.attr("window").dimensions
    sizes = instruction.operands[1].shape.dimensions
    s_index: list = []

    def level(d: int) -> None:
        if d == len(sizes):
            body(list(s_index))
            return
        dim = dims[d]
        reach = b.add(b.mul(index[d], _i64(dim.base_dilation)), _i64(dim.padding_low))
        far = b.sub(reach, _i64((dim.size - 1) * dim.window_dilation))
        lo = b.sdiv(b.add(far, _i64(dim.stride - 1)), _i64(dim.stride))   # ceil for far > 0
        lo = b.select(b.icmp_signed(">", far, _i64(0)), lo, _i64(0))
        hi = b.add(b.sdiv(reach, _i64(dim.stride)), _i64(1))              # floor + 1, reach >= 0
        hi = b.select(b.icmp_signed("<", hi, _i64(sizes[d])), hi, _i64(sizes[d]))
        hi = b.select(b.icmp_signed("<", reach, _i64(0)), _i64(0), hi)
        with for_range(b, lo, hi, name=f"s{d}") as o:
            s_index.append(o)
            level(d + 1)
            s_index.pop()

    level(0)


EMITTERS = {Op.SCATTER: _scatter, Op.RNG_BIT_GENERATOR: _rng_bit_generator, Op.SORT: _sort,
            Op.SELECT_AND_SCATTER: _select_and_scatter}
"""Opcode -> fn(emitter, instruction) -> thunks."""
