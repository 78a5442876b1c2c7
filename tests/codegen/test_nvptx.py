"""The shared math library and elemental emitters, lowered for NVIDIA GPUs.

No GPU is needed: LLVM writes the PTX, and `ptxas` (where the CUDA toolkit is
installed) assembles it for sm_80 and sm_90, which is how CI checks GPU code.
"""

import llvmlite.ir as ir
import pytest

from xlapy.codegen import math as vmath
from xlapy.codegen import nvptx
from xlapy.errors import CompileError

needs_ptxas = pytest.mark.skipif(nvptx.ptxas() is None,
                                 reason="ptxas is not installed (CUDA toolkit)")
TYPES = {"f32": ir.FloatType(), "f64": ir.DoubleType()}


FUNCTIONS = sorted(vmath.UNARY) + sorted(vmath.BINARY)


def math_kernel(function: str, ftype: ir.Type) -> ir.Module:
    """y[i] = function(x[i]) (or function(x[i], x[i])) for i < n, a thread an element."""
    module = nvptx.new_module(f"{function}_kernel")
    pointer = ftype.as_pointer(nvptx.GLOBAL)
    fn = nvptx.kernel(module, "kernel", [pointer, pointer, ir.IntType(64)])
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    i = nvptx.global_thread_index(b)
    with b.if_then(b.icmp_signed("<", i, fn.args[2])):
        x = b.load(b.gep(fn.args[0], [i]))
        y = vmath.emit_binary(function, b, x, x) if function in vmath.BINARY \
            else vmath.emit_unary(function, b, x)
        b.store(y, b.gep(fn.args[1], [i]))
    b.ret_void()
    return module


@pytest.mark.parametrize("function", FUNCTIONS)
@pytest.mark.parametrize("dtype", sorted(TYPES))
def test_every_math_function_lowers_to_ptx_without_calls(function, dtype):
    ptx = nvptx.emit_ptx(math_kernel(function, TYPES[dtype]))
    assert ".entry kernel" in ptx
    assert "call" not in ptx and ".extern" not in ptx  # no libm on a GPU: all inline


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("function", FUNCTIONS)
@pytest.mark.parametrize("dtype", sorted(TYPES))
def test_ptxas_accepts_every_math_function(function, dtype, arch):
    nvptx.check_with_ptxas(nvptx.emit_ptx(math_kernel(function, TYPES[dtype]), arch), arch)


@needs_ptxas
def test_ptxas_refusal_is_a_compile_error():
    with pytest.raises(CompileError, match="ptxas refused"):
        nvptx.check_with_ptxas(".version 8.0\n.target sm_80\n.address_size 64\nnonsense;\n")
