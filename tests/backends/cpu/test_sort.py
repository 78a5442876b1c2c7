"""The CPU backend's native sort (kernels/sort.py) against the interpreter: any
number of operands, any dimension and layout, every element type, plain,
total-order, JAX-canonicalising and multi-key comparators, rows split over
threads; no instruction may go to the interpreter fallback."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlapy
from xlapy.hlo.dtypes import PrimitiveType

FLOATS = ["f16", "bf16", "f32", "f64"]
INTS = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]


def np_type(name: str):
    return np.dtype(PrimitiveType.from_text(name).numpy)


def sample(name: str, dims, rng, special: bool = True) -> np.ndarray:
    """Random values with many ties; floats include -0, +-inf and NaNs of both signs."""
    count = int(np.prod(dims, dtype=np.int64))
    if name == "pred":
        return (rng.random(count) < 0.5).reshape(dims)
    dtype = np_type(name)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        pool = np.array([info.min, info.max, 0, 1, 2, 3, 7], dtype=dtype)
        flat = np.where(rng.random(count) < 0.3, rng.choice(pool, count),
                        rng.integers(0 if dtype.kind == "u" else -9, 10, count).astype(dtype))
        return flat.astype(dtype).reshape(dims)
    flat = np.round(rng.standard_normal(count) * 4, 0).astype(np.float64)
    if special:
        pool = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan])
        flat = np.where(rng.random(count) < 0.25, rng.choice(pool, count), flat)
    return flat.astype(dtype).reshape(dims)


def assert_same(actual, expected) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if actual.dtype.kind in "fc" or actual.dtype == np_type("bf16"):
        assert np.array_equal(actual, expected, equal_nan=True), (actual, expected)
        if actual.dtype.kind != "c":
            assert np.array_equal(np.signbit(actual), np.signbit(expected)), (actual, expected)
        return
    assert np.array_equal(actual, expected), (actual, expected)


def run_both(text: str, args: list) -> list:
    """Compile for the CPU (no fallbacks allowed), run, compare with the interpreter."""
    executable = xlapy.compile(text, backend="cpu")
    assert executable.fallbacks == []
    got = executable.execute(*args)
    want = xlapy.execute(text, args, backend="interpreter")
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(g, w)
    return got


def shape_text(name: str, dims, layout=None) -> str:
    dims_text = ",".join(map(str, dims))
    order = layout if layout is not None else tuple(range(len(dims) - 1, -1, -1))
    return f"{name}[{dims_text}]{{{','.join(map(str, order))}}}"


# -- comparators ----------------------------------------------------------------------------
def comparator(kind: str, types: list) -> str:
    """A comparator computation `cmp` over operands of `types`, by kind:
    lt / gt on operand 0 (TOTALORDER for floats), `plain` (a FLOAT compare; NaN-free
    inputs only), `jax` (JAX's canonicalise-then-TOTALORDER), `two_keys` (operand 0,
    then operand 1 on ties)."""
    params = [f"  p{i} = {t}[] parameter({i})" for i, t in
              enumerate(t for t in types for _ in range(2))]
    t0 = types[0]
    total = ", type=TOTALORDER" if t0 in FLOATS else ""
    if kind in ("lt", "gt"):
        body = [f"  ROOT c = pred[] compare(p0, p1), direction={kind.upper()}{total}"]
    elif kind == "plain":
        body = ["  ROOT c = pred[] compare(p0, p1), direction=LT"]
    elif kind == "jax":
        body = _jax_canonical(t0) + [
            f"  ROOT c = pred[] compare(k0, k1), direction=LT{total}"]
    else:
        t1 = types[1]
        total1 = ", type=TOTALORDER" if t1 in FLOATS else ""
        body = [f"  lt0 = pred[] compare(p0, p1), direction=LT{total}",
                f"  eq0 = pred[] compare(p0, p1), direction=EQ{total}",
                f"  lt1 = pred[] compare(p2, p3), direction=LT{total1}",
                "  tie = pred[] and(eq0, lt1)",
                "  ROOT c = pred[] or(lt0, tie)"]
    return "cmp {\n" + "\n".join(params + body) + "\n}\n"


def _jax_canonical(t: str) -> list:
    if t not in FLOATS:
        return ["  k0 = " + t + "[] copy(p0)", "  k1 = " + t + "[] copy(p1)"]
    lines = [f"  zero = {t}[] constant(0)", f"  qnan = {t}[] constant(nan)"]
    for side in (0, 1):
        lines += [f"  isnan{side} = pred[] compare(p{side}, p{side}), direction=NE",
                  f"  iszero{side} = pred[] compare(p{side}, zero), direction=EQ",
                  f"  nz{side} = {t}[] select(iszero{side}, zero, p{side})",
                  f"  k{side} = {t}[] select(isnan{side}, qnan, nz{side})"]
    return lines


def sort_module(types: list, dims, dim: int, kind: str, layout=None, stable=True) -> str:
    params = "\n".join(f"  a{i} = {shape_text(t, dims, layout)} parameter({i})"
                       for i, t in enumerate(types))
    names = ", ".join(f"a{i}" for i in range(len(types)))
    shapes = [shape_text(t, dims, layout) for t in types]
    out = shapes[0] if len(types) == 1 else "(" + ", ".join(shapes) + ")"
    return ("HloModule sort_test\n\n" + comparator(kind, types) + "\nENTRY main {\n" + params +
            f"\n  ROOT s = {out} sort({names}), dimensions={{{dim}}}, "
            f"is_stable={'true' if stable else 'false'}, to_apply=cmp\n}}\n")


# -- tests ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["pred", *INTS, *FLOATS])
def test_one_operand_every_type(name):
    rng = np.random.default_rng(1)
    kind = "lt" if name != "pred" else "gt"
    x = sample(name, (3, 37), rng)
    run_both(sort_module([name], (3, 37), 1, kind), [x])


def test_key_value_with_iota_payload_jax_comparator():
    rng = np.random.default_rng(2)
    keys = sample("f32", (2, 1000), rng)
    payload = np.broadcast_to(np.arange(1000, dtype=np.int32), (2, 1000)).copy()
    got = run_both(sort_module(["f32", "s32"], (2, 1000), 1, "jax"), [keys, payload])
    # -0 and +0 are one key and every NaN the last: positions of ties stay in order
    for row in range(2):
        canonical = np.where(np.isnan(keys[row]), np.nan, keys[row] + 0.0)
        np.testing.assert_array_equal(got[1][row], np.argsort(canonical, kind="stable"))


def test_two_keys_three_operands_along_dimension_zero():
    rng = np.random.default_rng(3)
    args = [sample("s8", (50, 3), rng), sample("bf16", (50, 3), rng, special=False),
            sample("f64", (50, 3), rng)]
    run_both(sort_module(["s8", "bf16", "f64"], (50, 3), 0, "two_keys"), args)


def test_payload_only_comparator_operand_unused():
    """The comparator reads operand 1 only: operand 0 travels by position."""
    rng = np.random.default_rng(4)
    text = sort_module(["c64", "s32"], (4, 9), 1, "lt").replace(
        "compare(p0, p1)", "compare(p2, p3)")
    x = (rng.standard_normal((4, 9)) + 1j * rng.standard_normal((4, 9))).astype(np.complex64)
    run_both(text, [x, sample("s32", (4, 9), rng)])


def test_complex_key_moves_with_its_records():
    rng = np.random.default_rng(5)
    text = sort_module(["c128", "s32"], (2, 6), 1, "lt").replace(
        "ROOT c = pred[] compare(p0, p1), direction=LT",
        "r0 = f64[] real(p0)\n  r1 = f64[] real(p1)\n"
        "  ROOT c = pred[] compare(r0, r1), direction=LT")
    x = (np.arange(12)[::-1] + 1j * np.arange(12)).astype(np.complex128).reshape(2, 6)
    run_both(text, [x, sample("s32", (2, 6), rng)])


def test_column_major_layout_and_unstable_flag():
    rng = np.random.default_rng(6)
    x = sample("f32", (5, 33), rng, special=False)
    run_both(sort_module(["f32", "u16"], (5, 33), 1, "plain", layout=(0, 1), stable=False),
             [x, sample("u16", (5, 33), rng)])


@pytest.mark.parametrize("dims", [(0, 4), (4, 0), (1, 1), (7,)])
def test_degenerate_shapes(dims):
    rng = np.random.default_rng(7)
    dim = 0 if len(dims) <= 1 else 1
    run_both(sort_module(["s32"], dims, dim, "lt"), [sample("s32", dims, rng)])


def test_large_sort_runs_rows_on_threads_and_matches_numpy():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((64, 4096)).astype(np.float32)
    executable = xlapy.compile(sort_module(["f32"], (64, 4096), 1, "lt"), backend="cpu")
    assert executable.fallbacks == []
    (got,) = executable.execute(x)
    np.testing.assert_array_equal(got, np.sort(x, axis=1))
    one_row = rng.standard_normal(300_001).astype(np.float64)
    (got,) = xlapy.compile(sort_module(["f64"], (300_001,), 0, "gt"),
                           backend="cpu").execute(one_row)
    np.testing.assert_array_equal(got, np.sort(one_row)[::-1])


@settings(max_examples=20)
@given(data=st.data())
def test_random_sorts_match_the_interpreter(data):
    rank = data.draw(st.integers(1, 3), label="rank")
    dims = tuple(data.draw(st.lists(st.integers(1, 9), min_size=rank, max_size=rank)))
    dim = data.draw(st.integers(0, rank - 1), label="dim")
    dims = dims[:dim] + (data.draw(st.integers(1, 70), label="n"),) + dims[dim + 1:]
    count = data.draw(st.integers(1, 3), label="operands")
    types = data.draw(st.lists(st.sampled_from(["pred", "s8", "u32", "s64", *FLOATS]),
                               min_size=count, max_size=count), label="types")
    kinds = ["lt", "gt", "jax"] + (["two_keys"] if count > 1 else [])
    kind = data.draw(st.sampled_from(kinds), label="comparator")
    layout = data.draw(st.permutations(range(rank)), label="layout")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    args = [sample(t, dims, rng) for t in types]
    run_both(sort_module(types, dims, dim, kind, layout=tuple(layout)), args)


def test_a_comparator_that_cannot_be_emitted_leaves_a_valid_module(monkeypatch):
    """The half-emitted kernel is emptied: the module still compiles, the sort falls back."""
    from xlapy.analysis import assign_buffers
    from xlapy.backends.base import optimized_copy
    from xlapy.backends.cpu.codegen import Codegen
    from xlapy.backends.cpu.kernels import sort as sort_kernels
    from xlapy.backends.cpu.llvm_target import compile_to_object
    from xlapy.backends.cpu.options import CpuOptions
    from xlapy.errors import CompileError
    from xlapy.hlo.opcode import Opcode

    def unsupported(*args):
        raise CompileError("not today")

    monkeypatch.setattr(sort_kernels, "emit_scalar_computation", unsupported)
    module, _ = optimized_copy(xlapy.hlo.parse(sort_module(["f32", "s32"], (3, 80), 1, "lt")))
    codegen = Codegen(module, assign_buffers(module), CpuOptions())
    llmod = codegen.emit()
    assert [i.opcode for i in codegen.fallbacks] == [Opcode.SORT]
    assert compile_to_object(llmod)


def test_a_comparator_reading_nothing_keeps_the_order():
    rng = np.random.default_rng(9)
    text = sort_module(["f32", "s32"], (3, 40), 1, "lt").replace(
        "ROOT c = pred[] compare(p0, p1), direction=LT, type=TOTALORDER",
        "ROOT c = pred[] constant(false)")
    args = [sample("f32", (3, 40), rng), sample("s32", (3, 40), rng)]
    got = run_both(text, args)
    assert_same(got[0], args[0])
