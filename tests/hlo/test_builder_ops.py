"""Tests of the builder's op methods: for each family, the inferred shape, the
attributes in XLA's print order (and their printed spelling), values from the
interpreter checked against NumPy, and the text round trip of the module."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xlapy.hlo.attributes import (
    FftType,
    FusionKind,
    Precision,
    RawAttribute,
    RngAlgorithm,
    TriangularSolveTranspose,
)
from xlapy.hlo.builder import ComputationBuilder, ModuleBuilder
from xlapy.hlo.builder_ops import make_window
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

from .builder_util import evaluate, round_trips

F32, S32, U8, U32 = PrimitiveType.F32, PrimitiveType.S32, PrimitiveType.U8, PrimitiveType.U32
PRED, BF16, C64 = PrimitiveType.PRED, PrimitiveType.BF16, PrimitiveType.C64


def arr(element, *dims) -> Shape:
    return Shape.array(element, dims)


def f32(*dims) -> Shape:
    return arr(F32, *dims)


def text(instruction) -> str:
    return instruction.shape.to_text(False)


def finish(b: ComputationBuilder):
    """Build b's module (verified) and check the text round trip."""
    module = b.module.build(b)
    assert round_trips(module)
    return module


# -- conversions ------------------------------------------------------------------------
def test_convert_bitcast_convert_reduce_precision():
    b = ComputationBuilder("main")
    x = b.parameter(0, f32(3))
    assert text(b.convert(x, S32)) == "s32[3]"
    as_bytes = b.bitcast_convert(x, "u8")
    assert text(as_bytes) == "u8[3,4]"
    back = b.bitcast_convert(as_bytes, F32)
    assert text(back) == "f32[3]"
    rp = b.reduce_precision(back, 5, 10)
    assert list(rp.attrs) == ["exponent_bits", "mantissa_bits"]
    module = finish(b)
    values = np.array([1.0, 1 / 3, 65520.0], np.float32)
    with np.errstate(over="ignore"):  # 65520 rounds up past f16's largest finite value
        expected = values.astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(evaluate(module, values), expected)


# -- shape and data movement ------------------------------------------------------------
def test_broadcast_in_dim_and_its_size_one_stretch():
    b = ComputationBuilder("main")
    x = b.parameter(0, f32(3, 1))
    wide = b.broadcast(x, [2, 3, 4], [1, 2])  # dim 1 of size 1 stretches to 4
    assert text(wide) == "f32[2,3,4]" and wide.attrs == {"dimensions": (1,)}
    assert wide.operands[0].opcode is Opcode.RESHAPE and text(wide.operands[0]) == "f32[3]"
    module = finish(b)
    value = np.arange(3, dtype=np.float32).reshape(3, 1)
    np.testing.assert_array_equal(evaluate(module, value), np.broadcast_to(value, (2, 3, 4)))


def test_movement_ops_match_numpy():
    b = ComputationBuilder("main")
    x = b.parameter(0, f32(4, 6))
    t = b.transpose(x, [1, 0])
    r = b.reverse(t, [0])
    s = b.slice(r, [1, 0], [6, 4], [2, 3])
    assert s.attrs["slice"][0].to_text() == "[1:6:2]" and text(s) == "f32[3,2]"
    flat = b.reshape(s, [6])
    i = b.constant(np.int32(2))
    ds = b.dynamic_slice(flat, [i], [3])
    dus = b.dynamic_update_slice(flat, b.negate(ds), [b.constant(np.int32(5))])  # clamps to 3
    cat = b.concatenate([dus, ds], 0)
    padded = b.pad(cat, b.constant(np.float32(-1)), [(1, -2, 1)])
    assert padded.attrs["padding"].to_text() == "1_-2_1" and text(padded) == "f32[16]"
    module = finish(b)
    v = np.arange(24, dtype=np.float32).reshape(4, 6)
    sliced = v.T[::-1][1:6:2, 0:4:3].reshape(6)
    updated = sliced.copy()
    updated[3:6] = -sliced[2:5]
    cat_v = np.concatenate([updated, sliced[2:5]])
    interior = np.full(2 * len(cat_v) - 1, -1, np.float32)
    interior[::2] = cat_v
    expected = np.concatenate([[-1], interior])[:-2]
    np.testing.assert_array_equal(evaluate(module, v), expected)


def test_iota_tuple_get_tuple_element_copy_opt_barrier_after_all():
    b = ComputationBuilder("main")
    io = b.iota(arr(S32, 2, 3), 1)
    assert io.attrs == {"iota_dimension": 1}
    tok = b.after_all([b.after_all()])
    assert text(tok) == "token[]"
    t = b.tuple([io, b.copy(io)])
    barrier = b.opt_barrier(t)
    assert text(barrier) == "(s32[2,3], s32[2,3])"
    b.get_tuple_element(barrier, 1)
    module = finish(b)
    np.testing.assert_array_equal(evaluate(module), [[0, 1, 2], [0, 1, 2]])


def test_gather_attributes_in_xla_order_and_values():
    b = ComputationBuilder("main")
    table = b.parameter(0, f32(5, 3))
    ids = b.parameter(1, arr(S32, 4, 1))
    rows = b.gather(table, ids, offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0],
                    index_vector_dim=1, slice_sizes=[1, 3], indices_are_sorted=True)
    assert list(rows.attrs) == ["offset_dims", "collapsed_slice_dims", "start_index_map",
                                "index_vector_dim", "slice_sizes", "indices_are_sorted"]
    assert text(rows) == "f32[4,3]"
    module = finish(b)
    assert "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, " \
           "slice_sizes={1,3}, indices_are_sorted=true" in module.to_text()
    v = np.arange(15, dtype=np.float32).reshape(5, 3)
    idx = np.array([[4], [0], [9], [2]], np.int32)  # 9 clamps to 4
    np.testing.assert_array_equal(evaluate(module, v, idx), v[[4, 0, 4, 2]])


def test_batched_gather_keeps_batching_dims():
    b = ComputationBuilder("main")
    x = b.parameter(0, f32(2, 5))
    ids = b.parameter(1, arr(S32, 2, 3, 1))
    g = b.gather(x, ids, offset_dims=[], collapsed_slice_dims=[1], start_index_map=[1],
                 index_vector_dim=2, slice_sizes=[1, 1], operand_batching_dims=[0],
                 start_indices_batching_dims=[0])
    assert list(g.attrs)[3:5] == ["operand_batching_dims", "start_indices_batching_dims"]
    assert text(g) == "f32[2,3]"
    finish(b)


def test_scatter_add_values():
    b = ComputationBuilder("main")
    acc = b.parameter(0, f32(4))
    ids = b.parameter(1, arr(S32, 3, 1))
    upd = b.parameter(2, f32(3))
    sc = b.scatter(acc, ids, upd, b.scalar_reducer(Opcode.ADD, F32), update_window_dims=[],
                   inserted_window_dims=[0], scatter_dims_to_operand_dims=[0],
                   index_vector_dim=1, unique_indices=False)
    assert list(sc.attrs) == ["update_window_dims", "inserted_window_dims",
                              "scatter_dims_to_operand_dims", "index_vector_dim", "to_apply"]
    module = finish(b)
    got = evaluate(module, np.zeros(4, np.float32), np.array([[1], [3], [1]], np.int32),
                   np.array([1, 2, 3], np.float32))
    np.testing.assert_array_equal(got, [0, 4, 0, 2])


# -- dot and convolution ----------------------------------------------------------------
def test_dot_general_attributes_shape_and_precision():
    b = ComputationBuilder("main")
    lhs = b.parameter(0, f32(2, 3, 4))
    rhs = b.parameter(1, f32(2, 4, 5))
    d = b.dot(lhs, rhs, [2], [1], [0], [0], precision=Precision.HIGHEST)
    assert list(d.attrs) == ["lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims",
                             "rhs_contracting_dims", "operand_precision"]
    assert text(d) == "f32[2,3,5]"
    plain = b.dot(b.reshape(lhs, [6, 4]), b.reshape(rhs, [4, 10]), [1], [0], precision="default")
    assert list(plain.attrs) == ["lhs_contracting_dims", "rhs_contracting_dims"]
    b.tuple([d, plain])
    module = finish(b)
    assert "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, " \
           "rhs_contracting_dims={1}, operand_precision={highest,highest}" in module.to_text()
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    y = np.arange(40, dtype=np.float32).reshape(2, 4, 5)
    got = evaluate(module, x, y)
    np.testing.assert_allclose(got[0], np.einsum("bij,bjk->bik", x, y))


def test_dot_with_a_preferred_element_type():
    b = ComputationBuilder("main")
    x = b.parameter(0, arr(BF16, 2, 3))
    d = b.dot(x, x, [1], [1], preferred_element_type=F32)
    assert text(d) == "f32[2,2]"
    finish(b)


def test_convolution_nhwc_with_groups():
    b = ComputationBuilder("main")
    image = b.parameter(0, f32(1, 8, 8, 4))
    kernel = b.parameter(1, f32(3, 3, 2, 6))
    window = make_window([3, 3], strides=[2, 2], padding=[(1, 1), (1, 1)])
    conv = b.convolution(image, kernel, window, "b01f_01io->b01f", feature_group_count=2)
    assert list(conv.attrs) == ["window", "dim_labels", "feature_group_count"]
    assert text(conv) == "f32[1,4,4,6]"
    module = finish(b)
    assert "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, " \
           "feature_group_count=2" in module.to_text()


# -- reductions, sort, map --------------------------------------------------------------
def test_variadic_reduce_argmax():
    mb = ModuleBuilder("argmax")
    r = mb.computation("region")
    a, ai = r.parameter(0, f32()), r.parameter(1, arr(S32))
    c, ci = r.parameter(2, f32()), r.parameter(3, arr(S32))
    take_a = r.compare(a, c, "GE")
    r.tuple([r.select(take_a, a, c), r.select(take_a, ai, ci)])
    b = mb.computation("main")
    x = b.parameter(0, f32(3, 4))
    index = b.iota(arr(S32, 3, 4), 1)
    red = b.reduce([x, index], [b.constant(np.float32(-np.inf)), b.constant(np.int32(0))],
                   [1], r)
    assert text(red) == "(f32[3], s32[3])"
    b.get_tuple_element(red, 1)
    module = mb.build(b)
    assert round_trips(module)
    v = np.array([[1, 5, 2, 0], [7, 1, 1, 3], [0, 0, 9, 9]], np.float32)
    np.testing.assert_array_equal(evaluate(module, v), [1, 0, 2])


def test_reduce_window_max_pool_and_select_and_scatter():
    b = ComputationBuilder("main")
    x = b.parameter(0, f32(4, 4))
    window = make_window([2, 2], [2, 2])
    neg_inf = b.constant(np.float32(-np.inf))
    pooled = b.reduce_window(x, neg_inf, window, b.scalar_reducer(Opcode.MAXIMUM, F32))
    assert text(pooled) == "f32[2,2]" and list(pooled.attrs) == ["window", "to_apply"]
    grad = b.select_and_scatter(x, b.scalar_comparator("GE", F32), window,
                                b.broadcast(b.constant(np.float32(1)), [2, 2], []),
                                b.constant(np.float32(0)), b.scalar_reducer(Opcode.ADD, F32))
    assert list(grad.attrs) == ["window", "select", "scatter"] and text(grad) == "f32[4,4]"
    b.tuple([pooled, grad])
    module = finish(b)
    v = np.arange(16, dtype=np.float32).reshape(4, 4)
    got_pool, got_grad = evaluate(module, v)
    np.testing.assert_array_equal(got_pool, [[5, 7], [13, 15]])
    expected = np.zeros((4, 4), np.float32)
    expected[[1, 1, 3, 3], [1, 3, 1, 3]] = 1
    np.testing.assert_array_equal(got_grad, expected)


def test_map_and_sort_key_value():
    mb = ModuleBuilder("m")
    body = mb.computation("square")
    p = body.parameter(0, f32())
    body.multiply(p, p)
    cmp = mb.computation("by_key")
    k0, k1 = cmp.parameter(0, f32()), cmp.parameter(1, f32())
    cmp.parameter(2, arr(S32))
    cmp.parameter(3, arr(S32))
    cmp.compare(k0, k1, "LT")
    b = mb.computation("main")
    keys = b.parameter(0, f32(4))
    vals = b.iota(arr(S32, 4), 0)
    squared = b.map(keys, body)
    assert squared.attrs["dimensions"] == (0,)
    srt = b.sort([squared, vals], 0, cmp, is_stable=True)
    assert list(srt.attrs) == ["dimensions", "is_stable", "to_apply"]
    assert text(srt) == "(f32[4], s32[4])"
    module = mb.build(b)
    assert round_trips(module)
    got_keys, got_vals = evaluate(module, np.array([3, -1, 2, 0], np.float32))
    np.testing.assert_array_equal(got_keys, [0, 1, 4, 9])
    np.testing.assert_array_equal(got_vals, [3, 1, 2, 0])


# -- control flow -----------------------------------------------------------------------
def test_while_loop_counts_to_ten():
    mb = ModuleBuilder("loop")
    state = Shape.tuple([arr(S32), f32(2)])
    cond = mb.computation("cond")
    s = cond.parameter(0, state)
    cond.compare(cond.get_tuple_element(s, 0), cond.constant(np.int32(10)), "LT")
    body = mb.computation("body")
    s = body.parameter(0, state)
    i, x = body.get_tuple_element(s, 0), body.get_tuple_element(s, 1)
    body.tuple([body.add(i, body.constant(np.int32(1))), body.add(x, x)])
    b = mb.computation("main")
    init = b.tuple([b.constant(np.int32(0)), b.parameter(0, f32(2))])
    loop = b.while_loop(cond, body, init)
    assert list(loop.attrs) == ["condition", "body"]
    b.get_tuple_element(loop, 1)
    module = mb.build(b)
    assert round_trips(module)
    np.testing.assert_array_equal(evaluate(module, np.array([1, 2], np.float32)), [1024, 2048])


def _branch(mb: ModuleBuilder, name: str, opcode: Opcode):
    br = mb.computation(name)
    br.unary(opcode, br.parameter(0, f32(2)))
    return br


def test_conditional_with_pred_and_with_an_index():
    mb = ModuleBuilder("m")
    neg, exp, floor = (_branch(mb, n, o) for n, o in
                       [("neg", Opcode.NEGATE), ("exp", Opcode.EXP), ("floor", Opcode.FLOOR)])
    b = mb.computation("main")
    flag = b.parameter(0, arr(PRED))
    index = b.parameter(1, arr(S32))
    x = b.parameter(2, f32(2))
    two_way = b.conditional(flag, [x, x], [neg, exp])
    assert list(two_way.attrs) == ["true_computation", "false_computation"]
    n_way = b.conditional(index, [x, x, two_way], [neg, exp, floor])
    assert list(n_way.attrs) == ["branch_computations"] and text(n_way) == "f32[2]"
    module = mb.build(b)
    assert round_trips(module)
    v = np.array([0.5, 1.5], np.float32)
    np.testing.assert_array_equal(evaluate(module, True, np.int32(7), v), [-1, -2])  # 7 -> last


def test_call_and_fusion():
    mb = ModuleBuilder("m")
    fused = mb.computation("fused_computation")
    p0, p1 = fused.parameter(0, f32(3)), fused.parameter(1, f32(3))
    fused.multiply(fused.add(p0, p1), p1)
    b = mb.computation("main")
    x, y = b.parameter(0, f32(3)), b.parameter(1, f32(3))
    f = b.fusion([x, y], fused, FusionKind.LOOP)
    assert list(f.attrs) == ["kind", "calls"] and text(f) == "f32[3]"
    b.call(fused, [f, y])
    module = mb.build(b)
    assert round_trips(module)
    assert "kind=kLoop, calls=%fused_computation.1" in module.to_text()
    v = np.array([1, 2, 3], np.float32)
    np.testing.assert_array_equal(evaluate(module, v, v), ((v + v) * v + v) * v)


# -- linear algebra, fft, top-k, random bits, custom calls ------------------------------
def test_linalg_and_fft_shapes_and_attributes():
    b = ComputationBuilder("main")
    a = b.parameter(0, f32(3, 3))
    rhs = b.parameter(1, f32(3, 2))
    chol = b.cholesky(a, lower=True)
    assert chol.attrs == {"lower": True}
    solve = b.triangular_solve(chol, rhs, left_side=True, lower=True,
                               transpose_a=TriangularSolveTranspose.TRANSPOSE)
    assert list(solve.attrs) == ["left_side", "lower", "transpose_a"]
    assert text(solve) == "f32[3,2]"
    spectrum = b.fft(b.parameter(2, f32(8)), FftType.RFFT, [8])
    assert text(spectrum) == "c64[5]"
    assert text(b.fft(spectrum, "IRFFT", [8])) == "f32[8]"
    b.tuple([solve, spectrum])
    module = finish(b)
    assert "left_side=true, lower=true, transpose_a=TRANSPOSE" in module.to_text()


def test_topk_rng_bit_generator_and_custom_call():
    b = ComputationBuilder("main")
    x = b.parameter(0, f32(2, 5))
    top = b.topk(x, 3)
    assert text(top) == "(f32[2,3], s32[2,3])" and top.attrs == {"k": 3, "largest": True}
    state = b.parameter(1, arr(PrimitiveType.U64, 2))
    bits = b.rng_bit_generator(state, arr(U32, 4), RngAlgorithm.THREE_FRY)
    assert text(bits) == "(u64[2], u32[4])"
    cc = b.custom_call("my_op", [x], f32(5), has_side_effect=True,
                       api_version="API_VERSION_TYPED_FFI", backend_config='"cfg"')
    assert list(cc.attrs) == ["custom_call_target", "custom_call_has_side_effect",
                              "api_version", "backend_config"]
    assert cc.attrs["api_version"] == RawAttribute("API_VERSION_TYPED_FFI")
    b.tuple([top, bits, cc])
    module = finish(b)
    assert 'custom_call_target="my_op", custom_call_has_side_effect=true, ' \
           'api_version=API_VERSION_TYPED_FFI, backend_config="cfg"' in module.to_text()


def test_topk_values():
    b = ComputationBuilder("main")
    b.topk(b.parameter(0, f32(2, 5)), 2)
    values, indices = evaluate(finish(b), np.array([[1, 9, 3, 7, 5], [0, 4, 2, 4, 0]],
                                                   np.float32))
    np.testing.assert_array_equal(values, [[9, 7], [4, 4]])
    np.testing.assert_array_equal(indices, [[1, 3], [1, 3]])


# -- collectives ------------------------------------------------------------------------
def test_collectives_shapes_and_attribute_order():
    b = ComputationBuilder("main")
    x = b.parameter(0, f32(4, 2))
    add = b.scalar_reducer(Opcode.ADD, F32)
    ar = b.all_reduce(x, add, [[0, 1]], channel_id=1, use_global_device_ids=True)
    assert list(ar.attrs) == ["channel_id", "replica_groups", "use_global_device_ids",
                              "to_apply"]
    ag = b.all_gather(x, 0, [[0, 1]], channel_id=2, use_global_device_ids=True)
    assert list(ag.attrs) == ["channel_id", "replica_groups", "dimensions",
                              "use_global_device_ids"]
    assert text(ag) == "f32[8,2]"
    rs = b.reduce_scatter(x, 0, add, [[0, 1]], channel_id=3, use_global_device_ids=True)
    assert list(rs.attrs) == ["channel_id", "replica_groups", "use_global_device_ids",
                              "dimensions", "to_apply"]
    assert text(rs) == "f32[2,2]"
    a2a = b.all_to_all(x, 0, [[0, 1]])
    assert list(a2a.attrs) == ["replica_groups", "dimensions"] and text(a2a) == "f32[4,2]"
    cp = b.collective_permute(x, [[0, 1], [1, 0]], channel_id=4)
    assert cp.attrs["source_target_pairs"] == ((0, 1), (1, 0))
    assert text(b.replica_id()) == "u32[]" and text(b.partition_id()) == "u32[]"
    b.tuple([ar, ag, rs, a2a, cp])
    module = finish(b)
    assert "all-gather(" in module.to_text(short=True)


# -- random shapes against NumPy ---------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_random_movement_shapes_match_numpy(data):
    dims = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    perm = data.draw(st.permutations(range(len(dims))))
    extra = data.draw(st.lists(st.integers(1, 3), max_size=2))
    b = ComputationBuilder("main")
    x = b.parameter(0, f32(*dims))
    zeros = np.zeros(dims, np.float32)
    t = b.transpose(x, perm)
    assert t.shape.dimensions == zeros.transpose(perm).shape
    out_dims = list(extra) + list(dims)
    mapping = list(range(len(extra), len(out_dims)))
    bc = b.broadcast(x, out_dims, mapping)
    assert bc.shape.dimensions == np.broadcast_to(zeros, out_dims).shape
    flat = b.reshape(bc, [int(np.prod(out_dims))])
    starts = [data.draw(st.integers(0, d - 1)) for d in dims]
    limits = [data.draw(st.integers(s + 1, d)) for s, d in zip(starts, dims)]
    strides = [data.draw(st.integers(1, 3)) for _ in dims]
    sl = b.slice(x, starts, limits, strides)
    expected = zeros[tuple(slice(s, e, k) for s, e, k in zip(starts, limits, strides))]
    assert sl.shape.dimensions == expected.shape
    b.tuple([t, flat, sl])
    module = b.module.build(b)
    value = np.random.default_rng(0).standard_normal(dims).astype(np.float32)
    got_t, got_flat, got_sl = evaluate(module, value)
    np.testing.assert_array_equal(got_t, value.transpose(perm))
    np.testing.assert_array_equal(got_flat, np.broadcast_to(value, out_dims).reshape(-1))
    np.testing.assert_array_equal(
        got_sl, value[tuple(slice(s, e, k) for s, e, k in zip(starts, limits, strides))])


@pytest.mark.parametrize("element", [PrimitiveType.S8, PrimitiveType.F16, C64],
                         ids=lambda t: t.value)
def test_element_types_flow_through(element):
    b = ComputationBuilder("main")
    x = b.parameter(0, arr(element, 2))
    assert text(b.negate(b.add(x, x))) == f"{element.value}[2]"
    finish(b)
