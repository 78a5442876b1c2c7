"""Parallel loops in the generated code, on POSIX threads.

A parallel loop is a task function `void task(i8* ctx, i64 begin, i64 end)`
run over [0, n): `parallel_for(task, ctx, n, threads)` cuts the range into
contiguous chunks (a few per thread on the pool, which its threads claim as
they come; one per thread otherwise) and runs them on the caller and the
persistent workers of `thread_pool` (or, when the pool is taken, on a thread
started per chunk and joined: `spawning_parallel_for`). A compiled module —
JIT or an ahead-of-time object — depends on libc's pthreads only. A thread
that cannot be started has its chunk run by the caller, so the loop always
completes. Handing a chunk to a pool worker costs a few microseconds:
callers decide with `worth_parallelising` whether a loop pays for that.
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.backends.cpu import runtime_library
from xlapy.backends.cpu.thread_pool import pool_parallel_for
from xlapy.codegen import ir_types as T
from xlapy.codegen.loops import for_range

I8P = ir.IntType(8).as_pointer()
I64 = ir.IntType(64)
I32 = ir.IntType(32)
TASK_TYPE = ir.FunctionType(ir.VoidType(), [I8P, I64, I64])
"""void task(i8* ctx, i64 begin, i64 end)"""
MAX_THREADS = 256
PARALLEL_FOR = "xlapy_parallel_for"
SPAWN = "xlapy_parallel_for_spawn"

_WORK_PER_THREAD = 1 << 14
"""Roughly: element operations a thread must get for handing it a chunk (~2 us on
the pool) to pay."""


def worth_parallelising(work: int, threads: int) -> int:
    """How many threads a loop of `work` element operations should use (1: stay serial)."""
    if threads <= 1:
        return 1
    return max(1, min(threads, work // _WORK_PER_THREAD))


def parallel_for(module: ir.Module) -> ir.Function:
    """`void (task*, i8* ctx, i64 n, i64 threads)` running a parallel loop on the
    worker pool (`thread_pool`): the process's shared one, or for a module marked
    `xlapy_inline_runtime` (an ahead-of-time object) one emitted into it once.
    Pool threads run the pool's code for the rest of the process, so code that
    can be unloaded (every JIT module) must not carry a pool of its own."""
    if not getattr(module, "xlapy_inline_runtime", False):
        if getattr(module, "xlapy_runtime", None) is None:
            module.xlapy_runtime = set()
        return runtime_library.pool_declaration(module)
    if PARALLEL_FOR in module.globals:
        return module.globals[PARALLEL_FOR]
    return pool_parallel_for(module, PARALLEL_FOR, TASK_TYPE, spawning_parallel_for(module))


def spawning_parallel_for(module: ir.Module) -> ir.Function:
    """`void xlapy_parallel_for_spawn(task*, i8* ctx, i64 n, i64 threads)`: a thread
    per chunk but the first, joined; what the pool falls back on. Emitted once."""
    if SPAWN in module.globals:
        return module.globals[SPAWN]
    task_ptr = TASK_TYPE.as_pointer()
    closure = ir.LiteralStructType([task_ptr, I8P, I64, I64])
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [task_ptr, I8P, I64, I64]),
                     SPAWN)
    fn.linkage = "internal"
    worker = _worker(module, closure)
    pthread_create = _declare(module, "pthread_create", I32,
                              [I64.as_pointer(), I8P, worker.type, I8P])
    pthread_join = _declare(module, "pthread_join", I32, [I64, I8P.as_pointer()])

    task, ctx, n, threads = fn.args
    entry = fn.append_basic_block("entry")
    serial = fn.append_basic_block("serial")
    split = fn.append_basic_block("split")
    b = ir.IRBuilder(entry)
    k = b.select(b.icmp_signed("<", threads, n), threads, n)
    k = b.select(b.icmp_signed(">", k, ir.Constant(I64, MAX_THREADS)),
                 ir.Constant(I64, MAX_THREADS), k)
    b.cbranch(b.icmp_signed("<=", k, ir.Constant(I64, 1)), serial, split)

    b.position_at_end(serial)
    b.call(task, [ctx, ir.Constant(I64, 0), n])
    b.ret_void()

    b.position_at_end(split)
    closures = b.alloca(closure, size=ir.Constant(I64, MAX_THREADS))
    handles = b.alloca(I64, size=ir.Constant(I64, MAX_THREADS))
    started = b.alloca(ir.IntType(1), size=ir.Constant(I64, MAX_THREADS))

    def bound(t):
        return b.sdiv(b.mul(t, n), k)

    with for_range(b, ir.Constant(I64, 1), k) as t:
        slot = b.gep(closures, [t])
        for field, value in enumerate((task, ctx, bound(t), bound(b.add(t, ir.Constant(I64, 1))))):
            b.store(value, b.gep(slot, [ir.Constant(I32, 0), ir.Constant(I32, field)]))
        rc = b.call(pthread_create, [b.gep(handles, [t]), ir.Constant(I8P, None), worker,
                                     b.bitcast(slot, I8P)])
        ok = b.icmp_signed("==", rc, ir.Constant(I32, 0))
        b.store(ok, b.gep(started, [t]))
        with b.if_then(b.not_(ok)):
            b.call(task, [ctx, bound(t), bound(b.add(t, ir.Constant(I64, 1)))])
    b.call(task, [ctx, ir.Constant(I64, 0), bound(ir.Constant(I64, 1))])
    with for_range(b, ir.Constant(I64, 1), k) as t:
        with b.if_then(b.load(b.gep(started, [t]))):
            b.call(pthread_join, [b.load(b.gep(handles, [t])), ir.Constant(I8P.as_pointer(), None)])
    b.ret_void()
    return fn


def _worker(module: ir.Module, closure: ir.Type) -> ir.Function:
    fn = ir.Function(module, ir.FunctionType(I8P, [I8P]), "xlapy_parallel_worker")
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    c = b.bitcast(fn.args[0], closure.as_pointer())
    fields = [b.load(b.gep(c, [ir.Constant(I32, 0), ir.Constant(I32, i)])) for i in range(4)]
    b.call(fields[0], fields[1:])
    b.ret(ir.Constant(I8P, None))
    return fn


def _declare(module: ir.Module, name: str, ret: ir.Type, args: list) -> ir.Function:
    if name in module.globals:
        return module.globals[name]
    return ir.Function(module, ir.FunctionType(ret, args), name)


def task_wrapper(module: ir.Module, kernel: ir.Function, n_pointers: int) -> ir.Function:
    """`void task(i8* ctx, i64 begin, i64 end)` calling `kernel` with the pointers
    stored at ctx (an array of i8*), for `parallel_for`."""
    fn = ir.Function(module, TASK_TYPE, kernel.name + ".task")
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    table = b.bitcast(fn.args[0], T.I8P.as_pointer())
    pointers = [b.load(b.gep(table, [ir.Constant(T.I32, i)])) for i in range(n_pointers)]
    b.call(kernel, [*pointers, fn.args[1], fn.args[2]])
    b.ret_void()
    return fn
