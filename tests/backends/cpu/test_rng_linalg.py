"""rng-bit-generator, cholesky and triangular-solve on the CPU backend, against
the interpreter: random bits exactly (every algorithm, state size, element
type and shape, layouts, chained states, the threaded path), the
factorisations to a few ULP with the same NaN and inf positions (not
positive definite, zero pivots, NaN input), every triangular-solve attribute
combination. Several instructions share one module to keep compiles few;
none may run in the interpreter fallback."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

import xlapy
from xlapy.backends.cpu.compiler import compile_module
from xlapy.backends.cpu.options import CompileOptions, CpuOptions
from xlapy.hlo import parse

RNG_TYPES = ["u8", "s8", "u16", "s16", "f16", "bf16", "s32", "f32", "s64", "f64"]
RNG_SHAPES = ["[]", "[7]", "[3,5]", "[4,6]", "[2,3,5]", "[5,3]", "[0]", "[3,5]{0,1}"]


def _compile(text: str):
    """Compiled as is (no fusion), fallback forbidden."""
    executable = compile_module(parse(text), options=CompileOptions.from_flags().with_cpu(
        CpuOptions(strict=True)))
    assert not executable.fallbacks, [f.name for f in executable.fallbacks]
    return executable


def _tuple_module(params: list[str], lines: list[tuple[str, str]]) -> str:
    """A module whose root is the tuple of the named (shape, text) lines."""
    body = [f"  {p}" for p in params]
    body += [f"  r{i} = {shape} {text}" for i, (shape, text) in enumerate(lines)]
    shapes = ", ".join(shape for shape, _ in lines)
    names = ", ".join(f"r{i}" for i in range(len(lines)))
    return "\n".join(["HloModule m", "ENTRY main {", *body,
                      f"  ROOT out = ({shapes}) tuple({names})", "}"])


def _bits(x) -> np.ndarray:
    return np.ascontiguousarray(np.atleast_1d(np.asarray(x))).view(np.uint8)


def _assert_same_bits(got: list, want: list) -> None:
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, i
        assert np.array_equal(_bits(g), _bits(w)), f"output {i} differs"


# -- rng-bit-generator --------------------------------------------------------------------
def _flat(values) -> list:
    """Leaves of a (possibly nested) result list."""
    out = []
    for v in values:
        out += _flat(v) if isinstance(v, (tuple, list)) else [v]
    return out


def _rng_lines(algorithm: str, state_size: int) -> list:
    """Every element width at one shape (odd dimensions: ThreeFry's dropped word),
    every shape kind at u32 and u64, and the default algorithm."""
    cases = [(t, "[3,5]") for t in RNG_TYPES] + [("u32", d) for d in RNG_SHAPES]
    cases += [("u64", d) for d in ("[]", "[7]", "[2,3]{0,1}")]
    lines = [(f"(u64[{state_size}], {t}{d})", f"rng-bit-generator(s), algorithm={algorithm}")
             for t, d in cases]
    if algorithm == "rng_philox":
        lines.append((f"(u64[{state_size}], s32[9])", "rng-bit-generator(s), algorithm=rng_default"))
    return lines


@pytest.mark.parametrize("algorithm,state_size", [
    ("rng_three_fry", 2), ("rng_philox", 2), ("rng_philox", 3)])
def test_rng_bit_generator_matches_interpreter(algorithm, state_size):
    text = _tuple_module([f"s = u64[{state_size}] parameter(0)"],
                         _rng_lines(algorithm, state_size))
    # a counter about to wrap, so the carry into the high word is exercised
    state = np.array([0x0123456789ABCDEF, 2**64 - 3, 2**64 - 1][:state_size], np.uint64)
    got = _compile(text).execute(state)
    want = xlapy.execute(text, [state], backend="interpreter")
    _assert_same_bits(_flat(got), _flat(want))


@pytest.mark.parametrize("algorithm", ["rng_three_fry", "rng_philox"])
def test_rng_chained_state_and_threads(algorithm):
    """The second call starts from the first one's state; 2^18 elements take the
    threaded path."""
    text = f"""HloModule m
ENTRY main {{
  s = u64[2] parameter(0)
  first = (u64[2], u32[512,512]) rng-bit-generator(s), algorithm={algorithm}
  state = u64[2] get-tuple-element(first), index=0
  second = (u64[2], f64[3,511]) rng-bit-generator(state), algorithm={algorithm}
  a = u32[512,512] get-tuple-element(first), index=1
  b = f64[3,511] get-tuple-element(second), index=1
  last = u64[2] get-tuple-element(second), index=0
  ROOT out = (u32[512,512], f64[3,511], u64[2]) tuple(a, b, last)
}}"""
    state = np.array([42, 7], np.uint64)
    executable = xlapy.compile(text, backend="cpu")
    assert not executable.fallbacks
    got = executable.execute(state)
    _assert_same_bits(got, xlapy.execute(text, [state], backend="interpreter"))


# -- cholesky -----------------------------------------------------------------------------
def _random_matrices(rng, shape, complex_values: bool) -> np.ndarray:
    a = rng.standard_normal(shape)
    if complex_values:
        a = a + 1j * rng.standard_normal(shape)
    return a


def _spd(rng, batch, n, complex_values):
    a = _random_matrices(rng, batch + (n, n), complex_values)
    return a @ np.swapaxes(a.conj(), -1, -2) + n * np.eye(n)


_EPS = {"f16": 2.0 ** -10, "bf16": 2.0 ** -7, "f32": 2.0 ** -23, "f64": 2.0 ** -52,
        "c64": 2.0 ** -23, "c128": 2.0 ** -52}
_NUMPY = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64,
          "c64": np.complex64, "c128": np.complex128}


def _assert_close(got, want, dtype: str, ulps: float = 64) -> None:
    g, w = got.astype(np.complex128), want.astype(np.complex128)
    for part in (np.real, np.imag):
        assert np.array_equal(np.isnan(part(g)), np.isnan(part(w)))
        assert np.array_equal(np.isinf(part(g)), np.isinf(part(w)))
    finite = np.isfinite(g) & np.isfinite(w)
    scale = np.max(np.abs(w[finite]), initial=1.0)
    assert np.all(np.abs(g[finite] - w[finite]) <= ulps * _EPS[dtype] * scale)


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32", "f64", "c64", "c128"])
def test_cholesky_matches_interpreter(dtype):
    rng = np.random.default_rng(5)
    complex_values = dtype.startswith("c")
    a = _spd(rng, (2, 3), 6, complex_values)
    a[0, 1, 3, 3] = -100.0              # not positive definite: all NaN
    a[1, 0, 2, 4] = np.nan              # NaN in the read triangle (lower=true)
    a[1, 2, 4, 2] = np.nan              # ... in the upper one
    a[1, 1] = np.diag(np.arange(6.0))   # a zero pivot: inf and NaN downstream
    a = a.astype(_NUMPY[dtype])
    lines = [(f"{dtype}[2,3,6,6]", f"cholesky(a), lower={lower}") for lower in ("true", "false")]
    lines.append((f"{dtype}[1,1]", "cholesky(one), lower=true"))
    lines.append((f"{dtype}[0,4,4]", "cholesky(none), lower=false"))
    text = _tuple_module([f"a = {dtype}[2,3,6,6] parameter(0)",
                          f"one = {dtype}[1,1] parameter(1)",
                          f"none = {dtype}[0,4,4] parameter(2)"], lines)
    args = [a, np.array([[4.0]]).astype(_NUMPY[dtype]), np.zeros((0, 4, 4), _NUMPY[dtype])]
    got = _compile(text).execute(*args)
    want = xlapy.execute(text, args, backend="interpreter")
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        _assert_close(g, w, dtype)
    assert np.isnan(got[0][0, 1].real).all() and not np.isnan(got[0][0, 0]).any()


# -- triangular-solve ---------------------------------------------------------------------
_COMBINATIONS = list(itertools.product(("true", "false"), ("true", "false"),
                                       ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"),
                                       ("true", "false")))


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32", "f64", "c64", "c128"])
def test_triangular_solve_every_attribute_combination(dtype):
    """All 24 combinations in f64 and c128 (where ADJOINT differs from TRANSPOSE);
    a few in the other types, whose difference is only the final rounding."""
    combinations = _COMBINATIONS if dtype in ("f64", "c128") else _COMBINATIONS[::7]
    rng = np.random.default_rng(9)
    complex_values = dtype.startswith("c")
    m, k = 5, 3
    a = _random_matrices(rng, (2, m, m), complex_values) + 4 * np.eye(m)
    left_b = _random_matrices(rng, (2, m, k), complex_values)
    right_b = _random_matrices(rng, (2, k, m), complex_values)
    lines = []
    for left, lower, transpose, unit in combinations:
        shape = f"{dtype}[2,{m},{k}]" if left == "true" else f"{dtype}[2,{k},{m}]"
        operand = "lb" if left == "true" else "rb"
        lines.append((shape, f"triangular-solve(a, {operand}), left_side={left}, lower={lower}, "
                             f"unit_diagonal={unit}, transpose_a={transpose}"))
    text = _tuple_module([f"a = {dtype}[2,{m},{m}] parameter(0)",
                          f"lb = {dtype}[2,{m},{k}] parameter(1)",
                          f"rb = {dtype}[2,{k},{m}] parameter(2)"], lines)
    args = [x.astype(_NUMPY[dtype]) for x in (a, left_b, right_b)]
    got = _compile(text).execute(*args)
    want = xlapy.execute(text, args, backend="interpreter")
    for g, w, combination in zip(got, want, combinations):
        assert g.shape == w.shape and g.dtype == w.dtype, combination
        _assert_close(g, w, dtype)


def test_triangular_solve_zero_diagonal_gives_inf_and_nan_where_the_interpreter_does():
    a = np.tril(np.arange(1.0, 17.0).reshape(4, 4))
    a[1, 1] = 0.0
    b = np.ones((4, 2))
    text = """HloModule m
ENTRY main {
  a = f64[4,4] parameter(0)
  b = f64[4,2] parameter(1)
  ROOT x = f64[4,2] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
}"""
    got = _compile(text).execute(a, b)[0]
    want = xlapy.execute(text, [a, b], backend="interpreter")[0]
    assert not np.isfinite(want).all()
    _assert_close(got, want, "f64")


def test_large_batched_solve_runs_on_threads_and_agrees():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((16, 48, 48)) + 8 * np.eye(48)
    b = rng.standard_normal((16, 48, 64))
    text = """HloModule m
ENTRY main {
  a = f64[16,48,48] parameter(0)
  b = f64[16,48,64] parameter(1)
  ROOT x = f64[16,48,64] triangular-solve(a, b), left_side=true, lower=false, transpose_a=TRANSPOSE
}"""
    got = _compile(text).execute(a, b)[0]
    want = xlapy.execute(text, [a, b], backend="interpreter")[0]
    _assert_close(got, want, "f64")
