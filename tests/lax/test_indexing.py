"""lax dynamic slicing, gather and the scatter family: against NumPy indexing
(with XLA's clamping and JAX's out-of-bounds modes), eagerly and under jit,
and their errors."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xlapy
from xlapy import config, lax
from xlapy.core.errors import ConcretizationError
from xlapy.core.pytree import tree_leaves
from xlapy.hlo.opcode import Opcode


def both(fn, *args):
    """fn eagerly and under jit; asserts they agree and returns the eager result."""
    eager = fn(*args)
    jitted = xlapy.jit(fn)(*args)
    for e, j in zip(tree_leaves(eager), tree_leaves(jitted), strict=True):
        assert e.dtype == j.dtype and e.shape == j.shape and e.weak_type == j.weak_type
        np.testing.assert_array_equal(np.asarray(e), np.asarray(j))
    return eager


def check(fn, *args, expected):
    out = both(fn, *args)
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_array_equal(np.asarray(out), expected)


def entry_ops(fn, *args):
    module = xlapy.jit(fn).lower(*args).module
    return [i for i in module.entry_computation.instructions]


def sample(shape, dtype=np.float32, seed=0):
    values = np.random.default_rng(seed).integers(-50, 50, size=shape)
    if np.dtype(dtype) == np.bool_:
        return values > 0
    if np.dtype(dtype).kind == "u":
        values = np.abs(values)
    return values.astype(dtype)


X = sample((4, 5))


# -- dynamic_slice -----------------------------------------------------------------------
def clamped_starts(shape, starts, sizes, allow_negative=True):
    out = []
    for i, d, s in zip(starts, shape, sizes):
        i = i + d if allow_negative and i < 0 else i
        out.append(min(max(i, 0), d - s))
    return out


def dynamic_slice_reference(x, starts, sizes, allow_negative=True):
    starts = clamped_starts(x.shape, starts, sizes, allow_negative)
    return x[tuple(slice(a, a + s) for a, s in zip(starts, sizes))]


DS = xlapy.jit(lambda x, i, j, sizes: lax.dynamic_slice(x, (i, j), sizes), static_argnums=(3,))
DUS = xlapy.jit(lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)))
STARTS = st.tuples(st.integers(-7, 7), st.integers(-7, 7))
SIZES = st.sampled_from([(1, 1), (2, 3), (4, 5), (0, 2)])


@given(STARTS, SIZES)
def test_dynamic_slice_clamps_and_wraps_like_jax(starts, sizes):
    expected = dynamic_slice_reference(X, starts, sizes)
    np.testing.assert_array_equal(np.asarray(lax.dynamic_slice(X, starts, sizes)), expected)
    traced = DS(X, np.int32(starts[0]), np.int32(starts[1]), sizes)
    np.testing.assert_array_equal(np.asarray(traced), expected)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.uint8, np.complex64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64, np.uint8, np.int8])
def test_dynamic_slice_dtypes(dtype, index_dtype):
    x = sample((3, 4), dtype)
    check(lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 2)), x, index_dtype(2),
          expected=dynamic_slice_reference(x, (2, 1), (2, 2)))


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
def test_dynamic_slice_indices_share_one_dtype(x64):
    with config.enable_x64(x64):   # NumPy's int64 is int32 without x64
        ops = entry_ops(lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 2)), X, np.int64(1))
    slice_op = [o for o in ops if o.opcode is Opcode.DYNAMIC_SLICE][0]
    assert {o.shape.element_type.value for o in slice_op.operands[1:]} == \
        {"s64" if x64 else "s32"}


def test_dynamic_slice_takes_a_1d_index_array():
    check(lambda x, s: lax.dynamic_slice(x, s, (2, 2)), X, np.array([-1, 3], np.int32),
          expected=dynamic_slice_reference(X, (-1, 3), (2, 2)))


def test_dynamic_slice_without_negative_indices_clamps_them():
    out = lax.dynamic_slice(X, (-1, -2), (2, 2), allow_negative_indices=False)
    np.testing.assert_array_equal(np.asarray(out), X[:2, :2])
    out = lax.dynamic_slice(X, (-1, -2), (2, 2), allow_negative_indices=(True, False))
    np.testing.assert_array_equal(np.asarray(out), X[2:4, :2])


def test_dynamic_slice_keeps_the_operand_weak_type():
    assert lax.dynamic_slice(lax.full((3,), 1.0), (np.int32(1),), (2,)).weak_type
    assert not lax.dynamic_slice(X, (np.int32(1), 0), (2, 2)).weak_type


def test_dynamic_slice_errors():
    with pytest.raises(TypeError, match="start index 0 must be an integer scalar"):
        lax.dynamic_slice(X, (1.0, 0), (1, 1))
    with pytest.raises(TypeError, match="needs one start index per dimension"):
        lax.dynamic_slice(X, (0,), (1, 1))
    with pytest.raises(TypeError, match="slice size 6 of dimension 1 must be within"):
        lax.dynamic_slice(X, (0, 0), (1, 6))
    with pytest.raises(ConcretizationError, match="slice_sizes must be a static integer"):
        xlapy.jit(lambda x, n: lax.dynamic_slice(x, (0, 0), (n, 1)))(X, 2)


@pytest.mark.parametrize("start,size,axis", [(1, 2, 0), (-2, 3, 1), (9, 2, -1)])
def test_dynamic_slice_in_dim(start, size, axis):
    starts, sizes = [0, 0], list(X.shape)
    starts[axis], sizes[axis] = start, size
    check(lambda x, i: lax.dynamic_slice_in_dim(x, i, size, axis), X, np.int32(start),
          expected=dynamic_slice_reference(X, starts, sizes))


@pytest.mark.parametrize("index,axis,keepdims", [(1, 0, True), (-1, 1, False), (7, 0, False)])
def test_dynamic_index_in_dim(index, axis, keepdims):
    wrapped = index + X.shape[axis] if index < 0 else min(index, X.shape[axis] - 1)
    expected = np.take(X, [wrapped] if keepdims else wrapped, axis)
    check(lambda x, i: lax.dynamic_index_in_dim(x, i, axis, keepdims), X, np.int32(index),
          expected=expected)


# -- dynamic_update_slice ----------------------------------------------------------------
def dynamic_update_reference(x, update, starts):
    starts = clamped_starts(x.shape, starts, update.shape)
    out = x.copy()
    out[tuple(slice(a, a + s) for a, s in zip(starts, update.shape))] = update
    return out


@given(STARTS)
def test_dynamic_update_slice_clamps_and_wraps(starts):
    update = sample((2, 3), seed=1)
    expected = dynamic_update_reference(X, update, starts)
    np.testing.assert_array_equal(np.asarray(lax.dynamic_update_slice(X, update, starts)),
                                  expected)
    traced = DUS(X, update, np.int32(starts[0]), np.int32(starts[1]))
    np.testing.assert_array_equal(np.asarray(traced), expected)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.float16])
def test_dynamic_update_slice_dtypes(dtype):
    x, u = sample((3, 4), dtype), sample((1, 4), dtype, 1)
    check(lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 0)), x, u, np.int64(2),
          expected=dynamic_update_reference(x, u, (2, 0)))


def test_dynamic_update_slice_errors():
    with pytest.raises(TypeError, match="update has dtype int32"):
        lax.dynamic_update_slice(X, np.zeros((1, 1), np.int32), (0, 0))
    with pytest.raises(TypeError, match="larger than operand shape"):
        lax.dynamic_update_slice(X, np.zeros((5, 1), np.float32), (0, 0))
    with pytest.raises(TypeError, match="must have the rank"):
        lax.dynamic_update_slice(X, np.zeros(3, np.float32), (0, 0))


def test_dynamic_update_slice_in_dim_and_index_in_dim():
    u = sample((4, 2), seed=2)
    check(lambda x, u, i: lax.dynamic_update_slice_in_dim(x, u, i, 1), X, u, np.int32(-1),
          expected=dynamic_update_reference(X, u, (0, 3)))
    row = sample((5,), seed=3)
    check(lambda x, r, i: lax.dynamic_update_index_in_dim(x, r, i, 0), X, row, np.int32(2),
          expected=dynamic_update_reference(X, row[None], (2, 0)))
    check(lambda x, r, i: lax.dynamic_update_index_in_dim(x, r, i, 0), X, row[None],
          np.int32(9), expected=dynamic_update_reference(X, row[None], (3, 0)))
    with pytest.raises(TypeError, match="must have rank 2 or 1"):
        lax.dynamic_update_index_in_dim(X, np.float32(1), 0, 0)


# -- gather ------------------------------------------------------------------------------
GDN = lax.GatherDimensionNumbers
ROWS = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
ROW_INDICES = np.array([[0], [3], [-1], [6], [2]], np.int32)


def clip(i, n):
    return np.clip(i, 0, n)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.uint8, np.float64])
def test_gather_rows_clamps_by_default(dtype):
    x = sample((4, 5), dtype)
    check(lambda x, i: lax.gather(x, i, ROWS, (1, 5)), x, ROW_INDICES,
          expected=x[clip(ROW_INDICES[:, 0], 3)])
    check(lambda x, i: lax.gather(x, i, ROWS, (1, 5), mode="clip"), x, ROW_INDICES,
          expected=x[clip(ROW_INDICES[:, 0], 3)])


def test_gather_batched_indices_and_columns():
    idx = np.array([[[1], [0]], [[4], [2]]], np.int32)  # batch shape (2, 2)
    dn = GDN(offset_dims=(2,), collapsed_slice_dims=(0,), start_index_map=(0,))
    check(lambda x, i: lax.gather(x, i, dn, (1, 5)), X, np.minimum(idx, 3),
          expected=X[np.minimum(idx, 3)[..., 0]])
    cols = GDN(offset_dims=(0,), collapsed_slice_dims=(1,), start_index_map=(1,))
    check(lambda x, i: lax.gather(x, i, cols, (4, 1)), X, idx, expected=X[:, idx[..., 0]])


def test_gather_points_with_a_permuted_index_map():
    idx = np.array([[0, 1], [4, 3], [2, 2], [1, 0]], np.int32)
    points = GDN(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(1, 0))
    check(lambda x, i: lax.gather(x, i, points, (1, 1)), X, idx,
          expected=X[clip(idx[:, 1], 3), clip(idx[:, 0], 4)])


def window_reference(x, idx, sizes, fill=None):
    out = []
    for start in idx:
        upper = np.array(x.shape) - sizes
        if fill is not None and (np.any(start < 0) or np.any(start > upper)):
            out.append(np.full(sizes, fill, x.dtype))
            continue
        s = np.clip(start, 0, upper)
        out.append(x[s[0]:s[0] + sizes[0], s[1]:s[1] + sizes[1]])
    return np.stack(out)


WINDOWS = GDN(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1))
WINDOW_INDICES = np.array([[0, 0], [3, 4], [1, -1], [2, 2], [3, 1]], np.int32)


def test_gather_windows():
    check(lambda x, i: lax.gather(x, i, WINDOWS, (2, 3)), X, WINDOW_INDICES,
          expected=window_reference(X, WINDOW_INDICES, (2, 3)))


def test_gather_fill_or_drop_fills_whole_windows():
    check(lambda x, i: lax.gather(x, i, WINDOWS, (2, 3), mode="fill", fill_value=-1), X,
          WINDOW_INDICES, expected=window_reference(X, WINDOW_INDICES, (2, 3), fill=-1))


@pytest.mark.parametrize("dtype,fill", [(np.float32, np.nan), (np.int32, -2**31),
                                        (np.uint8, 255), (np.bool_, True),
                                        (np.int64, np.iinfo(np.int64).min),
                                        (np.complex64, np.nan)])
def test_gather_fill_or_drop_default_fill_values(dtype, fill):
    x = sample((4, 5), dtype)
    expected = x[clip(ROW_INDICES[:, 0], 3)].copy()
    expected[[2, 3]] = fill
    check(lambda x, i: lax.gather(x, i, ROWS, (1, 5), mode=lax.GatherScatterMode.FILL_OR_DROP),
          x, ROW_INDICES, expected=expected)


def test_gather_with_batching_dims_is_take_along_axis():
    idx = np.array([[[1], [4]], [[0], [0]], [[3], [2]], [[4], [1]]], np.int32)
    dn = GDN(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
             operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    check(lambda x, i: lax.gather(x, i, dn, (1, 1)), X, idx,
          expected=np.take_along_axis(X, idx[..., 0], axis=1))


def test_gather_emits_one_gather_unless_filling():
    ops = [o.opcode for o in entry_ops(lambda x, i: lax.gather(x, i, ROWS, (1, 5)), X,
                                       ROW_INDICES)]
    assert ops.count(Opcode.GATHER) == 1 and Opcode.SELECT not in ops
    ops = [o.opcode for o in entry_ops(lambda x, i: lax.gather(x, i, ROWS, (1, 5), mode="fill"),
                                       X, ROW_INDICES)]
    assert ops.count(Opcode.GATHER) == 1 and Opcode.SELECT in ops


def test_gather_errors():
    with pytest.raises(TypeError, match="indices must have an integer dtype"):
        lax.gather(X, np.zeros((2, 1), np.float32), ROWS, (1, 5))
    with pytest.raises(TypeError, match=r"lax\.gather: .*slice_sizes"):
        lax.gather(X, ROW_INDICES, ROWS, (1, 5, 1))
    with pytest.raises(TypeError, match=r"lax\.gather: .*collapsed"):
        lax.gather(X, ROW_INDICES, ROWS, (2, 5))
    with pytest.raises(ValueError, match="Unknown gather mode"):
        lax.gather(X, ROW_INDICES, ROWS, (1, 5), mode="wrap")


# -- scatter -----------------------------------------------------------------------------
SDN = lax.ScatterDimensionNumbers
ROW_SCATTER = SDN(update_window_dims=(1,), inserted_window_dims=(0,),
                  scatter_dims_to_operand_dims=(0,))
POINT_SCATTER = SDN(update_window_dims=(), inserted_window_dims=(0, 1),
                    scatter_dims_to_operand_dims=(0, 1))
UFUNCS = {lax.scatter_add: np.add, lax.scatter_mul: np.multiply, lax.scatter_min: np.minimum,
          lax.scatter_max: np.maximum, lax.scatter_sub: np.subtract}


def scatter_reference(ufunc, x, idx, updates, mode="drop"):
    out = x.copy()
    rows = idx[:, 0]
    if mode == "clip":
        rows = np.clip(rows, 0, x.shape[0] - 1)
    keep = (rows >= 0) & (rows < x.shape[0])
    if ufunc is None:
        out[rows[keep]] = updates[keep]
    else:
        ufunc.at(out, rows[keep], updates[keep])
    return out


@pytest.mark.parametrize("op", list(UFUNCS))
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
@pytest.mark.parametrize("mode", [None, "clip", "promise_in_bounds"])
def test_scatter_combiners_on_rows(op, dtype, mode):
    idx = np.array([[1], [3], [1], [7], [-1]], np.int32)
    x, updates = sample((4, 3), dtype), sample((5, 3), dtype, 1)
    expected = scatter_reference(UFUNCS[op], x, idx, updates, mode or "drop")
    check(lambda x, i, u: op(x, i, u, ROW_SCATTER, mode=mode), x, idx, updates,
          expected=expected)


def test_scatter_replaces():
    idx = np.array([[2], [0], [9]], np.int32)
    updates = sample((3, 5), seed=4)
    check(lambda x, i, u: lax.scatter(x, i, u, ROW_SCATTER), X, idx, updates,
          expected=scatter_reference(None, X, idx, updates))
    check(lambda x, i, u: lax.scatter(x, i, u, ROW_SCATTER, mode="clip"), X, idx, updates,
          expected=scatter_reference(None, X, idx, updates, "clip"))


SCATTER_ADD = xlapy.jit(lambda x, i, u: lax.scatter_add(x, i, u, POINT_SCATTER))


@given(st.lists(st.tuples(st.integers(-2, 5), st.integers(-2, 6)), min_size=6, max_size=6))
def test_scatter_add_points_drop_out_of_bounds(points):
    idx = np.array(points, np.int32)
    updates = np.arange(1, 7, dtype=np.float32)
    keep = (idx[:, 0] >= 0) & (idx[:, 0] < 4) & (idx[:, 1] >= 0) & (idx[:, 1] < 5)
    expected = X.copy()
    np.add.at(expected, (idx[keep, 0], idx[keep, 1]), updates[keep])
    np.testing.assert_array_equal(np.asarray(lax.scatter_add(X, idx, updates, POINT_SCATTER)),
                                  expected)
    np.testing.assert_array_equal(np.asarray(SCATTER_ADD(X, idx, updates)), expected)


def test_scatter_windows_are_dropped_whole():
    dn = SDN(update_window_dims=(1, 2), inserted_window_dims=(), scatter_dims_to_operand_dims=(0, 1))
    idx = np.array([[0, 0], [3, 3], [2, 3]], np.int32)  # the second window sticks out
    updates = np.ones((3, 2, 2), np.float32)
    expected = X.copy()
    expected[0:2, 0:2] += 1
    expected[2:4, 3:5] += 1
    check(lambda x, i, u: lax.scatter_add(x, i, u, dn), X, idx, updates, expected=expected)
    clipped = expected.copy()
    clipped[2:4, 3:5] += 1  # clip moves (3, 3) to (2, 3)
    check(lambda x, i, u: lax.scatter_add(x, i, u, dn, mode="clip"), X, idx, updates,
          expected=clipped)


def test_scatter_with_batching_dims():
    idx = np.array([[[1], [1]], [[0], [4]], [[2], [3]], [[4], [0]]], np.int32)
    dn = SDN(update_window_dims=(), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
             operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
    updates = np.ones((4, 2), np.float32)
    expected = X.copy()
    for b in range(4):
        np.add.at(expected[b], idx[b, :, 0], 1)
    check(lambda x, i, u: lax.scatter_add(x, i, u, dn), X, idx, updates, expected=expected)


def test_scatter_apply_applies_once_per_occurrence():
    idx = np.array([[1], [1], [3], [8]], np.int32)
    expected = X.copy()
    expected[1] *= 4
    expected[3] *= 2
    check(lambda x, i: lax.scatter_apply(x, i, lambda v: lax.mul(v, 2.0), ROW_SCATTER,
                                         update_shape=(4, 5)), X, idx, expected=expected)


def test_scatter_sorted_and_unique_flags_reach_hlo():
    ops = entry_ops(lambda x, i, u: lax.scatter_add(x, i, u, ROW_SCATTER, indices_are_sorted=True,
                                                    unique_indices=True),
                    X, np.array([[0], [2]], np.int32), np.ones((2, 5), np.float32))
    scatter = [o for o in ops if o.opcode is Opcode.SCATTER][0]
    assert scatter.attrs["indices_are_sorted"] and scatter.attrs["unique_indices"]
    assert scatter.attrs["to_apply"].root_instruction.opcode is Opcode.ADD


def test_scatter_combiner_may_not_capture_traced_values():
    def f(x, y, i):
        return lax.scatter_apply(x, i, lambda v: lax.mul(v, y), ROW_SCATTER, update_shape=(1, 5))

    with pytest.raises(ConcretizationError, match="scatter combiners must use only"):
        xlapy.jit(f)(X, np.float32(2), np.array([[1]], np.int32))


def test_scatter_errors():
    with pytest.raises(TypeError, match="updates has dtype int32"):
        lax.scatter_add(X, np.array([[0]]), np.ones((1, 5), np.int32), ROW_SCATTER)
    with pytest.raises(TypeError, match=r"lax\.scatter_add: .*update"):
        lax.scatter_add(X, np.array([[0]]), np.ones((2, 5), np.float32), ROW_SCATTER)
    with pytest.raises(TypeError, match="combiner must return a float32 scalar"):
        lax.scatter_apply(X, np.array([[0]]), lambda v: lax.convert_element_type(v, np.int32),
                          ROW_SCATTER, update_shape=(1, 5))


# -- against jax, where installed --------------------------------------------------------
def test_gather_and_scatter_modes_against_jax():
    jax = pytest.importorskip("jax")
    jdn = jax.lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(),
                                         start_index_map=(0, 1))
    sdn = jax.lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(),
                                          scatter_dims_to_operand_dims=(0, 1))
    ours_sdn = SDN((1, 2), (), (0, 1))
    updates = sample((5, 2, 3), seed=5)
    for mode in (None, "clip", "fill", "promise_in_bounds"):
        ours = lax.gather(X, WINDOW_INDICES, WINDOWS, (2, 3), mode=mode)
        theirs = jax.lax.gather(X, WINDOW_INDICES, jdn, (2, 3), mode=mode)
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
        ours = lax.scatter_add(X, WINDOW_INDICES, updates, ours_sdn, mode=mode)
        theirs = jax.lax.scatter_add(X, WINDOW_INDICES, updates, sdn, mode=mode)
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_lowered_modules_verify_and_parse_back():
    from xlapy.hlo import parse, verifier

    def f(x, i, u):
        g = lax.gather(x, i, ROWS, (1, 5), mode="fill")
        s = lax.scatter_mul(x, i, u, ROW_SCATTER, mode="clip")
        first, second = (lax.reshape(lax.slice(i, (k, 0), (k + 1, 1)), ()) for k in (0, 1))
        d = lax.dynamic_update_index_in_dim(x, lax.index_in_dim(x, first, 0, False), second, 0)
        return g, s, d, lax.dynamic_slice(x, lax.reshape(lax.slice(i, (0, 0), (2, 1)), (2,)),
                                          (2, 2))

    args = (X, ROW_INDICES, sample((5, 5), seed=6))
    lowered = xlapy.jit(f).lower(*args)
    verifier.verify(lowered.module)
    verifier.verify(parse(lowered.as_text()))
    for a, b in zip(tree_leaves(xlapy.jit(f)(*args)), tree_leaves(f(*args))):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
