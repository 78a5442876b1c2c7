"""The structured half of the random JAX programs' op table: reductions,
contractions (dots, convolutions, pooling), sorting, control flow and
`jax.random`. Importing `jax_ops` registers these too; the conventions
(picking, exactness, discreteness) are that module's.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from xlapy.fuzz.jax_ops import _axis, fn_in, kind, one, op, two

# -- reductions ---------------------------------------------------------------------------
_REDUCTIONS = {"sum": jnp.sum, "max": jnp.max, "min": jnp.min, "prod": jnp.prod,
               "mean": jnp.mean, "any": jnp.any, "all": jnp.all, "argmax": jnp.argmax,
               "argmin": jnp.argmin, "var": jnp.var, "logsumexp": jax.nn.logsumexp}


def _reduce_params(rng, x):
    names = ["sum", "max", "min", "any", "all", "argmax", "argmin"]
    if kind(x) == "float":
        names += ["mean", "var", "logsumexp", "prod"]
    if kind(x) == "bool":
        names = ["any", "all", "sum"]
    name = str(rng.choice(names))
    if name in ("max", "min", "argmax", "argmin") and x.size == 0:
        return None
    if name.startswith("arg"):
        return {"fn": name, "axis": _axis(rng, x) if x.ndim else None}
    axes = None if x.ndim == 0 or rng.random() < 0.25 else sorted(
        {int(a) for a in rng.integers(x.ndim, size=int(rng.integers(1, 3)))})
    if name in ("max", "min") and axes is not None and any(x.shape[a] == 0 for a in axes):
        return None
    return {"fn": name, "axis": axes, "keepdims": bool(rng.random() < 0.3)}


@op("reduce", one("float", "signed", "unsigned", "bool", params=_reduce_params), weight=4,
    exact=fn_in("max", "min", "any", "all", "argmax", "argmin"),
    discrete=fn_in("argmax", "argmin", "any", "all"))
def _reduce(key, values, params):
    fn = _REDUCTIONS[params["fn"]]
    axis = params["axis"]
    axis = tuple(axis) if isinstance(axis, list) else axis
    if params["fn"].startswith("arg"):
        return [fn(values[0], axis=axis)]
    return [fn(values[0], axis=axis, keepdims=params["keepdims"])]


@op("cumulative", one("float", "signed", "unsigned", min_rank=1, params=lambda rng, x: {
    "fn": str(rng.choice(["cumsum", "cummax", "cummin"] + (
        ["cumlogsumexp"] if kind(x) == "float" else []))), "axis": _axis(rng, x),
    "reverse": bool(rng.random() < 0.3)}), exact=fn_in("cummax", "cummin"))
def _cumulative(key, values, params):
    fn = getattr(lax, params["fn"])
    return [fn(values[0], axis=params["axis"], reverse=params["reverse"])]


@op("softmax", one("float", min_rank=1, params=lambda rng, x: {"axis": _axis(rng, x)}),
    exact=False)
def _softmax(key, values, params):
    return [jax.nn.softmax(values[0], axis=params["axis"])]


# -- contractions --------------------------------------------------------------------------
def _dot_params(rng, x):
    if x.ndim not in (1, 2, 3):
        return None
    return {"n": int(rng.integers(1, 6)), "transpose": bool(rng.random() < 0.3),
            "seed": int(rng.integers(1 << 30))}


@op("dot", one("float", "signed", "unsigned", min_rank=1, max_rank=3, params=_dot_params),
    weight=2.5, exact=False)
def _dot(key, values, params):
    """x @ w with w made from x's own dtype (a fixed pseudo-random matrix)."""
    x = values[0]
    k = x.shape[-1]
    w = _weights((k, params["n"]), x.dtype, params["seed"])
    if params["transpose"] and x.ndim >= 2:
        w2 = _weights((x.shape[-2], params["n"]), x.dtype, params["seed"])
        return [jnp.einsum("...ij,...ik->...jk", x, w2)]
    return [jnp.matmul(x, w)]


def _weights(shape, dtype, seed: int):
    values = np.random.default_rng(seed).integers(-2, 3, size=shape)
    return jnp.asarray(values, dtype)


@op("batched_dot", two("float", params=lambda rng, x, y: {} if x.ndim == 3 and
                       x.shape == y.shape else None), exact=False)
def _batched_dot(key, values, params):
    x, y = values
    return [jnp.einsum("bij,bkj->bik", x, y)]


def _conv_params(rng, x):
    if x.ndim != 3 or 0 in x.shape or x.shape[1] < 2:
        return None
    # x as (batch, width, channels): a 1-D convolution, NWC
    groups = int(rng.choice([c for c in (1, 2, 3) if x.shape[2] % c == 0]))
    return {"features": int(rng.integers(1, 4)) * groups, "window": int(rng.integers(1, 4)),
            "stride": int(rng.integers(1, 3)), "lhs_dilation": int(rng.integers(1, 3)),
            "rhs_dilation": int(rng.integers(1, 3)), "groups": groups,
            "padding": str(rng.choice(["SAME", "VALID", "explicit"])),
            "seed": int(rng.integers(1 << 30))}


@op("conv", one("float", min_rank=3, max_rank=3, params=_conv_params), weight=1.5,
    exact=False)
def _conv(key, values, params):
    x = values[0]
    c = x.shape[2]
    kernel = _weights((params["window"], c // params["groups"], params["features"]), x.dtype,
                      params["seed"])
    padding = params["padding"] if params["padding"] != "explicit" else [(1, 2)]
    if params["lhs_dilation"] > 1 and params["padding"] != "explicit":
        padding = [(0, 1)]
    return [lax.conv_general_dilated(x, kernel, (params["stride"],), padding,
                                     lhs_dilation=(params["lhs_dilation"],),
                                     rhs_dilation=(params["rhs_dilation"],),
                                     dimension_numbers=("NWC", "WIO", "NWC"),
                                     feature_group_count=params["groups"])]


def _pool_params(rng, x):
    if x.ndim < 1 or 0 in x.shape:
        return None
    return {"fn": str(rng.choice(["max", "sum", "min", "avg"])),
            "window": [int(rng.integers(1, min(d, 3) + 1)) for d in x.shape],
            "strides": [int(rng.integers(1, 3)) for _ in x.shape],
            "padding": str(rng.choice(["VALID", "SAME"]))}


@op("pool", one("float", "signed", min_rank=1, params=_pool_params), weight=1.5,
    exact=fn_in("max", "min"))
def _pool(key, values, params):
    x = values[0]
    window, strides, padding = params["window"], params["strides"], params["padding"]
    if params["fn"] in ("max", "min"):
        info = jnp.finfo(x.dtype) if kind(x) == "float" else jnp.iinfo(x.dtype)
        init = info.min if params["fn"] == "max" else info.max
        if kind(x) == "float":
            init = -jnp.inf if params["fn"] == "max" else jnp.inf
        fn = lax.max if params["fn"] == "max" else lax.min
        return [lax.reduce_window(x, jnp.asarray(init, x.dtype), fn, window, strides, padding)]
    total = lax.reduce_window(x, jnp.asarray(0, x.dtype), lax.add, window, strides, padding)
    if params["fn"] == "avg" and kind(x) == "float":
        total = total / np.prod(window)
    return [total]


# -- sorting -----------------------------------------------------------------------------
@op("sort", one("float", "signed", "unsigned", "bool", min_rank=1, params=lambda rng, x: {
    "axis": _axis(rng, x), "fn": str(rng.choice(["sort", "argsort", "sort_desc"]))}),
    weight=1.5, discrete=fn_in("argsort"))
def _sort(key, values, params):
    x = values[0]
    if params["fn"] == "argsort":
        return [jnp.argsort(x, axis=params["axis"], stable=True)]
    return [jnp.sort(x, axis=params["axis"], descending=params["fn"] == "sort_desc")]


@op("top_k", one("float", "signed", "unsigned", min_rank=1, nonempty=True,
                 params=lambda rng, x: {"k": int(rng.integers(1, x.shape[-1] + 1))}
                 if x.shape[-1] else None), results=2, discrete=True)
def _top_k(key, values, params):
    top, index = lax.top_k(values[0], params["k"])
    return [top, index]


@op("sort_pairs", two("float", "signed", params=lambda rng, x, y: {
    "num_keys": int(rng.integers(1, 3))} if x.ndim >= 1 and x.shape == y.shape else None),
    results=2, discrete=True)
def _sort_pairs(key, values, params):
    a, b = lax.sort(tuple(values), dimension=values[0].ndim - 1, is_stable=True,
                    num_keys=params["num_keys"])
    return [a, b]


# -- control flow -------------------------------------------------------------------------
def _trips(x):
    """A data-dependent trip count in [0, 4]."""
    count = jnp.sum(x > 0) if x.dtype != jnp.bool_ else jnp.sum(x)
    return jnp.clip(count.astype(jnp.int32), 0, 4)


_STEPS = {"affine": lambda c: c * 0.75 + 0.5, "tanh": lambda c: jnp.tanh(c) * 2.0,
          "roll": lambda c: jnp.roll(c, 1) * 0.5 + c * 0.5 if c.ndim else c * 0.5,
          "int_mix": lambda c: (c * 3 + 1) ^ (c >> 1) if c.dtype.kind in "iu" else c + 1}


def _loop_step(c, fn: str):
    if c.dtype.kind in "iu":
        return _STEPS["int_mix"](c).astype(c.dtype)
    return _STEPS[fn](c).astype(c.dtype)


@op("fori_loop", one("float", "signed", "unsigned", params=lambda rng, x: {
    "fn": str(rng.choice(["affine", "tanh", "roll"]))}), weight=1.5,
    exact=lambda p: p["fn"] == "roll", discrete=True)
def _fori_loop(key, values, params):
    x = values[0]
    return [lax.fori_loop(0, _trips(x), lambda i, c: _loop_step(c, params["fn"]), x)]


@op("while_loop", one("float", params=lambda rng, x: {
    "fn": str(rng.choice(["affine", "tanh"])), "bound": float(rng.uniform(1.0, 6.0))}),
    results=2, exact=False, discrete=True)
def _while_loop(key, values, params):
    x = values[0]

    def cond(state):
        i, c = state
        return (i < 8) & (jnp.max(jnp.abs(c), initial=0.0) < params["bound"])

    def body(state):
        i, c = state
        return i + 1, (_loop_step(c, params["fn"]) + 0.25).astype(c.dtype)
    i, c = lax.while_loop(cond, body, (jnp.int32(0), x))
    return [i, c]


@op("scan", one("float", "signed", min_rank=1, nonempty=True), results=2, exact=False)
def _scan(key, values, params):
    x = values[0]

    def body(carry, row):
        new = (carry * 0.5 + row) if x.dtype.kind == "f" else (carry ^ row) + 1
        return new.astype(x.dtype), jnp.max(new) if new.ndim else new
    carry, ys = lax.scan(body, jnp.zeros_like(x[0]), x)
    return [carry, ys]


@op("cond", one("float", "signed", "unsigned", params=lambda rng, x: {
    "branches": int(rng.integers(2, 4))}), weight=1.5, discrete=True)
def _cond(key, values, params):
    x = values[0]
    index = _trips(x) % params["branches"]
    branches = [lambda v: v + 1, lambda v: v * 2, lambda v: v - 3][:params["branches"]]
    branches = [lambda v, f=f: f(v).astype(v.dtype) for f in branches]
    if params["branches"] == 2:
        return [lax.cond(index == 1, branches[0], branches[1], x)]
    return [lax.switch(index, branches, x)]


# -- random numbers ------------------------------------------------------------------------
_RANDOM = ("uniform", "normal", "bits", "randint", "bernoulli", "split_uniform", "fold_in",
           "permutation", "gamma", "truncated_normal", "uniform_f16", "exponential", "choice")


@op("random", lambda rng, pool: ((), {"fn": str(rng.choice(_RANDOM)),
                                      "shape": [int(d) for d in rng.integers(1, 6, size=int(
                                          rng.integers(0, 3)))]}), weight=3, random=True,
    exact=lambda p: p["fn"] not in ("normal", "gamma", "truncated_normal", "exponential"))
def _random(key, values, params):
    shape, fn = tuple(params["shape"]), params["fn"]
    r = jax.random
    if fn == "uniform":
        return [r.uniform(key, shape)]
    if fn == "normal":
        return [r.normal(key, shape)]
    if fn == "bits":
        return [r.bits(key, shape)]
    if fn == "randint":
        return [r.randint(key, shape, -5, 100)]
    if fn == "bernoulli":
        return [r.bernoulli(key, 0.3, shape)]
    if fn == "split_uniform":
        return [r.uniform(r.split(key, 3)[2], shape)]
    if fn == "fold_in":
        return [r.bits(r.fold_in(key, 7), shape, jnp.uint32)]
    if fn == "permutation":
        return [r.permutation(key, 10)]
    if fn == "gamma":
        return [r.gamma(key, 2.5, shape)]
    if fn == "truncated_normal":
        return [r.truncated_normal(key, -1.0, 1.5, shape)]
    if fn == "uniform_f16":
        return [r.uniform(key, shape, jnp.float16)]
    if fn == "exponential":
        return [r.exponential(key, shape)]
    return [r.choice(key, 12, (3,), replace=False)]
