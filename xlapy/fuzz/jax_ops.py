"""The operations random JAX programs are made of: one `Op` per entry of `OPS`.

Each op knows how to pick its operands from a pool of concrete values (and
its parameters), and how to apply itself with `jax.numpy`/`lax` (to concrete
arrays while a program is drawn, to tracers when JAX lowers it). Integer
ops take their operands raw (division by zero, INT_MIN / -1, shifts past the
width, overflow: XLA's semantics are what is tested); float ops that have
poles or blow up take tamed operands (`log(|x| + 0.5)`), since the campaign
compares numbers and a pole only compares rounding.

Two compilers agree on a float result only to rounding, unless it comes from
correctly rounded operations in a fixed order: an *exact* op (movement,
integer arithmetic, + - * / sqrt, max, sorting values) of exact operands
gives the same bits everywhere; a sum, a dot or a transcendental does not,
nor a float product: XLA:CPU lets LLVM contract `a * b + c` into one fused
multiply-add, so a product's consumer may round once where another
compiler rounds twice (integer results of exact ops stay exact).
A *discrete* op turns float operands into something that jumps (an index,
a trip count, a bitcast, floor, a conversion to integers): it may only take
exact floats, or one ULP of difference would become a different integer.
Each op says which it is (`exact`, `discrete`: a bool or a function of the
params).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

FLOATS = ("float16", "bfloat16", "float32", "float64")
SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTS = SIGNED + UNSIGNED
CONVERT_TARGETS = FLOATS + INTS + ("bool",)
_LIMIT = {"float16": 1e3, "bfloat16": 1e6, "float32": 1e6, "float64": 1e9,
          "complex64": 1e6}
"""Largest magnitude a drawn value may have (a later square must stay finite)."""


def tame(value: np.ndarray) -> bool:
    """Finite floats of moderate magnitude (integers are always tame)."""
    name = str(value.dtype)
    if name not in _LIMIT:
        return True
    v = np.asarray(value, np.complex128 if name == "complex64" else np.float64)
    return bool(np.all(np.isfinite(v)) and np.all(np.abs(v) <= _LIMIT[name]))


def kind(value) -> str:
    """'float', 'signed', 'unsigned', 'bool' or 'complex' for an array's dtype."""
    name = str(value.dtype)
    if name in FLOATS:
        return "float"
    if name in SIGNED:
        return "signed"
    if name in UNSIGNED:
        return "unsigned"
    return "complex" if name.startswith("complex") else "bool"


@dataclass(frozen=True)
class Op:
    name: str
    pick: Callable        # (rng, pool) -> (inputs, params) or None
    apply: Callable       # (key, values, params) -> list of arrays
    results: int = 1
    weight: float = 1.0
    random: bool = False  # needs the program's key
    exact: object = True      # bool, or params -> bool: exact operands give exact results
    discrete: object = False  # bool, or params -> bool: float operands must be exact

    def is_exact(self, params) -> bool:
        return self.exact(params) if callable(self.exact) else bool(self.exact)

    def is_discrete(self, params) -> bool:
        return self.discrete(params) if callable(self.discrete) else bool(self.discrete)


OPS: dict[str, Op] = {}


def op(name: str, pick, results: int = 1, weight: float = 1.0, random: bool = False,
       exact=True, discrete=False):
    def register(apply):
        OPS[name] = Op(name, pick, apply, results, weight, random, exact, discrete)
        return apply
    return register


def fn_in(*names: str):
    """A params predicate: params["fn"] is one of `names`."""
    return lambda params: params.get("fn") in names


# -- picking operands --------------------------------------------------------------------
def one(*kinds: str, min_rank: int = 0, max_rank: int = 9, nonempty: bool = False,
        params=lambda rng, x: {}):
    """A picker of one operand of one of `kinds`, with params drawn by `params`."""
    def pick(rng, pool):
        fits = [i for i, v in enumerate(pool) if kind(v) in kinds and
                min_rank <= v.ndim <= max_rank and (v.size or not nonempty)]
        if not fits:
            return None
        i = fits[int(rng.integers(len(fits)))]
        chosen = params(rng, pool[i])
        return None if chosen is None else ((i,), chosen)
    return pick


def two(*kinds: str, params=lambda rng, x, y: {}):
    """Two operands of one dtype (one of `kinds`) whose shapes broadcast together."""
    def pick(rng, pool):
        fits = [i for i, v in enumerate(pool) if kind(v) in kinds]
        if not fits:
            return None
        i = fits[int(rng.integers(len(fits)))]
        x = pool[i]
        partners = [j for j, v in enumerate(pool) if v.dtype == x.dtype and
                    _broadcasts(x.shape, v.shape)]
        j = partners[int(rng.integers(len(partners)))]
        chosen = params(rng, x, pool[j])
        return None if chosen is None else ((i, j), chosen)
    return pick


def _broadcasts(a: tuple, b: tuple) -> bool:
    return all(x == y or x == 1 or y == 1 for x, y in zip(a[::-1], b[::-1]))


def _axis(rng, x) -> int:
    return int(rng.integers(x.ndim))


# -- elementwise: floats -------------------------------------------------------------------
_FLOAT_UNARY = {
    "neg": lambda x: -x, "abs": jnp.abs, "sin": jnp.sin, "cos": jnp.cos, "tanh": jnp.tanh,
    "logistic": jax.nn.sigmoid, "floor": jnp.floor, "ceil": jnp.ceil,
    "round_even": lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
    "round_away": lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO),
    "sign": jnp.sign, "atan": jnp.arctan, "cbrt": jnp.cbrt, "erf": lax.erf,
    "exp": lambda x: jnp.exp(jnp.clip(x, -8, 8)),
    "expm1": lambda x: jnp.expm1(jnp.clip(x, -8, 8)),
    "log": lambda x: jnp.log(jnp.abs(x) + 0.5), "log1p": lambda x: jnp.log1p(jnp.abs(x)),
    "sqrt": lambda x: jnp.sqrt(jnp.abs(x)), "rsqrt": lambda x: lax.rsqrt(jnp.abs(x) + 0.5),
    "tan": lambda x: jnp.tan(jnp.clip(x, -1.2, 1.2)),
    "asin": lambda x: jnp.arcsin(jnp.tanh(x) * 0.9), "acosh": lambda x: jnp.arccosh(
        jnp.abs(x) + 1.5), "asinh": jnp.arcsinh, "atanh": lambda x: jnp.arctanh(
        jnp.tanh(x) * 0.9), "sinh": lambda x: jnp.sinh(jnp.clip(x, -5, 5)),
    "cosh": lambda x: jnp.cosh(jnp.clip(x, -5, 5)), "square": jnp.square,
    "erf_inv": lambda x: lax.erf_inv(jnp.tanh(x) * 0.9),
    "lgamma": lambda x: lax.lgamma(jnp.abs(x) + 0.5),
    "digamma": lambda x: lax.digamma(jnp.abs(x) + 0.5),
    "is_finite": jnp.isfinite, "reciprocal": lambda x: 1 / (jnp.abs(x) + 0.5),
    "relu": jax.nn.relu, "gelu": jax.nn.gelu, "softplus": jax.nn.softplus,
}
_INT_UNARY = {"neg": lambda x: -x, "not": jnp.invert, "popcount": lax.population_count,
              "clz": lax.clz, "abs": jnp.abs, "sign": jnp.sign}


@op("float_unary", one("float", params=lambda rng, x: {
    "fn": str(rng.choice(sorted(_FLOAT_UNARY)))}), weight=4,
    exact=fn_in("neg", "abs", "floor", "ceil", "round_even", "round_away", "sign", "is_finite",
                "relu", "reciprocal", "sqrt"),
    discrete=fn_in("floor", "ceil", "round_even", "round_away", "sign", "is_finite"))
def _float_unary(key, values, params):
    return [_FLOAT_UNARY[params["fn"]](values[0])]


@op("int_unary", one("signed", "unsigned", "bool", params=lambda rng, x: {
    "fn": "not" if kind(x) == "bool" else str(rng.choice(sorted(_INT_UNARY)))}), weight=2)
def _int_unary(key, values, params):
    return [_INT_UNARY[params["fn"]](values[0])]


_FLOAT_BINARY = {
    "add": lax.add, "sub": lax.sub, "mul": lax.mul, "max": lax.max, "min": lax.min,
    "atan2": lax.atan2, "nextafter": lax.nextafter,
    "div": lambda x, y: x / (jnp.abs(y) + 0.5), "rem": lambda x, y: lax.rem(
        x, jnp.abs(y) + 0.5), "pow": lambda x, y: lax.pow(jnp.abs(x) + 0.1, jnp.clip(y, -3, 3)),
    "hypot": jnp.hypot, "copysign": jnp.copysign, "logaddexp": jnp.logaddexp,
}
_INT_BINARY = {
    "add": lax.add, "sub": lax.sub, "mul": lax.mul, "max": lax.max, "min": lax.min,
    "div": lax.div, "rem": lax.rem, "and": lax.bitwise_and, "or": lax.bitwise_or,
    "xor": lax.bitwise_xor, "shl": lax.shift_left, "shr_logical": lax.shift_right_logical,
    "shr_arithmetic": lax.shift_right_arithmetic, "floor_divide": jnp.floor_divide,
}
_BOOL_BINARY = {"and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor,
                "ne": lax.ne, "eq": lax.eq}


def _binary_params(rng, x, y):
    table = {"float": _FLOAT_BINARY, "signed": _INT_BINARY, "unsigned": _INT_BINARY,
             "bool": _BOOL_BINARY}.get(kind(x))
    if table is None:
        return None
    return {"fn": str(rng.choice(sorted(table)))}


@op("binary", two("float", "signed", "unsigned", "bool", params=_binary_params), weight=6,
    exact=lambda p: p["fn"] not in ("atan2", "pow", "hypot", "logaddexp", "mul"),
    discrete=fn_in("rem", "copysign"))
def _binary(key, values, params):
    x, y = values
    table = {"float": _FLOAT_BINARY, "signed": _INT_BINARY, "unsigned": _INT_BINARY,
             "bool": _BOOL_BINARY}[kind(x)]
    x, y = jnp.broadcast_arrays(x, y)
    return [table[params["fn"]](x, y)]


_COMPLEX_OPS = {"add": lax.add, "mul": lax.mul, "sub": lax.sub, "abs": lambda x, y: jnp.abs(x),
                "conj": lambda x, y: jnp.conj(x), "real": lambda x, y: jnp.real(x),
                "exp": lambda x, y: jnp.exp(jnp.clip(x.real, -5, 5) + 1j * x.imag),
                "div": lambda x, y: x / (y + 3.0), "imag": lambda x, y: jnp.imag(y)}


@op("complex", two("complex", params=lambda rng, x, y: {
    "fn": str(rng.choice(sorted(_COMPLEX_OPS)))}), weight=0.5,
    exact=fn_in("add", "sub", "conj", "real", "imag"))
def _complex(key, values, params):
    x, y = jnp.broadcast_arrays(*values)
    return [_COMPLEX_OPS[params["fn"]](x, y)]


@op("compare_select", two("float", "signed", "unsigned", params=lambda rng, x, y: {
    "direction": str(rng.choice(["eq", "ne", "lt", "le", "gt", "ge"]))}), weight=2)
def _compare_select(key, values, params):
    x, y = jnp.broadcast_arrays(*values)
    pred = getattr(lax, params["direction"])(x, y)
    return [lax.select(pred, x, y)]


@op("clamp", one("float", "signed", "unsigned", params=lambda rng, x: {
    "low": int(rng.integers(-3, 2)), "high": int(rng.integers(2, 6))}))
def _clamp(key, values, params):
    x = values[0]
    low = jnp.asarray(max(params["low"], 0) if kind(x) == "unsigned" else params["low"],
                      x.dtype)
    return [lax.clamp(low, x, jnp.asarray(params["high"], x.dtype))]


@op("where", two("float", "signed", "unsigned", "bool"))
def _where(key, values, params):
    x, y = jnp.broadcast_arrays(*values)
    return [jnp.where(x > y if kind(x) != "bool" else x, x, y)]


# -- conversions -------------------------------------------------------------------------
@op("convert", one("float", "signed", "unsigned", "bool", params=lambda rng, x: {
    "to": str(rng.choice(CONVERT_TARGETS))}), weight=3,
    discrete=lambda p: p["to"] not in FLOATS)
def _convert(key, values, params):
    return [lax.convert_element_type(values[0], params["to"])]


def _bitcast_params(rng, x):
    width = x.dtype.itemsize
    same = [t for t in FLOATS + INTS if jnp.dtype(t).itemsize == width and t != str(x.dtype)]
    return {"to": str(rng.choice(same))} if same else None


@op("bitcast", one("float", "signed", "unsigned", params=_bitcast_params), discrete=True)
def _bitcast(key, values, params):
    out = lax.bitcast_convert_type(values[0], params["to"])
    if out.dtype.kind != "f":
        return [out]
    # a NaN pattern made from integer bits compares by bits, and XLA:CPU runs with
    # subnormals flushed to zero where xlapy, as NumPy, keeps IEEE semantics (unless
    # --xla_cpu_flush_denormals; program 7624 counted x > 0 over bitcast subnormals)
    special = jnp.isnan(out) | (jnp.abs(out) < jnp.finfo(out.dtype).tiny)
    return [jnp.where(special, 0, out)]


# -- movement -----------------------------------------------------------------------------
@op("transpose", one("float", "signed", "unsigned", "bool", min_rank=2,
                     params=lambda rng, x: {"perm": [int(i) for i in
                                                     rng.permutation(x.ndim)]}))
def _transpose(key, values, params):
    return [jnp.transpose(values[0], params["perm"])]


def _reshape_params(rng, x):
    size = x.size
    if size == 0:
        return None
    dims, rest = [], size
    while rest > 1 and len(dims) < 3 and rng.random() < 0.6:
        factors = [f for f in range(2, rest + 1) if rest % f == 0]
        f = int(rng.choice(factors))
        dims.append(f)
        rest //= f
    dims.append(rest)
    if rng.random() < 0.3:
        dims.insert(int(rng.integers(len(dims) + 1)), 1)
    return {"shape": dims}


@op("reshape", one("float", "signed", "unsigned", "bool", params=_reshape_params))
def _reshape(key, values, params):
    return [jnp.reshape(values[0], params["shape"])]


def _slice_params(rng, x):
    if x.ndim == 0 or 0 in x.shape:
        return None
    starts, limits, strides = [], [], []
    for d in x.shape:
        start = int(rng.integers(d))
        starts.append(start)
        limits.append(int(rng.integers(start + 1, d + 1)))
        strides.append(int(rng.integers(1, 4)))
    return {"starts": starts, "limits": limits, "strides": strides}


@op("slice", one("float", "signed", "unsigned", "bool", min_rank=1, params=_slice_params),
    weight=2)
def _slice(key, values, params):
    return [lax.slice(values[0], params["starts"], params["limits"], params["strides"])]


@op("reverse", one("float", "signed", "unsigned", "bool", min_rank=1, params=lambda rng, x: {
    "axes": sorted({int(a) for a in rng.integers(x.ndim, size=2)})}))
def _reverse(key, values, params):
    return [jnp.flip(values[0], params["axes"])]


def _pad_params(rng, x):
    if x.ndim == 0:
        return None
    config = []
    for d in x.shape:
        interior = int(rng.integers(0, 3)) if d > 1 and rng.random() < 0.4 else 0
        full = d + max(d - 1, 0) * interior
        low, high = int(rng.integers(-2, 3)), int(rng.integers(-2, 3))
        if full + low + high < 0:
            low, high = 0, 0
        config.append((low, high, interior))
    return {"config": config, "value": int(rng.integers(-1, 3))}


@op("pad", one("float", "signed", "unsigned", min_rank=1, params=_pad_params))
def _pad(key, values, params):
    x = values[0]
    value = abs(params["value"]) if kind(x) == "unsigned" else params["value"]
    return [lax.pad(x, jnp.asarray(value, x.dtype),
                    [tuple(c) for c in params["config"]])]


@op("concatenate", one("float", "signed", "unsigned", "bool", min_rank=1,
                       params=lambda rng, x: {"axis": _axis(rng, x),
                                              "copies": int(rng.integers(2, 4))}))
def _concatenate(key, values, params):
    x = values[0]
    parts = [x if k % 2 == 0 else jnp.flip(x, params["axis"]) for k in range(params["copies"])]
    return [jnp.concatenate(parts, axis=params["axis"])]


@op("broadcast", one("float", "signed", "unsigned", "bool", max_rank=3,
                     params=lambda rng, x: {"at": int(rng.integers(x.ndim + 1)),
                                            "size": int(rng.integers(1, 5))}))
def _broadcast(key, values, params):
    x = values[0]
    expanded = jnp.expand_dims(x, params["at"])
    shape = list(expanded.shape)
    shape[params["at"]] = params["size"]
    return [jnp.broadcast_to(expanded, shape)]


@op("iota_mix", one("float", "signed", "unsigned", min_rank=1,
                    params=lambda rng, x: {"axis": _axis(rng, x)}))
def _iota_mix(key, values, params):
    x = values[0]
    return [x + lax.broadcasted_iota(x.dtype, x.shape, params["axis"])]


# -- indexing: dynamic slices, gathers, scatters ------------------------------------------
def _start_from(x, bias: int):
    """A data-dependent s32 start (often out of range: XLA clamps it)."""
    if kind(x) in ("float", "complex"):
        total = jnp.sum(x.real > 0)   # a count: exact, where a float sum is not
    else:
        total = jnp.sum(x.astype(jnp.int32))   # wraps, the same in any order
    return (total.astype(jnp.int32) % 9) - 2 + bias


def _dynamic_slice_params(rng, x):
    if x.ndim == 0 or 0 in x.shape:
        return None
    return {"sizes": [int(rng.integers(1, d + 1)) for d in x.shape],
            "bias": [int(rng.integers(-3, 4)) for _ in x.shape]}


@op("dynamic_slice", one("float", "signed", "unsigned", "bool", min_rank=1,
                         params=_dynamic_slice_params), weight=1.5, discrete=True)
def _dynamic_slice(key, values, params):
    x = values[0]
    starts = [_start_from(x, b) for b in params["bias"]]
    return [lax.dynamic_slice(x, starts, params["sizes"])]


@op("dynamic_update_slice", one("float", "signed", "unsigned", min_rank=1,
                                params=_dynamic_slice_params), weight=1.5, discrete=True)
def _dynamic_update_slice(key, values, params):
    x = values[0]
    starts = [_start_from(x, b) for b in params["bias"]]
    update = lax.dynamic_slice(x * 2, [0] * x.ndim, params["sizes"])
    return [lax.dynamic_update_slice(x, update, starts)]


def _gather_params(rng, x):
    if x.ndim == 0 or x.shape[0] == 0:
        return None
    n = x.shape[0]
    count = int(rng.integers(1, 8))
    return {"indices": [int(i) for i in rng.integers(-n - 3, n + 3, size=count)],
            "mode": str(rng.choice(["clip", "fill", "wrap"]))}


@op("take", one("float", "signed", "unsigned", "bool", min_rank=1, params=_gather_params),
    weight=1.5)
def _take(key, values, params):
    x = values[0]
    indices = jnp.asarray(params["indices"], jnp.int32)
    return [jnp.take(x, indices, axis=0, mode=params["mode"])]


@op("gather_data", two("float", "signed", "unsigned", params=lambda rng, x, y: {
    "mode": str(rng.choice(["clip", "fill"]))} if x.ndim and x.shape[0] else None),
    discrete=True)
def _gather_data(key, values, params):
    """Indices computed from data: out of range in both directions."""
    x, y = values
    indices = (jnp.ravel(y)[:5].astype(jnp.int32) if y.size else jnp.zeros(1, jnp.int32)) % 11 - 4
    return [jnp.take(x, indices, axis=0, mode=params["mode"])]


def _scatter_params(rng, x):
    if x.ndim == 0 or x.shape[0] == 0:
        return None
    n = x.shape[0]
    how = str(rng.choice(["set", "add", "mul", "min", "max"]))
    count = int(rng.integers(1, 6))
    if how == "set":   # distinct rows: the order of duplicate sets is unspecified
        rows = rng.permutation(np.arange(-n - 2, n + 2))[:count]
    else:
        rows = rng.integers(-n - 2, n + 2, size=count)
    return {"rows": [int(r) for r in rows], "how": how,
            "mode": str(rng.choice(["drop", "clip"])) if how != "set" else "drop"}


@op("scatter", one("float", "signed", "unsigned", min_rank=1, params=_scatter_params),
    weight=1.5, exact=lambda p: p["how"] in ("set", "min", "max"))
def _scatter(key, values, params):
    x = values[0]
    rows = jnp.asarray(params["rows"], jnp.int32)
    update = jnp.broadcast_to(x[:1] + jnp.asarray(1, x.dtype),
                              (len(params["rows"]),) + x.shape[1:])
    return [getattr(x.at[rows], params["how"])(update, mode=params["mode"])]


from xlapy.fuzz import jax_ops_structured  # noqa: E402,F401  registers the other half
