"""Every elementwise opcode on every element type, CPU backend against the
interpreter.

For each element type one module holds every op that takes it (each a
separate kernel: the module is compiled as is, without fusion; an op that
runs in the interpreter fallback fails its test), run on random data plus
the special values (±0, ±inf, NaN, subnormals, the largest floats, INT_MIN,
-1, 0, shift amounts at and past the width, values at the edges of the
integer ranges for converts, values that expose double rounding). The reference is the interpreter's rule for the same
instruction. Integers and pred must match exactly; so must every float op
the interpreter rounds exactly once (arithmetic, sqrt, rounding, converts,
compare, select, clamp, bit ops, and the complex functions NumPy takes from
the C library, which we call too), signs of zero included; the other
transcendental functions agree within the ULP bounds in `_ULPS`. NaN
positions always match (payloads need not).
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools

import llvmlite.ir as ir
import ml_dtypes
import numpy as np
import pytest

import xlapy
from xlapy.backends.cpu.compiler import compile_module
from xlapy.backends.cpu.llvm_target import LoadedObject, compile_to_object, new_module
from xlapy.backends.cpu.options import CompileOptions, CpuOptions
from xlapy.codegen import ir_types as T
from xlapy.codegen.elemental_extra import f64_to_narrow, int_to_narrow
from xlapy.codegen.loops import for_range
from xlapy.errors import ExecutionError, ShapeError
from xlapy.hlo import parse
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.evaluator.convert import convert_array
from xlapy.hlo.evaluator.evaluator import Evaluator
from xlapy.hlo.opcode import ELEMENTWISE_BINARY, ELEMENTWISE_UNARY, TRANSCENDENTAL
from xlapy.hlo.opcode import Opcode as Op
from xlapy.hlo.shape import Shape
from xlapy.hlo.shape_inference import infer_shape

DTYPES = [P.PRED, P.S8, P.S16, P.S32, P.S64, P.U8, P.U16, P.U32, P.U64,
          P.F16, P.BF16, P.F32, P.F64, P.C64, P.C128]
FLOATS = (P.F16, P.BF16, P.F32, P.F64)
COMPLEX = (P.C64, P.C128)
N = 1024
"""Elements per operand (a multiple of 8, so every widening bitcast fits)."""

_ULPS = {
    Op.EXP: (2, 4), Op.LOG: (2, 4), Op.TANH: (2, 8), Op.LOGISTIC: (2, 4), Op.ERF: (4, 8),
    Op.POWER: (4, 8),
}
"""(f32, f64) bounds in ULP of the result: the math package's documented bounds
(≤ 2 ULP for exp/log/tanh/logistic in f32, ≤ 4 for the rest; f64 ≤ 4, tanh,
erf and pow looser), plus one for the reference's own rounding. Ops not
listed: 4 for both. f16/bf16 results (computed in f32, rounded once more) may
be 1 ULP off."""

_EXACT_COMPLEX_FUNCTIONS = frozenset({
    Op.EXP, Op.LOG, Op.SQRT, Op.SIN, Op.COS, Op.TAN, Op.TANH, Op.SINH, Op.COSH, Op.ASIN,
    Op.ACOS, Op.ATAN, Op.ASINH, Op.ACOSH, Op.ATANH, Op.EXPM1, Op.LOG1P, Op.RSQRT,
    Op.LOGISTIC, Op.POWER, Op.DIVIDE})
"""Complex ops that are the same C library calls and the same formulas as NumPy's."""


# -- cases ------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Case:
    key: str          # unique within a dtype: "sine", "compare.LT.TOTALORDER", "convert.f16"
    opcode: Op
    lines: tuple      # HLO instruction lines; the last defines the case's result `out`
    out: P
    operands: tuple   # names of the module's parameters the op reads, in order


def _shape_ok(opcode: Op, operand_types, attrs=None, declared: Shape | None = None):
    try:
        shapes = [Shape.array(t, (N,)) for t in operand_types]
        return infer_shape(opcode, shapes, attrs or {}, declared).element_type
    except ShapeError:
        return None


def _line(out: P, opcode: Op, operands, attrs: str = "", dims=(N,)) -> str:
    dims_text = ",".join(str(d) for d in dims)
    tail = f", {attrs}" if attrs else ""
    return f"$out = {out.value}[{dims_text}] {opcode.value}({', '.join(operands)}){tail}"


def _simple(t: P, opcode: Op, operands) -> Case | None:
    out = _shape_ok(opcode, [t] * len(operands))
    if out is None:
        return None
    return Case(opcode.value, opcode, (_line(out, opcode, operands),), out, tuple(operands))


def _scalar_clamp(t: P) -> Case | None:
    """clamp with scalar constant bounds (broadcast implicitly)."""
    if t in COMPLEX:
        return None
    lo, hi = ("false", "true") if t is P.PRED else ("-1.5", "2.5") if t in FLOATS else \
        ("3", "100")
    lines = (f"$lo = {t.value}[] constant({lo})", f"$hi = {t.value}[] constant({hi})",
             _line(t, Op.CLAMP, ["$lo", "x", "$hi"]))
    return Case("clamp.scalar", Op.CLAMP, lines, t, ("x",))


def _compare_cases(t: P) -> list[Case]:
    kinds = [None]
    if t in FLOATS or t in COMPLEX:
        kinds.append("TOTALORDER")
    cases = []
    for direction in ("EQ", "NE", "LT", "LE", "GT", "GE"):
        for kind in kinds:
            from xlapy.hlo.attributes import ComparisonDirection, ComparisonType

            attrs = {"direction": ComparisonDirection(direction)}
            if kind:
                attrs["type"] = ComparisonType(kind)
            if _shape_ok(Op.COMPARE, [t, t], attrs) is None:
                continue
            text = f"direction={direction}" + (f", type={kind}" if kind else "")
            key = f"compare.{direction}" + (f".{kind}" if kind else "")
            cases.append(Case(key, Op.COMPARE, (_line(P.PRED, Op.COMPARE, ["x", "y"], text),),
                              P.PRED, ("x", "y")))
    return cases


def _convert_cases(t: P) -> list[Case]:
    return [Case(f"convert.{target.value}", Op.CONVERT,
                 (_line(target, Op.CONVERT, ["x"]),), target, ("x",)) for target in DTYPES]


def _reduce_precision_cases(t: P) -> list[Case]:
    if t not in FLOATS:
        return []
    return [Case(f"reduce-precision.e{e}m{m}", Op.REDUCE_PRECISION,
                 (_line(t, Op.REDUCE_PRECISION, ["x"], f"exponent_bits={e}, mantissa_bits={m}"),),
                 t, ("x",)) for e, m in ((5, 10), (8, 7), (4, 3), (3, 0), (11, 52), (8, 23))]


def _stochastic_cases(t: P) -> list[Case]:
    if t not in FLOATS:
        return []
    return [Case(f"stochastic-convert.{target.value}", Op.STOCHASTIC_CONVERT,
                 (_line(target, Op.STOCHASTIC_CONVERT, ["x", "r"]),), target, ("x", "r"))
            for target in (P.S8, P.S16, P.S32, P.S64, P.U8, P.U16, P.U32, P.U64)]


def _width(t: P) -> int:
    return 8 if t is P.PRED else t.bit_width


def _bitcast_cases(t: P) -> list[Case]:
    if t in COMPLEX:
        return []
    cases = []
    for target in DTYPES:
        if target in COMPLEX:
            continue
        src, dst = _width(t), _width(target)
        if src == dst:
            lines = (_line(target, Op.BITCAST_CONVERT, ["x"]),)
        elif src > dst:
            lines = (_line(target, Op.BITCAST_CONVERT, ["x"], dims=(N, src // dst)),)
        else:
            ratio = dst // src
            lines = (f"$xr = {t.value}[{N // ratio},{ratio}] reshape(x)",
                     _line(target, Op.BITCAST_CONVERT, ["$xr"], dims=(N // ratio,)))
        cases.append(Case(f"bitcast-convert.{target.value}", Op.BITCAST_CONVERT, lines, target,
                          ("x",)))
    return cases


@functools.cache
def cases_for(t: P) -> tuple[Case, ...]:
    cases = []
    for opcode in sorted(ELEMENTWISE_UNARY, key=lambda o: o.value):
        cases.append(_simple(t, opcode, ["x"]))
    for opcode in sorted(ELEMENTWISE_BINARY, key=lambda o: o.value):
        cases.append(_simple(t, opcode, ["x", "y"]))
    cases.append(Case("select", Op.SELECT, (_line(t, Op.SELECT, ["c", "x", "y"]),), t,
                      ("c", "x", "y")))
    if _shape_ok(Op.CLAMP, [t, t, t]) is not None:
        cases.append(Case("clamp", Op.CLAMP, (_line(t, Op.CLAMP, ["y", "x", "z"]),), t,
                          ("y", "x", "z")))
        # lo = hi: every pair of specials meets a tie (-0 against +0, NaN bounds)
        cases.append(Case("clamp.tie", Op.CLAMP, (_line(t, Op.CLAMP, ["y", "x", "y"]),), t,
                          ("y", "x", "y")))
        cases.append(_scalar_clamp(t))
    cases += _compare_cases(t) + _convert_cases(t) + _reduce_precision_cases(t)
    cases += _stochastic_cases(t) + _bitcast_cases(t)
    return tuple(c for c in cases if c is not None)


# -- data -------------------------------------------------------------------------------
def _float_specials(t: P) -> np.ndarray:
    dtype = t.numpy
    info = ml_dtypes.finfo(dtype) if t is P.BF16 else np.finfo(dtype)
    base = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, -7.0, 100.25,
            np.inf, -np.inf, np.nan, 1e-3, 2.0 ** 24 + 2, 2.0 ** 31, -(2.0 ** 31), 2.0 ** 32,
            2.0 ** 63, -(2.0 ** 63), 2.0 ** 64, 255.5, -128.5, 65504.0, 65520.0, 1e30, -1e30,
            3.0e38, 1e300, 2.0 ** 31 - 64, 0.70710678, 1e-8, -1e-30,
            # f64 values that round to f32 exactly on an f16/bf16 midpoint
            1 + 2.0 ** -11 + 2.0 ** -40, 1 + 2.0 ** -8 + 2.0 ** -40, -(1 + 2.0 ** -8 + 2.0 ** -40)]
    edges = [float(info.max), -float(info.max), float(info.tiny), -float(info.tiny),
             float(info.smallest_subnormal), -float(info.smallest_subnormal),
             float(info.tiny) * 0.75]
    with np.errstate(all="ignore"):
        return np.array(base + edges, np.float64).astype(dtype)


def _int_specials(t: P) -> list[int]:
    width = t.bit_width
    low, high = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if t.is_signed_int else \
        (0, (1 << width) - 1)
    values = [0, 1, -1, 2, -2, 3, 7, low, high, low + 1, high - 1, width - 1, width, width + 1,
              63, 64, 100, -100,
              # integers that round to f32 exactly on a bf16 midpoint
              2 ** 24 + 2 ** 16 + 1, -(2 ** 24 + 2 ** 16 + 1), 2 ** 60 + 2 ** 52 + 1]
    return [v for v in values if low <= v <= high or t.is_unsigned_int]


def _wrap(values, t: P) -> np.ndarray:
    mask = (1 << t.bit_width) - 1
    unsigned = np.array([int(v) & mask for v in values], np.uint64)
    return unsigned.astype(np.dtype(f"u{t.bit_width // 8}")).view(t.numpy)


def _random_floats(t: P, n: int, rng) -> np.ndarray:
    info = ml_dtypes.finfo(t.numpy) if t is P.BF16 else np.finfo(t.numpy)
    low, high = np.log2(float(info.smallest_subnormal)), np.log2(float(info.max))
    third = n // 3
    wide = np.exp2(rng.uniform(low, high, third)) * rng.choice([-1.0, 1.0], third)
    moderate = rng.standard_normal(third) * 4
    small = rng.uniform(-1, 1, n - 2 * third) * 10
    with np.errstate(all="ignore"):
        return np.concatenate([wide, moderate, small]).astype(t.numpy)


def _random(t: P, n: int, rng) -> np.ndarray:
    if t is P.PRED:
        return rng.integers(0, 2, n).astype(bool)
    if t in COMPLEX:
        part = t.component_type
        value = np.empty(n, t.numpy)
        value.real, value.imag = _random_floats(part, n, rng), _random_floats(part, n, rng)
        return value
    if t in FLOATS:
        return _random_floats(t, n, rng)
    bits = rng.integers(0, 2 ** 63, n, dtype=np.int64).astype(np.uint64) * np.uint64(2) + \
        rng.integers(0, 2, n).astype(np.uint64)
    small = rng.integers(-10, 11, n)
    picked = np.where(rng.integers(0, 3, n) == 0, small.astype(np.int64).view(np.uint64), bits)
    return _wrap([int(v) for v in picked], t)


def _specials(t: P) -> np.ndarray:
    if t is P.PRED:
        return np.array([False, True])
    if t in COMPLEX:
        info = np.finfo(t.component_type.numpy)
        parts = np.array([0.0, -0.0, 1.0, -1.0, 1e-3, np.inf, -np.inf, np.nan,
                          info.smallest_subnormal, -info.max], t.component_type.numpy)
        value = np.empty(len(parts) ** 2, t.numpy)
        value.real, value.imag = np.repeat(parts, len(parts)), np.tile(parts, len(parts))
        return value
    if t in FLOATS:
        return _float_specials(t)
    return _wrap(_int_specials(t), t)


_COMPLEX_PAIRS = np.array([0, 1, -1, 2, 3, -7, 5, 99, 100, 0.5, np.inf, complex(np.nan, 0),
                           1 + 1j, -0.5 + 2j, complex(np.inf, 1), complex(0, -np.inf)])
"""Complex values met in pairs: real integers exercise NumPy's repeated-multiplication
power (|n| < 100), the rest its cpow and the special values."""


@functools.cache
def inputs(t: P) -> dict[str, np.ndarray]:
    """x, y, z of type t; c pred; r random bits as wide as t (floats)."""
    rng = np.random.default_rng(1234 + DTYPES.index(t))
    specials = _specials(t)
    pair_source = specials[:16] if t not in COMPLEX else _COMPLEX_PAIRS.astype(t.numpy)
    # x alone runs through every special; (x, y) through all pairs of the first 16
    xs = np.concatenate([specials, np.repeat(pair_source, len(pair_source))])
    ys = np.concatenate([_random(t, len(specials), rng), np.tile(pair_source, len(pair_source))])
    x = np.concatenate([xs, _random(t, N - len(xs), rng)])
    y = np.concatenate([ys, _random(t, N - len(ys), rng)])
    values = {"x": x[:N], "y": y[:N], "z": _random(t, N, rng),
              "c": rng.integers(0, 2, N).astype(bool)}
    if t in FLOATS:
        values["r"] = _random(P(f"u{_width(t)}"), N, rng)
    return values


# -- running ----------------------------------------------------------------------------
def _module_text(t: P, cases) -> str:
    params = [f"x = {t.value}[{N}] parameter(0)", f"y = {t.value}[{N}] parameter(1)",
              f"z = {t.value}[{N}] parameter(2)", f"c = pred[{N}] parameter(3)"]
    if t in FLOATS:
        params.append(f"r = u{_width(t)}[{N}] parameter(4)")
    body, results, shapes = [], [], []
    for i, case in enumerate(cases):
        body += [f"  {line.replace('$', f'k{i}_')}" for line in case.lines]
        results.append(f"k{i}_out")
        shapes.append(case.lines[-1].split(" = ", 1)[1].split(" ", 1)[0])
    root = f"  ROOT result = ({', '.join(shapes)}) tuple({', '.join(results)})"
    return "\n".join(["HloModule elementwise_" + t.value, "ENTRY main {"] +
                     [f"  {p}" for p in params] + body + [root, "}"])


def _args(t: P):
    values = inputs(t)
    names = ["x", "y", "z", "c"] + (["r"] if t in FLOATS else [])
    return [values[n] for n in names]


@functools.cache
def results(t: P):
    """key -> (cpu output, reference output) for every case the interpreter takes,
    None where it rejects the op for this type, or the text of why the CPU
    backend did not compile it natively. (An exception is returned, not raised,
    so that it is cached.)"""
    try:
        return _results(t)
    except Exception as error:  # noqa: BLE001 - reported by every test of the type
        return error


def _reference(entry, i: int, case: Case, params: dict):
    """The interpreter's value of case i: its rule run on each of the case's lines."""
    values = dict(params)
    evaluator = Evaluator()
    for line in case.lines:
        name = line.split(" = ", 1)[0].replace("$", f"k{i}_")
        instruction = entry.instruction(name)
        values[name] = evaluator.evaluate(instruction, [values[o.name]
                                                        for o in instruction.operands])
    return values[f"k{i}_out"]


def _results(t: P) -> dict:
    cases = cases_for(t)
    entry = parse(_module_text(t, cases)).entry_computation
    params = dict(zip(["x", "y", "z", "c", "r"], _args(t)))
    references, supported = {}, []
    for i, case in enumerate(cases):
        try:
            references[case.key] = _reference(entry, i, case, params)
            supported.append(case)
        except ExecutionError as e:   # XLA's typing refuses the pair: not a test case
            if not any(why in str(e) for why in ("does not take element type",
                                                 "complex compare takes only")):
                raise
            references[case.key] = None
    module = parse(_module_text(t, supported))
    # fallback allowed here so one op's fallback fails only that op's test (below)
    options = CompileOptions.from_flags().with_cpu(CpuOptions())
    executable = compile_module(module, options=options)
    fell_back = {f.name for f in executable.fallbacks}
    outputs = executable.execute(*_args(t))
    found = {key: None for key, ref in references.items() if ref is None}
    for i, (case, out) in enumerate(zip(supported, outputs)):
        names = {line.split(" = ", 1)[0].replace("$", f"k{i}_") for line in case.lines}
        found[case.key] = f"runs in the interpreter fallback: {sorted(names & fell_back)}" \
            if names & fell_back else (out, references[case.key])
    return found


# -- comparing --------------------------------------------------------------------------
_MANTISSA = {P.F16: 10, P.BF16: 7, P.F32: 23, P.F64: 52}
_MIN_EXPONENT = {P.F16: -14, P.BF16: -126, P.F32: -126, P.F64: -1022}


def _ulp(reference: np.ndarray, t: P) -> np.ndarray:
    magnitude = np.abs(reference)
    with np.errstate(divide="ignore"):
        exponent = np.floor(np.log2(np.where(magnitude > 0, magnitude, 1.0)))
    exponent = np.maximum(exponent, _MIN_EXPONENT[t])
    return np.exp2(exponent - _MANTISSA[t])


def _float_mismatch(got, want, t: P, ulps: float) -> np.ndarray:
    """Elements where a float result differs: NaN against number, infinities or
    signs of zero that differ, or more than `ulps` apart."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    nan = np.isnan(got) | np.isnan(want)
    bad = np.isnan(got) != np.isnan(want)
    inf = ~nan & (np.isinf(got) | np.isinf(want))
    bad |= inf & (got != want)
    finite = ~nan & ~inf
    if ulps == 0:
        return bad | (finite & ((got != want) | (np.signbit(got) != np.signbit(want))))
    with np.errstate(invalid="ignore"):
        distance = np.abs(got - want) / _ulp(want, t)
    return bad | (finite & (distance > ulps))


def _complex_mismatch(got, want, t: P, eps_factor: float, scale) -> np.ndarray:
    part = t.component_type
    if eps_factor == 0:
        return _float_mismatch(got.real, want.real, part, 0) | \
            _float_mismatch(got.imag, want.imag, part, 0)
    got, want = got.astype(np.complex128), want.astype(np.complex128)
    eps = 2.0 ** -_MANTISSA[part]
    bad = np.zeros(got.shape, bool)
    with np.errstate(all="ignore"):
        size = np.where(np.isfinite(want), np.abs(want), 0) + scale
        for g, w in ((got.real, want.real), (got.imag, want.imag)):
            nan = np.isnan(g) | np.isnan(w)
            bad |= np.isnan(g) != np.isnan(w)
            inf = ~nan & (np.isinf(g) | np.isinf(w))
            bad |= inf & (g != w)
            bad |= ~nan & ~inf & (np.abs(g - w) > eps_factor * eps * size)
    return bad


def _tolerance(case: Case, t: P) -> float:
    if case.opcode not in TRANSCENDENTAL or case.opcode is Op.SQRT:
        return 0
    if case.out in (P.F16, P.BF16):
        return 1
    f32, f64 = _ULPS.get(case.opcode, (4, 4))
    return f64 + 2 if case.out is P.F64 else f32


def _mismatch(case: Case, t: P, got, want) -> np.ndarray:
    out = case.out
    if out in COMPLEX or (t in COMPLEX and out in FLOATS):
        return _complex_or_part_mismatch(case, t, got, want)
    if out in FLOATS:
        return _float_mismatch(got, want, out, _tolerance(case, t))
    return np.asarray(got != want)


def _complex_or_part_mismatch(case: Case, t: P, got, want) -> np.ndarray:
    """Complex results, and real results of complex operands (abs, real, imag)."""
    values = inputs(t)
    x, y = values["x"].astype(np.complex128), values["y"].astype(np.complex128)
    if case.opcode is Op.MULTIPLY:   # NumPy's vectorised multiply may use FMA, which
        scale = np.abs(x) * np.abs(y)  # also decides whether an overflow is inf or NaN
        overflow = scale > float(np.finfo(case.out.component_type.numpy).max)
        return _complex_mismatch(got, want, case.out, 2, scale) & ~overflow
    if case.opcode is Op.ATAN2:             # ... inside x*x + y*y, then an ill-posed log
        return _complex_mismatch(got, want, case.out, 64, 1 + np.abs(x) ** 2 + np.abs(y) ** 2)
    if case.opcode is Op.SIGN:              # NumPy's own |z|, up to 2 ULP from hypot
        return _complex_mismatch(got, want, case.out, 4, 0)
    if case.opcode is Op.ABS:
        return _float_mismatch(got, want, case.out, 2 if t is P.C128 else 0)
    if case.out in FLOATS:
        return _float_mismatch(got, want, case.out, 0)
    return _complex_mismatch(got, want, case.out, 0, 0)


KNOWN: dict[tuple[str, P], str] = {}
"""(case key, element type) -> why it fails today (the fix belongs to elemental.py)."""


def _marks(t: P, case: Case) -> list:
    if (case.key, t) in KNOWN:
        return [pytest.mark.xfail(reason=KNOWN[(case.key, t)], strict=True)]
    return []


def _params():
    for t in DTYPES:
        for case in cases_for(t):
            yield pytest.param(t, case, id=f"{t.value}-{case.key}", marks=_marks(t, case))


@pytest.mark.parametrize("t,case", list(_params()))
def test_matches_interpreter(t: P, case: Case):
    found = results(t)
    if isinstance(found, Exception):
        raise found
    result = found[case.key]
    if isinstance(result, str):
        pytest.fail(result)
    if result is None:
        pytest.skip(f"the interpreter does not take {case.opcode.value} on {t.value}")
    got, want = result
    assert got.shape == want.shape and got.dtype == want.dtype
    with np.errstate(all="ignore"):
        bad = np.asarray(_mismatch(case, t, got, want))
    if bad.any():
        where = np.argwhere(bad)[:6]
        values = inputs(t)
        detail = []
        for index in where:   # (operands are approximate for bitcasts that change rank)
            at = tuple(index)
            operands = [values[o][at[0] % N] for o in case.operands]
            detail.append(f"operands {operands}: cpu {got[at]!r}, interpreter {want[at]!r}")
        pytest.fail(f"{bad.sum()} of {bad.size} differ, e.g.\n  " + "\n  ".join(detail))


# -- fused chains and the rounding helpers ----------------------------------------------------
def test_fused_complex_and_narrow_chains_compile_natively():
    """Complex and narrow-float ops inside fusions (the public compile path)."""
    text = """HloModule m
ENTRY main {
  x = c64[64] parameter(0)
  y = c64[64] parameter(1)
  h = bf16[64] parameter(2)
  p = c64[64] multiply(x, y)
  e = c64[64] exponential(x)
  q = c64[64] divide(p, e)
  m = f32[64] abs(q)
  c = pred[64] compare(m, m), direction=LT
  s = c64[64] select(c, x, q)
  k = c64[] constant((1.5, -2))
  kb = c64[64] broadcast(k), dimensions={}
  r = c64[64] power(s, kb)
  hf = f32[64] convert(h)
  t = f32[64] tanh(hf)
  w = bf16[64] convert(t)
  re = f32[64] real(r)
  ROOT out = (c64[64], bf16[64], f32[64]) tuple(r, w, re)
}"""
    rng = np.random.default_rng(0)
    args = [_random(P.C64, 64, rng), _random(P.C64, 64, rng), _random(P.BF16, 64, rng)]
    executable = xlapy.compile(text, backend="cpu")
    assert not executable.fallbacks
    got = executable.execute(*args)
    want = xlapy.execute(text, args, backend="interpreter")
    with np.errstate(all="ignore"):
        assert not _complex_mismatch(got[0], want[0], P.C64, 64, 1).any()
        assert not _float_mismatch(got[1], want[1], P.BF16, 1).any()
        assert not _float_mismatch(got[2], want[2], P.F32, 8).any()


def _jit_unary(emit, in_type: ir.Type, out_type: ir.Type):
    """f(in*, out*, n): out[i] = emit(builder, in[i]), compiled for this machine."""
    module = new_module("helper")
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [in_type.as_pointer(),
                                                            out_type.as_pointer(), T.I64]), "f")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    with for_range(b, 0, fn.args[2]) as i:
        value = emit(b, b.load(b.gep(fn.args[0], [i])))
        b.store(value, b.gep(fn.args[1], [i]))
    b.ret_void()
    loaded = LoadedObject(compile_to_object(module))
    return loaded, ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(
        loaded.address("f"))


@pytest.mark.parametrize("target", [P.F16, P.BF16])
@pytest.mark.parametrize("source", [P.S32, P.U32, P.S64, P.U64, P.F64])
def test_rounding_once_into_narrow_floats(source, target):
    """int_to_narrow and f64_to_narrow round exactly as the interpreter's convert."""
    rng = np.random.default_rng(7)
    if source is P.F64:
        x = np.concatenate([_float_specials(P.F64), _random(P.F64, 4000, rng),
                            1 + rng.integers(0, 2 ** 20, 4000) * 2.0 ** -40])
        def emit(b, v):
            return f64_to_narrow(b, v, target)
    else:
        x = np.concatenate([_specials(source), _random(source, 4000, rng),
                            _wrap([2 ** 24 + 2 ** 16 + 1 + int(v) for v in
                                   rng.integers(0, 2 ** 20, 2000)], source)])
        def emit(b, v):
            return int_to_narrow(b, v, source.is_signed_int, target)
    x = np.ascontiguousarray(x)
    out = np.empty(len(x), np.float32)
    loaded, fn = _jit_unary(emit, T.storage_type(source), T.F32)
    fn(x.ctypes.data, out.ctypes.data, len(x))
    with np.errstate(all="ignore"):
        want = convert_array(x, target).astype(np.float32)
    assert not _float_mismatch(out, want, target, 0).any()
