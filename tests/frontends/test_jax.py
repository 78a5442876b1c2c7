"""xlapy.frontends.jax.jit against jax.jit: the model zoo's training steps, a few ops,
pytrees in and out, the per-signature cache and the error for a non-array argument."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from tests.models.problems import PROBLEMS, assert_trees_close, problem
from xlapy.frontends import jax as xjax
from xlapy.models import jax_lib

jax = pytest.importorskip("jax")
jnp = jax.numpy


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_model_train_step_matches_jax(name):
    module, params, batch, _ = problem(name, seed=1)
    step = functools.partial(module.train_step, xp=jax_lib())
    want_params, want_loss = jax.jit(step)(params, batch)
    compiled = xjax.jit(step)
    got_params, got_loss = compiled(params, batch)
    assert isinstance(got_loss, jax.Array)
    assert jax.tree_util.tree_structure(got_params) == jax.tree_util.tree_structure(want_params)
    np.testing.assert_allclose(got_loss, want_loss, rtol=1e-5, atol=1e-6)
    assert_trees_close(got_params, {k: np.asarray(v) for k, v in want_params.items()},
                       rtol=1e-4, atol=1e-5, what=name)
    # a second step, fed JAX arrays this time, reuses the compiled module
    again, _ = compiled(got_params, batch)
    assert compiled.compile_count == 1
    want_again, _ = jax.jit(step)(want_params, batch)
    assert_trees_close(again, {k: np.asarray(v) for k, v in want_again.items()},
                       rtol=1e-4, atol=1e-5, what=name)


OPS = {
    "matmul_tanh": (lambda x, y: jnp.tanh(x @ y), [(3, 4), (4, 5)]),
    "softmax": (lambda x, _: jax.nn.softmax(x, axis=-1), [(3, 4), (1,)]),
    "reduce_max": (lambda x, y: jnp.max(x, axis=0) + y, [(3, 4), (4,)]),
    "where": (lambda x, y: jnp.where(x > 0, x, y), [(5,), (5,)]),
    "cumsum": (lambda x, _: jnp.cumsum(x, axis=1), [(2, 6), (1,)]),
    "conv": (lambda x, k: jax.lax.conv_general_dilated(x, k, (1, 1), "SAME"),
             [(1, 2, 6, 6), (3, 2, 3, 3)]),
}


@pytest.mark.parametrize("name", list(OPS))
def test_op_matches_jax(name):
    fn, shapes = OPS[name]
    rng = np.random.default_rng(0)
    args = [jnp.asarray(rng.standard_normal(s).astype(np.float32)) for s in shapes]
    np.testing.assert_allclose(xjax.jit(fn)(*args), jax.jit(fn)(*args), rtol=1e-5, atol=1e-5)


def test_pytrees_in_and_out_and_keywords():
    def f(tree, scale, *, bias):
        a, (b, c) = tree["pair"], tree["rest"]
        return {"sum": a + b * scale, "parts": [c - bias, None, (a.mean(),)]}

    tree = {"pair": jnp.arange(3.0), "rest": (np.ones(3, np.float32), jnp.zeros((2,)))}
    got = xjax.jit(f)(tree, 2.0, bias=jnp.float32(1.5))
    want = jax.jit(f)(tree, 2.0, bias=jnp.float32(1.5))
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert isinstance(g, jax.Array) and g.dtype == w.dtype
        np.testing.assert_allclose(g, w)


def test_cache_hits_and_new_signatures():
    f = xjax.jit(lambda x, n: x * n, static_argnums=1)
    x = jnp.ones((2, 3))
    np.testing.assert_allclose(f(x, 3), 3 * np.ones((2, 3)))
    f(x + 1, 3)                       # same shapes, dtypes, static value: no compile
    assert f.compile_count == 1
    f(x, 4)                           # a new static value compiles again
    f(jnp.ones((4,)), 4)              # and a new shape
    f(jnp.ones((4,), jnp.int32), 4)   # and a new dtype
    assert f.compile_count == 4
    f(jnp.ones((4,)), 4)
    assert f.compile_count == 4


def test_scalars_are_weakly_typed_like_jax():
    f = xjax.jit(lambda x, s: x * s)
    x = jnp.ones(3, jnp.float32)
    got = f(x, 2.5)
    assert got.dtype == jnp.float32
    np.testing.assert_allclose(got, 2.5)


def test_non_array_argument_is_a_clear_error():
    f = xjax.jit(lambda x, config: x * config["k"])
    with pytest.raises(TypeError, match=r"argument 1 \(config\)\['k'\] is a str.*static"):
        f(jnp.ones(2), {"k": "three"})
    assert f.compile_count == 0


def test_hlo_module_is_jax_lowering():
    f = xjax.jit(lambda x, unused: jnp.sin(x))
    module = f.hlo_module(jnp.ones(2), jnp.ones(3))
    assert len(module.entry_computation.parameters) == 2  # unused arguments are kept
    np.testing.assert_allclose(f(jnp.ones(2), jnp.ones(3)), np.sin(np.ones(2)), rtol=1e-6)
