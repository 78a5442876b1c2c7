"""A persistent pool of worker threads behind `parallel_for`, in LLVM IR.

Starting a thread per chunk costs tens of microseconds, more than a whole
kernel of a small model's training step. The pool's workers are started on
first use and stay: between jobs each spins briefly on the job counter (a
kernel that follows within microseconds finds it awake), then sleeps on a
condition variable. One job runs at a time:

    caller                                  each worker
    lock; publish task, ctx, n, threads;    sees the generation change
      generation += 1; broadcast; unlock    lock; read the job; unlock
    claim and run chunks                    claim and run chunks
    wait until `remaining` is 0             the last chunk to finish wakes the caller

Chunks are claimed, not assigned: when a worker is slow to wake (another
process holds its core, or its idle core takes milliseconds to come back, as
a virtual machine's can), the caller runs its chunk instead of waiting. So
that a late or slowed worker still shares the work, the range is cut into
CHUNKS_PER_THREAD chunks per thread: a sum over 2^24 elements on 2 threads,
with another process busy on one of the 2 cores, took 13.4 ms (median) as 2
chunks and 10-12 ms as 8. Callers whose chunks must stay one per thread (a
GEMM's bands each pack an operand) pass n = threads.

Whenever the pool cannot take a job it is run the old way (`spawn`: a
thread per chunk, joined): while another job holds the pool (a parallel
loop inside a task, or two Python threads executing at once), or if the pool
could not be set up. A child process after `fork` sets up a pool of its own
at its first parallel loop (the parent's workers did not come along), so a
forked worker runs as fast as its parent. Worker threads that fail to start
shrink the job, never fail it. The JIT shares one pool per process
(`runtime_library`), never freed; an ahead-of-time object carries its own,
and must then stay loaded while the process runs (its workers live in its
code).
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.backends.cpu.kernels.heap import libc
from xlapy.backends.cpu.openmp_pool import try_openmp

I8P = ir.IntType(8).as_pointer()
I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTHREAD_BYTES = 128
"""Room for a pthread mutex or condition variable on any platform we target."""
SPIN = 4000
"""Polls, each after a `pause`, a waiting thread makes first: ~100 us."""
YIELDS = 40000
"""Polls, each after a `sched_yield`, it makes next, before it sleeps: ~20 ms where
the core is free (OpenMP runtimes wait as long or longer: Intel's 200 ms), and no
CPU taken from a thread that wants it. A worker woken from its sleep starts
late: tens of microseconds on bare metal, but 5 ms and more on this 2-core
virtual machine, whose idle core the host takes back; with 1 ms here a sum of
2^24 elements 20 ms after the last took 11.5 ms (median) instead of 5.7, the
caller running every chunk; with ~20 ms, 6.9. An eager or lazily recorded
loop, or Python between steps, then finds the workers awake."""
MAX_WORKERS = 255
CHUNKS_PER_THREAD = 4
"""Chunks the range is cut into per thread of a job (see the module docstring)."""


def const(value: int, type_: ir.IntType = I64) -> ir.Constant:
    return ir.Constant(type_, value)


class _Pool:
    """The pool's globals in one module (internal, zero-initialised)."""

    def __init__(self, module: ir.Module, prefix: str, task_type: ir.FunctionType):
        self.module = module
        opaque = ir.ArrayType(I64, PTHREAD_BYTES // 8)
        self.mutex = self._global(f"{prefix}.mutex", opaque)
        self.work = self._global(f"{prefix}.work", opaque)
        self.done = self._global(f"{prefix}.done", opaque)
        self.state = self._global(f"{prefix}.state", I32)   # 0 new, 1 ready, 2 unusable
        self.busy = self._global(f"{prefix}.busy", I32)
        self.pid = self._global(f"{prefix}.pid", I32)
        self.workers = self._global(f"{prefix}.workers", I64)
        self.generation = self._global(f"{prefix}.generation", I64)
        self.remaining = self._global(f"{prefix}.remaining", I64)   # chunks not finished
        self.next = self._global(f"{prefix}.next", I64)             # tag << 32 | next chunk
        self.seen = self._global(f"{prefix}.seen", ir.ArrayType(I64, MAX_WORKERS + 1))
        self.task = self._global(f"{prefix}.task", task_type.as_pointer())
        self.ctx = self._global(f"{prefix}.ctx", I8P)
        self.n = self._global(f"{prefix}.n", I64)
        self.chunks = self._global(f"{prefix}.chunks", I64)

    def _global(self, name: str, type_: ir.Type) -> ir.GlobalVariable:
        g = ir.GlobalVariable(self.module, type_, name)
        g.linkage = "internal"
        g.initializer = ir.Constant(type_, None)
        g.align = 64 if isinstance(type_, ir.ArrayType) else 8
        return g

    def opaque(self, b: ir.IRBuilder, g: ir.GlobalVariable) -> ir.Value:
        return b.bitcast(g, I8P)

    # -- libc -----------------------------------------------------------------------------
    def call(self, b: ir.IRBuilder, name: str, *args, ret: ir.Type = I32) -> ir.Value:
        return b.call(libc(self.module, name, ret, [a.type for a in args]), list(args))

    def lock(self, b):
        self.call(b, "pthread_mutex_lock", self.opaque(b, self.mutex))

    def unlock(self, b):
        self.call(b, "pthread_mutex_unlock", self.opaque(b, self.mutex))

    def wait(self, b, cond):
        self.call(b, "pthread_cond_wait", self.opaque(b, cond), self.opaque(b, self.mutex))

    def broadcast(self, b, cond):
        self.call(b, "pthread_cond_broadcast", self.opaque(b, cond))

    def yield_core(self, b):
        self.call(b, "sched_yield")

    def pause(self, b):
        if self.module.triple.startswith(("x86_64", "i686", "i386")):
            fn = self.module.globals.get("llvm.x86.sse2.pause")
            if fn is None:
                fn = ir.Function(self.module, ir.FunctionType(ir.VoidType(), []),
                                 "llvm.x86.sse2.pause")
            b.call(fn, [])


def _atomic_load(b: ir.IRBuilder, ptr) -> ir.Value:
    return b.load_atomic(ptr, "acquire", 8 if ptr.type.pointee == I64 else 4)


def _spin_until(b: ir.IRBuilder, pool: _Pool, ready) -> None:
    """Poll `ready()` (an i1 emitter) up to SPIN times pausing between polls, then
    up to YIELDS times yielding the core; falls through either way (the caller
    then checks again under the mutex)."""
    fn = b.function
    out = fn.append_basic_block("spin.out")
    for polls, wait in ((SPIN, pool.pause), (YIELDS, pool.yield_core)):
        loop = fn.append_basic_block("spin")
        again = fn.append_basic_block("spin.again")
        following_phase = fn.append_basic_block("spin.next")
        start = b.block
        b.branch(loop)
        b.position_at_end(loop)
        count = b.phi(I64, name="polls")
        count.add_incoming(const(0), start)
        b.cbranch(ready(), out, again)
        b.position_at_end(again)
        wait(b)
        following = b.add(count, const(1))
        count.add_incoming(following, again)
        b.cbranch(b.icmp_signed("<", following, const(polls)), loop, following_phase)
        b.position_at_end(following_phase)
    b.branch(out)
    b.position_at_end(out)


def _sleep_while(b: ir.IRBuilder, pool: _Pool, cond, waiting) -> None:
    """With the mutex held: cond_wait on `cond` while `waiting()` (an i1 emitter)."""
    fn = b.function
    check = fn.append_basic_block("sleep.check")
    sleep = fn.append_basic_block("sleep")
    out = fn.append_basic_block("sleep.out")
    b.branch(check)
    b.position_at_end(check)
    b.cbranch(waiting(), sleep, out)
    b.position_at_end(sleep)
    pool.wait(b, cond)
    b.branch(check)
    b.position_at_end(out)


def _bound(b: ir.IRBuilder, chunk, n, chunks):
    return b.sdiv(b.mul(chunk, n), chunks)


def _run_chunks(pool: _Pool, name: str) -> ir.Function:
    """void run(i64 tag, task*, i8* ctx, i64 n, i64 chunks): claim the chunks of job `tag`
    and run them until none is left. `next` holds (tag << 32 | next chunk), so a thread that
    read an old job can never claim a chunk of a newer one; the last chunk to finish
    wakes the caller."""
    task_ptr = pool.task.type.pointee
    fn = ir.Function(pool.module, ir.FunctionType(ir.VoidType(), [I64, task_ptr, I8P, I64, I64]),
                     name)
    fn.linkage = "internal"
    tag, task, ctx, n, chunks = fn.args
    blocks = {label: fn.append_basic_block(label) for label in ("entry", "claim", "try", "run",
                                                                 "done")}
    b = ir.IRBuilder(blocks["entry"])
    b.branch(blocks["claim"])
    b.position_at_end(blocks["claim"])
    current = _atomic_load(b, pool.next)
    chunk = b.and_(current, const(0xFFFFFFFF))
    ours = b.icmp_signed("==", b.lshr(current, const(32)), tag)
    b.cbranch(b.and_(ours, b.icmp_signed("<", chunk, chunks)), blocks["try"], blocks["done"])
    b.position_at_end(blocks["try"])
    swapped = b.cmpxchg(pool.next, current, b.add(current, const(1)), "acq_rel", "acquire")
    b.cbranch(b.extract_value(swapped, 1), blocks["run"], blocks["claim"])
    b.position_at_end(blocks["run"])
    b.call(task, [ctx, _bound(b, chunk, n, chunks),
                      _bound(b, b.add(chunk, const(1)), n, chunks)])
    before = b.atomic_rmw("sub", pool.remaining, const(1), "acq_rel")
    with b.if_then(b.icmp_signed("==", before, const(1))):
        pool.lock(b)
        pool.broadcast(b, pool.done)
        pool.unlock(b)
    b.branch(blocks["claim"])
    b.position_at_end(blocks["done"])
    b.ret_void()
    return fn


def _worker(pool: _Pool, name: str, run_chunks: ir.Function) -> ir.Function:
    """i8* worker(i8* index): serve jobs forever."""
    fn = ir.Function(pool.module, ir.FunctionType(I8P, [I8P]), name)
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    index = b.ptrtoint(fn.args[0], I64)
    seen_slot = b.gep(pool.seen, [const(0), index])
    serve = fn.append_basic_block("serve")
    b.branch(serve)
    b.position_at_end(serve)
    seen = b.load(seen_slot)
    _spin_until(b, pool, lambda: b.icmp_signed("!=", _atomic_load(b, pool.generation), seen))
    pool.lock(b)
    _sleep_while(b, pool, pool.work, lambda: b.icmp_signed("==", b.load(pool.generation), seen))
    generation = b.load(pool.generation)
    b.store(generation, seen_slot)
    task, ctx = b.load(pool.task), b.load(pool.ctx)
    n, chunks = b.load(pool.n), b.load(pool.chunks)
    pool.unlock(b)
    b.call(run_chunks, [_tag(b, generation), task, ctx, n, chunks])
    b.branch(serve)
    return fn


def _tag(b: ir.IRBuilder, generation) -> ir.Value:
    return b.and_(generation, const(0xFFFFFFFF))


def _ready(b: ir.IRBuilder, pool: _Pool) -> ir.Value:
    """Set the pool up on first use in this process (one thread wins; the others see
    it unusable for now and spawn); an i1: whether it is ready. In a child after
    fork the parent's pool is set up afresh: its workers did not come along, and
    its mutex, `busy` and counters are as some parent thread left them."""
    state = _atomic_load(b, pool.state)
    with b.if_then(b.icmp_signed("==", state, const(0, I32)), likely=False):
        _set_up(b, pool, const(0, I32))
    pid = pool.call(b, "getpid")
    state = _atomic_load(b, pool.state)
    inherited = b.and_(b.icmp_signed("==", state, const(1, I32)),
                       b.icmp_signed("!=", pid, b.load(pool.pid)))
    with b.if_then(inherited, likely=False):
        _set_up(b, pool, const(1, I32))
    ready = b.icmp_signed("==", _atomic_load(b, pool.state), const(1, I32))
    return b.and_(ready, b.icmp_signed("==", pid, b.load(pool.pid)))


def _set_up(b: ir.IRBuilder, pool: _Pool, expected: ir.Constant) -> None:
    """If this thread moves `state` from `expected` to 2 (unusable): initialise the
    mutex, condition variables and counters for this process, then state = 1."""
    won = b.extract_value(b.cmpxchg(pool.state, expected, const(2, I32), "acq_rel", "acquire"),
                          1)
    with b.if_then(won):
        null = ir.Constant(I8P, None)
        pool.call(b, "pthread_mutex_init", pool.opaque(b, pool.mutex), null)
        pool.call(b, "pthread_cond_init", pool.opaque(b, pool.work), null)
        pool.call(b, "pthread_cond_init", pool.opaque(b, pool.done), null)
        for counter in (pool.workers, pool.remaining, pool.next):
            b.store(const(0), counter)
        b.store(const(0, I32), pool.busy)
        b.store(pool.call(b, "getpid"), pool.pid)
        b.store_atomic(const(1, I32), pool.state, "release", 4)


def pool_parallel_for(module: ir.Module, name: str, task_type: ir.FunctionType,
                      spawn: ir.Function, linkage: str = "internal",
                      openmp: bool = False) -> ir.Function:
    """`void name(task*, i8* ctx, i64 n, i64 threads)` on a pool; `spawn` (same
    signature) runs the jobs the pool cannot take. With `openmp`, jobs run on an
    OpenMP team instead whenever one is shared with the process (`openmp_pool`)."""
    pool = _Pool(module, name, task_type)
    shared_team = try_openmp(module, task_type) if openmp else None
    run_chunks = _run_chunks(pool, f"{name}.run")
    worker = _worker(pool, f"{name}.worker", run_chunks)
    fn = ir.Function(module, spawn.function_type, name)
    fn.linkage = linkage
    task, ctx, n, threads = fn.args
    blocks = {label: fn.append_basic_block(label) for label in
              ("entry", "serial", "try_pool", "claim", "spawned", "pooled", "grow_check",
               "grow", "created", "grown")}
    b = ir.IRBuilder(blocks["entry"])
    handle = b.alloca(I64, name="handle")
    k = b.select(b.icmp_signed("<", threads, n), threads, n)
    k = b.select(b.icmp_signed(">", k, const(MAX_WORKERS + 1)), const(MAX_WORKERS + 1), k)
    b.cbranch(b.icmp_signed("<=", k, const(1)), blocks["serial"], blocks["try_pool"])

    b.position_at_end(blocks["serial"])
    b.call(task, [ctx, const(0), n])
    b.ret_void()

    b.position_at_end(blocks["try_pool"])
    if shared_team is not None:
        ran = b.call(shared_team, [task, ctx, n, k])
        with b.if_then(ran):
            b.ret_void()
    b.cbranch(_ready(b, pool), blocks["claim"], blocks["spawned"])
    b.position_at_end(blocks["claim"])
    taken = b.atomic_rmw("xchg", pool.busy, const(1, I32), "acquire")
    b.cbranch(b.icmp_signed("==", taken, const(0, I32)), blocks["pooled"], blocks["spawned"])
    b.position_at_end(blocks["spawned"])
    b.call(spawn, [task, ctx, n, k])
    b.ret_void()

    # Grow the pool to k - 1 workers (a failed start caps the job instead).
    b.position_at_end(blocks["pooled"])
    pool.lock(b)
    b.branch(blocks["grow_check"])
    b.position_at_end(blocks["grow_check"])
    have = b.load(pool.workers)
    b.cbranch(b.icmp_signed("<", b.add(have, const(1)), k), blocks["grow"], blocks["grown"])
    b.position_at_end(blocks["grow"])
    index = b.add(have, const(1))
    b.store(b.load(pool.generation), b.gep(pool.seen, [const(0), index]))
    started = pool.call(b, "pthread_create", handle, ir.Constant(I8P, None), worker,
                        b.inttoptr(index, I8P))
    b.cbranch(b.icmp_signed("==", started, const(0, I32)), blocks["created"], blocks["grown"])
    b.position_at_end(blocks["created"])
    pool.call(b, "pthread_detach", b.load(handle))
    b.store(index, pool.workers)
    b.branch(blocks["grow_check"])

    # Publish, run chunks, wait for the rest.
    b.position_at_end(blocks["grown"])
    most = b.add(b.load(pool.workers), const(1))
    k = b.select(b.icmp_signed("<", most, k), most, k)
    chunks = b.mul(k, const(CHUNKS_PER_THREAD))
    chunks = b.select(b.icmp_signed("<", n, chunks), n, chunks)
    b.store(task, pool.task)
    b.store(ctx, pool.ctx)
    b.store(n, pool.n)
    b.store(chunks, pool.chunks)
    generation = b.add(b.load(pool.generation), const(1))
    tag = _tag(b, generation)
    b.store_atomic(chunks, pool.remaining, "release", 8)
    b.store_atomic(b.shl(tag, const(32)), pool.next, "release", 8)
    b.store_atomic(generation, pool.generation, "release", 8)
    pool.broadcast(b, pool.work)
    pool.unlock(b)
    b.call(run_chunks, [tag, task, ctx, n, chunks])   # those no worker claims first, too
    _spin_until(b, pool, lambda: b.icmp_signed("==", _atomic_load(b, pool.remaining), const(0)))
    pool.lock(b)
    _sleep_while(b, pool, pool.done,
                 lambda: b.icmp_signed("!=", _atomic_load(b, pool.remaining), const(0)))
    pool.unlock(b)
    b.store_atomic(const(0, I32), pool.busy, "release", 4)
    b.ret_void()
    return fn
