"""Parallel loops on the OpenMP threads a framework already runs, in LLVM IR.

PyTorch runs its operations on libgomp's thread team, whose threads spin for
a while after each parallel region. A compiled graph called from PyTorch
(`torch.compile(backend="xlapy")`) that runs its loops on xlapy's own pool
shares the cores with those spinning threads: on two cores the backward
graph of an encoder layer took 11.5 ms inside `backward()` against 5.0 ms
alone. Running the loops on the same team instead turns the spinning into
work: the threads are already awake when the next kernel starts.

When the runtime pool's `xlapy_rt_openmp` global holds the address of
libgomp's `GOMP_parallel` (set by `runtime_library.share_openmp_threads`),
`try_openmp` runs a loop's chunks as one OpenMP parallel region: every team
thread claims chunks from a shared counter until none is left, and
`GOMP_parallel` returns when all are done. A process forked after the
address was set runs on xlapy's pool (libgomp's team did not come along);
a loop inside another region runs serially in that thread, as OpenMP's
nested regions do by default.
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.backends.cpu.kernels.heap import libc

I8P = ir.IntType(8).as_pointer()
I32 = ir.IntType(32)
I64 = ir.IntType(64)
ENTRY = "xlapy_rt_openmp"
"""Global i8*: libgomp's GOMP_parallel, or null (the pool's own threads run loops)."""
PID = "xlapy_rt_openmp_pid"
"""Global i32: the process that set ENTRY (a forked child must not use it)."""
_REGION = ir.FunctionType(ir.VoidType(), [I8P])
_GOMP_PARALLEL = ir.FunctionType(ir.VoidType(), [_REGION.as_pointer(), I8P, I32, I32])
"""void GOMP_parallel(void (*fn)(void *), void *data, unsigned threads, unsigned flags)"""


def _global(module: ir.Module, name: str, type_: ir.Type) -> ir.GlobalVariable:
    g = ir.GlobalVariable(module, type_, name)
    g.initializer = ir.Constant(type_, None)
    g.align = 8
    return g


def try_openmp(module: ir.Module, task_type: ir.FunctionType) -> ir.Function:
    """`i1 xlapy_rt_openmp_try(task*, i8* ctx, i64 n, i64 k)`: run the loop in k chunks
    on the OpenMP team and return true, or return false (nothing run) when no
    OpenMP runtime is shared with this process."""
    entry = _global(module, ENTRY, I8P)
    pid = _global(module, PID, I32)
    task_ptr = task_type.as_pointer()
    closure = ir.LiteralStructType([task_ptr, I8P, I64, I64, I64])   # task, ctx, n, k, next
    region = _region(module, closure)

    fn = ir.Function(module, ir.FunctionType(ir.IntType(1), [task_ptr, I8P, I64, I64]),
                     f"{ENTRY}_try")
    fn.linkage = "internal"
    task, ctx, n, k = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    shared = fn.append_basic_block("shared")
    ours = fn.append_basic_block("ours")
    run = fn.append_basic_block("run")
    parallel = b.load_atomic(entry, "acquire", 8)
    b.cbranch(b.icmp_unsigned("!=", parallel, ir.Constant(I8P, None)), shared, ours)

    b.position_at_end(shared)
    this = b.call(libc(module, "getpid", I32, []), [])
    b.cbranch(b.icmp_signed("==", this, b.load(pid)), run, ours)

    b.position_at_end(ours)
    b.ret(ir.Constant(ir.IntType(1), 0))

    b.position_at_end(run)
    data = b.alloca(closure)
    for field, value in enumerate((task, ctx, n, k, ir.Constant(I64, 0))):
        b.store(value, b.gep(data, [ir.Constant(I32, 0), ir.Constant(I32, field)]))
    gomp = b.bitcast(parallel, _GOMP_PARALLEL.as_pointer())
    b.call(gomp, [region, b.bitcast(data, I8P), b.trunc(k, I32), ir.Constant(I32, 0)])
    b.ret(ir.Constant(ir.IntType(1), 1))
    return fn


def _region(module: ir.Module, closure: ir.Type) -> ir.Function:
    """The body every team thread runs: claim chunk c, run [c*n/k, (c+1)*n/k), repeat."""
    fn = ir.Function(module, _REGION, f"{ENTRY}_region")
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    claim = fn.append_basic_block("claim")
    run = fn.append_basic_block("run")
    done = fn.append_basic_block("done")
    data = b.bitcast(fn.args[0], closure.as_pointer())

    def field(i):
        return b.gep(data, [ir.Constant(I32, 0), ir.Constant(I32, i)])

    task, ctx, n, k = (b.load(field(i)) for i in range(4))
    b.branch(claim)
    b.position_at_end(claim)
    chunk = b.atomic_rmw("add", field(4), ir.Constant(I64, 1), "monotonic")
    b.cbranch(b.icmp_signed("<", chunk, k), run, done)
    b.position_at_end(run)
    begin = b.sdiv(b.mul(chunk, n), k)
    end = b.sdiv(b.mul(b.add(chunk, ir.Constant(I64, 1)), n), k)
    b.call(task, [ctx, begin, end])
    b.branch(claim)
    b.position_at_end(done)
    b.ret_void()
    return fn
