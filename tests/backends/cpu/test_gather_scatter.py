"""The CPU backend's gather, scatter and in-place dynamic-update-slice
(kernels/gather_scatter.py, kernels/in_place.py) against the interpreter:
random dimension numbers (batching dims included), every element and index
type, clamped gathers, skipped scatter windows, duplicate indices under
order-sensitive combiners, variadic scatter, fused gathers, JAX-lowered
modules; no instruction may go to the interpreter fallback."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlapy
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.opcode import Opcode

REPO = Path(__file__).resolve().parents[3]
VALUE_TYPES = ["pred", "s8", "u16", "s32", "s64", "f16", "bf16", "f32", "f64", "c64"]
INDEX_TYPES = ["s8", "u8", "s32", "u32", "s64", "u64"]


def np_type(name: str):
    return np.dtype(PrimitiveType.from_text(name).numpy)


def sample(name: str, dims, rng) -> np.ndarray:
    count = int(np.prod(dims, dtype=np.int64))
    if name == "pred":
        return (rng.random(count) < 0.5).reshape(dims)
    dtype = np_type(name)
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -20, 20, count).astype(dtype).reshape(dims)
    flat = np.round(rng.standard_normal(count) * 4, 1)
    if dtype.kind == "c":
        flat = flat + 1j * np.round(rng.standard_normal(count) * 4, 1)
    return flat.astype(dtype).reshape(dims)


def indices_sample(name: str, dims, bound: int, rng) -> np.ndarray:
    """Index values mostly in [-2, bound + 2): some clamp (gather) or skip (scatter)."""
    low = 0 if np_type(name).kind == "u" else -2
    values = rng.integers(low, bound + 2, int(np.prod(dims, dtype=np.int64)))
    return values.astype(np_type(name)).reshape(dims)


def assert_same(actual, expected) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    inexact = actual.dtype.kind in "fc" or actual.dtype == np_type("bf16")
    assert np.array_equal(actual, expected, equal_nan=inexact), (actual, expected)


def run_both(text: str, args: list):
    """Compile for the CPU (no fallbacks allowed), run, compare with the interpreter."""
    executable = xlapy.compile(text, backend="cpu")
    assert executable.fallbacks == []
    got = executable.execute(*args)
    want = xlapy.execute(text, args, backend="interpreter")
    for g, w in zip(got, want):
        assert_same(g, w)
    return executable


def shape(name: str, dims) -> str:
    return f"{name}[{','.join(map(str, dims))}]"


def braces(values) -> str:
    return "{" + ",".join(map(str, values)) + "}"


# -- random dimension numbers ---------------------------------------------------------------
def _index_layout(draw, batch: list, paired: list, k: int):
    """Indices dims: `batch` sizes with the paired batching sizes inserted, and the index
    vector dim (size k) somewhere; or implicit (trailing) when k == 1."""
    sizes = list(batch)
    positions = []
    for size in paired:
        at = draw(st.integers(0, len(sizes)))
        positions = [p + (p >= at) for p in positions] + [at]
        sizes.insert(at, size)
    implicit = k == 1 and draw(st.booleans())
    vector_dim = len(sizes) if implicit else draw(st.integers(0, len(sizes)))
    dims = list(sizes)
    if not implicit:
        dims.insert(vector_dim, k)
        positions = [p + (p >= vector_dim) for p in positions]
    return sizes, dims, vector_dim, positions


@st.composite
def gather_cases(draw):
    rank = draw(st.integers(1, 3))
    dims = draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank))
    batching = sorted(draw(st.permutations(range(rank)))[:draw(st.integers(0, rank - 1))])
    free = [d for d in range(rank) if d not in batching]
    index_map = draw(st.permutations(free))[:draw(st.integers(0, len(free)))]
    collapsed = [d for d in free if draw(st.booleans())]
    sizes = [1 if d in batching or d in collapsed else draw(st.integers(0, dims[d]))
             for d in range(rank)]
    kept = [d for d in range(rank) if d not in batching and d not in collapsed]
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    batch_sizes, index_dims, vector_dim, paired = _index_layout(
        draw, batch, [dims[d] for d in batching], len(index_map))
    out_rank = len(batch_sizes) + len(kept)
    offset_dims = sorted(draw(st.permutations(range(out_rank)))[:len(kept)])
    rest, out = iter(batch_sizes), []
    for j in range(out_rank):
        out.append(sizes[kept[offset_dims.index(j)]] if j in offset_dims else next(rest))
    return dict(dims=dims, index_dims=index_dims, out=out, offset_dims=offset_dims,
                collapsed=collapsed, index_map=index_map, batching=batching, paired=paired,
                vector_dim=vector_dim, sizes=sizes)


def gather_text(case: dict, value_type: str, index_type: str, fused: bool = False) -> str:
    root = "ROOT g" if not fused else "g"
    lines = [f"  x = {shape(value_type, case['dims'])} parameter(0)",
             f"  i = {shape(index_type, case['index_dims'])} parameter(1)",
             f"  {root} = {shape(value_type, case['out'])} gather(x, i), "
             f"offset_dims={braces(case['offset_dims'])}, "
             f"collapsed_slice_dims={braces(case['collapsed'])}, "
             f"start_index_map={braces(case['index_map'])}, "
             f"operand_batching_dims={braces(case['batching'])}, "
             f"start_indices_batching_dims={braces(case['paired'])}, "
             f"index_vector_dim={case['vector_dim']}, slice_sizes={braces(case['sizes'])}"]
    if fused:
        lines.append(f"  ROOT n = {shape(value_type, case['out'])} add(g, g)")
    return "HloModule gather_test\n\nENTRY main {\n" + "\n".join(lines) + "\n}\n"


@st.composite
def scatter_cases(draw):
    rank = draw(st.integers(1, 3))
    dims = draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank))
    batching = sorted(draw(st.permutations(range(rank)))[:draw(st.integers(0, rank - 1))])
    free = [d for d in range(rank) if d not in batching]
    index_map = draw(st.permutations(free))[:draw(st.integers(0, len(free)))]
    inserted = [d for d in free if draw(st.booleans())]
    windowed = [d for d in free if d not in inserted]
    window = [draw(st.integers(1, dims[d])) for d in windowed]
    batch = draw(st.lists(st.integers(1, 4), max_size=2))
    batch_sizes, index_dims, vector_dim, paired = _index_layout(
        draw, batch, [dims[d] for d in batching], len(index_map))
    update_rank = len(batch_sizes) + len(windowed)
    window_dims = sorted(draw(st.permutations(range(update_rank)))[:len(windowed)])
    rest, updates = iter(batch_sizes), []
    for j in range(update_rank):
        updates.append(window[window_dims.index(j)] if j in window_dims else next(rest))
    return dict(dims=dims, index_dims=index_dims, updates=updates, window_dims=window_dims,
                inserted=inserted, index_map=index_map, batching=batching, paired=paired,
                vector_dim=vector_dim)


COMBINERS = {
    "add": "ROOT r = {t}[] add(a, b)",
    "max": "ROOT r = {t}[] maximum(a, b)",
    "replace": "ROOT r = {t}[] copy(b)",
    "ordered": "twice = {t}[] add(a, a)\n  ROOT r = {t}[] subtract(b, twice)",
}


def scatter_text(case: dict, types: list, index_type: str, combiner: str,
                 in_place: bool = False) -> str:
    count = len(types)
    if count == 1:
        t = types[0]
        body = COMBINERS[combiner].format(t=t)
        if t == "pred":
            body = body.replace("add(a, b)", "or(a, b)").replace("subtract(b, twice)",
                                                                    "xor(b, twice)")
        comb = (f"comb {{\n  a = {t}[] parameter(0)\n  b = {t}[] parameter(1)\n  {body}\n}}\n")
    else:   # variadic: (sum of firsts, the second of the last update)
        t0, t1 = types
        comb = (f"comb {{\n  a0 = {t0}[] parameter(0)\n  a1 = {t1}[] parameter(1)\n"
                f"  b0 = {t0}[] parameter(2)\n  b1 = {t1}[] parameter(3)\n"
                f"  sum0 = {t0}[] add(a0, b0)\n  ROOT r = ({t0}[], {t1}[]) tuple(sum0, b1)\n}}\n")
    lines = [f"  x{k} = {shape(t, case['dims'])} parameter({k})" for k, t in enumerate(types)]
    lines.append(f"  i = {shape(index_type, case['index_dims'])} parameter({count})")
    lines += [f"  upd{k} = {shape(t, case['updates'])} parameter({count + 1 + k})"
              for k, t in enumerate(types)]
    operands = [f"x{k}" for k in range(count)]
    if in_place:   # a dead temporary: buffer assignment lets scatter write over it
        lines.append(f"  y0 = {shape(types[0], case['dims'])} negate(x0)")
        operands[0] = "y0"
    outs = [shape(t, case["dims"]) for t in types]
    out = outs[0] if count == 1 else "(" + ", ".join(outs) + ")"
    updates = ", ".join(f"upd{k}" for k in range(count))
    lines.append(
        f"  ROOT s = {out} scatter({', '.join(operands)}, i, {updates}), "
        f"update_window_dims={braces(case['window_dims'])}, "
        f"inserted_window_dims={braces(case['inserted'])}, "
        f"scatter_dims_to_operand_dims={braces(case['index_map'])}, "
        f"input_batching_dims={braces(case['batching'])}, "
        f"scatter_indices_batching_dims={braces(case['paired'])}, "
        f"index_vector_dim={case['vector_dim']}, to_apply=comb")
    return "HloModule scatter_test\n\n" + comb + "\nENTRY main {\n" + "\n".join(lines) + "\n}\n"


def scatter_args(case: dict, types: list, index_type: str, rng) -> list:
    bound = max(case["dims"])
    return ([sample(t, case["dims"], rng) for t in types] +
            [indices_sample(index_type, case["index_dims"], bound, rng)] +
            [sample(t, case["updates"], rng) for t in types])


# -- gather ---------------------------------------------------------------------------------
@settings(max_examples=30)
@given(case=gather_cases(), value_type=st.sampled_from(VALUE_TYPES),
       index_type=st.sampled_from(INDEX_TYPES), fused=st.booleans(),
       seed=st.integers(0, 2**16))
def test_random_gathers_match_the_interpreter(case, value_type, index_type, fused, seed):
    if fused and value_type == "pred":
        value_type = "s8"
    rng = np.random.default_rng(seed)
    args = [sample(value_type, case["dims"], rng),
            indices_sample(index_type, case["index_dims"], max(case["dims"]), rng)]
    run_both(gather_text(case, value_type, index_type, fused), args)


def test_gather_fuses_with_its_index_computation_and_consumer():
    text = (REPO / "tests/hlo/corpus/jax_take_along_axis.hlo").read_text()
    rng = np.random.default_rng(1)
    args = [sample("f32", (3, 5), rng), rng.integers(-5, 5, (3, 2)).astype(np.int32)]
    executable = run_both(text, args)
    fusions = [i for i in executable.module.entry_computation.instructions
               if i.opcode is Opcode.FUSION]
    assert any(inner.opcode is Opcode.GATHER for f in fusions
               for inner in f.attr("calls").instructions)


def test_huge_unsigned_indices_clamp_to_the_end():
    case = dict(dims=[6, 2], index_dims=[3, 1], out=[3, 2], offset_dims=[1], collapsed=[0],
                index_map=[0], batching=[], paired=[], vector_dim=1, sizes=[1, 2])
    indices = np.array([[2**64 - 1], [2**63], [1]], dtype=np.uint64)
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    run_both(gather_text(case, "f32", "u64"), [x, indices])


def test_large_embedding_gather_runs_native():
    rng = np.random.default_rng(2)
    case = dict(dims=[5000, 64], index_dims=[4096, 1], out=[4096, 64], offset_dims=[1],
                collapsed=[0], index_map=[0], batching=[], paired=[], vector_dim=1,
                sizes=[1, 64])
    table = rng.standard_normal((5000, 64)).astype(np.float32)
    ids = rng.integers(0, 5000, (4096, 1)).astype(np.int32)
    executable = xlapy.compile(gather_text(case, "f32", "s32"), backend="cpu")
    assert executable.fallbacks == []
    np.testing.assert_array_equal(executable.execute(table, ids)[0], table[ids[:, 0]])


# -- scatter --------------------------------------------------------------------------------
@settings(max_examples=30)
@given(case=scatter_cases(), value_type=st.sampled_from(VALUE_TYPES),
       index_type=st.sampled_from(INDEX_TYPES),
       combiner=st.sampled_from(sorted(COMBINERS)), in_place=st.booleans(),
       seed=st.integers(0, 2**16))
def test_random_scatters_match_the_interpreter(case, value_type, index_type, combiner,
                                               in_place, seed):
    if value_type in ("pred", "c64") and combiner == "max":
        combiner = "add"
    if in_place and value_type == "pred":
        in_place = False
    rng = np.random.default_rng(seed)
    types = [value_type]
    run_both(scatter_text(case, types, index_type, combiner, in_place),
             scatter_args(case, types, index_type, rng))


@settings(max_examples=10)
@given(case=scatter_cases(), seed=st.integers(0, 2**16))
def test_random_variadic_scatters_match_the_interpreter(case, seed):
    rng = np.random.default_rng(seed)
    types = ["f32", "s16"]
    run_both(scatter_text(case, types, "s32", "add"), scatter_args(case, types, "s32", rng))


def test_scatter_writes_over_a_dead_operand_in_place():
    case = dict(dims=[100, 16], index_dims=[8, 1], updates=[8, 16], window_dims=[1],
                inserted=[0], index_map=[0], batching=[], paired=[], vector_dim=1)
    rng = np.random.default_rng(3)
    text = scatter_text(case, ["f32"], "s32", "add", in_place=True)
    args = scatter_args(case, ["f32"], "s32", rng)
    args[1][:4] = 7   # duplicates accumulate in order
    executable = run_both(text, args)
    assert any(i.opcode is Opcode.SCATTER for i, _, _ in executable.assignment.shared)


@pytest.mark.parametrize("name", ["jax_scatter_add", "jax_embedding_gather",
                                  "jax_take_along_axis"])
def test_jax_lowered_modules(name):
    text = (REPO / f"tests/hlo/corpus/{name}.hlo").read_text()
    module = xlapy.hlo.parse(text)
    rng = np.random.default_rng(4)
    args = []
    for p in module.entry_computation.parameters:
        dims, dtype = p.shape.dimensions, np.dtype(p.shape.element_type.numpy)
        args.append(rng.integers(-7, 7, dims).astype(dtype) if dtype.kind in "iu"
                    else rng.standard_normal(dims).astype(dtype))
    run_both(text, args)


def test_gather_and_scatter_in_one_module():
    text = (REPO / "tests/hlo/text_samples/gather_scatter_short.hlo").read_text()
    rng = np.random.default_rng(5)
    args = [rng.standard_normal((100, 16)).astype(np.float32),
            rng.integers(-100, 100, 8).astype(np.int32),
            rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((5, 3)).astype(np.float32),
            rng.integers(-1, 4, (5, 2)).astype(np.int32)]
    run_both(text, args)


# -- dynamic-update-slice in place ----------------------------------------------------------
def dus_text(value_type: str, dims, update, index_type: str, in_place: bool) -> str:
    operand = "y" if in_place else "x"
    starts = ", ".join(f"i{d}" for d in range(len(dims)))
    lines = [f"  x = {shape(value_type, dims)} parameter(0)",
             f"  u = {shape(value_type, update)} parameter(1)"]
    lines += [f"  i{d} = {index_type}[] parameter({2 + d})" for d in range(len(dims))]
    if in_place:
        lines.append(f"  y = {shape(value_type, dims)} negate(x)")
    operands = ", ".join([operand, "u"] + ([starts] if starts else []))
    lines.append(f"  ROOT d = {shape(value_type, dims)} dynamic-update-slice({operands})")
    return "HloModule dus_test\n\nENTRY main {\n" + "\n".join(lines) + "\n}\n"


@settings(max_examples=15)
@given(dims=st.lists(st.integers(1, 6), min_size=0, max_size=3), data=st.data(),
       value_type=st.sampled_from(["s8", "s32", "bf16", "f32", "f64", "c64"]),
       index_type=st.sampled_from(INDEX_TYPES), in_place=st.booleans())
def test_dynamic_update_slice_in_place_and_not(dims, data, value_type, index_type, in_place):
    update = [data.draw(st.integers(0, d)) for d in dims]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    starts = [indices_sample(index_type, (), d, rng) for d in dims]
    text = dus_text(value_type, dims, update, index_type, in_place)
    executable = run_both(text, [sample(value_type, dims, rng), sample(value_type, update, rng),
                                 *starts])
    shared = any(i.opcode is Opcode.DYNAMIC_UPDATE_SLICE for i, _, _ in
                 executable.assignment.shared)
    assert shared == (in_place and 0 not in update and len(dims) > 0)


def test_scan_writing_one_row_per_step():
    """A while body storing one row per iteration into the carried array."""
    text = """HloModule scan

cond {
  cs = (s32[], f32[64,16]) parameter(0)
  ci = s32[] get-tuple-element(cs), index=0
  n = s32[] constant(64)
  ROOT lt = pred[] compare(ci, n), direction=LT
}

body {
  s = (s32[], f32[64,16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[64,16] get-tuple-element(s), index=1
  f = f32[] convert(i)
  row = f32[1,16] broadcast(f), dimensions={}
  zero = s32[] constant(0)
  acc2 = f32[64,16] dynamic-update-slice(acc, row, i, zero)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[64,16]) tuple(i2, acc2)
}

ENTRY main {
  x = f32[64,16] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[64,16]) tuple(z, x)
  w = (s32[], f32[64,16]) while(init), condition=cond, body=body
  ROOT r = f32[64,16] get-tuple-element(w), index=1
}
"""
    x = np.full((64, 16), -1, np.float32)
    run_both(text, [x])
