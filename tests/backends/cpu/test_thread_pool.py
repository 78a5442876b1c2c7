"""The worker pool behind parallel loops: every element of a loop runs exactly
once, whatever the thread count, when jobs follow each other quickly, when a
task runs a parallel loop itself, when Python threads run loops at once (the
pool is taken: those spawn threads), and in a child process after fork."""

from __future__ import annotations

import ctypes
import multiprocessing
import threading

import llvmlite.ir as ir
import numpy as np
import pytest

from xlapy.backends.cpu import llvm_target
from xlapy.backends.cpu.parallel import TASK_TYPE, parallel_for
from xlapy.backends.cpu.thread_pool import CHUNKS_PER_THREAD
from xlapy.codegen.loops import for_range

I8P = ir.IntType(8).as_pointer()
I64 = ir.IntType(64)
_RUN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


def _task(module: ir.Module, name: str, inner: ir.Function | None) -> ir.Function:
    """task(ctx = i64* out, begin, end): out[i] += i + 1, or with `inner` each i runs
    a nested parallel loop over a row of 8 at out[8 * n_rows + ...] (ctx[-1] = rows)."""
    fn = ir.Function(module, TASK_TYPE, name)
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    out = b.bitcast(fn.args[0], I64.as_pointer())
    with for_range(b, fn.args[1], fn.args[2]) as i:
        if inner is None:
            slot = b.gep(out, [i])
            b.store(b.add(b.load(slot), b.add(i, ir.Constant(I64, 1))), slot)
        else:
            row = b.bitcast(b.gep(out, [b.mul(i, ir.Constant(I64, 8))]), I8P)
            b.call(parallel_for(module), [inner, row, ir.Constant(I64, 8), ir.Constant(I64, 2)])
    b.ret_void()
    return fn


_KEEP = []
"""Objects carrying their own pool: their workers run their code until the process
ends, so they are never freed (as an ahead-of-time object stays loaded)."""


def _compiled(shared_pool: bool, nested: bool):
    module = llvm_target.new_module("pool_test")
    module.xlapy_inline_runtime = not shared_pool
    task = _task(module, "add_index", None)
    if nested:
        task = _task(module, "rows", task)
    run = ir.Function(module, ir.FunctionType(ir.VoidType(), [I8P, I64, I64]), "run")
    b = ir.IRBuilder(run.append_basic_block("entry"))
    b.call(parallel_for(module), [task, *run.args])
    b.ret_void()
    loaded = llvm_target.LoadedObject(llvm_target.compile_to_object(module))
    fn = _RUN(loaded.address("run"))
    fn.loaded = loaded
    if not shared_pool:
        _KEEP.append(loaded)
    return fn


@pytest.fixture(scope="module", params=[False, True], ids=["inline", "shared"])
def run(request):
    return _compiled(request.param, nested=False)


def _expected(n: int, times: int = 1) -> np.ndarray:
    return times * np.arange(1, n + 1, dtype=np.int64)


@pytest.mark.parametrize("threads", [1, 2, 3, 8, 300])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 1000])
def test_every_element_runs_once(run, n, threads):
    out = np.zeros(n, np.int64)
    run(out.ctypes.data, n, threads)
    np.testing.assert_array_equal(out, _expected(n))


def _chunk_counter():
    """run(out, n, threads) on an inline pool whose task adds 1 to out[0] per chunk
    (atomically) and to out[1 + i] per element."""
    module = llvm_target.new_module("pool_chunks")
    module.xlapy_inline_runtime = True
    task = ir.Function(module, TASK_TYPE, "count")
    b = ir.IRBuilder(task.append_basic_block("entry"))
    out = b.bitcast(task.args[0], I64.as_pointer())
    b.atomic_rmw("add", out, ir.Constant(I64, 1), "seq_cst")
    with for_range(b, task.args[1], task.args[2]) as i:
        slot = b.gep(out, [b.add(i, ir.Constant(I64, 1))])
        b.store(b.add(b.load(slot), ir.Constant(I64, 1)), slot)
    b.ret_void()
    run = ir.Function(module, ir.FunctionType(ir.VoidType(), [I8P, I64, I64]), "run")
    b = ir.IRBuilder(run.append_basic_block("entry"))
    b.call(parallel_for(module), [task, *run.args])
    b.ret_void()
    loaded = llvm_target.LoadedObject(llvm_target.compile_to_object(module))
    _KEEP.append(loaded)
    return _RUN(loaded.address("run"))


@pytest.mark.parametrize("n", [3, 8, 1000])
def test_the_range_is_cut_into_chunks_threads_claim(n):
    """A few chunks per thread, so a worker that wakes late still finds some: every
    element once, in min(n, threads * CHUNKS_PER_THREAD) chunks."""
    run = _chunk_counter()
    for _ in range(3):
        out = np.zeros(n + 1, np.int64)
        run(out.ctypes.data, n, 2)
        np.testing.assert_array_equal(out[1:], np.ones(n, np.int64))
        assert out[0] == min(n, 2 * CHUNKS_PER_THREAD)


def test_many_jobs_in_quick_succession(run):
    out = np.zeros(97, np.int64)
    for _ in range(5000):
        run(out.ctypes.data, out.size, 2)
    np.testing.assert_array_equal(out, _expected(97, 5000))


def test_a_task_running_a_parallel_loop():
    nested = _compiled(shared_pool=True, nested=True)
    out = np.zeros(8 * 6, np.int64)
    nested(out.ctypes.data, 6, 2)
    np.testing.assert_array_equal(out, np.tile(_expected(8), 6))


def test_python_threads_running_loops_at_once(run):
    outs = [np.zeros(501, np.int64) for _ in range(4)]

    def work(out):
        for _ in range(300):
            run(out.ctypes.data, out.size, 2)

    threads = [threading.Thread(target=work, args=(out,)) for out in outs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for out in outs:
        np.testing.assert_array_equal(out, _expected(501, 300))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork")
def test_a_forked_child_runs_loops(run):
    out = np.zeros(64, np.int64)
    run(out.ctypes.data, out.size, 2)       # the parent's pool is up
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_forked, args=(queue, run))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    assert queue.get(timeout=5) == _expected(64).tolist()


def _forked(queue, run) -> None:
    out = np.zeros(64, np.int64)
    run(out.ctypes.data, out.size, 2)       # workers did not come along: spawns
    queue.put(out.tolist())
