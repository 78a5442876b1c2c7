"""JAX programs whose StableHLO the parser must read: every model of xlapy.models
(forward and train step) and a JAX re-creation of each `jax_*.hlo` module of
tests/hlo/corpus, plus a few programs for ops those do not reach.

Import only after `pytest.importorskip("jax")`: this module imports JAX. Each
case is a function and a maker of example inputs from a NumPy generator; the
inputs may be pytrees (the models' parameter dicts), flattened as JAX flattens
them when it lowers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from tests.models.problems import PROBLEMS, problem
from xlapy.models import jax_lib, lib

jax.config.update("jax_enable_x64", False)


@dataclass(frozen=True)
class JaxCase:
    """`fn(*inputs(rng))` is the program; `rtol` bounds float differences to JAX."""

    fn: Callable
    inputs: Callable[[np.random.Generator], tuple]
    rtol: float = 1e-5


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# -- the corpus, re-created -------------------------------------------------------------

def _softmax(x):
    return jax.nn.softmax(x, axis=1)


def _mlp_relu(x, w, b):
    return jnp.sum(jax.nn.relu(x @ w + b), axis=1)


def _mnist_step(w, b, x, y):
    def loss(params):
        logits = x @ params[0] + params[1]
        return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits), axis=1))
    value, grads = jax.value_and_grad(loss)((w, b))
    return w - 0.1 * grads[0], b - 0.1 * grads[1], value


def _conv_nhwc(x, w):
    return lax.conv_general_dilated(x, w, (2, 2), ((1, 1), (1, 1)),
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _conv_grouped(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (0, 0)), rhs_dilation=(1, 2),
                                    feature_group_count=2)


def _scatter_add(x, idx, upd):
    return x.at[idx].add(upd)


def _embedding(table, ids):
    return table[ids]


def _take_along(x, idx):
    return jnp.take_along_axis(x, idx, axis=1)


def _sort_kv(k, v):
    return lax.sort((k, v), num_keys=1)


def _argmax(x):
    return jnp.argmax(x, axis=1).astype(jnp.int32)


def _fori(n, x):
    def body(i, carry):
        a, b = carry
        return a * b + i.astype(jnp.float32), b * 0.5
    return lax.fori_loop(0, n, body, (x, x))


def _lstm(xs, wx, wh, b):
    def cell(carry, x):
        h, c = carry
        z = x @ wx + h @ wh + b
        i, f, g, o = jnp.split(z, 4)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h
    zeros = jnp.zeros((wh.shape[0],), xs.dtype)
    (h, _), hs = lax.scan(cell, (zeros, zeros), xs)
    return hs, h


def _switch(i, x):
    return lax.switch(i, [jnp.sin, jnp.cos, jnp.negative], x)


def _rng(key):
    return lax.rng_bit_generator(key, (4, 8), dtype=jnp.uint32)


def _bitcasts(x, y):
    return (lax.bitcast_convert_type(x, jnp.uint32), lax.bitcast_convert_type(x, jnp.uint8),
            lax.bitcast_convert_type(y, jnp.float16), x.astype(jnp.int32),
            x.astype(jnp.uint8))


def _pads(x):
    padded = lax.pad(x, jnp.array(-1.0, x.dtype), ((1, -1, 1), (0, 2, 2)))
    return padded, x[0:3:2, 1:4:2], jnp.concatenate([x, jnp.flip(x, 1)], axis=0)


def _dyn(x, i, j, u):
    return lax.dynamic_slice(x, (i, j), (2, 3)), lax.dynamic_update_slice(x, u, (i, j))


def _causal(x):
    rows = lax.broadcasted_iota(jnp.int32, (4, 4), 0)
    cols = lax.broadcasted_iota(jnp.int32, (4, 4), 1)
    return jnp.where(rows >= cols, x, -jnp.inf)


def _layernorm(x, g, b):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * g + b


def _maxpool_and_grad(x):
    def pool(v):
        return lax.reduce_window(v, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    out, vjp = jax.vjp(pool, x)
    return out, vjp(jnp.ones_like(out))[0]


def _bmm(a, b):
    return jnp.einsum("bij,bjk->bik", a, b).transpose(0, 2, 1) * 2.0


CORPUS = {
    "softmax": JaxCase(_softmax, lambda r: (_f32(r, 2, 5),)),
    "mlp_relu": JaxCase(_mlp_relu, lambda r: (_f32(r, 4, 3), _f32(r, 3, 5), _f32(r, 5))),
    "mnist_train_step": JaxCase(_mnist_step, lambda r: (
        _f32(r, 784, 10) * np.float32(0.01), _f32(r, 10), _f32(r, 8, 784),
        np.eye(10, dtype=np.float32)[r.integers(0, 10, 8)]), rtol=1e-4),
    "conv2d_nhwc": JaxCase(_conv_nhwc, lambda r: (_f32(r, 1, 5, 5, 2), _f32(r, 3, 3, 2, 3))),
    "conv_grouped": JaxCase(_conv_grouped, lambda r: (_f32(r, 1, 4, 4, 3), _f32(r, 2, 2, 3, 2))),
    "scatter_add": JaxCase(_scatter_add, lambda r: (
        _f32(r, 6), r.integers(-6, 6, 5).astype(np.int32), _f32(r, 5))),
    "embedding_gather": JaxCase(_embedding, lambda r: (
        _f32(r, 6, 4), r.integers(-6, 6, 5).astype(np.int32))),
    "take_along_axis": JaxCase(_take_along, lambda r: (
        _f32(r, 3, 5), r.integers(-5, 5, (3, 2)).astype(np.int32))),
    "sort_key_value": JaxCase(_sort_kv, lambda r: (
        np.array([3, -0.0, np.nan, 1, 0.0, -2, 1], np.float32), np.arange(7, dtype=np.int32))),
    "argmax_variadic_reduce": JaxCase(_argmax, lambda r: (_f32(r, 3, 4),)),
    "fori_loop": JaxCase(_fori, lambda r: (np.int32(4), _f32(r, 3))),
    "lstm_scan": JaxCase(_lstm, lambda r: (_f32(r, 5, 3), _f32(r, 3, 16), _f32(r, 4, 16),
                                           _f32(r, 16))),
    "switch": JaxCase(_switch, lambda r: (np.int32(1), _f32(r, 3))),
    "rng_bit_generator": JaxCase(_rng, lambda r: (
        r.integers(0, 2 ** 32, 4, dtype=np.uint64).astype(np.uint32),)),
    "bitcast_convert": JaxCase(_bitcasts, lambda r: (
        np.array([1.5, -2.25, 300.75], np.float32),
        np.array([0x3C00, 0xC000], np.uint16))),
    "pad_slice_concat": JaxCase(_pads, lambda r: (_f32(r, 3, 4),)),
    "dynamic_slice_clamp": JaxCase(_dyn, lambda r: (
        _f32(r, 4, 5), np.int32(-1), np.int32(4), _f32(r, 2, 3))),
    "causal_mask": JaxCase(_causal, lambda r: (_f32(r, 4, 4),)),
    "layernorm": JaxCase(_layernorm, lambda r: (_f32(r, 3, 8), _f32(r, 8), _f32(r, 8))),
    "maxpool_grad": JaxCase(_maxpool_and_grad, lambda r: (_f32(r, 1, 4, 4, 2),)),
    "batched_matmul": JaxCase(_bmm, lambda r: (_f32(r, 2, 3, 4), _f32(r, 2, 4, 2))),
}
"""One case per `jax_*.hlo` module of tests/hlo/corpus (named without the prefix)."""


# -- ops the corpus and the models do not reach ------------------------------------------

def _elementwise(x, y):
    return (jnp.abs(x), jnp.ceil(x), jnp.floor(x), jnp.round(x), jnp.sign(x), jnp.cos(x),
            jnp.sin(x), jnp.tan(x), jnp.exp(x), jnp.expm1(x), jnp.log1p(jnp.abs(x)),
            jnp.arctan2(x, y), jnp.power(jnp.abs(x), y), jnp.remainder(x, y + 3.0),
            jnp.minimum(x, y), jnp.clip(x, -0.5, 0.5), jax.nn.sigmoid(x), jnp.cbrt(x),
            jnp.isfinite(x / y), lax.erf(x), jnp.arcsin(jnp.tanh(x)), jnp.sinh(x),
            jnp.arccosh(jnp.abs(x) + 1.0), jnp.arctan(x), jnp.square(x), jax.nn.gelu(x))


def _integers(a, b):
    return (a & b, a | b, a ^ b, ~a, a << (b & 7), a >> (b & 7),
            lax.shift_right_logical(a, b & 7), a // jnp.maximum(b, 1), a % jnp.maximum(b, 1),
            lax.population_count(a), lax.clz(a), jnp.max(a), jnp.min(b, axis=0),
            jnp.prod(a), a.astype(jnp.uint32) >> 3, jnp.cumsum(a))


def _dtypes(h, d, u):
    return (h * h + 1, (d.astype(jnp.float32) * 2).astype(jnp.bfloat16), u * 3 + 1,
            (u > 5) & (h > 0).all(), jnp.array([1, -2], jnp.int8) * 3,
            jnp.array(0x7FFFFFFF, jnp.uint32) + u, jnp.array([True, False]) | (u[:2] > 2))


def _cond(p, x):
    return lax.cond(p > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)


def _top_k(x):
    return lax.top_k(x, 3)


def _misc(x):
    return (jnp.cumsum(x, axis=1), lax.cummax(x, axis=0), jnp.sort(x, axis=1),
            jnp.argsort(x, axis=0).astype(jnp.int32), jnp.linalg.norm(x),
            lax.reduce_precision(x, 5, 10), jnp.tril(x), jnp.flip(x),
            lax.optimization_barrier(x) + 1.0, jnp.median(x))


def _complex(x, y):
    z = lax.complex(x, y)
    return jnp.real(z * z), jnp.imag(z + 1j), jnp.abs(z)


def _random(key, x):
    """jax.random: threefry in HLO ops, and chlo.erf_inv for normals."""
    k = jax.random.wrap_key_data(key)
    return (jax.random.normal(k, (64,)), jax.random.uniform(k, (3,)),
            jax.random.bernoulli(k, 0.3, (5,)), x * jax.random.normal(k, x.shape))


def _fft(v):
    return jnp.fft.fft(v), jnp.fft.irfft(jnp.fft.rfft(v))


EXTRA = {
    "elementwise_float": JaxCase(_elementwise, lambda r: (_f32(r, 3, 4), _f32(r, 3, 4)),
                                 rtol=2e-5),
    "elementwise_int": JaxCase(_integers, lambda r: (
        r.integers(-50, 50, (3, 4)).astype(np.int32), r.integers(-9, 9, (3, 4)).astype(np.int32))),
    "dtypes": JaxCase(_dtypes, lambda r: (
        _f32(r, 3).astype(np.float16), _f32(r, 3).astype(jnp.bfloat16),
        r.integers(0, 9, 3).astype(np.uint8))),
    "cond": JaxCase(_cond, lambda r: (np.int32(1), _f32(r, 3))),
    "top_k": JaxCase(_top_k, lambda r: (_f32(r, 4, 6),)),
    "misc": JaxCase(_misc, lambda r: (_f32(r, 4, 5),)),
    "complex": JaxCase(_complex, lambda r: (_f32(r, 3), _f32(r, 3)), rtol=1e-5),
    "fft": JaxCase(_fft, lambda r: (_f32(r, 8),), rtol=1e-4),
    "random": JaxCase(_random, lambda r: (r.integers(0, 2 ** 32, 2, dtype=np.uint64).astype(
        np.uint32), _f32(r, 2, 3))),
}


# -- the models ---------------------------------------------------------------------------

def _model_case(name: str, train: bool) -> JaxCase:
    module = PROBLEMS[name][0]
    fn = module.train_step if train else module.apply
    jitted = lib.jit(fn, jax_lib())

    def inputs(rng):
        _, params, batch, _ = problem(name, int(rng.integers(0, 1000)))
        return (params, batch) if train else (params, batch[0])
    return JaxCase(jitted, inputs, rtol=2e-4)


MODELS = {f"{name}_{kind}": _model_case(name, kind == "train")
          for name in PROBLEMS for kind in ("forward", "train")}


ALL = {**{f"corpus_{k}": v for k, v in CORPUS.items()}, **MODELS, **EXTRA}


def lower(case: JaxCase, rng: np.random.Generator):
    """(StableHLO text, its HLO twin, flat inputs, flat JAX outputs) for `case`."""
    args = case.inputs(rng)
    jitted = case.fn if hasattr(case.fn, "lower") else jax.jit(case.fn)
    lowered = jitted.lower(*args)
    want = jax.tree_util.tree_leaves(jitted(*args))
    flat = [np.asarray(a) for a in jax.tree_util.tree_leaves(args)]
    return (lowered.as_text(), lowered.as_text(dialect="hlo"), flat,
            [np.asarray(w) for w in want])


