"""One math function over an array, JIT-compiled: what the tests and the ULP
benchmark (`benchmarks/cpu_math_ulp.py`) run.

`MathLoop(name, dtype)` emits `void f(T* x, [T* y,] T* out, i64 n)` whose
body applies the scalar emitter, the shape in which the backend's fused loops
use it, so LLVM's loop vectoriser decides the vector width; with
`vector_width=w` the body instead applies the emitter to explicit <w x T>
values (the remainder, n mod w, is left untouched). `native_ldexp` forces
the scaling by powers of two one way (see `math.common.NATIVE_LDEXP`).
"""

from __future__ import annotations

import ctypes

import llvmlite.ir as ir
import numpy as np

from xlapy.backends.cpu import llvm_target
from xlapy.codegen.loops import for_range
from xlapy.codegen.math import BINARY, emit_binary, emit_unary
from xlapy.codegen.math.common import F32, F64, I64, NATIVE_LDEXP

_TYPES = {np.dtype(np.float32): F32, np.dtype(np.float64): F64}


class MathLoop:
    """A compiled loop applying HLO function `name` elementwise to float arrays."""

    def __init__(self, name: str, dtype, vector_width: int | None = None,
                 native_ldexp: bool | None = None):
        self.name = name
        self.dtype = np.dtype(dtype)
        self.binary = name in BINARY
        self.vector_width = vector_width
        module = llvm_target.new_module(f"xlapy_math_{name}")
        if native_ldexp is not None:
            setattr(module, NATIVE_LDEXP, native_ldexp)
        self._define(module)
        self.parsed = llvm_target.optimise(module)
        self._object = llvm_target.LoadedObject(llvm_target.emit_object(self.parsed))
        arity = 3 if self.binary else 2
        prototype = ctypes.CFUNCTYPE(None, *([ctypes.c_void_p] * arity), ctypes.c_int64)
        self._fn = prototype(self._object.address("kernel"))

    def _define(self, module: ir.Module) -> None:
        element = _TYPES[self.dtype]
        ptr = element.as_pointer()
        arity = 3 if self.binary else 2
        fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr] * arity + [I64]),
                         "kernel")
        for arg in fn.args[:arity]:
            arg.add_attribute("noalias")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        *inputs, out = fn.args[:arity]
        n = fn.args[arity]
        width = self.vector_width or 1
        value_type = element if width == 1 else ir.VectorType(element, width)
        count = n if width == 1 else b.sdiv(n, ir.Constant(I64, width))
        with for_range(b, 0, count) as i:
            index = i if width == 1 else b.mul(i, ir.Constant(I64, width))
            args = [b.load(self._at(b, p, index, value_type), align=element_bytes(element))
                    for p in inputs]
            y = (emit_binary(self.name, b, *args) if self.binary
                 else emit_unary(self.name, b, *args))
            b.store(y, self._at(b, out, index, value_type), align=element_bytes(element))
        b.ret_void()

    @staticmethod
    def _at(b, base, index, value_type):
        pointer = b.gep(base, [index], inbounds=True)
        return b.bitcast(pointer, value_type.as_pointer())

    def assembly(self) -> str:
        return llvm_target.emit_assembly(self.parsed)

    def __call__(self, *arrays: np.ndarray) -> np.ndarray:
        arrays = [np.ascontiguousarray(a, dtype=self.dtype) for a in arrays]
        out = np.zeros_like(arrays[0])
        self.run(*arrays, out=out)
        return out

    def run(self, *arrays: np.ndarray, out: np.ndarray) -> None:
        """Apply in place into `out` (contiguous arrays of this loop's dtype)."""
        self._fn(*[a.ctypes.data for a in arrays], out.ctypes.data, out.size)


def element_bytes(element: ir.Type) -> int:
    return 4 if element == F32 else 8
