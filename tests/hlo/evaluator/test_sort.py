"""The interpreter's sort and topk rules and their merge sort (sort_merge.py):
against NumPy's stable sorts and a stable Python sort under the same
comparator, for fast-path, keyed, split and general comparators."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hlo.evaluator.reduction_util import (
    INTS,
    REAL,
    Body,
    arr,
    dt,
    execute_text,
    sample,
)
from tests.hlo.evaluator.util import run_op
from tests.xla_modules import total_order_sort
from xlapy.hlo import parse
from xlapy.hlo.attributes import ComparisonType
from xlapy.hlo.evaluator import sort_merge
from xlapy.hlo.evaluator.evaluator import Evaluator
from xlapy.hlo.evaluator.scalar_function import ScalarFunction
from xlapy.hlo.ir import HloComputation
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

# -- sort ---------------------------------------------------------------------------------

def less_than(name: str, direction="LT", type_=None, params=(0, 1), count=2) -> HloComputation:
    b = Body(f"cmp_{name}")
    ps = [b.param(i, name) for i in range(count)]
    return b.build(b.compare(ps[params[0]], ps[params[1]], direction, type_))


@pytest.mark.parametrize("name", ["pred"] + REAL)
@pytest.mark.parametrize("direction", ["LT", "GT"])
def test_sort_one_operand_every_dtype(name, direction):
    x = sample(name, (3, 10), seed=14, small=name in INTS[:1])
    got = run_op("sort", arr(name, (3, 10)), x, dimensions=(1,), is_stable=True,
                 to_apply=less_than(name, direction))
    expected = np.sort(x.astype(np.float64), axis=1)
    if direction == "GT":
        expected = expected[:, ::-1]
    np.testing.assert_array_equal(got.astype(np.float64), expected)


def test_sort_along_dimension_zero():
    x = np.array([[3, 1], [1, 2], [2, 0]], dtype=np.int32)
    got = run_op("sort", arr("s32", (3, 2)), x, dimensions=(0,), to_apply=less_than("s32"))
    np.testing.assert_array_equal(got, [[1, 0], [2, 1], [3, 2]])


def test_sort_multiple_operands_docs_example():
    # operation_semantics.md: keys [3, 1] carry [42, 50] and [-3.0, 1.1] along.
    keys = np.array([3, 1], dtype=np.int32)
    b = Body("cmp3")
    ps = [b.param(i, n) for i, n in enumerate(["s32", "s32", "s32", "s32", "f32", "f32"])]
    cmp = b.build(b.compare(ps[0], ps[1], "LT"))
    shape = Shape.tuple([arr("s32", (2,)), arr("s32", (2,)), arr("f32", (2,))])
    k, v, w = run_op("sort", shape, keys, np.array([42, 50], np.int32),
                     np.array([-3.0, 1.1], np.float32), dimensions=(0,), to_apply=cmp)
    np.testing.assert_array_equal(k, [1, 3])
    np.testing.assert_array_equal(v, [50, 42])
    np.testing.assert_array_equal(w, np.array([1.1, -3.0], np.float32))


@pytest.mark.parametrize("direction", ["LT", "GT"])
@pytest.mark.parametrize("swapped", [False, True])
def test_sort_is_stable_with_payload(direction, swapped):
    keys = np.array([2, 1, 2, 0, 1, 2, 0], dtype=np.int8)
    payload = np.arange(7, dtype=np.int32)
    b = Body("cmp")
    ps = [b.param(0, "s8"), b.param(1, "s8"), b.param(2, "s32"), b.param(3, "s32")]
    lhs, rhs = (ps[1], ps[0]) if swapped else (ps[0], ps[1])  # compare(rhs, lhs) flips order
    cmp = b.build(b.compare(lhs, rhs, direction))
    shape = Shape.tuple([arr("s8", (7,)), arr("s32", (7,))])
    k, p = run_op("sort", shape, keys, payload, dimensions=(0,), is_stable=True, to_apply=cmp)
    descending = (direction == "GT") != swapped
    order = np.argsort(-keys.astype(int) if descending else keys, kind="stable")
    np.testing.assert_array_equal(p, order)
    np.testing.assert_array_equal(k, keys[order])


@pytest.mark.parametrize("name", ["f16", "bf16", "f32", "f64"])
def test_sort_totalorder_places_nans_and_signed_zeros(name):
    nan = np.float32(np.nan)
    x = np.array([1.0, -nan, 0.0, -np.inf, nan, -0.0, np.inf, -1.0], dtype=np.float32)
    x = x.astype(dt(name))
    got = run_op("sort", arr(name, (8,)), x, dimensions=(0,),
                 to_apply=less_than(name, "LT", "TOTALORDER"))
    bits = got.astype(np.float32)
    assert np.isnan(bits[0]) and np.signbit(bits[0])
    np.testing.assert_array_equal(bits[1:7], [-np.inf, -1, 0, 0, 1, np.inf])
    assert np.signbit(bits[3]) and not np.signbit(bits[4])  # -0 before +0
    assert np.isnan(bits[7]) and not np.signbit(bits[7])
    down = run_op("sort", arr(name, (8,)), x, dimensions=(0,),
                  to_apply=less_than(name, "GT", "TOTALORDER"))
    assert down.tobytes() == got[::-1].tobytes()


def lexicographic(name0: str, name1: str) -> HloComputation:
    """(k0, k1) less-than: k0 first, k1 breaks ties (a general-path comparator)."""
    b = Body("lex")
    a0, b0, a1, b1 = b.param(0, name0), b.param(1, name0), b.param(2, name1), b.param(3, name1)
    lt0, eq0, lt1 = b.compare(a0, b0, "LT"), b.compare(a0, b0, "EQ"), b.compare(a1, b1, "LT")
    return b.build(b.op(Opcode.OR, "pred", lt0, b.op(Opcode.AND, "pred", eq0, lt1)))


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(0, 3), n=st.integers(0, 40), seed=st.integers(0, 1000))
def test_sort_general_comparator_matches_lexsort(rows, n, seed):
    rng = np.random.default_rng(seed)
    k0 = rng.integers(0, 4, (rows, n)).astype(np.int32)
    k1 = rng.standard_normal((rows, n)).astype(np.float32)
    shape = Shape.tuple([arr("s32", (rows, n)), arr("f32", (rows, n))])
    a, b = run_op("sort", shape, k0, k1, dimensions=(1,), is_stable=True,
                  to_apply=lexicographic("s32", "f32"))
    order = np.lexsort((k1, k0), axis=-1) if n else np.zeros((rows, 0), int)
    np.testing.assert_array_equal(a, np.take_along_axis(k0, order, -1))
    np.testing.assert_array_equal(b, np.take_along_axis(k1, order, -1))


def test_sort_general_comparator_is_stable():
    # Only k0 decides (k1 always equal), through the general path.
    k0 = np.array([1, 0, 1, 0, 1], dtype=np.int32)
    k1 = np.zeros(5, dtype=np.float32)
    payload = np.arange(5, dtype=np.int32)
    b = Body("lex3")
    ps = [b.param(i, n) for i, n in enumerate(["s32", "s32", "f32", "f32", "s32", "s32"])]
    lt0, eq0 = b.compare(ps[0], ps[1], "LT"), b.compare(ps[0], ps[1], "EQ")
    cmp = b.build(b.op(Opcode.OR, "pred", lt0,
                       b.op(Opcode.AND, "pred", eq0, b.compare(ps[2], ps[3], "LT"))))
    shape = Shape.tuple([arr("s32", (5,)), arr("f32", (5,)), arr("s32", (5,))])
    _, _, p = run_op("sort", shape, k0, k1, payload, dimensions=(0,), is_stable=True,
                     to_apply=cmp)
    np.testing.assert_array_equal(p, [1, 3, 0, 2, 4])


def test_sort_float_compare_with_nans_keeps_every_element():
    # FLOAT LT leaves NaN unordered (no strict weak order): the result is
    # implementation-defined, but it must still be a permutation of the input.
    x = np.array([3, np.nan, 1, np.nan, 2, 0, np.nan, 5], dtype=np.float32)
    got = run_op("sort", arr("f32", (8,)), x, dimensions=(0,), to_apply=less_than("f32"))
    assert np.isnan(got).sum() == 3
    np.testing.assert_array_equal(np.sort(got[~np.isnan(got)]), [0, 1, 2, 3, 5])


def test_merge_sort_of_no_order_still_permutes():
    # A comparator that is no order at all ("less" always true, or a coin flip)
    # has no sorted result, but the merge still returns a permutation of each row.
    rows = [np.arange(12).reshape(2, 6)]
    perm = sort_merge.merge_sort(lambda lhs, rhs: np.ones(lhs[0].shape, bool), rows)
    assert all(sorted(p.tolist()) == list(range(6)) for p in perm)
    rng = np.random.default_rng(0)
    perm = sort_merge.merge_sort(lambda lhs, rhs: rng.random(lhs[0].shape) < 0.5,
                                 [np.zeros((3, 37))])
    assert all(sorted(p.tolist()) == list(range(37)) for p in perm)


# -- general comparators against a stable sort --------------------------------------------

def canonical(b: Body, p, name: str):
    """JAX's canonicalisation before a TOTALORDER compare: -0 -> 0, NaN -> +NaN."""
    zero, nan = b.const(0, name), b.const(np.nan, name)
    p = b.op(Opcode.SELECT, name, b.compare(p, zero, "EQ"), zero, p)
    return b.op(Opcode.SELECT, name, b.compare(p, p, "NE"), nan, p)


def jax_comparator(name: str = "f32", descending: bool = False, payload: str = "s32"):
    """JAX's sort comparator on operand 0 (a payload operand 1 rides along)."""
    b = Body(f"jax_lt_{name}")
    ps = [b.param(i, name if i < 2 else payload) for i in range(4)]
    lhs, rhs = canonical(b, ps[0], name), canonical(b, ps[1], name)
    if descending:
        lhs, rhs = rhs, lhs
    return b.build(b.compare(lhs, rhs, "LT", "TOTALORDER"))


def jax_lexicographic(name0: str = "s32", name1: str = "f32") -> HloComputation:
    """JAX's comparator for num_keys=2: operand 0, then operand 1 breaks ties."""
    b = Body("jax_lex")
    ps = [b.param(i, name0 if i < 2 else name1) for i in range(4)]
    k1, k1r = canonical(b, ps[2], name1), canonical(b, ps[3], name1)
    lt1 = b.compare(k1, k1r, "LT", "TOTALORDER")
    lt0, eq0 = b.compare(ps[0], ps[1], "LT"), b.compare(ps[0], ps[1], "EQ")
    return b.build(b.op(Opcode.OR, "pred", lt0, b.op(Opcode.AND, "pred", eq0, lt1)))


def python_stable_sort(comparator: HloComputation, rows: list) -> np.ndarray:
    """The definition: Python's stable sort, asking the comparator about each
    pair (every pair's answer computed at once beforehand)."""
    count, n = rows[0].shape
    fn = ScalarFunction(Evaluator(), comparator)
    pairs = [v for row in rows for v in (row[:, :, None], row[:, None, :])]
    less = np.broadcast_to(np.asarray(fn(*pairs), bool), (count, n, n))

    def row_order(r: int) -> list[int]:
        return sorted(range(n), key=functools.cmp_to_key(
            lambda i, j: -1 if less[r, i, j] else int(less[r, j, i])))

    return np.array([row_order(r) for r in range(count)], dtype=np.int64).reshape(count, n)


def every_path(comparator: HloComputation, rows: list) -> dict:
    """The permutation from sort_permutation (its own choice of path), from the
    merge sort with the comparator split into per-element values, and from the
    merge sort walking the whole comparator each time."""
    fn = ScalarFunction(Evaluator(), comparator)

    def whole(lhs, rhs):
        return np.asarray(fn(*[v for pair in zip(lhs, rhs) for v in pair]), bool)

    paths = {"chosen": sort_merge.sort_permutation(Evaluator(), comparator, rows),
             "whole": sort_merge.merge_sort(whole, rows)}
    split = sort_merge._split(fn, comparator, rows)
    if split is not None:
        two_sided, lhs, rhs = split
        paths["split"] = sort_merge.merge_sort(
            lambda a, b: np.asarray(two_sided(*a, *b), bool), lhs, rhs)
    return paths


def sample_keys(rng, shape, name: str) -> np.ndarray:
    pool = np.array([-1.5, -0.0, 0.0, 2.0, 3.0, np.nan, -np.nan, np.inf, -np.inf], np.float32)
    return rng.choice(pool, shape).astype(dt(name))


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(["jax", "jax_descending", "bf16", "lexicographic"]),
       rows=st.integers(1, 2), n=st.integers(0, 70), seed=st.integers(0, 2**16))
def test_merge_sort_equals_python_stable_sort(kind, rows, n, seed):
    rng = np.random.default_rng(seed)
    if kind == "lexicographic":
        comparator = jax_lexicographic()
        data = [rng.integers(0, 3, (rows, n)).astype(np.int32),
                sample_keys(rng, (rows, n), "f32")]
    else:
        name = "bf16" if kind == "bf16" else "f32"
        comparator = jax_comparator(name, descending=kind == "jax_descending")
        data = [sample_keys(rng, (rows, n), name), rng.integers(0, 9, (rows, n)).astype(np.int32)]
    want = python_stable_sort(comparator, data)
    for path, perm in every_path(comparator, data).items():
        np.testing.assert_array_equal(perm, want, err_msg=path)


def test_every_path_agrees_on_a_long_row_with_ties_nans_and_zeros():
    rng = np.random.default_rng(30)
    keys = sample_keys(rng, (1, 3000), "f32")
    keys[0, ::7] = rng.standard_normal(429).astype(np.float32)
    payload = np.arange(3000, dtype=np.int32).reshape(1, 3000)
    paths = every_path(jax_comparator(), [keys, payload])
    assert set(paths) == {"chosen", "whole", "split"}
    canon = np.where(np.isnan(keys), np.float32(np.nan), keys + np.float32(0))
    order = np.argsort(np.where(np.isnan(canon), np.inf, canon), axis=-1, kind="stable")
    nan_last = np.argsort(np.isnan(canon[0, order[0]]), kind="stable")
    want = order[:, nan_last]
    for path, perm in paths.items():
        np.testing.assert_array_equal(perm, want, err_msg=path)


def test_comparators_that_order_by_one_key_are_recognised():
    key = sort_merge._key_comparator(jax_comparator())
    assert key is not None and key[0] == 0 and key[2] is False
    assert key[3] is ComparisonType.TOTALORDER
    assert sort_merge._key_comparator(jax_comparator(descending=True))[2] is True
    assert sort_merge._key_comparator(less_than("f32", "GT"))[2] is True
    assert sort_merge._key_comparator(less_than("s32", params=(0, 2), count=4)) is None
    assert sort_merge._key_comparator(jax_lexicographic()) is None


def test_split_computes_each_sides_values_once_per_element():
    x = np.array([[np.nan, -0.0, 1.0]], np.float32)
    comparator = jax_lexicographic("s32", "f32")
    fn = ScalarFunction(Evaluator(), comparator)
    two_sided, lhs, rhs = sort_merge._split(fn, comparator, [np.zeros((1, 3), np.int32), x])
    # lhs: the canonical lhs key 1 and the raw lhs key 0 (read by compare), and the same for rhs
    assert len(lhs) == len(rhs) == 2
    canon = [c for c in lhs if c.dtype == np.float32][0]
    assert np.isnan(canon[0, 0]) and not np.signbit(canon[0, 1]) and canon[0, 2] == 1
    got = two_sided(*(c[0, [0, 1, 2]] for c in lhs), *(c[0, [1, 2, 2]] for c in rhs))
    np.testing.assert_array_equal(got, [False, True, False])  # nan<0? 0<1? 1<1?


def test_general_merge_sort_makes_log_squared_comparator_calls():
    calls = []
    x = np.random.default_rng(31).standard_normal((1, 1000)).astype(np.float32)

    def less(lhs, rhs):
        calls.append(lhs[0].size)
        return lhs[0] < rhs[0]

    perm = sort_merge.merge_sort(less, [x])
    np.testing.assert_array_equal(perm[0], np.argsort(x[0], kind="stable"))
    assert len(calls) == sum(range(1, 11))  # log2(w) + 1 calls to merge runs of width w
    assert max(calls) <= 512  # only left-run elements search


# -- topk ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["pred"] + REAL)
@pytest.mark.parametrize("largest", [True, False])
def test_topk_every_dtype(name, largest):
    x = sample(name, (3, 12), seed=15, small=True)  # ties: lower index first
    shape = Shape.tuple([arr(name, (3, 4)), arr("s32", (3, 4))])
    values, indices = run_op("topk", shape, x, k=4, largest=largest)
    wide = x.astype(np.float64)
    order = np.argsort(-wide if largest else wide, axis=-1, kind="stable")[:, :4]
    np.testing.assert_array_equal(indices, order)
    np.testing.assert_array_equal(values, np.take_along_axis(x, order, -1))
    assert indices.dtype == np.int32


def test_topk_nan_ordering_is_total_order():
    nan = np.float32(np.nan)
    x = np.array([1, nan, -nan, 5, -np.inf, 5], dtype=np.float32)
    shape = Shape.tuple([arr("f32", (6,)), arr("s32", (6,))])
    _, top = run_op("topk", shape, x, k=6, largest=True)
    np.testing.assert_array_equal(top, [1, 3, 5, 0, 4, 2])  # +NaN first, -NaN last
    _, bottom = run_op("topk", shape, x, k=6, largest=False)
    np.testing.assert_array_equal(bottom, [2, 4, 0, 3, 5, 1])


@pytest.mark.parametrize("params", [2, 4])
def test_topk_custom_call_follows_its_comparator(params):
    x = np.array([[3, 1, 4, 1, 5, 9, 2, 6], [5, 3, 5, 8, 9, 7, 9, 3]], dtype=np.float32)
    b = Body("gt")
    ps = [b.param(i, "f32" if i < 2 else "s32") for i in range(params)]
    cmp = b.build(b.compare(ps[0], ps[1], "GT", "TOTALORDER"))
    shape = Shape.tuple([arr("f32", (2, 3)), arr("s32", (2, 3))])
    values, indices = run_op("custom-call", shape, x, custom_call_target="TopK", to_apply=cmp)
    np.testing.assert_array_equal(values, [[9, 6, 5], [9, 9, 8]])
    np.testing.assert_array_equal(indices, [[5, 7, 4], [4, 6, 3]])


# -- whole modules as JAX and XLA print them ----------------------------------------------

JAX_SORT_KEY_VALUE = """
HloModule jit_sort_kv, entry_computation_layout={(f32[7]{0}, s32[7]{0})->(f32[7]{0}, s32[7]{0})}

region_0.3 {
  Arg_2.6 = s32[] parameter(2)
  Arg_3.7 = s32[] parameter(3)
  Arg_0.4 = f32[] parameter(0)
  compare.12 = pred[] compare(Arg_0.4, Arg_0.4), direction=NE
  constant.8 = f32[] constant(nan)
  constant.9 = f32[] constant(0)
  compare.10 = pred[] compare(Arg_0.4, constant.9), direction=EQ
  select.11 = f32[] select(compare.10, constant.9, Arg_0.4)
  select.13 = f32[] select(compare.12, constant.8, select.11)
  Arg_1.5 = f32[] parameter(1)
  compare.16 = pred[] compare(Arg_1.5, Arg_1.5), direction=NE
  compare.14 = pred[] compare(Arg_1.5, constant.9), direction=EQ
  select.15 = f32[] select(compare.14, constant.9, Arg_1.5)
  select.17 = f32[] select(compare.16, constant.8, select.15)
  ROOT compare.18 = pred[] compare(select.13, select.17), direction=LT, type=TOTALORDER
}

ENTRY main.23 {
  Arg_0.1 = f32[7]{0} parameter(0)
  Arg_1.2 = s32[7]{0} parameter(1)
  ROOT sort.19 = (f32[7]{0}, s32[7]{0}) sort(Arg_0.1, Arg_1.2), dimensions={0}, is_stable=true, to_apply=region_0.3
}
"""


def test_jax_sort_comparator_module():
    # JAX canonicalises NaN and -0 before a TOTALORDER compare: -0 and 0 tie (stable),
    # NaNs of either sign go last, in input order.
    keys = np.array([3, np.nan, -0.0, 0.0, -np.inf, 1, -np.nan], np.float32)
    got_keys, got_values = execute_text(JAX_SORT_KEY_VALUE, keys, np.arange(7, dtype=np.int32))
    np.testing.assert_array_equal(got_values, [4, 2, 3, 5, 0, 1, 6])
    np.testing.assert_array_equal(got_keys, keys[[4, 2, 3, 5, 0, 1, 6]])


XLA_TOPK_CUSTOM_CALL = """
HloModule topk_custom_call, entry_computation_layout={(f32[3,8]{1,0})->(f32[3,3]{1,0}, s32[3,3]{1,0})}

%compare.1 (p.0.lhs.2: f32[], p.0.rhs.3: f32[], p.1.lhs.4: s32[], p.1.rhs.5: s32[]) -> pred[] {
  %p.1.lhs.4 = s32[] parameter(2)
  %p.1.rhs.5 = s32[] parameter(3)
  %p.0.lhs.2 = f32[] parameter(0)
  %p.0.rhs.3 = f32[] parameter(1)
  ROOT %compare.6 = pred[] compare(f32[] %p.0.lhs.2, f32[] %p.0.rhs.3), direction=GT, type=TOTALORDER
}

ENTRY %main.12 (Arg_0.7: f32[3,8]) -> (f32[3,3], s32[3,3]) {
  %Arg_0.7 = f32[3,8]{1,0} parameter(0)
  ROOT %custom-call.8 = (f32[3,3]{1,0}, s32[3,3]{1,0}) custom-call(f32[3,8]{1,0} %Arg_0.7), custom_call_target="TopK", called_computations={%compare.1}
}
"""


def test_xla_topk_custom_call_module():
    x = np.array([[3, 1, 4, 1, 5, 9, 2, 6], [np.nan, 0, 1, np.nan, 2, 3, 4, 5],
                  [1, 1, 1, 1, 1, 1, 1, 1]], np.float32)
    values, indices = execute_text(XLA_TOPK_CUSTOM_CALL, x)
    np.testing.assert_array_equal(indices, [[5, 7, 4], [0, 3, 7], [0, 1, 2]])
    np.testing.assert_array_equal(values, np.take_along_axis(x, indices, 1))


XLA_F16_TOTAL_ORDER_SORT = total_order_sort("f16", "s16", 32767, (600, 6), 0)


def test_xla_optimised_f16_comparator_sorts_on_whole_arrays():
    # XLA's optimised comparator bitcasts f16 keys to s16 (a `bitcast`, not a
    # bitcast-convert): taken for a pass-through, the body went element by element,
    # a 1000x48 sort ran past the JAX campaign's two minutes (program 4990)
    comparator = parse(XLA_F16_TOTAL_ORDER_SORT).computation("region_0.1")
    x = np.random.default_rng(4990).standard_normal((600, 6)).astype(np.float16)
    x[[3, 50], 1] = [np.nan, -0.0]
    fn = ScalarFunction(Evaluator(), comparator)
    np.testing.assert_array_equal(fn(x[:-1, 0], x[1:, 0]), x[:-1, 0] < x[1:, 0])
    assert fn.vectorise  # still on whole arrays after that call
    assert sort_merge._key_comparator(comparator) is not None
    (got,) = execute_text(XLA_F16_TOTAL_ORDER_SORT, x)
    canon = np.where(x == 0, np.float16(0), x)
    np.testing.assert_array_equal(got, np.sort(canon, axis=0))
