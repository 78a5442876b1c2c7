"""gather / scatter / sort / topk differentiation rules
(xlapy/autodiff/rules/indexing.py and sorting.py).

Random tests run `check_grads` (finite differences in both modes, the
dot-product test, eager and under jit) on random shapes, indices (out of
bounds included: gather clamps them, scatter drops their windows) and values.
Sorts and top_k use values spaced well apart, so finite differences never
cross a tie. Convention tests write out what the rules give where the
derivative is a choice: repeated overwrites (the update that lands gets it)
and ties in scatter min/max (shared equally, as JAX).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlapy
import xlapy.numpy as xnp
from tests.autodiff.check import check_grads
from xlapy import hlo, lax
from xlapy.core.trace import bind
from xlapy.errors import CompileError
from xlapy.hlo.opcode import Opcode

# every example runs ~4 differentiations eagerly and under jit: keep the module fast
EXAMPLES = max(3, settings.default.max_examples // 6)
few = settings(max_examples=EXAMPLES)

seeds = st.integers(0, 2**16)
sides = st.integers(1, 4)


def _normal(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape)


def _distinct(seed, shape):
    """Values at least 0.1 apart in a random order: no ties within FD's reach."""
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape, dtype=np.int64))
    return (rng.permutation(size) * 0.1 + rng.uniform(0, 0.01, size) - size * 0.05).reshape(shape)


def _indices(seed, shape, n, spill=2):
    """int32 indices in [-n - spill, n + spill): some negative, some out of bounds."""
    return np.random.default_rng(seed + 1).integers(-n - spill, n + spill, shape).astype(np.int32)


# -- gather -----------------------------------------------------------------------------------
@given(sides, sides, st.integers(1, 5), seeds)
@few
def test_take_rows(n, m, k, seed):
    x, idx = _normal(seed, (n, m)), _indices(seed, (k,), n)
    check_grads(lambda a: xnp.asarray(a)[idx], [x])


@given(sides, sides, st.integers(1, 5), seeds)
@few
def test_take_columns(n, m, k, seed):
    x, idx = _normal(seed, (n, m)), _indices(seed, (k,), m)
    check_grads(lambda a: xnp.asarray(a)[:, idx] * 2.0, [x])


@given(sides, sides, st.integers(1, 5), st.integers(0, 1), seeds)
@few
def test_take_along_axis(n, m, k, axis, seed):
    x = _normal(seed, (n, m))
    shape = (k, m) if axis == 0 else (n, k)
    idx = np.random.default_rng(seed).integers(0, (n, m)[axis], shape)
    check_grads(lambda a: xnp.take_along_axis(xnp.asarray(a), idx, axis=axis), [x])


@given(st.integers(2, 5), st.integers(2, 5), st.sampled_from(["clip", "fill"]), seeds)
@few
def test_lax_gather_windows(n, m, mode, seed):
    """2-d windows starting anywhere, out of bounds included, in both modes."""
    x = _normal(seed, (n, m))
    starts = np.stack([_indices(seed, (4,), n), _indices(seed + 7, (4,), m)], axis=-1)
    dn = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(),
                                    start_index_map=(0, 1))
    sizes = (min(2, n), min(2, m))
    check_grads(lambda a: lax.gather(a, starts, dn, sizes, mode=mode, fill_value=0.0), [x])


def test_gather_index_vector_dim_first():
    """A gather as XLA may write it: index vectors along dim 0, clamped windows."""
    x = _normal(3, (3, 6))
    idx = np.array([[0, 2, -3, 9], [1, 5, 0, 4]], np.int32)
    attrs = {"offset_dims": (1, 2), "collapsed_slice_dims": (), "start_index_map": (0, 1),
             "index_vector_dim": 0, "slice_sizes": (2, 3)}

    def f(a):
        return bind(Opcode.GATHER, [xnp.asarray(a), xnp.asarray(idx)], attrs)

    check_grads(f, [x])
    ct = np.ones((4, 2, 3))
    (grad,) = xlapy.vjp(f, x)[1](ct)
    # every start clamps into [0, 1] x [0, 3]: the windows cover rows 0-2 and cols 0-5
    expected = np.zeros((3, 6))
    for r, c in [(0, 1), (1, 3), (0, 0), (1, 3)]:
        expected[r:r + 2, c:c + 3] += 1
    np.testing.assert_array_equal(np.asarray(grad), expected)


def test_gather_batching_dims():
    x = _normal(4, (3, 6))
    idx = np.array([[1], [5], [7]], np.int32)  # per row; 5 and 7 clamp to 4
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(),
                                    start_index_map=(1,), operand_batching_dims=(0,),
                                    start_indices_batching_dims=(0,))
    check_grads(lambda a: lax.gather(a, idx, dn, (1, 2)), [x])


# -- scatter ----------------------------------------------------------------------------------
@given(sides, sides, st.integers(1, 5), seeds)
@few
def test_scatter_add(n, m, k, seed):
    """`.at[].add` with repeated and out-of-bounds (dropped) indices."""
    x, u, idx = _normal(seed, (n, m)), _normal(seed + 2, (k, m)), _indices(seed, (k,), n)
    check_grads(lambda a, b: xnp.asarray(a).at[idx].add(b), [x, u])
    check_grads(lambda a, b: xnp.asarray(a).at[idx].subtract(b), [x, u])


@given(st.integers(2, 5), st.integers(2, 5), st.sampled_from([None, "clip"]), seeds)
@few
def test_scatter_windows(n, m, mode, seed):
    """Row windows of 2 columns; some start out of bounds (dropped, or clipped)."""
    x, u = _normal(seed, (n, m)), _normal(seed + 2, (3, 2))
    starts = np.stack([_indices(seed, (3,), n), _indices(seed + 5, (3,), m)], axis=-1)
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0, 1))
    check_grads(lambda a, b: lax.scatter_add(a, starts, b, dn, mode=mode), [x, u])


@given(sides, sides, seeds)
@few
def test_scatter_set_unique(n, m, seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, n + 1))
    idx = rng.permutation(n)[:k].astype(np.int32)
    idx[0] = n + 3  # one dropped update
    x, u = _normal(seed, (n, m)), _normal(seed + 2, (k, m))
    check_grads(lambda a, b: xnp.asarray(a).at[idx].set(b), [x, u])


def test_scatter_set_duplicates_last_update_wins():
    """The interpreter applies updates in order, so the last of repeated indices
    lands; only it gets the cotangent, and the overwritten operand gets none."""
    x, u = _normal(5, (4,)), _normal(6, (3,))
    idx = np.array([1, 1, 2], np.int32)

    def f(a, b):
        return xnp.asarray(a).at[idx].set(b)

    np.testing.assert_allclose(np.asarray(f(x, u))[1], u[1])
    ct = np.array([1.0, 2.0, 3.0, 4.0])
    for wrap in (lambda g: g, xlapy.jit):
        gx, gu = wrap(lambda a, b, c: xlapy.vjp(f, a, b)[1](c))(x, u, ct)
        np.testing.assert_array_equal(np.asarray(gx), [1.0, 0.0, 0.0, 4.0])
        np.testing.assert_array_equal(np.asarray(gu), [0.0, 2.0, 3.0])
    check_grads(f, [x, u])


@given(sides, sides, seeds)
@few
def test_scatter_mul(n, m, seed):
    rng = np.random.default_rng(seed)
    idx = rng.permutation(n)[:max(1, n - 1)].astype(np.int32)
    x, u = _normal(seed, (n, m)), _normal(seed + 2, (len(idx), m))
    check_grads(lambda a, b: xnp.asarray(a).at[idx].multiply(b, unique_indices=True), [x, u])
    dup = np.concatenate([idx, idx])
    u2 = np.concatenate([u, u])
    check_grads(lambda a, b: xnp.asarray(a).at[dup].multiply(b), [x, u2], wrt=(0,))


def test_scatter_mul_repeated_updates_refused():
    def f(a, b):
        return xnp.asarray(a).at[np.array([0, 0])].multiply(b).sum()

    with pytest.raises(CompileError, match="unique_indices"):
        xlapy.grad(f, argnums=1)(np.ones(3), np.ones(2))


@given(sides, st.integers(1, 6), st.sampled_from(["min", "max"]), seeds)
@few
def test_scatter_min_max(n, k, kind, seed):
    values = _distinct(seed, (n + k,))
    x, u = values[:n], values[n:]
    idx = _indices(seed, (k,), n, spill=1)
    check_grads(lambda a, b: getattr(xnp.asarray(a).at[idx], kind)(b), [x, u])


def test_scatter_max_ties_share():
    """Every value attaining the max shares its cotangent equally (JAX's rule)."""
    x, u = np.array([1.0, 0.0]), np.array([1.0, 1.0, 0.5])
    idx = np.array([0, 0, 1], np.int32)

    def f(a, b):
        return xnp.asarray(a).at[idx].max(b)

    gx, gu = xlapy.vjp(f, x, u)[1](np.array([3.0, 1.0]))
    np.testing.assert_allclose(np.asarray(gx), [1.0, 0.0])
    np.testing.assert_allclose(np.asarray(gu), [1.0, 1.0, 1.0])
    _, t = xlapy.jvp(f, (x, u), (np.array([3.0, 0.0]), np.array([0.0, 6.0, 2.0])))
    np.testing.assert_allclose(np.asarray(t), [3.0, 2.0])


def test_scatter_apply_refused():
    def f(a):
        return xnp.asarray(a).at[np.array([1])].apply(lambda v: v * v).sum()

    with pytest.raises(CompileError, match="combiner"):
        xlapy.grad(f)(np.ones(3))


# -- sort and top_k -----------------------------------------------------------------------------
@given(sides, sides, st.integers(0, 1), seeds)
@few
def test_sort(n, m, axis, seed):
    x = _distinct(seed, (n, m))
    check_grads(lambda a: lax.sort(a, axis), [x])


@given(sides, sides, st.integers(0, 1), seeds)
@few
def test_sort_several_operands(n, m, axis, seed):
    x, y = _distinct(seed, (n, m)), _normal(seed + 1, (n, m))
    keys = np.random.default_rng(seed).integers(0, 3, (n, m)).astype(np.int32)
    check_grads(lambda a, b: lax.sort((a, b), axis, num_keys=1), [x, y])
    # an integer key with ties broken by a float: the permutation moves both floats
    check_grads(lambda a, b: lax.sort((xnp.asarray(keys), a, b), axis, num_keys=2)[1:],
                [x, y])


XNP_SORTS = {
    "sort": lambda a, descending: xnp.sort(a, axis=0, descending=descending),
    "flat": lambda a, descending: xnp.sort(a, axis=None, descending=descending),
    "argsort": lambda a, descending: xnp.take_along_axis(
        a, xnp.argsort(a, axis=1, descending=descending), axis=1) * a,
}


@given(sides, sides, st.sampled_from(sorted(XNP_SORTS)), st.booleans(), seeds)
@few
def test_xnp_sort_argsort(n, m, kind, descending, seed):
    x = _distinct(seed, (n, m))
    check_grads(lambda a: XNP_SORTS[kind](a, descending), [x])


@given(sides, st.integers(1, 5), st.integers(0, 1), seeds)
@few
def test_top_k(n, m, axis, seed):
    x = _distinct(seed, (n, m))
    k = int(np.random.default_rng(seed).integers(1, (n, m)[axis] + 1))
    check_grads(lambda a: lax.top_k(a, k, axis=axis)[0], [x])


def test_top_k_cotangent_lands_on_indices():
    x = np.array([[0.5, 3.0, 1.0, 2.0]])
    (grad,) = xlapy.vjp(lambda a: lax.top_k(a, 2)[0], x)[1](np.array([[10.0, 20.0]]))
    np.testing.assert_array_equal(np.asarray(grad), [[0.0, 10.0, 0.0, 20.0]])


# -- modules JAX lowered ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["jax_scatter_add.hlo", "jax_sort_key_value.hlo",
                                  "sort_descending_totalorder.hlo"])
def test_jax_lowered_modules(name):
    from tests.autodiff.test_module import CORPUS, _check_module

    module = hlo.parse((CORPUS / name).read_text())
    _check_module(module, np.random.default_rng(0), eps=1e-3, tol=2e-2)
