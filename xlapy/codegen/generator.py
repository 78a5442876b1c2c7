"""Element generators: the value of an instruction at an index, as IR.

XLA's elemental IR emitter in Python: `Generator.value(instruction, index)`
emits the code computing one element of `instruction`, asking its operands
for the elements it needs at the indices it maps to (a broadcast drops
dimensions, a transpose permutes them, a slice offsets them, a reduce loops
over the reduced ones). Instructions with a buffer (`arrays`) are loads.
A fused computation is just a generator over its parameters: nothing in
between is ever stored, which is the point of fusion.

Each value is emitted at the depth of its index (`scope.Scope`) and cached
by (instruction, index), so a reduction a fusion reads once per row is
computed once per row, and values reused within one element are computed
once.
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.codegen import elemental, elemental_complex, row_stash, scalar_computation
from xlapy.codegen import ir_types as T
from xlapy.codegen.indices import as_index
from xlapy.codegen.ir_array import IrArray
from xlapy.codegen.scope import OUTSIDE, Ix, Scope, depth_of
from xlapy.codegen.tables import GENERATORS, generates
from xlapy.errors import CompileError
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import ELEMENTWISE
from xlapy.hlo.opcode import Opcode as Op


class Generator:
    """Values of instructions at indices, in one kernel function.

    `arrays` maps instructions whose elements are read from memory to their
    IrArray; `kernel` is the KernelContext (constants, intrinsics, options).
    """

    def __init__(self, kernel, scope: Scope, arrays: dict[HloInstruction, IrArray]):
        self.kernel = kernel
        self.scope = scope
        self.b = scope.b
        self.arrays = dict(arrays)
        self._cache: dict = {}
        self.overrides: dict = {}
        """id(reduce) -> (init value, {dim: (lo, hi)}): a partial reduction."""
        self.compensation: dict = {}
        """id(reduce) -> stack slot of its compensated sum's lost low part."""
        self.nan_seen: dict = {}
        """id(reduce) -> stack slot (i1) of a float max/min's "a NaN was met"."""
        self.generated: dict = {}
        """id(instruction) -> callable(index) -> value: values made elsewhere."""
        self.stashes: dict = {}
        """id(instruction) -> [row_stash.Stash]: rows of it a reduction kept."""
        self.stash_writes: dict = {}
        """id(reduce) -> the Stash its loop being emitted fills."""
        self.interleave: dict = {}
        """id(reduce) -> vectors per iteration of its innermost loop (else the module's)."""
        self._users: dict = {}
        self._has_reduce: dict = {}

    def users_in(self, computation) -> dict:
        """computation.users(), computed once per kernel."""
        hit = self._users.get(id(computation))
        if hit is None:
            hit = self._users[id(computation)] = (computation, computation.users())
        return hit[1]

    def value(self, instruction: HloInstruction, index):
        """The compute-form value of `instruction` at `index` (a tuple of Ix)."""
        key = _key(instruction, index)
        hit = self._cache.get(key)
        if hit is not None:
            return hit[0]
        value, depth = self._emit(instruction, tuple(index))
        # the entry keeps the instruction and index alive, so their ids stay unique
        self._cache[key] = (value, depth, instruction, tuple(index))
        return value

    def depth(self, instruction: HloInstruction, index) -> int:
        self.value(instruction, index)
        return self._cache[_key(instruction, index)][1]

    def _emit(self, instruction: HloInstruction, index):
        if self.stashes:
            kept = row_stash.lookup(self, instruction, index)
            if kept is not None:
                return kept, depth_of(index)
        made = self.generated.get(id(instruction))
        if made is not None:
            return made(index), depth_of(index)
        array = self.arrays.get(instruction)
        if array is not None:
            depth = depth_of(index)
            with self.scope.at(depth):
                return array.load(self.b, [i.value for i in index]), depth
        opcode = instruction.opcode
        if opcode in ELEMENTWISE:
            return self._elementwise(instruction, index)
        fn = GENERATORS.get(opcode)
        if fn is None:
            raise CompileError(f"{instruction.name}: the CPU backend cannot generate "
                               f"{opcode.value} elementwise")
        return fn(self, instruction, index)

    def _elementwise(self, instruction, index):
        args, depth = [None] * len(instruction.operands), OUTSIDE
        for k in self._operand_order(instruction):
            operand = instruction.operands[k]
            # clamp's and select's bounds may be scalars
            operand_index = () if operand.shape.rank == 0 else index
            args[k] = self.value(operand, operand_index)
            depth = max(depth, self.depth(operand, operand_index))
        with self.scope.at(depth):
            value = elemental.emit_elementwise(self.b, instruction, args,
                                     [o.shape.element_type for o in instruction.operands])
        return value, depth

    def _operand_order(self, instruction) -> list[int]:
        """Broadcast reductions first: a softmax's `e / broadcast(sum(e))` emits the
        sum, whose loop keeps the row of `e` (row_stash), before it reads `e`."""
        operands = instruction.operands
        if len(operands) < 2:
            return range(len(operands))
        return sorted(range(len(operands)), key=lambda k: not (
            operands[k].opcode is Op.BROADCAST and self._reduces(operands[k])))

    def _reduces(self, instruction) -> bool:
        hit = self._has_reduce.get(id(instruction))
        if hit is None:
            hit = instruction.opcode is Op.REDUCE or any(
                self._reduces(o) for o in instruction.operands
                if o.opcode is not Op.PARAMETER)
            self._has_reduce[id(instruction)] = hit
        return hit

    def operand_at(self, instruction, number: int, index):
        """(value, depth) of operand `number` at `index`."""
        operand = instruction.operands[number]
        return self.value(operand, index), self.depth(operand, index)

    # -- helpers for generators --------------------------------------------------------
    def index_op(self, depth: int, fn):
        """Emit index arithmetic `fn(builder)` at `depth`; an Ix."""
        with self.scope.at(depth):
            return Ix(fn(self.b), depth)


def _key(instruction, index) -> tuple:
    """Cache key: constants by value, computed indices by identity."""
    return (id(instruction), tuple(("c", i.value.constant) if isinstance(i.value, ir.Constant)
                                   else id(i.value) for i in index))


# -- data movement -------------------------------------------------------------------------
@generates(Op.COPY)
def _copy(g: Generator, instruction, index):
    return g.operand_at(instruction, 0, index)


@generates(Op.PARAMETER)
def _parameter(g: Generator, instruction, index):
    raise CompileError(f"{instruction.name}: parameter without a buffer")


@generates(Op.CONSTANT)
def _constant(g: Generator, instruction, index):
    if instruction.shape.rank == 0 or instruction.literal.size == 1:
        value = instruction.literal.reshape(()).item() if hasattr(instruction.literal, "reshape") \
            else instruction.literal
        return T.constant(instruction.shape.element_type, value), OUTSIDE
    array = g.kernel.constant_array(instruction)
    depth = depth_of(index)
    with g.scope.at(depth):
        return array.load(g.b, [i.value for i in index]), depth


@generates(Op.BROADCAST)
def _broadcast(g: Generator, instruction, index):
    dims = instruction.attr("dimensions") or ()
    return g.operand_at(instruction, 0, tuple(index[d] for d in dims))


@generates(Op.TRANSPOSE)
def _transpose(g: Generator, instruction, index):
    perm = instruction.attr("dimensions")
    operand_index = [None] * len(perm)
    for out_dim, in_dim in enumerate(perm):
        operand_index[in_dim] = index[out_dim]
    return g.operand_at(instruction, 0, tuple(operand_index))


@generates(Op.RESHAPE)
def _reshape(g: Generator, instruction, index):
    operand = instruction.operands[0]
    return g.operand_at(instruction, 0, reshape_index(g, instruction.shape.dimensions,
                                                      operand.shape.dimensions, index))


def reshape_index(g: Generator, out_dims, in_dims, index):
    """The operand index of a row-major reshape: matching leading/trailing dims are
    carried over; the rest linearised and split again."""
    out_dims, in_dims = tuple(out_dims), tuple(in_dims)
    if out_dims == in_dims:
        return tuple(index)
    real = [(i, d) for i, d in zip(index, out_dims) if d != 1]
    if [d for d in in_dims if d != 1] == [d for _, d in real]:
        it = iter(i for i, _ in real)
        return tuple(Ix.const(0) if d == 1 else next(it) for d in in_dims)
    depth = depth_of(index)

    def linear(b):
        acc = ir.Constant(T.I64, 0)
        for i, d in zip(index, out_dims):
            acc = b.add(b.mul(acc, ir.Constant(T.I64, d)), i.value)
        return acc

    flat = g.index_op(depth, linear)
    result = []
    remaining = flat
    for pos, d in reversed(list(enumerate(in_dims))):
        if d == 1:
            result.append(Ix.const(0))
            continue
        if pos == 0 or all(x == 1 for x in in_dims[:pos]):
            result.append(remaining)
            remaining = Ix.const(0)
            continue
        r = remaining
        result.append(g.index_op(depth, lambda b, r=r, d=d: b.urem(r.value, ir.Constant(T.I64, d))))
        remaining = g.index_op(depth, lambda b, r=r, d=d: b.udiv(r.value, ir.Constant(T.I64, d)))
    return tuple(reversed(result))


@generates(Op.SLICE)
def _slice(g: Generator, instruction, index):
    ranges = instruction.attr("slice")
    operand_index = []
    for i, r in zip(index, ranges):
        if r.start == 0 and r.stride == 1:
            operand_index.append(i)
        else:
            operand_index.append(g.index_op(i.depth, lambda b, i=i, r=r: b.add(
                b.mul(i.value, ir.Constant(T.I64, r.stride)), ir.Constant(T.I64, r.start))))
    return g.operand_at(instruction, 0, tuple(operand_index))


@generates(Op.REVERSE)
def _reverse(g: Generator, instruction, index):
    dims = set(instruction.attr("dimensions") or ())
    sizes = instruction.shape.dimensions
    operand_index = [g.index_op(i.depth, lambda b, i=i, n=sizes[d]: b.sub(
        ir.Constant(T.I64, n - 1), i.value)) if d in dims else i for d, i in enumerate(index)]
    return g.operand_at(instruction, 0, tuple(operand_index))


@generates(Op.IOTA)
def _iota(g: Generator, instruction, index):
    i = index[instruction.attr("iota_dimension") or 0]
    target = instruction.shape.element_type
    to = elemental_complex.convert_complex if target in (P.C64, P.C128) else elemental.convert
    with g.scope.at(i.depth):
        return to(g.b, i.value, P.S64, target), i.depth


DEVICE_IDS = "xlapy_device_ids"
"""The global `[2 x i32]` holding (replica id, partition id): the runtime writes
this process's before each run (zeros on one device), so one compiled object
serves every process of a job."""


@generates(Op.REPLICA_ID, Op.PARTITION_ID)
def _device_id(g: Generator, instruction, index):
    module = g.b.module
    ids = module.globals.get(DEVICE_IDS)
    if ids is None:
        ids = ir.GlobalVariable(module, ir.ArrayType(T.I32, 2), DEVICE_IDS)
        ids.initializer = ir.Constant(ids.value_type, [0, 0])
    slot = 0 if instruction.opcode is Op.REPLICA_ID else 1
    with g.scope.at(OUTSIDE):
        pointer = g.b.gep(ids, [ir.Constant(T.I32, 0), ir.Constant(T.I32, slot)])
        return g.b.load(pointer), OUTSIDE


@generates(Op.MAP)
def _map(g: Generator, instruction, index):
    """The mapped computation applied to the operands' elements at `index`."""
    args, depth = [], OUTSIDE
    for number in range(len(instruction.operands)):
        value, operand_depth = g.operand_at(instruction, number, index)
        args.append(value)
        depth = max(depth, operand_depth)
    with g.scope.at(depth):
        body = instruction.attr("to_apply")
        return scalar_computation.emit_scalar_computation(g.b, body, args), depth


def _clamp_index(b, value, low: int, high: int):
    """min(max(value, low), high) on i64."""
    lo, hi = ir.Constant(T.I64, low), ir.Constant(T.I64, high)
    value = b.select(b.icmp_signed("<", value, lo), lo, value)
    return b.select(b.icmp_signed(">", value, hi), hi, value)


@generates(Op.PAD)
def _pad(g: Generator, instruction, index):
    operand = instruction.operands[0]
    config = instruction.attr("padding").dimensions
    depth = depth_of(index)
    source, checks = [], []
    for i, dim, size in zip(index, config, operand.shape.dimensions):
        if dim.low == 0 and dim.high == 0 and dim.interior == 0:
            source.append(i)
            continue
        with g.scope.at(i.depth):   # each dimension's arithmetic at its own depth
            b = g.b
            t = b.sub(i.value, ir.Constant(T.I64, dim.low))
            step = dim.interior + 1
            ok = b.icmp_signed(">=", t, ir.Constant(T.I64, 0))
            if step > 1:
                ok = b.and_(ok, b.icmp_signed("==", b.srem(t, ir.Constant(T.I64, step)),
                                              ir.Constant(T.I64, 0)))
                t = b.sdiv(t, ir.Constant(T.I64, step))
            ok = b.and_(ok, b.icmp_signed("<", t, ir.Constant(T.I64, size)))
            checks.append(ok)
            source.append(Ix(_clamp_index(b, t, 0, max(size - 1, 0)), i.depth))
    valid = None
    if checks:
        with g.scope.at(depth):
            for ok in checks:
                valid = ok if valid is None else g.b.and_(valid, ok)
    pad_value = g.value(instruction.operands[1], ())
    if valid is None:
        return g.operand_at(instruction, 0, tuple(source))
    if operand.shape.element_count == 0:
        return pad_value, OUTSIDE
    inner = g.value(operand, tuple(source))
    with g.scope.at(depth):
        return select_value(g.b, valid, inner, pad_value), depth


def select_value(b, cond, on_true, on_false):
    if isinstance(on_true, tuple):
        return tuple(b.select(cond, t, f) for t, f in zip(on_true, on_false))
    return b.select(cond, on_true, on_false)


@generates(Op.CONCATENATE)
def _concatenate(g: Generator, instruction, index):
    dim = instruction.attr("dimensions")[0]
    i = index[dim]
    pieces, offset = [], 0
    for operand in instruction.operands:
        size = operand.shape.dimensions[dim]
        if size:
            pieces.append((operand, offset, size))
        offset += size
    result, depth = None, depth_of(index)
    for operand, start, size in reversed(pieces):
        local = g.index_op(i.depth, lambda b, s=start, n=size: _clamp_index(
            b, b.sub(i.value, ir.Constant(T.I64, s)), 0, n - 1))
        value = g.value(operand, tuple(local if d == dim else x for d, x in enumerate(index)))
        if result is None:
            result = value
            continue
        with g.scope.at(depth):
            inside = g.b.icmp_signed("<", i.value, ir.Constant(T.I64, start + size))
            result = select_value(g.b, inside, value, result)
    return result, depth


@generates(Op.DYNAMIC_SLICE)
def _dynamic_slice(g: Generator, instruction, index):
    operand = instruction.operands[0]
    starts = dynamic_starts(g, instruction.operands[1:], operand.shape.dimensions,
                            instruction.shape.dimensions)
    operand_index = [g.index_op(max(i.depth, s.depth), lambda b, i=i, s=s: b.add(i.value, s.value))
                     for i, s in zip(index, starts)]
    return g.operand_at(instruction, 0, tuple(operand_index))


def dynamic_starts(g: Generator, start_operands, operand_dims, window_dims):
    """Start indices clamped so the window lies inside the operand (XLA's rule); a u64
    start past 2^63 is large, not negative."""
    starts = []
    for operand, size, window in zip(start_operands, operand_dims, window_dims):
        value = g.value(operand, ())
        depth = g.depth(operand, ())
        with g.scope.at(depth):
            wide = as_index(g.b, value, operand.shape.element_type)
            starts.append(Ix(_clamp_index(g.b, wide, 0, size - window), depth))
    return starts


@generates(Op.DYNAMIC_UPDATE_SLICE)
def _dynamic_update_slice(g: Generator, instruction, index):
    operand, update = instruction.operands[:2]
    starts = dynamic_starts(g, instruction.operands[2:], operand.shape.dimensions,
                            update.shape.dimensions)
    depth = max(depth_of(index), depth_of(starts))
    inside, local = None, []
    with g.scope.at(depth):
        b = g.b
        for i, s, n in zip(index, starts, update.shape.dimensions):
            t = b.sub(i.value, s.value)
            ok = b.and_(b.icmp_signed(">=", t, ir.Constant(T.I64, 0)),
                        b.icmp_signed("<", t, ir.Constant(T.I64, n)))
            inside = ok if inside is None else b.and_(inside, ok)
            local.append(Ix(_clamp_index(b, t, 0, max(n - 1, 0)), depth))
    base = g.value(operand, index)
    if inside is None or update.shape.element_count == 0:
        return (base, depth_of(index)) if inside is not None else g.operand_at(
            instruction, 1, tuple(local))
    new = g.value(update, tuple(local))
    with g.scope.at(depth):
        return select_value(g.b, inside, new, base), depth


@generates(Op.TUPLE)
def _tuple(g: Generator, instruction, index):
    raise CompileError(f"{instruction.name}: a tuple has no elements")


@generates(Op.GET_TUPLE_ELEMENT)
def _gte(g: Generator, instruction, index):
    raise CompileError(f"{instruction.name}: get-tuple-element of a computed tuple in a fusion")
