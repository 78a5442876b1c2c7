"""The CPU backend's vectorised math functions: accuracy against a long double
reference, special values against the interpreter, vectorised code without
library calls, and explicit vector operands."""

from __future__ import annotations

import functools
import re

import llvmlite.ir as ir
import numpy as np
import pytest

import xlapy
from xlapy.backends.cpu.llvm_target import aot_target_machine, host_target, new_module
from xlapy.backends.cpu.math_jit import MathLoop
from xlapy.backends.cpu.math_reference import (
    has_extended,
    reference,
    samples,
    specials,
    ulp_error,
)
from xlapy.codegen.math import BINARY, UNARY, emit_unary
from xlapy.codegen.math.common import NATIVE_LDEXP

NAMES = list(UNARY) + list(BINARY)
DTYPES = [np.float32, np.float64]

BOUND = {name: (0.51, 1.1) for name in NAMES}
"""Max ULP error allowed per (f32, f64): the documented bounds, with a little room."""
BOUND.update({"erf": (0.51, 2.0), "tan": (0.51, 1.3), "atan2": (0.51, 2.5),
              "rsqrt": (0.51, 1.6)})
# The functions f32 computes natively in f32 (`math.float32`): their measured bounds
# over every f32 input (benchmarks/cpu_math_ulp.py --exhaustive), with a little room.
BOUND.update({"exponential": (1.02, 1.1), "exponential-minus-one": (1.28, 1.1),
              "log": (0.85, 1.1), "log-plus-one": (0.93, 1.1), "tanh": (1.47, 1.1),
              "logistic": (1.02, 1.1), "erf": (1.33, 2.0)})

N = 100_000


@functools.cache
def loop(name: str, dtype, vector_width: int | None = None) -> MathLoop:
    return MathLoop(name, dtype, vector_width)


def _id(value):
    return value.__name__ if isinstance(value, type) else str(value)


@pytest.mark.parametrize("dtype", DTYPES, ids=_id)
@pytest.mark.parametrize("name", NAMES)
def test_ulp_error_within_documented_bound(name, dtype):
    if dtype is np.float64 and not has_extended():
        pytest.skip("f64 reference needs 80-bit long double")
    x, y = samples(name, dtype, N, seed=7)
    args = [x] if y is None else [x, y]
    got = loop(name, dtype)(*args)
    want = reference(name, *[a.astype(np.float64) for a in args])
    error = ulp_error(got, want, dtype)
    worst = int(np.argmax(error))
    bound = BOUND[name][dtype is np.float64]
    assert error[worst] <= bound, (
        f"{name}({', '.join(repr(a[worst]) for a in args)}) = {got[worst]!r}, "
        f"reference {want[worst]!r}: {error[worst]:.2f} ULP > {bound}")


def _interpreter(name: str, args: list[np.ndarray]) -> np.ndarray:
    hlo_type = {np.float32: "f32", np.float64: "f64"}[args[0].dtype.type]
    shape = f"{hlo_type}[{args[0].size}]"
    params = "\n".join(f"  p{i} = {shape} parameter({i})" for i in range(len(args)))
    operands = ", ".join(f"p{i}" for i in range(len(args)))
    text = (f"HloModule m\n\nENTRY main {{\n{params}\n"
            f"  ROOT r = {shape} {name}({operands})\n}}\n")
    (out,) = xlapy.execute(text, args, backend="interpreter")
    return np.asarray(out)


@pytest.mark.parametrize("dtype", DTYPES, ids=_id)
@pytest.mark.parametrize("name", NAMES)
def test_special_values_match_the_interpreter(name, dtype):
    s = specials(dtype)
    args = [s] if name in UNARY else [np.repeat(s, s.size), np.tile(s, s.size)]
    got = loop(name, dtype)(*args)
    want = _interpreter(name, args)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    exact = (want == 0) | np.isinf(want)
    np.testing.assert_array_equal(got[exact], want[exact])
    np.testing.assert_array_equal(np.signbit(got[exact]), np.signbit(want[exact]))
    assert np.nanmax(ulp_error(got, want.astype(np.float64), dtype)) <= 4


@pytest.mark.parametrize("dtype", DTYPES, ids=_id)
def test_named_special_cases(dtype):
    inf, nan = np.inf, np.nan

    def check(name, args, expected):
        got = loop(name, dtype)(*[np.array(a, dtype) for a in args])
        np.testing.assert_array_equal(got, np.array(expected, dtype))
        np.testing.assert_array_equal(np.signbit(got), np.signbit(np.array(expected, dtype)))

    check("exponential", [[-inf, inf, -0.0, 1e-30]], [0, inf, 1, 1])
    check("log", [[0.0, -0.0, inf, 1.0]], [-inf, -inf, inf, 0])
    check("log-plus-one", [[-1.0, -0.0, 0.0, inf]], [-inf, -0.0, 0.0, inf])
    check("exponential-minus-one", [[-0.0, -inf, inf, 1e-30]], [-0.0, -1, inf, 1e-30])
    check("tanh", [[-0.0, inf, -inf, 30.0]], [-0.0, 1, -1, 1])
    check("logistic", [[-inf, inf, 0.0]], [0, 1, 0.5])
    check("erf", [[-0.0, inf, -inf, 10.0]], [-0.0, 1, -1, 1])
    check("sine", [[-0.0, 0.0]], [-0.0, 0.0])
    check("rsqrt", [[0.0, -0.0, inf, 4.0]], [inf, -inf, 0, 0.5])
    check("power", [[nan, 1.0, -2.0, -0.0, -0.0, 0.0, -1.0, -8.0],
                    [0.0, nan, 3.0, -3.0, -2.0, -1.0, inf, 1 / 3]],
          [1, 1, -8, -inf, inf, inf, 1, nan])
    for name in ("sine", "cosine", "tan"):
        assert np.isnan(loop(name, dtype)(np.array([inf, -inf, nan], dtype))).all()


def test_huge_arguments_of_sine_are_reduced_exactly():
    # Payne-Hanek: arguments far beyond Cody-Waite's range, against long double sinl.
    for dtype, top in ((np.float32, 127), (np.float64, 1023)):
        x = np.exp2(np.linspace(20, top, 4001)).astype(dtype) * np.float64(1.2345).astype(dtype)
        for name in ("sine", "cosine"):
            got = loop(name, dtype)(x)
            want = reference(name, x.astype(np.float64))
            assert ulp_error(got, want, dtype).max() <= BOUND[name][dtype is np.float64]


def test_subnormal_results_and_arguments():
    f64 = np.float64
    x = np.array([-740.0, -745.0, -746.0, -708.5])
    got = loop("exponential", f64)(x)
    assert ulp_error(got, reference("exponential", x), f64).max() <= 1
    tiny = np.array([5e-324, 1e-310, 2.2e-308])
    got = loop("log", f64)(tiny)
    assert ulp_error(got, reference("log", tiny), f64).max() <= 1
    got = loop("power", f64)(np.array([2.0, 0.5]), np.array([-1074.0, 1074.0]))
    np.testing.assert_array_equal(got, [5e-324, 5e-324])


@pytest.mark.parametrize("dtype", DTYPES, ids=_id)
@pytest.mark.parametrize("name", NAMES)
def test_loop_is_vectorised_without_library_calls(name, dtype):
    assembly = loop(name, dtype).assembly()
    calls = re.findall(r"\bcall\w*\s+(\S+)", assembly)
    assert calls == [], f"{name} calls {calls}"
    assert re.search(r"%[yz]mm\d+", assembly), f"{name} did not vectorise"


@pytest.mark.parametrize("dtype,width", [(np.float32, 8), (np.float64, 4)], ids=["f32", "f64"])
@pytest.mark.parametrize("name", NAMES)
def test_explicit_vector_operands_match_the_scalar_loop(name, dtype, width):
    x, y = samples(name, dtype, 4096, seed=3)
    args = [x] if y is None else [x, y]
    scalar = loop(name, dtype)(*args)
    vector = loop(name, dtype, width)(*args)
    np.testing.assert_array_equal(vector.view(np.uint8), scalar.view(np.uint8))


SCALED = ["exponential", "exponential-minus-one", "logistic"]
"""Functions whose results are scaled by a power of two (exp's 2^k)."""


@pytest.mark.parametrize("dtype", DTYPES, ids=_id)
@pytest.mark.parametrize("name", SCALED)
def test_ldexp_scaling_gives_the_same_bits_as_powers_of_two(name, dtype):
    """AVX-512 targets scale by 2^k with one `ldexp` (vscalef), others multiply by
    two powers of two: both round once, so every result is the same, subnormal
    and overflowing ones included."""
    x, y = samples(name, dtype, 20_000, seed=5)
    edges = np.array([-104, -103.5, -88.7, -87.3, -20, 0, 88.7, 89, 709.8, -745.1, -708.4,
                      np.inf, -np.inf, np.nan], dtype)
    x = np.concatenate([x, edges])
    args = [x] if y is None else [x, np.concatenate([y, np.full(edges.size, 0.5, dtype)])]
    native_loop = MathLoop(name, dtype, native_ldexp=True)
    assert "ldexp" in str(native_loop.parsed)
    native = native_loop(*args)
    powers = MathLoop(name, dtype, native_ldexp=False)(*args)
    np.testing.assert_array_equal(native.view(np.uint8), powers.view(np.uint8))


def test_native_ldexp_only_where_the_target_computes_it():
    features = set(host_target()[2].split(","))
    host = {"+avx512f", "+avx512dq"} <= features and host_target()[0].startswith("x86_64")
    assert getattr(new_module("m"), NATIVE_LDEXP) == host
    assert not getattr(new_module("m", aot_target_machine("aarch64-unknown-linux-gnu"),
                                  "+neon"), NATIVE_LDEXP)
    assert not getattr(new_module("m", aot_target_machine("x86_64-unknown-linux-gnu"), ""),
                       NATIVE_LDEXP)


def test_bad_requests_are_refused():
    module = ir.Module()
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ir.IntType(32)]), "f")
    builder = ir.IRBuilder(fn.append_basic_block())
    with pytest.raises(KeyError, match="no vectorised math function"):
        emit_unary("sqrt-ish", builder, fn.args[0])
    with pytest.raises(TypeError, match="float or double"):
        emit_unary("exponential", builder, fn.args[0])
