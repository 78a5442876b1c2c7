"""The soft-float builtins against NumPy's conversions, and the load-time symbol check.

Each builtin is called from a small JIT-compiled loop over an array (ctypes
has no half type), so the calls go through the same symbol resolution as
generated code."""

import ctypes

import llvmlite.ir as ir
import numpy as np
import pytest

import xlapy
from xlapy.backends.cpu import builtins
from xlapy.backends.cpu.llvm_target import LoadedObject, compile_to_object, new_module
from xlapy.backends.cpu.object_file import undefined_symbols
from xlapy.codegen import ir_types as T
from xlapy.errors import CompileError


def _loop_over(name: str, source, target):
    """A compiled `void run(source*, target*, i64 n)` applying builtin `name`."""
    module = new_module(f"call_{name}")
    callee = ir.Function(module, ir.FunctionType(target, [source]), name)
    run = ir.Function(module, ir.FunctionType(ir.VoidType(), [source.as_pointer(),
                                                              target.as_pointer(), T.I64]), "run")
    entry, body, done = (run.append_basic_block(n) for n in ("entry", "body", "done"))
    b = ir.IRBuilder(entry)
    b.cbranch(b.icmp_signed(">", run.args[2], ir.Constant(T.I64, 0)), body, done)
    b.position_at_end(body)
    i = b.phi(T.I64)
    i.add_incoming(ir.Constant(T.I64, 0), entry)
    value = b.call(callee, [b.load(b.gep(run.args[0], [i]))])
    b.store(value, b.gep(run.args[1], [i]))
    nxt = b.add(i, ir.Constant(T.I64, 1))
    i.add_incoming(nxt, body)
    b.cbranch(b.icmp_signed("<", nxt, run.args[2]), body, done)
    b.position_at_end(done)
    b.ret_void()
    loaded = LoadedObject(compile_to_object(module, opt_level=0))
    function = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(
        loaded.address("run"))

    def apply(values: np.ndarray, out_dtype) -> np.ndarray:
        values = np.ascontiguousarray(values)
        out = np.empty(values.shape, out_dtype)
        function(values.ctypes.data, out.ctypes.data, values.size)
        return out
    apply.keep = loaded
    return apply


def _bits_equal(actual: np.ndarray, expected: np.ndarray) -> None:
    """Equal bit patterns, except that any NaN matches any quiet NaN of the same sign."""
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(actual), nan)
    np.testing.assert_array_equal(np.signbit(actual[nan]), np.signbit(expected[nan]))
    view = {2: np.uint16, 4: np.uint32}[expected.dtype.itemsize]
    np.testing.assert_array_equal(actual[~nan].view(view), expected[~nan].view(view))


def _halfway_cases(dtype) -> np.ndarray:
    """Every f16 value, the midpoints between neighbours and values just beside
    them, the overflow threshold, and specials, as `dtype`."""
    halves = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    halves = np.sort(halves[np.isfinite(halves)].astype(np.float64))
    mids = (halves[:-1] + halves[1:]) / 2
    values = np.concatenate([halves, mids, np.nextafter(mids, np.inf),
                             np.nextafter(mids, -np.inf), [65519.99, 65520.0, 65536.0, 1e300,
                                                           -1e300, 1e-300, np.inf, -np.inf,
                                                           np.nan, -np.nan, 2.0 ** -25,
                                                           2.0 ** -26, 3 * 2.0 ** -26]])
    with np.errstate(over="ignore"):
        return values.astype(dtype)


def test_extend_half_to_float_is_exact_for_every_half():
    apply = _loop_over("__extendhfsf2", T.F16, T.F32)
    halves = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    _bits_equal(apply(halves, np.float32), halves.astype(np.float32))


@pytest.mark.parametrize("name, source, dtype", [("__truncsfhf2", T.F32, np.float32),
                                                 ("__truncdfhf2", T.F64, np.float64)])
def test_truncation_to_half_rounds_to_nearest_even(name, source, dtype):
    apply = _loop_over(name, source, T.F16)
    rng = np.random.default_rng(0)
    random = rng.standard_normal(200_000) * np.exp2(rng.integers(-30, 20, 200_000))
    values = np.concatenate([_halfway_cases(dtype), random.astype(dtype)])
    with np.errstate(over="ignore"):
        expected = values.astype(np.float16)   # NumPy rounds once, to nearest even
    _bits_equal(apply(values, np.float16), expected)


def test_f16_code_runs_without_libgcc():
    """f16 power is computed in f64 and rounded straight to f16: a call to
    __truncdfhf2, which only the builtins provide in a bare Python process."""
    text = """HloModule p
ENTRY main {
  a = f16[3] parameter(0)
  b = f16[3] parameter(1)
  ROOT c = f16[3] power(a, b)
}"""
    a, b = np.float16([0.5, 2.0, 3.0]), np.float16([0.25, 3.0, -1.0])
    out = xlapy.execute(text, [a, b], backend="cpu")[0]
    np.testing.assert_array_equal(out, np.power(a.astype(np.float64),
                                                b.astype(np.float64)).astype(np.float16))


def test_an_unresolvable_call_is_a_compile_error_not_a_crash():
    module = new_module("calls_nothing")
    missing = ir.Function(module, ir.FunctionType(ir.VoidType(), []), "xlapy_no_such_symbol")
    f = ir.Function(module, ir.FunctionType(ir.VoidType(), []), "f")
    b = ir.IRBuilder(f.append_basic_block("entry"))
    b.call(missing, [])
    b.ret_void()
    obj = compile_to_object(module)
    assert "xlapy_no_such_symbol" in undefined_symbols(obj)
    with pytest.raises(CompileError, match="xlapy_no_such_symbol"):
        LoadedObject(obj)


def test_undefined_symbols_rejects_what_is_not_elf():
    with pytest.raises(ValueError, match="ELF"):
        undefined_symbols(b"MZ not an object")


def test_ahead_of_time_objects_carry_weak_builtins():
    module = new_module("aot")
    builtins.add_to(module, linkage="weak")
    assert all(module.globals[name].linkage == "weak" for name in builtins.NAMES)
