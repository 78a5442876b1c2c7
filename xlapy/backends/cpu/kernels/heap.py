"""C library calls from emitted kernels: declarations, and malloc'd scratch.

Kernels whose scratch depends on runtime sizes (GEMM packing, sort merges)
take it from `malloc`; every caller checks for null and has a path that
needs no memory, so an allocation failure never fails an execution.
"""

from __future__ import annotations

import llvmlite.ir as ir

from xlapy.codegen.loops import const

I8P = ir.IntType(8).as_pointer()
I64 = ir.IntType(64)
ALIGN = 64
"""Bytes: a cache line, and a 512-bit vector."""


def libc(module: ir.Module, name: str, ret: ir.Type, args: list) -> ir.Function:
    """The C function `name`, declared in `module` once."""
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, args), name)
    return fn


def aligned_malloc(b: ir.IRBuilder, count: ir.Value, element: ir.Type):
    """(raw i8* to free, T* aligned to 64 bytes) for `count` elements; raw may be null."""
    malloc = libc(b.module, "malloc", I8P, [I64])
    size = b.mul(count, const(_bytes(element)))
    raw = b.call(malloc, [b.add(size, const(ALIGN))])
    address = b.and_(b.add(b.ptrtoint(raw, I64), const(ALIGN - 1)), const(-ALIGN))
    return raw, b.inttoptr(address, element.as_pointer())


def free(b: ir.IRBuilder, raw: ir.Value) -> None:
    """free(raw); null is allowed."""
    b.call(libc(b.module, "free", ir.VoidType(), [I8P]), [raw])


def _bytes(element: ir.Type) -> int:
    if isinstance(element, ir.IntType):
        return max(1, element.width // 8)
    return {ir.HalfType: 2, ir.FloatType: 4, ir.DoubleType: 8}[type(element)]
