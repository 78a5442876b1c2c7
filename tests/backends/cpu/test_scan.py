"""Running reductions (`lax.cumsum` & co., reduce-windows spanning an axis) run
as scan kernels: the same values as the interpreter's window-by-window
evaluation, for every axis, direction, reducer and dtype, and never fused."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import xlapy
from xlapy import lax
from xlapy.backends.cpu.kernels.scan import prefix_scan
from xlapy.hlo import parse

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DTYPES = [np.float32, np.float64, np.int32, np.uint8, np.float16, ml_dtypes.bfloat16]


def _data(rng, shape, dtype, op):
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 3 if op is lax.cumprod else 50, shape).astype(dtype)
    if op is lax.cumprod:
        return rng.uniform(0.9, 1.1, shape).astype(dtype)
    return (rng.standard_normal(shape) * 3).astype(dtype)


@pytest.mark.parametrize("shape", [(7,), (5, 9), (3, 4, 600), (600, 3), (4, 1, 5)])
@pytest.mark.parametrize("op", [lax.cumsum, lax.cumprod, lax.cummax, lax.cummin])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_scans_agree_with_the_interpreter(shape, op, reverse, dtype):
    rng = np.random.default_rng(len(shape) * 7 + reverse)
    x = _data(rng, shape, dtype, op)
    for axis in range(len(shape)):
        fn = lambda a, axis=axis: op(a, axis=axis, reverse=reverse)  # noqa: E731
        got = np.asarray(xlapy.jit(fn, backend="cpu")(x)).astype(np.float64)
        want = np.asarray(xlapy.jit(fn, backend="interpreter")(x)).astype(np.float64)
        tight = np.dtype(dtype) in (np.float32, np.float64)
        rtol = 1e-5 if tight else 2e-2
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol,
                                   err_msg=f"axis {axis}")


def test_running_max_propagates_nan_and_logsumexp_scans():
    x = np.random.default_rng(1).standard_normal((6, 40)).astype(np.float32)
    x[2, 10] = np.nan
    for fn in (lambda a: lax.cummax(a, axis=1), lambda a: lax.cumlogsumexp(a, axis=1),
               lambda a: lax.cumlogsumexp(a, axis=0, reverse=True)):
        got = np.asarray(xlapy.jit(fn, backend="cpu")(x))
        want = np.asarray(xlapy.jit(fn, backend="interpreter")(x))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert np.isnan(np.asarray(xlapy.jit(lambda a: lax.cummax(a, axis=1),
                                         backend="cpu")(x))[2, 10:]).all()


def test_a_long_scan_is_linear_not_quadratic():
    """A 2^16-long cumsum: window by window it is 2^31 additions (seconds); as a scan
    2^16. Checked by value (a quadratic kernel would still be right, only slow, so
    the kernel's shape is checked below through `prefix_scan`)."""
    x = np.ones(1 << 16, np.float32)
    got = np.asarray(xlapy.jit(lambda a: lax.cumsum(a), backend="cpu")(x))
    np.testing.assert_array_equal(got, np.arange(1, (1 << 16) + 1, dtype=np.float32))


WINDOW = """
HloModule w
add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}
ENTRY e {{
  x = f32[4,8] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[4,8] reduce-window(x, zero), window={{{window}}}, to_apply=add
}}
"""


@pytest.mark.parametrize("window, scan", [
    ("size=1x8 pad=0_0x7_0", (1, False)),
    ("size=1x8 pad=0_0x0_7", (1, True)),
    ("size=4x1 pad=3_0x0_0", (0, False)),
    ("size=1x4 pad=0_0x3_0", None),           # a sliding window, not the whole axis
    ("size=4x8 pad=3_0x7_0", None),           # two spanning axes: a 2-D prefix sum
    ("size=1x8 pad=0_0x3_4", None),           # a centred window over the whole axis
])
def test_prefix_scans_are_recognised_and_others_left_to_the_generator(window, scan):
    module = parse(WINDOW.format(window=window))
    root = module.entry_computation.root_instruction
    found = prefix_scan(root)
    assert (found and (found.axis, found.reverse)) == (scan or None)
    x = np.random.default_rng(2).standard_normal((4, 8)).astype(np.float32)
    if root.shape.dimensions == (4, 8):
        want = xlapy.execute(module, [x], backend="interpreter")[0]
        got = xlapy.compile(module, backend="cpu").execute(x)[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_scan_takes_no_fused_producers():
    """cumsum of a converted bool runs the conversion as its own kernel: fused, the
    scan would have to be evaluated window by window again."""
    fn = xlapy.jit(lambda a: lax.cumsum(a.astype(np.float32) * 2, axis=1), backend="cpu")
    x = np.random.default_rng(3).random((16, 300)) > 0.5
    got = np.asarray(fn(x))
    np.testing.assert_allclose(got, np.cumsum(x * 2.0, axis=1))
    text = fn.lower(x).compile().as_text()
    assert "reduce-window(" in text.split("ENTRY")[1]   # the scan is an entry instruction
