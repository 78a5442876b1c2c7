"""The soft-float conversions LLVM calls by name, written in IR.

Where a CPU has no instruction for a conversion, LLVM's code generator emits
a call to a compiler-rt/libgcc function: `__truncdfhf2` (f64 -> f16, on x86
even with F16C), and `__extendhfsf2` / `__truncsfhf2` (f16 <-> f32) on CPUs
without F16C. A Python process has no compiler runtime of its own: whether
libgcc_s happens to be loaded (by another extension, say JAX's) decided
whether such code ran or jumped to address zero. These definitions make the
code independent of that: the JIT registers them once per process
(`ensure`), ahead-of-time objects carry weak copies (`add_to`).

The bodies use integer arithmetic and one f32 addition (f64 -> f16 first
rounds to f32 *to odd*, as `convert` does), so LLVM cannot turn them back
into the calls they implement. Rounding is to nearest even, like
the hardware's; NaNs stay (quiet) NaNs with the sign kept.
"""

from __future__ import annotations

import llvmlite.binding as llvm
import llvmlite.ir as ir

from xlapy.backends.cpu import llvm_target, runtime_library
from xlapy.backends.cpu.fork_safe import ForkSafeLock
from xlapy.codegen import ir_types as T
from xlapy.codegen.elemental_extra import f64_to_f32_odd

_LOCK = ForkSafeLock()
_LOADED: list = []   # the LoadedObject holding the JIT's copies, kept alive


def _f32_to_f16_bits(b: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """f32 -> f16 bits (i16), rounded to nearest even."""
    bits = b.bitcast(value, T.I32)
    sign = b.and_(b.lshr(bits, _i32(16)), _i32(0x8000))
    magnitude = b.and_(bits, _i32(0x7FFFFFFF))
    # NaN: quiet, the top of the payload kept
    nan = b.or_(_i32(0x7E00), b.and_(b.lshr(magnitude, _i32(13)), _i32(0x3FF)))
    # normal f16: rebias the exponent (127 -> 15), round the 13 dropped bits to even
    rebased = b.sub(magnitude, _i32(112 << 23))
    odd = b.and_(b.lshr(rebased, _i32(13)), _i32(1))
    normal = b.lshr(b.add(rebased, b.add(_i32(0xFFF), odd)), _i32(13))
    # subnormal f16 (and zero): adding 0.5 leaves |x| rounded to a multiple of 2^-24
    # in the low mantissa bits, by the FPU's own rounding to nearest even
    absolute = b.bitcast(magnitude, T.F32)
    shifted = b.bitcast(b.fadd(absolute, ir.Constant(T.F32, 0.5)), T.I32)
    subnormal = b.sub(shifted, _i32(0x3F000000))
    result = b.select(b.icmp_unsigned("<", magnitude, _i32(0x38800000)), subnormal, normal)
    result = b.select(b.icmp_unsigned(">=", magnitude, _i32(0x477FF000)), _i32(0x7C00),
                      result)   # 65520 and above round to infinity
    result = b.select(b.icmp_unsigned(">", magnitude, _i32(0x7F800000)), nan, result)
    return b.trunc(b.or_(result, sign), T.I16)


def _f16_bits_to_f32(b: ir.IRBuilder, half_bits: ir.Value) -> ir.Value:
    """f16 bits (i16) -> f32, exactly."""
    h = b.zext(half_bits, T.I32)
    sign = b.shl(b.and_(h, _i32(0x8000)), _i32(16))
    exponent = b.and_(b.lshr(h, _i32(10)), _i32(0x1F))
    mantissa = b.and_(h, _i32(0x3FF))
    normal = b.or_(b.shl(b.add(exponent, _i32(112)), _i32(23)), b.shl(mantissa, _i32(13)))
    special = b.or_(_i32(0x7F800000), b.shl(mantissa, _i32(13)))      # inf, NaN
    scaled = b.fmul(b.uitofp(mantissa, T.F32), ir.Constant(T.F32, 2.0 ** -24))
    subnormal = b.bitcast(scaled, T.I32)                               # and zero
    magnitude = b.select(b.icmp_unsigned("==", exponent, _i32(0)), subnormal, normal)
    magnitude = b.select(b.icmp_unsigned("==", exponent, _i32(0x1F)), special, magnitude)
    return b.bitcast(b.or_(magnitude, sign), T.F32)


_BODIES = {
    "__truncsfhf2": (T.F16, T.F32, lambda b, x: b.bitcast(_f32_to_f16_bits(b, x), T.F16)),
    "__truncdfhf2": (T.F16, T.F64,
                     lambda b, x: b.bitcast(_f32_to_f16_bits(b, f64_to_f32_odd(b, x)), T.F16)),
    "__extendhfsf2": (T.F32, T.F16, lambda b, x: _f16_bits_to_f32(b, b.bitcast(x, T.I16))),
}
"""name -> (result type, argument type, body)."""
NAMES = frozenset(_BODIES)


def add_to(module: ir.Module, linkage: str = "external") -> None:
    """Define every builtin in `module` (ahead-of-time objects: `linkage="weak"`,
    so a program may link several objects, or libgcc's copies, beside them)."""
    for name, (result, argument, body) in _BODIES.items():
        if name in module.globals:
            continue
        function = ir.Function(module, ir.FunctionType(result, [argument]), name)
        function.linkage = linkage
        b = ir.IRBuilder(function.append_basic_block("entry"))
        b.ret(body(b, function.args[0]))


def _build() -> bytes:
    module = llvm_target.new_module("xlapy_builtins")
    add_to(module)
    return llvm_target.compile_to_object(module)


def ensure() -> None:
    """Register the builtins with the JIT's symbol table, once per process."""
    with _LOCK:
        if _LOADED:
            return
        compiled = runtime_library.cached_object("builtins", _build)
        loaded = llvm_target.LoadedObject(compiled, check_symbols=False)
        for name in _BODIES:
            llvm.add_symbol(name, loaded.address(name))
        _LOADED.append(loaded)


def _i32(value: int) -> ir.Constant:
    return ir.Constant(T.I32, value)
