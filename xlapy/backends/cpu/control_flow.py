"""`while`, `conditional` and `call`, emitted inline in the entry function.

Buffer assignment gives a while loop one state buffer that is also the
parameter of its condition and body; the init value is copied in before the
loop and the body's root copied back after each iteration (through scratch
memory when the root's leaves are a permutation of the state's). A
conditional's branches read their operands' buffers and their roots are
copied into the conditional's output.
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.codegen import ir_types as T
from xlapy.codegen.intrinsics import intrinsic
from xlapy.errors import CompileError
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.opcode import Opcode as Op


def memcpy(b: ir.IRBuilder, dst, src, size: int) -> None:
    if size <= 0:
        return
    intrinsic(b, "memcpy", [dst, src, ir.Constant(T.I64, size), ir.Constant(T.I1, 0)],
              ret=ir.VoidType(), overloads=[T.I8P, T.I8P, T.I64])


def emit_control_flow(cg, instruction) -> None:
    if instruction.opcode is Op.WHILE:
        _while(cg, instruction)
    elif instruction.opcode is Op.CONDITIONAL:
        _conditional(cg, instruction)
    else:
        _call(cg, instruction)


def _leaf_slices(cg, instruction):
    shape = instruction.shape
    if shape.is_tuple:
        return [(index, cg.slice_of(instruction, index)) for index, _ in shape.leaves()]
    if shape.is_token:
        return []
    return [((), cg.slice_of(instruction))]


def _copy_leaves(cg, sources, targets) -> None:
    """targets[i] <- sources[i] for every leaf whose slices differ; through scratch
    memory when a source is another leaf's target."""
    b = cg.b
    moves = [(s, t) for s, t in zip(sources, targets) if s != t]
    if not moves:
        return
    target_set = {(t.allocation, t.offset) for _, t in moves}
    clash = any((s.allocation, s.offset) in target_set for s, _ in moves)
    if not clash:
        for s, t in moves:
            memcpy(b, cg._slice_pointer(t, b), cg._slice_pointer(s, b), s.size)
        return
    total = sum(s.size for s, _ in moves)
    malloc = _libc(cg.llmod, "malloc", T.I8P, [T.I64])
    free = _libc(cg.llmod, "free", ir.VoidType(), [T.I8P])
    scratch = b.call(malloc, [ir.Constant(T.I64, max(total, 1))])
    offset = 0
    for s, _ in moves:
        memcpy(b, b.gep(scratch, [ir.Constant(T.I64, offset)]), cg._slice_pointer(s, b), s.size)
        offset += s.size
    offset = 0
    for s, t in moves:
        memcpy(b, cg._slice_pointer(t, b), b.gep(scratch, [ir.Constant(T.I64, offset)]), s.size)
        offset += s.size
    b.call(free, [scratch])


def _libc(module, name, ret, args):
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, args), name)
    return fn


def _while(cg, instruction) -> None:
    body = instruction.attr("body")
    condition = instruction.attr("condition")
    init = instruction.operands[0]
    state = [s for _, s in _leaf_slices(cg, instruction)]
    _copy_leaves(cg, [s for _, s in _leaf_slices(cg, init)], state)
    b = cg.b
    fn = b.function
    check = fn.append_basic_block(f"{instruction.name}.cond")
    run = fn.append_basic_block(f"{instruction.name}.body")
    done = fn.append_basic_block(f"{instruction.name}.done")
    b.branch(check)
    b.position_at_end(check)
    cg.emit_computation(condition)
    flag = b.load(b.bitcast(cg.pointer(condition.root_instruction), T.I8P))
    b.cbranch(b.icmp_unsigned("!=", flag, ir.Constant(T.I8, 0)), run, done)
    b.position_at_end(run)
    cg.emit_computation(body)
    _copy_leaves(cg, [s for _, s in _leaf_slices(cg, body.root_instruction)], state)
    b.branch(check)
    b.position_at_end(done)


def _conditional(cg, instruction) -> None:
    branches = instruction.attr("branch_computations") or (
        instruction.attr("true_computation"), instruction.attr("false_computation"))
    branches = [c for c in branches if c is not None]
    selector = instruction.operands[0]
    if not branches:
        raise CompileError(f"{instruction.name}: conditional without branches")
    b = cg.b
    raw = b.load(b.bitcast(cg.pointer(selector), T.storage_type(selector.shape.element_type)
                           .as_pointer()))
    if selector.shape.element_type is P.PRED:
        number = b.select(b.icmp_unsigned("!=", raw, ir.Constant(T.I8, 0)),
                          ir.Constant(T.I32, 0), ir.Constant(T.I32, 1))
    else:
        number = raw
        n = len(branches)
        bad = b.or_(b.icmp_signed("<", number, ir.Constant(T.I32, 0)),
                    b.icmp_signed(">=", number, ir.Constant(T.I32, n)))
        number = b.select(bad, ir.Constant(T.I32, n - 1), number)
    fn = b.function
    done = fn.append_basic_block(f"{instruction.name}.done")
    blocks = [fn.append_basic_block(f"{instruction.name}.branch{i}") for i in range(len(branches))]
    switch = b.switch(number, blocks[-1])
    for i, block in enumerate(blocks[:-1]):
        switch.add_case(ir.Constant(T.I32, i), block)
    outputs = [s for _, s in _leaf_slices(cg, instruction)]
    for computation, block in zip(branches, blocks):
        b.position_at_end(block)
        cg.emit_computation(computation)
        _copy_leaves(cg, [s for _, s in _leaf_slices(cg, computation.root_instruction)], outputs)
        b.branch(done)
    b.position_at_end(done)


def _call(cg, instruction) -> None:
    callee = instruction.attr("to_apply")
    cg.emit_computation(callee)
    outputs = [s for _, s in _leaf_slices(cg, instruction)]
    _copy_leaves(cg, [s for _, s in _leaf_slices(cg, callee.root_instruction)], outputs)
