"""Live JAX: each case of jax_cases (every model of xlapy.models forward and as a
train step, the re-created jax_* corpus, and extra ops) is lowered by the
installed JAX; its StableHLO runs on xlapy's cpu backend and interpreter to
JAX's own results and to those of its HLO twin. Skipped without JAX."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlapy
from tests.stablehlo.util import assert_same_results
from xlapy import hlo, stablehlo

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax_cases = pytest.importorskip("tests.stablehlo.jax_cases")


@pytest.mark.parametrize("name", list(jax_cases.ALL))
def test_case_runs_like_jax(name):
    case = jax_cases.ALL[name]
    text, twin_text, args, want = jax_cases.lower(case, np.random.default_rng(7))
    module, twin = stablehlo.parse(text), hlo.parse(twin_text)
    got = xlapy.execute(module, args, backend="cpu")
    assert_same_results(got, want, rtol=case.rtol, what=f"{name} cpu vs JAX")
    assert_same_results(xlapy.execute(module, args, backend="interpreter"), want,
                        rtol=max(case.rtol, 1e-4), what=f"{name} interpreter vs JAX")
    assert_same_results(got, xlapy.execute(twin, args, backend="cpu"), rtol=1e-5,
                        what=f"{name} vs its HLO twin")


def test_debug_info_text_parses_to_the_same_module():
    case = jax_cases.ALL["mlp_train"]
    args = case.inputs(np.random.default_rng(0))
    lowered = case.fn.lower(*args)
    plain = stablehlo.parse(lowered.as_text())
    located = stablehlo.parse(lowered.as_text(debug_info=True))
    assert plain.to_text() == located.to_text()


def test_cholesky_lapack_custom_call():
    """JAX's CPU Cholesky is a LAPACK custom call (its HLO twin is unrunnable here);
    xlapy reads it as HLO's cholesky."""
    a = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)

    def factor(m):
        return jnp.linalg.cholesky(m @ m.T + 4.0 * jnp.eye(4, dtype=m.dtype))

    text = jax.jit(factor).lower(a).as_text()
    assert "lapack_spotrf_ffi" in text
    assert_same_results(xlapy.execute(text, [a], backend="interpreter"), [np.asarray(factor(a))],
                        rtol=1e-5)


# -- random elementwise programs ----------------------------------------------------------
_UNARY = [jnp.negative, jnp.tanh, jnp.exp, jnp.sin, jnp.abs, jnp.floor, jnp.square,
          jax.nn.sigmoid, jax.nn.relu, lambda v: jnp.log1p(jnp.abs(v)),
          lambda v: jnp.sqrt(jnp.abs(v)), lambda v: v.sum(axis=-1, keepdims=True) + v,
          lambda v: v.max(axis=0, keepdims=True) * v]
_BINARY = [jnp.add, jnp.subtract, jnp.multiply, jnp.maximum, jnp.minimum,
           lambda a, b: jnp.where(a > b, a, b * 2.0), lambda a, b: a / (jnp.abs(b) + 1.0)]


@settings(max_examples=15)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
       steps=st.lists(st.tuples(st.booleans(), st.integers(0, 100)), min_size=1, max_size=6),
       seed=st.integers(0, 2 ** 16))
def test_random_elementwise_chain(shape, steps, seed):
    """x, y -> a chain of unary and binary jnp ops -> StableHLO -> xlapy, against JAX."""
    def program(x, y):
        for binary, which in steps:
            x = _BINARY[which % len(_BINARY)](x, y) if binary else \
                _UNARY[which % len(_UNARY)](x)
        return x

    rng = np.random.default_rng(seed)
    x, y = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    lowered = jax.jit(program, keep_unused=True).lower(x, y)
    got = xlapy.execute(lowered.as_text(), [x, y], backend="interpreter")
    assert_same_results(got, [np.asarray(program(x, y))], rtol=1e-4,
                        what=f"seed {seed}, steps {steps}")
