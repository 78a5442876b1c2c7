"""The CPU code generator's own mechanisms: hoisted reductions, parallel
reductions and loops, blocked float sums, GEMM-backed dots and epilogues, the
interpreter fallback and the flags that change code generation."""

from __future__ import annotations

import os

import numpy as np
import pytest

import xlapy
import xlapy.numpy as xnp
from xlapy import config
from xlapy.errors import CompileError
from xlapy.hlo import parse

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.fixture
def flags(monkeypatch):
    """Set XLAPY_FLAGS for one test (the on-disk cache off, so flags take effect)."""
    def set_flags(text: str = ""):
        base = os.environ.get("XLAPY_FLAGS", "")
        monkeypatch.setenv("XLAPY_FLAGS", f"{base} --xlapy_cpu_cache_dir=off {text}")
    set_flags()
    return set_flags


def cpu_and_interpreter(fn, *args):
    got = xlapy.jit(fn, backend="cpu")(*args)
    want = xlapy.jit(fn, backend="interpreter")(*args)
    return got, want


def executable_of(fn, *args):
    jitted = xlapy.jit(fn, backend="cpu")
    jitted(*args)
    return next(iter(jitted._cache.values())).executable


def softmax(x):
    m = xnp.max(x, axis=1, keepdims=True)
    e = xnp.exp(x - m)
    return e / xnp.sum(e, axis=1, keepdims=True)


def test_row_softmax_is_one_kernel_without_fallback(flags):
    x = np.random.default_rng(0).standard_normal((64, 300)).astype(np.float32)
    got, want = cpu_and_interpreter(softmax, x)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)
    executable = executable_of(softmax, x)
    assert executable.fallbacks == []
    kernels = [i for i in executable.module.entry_computation.instructions
               if i.opcode.value == "fusion"]
    assert len(kernels) == 1


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["sum", "max", "min", "prod"])
def test_reductions_to_scalar_over_large_inputs(flags, threads, op):
    flags(f"--xla_cpu_parallelism={threads}")
    rng = np.random.default_rng(1)
    x = rng.uniform(0.999, 1.001, (1 << 20) + 3).astype(np.float32)
    fn = {"sum": xnp.sum, "max": xnp.max, "min": xnp.min, "prod": xnp.prod}[op]
    got = xlapy.jit(fn, backend="cpu")(x)
    want = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}[op](
        x.astype(np.float64))
    # a product of 2^20 f32 factors carries ~sqrt(n) roundings
    np.testing.assert_allclose(float(got), want, rtol=2e-4 if op == "prod" else 1e-5)


@pytest.mark.parametrize("threads", [1, 2])
def test_integer_and_boolean_reductions_are_exact(flags, threads):
    flags(f"--xla_cpu_parallelism={threads}")
    x = np.arange(1 << 20, dtype=np.int32) % 1000 - 500
    assert int(xlapy.jit(xnp.sum, backend="cpu")(x)) == int(np.sum(x, dtype=np.int32))
    assert int(xlapy.jit(xnp.max, backend="cpu")(x)) == 499
    b = x > 498
    assert bool(xlapy.jit(xnp.any, backend="cpu")(b))
    assert not bool(xlapy.jit(xnp.all, backend="cpu")(b))


def test_mean_after_parallel_reduction(flags):
    x = np.random.default_rng(2).standard_normal((1 << 18, 4)).astype(np.float32)
    got, want = cpu_and_interpreter(lambda a: xnp.mean(a, axis=0), x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("threads", [1, 2])
def test_long_column_sums_stay_accurate(flags, threads):
    """Columns of 2^20 tenths: summed down the rows in order (NumPy's axis-0 sum) an
    f32 total drifts by ~1e-2; the column kernel's compensated blocks of 256 rows
    keep it to one block's rounding, ~2.4e-6, and a column max is exact. (Columns
    past 2048 rows once fell back to a strided loop each, 25x slower than NumPy.)"""
    flags(f"--xla_cpu_parallelism={threads}")
    x = np.full((1 << 20, 32), 0.1, np.float32)
    x[:, 5] = np.arange(1 << 20, dtype=np.float32) / (1 << 20)
    got = np.asarray(xlapy.jit(lambda a: a.sum(axis=0), backend="cpu")(x))
    exact = np.sum(x.astype(np.float64), axis=0)
    assert np.max(np.abs(got - exact) / exact) < 5e-6
    peak = np.asarray(xlapy.jit(lambda a: a.max(axis=0), backend="cpu")(x))
    np.testing.assert_array_equal(peak, x.max(axis=0))


def test_blocked_sums_stay_accurate(flags):
    """A sequential f32 sum of 2^22 tenths drifts by ~1e-3; blocks keep it ~1e-7."""
    x = np.full(1 << 22, 0.1, np.float32)
    got = float(xlapy.jit(xnp.sum, backend="cpu")(x))
    exact = float(np.sum(x.astype(np.float64)))
    assert abs(got - exact) / exact < 2e-6


@pytest.mark.parametrize("shape_a, shape_b, batch", [
    ((5, 7), (7, 3), 0), ((1, 9), (9, 1), 0), ((64, 40), (40, 33), 0),
    ((2, 4, 6), (2, 6, 5), 1), ((3, 1, 8), (3, 8, 2), 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_dot_through_gemm(flags, shape_a, shape_b, batch, dtype):
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(shape_a) * 4).astype(dtype)
    b = (rng.standard_normal(shape_b) * 4).astype(dtype)
    got, want = cpu_and_interpreter(lambda p, q: p @ q, a, b)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    transposed, want_t = cpu_and_interpreter(lambda p, q: xnp.swapaxes(q, -1, -2) @
                                             xnp.swapaxes(p, -1, -2), a, b)
    np.testing.assert_allclose(transposed, want_t, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("threads", ["1", "4"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_batched_dots_split_by_entry(flags, threads, dtype):
    """Attention's products: batch dims not outermost in the operands (heads in the
    middle), a batch that does not divide between the threads, an epilogue; and
    a batch of entries big enough to thread each GEMM instead."""
    from xlapy.backends.cpu.kernels.dot import BATCH_SPLIT_MACS

    flags(f"--xla_cpu_parallelism={threads}")
    rng = np.random.default_rng(11)
    q, k = ((rng.standard_normal((3, 20, 5, 16)) * 4).astype(dtype) for _ in range(2))

    def scores(q, k):
        s = xnp.einsum("bqhd,bkhd->bhqk", q, k)
        return s, s * 3 + 1
    got, want = cpu_and_interpreter(scores, q, k)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-3)
    side = round(BATCH_SPLIT_MACS ** (1 / 3)) + 8
    a, b = (rng.standard_normal((3, side, side)).astype(dtype) for _ in range(2))
    got, want = cpu_and_interpreter(lambda p, q: p @ q, a, b)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


DOT_DIMS = """HloModule dots
ENTRY e {{
  a = f32[{a}] parameter(0)
  b = f32[{b}] parameter(1)
  ROOT d = f32[{out}] dot(a, b), {dims}
}}
"""


@pytest.mark.parametrize("a, b, out, dims, gemm", [
    # a dense layer on [batch, seq, d]: the two free dims of a collapse into M
    ("3,5,8", "8,6", "3,5,6", "lhs_contracting_dims={2}, rhs_contracting_dims={0}", True),
    # two contracting dims laid out as one on both sides
    ("4,3,5", "3,5,7", "4,7", "lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}", True),
    # rhs with two free dims, and a batch dim
    ("2,4,3", "2,3,5,6", "2,4,5,6",
     "lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
     "rhs_contracting_dims={1}", True),
    # free dims of a not adjacent (contracting dim between them): element generator
    ("3,8,5", "8,6", "3,5,6", "lhs_contracting_dims={1}, rhs_contracting_dims={0}", False),
    # contracting dims paired in the other order than rhs lays them out
    ("4,3,5", "5,3,7", "4,7", "lhs_contracting_dims={1,2}, rhs_contracting_dims={1,0}", False),
    # size-1 dims anywhere
    ("1,5,1,8", "8,1", "1,5,1,1", "lhs_contracting_dims={3}, rhs_contracting_dims={0}", True),
])
def test_dots_with_several_free_or_contracting_dims(a, b, out, dims, gemm):
    from xlapy.backends.cpu.kernels.dot import _plan

    text = DOT_DIMS.format(a=a, b=b, out=out, dims=dims)
    dot = parse(text).entry_computation.root_instruction
    assert (_plan(dot, dot.shape) is not None) == gemm
    rng = np.random.default_rng(6)
    args = [rng.standard_normal([int(d) for d in s.split(",")]).astype(np.float32)
            for s in (a, b)]
    expected = xlapy.execute(parse(text), args, backend="interpreter")
    actual = xlapy.compile(parse(text), backend="cpu").execute(*args)
    np.testing.assert_allclose(actual[0], expected[0], rtol=1e-5, atol=1e-5)


def test_dense_layer_epilogue(flags):
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((32, 20)), rng.standard_normal((20, 10))
    bias = rng.standard_normal(10)
    with config.enable_x64(True):   # float64 data, compared to 1e-12
        got, want = cpu_and_interpreter(lambda p, q, c: xnp.maximum(p @ q + c, 0), x, w, bias)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def _layernorm_backward(x, g, gamma):
    """A layernorm's input gradient with its gamma and beta gradients: XLA fuses
    them into one multi-output fusion of an elementwise value and two column
    reductions over the leading dims."""
    mean = xnp.mean(x, axis=-1, keepdims=True)
    centred = x - mean
    inv = 1 / xnp.sqrt(xnp.mean(centred * centred, axis=-1, keepdims=True) + 1e-5)
    y = centred * inv
    dy = g * gamma
    dx = inv * (dy - xnp.mean(dy, axis=-1, keepdims=True)
                - y * xnp.mean(dy * y, axis=-1, keepdims=True))
    lead = tuple(range(x.ndim - 1))
    return dx, xnp.sum(g * y, axis=lead), xnp.sum(g, axis=lead)


def _residual_backward(x, g, gamma):
    """An elementwise gradient and the column sums of its pieces, as a residual
    block's backward pass makes them: one fusion with both kinds of root."""
    h = xnp.tanh(g * gamma + x)
    lead = tuple(range(x.ndim - 1))
    return h * 2.0, xnp.sum(h * x, axis=lead), xnp.sum(h, axis=lead)


@pytest.mark.parametrize("threads", ["1", "0"])
@pytest.mark.parametrize("shape", [(8, 16, 64), (300, 40), (3, 5, 17), (2100, 16)])
@pytest.mark.parametrize("fn", [_layernorm_backward, _residual_backward])
def test_multi_output_column_fusion(flags, threads, shape, fn):
    from xlapy.backends.cpu.column_reduce import _plan

    flags(f"--xla_cpu_parallelism={threads}")
    rng = np.random.default_rng(9)
    x, g = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    gamma = rng.standard_normal(shape[-1]).astype(np.float32)
    got, want = cpu_and_interpreter(fn, x, g, gamma)
    rows = int(np.prod(shape[:-1]))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * np.sqrt(rows))
    module = executable_of(fn, x, g, gamma).module
    plans = [_plan(i) for i in module.entry_computation.instructions
             if i.opcode.value == "fusion" and _plan(i) is not None]
    assert plans   # past 2048 rows too: their float sums go in compensated blocks
    if fn is _residual_backward and plans:     # the elementwise root joined the reductions
        assert any(r.opcode.value != "reduce" for p in plans for r in p.roots)


@pytest.mark.parametrize("threads", ["1", "0"])
def test_large_epilogue_runs_in_place_between_threads(flags, threads):
    """A dot epilogue big enough to be split between threads (GELU's gradient
    shape: erf and exp of the product, times another operand)."""
    flags(f"--xla_cpu_parallelism={threads}")
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 64, 32)).astype(np.float32)
    w = rng.standard_normal((256, 32)).astype(np.float32)
    g = rng.standard_normal((4, 64, 256)).astype(np.float32)

    def f(x, w, g):
        y = x @ w.T
        return g * xlapy.lax.erf(y * 0.5) + xnp.exp(-y * y)
    got, want = cpu_and_interpreter(f, x, w, g)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
    text = executable_of(f, x, w, g).as_text()
    assert "kind=kOutput" in text


@pytest.mark.parametrize("threads", ["1", "0"])
def test_epilogue_writes_over_an_operand_it_reads(flags, threads):
    """An MLP's forward and backward through GELU, as a transformer's has them:
    the gradient's dot epilogue reads the pre-activation, whose buffer (dead
    after it) becomes its output. The epilogue reads that operand through the
    output pointer, so the loop still vectorises; the values must not change."""
    from xlapy import lax
    from xlapy.hlo.opcode import Opcode

    flags(f"--xla_cpu_parallelism={threads}")

    def f(x, w1, w2, g):
        h = x @ w1
        e = lax.erf(h * 0.70710677)
        out = (h * 0.5 * (1 + e)) @ w2
        dy = g @ w2.T
        dh = dy * 0.5 * (1 + e) + dy * h * 0.5641896 * xnp.exp(-(h * 0.70710677) ** 2) \
            * 0.70710677
        return out, dh @ w1.T

    rng = np.random.default_rng(8)
    x, w1, w2, g = (rng.standard_normal(s).astype(np.float32)
                    for s in ((64, 32), (32, 128), (128, 32), (64, 32)))
    got, want = cpu_and_interpreter(f, x, w1, w2, g)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-3)
    executable = executable_of(f, x, w1, w2, g)
    assert any(i.opcode is Opcode.FUSION and i.attr("kind").value == "kOutput"
               for i, _, _ in executable.assignment.shared)


FFT = """HloModule fft
ENTRY e {
  x = c64[16] parameter(0)
  f = c64[16] fft(x), fft_type=FFT, fft_length={16}
  ROOT r = c64[16] add(f, f)
}
"""


def test_unsupported_instruction_runs_through_the_fallback(flags):
    x = np.random.default_rng(5).standard_normal(16).astype(np.complex64)
    executable = xlapy.compile(FFT, backend="cpu")
    (got,) = executable.execute(x)
    (want,) = xlapy.execute(FFT, [x], backend="interpreter")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert [i.opcode.value for i in executable.fallbacks] == ["fft"]


def test_strict_flag_refuses_the_fallback(flags):
    flags("--xlapy_cpu_strict")
    with pytest.raises(CompileError):
        xlapy.compile(FFT, backend="cpu")


def test_flush_denormals_flag(flags):
    x = np.array([1e-30, 1.0], np.float32)
    y = np.array([1e-10, 2.0], np.float32)
    assert xlapy.jit(lambda a, b: a * b, backend="cpu")(x, y)[0] > 0
    flags("--xla_cpu_flush_denormals")
    assert xlapy.jit(lambda a, b: a * b + 0, backend="cpu")(x, y)[0] == 0


def test_large_elementwise_loop_splits_between_threads(flags):
    flags("--xla_cpu_parallelism=2")
    x = np.random.default_rng(6).standard_normal((1024, 1030)).astype(np.float32)
    got, want = cpu_and_interpreter(lambda a: xnp.tanh(a) * 2 + a[::-1], x)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


COLUMN_REDUCE = """HloModule columns
{reducer} {{
  p = {t}[] parameter(0)
  q = {t}[] parameter(1)
  ROOT r = {t}[] {op}(p, q)
}}
ENTRY e {{
  x = {t}[{dims}] parameter(0)
  init = {t}[] constant({init})
  ROOT s = {t}[{out}] reduce(x, init), dimensions={{{reduced}}}, to_apply={reducer}
}}
"""


@pytest.mark.parametrize("t", ["f32", "f64", "s32", "u64"])
@pytest.mark.parametrize("op, init", [("add", "0"), ("maximum", "-100"), ("multiply", "1"),
                                      ("minimum", "50")])
@pytest.mark.parametrize("dims, reduced, out", [
    ("8,16,40", "0,1", "40"),       # a bias gradient's shape: rows folded into the outputs
    ("300,17", "0", "17"),           # output count not a multiple of the vector width
    ("3,2,600", "0", "2,600"),       # more outputs than one chunk
    ("2049,16", "0", "16"),          # past BLOCK_ROWS: float sums in compensated blocks
    ("4100,3,16", "0,1", "16"),      # several blocks, the last one short
    ("4,300,40", "1", "4,40"),       # a middle axis: a batch of column reductions
    ("3,5,7,20", "1,2", "3,20"),
    ("2,600,17", "1", "2,17"),       # blocked sums in each batch
])
def test_column_reductions_agree_with_the_interpreter(t, op, init, dims, reduced, out):
    from xlapy.backends.cpu.column_reduce import _plan

    text = COLUMN_REDUCE.format(t=t, op=op, init=init, dims=dims, reduced=reduced, out=out,
                                reducer="red")
    module = parse(text)
    assert _plan(module.entry_computation.root_instruction) is not None
    rng = np.random.default_rng(8)
    shape = [int(d) for d in dims.split(",")]
    dtype = {"f32": np.float32, "f64": np.float64, "s32": np.int32, "u64": np.uint64}[t]
    x = (rng.random(shape) * 3 + 0.5).astype(dtype) if op == "multiply" and t[0] == "f" \
        else rng.integers(0, 3 if op == "multiply" else 90, shape).astype(dtype)
    if t[0] == "f" and op != "multiply":
        x = (rng.standard_normal(shape) * 40).astype(dtype)
        x.flat[7] = np.nan
    expected = xlapy.execute(parse(text), [x], backend="interpreter")[0]
    actual = xlapy.compile(parse(text), backend="cpu").execute(x)[0]
    # float sums cancel: the bound scales with the sum of magnitudes down each column
    axes = tuple(int(d) for d in reduced.split(","))
    scale = np.sum(np.abs(np.nan_to_num(x.astype(np.float64))), axis=axes) if op == "add" else 0
    np.testing.assert_allclose(actual, expected, rtol=1e-5 if t == "f32" else 1e-12,
                               atol=np.max(scale) * (1e-6 if t == "f32" else 1e-14),
                               equal_nan=True)


ROW_REDUCE = """
HloModule row_{op}
red {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT m = {t}[] {op}(a, b)
}}
ENTRY e {{
  x = {t}[{rows},{cols}] parameter(0)
  init = {t}[] constant({init})
  ROOT s = {t}[{rows}] reduce(x, init), dimensions={{1}}, to_apply=red
}}
"""


@pytest.mark.parametrize("t", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("op", ["maximum", "minimum"])
@pytest.mark.parametrize("init", ["-inf", "inf", "nan", "0"])
@pytest.mark.parametrize("cols", [1, 7, 1000])
def test_row_max_and_min_propagate_nan_wherever_it_is(flags, t, op, init, cols):
    """A row max/min keeps NaN-blind maxnum in its loop and tracks NaN beside it:
    a NaN first, last or alone in its row, of either sign, or as the initial value
    makes the row NaN; ±inf rows and rows without NaN are exact."""
    import ml_dtypes

    dtype = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32,
             "f64": np.float64}[t]
    rows = 9
    x = np.random.default_rng(3).standard_normal((rows, cols)).astype(dtype)
    x[1, 0] = np.nan
    x[2, -1] = np.nan
    x[3, cols // 2] = -np.nan
    x[4, :] = np.inf
    x[5, :] = -np.inf
    x[6, :] = np.nan
    text = ROW_REDUCE.format(op=op, t=t, rows=rows, cols=cols, init=init)
    expected = xlapy.execute(parse(text), [x], backend="interpreter")[0]
    actual = xlapy.compile(parse(text), backend="cpu").execute(x)[0]
    np.testing.assert_array_equal(np.asarray(actual).astype(np.float64),
                                  np.asarray(expected).astype(np.float64))
    assert np.isnan(np.asarray(actual)[1:4].astype(np.float64)).all()


@pytest.mark.parametrize("threads", ["1", "0"])
@pytest.mark.parametrize("shape", [(300, 40), (2100, 16), (6, 50, 33)])
@pytest.mark.parametrize("fn", [
    lambda a: a.mean(axis=0),
    lambda a: a.var(axis=0),
    lambda a: a.mean(axis=1) if a.ndim == 3 else a.mean(axis=0) + 1.0,   # a middle axis
    lambda a: (a.sum(axis=0), a.sum(axis=0) * 2.0 + 1.0),   # a root read by an epilogue
    lambda a: xnp.sqrt((a * a).mean(axis=0)) / (a.max(axis=0) + 10.0),
])
def test_column_reductions_with_epilogues_run_in_the_column_kernel(flags, threads, shape, fn):
    """A reduction over the leading dims followed by per-column arithmetic (a mean's
    division, a variance) is one column kernel: the epilogue runs per column after
    the rows are folded. It used to fall back to a strided loop per column (var over
    axis 0 of 2048x2048: 14.9 ms, NumPy 2.5)."""
    from xlapy.backends.cpu.column_reduce import _plan

    flags(f"--xla_cpu_parallelism={threads}")
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    got, want = cpu_and_interpreter(fn, x)
    for a, b in zip(got if isinstance(got, tuple) else [got],
                    want if isinstance(want, tuple) else [want]):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5)
    module = executable_of(fn, x).module
    reducing = [i for i in module.entry_computation.instructions if i.opcode.value == "reduce"
                or (i.opcode.value == "fusion" and any(
                    j.opcode.value == "reduce" for j in i.attr("calls").instructions))]
    assert reducing and all(_plan(i) is not None for i in reducing)


@pytest.mark.parametrize("threads", ["1", "0"])
def test_multi_output_roots_of_one_shape_share_a_loop_nest(flags, threads):
    """Roots of a multi-output loop fusion with one shape and layout are stored from
    one loop nest, so what they share (an LSTM cell's gates) is computed once per
    element; roots of other shapes keep nests of their own."""
    flags(f"--xla_cpu_parallelism={threads}")
    rng = np.random.default_rng(6)
    x, y = (rng.standard_normal((64, 96)).astype(np.float32) for _ in range(2))

    def cell(x, y):
        gate = xnp.tanh(x) * xlapy.nn.sigmoid(y)
        c = gate + 0.5 * y
        return c, xnp.tanh(c) * gate, (gate * 2.0).T, gate[:, :7] - 1.0

    got, want = cpu_and_interpreter(cell, x, y)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=2e-6)
    donated = xlapy.jit(cell, backend="cpu", donate_argnums=(0,))
    for a, b in zip(donated(x.copy(), y), want):   # an output may take x's buffer
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=2e-6)


def _merge_heads(z):
    return xnp.reshape(xnp.transpose(z, (0, 2, 1, 3)), (z.shape[0], z.shape[2], -1))


@pytest.mark.parametrize("threads", ["1", "0"])
@pytest.mark.parametrize("fn", [
    _merge_heads,                                                 # the operand walked
    lambda z: (_merge_heads(z) * 2.0, _merge_heads(z) + 1.0),     # two such roots
    lambda z: (_merge_heads(z), xnp.sum(z, axis=(0, 2))),         # beside a reduction
    lambda z: xnp.reshape(z * 3.0, (-1, 4)),                      # minor 64 -> 4 stays
    lambda z: xnp.reshape(z[:1] + 1.0, (64, -1)),                 # one outer row
])
def test_a_root_reshape_is_stored_as_its_operand_is_walked(flags, threads, fn):
    """A loop fusion whose root is a row-major reshape walks the reshape's operand
    and stores into the output viewed in the operand's shape; results as the
    interpreter's, in every combination of roots."""
    flags(f"--xla_cpu_parallelism={threads}")
    z = np.random.default_rng(3).standard_normal((8, 4, 128, 64)).astype(np.float32)
    got, want = cpu_and_interpreter(fn, z)
    for a, b in zip(*(x if isinstance(x, tuple) else (x,) for x in (got, want))):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-4)


def test_merging_heads_back_reads_without_dividing_the_index():
    """transpose(x, (0, 2, 1, 3)) reshaped to [b, s, h*d] (attention's heads merged
    back): walked in the output's index space, each element's source was found
    by dividing the index by d, which kept the loop from vectorising."""
    from xlapy.backends.cpu import compiler
    from xlapy.backends.cpu.options import CompileOptions

    z = np.ones((8, 4, 128, 64), np.float32)
    module = xlapy.jit(_merge_heads).lower(z).module
    options = CompileOptions.from_flags()
    text = str(compiler.generate(compiler.prepare(module, options, ""), options).llmod)
    assert " udiv " not in text and " urem " not in text
