"""Inputs and NumPy-computed expected outputs for every module in tests/hlo/corpus/.

`CASES[file name]` lists the runs of one module: the arguments (one per entry
parameter, a tuple for a tuple parameter) and the outputs XLA's semantics give
(the root, or the elements of a root tuple), computed here with plain NumPy so
the interpreter is checked against an independent reference. Inputs are seeded
and aimed at the edges XLA defines: clamped indices, dropped scatter updates,
out-of-range branch indices, NaN/-0 ordering, saturating conversions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import ml_dtypes
import numpy as np

f32, f64, s32, u8, u32 = np.float32, np.float64, np.int32, np.uint8, np.uint32
bf16 = ml_dtypes.bfloat16
NEG_NAN = np.array([0xFFC00000], u32).view(f32)[0]

Runner = Callable[[tuple], list]


@dataclass(frozen=True)
class Case:
    """One run of a module. `check`, when given, replaces the comparison with
    `expected`: it receives a runner `run(inputs) -> outputs` and asserts."""

    inputs: tuple
    expected: tuple = ()
    rtol: float = 2e-6
    atol: float = 1e-6
    bitwise: bool = False  # floats must match bit for bit (NaN sign, -0)
    check: Callable[[Runner], None] | None = None


CASES: dict[str, list[Case]] = {}

NO_OPERAND_SHAPES = {"opt_dense_kcustom_frames.hlo"}
"""Files in newer XLA's long form, which prints operands without their shapes; our
printer writes the classic long form (shapes inline), so it cannot reproduce them."""


def cases(name: str):
    """Register the decorated function's list of cases for corpus file `name`."""

    def register(fn):
        CASES[name] = fn()
        return fn

    return register


def rand(rng, shape, lo=-1.0, hi=1.0, dtype=f32):
    return rng.uniform(lo, hi, shape).astype(dtype)


# -- NumPy references ----------------------------------------------------------------
def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layernorm(x, g, b, eps=1e-5):
    x = x.astype(f64)
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return ((x - m) / np.sqrt(v + eps) * g + b).astype(f32)


def gelu_tanh(x):
    x = x.astype(f64)
    return (0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))).astype(f32)


def conv_nchw(x, w, stride, padding, rhs_dilation=(1, 1), groups=1):
    """XLA convolution with bf01/oi01 labels: padding, stride, window dilation, groups."""
    x = np.pad(x.astype(f64), ((0, 0), (0, 0), padding[0], padding[1]))
    (o, i, kh, kw), (dh, dw) = w.shape, rhs_dilation
    eh, ew = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    oh, ow = (x.shape[2] - eh) // stride[0] + 1, (x.shape[3] - ew) // stride[1] + 1
    out = np.zeros((x.shape[0], o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs, ws = x[:, g * i:(g + 1) * i], w[g * og:(g + 1) * og].astype(f64)
        for a in range(oh):
            for b in range(ow):
                r, c = a * stride[0], b * stride[1]
                patch = xs[:, :, r:r + eh:dh, c:c + ew:dw]
                out[:, g * og:(g + 1) * og, a, b] = np.einsum("nihw,oihw->no", patch, ws)
    return out.astype(f32)


def hlo_pad(x, value, config):
    """XLA pad: interior padding first, then low/high edges (negative ones crop)."""
    shape = [d + (d - 1) * it if d else 0 for d, (_, _, it) in zip(x.shape, config)]
    y = np.full(shape, value, x.dtype)
    y[tuple(slice(None, None, it + 1) for _, _, it in config)] = x
    for axis, (lo, hi, _) in enumerate(config):
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        y = np.pad(y, widths, constant_values=value)
        keep = [slice(None)] * x.ndim
        keep[axis] = slice(max(-lo, 0), y.shape[axis] - max(-hi, 0))
        y = y[tuple(keep)]
    return y


def total_order_key(x):
    """An int64 per f32 that orders like XLA's TOTALORDER (-NaN < -inf < -0 < +0 < NaN)."""
    bits = x.view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF) - 1, bits)


def first_argmax_windows(x, size):
    """Per non-overlapping window: the position of the first maximum (select=GE)."""
    n, h, w, c = x.shape
    picks = []
    for b in range(n):
        for i in range(0, h, size):
            for j in range(0, w, size):
                for k in range(c):
                    win = x[b, i:i + size, j:j + size, k]
                    di, dj = np.unravel_index(np.argmax(win), win.shape)
                    picks.append((b, i + di, j + dj, k))
    return picks


def saturating_convert(x, dtype):
    """XLA's float -> int convert: truncate toward zero, saturate, NaN -> 0."""
    info = np.iinfo(dtype)
    t = np.trunc(np.nan_to_num(x.astype(f64), nan=0.0, posinf=np.inf, neginf=-np.inf))
    return np.clip(t, info.min, info.max).astype(dtype)


# -- JAX short form, lowered by jax.jit(f).lower(...) -----------------------------------
@cases("jax_mlp_relu.hlo")
def _():
    rng = np.random.default_rng(1)
    x, w, b = rand(rng, (4, 3)), rand(rng, (3, 5)), rand(rng, (5,))
    return [Case((x, w, b), (np.maximum(x @ w + b, 0).sum(1),), rtol=1e-5)]


@cases("jax_softmax.hlo")
def _():
    x = np.array([[1, 2, 3, 4, 5], [-np.inf, 100, 100, -3, 0.5]], f32)
    return [Case((x,), (softmax(x.astype(f64)).astype(f32),), rtol=1e-6)]


@cases("jax_argmax_variadic_reduce.hlo")
def _():
    x = np.array([[1, 7, 7, 2], [3, np.nan, 9, np.nan], [-np.inf] * 4], f32)
    return [Case((x,), (np.array([1, 1, 0], s32),))]


@cases("jax_fori_loop.hlo")
def _():
    def ref(n, x):
        acc, y = np.zeros_like(x), x.copy()
        for i in range(n):
            acc, y = acc * y + f32(i), y * f32(0.5)
        return acc, y

    x = np.array([1.0, -2.0, 4.0], f32)
    return [Case((s32(n), x), ref(n, x)) for n in (0, 5, -2)]


@cases("jax_lstm_scan.hlo")
def _():
    rng = np.random.default_rng(5)
    xs, wx, wh, b = rand(rng, (5, 3)), rand(rng, (3, 16)), rand(rng, (4, 16)), rand(rng, (16,))
    h, c, hs = np.zeros(4), np.zeros(4), []
    for x in xs.astype(f64):
        z = x @ wx + h @ wh + b
        i, f, g, o = np.split(z, 4)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        hs.append(h)
    return [Case((xs, wx, wh, b), (np.array(hs, f32), c.astype(f32)), rtol=1e-5)]


@cases("jax_switch.hlo")
def _():
    x = np.array([0.5, -1.0, 2.0], f32)
    branches = [np.sin, np.cos, np.negative]
    return [Case((s32(i), x), (branches[min(max(i, 0), 2)](x),), rtol=1e-6)
            for i in (-3, 0, 1, 2, 9)]


@cases("jax_embedding_gather.hlo")
def _():
    table = np.arange(24, dtype=f32).reshape(6, 4)
    ids = np.array([0, 5, -1, 7, -9], s32)  # -1 -> 5; 7 clamps to 5; -9 -> -3 clamps to 0
    return [Case((table, ids), (table[[0, 5, 5, 5, 0]],))]


@cases("jax_take_along_axis.hlo")
def _():
    x = np.arange(15, dtype=f32).reshape(3, 5) * 1.5
    idx = np.array([[0, 4], [-1, 7], [-8, 2]], s32)  # negatives wrap once, then clamp
    cols = np.clip(np.where(idx < 0, idx + 5, idx), 0, 4)
    return [Case((x, idx), (np.take_along_axis(x, cols, axis=1),))]


@cases("jax_scatter_add.hlo")
def _():
    x = np.arange(6, dtype=f32)
    idx = np.array([1, 3, 1, 6, -7], s32)  # 6 and -7 (-> -1) are out of bounds: dropped
    y = np.array([10, 20, 30, 40, 50], f32)
    want = x.copy()
    want[1] += 10 + 30
    want[3] += 20
    return [Case((x, idx, y), (want,))]


@cases("jax_sort_key_value.hlo")
def _():
    keys = np.array([3, NEG_NAN, -0.0, -np.inf, 0.0, 3, np.nan], f32)
    vals = np.arange(7, dtype=s32)
    canon = np.where(np.isnan(keys), np.nan, keys)  # the comparator maps -0 -> 0, any NaN -> NaN
    perm = np.argsort(canon, kind="stable")
    return [Case((keys, vals), (keys[perm], vals[perm]), bitwise=True)]


@cases("jax_conv2d_nhwc.hlo")
def _():
    rng = np.random.default_rng(12)
    x, w = rand(rng, (1, 5, 5, 2)), rand(rng, (3, 3, 2, 3))
    out = conv_nchw(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (2, 2), ((1, 1), (1, 1)))
    return [Case((x, w), (out.transpose(0, 2, 3, 1),), rtol=1e-5, atol=1e-6)]


@cases("jax_conv_grouped.hlo")
def _():
    rng = np.random.default_rng(13)
    x, w = rand(rng, (1, 4, 4, 3)), rand(rng, (2, 2, 3, 2))
    out = conv_nchw(x, w, (1, 1), ((1, 1), (0, 0)), rhs_dilation=(1, 2), groups=2)
    return [Case((x, w), (out,), rtol=1e-5, atol=1e-6)]


@cases("jax_maxpool_grad.hlo")
def _():
    x = np.random.default_rng(14).permutation(32).astype(f32).reshape(1, 4, 4, 2)
    x[0, 0:2, 0:2, 0] = 40.0  # a tie: select=GE keeps the first maximum in the window
    pooled = x.reshape(1, 2, 2, 2, 2, 2).max(axis=(2, 4))
    grad = np.zeros_like(x)
    cotangent = np.arange(1, 9, dtype=f32).reshape(1, 2, 2, 2)
    for b, i, j, k in first_argmax_windows(x, 2):
        grad[b, i, j, k] += cotangent[b, i // 2, j // 2, k]
    return [Case((x,), (pooled, grad))]


@cases("jax_batched_matmul.hlo")
def _():
    rng = np.random.default_rng(15)
    a, b = rand(rng, (2, 3, 4)), rand(rng, (2, 4, 2))
    return [Case((a, b), (np.swapaxes(a @ b, 1, 2) * 2,), rtol=1e-5)]


@cases("jax_pad_slice_concat.hlo")
def _():
    x = np.arange(1, 13, dtype=f32).reshape(3, 4)
    padded = hlo_pad(x, f32(-1), [(1, -1, 1), (0, 2, 2)])
    return [Case((x,), (padded, x[0:3:2, 1:4:2], np.concatenate([x, x[:, ::-1]])))]


@cases("jax_dynamic_slice_clamp.hlo")
def _():
    x = np.arange(20, dtype=f32).reshape(4, 5)
    u = -np.arange(1, 7, dtype=f32).reshape(2, 3)
    out = []
    for i, j in [(1, 1), (3, 4), (-1, -7), (100, -100)]:
        # JAX wraps negative indices once; XLA then clamps so the window fits
        r = min(max(i + 4 if i < 0 else i, 0), 2)
        c = min(max(j + 5 if j < 0 else j, 0), 2)
        updated = x.copy()
        updated[r:r + 2, c:c + 3] = u
        out.append(Case((x, s32(i), s32(j), u), (x[r:r + 2, c:c + 3], updated)))
    return out


@cases("jax_causal_mask.hlo")
def _():
    x = np.arange(16, dtype=f32).reshape(4, 4)
    return [Case((x,), (np.where(np.tril(np.ones((4, 4), bool)), x, -np.inf).astype(f32),))]


@cases("jax_bitcast_convert.hlo")
def _():
    y = np.array([0x3C00, 0xFC00], np.uint16)  # f16 1.0 and -inf
    out = []
    for x in ([-1.5, 3e9, np.nan], [np.inf, -np.inf, 255.7], [-3e9, 256.5, -0.9]):
        x = np.array(x, f32)
        out.append(Case((x, y), (x.view(u32), x.view(u8).reshape(3, 4), y.view(np.float16),
                                 saturating_convert(x, s32), saturating_convert(x, u8)),
                        bitwise=True))
    return out


@cases("jax_rng_bit_generator.hlo")
def _():
    def check(run):
        key = np.array([1, 2, 3, 4], u32)
        first, again = run((key,)), run((key,))
        other = run((np.array([1, 2, 3, 5], u32),))
        for outs in (first, other):
            assert [(o.dtype, o.shape) for o in outs] == [(u32, (4,)), (u32, (4, 8))]
        assert all(np.array_equal(a, b) for a, b in zip(first, again)), "not deterministic"
        assert not np.array_equal(first[1], other[1]), "the key does not change the bits"
        assert len(np.unique(first[1])) > 16, "the bits do not look random"

    return [Case((), check=check)]


@cases("jax_layernorm_frames.hlo")
def _():
    rng = np.random.default_rng(21)
    x, g, b = rand(rng, (3, 8), -3, 3), rand(rng, (8,)), rand(rng, (8,))
    return [Case((x, g, b), (layernorm(x, g, b),), rtol=1e-5, atol=1e-5)]


@cases("jax_mnist_train_step.hlo")
def _():
    rng = np.random.default_rng(28)
    w, b = rand(rng, (784, 10), -0.05, 0.05), rand(rng, (10,), -0.1, 0.1)
    x = rand(rng, (8, 784), 0.0, 1.0)
    y = np.eye(10, dtype=f32)[rng.integers(0, 10, 8)]
    logits = x.astype(f64) @ w + b
    logp = logits - logits.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    loss = -(y * logp).sum(1).mean()
    g = (np.exp(logp) * y.sum(1, keepdims=True) - y) / 8  # d loss / d logits
    want = (w - 0.5 * (x.T @ g), b - 0.5 * g.sum(0), loss)
    return [Case((w, b, x, y), tuple(np.asarray(v, f32) for v in want), rtol=1e-4, atol=1e-6)]


# -- Optimised long form, as XLA's CPU/GPU compilers print it -----------------------------
@cases("opt_gelu_kloop.hlo")
def _():
    x = np.linspace(-4, 4, 24, dtype=f32).reshape(4, 6)
    return [Case((x,), (gelu_tanh(x),), rtol=1e-5, atol=1e-6)]


@cases("opt_layernorm.hlo")
def _():
    rng = np.random.default_rng(22)
    x, g, b = rand(rng, (3, 8), -2, 2), rand(rng, (8,)), rand(rng, (8,))
    return [Case((x, g, b), (layernorm(x, g, b),), rtol=1e-5, atol=1e-5)]


@cases("opt_dense_kcustom_frames.hlo")
def _():
    rng = np.random.default_rng(23)
    x, w, b = rand(rng, (4, 8)), rand(rng, (8, 6)), rand(rng, (6,))
    return [Case((x, w, b), (np.tanh(x.astype(f64) @ w + b).astype(f32),), rtol=1e-5)]


@cases("cpu_dot_bias_koutput.hlo")
def _():
    rng = np.random.default_rng(24)
    x, w, b = rand(rng, (4, 8)), rand(rng, (8, 6)), rand(rng, (6,))
    return [Case((x, w, b), (np.maximum(x.astype(f64) @ w + b, 0).astype(f32),), rtol=1e-5)]


@cases("gpu_softmax_fusions.hlo")
def _():
    x = (np.arange(24, dtype=f32).reshape(4, 6) - 10) / 3
    return [Case((x,), (softmax(x.astype(f64)).astype(f32),), rtol=1e-6)]


@cases("opt_while_conditional.hlo")
def _():
    def ref(v):
        for _ in range(6):
            v = v * f32(0.5) if v.sum() > 10 else v + f32(3)
        return v

    x = np.array([1.0, 2.0, -0.5], f32)
    return [Case((x,), (s32(6), ref(x)))]


@cases("opt_adam_donated.hlo")
def _():
    rng = np.random.default_rng(25)
    p, m, v, g = (rand(rng, (5,)) for _ in range(4))
    v = np.abs(v)
    step = 3
    m1 = m * f32(0.9) + g * f32(0.1)
    v1 = v * f32(0.999) + g * f32(0.001) * g
    t = step + 1
    mh, vh = m1 / (1 - f32(0.9) ** t), v1 / (1 - f32(0.999) ** t)
    p1 = p - mh * f32(1e-3) / (np.sqrt(vh) + f32(1e-8))
    return [Case((p, m, v, g, s32(step)), (p1, m1, v1, s32(t)), rtol=1e-5, atol=1e-7)]


# -- Hand-written long form: the XLA text for what jax does not emit ----------------------
@cases("conditional_forms.hlo")
def _():
    x = np.array([1.0, 2.0, 3.0], f32)
    branches = [lambda i: x * 2, lambda i: x + f32(0.25), lambda i: f32(i) - np.arange(3, dtype=f32)]
    out = []
    for p in (True, False):
        for i in (-1, 0, 1, 2, 7):  # an index outside [0, 3) runs the last branch
            chosen = branches[i if 0 <= i < 3 else 2](i)
            out.append(Case((np.bool_(p), s32(i), x), (np.exp(x) if p else -x, chosen)))
    return out


@cases("sort_descending_totalorder.hlo")
def _():
    keys = np.array([[1.0, np.nan, -0.0, np.inf, 0.0, -2.0],
                     [NEG_NAN, 3.0, -np.inf, 3.0, 0.0, -0.0]], f32)
    payload = np.arange(12, dtype=f32).reshape(2, 6)
    perm = np.argsort(-total_order_key(keys), axis=1, kind="stable")
    take = lambda a: np.take_along_axis(a, perm, axis=1)  # noqa: E731
    return [Case((keys, payload), (take(keys), perm.astype(s32), take(payload)), bitwise=True)]


@cases("custom_call_topk.hlo")
def _():
    x = np.array([[3, 1, 4, 1, 5, 9, 2, 6], [-1, -1, -1, -1, 0, 0, 0, 0],
                  [2, 7, 1, 8, 2, 8, 1, 8]], f32)
    idx = np.argsort(-x, axis=1, kind="stable")[:, :3]  # ties: the lower index first
    return [Case((x,), (np.take_along_axis(x, idx, axis=1), idx.astype(s32)))]


@cases("constants_many_types.hlo")
def _():
    x = np.array([1, 2, 0.5, 256], bf16)
    z = np.array([1 + 1j, 2 - 3j], np.complex64)
    want = (
        (x.astype(f32) + np.array([1.5, -np.inf, 3.140625, 0.0078125], f32)).astype(bf16),
        np.array([6.1035e-05, 65504, -0.0, 0.33325], np.float16),
        np.array([-128, 127, 0, -1], np.int8),
        np.array([0, 2**64 - 1, 42], np.uint64),
        np.array([True, False]),
        z * np.array([1 - 2j, 0.5], np.complex64),
        np.array([np.inf, -np.inf, np.nan, NEG_NAN, 1e-45, 3.4028234663852886e38], f32),
        np.array([0.1, -1e300, 2.2250738585072014e-308], f64),
        np.array([-(2**63), 2**63 - 1], np.int64),
        np.array([[0, 1, 2], [253, 254, 255]], u8),
        np.int16(-32768),
        np.array([4294967295, 2147483648], u32),
        np.bool_(True),
    )
    return [Case((x, z), want, bitwise=True)]


@cases("tuples_sharding_attrs.hlo")
def _():
    a, n, m = np.array([1, 2], f32), s32(5), np.array([[1, 2], [3, 4]], f32)
    x = np.array([10, 20], f32)
    added = a + x
    dot = m @ added
    return [Case(((a, (n, m)), x), (added, n, m, dot, -x, s32(6), (dot, s32(6))))]
