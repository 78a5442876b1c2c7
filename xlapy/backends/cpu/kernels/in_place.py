"""dynamic-update-slice in place, and the small helpers the data-dependent kernels share.

When buffer assignment let a dynamic-update-slice write over its dead operand
(`slice_of(dus) == slice_of(operand 0)`), the operand's bytes are already the
output's: only the update's elements need writing, which is what makes a scan
(a while body storing one row per step into a big carried array) linear in
the array's size once its state buffer is shared that way. Otherwise the
generic loop kernel computes the whole output.
"""

from __future__ import annotations

import contextlib

import llvmlite.ir as ir

from xlapy.backends.cpu.special_kernels import special
from xlapy.codegen import ir_types as T
from xlapy.codegen.indices import as_index, clamp
from xlapy.codegen.ir_array import IrArray, minor_to_major
from xlapy.codegen.loop_nest import kernel_function
from xlapy.codegen.loops import for_range
from xlapy.codegen.scalar_computation import emit_scalar_computation
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.opcode import Opcode as Op


# -- shared helpers -------------------------------------------------------------------------
def raw_copy(b: ir.IRBuilder, source: IrArray, target: IrArray, source_index, target_index):
    """Copy one element's bytes (no widening: NaN payloads and -0 survive)."""
    b.store(b.load(source.address(b, source_index)), target.address(b, target_index))


def loop_nest(b: ir.IRBuilder, dims, order, body, outer=None) -> None:
    """body(index) for every index of `dims`, loops in `order` (major first); the first
    loop runs over `outer` = (begin, end) when given."""
    index = [None] * len(dims)

    def level(k: int):
        if k == len(order):
            body(index)
            return
        lo, hi = outer if (k == 0 and outer is not None) else (0, dims[order[k]])
        with for_range(b, lo, hi, name=f"n{order[k]}") as iv:
            index[order[k]] = iv
            level(k + 1)

    if all(d > 0 for d in dims):
        level(0)


def major_to_minor(shape) -> list[int]:
    return list(reversed(minor_to_major(shape)))


def overlapping(slices: list, n_inputs: int) -> bool:
    """Whether a written slice (those from `n_inputs` on) overlaps any other slice."""
    for i in range(n_inputs, len(slices)):
        s = slices[i]
        for j, t in enumerate(slices):
            if j != i and s.allocation == t.allocation and s.offset < t.offset + t.size \
                    and t.offset < s.offset + s.size:
                return True
    return False


def new_kernel(cg, instruction, kind: str, slices: list, n_inputs: int,
               noalias: bool | None = None):
    """kernel_function for `instruction` with a unique name; noalias where proven (or as
    the caller says, when it knows some pointers are never dereferenced)."""
    symbol = "".join(c if c.isalnum() or c in "_." else "_" for c in instruction.name)
    name = cg.llmod.get_unique_name(f"{kind}_{symbol}")
    if noalias is None:
        noalias = not overlapping(slices, n_inputs)
    return kernel_function(cg.llmod, name, len(slices), noalias=noalias)


@contextlib.contextmanager
def discarded_on_error(module: ir.Module, fn: ir.Function):
    """On an error, the half-emitted kernel `fn` becomes an empty function (`ret`), so the
    module stays valid and the instruction can still go to the fallback."""
    try:
        yield
    except Exception:
        _empty(fn)
        raise


def _empty(fn: ir.Function) -> None:
    fn.blocks.clear()
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    ret = fn.function_type.return_type
    if isinstance(ret, ir.VoidType):
        b.ret_void()
    else:
        b.ret(ir.Constant(ret, None))


def check_scalar_computation(computation) -> None:
    """Raise CompileError now, before any kernel code exists, when `computation` (a
    comparator, a combiner) cannot be emitted inline."""
    module = ir.Module("probe")
    b = ir.IRBuilder(ir.Function(module, ir.FunctionType(ir.VoidType(), []), "probe")
                     .append_basic_block("entry"))
    emit_scalar_computation(b, computation,
                            [undefined(p.shape.element_type) for p in computation.parameters])


def undefined(ptype: P):
    """An undef compute-form value of `ptype` (a pair for complex types)."""
    t = T.compute_type(ptype)
    if ptype in (P.C64, P.C128):
        return (ir.Constant(t, ir.Undefined), ir.Constant(t, ir.Undefined))
    return ir.Constant(t, ir.Undefined)


# -- dynamic-update-slice ------------------------------------------------------------------
@special(Op.DYNAMIC_UPDATE_SLICE)
def dynamic_update_slice(cg, instruction) -> bool:
    """Only the update's elements, when the output is the operand's own buffer."""
    operand, update = instruction.operands[:2]
    starts = instruction.operands[2:]
    rank = operand.shape.rank
    if instruction.shape.is_tuple or cg.slice_of(instruction) != cg.slice_of(operand):
        return False
    if len(starts) != rank or any(s.shape.rank != 0 for s in starts):
        return False   # the older one-vector form: the generic kernel handles it
    if update.shape.element_count == 0:
        return True
    slices = [cg.slice_of(update)] + [cg.slice_of(s) for s in starts] + [cg.slice_of(instruction)]
    fn, b, pointers, begin, end = new_kernel(cg, instruction, "dus", slices, len(slices) - 1)
    _emit_update(b, instruction, pointers, begin, end)
    order = major_to_minor(update.shape)
    n = update.shape.dimensions[order[0]] if rank else 1
    cg.call_kernel(fn, slices, n, update.shape.element_count)
    return True


def _emit_update(b, instruction, pointers, begin, end) -> None:
    """out[start + i] = update[i] for the update's outermost dimension in [begin, end)."""
    operand, update = instruction.operands[:2]
    starts = instruction.operands[2:]
    upd = IrArray(b, pointers[0], update.shape)
    out = IrArray(b, pointers[-1], instruction.shape)
    offsets = []
    for ptr, s, size, window in zip(pointers[1:-1], starts, operand.shape.dimensions,
                                    update.shape.dimensions):
        ptype = s.shape.element_type
        value = IrArray(b, ptr, s.shape).load(b, [])
        offsets.append(clamp(b, as_index(b, value, ptype), 0, size - window))

    def body(index):
        target = [b.add(i, o) for i, o in zip(index, offsets)]
        raw_copy(b, upd, out, index, target)

    order = major_to_minor(update.shape)
    loop_nest(b, update.shape.dimensions, order, body, (begin, end) if order else None)
    b.ret_void()
