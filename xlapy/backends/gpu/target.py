"""Where a GPU kernel runs: on the device (NVPTX), or emulated on the host.

The kernel emitters (`loop_kernel.py`, `reductions.py`) write a kernel once,
against this small interface: the thread and block coordinates, a barrier,
a warp shuffle, shared memory, and global constants. `Nvptx` lowers them to
PTX (special registers, `bar.sync`, `shfl.sync`, address spaces 1 and 3).
`HostEmulation` lowers the very same kernel for the CPU: the coordinates
become parameters and a wrapper walks the grid thread by thread, so the
kernels' index arithmetic, grid-stride loops and memory plan run on a machine
without a GPU. A barrier is then a no-op, so kernels that use barriers are
emulated with one thread per block (their launch says so: `Launch.barriers`).
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.backends.cpu import llvm_target
from xlapy.codegen import ir_types as T
from xlapy.codegen import nvptx

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
SHARED = 3
"""NVPTX's address space of a block's shared memory."""
WARP = 32


class Coordinates:
    """A thread's place in the launch, as i32 values: thread in block, block size,
    block in grid, grid size (one dimension: kernels compute their own 2-D split)."""

    def __init__(self, thread, block_size, block, grid_size):
        self.thread, self.block_size, self.block, self.grid_size = (
            thread, block_size, block, grid_size)

    def as_i64(self, b: ir.IRBuilder):
        return tuple(b.zext(v, _I64) for v in
                     (self.thread, self.block_size, self.block, self.grid_size))


class Nvptx:
    """Kernels for the device: PTX through LLVM's NVPTX backend."""

    name = "nvptx"

    def new_module(self, name: str) -> ir.Module:
        return nvptx.new_module(name)

    def kernel(self, module: ir.Module, name: str, n_pointers: int):
        """(function, builder in its body, pointer arguments, Coordinates)."""
        fn = nvptx.kernel(module, name, [T.I8P] * n_pointers)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        coords = Coordinates(*(nvptx.special_register(b, r)
                               for r in ("tid.x", "ntid.x", "ctaid.x", "nctaid.x")))
        return fn, b, list(fn.args), coords

    def barrier(self, b: ir.IRBuilder) -> None:
        _call(b, "llvm.nvvm.barrier0", ir.VoidType(), [])

    def shuffle_down(self, b: ir.IRBuilder, word: ir.Value, offset: int) -> ir.Value:
        """The i32 `word` of the lane `offset` above (all 32 lanes take part)."""
        return _call(b, "llvm.nvvm.shfl.sync.down.i32", _I32,
                     [ir.Constant(_I32, -1), word, ir.Constant(_I32, offset),
                      ir.Constant(_I32, 0x1F)])

    def shared_array(self, module: ir.Module, b: ir.IRBuilder, element: ir.Type, count: int,
                     name: str) -> ir.Value:
        """A generic pointer to `count` elements of block-shared memory."""
        g = _global(module, ir.ArrayType(element, count), name, SHARED, ir.Undefined)
        return b.addrspacecast(b.bitcast(g, element.as_pointer(SHARED)), element.as_pointer())

    def constant(self, module: ir.Module, b: ir.IRBuilder, data: bytes, name: str) -> ir.Value:
        """A generic i8* to read-only `data` in device memory."""
        g = _constant_bytes(module, data, name, nvptx.GLOBAL)
        return b.addrspacecast(b.bitcast(g, T.I8.as_pointer(nvptx.GLOBAL)), T.I8P)


class HostEmulation:
    """The same kernels for the host CPU, one emulated thread after another.

    Each kernel takes its coordinates as four i32 parameters after its
    pointers; `NAME.launch(i8** pointers, i32 grid, i32 block)` calls it for
    every block and thread in order.
    """

    name = "host"

    def new_module(self, name: str) -> ir.Module:
        return llvm_target.new_module(name)

    def kernel(self, module: ir.Module, name: str, n_pointers: int):
        fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [T.I8P] * n_pointers +
                                                 [_I32] * 4), name)
        fn.linkage = "internal"
        _launcher(module, fn, name, n_pointers)
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        return fn, b, list(fn.args[:n_pointers]), Coordinates(*fn.args[n_pointers:])

    def barrier(self, b: ir.IRBuilder) -> None:
        """Nothing to wait for: a block that synchronises is emulated with one thread."""

    def shuffle_down(self, b: ir.IRBuilder, word: ir.Value, offset: int) -> ir.Value:
        """One thread per warp: the word itself (callers mask lanes past the block)."""
        return word

    def shared_array(self, module: ir.Module, b: ir.IRBuilder, element: ir.Type, count: int,
                     name: str) -> ir.Value:
        g = _global(module, ir.ArrayType(element, count), name, 0, None)
        return b.bitcast(g, element.as_pointer())

    def constant(self, module: ir.Module, b: ir.IRBuilder, data: bytes, name: str) -> ir.Value:
        return b.bitcast(_constant_bytes(module, data, name, 0), T.I8P)


def _global(module: ir.Module, t: ir.Type, name: str, addrspace: int, initial,
            align: int = 8) -> ir.GlobalVariable:
    """An internal global of `t` under a fresh name derived from `name`."""
    g = ir.GlobalVariable(module, t, module.get_unique_name(name), addrspace=addrspace)
    g.linkage = "internal"
    g.initializer = ir.Constant(t, initial)
    g.align = align
    return g


def _constant_bytes(module: ir.Module, data: bytes, name: str,
                    addrspace: int) -> ir.GlobalVariable:
    g = _global(module, ir.ArrayType(T.I8, max(len(data), 1)), name, addrspace,
                bytearray(data or b"\0"), align=64)
    g.global_constant = True
    return g


def launcher_name(kernel_name: str) -> str:
    return f"{kernel_name}.launch"


def _launcher(module: ir.Module, kernel: ir.Function, name: str, n_pointers: int) -> None:
    """`void NAME.launch(i8** pointers, i32 grid, i32 block)`: every thread in turn."""
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [T.I8P.as_pointer(), _I32, _I32]),
                     launcher_name(name))
    table, grid, block = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    pointers = [b.load(b.gep(table, [ir.Constant(_I32, i)])) for i in range(n_pointers)]
    blocks = _CountLoop(b, grid, "block")
    threads = _CountLoop(b, block, "thread")
    b.call(kernel, [*pointers, threads.index, block, blocks.index, grid])
    threads.close(b)
    blocks.close(b)
    b.ret_void()


class _CountLoop:
    """for index in range(n), on i32."""

    def __init__(self, b: ir.IRBuilder, n: ir.Value, name: str):
        self.pre = b.block
        self.body = b.function.append_basic_block(f"{name}.body")
        self.done = b.function.append_basic_block(f"{name}.done")
        self.n = n
        b.cbranch(b.icmp_signed(">", n, ir.Constant(_I32, 0)), self.body, self.done)
        b.position_at_end(self.body)
        self.index = b.phi(_I32, name=name)
        self.index.add_incoming(ir.Constant(_I32, 0), self.pre)

    def close(self, b: ir.IRBuilder) -> None:
        following = b.add(self.index, ir.Constant(_I32, 1))
        self.index.add_incoming(following, b.block)
        b.cbranch(b.icmp_signed("<", following, self.n), self.body, self.done)
        b.position_at_end(self.done)


def _call(b: ir.IRBuilder, symbol: str, ret: ir.Type, args: list) -> ir.Value:
    module = b.module
    fn = module.globals.get(symbol) or ir.Function(
        module, ir.FunctionType(ret, [a.type for a in args]), symbol)
    return b.call(fn, args)
