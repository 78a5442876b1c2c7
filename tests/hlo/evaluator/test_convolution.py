"""Interpreter convolution against a direct loop over XLA's definition, NumPy
formulations of the common layouts, hand-computed edge cases, and the
gradient convolutions JAX emits, for every dtype."""

from __future__ import annotations

import numpy as np
import pytest

from tests.hlo.evaluator.util import run_op
from xlapy.errors import ExecutionError
from xlapy.hlo import parse, verify
from xlapy.hlo.attributes import ConvolutionDimensionNumbers, Window, WindowDimension
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.evaluator.evaluator import Evaluator
from xlapy.hlo.shape import Shape

ALL_TYPES = ["pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
             "f16", "bf16", "f32", "f64", "c64", "c128"]
TOLERANCE = {"f16": 3e-3, "bf16": 2e-2, "f32": 1e-5, "f64": 1e-12, "c64": 1e-5, "c128": 1e-12}


def window(*dims: tuple) -> Window:
    """`window(size, ...)` or `window((size, stride, lo, hi, rhs_dilate, lhs_dilate, rev))`."""
    return Window(tuple(WindowDimension(*d) if isinstance(d, tuple) else WindowDimension(d)
                        for d in dims))


def labels(text: str) -> ConvolutionDimensionNumbers:
    return ConvolutionDimensionNumbers.from_text(text)


def sample(type_name: str, dims, rng) -> np.ndarray:
    t = PrimitiveType.from_text(type_name)
    if t.is_pred:
        return rng.integers(0, 2, dims).astype(bool)
    if t.is_integral:
        info = np.iinfo(t.numpy)
        return rng.integers(info.min, info.max, dims, dtype=t.numpy, endpoint=True)
    values = rng.standard_normal(dims)
    if t.is_complex:
        values = values + 1j * rng.standard_normal(dims)
    return values.astype(t.numpy)


# -- the reference: XLA's definition, one output element at a time --------------------
def output_size(size: int, d: WindowDimension) -> int:
    dilated = (size - 1) * d.base_dilation + 1 if size else 0
    padded = dilated + d.padding_low + d.padding_high
    extent = (d.size - 1) * d.window_dilation + 1
    return 0 if padded < extent else (padded - extent) // d.stride + 1


def reference(lhs, rhs, dnums, win, type_name, feature_groups=1, batch_groups=1):
    """out[b, o, p] = sum over window w and group features c of
    input[batch group + b, feature group + c, at p*stride + w*rhs_dilate - pad_low
    in the base-dilated input (zero where that falls between or outside
    elements)] * kernel[o, c, w, or reversed w]. Exact for integers (Python ints
    wrapped once), float64/complex128 for floats."""
    t = PrimitiveType.from_text(type_name)
    x = lhs.transpose((dnums.input_batch_dimension, dnums.input_feature_dimension)
                      + dnums.input_spatial_dimensions)
    k = rhs.transpose((dnums.kernel_output_feature_dimension,
                       dnums.kernel_input_feature_dimension) + dnums.kernel_spatial_dimensions)
    exact = object if (t.is_integral or t.is_pred) else (
        np.complex128 if t.is_complex else np.float64)
    x, k = x.astype(exact), k.astype(exact)
    out_features, group_features = k.shape[:2]
    group_batch = x.shape[0] // batch_groups
    group_out = out_features // (feature_groups * batch_groups)
    spatial = [output_size(s, d) for s, d in zip(x.shape[2:], win.dimensions)]
    out = np.zeros((group_batch, out_features, *spatial), dtype=exact)
    for b, o, *p in np.ndindex(*out.shape):
        group = o // group_out
        batch = (group if batch_groups > 1 else 0) * group_batch + b
        first_feature = (group if feature_groups > 1 else 0) * group_features
        total = 0
        for w in np.ndindex(*k.shape[2:]):
            where, kernel_at = [], []
            for i, d in enumerate(win.dimensions):
                q = p[i] * d.stride + w[i] * d.window_dilation - d.padding_low
                if q < 0 or q % d.base_dilation or q // d.base_dilation >= x.shape[2 + i]:
                    break
                where.append(q // d.base_dilation)
                kernel_at.append(d.size - 1 - w[i] if d.window_reversal else w[i])
            else:
                for c in range(group_features):
                    total += x[(batch, first_feature + c, *where)] * k[(o, c, *kernel_at)]
        out[(b, o, *p)] = total
    order = ((dnums.output_batch_dimension, dnums.output_feature_dimension)
             + dnums.output_spatial_dimensions)
    out = out.transpose(np.argsort(order))
    if t.is_pred:
        return out != 0
    if t.is_integral:
        bits = t.bit_width
        wrapped = [int(v) % 2**bits for v in out.ravel()]
        if t.is_signed_int:
            wrapped = [v - 2**bits if v >= 2 ** (bits - 1) else v for v in wrapped]
        return np.array(wrapped, dtype=t.numpy).reshape(out.shape)
    return out.astype(t.numpy)


def convolve(lhs, rhs, dnums, win, type_name, out_dims, **groups):
    return run_op("convolution", Shape.array(type_name, out_dims), lhs, rhs, window=win,
                  dim_labels=dnums, **groups)


def check(lhs, rhs, dnums, win, type_name, feature_groups=1, batch_groups=1):
    want = reference(lhs, rhs, dnums, win, type_name, feature_groups, batch_groups)
    got = convolve(lhs, rhs, dnums, win, type_name, want.shape,
                   feature_group_count=feature_groups, batch_group_count=batch_groups)
    assert got.dtype == want.dtype and got.shape == want.shape
    if type_name in TOLERANCE:
        tol = TOLERANCE[type_name]
        np.testing.assert_allclose(got.astype(np.complex128), want.astype(np.complex128),
                                   rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)
    return got


# -- random problems against the reference --------------------------------------------
def random_problem(seed: int):
    """Any number of spatial dims, shuffled dim_labels, strides, padding (negative
    too), both dilations, reversal, and feature or batch groups."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 4))
    feature_groups = batch_groups = 1
    if seed % 3 == 1:
        feature_groups = int(rng.integers(2, 4))
    elif seed % 3 == 2:
        batch_groups = int(rng.integers(2, 4))
    batch = int(rng.integers(1, 3)) * batch_groups
    group_features = int(rng.integers(1, 3))
    out_features = int(rng.integers(1, 3)) * feature_groups * batch_groups
    sizes = [int(rng.integers(1, 5)) for _ in range(n)]
    dims = []
    for _ in sizes:
        k = int(rng.integers(1, 4))
        dims.append(WindowDimension(k, int(rng.integers(1, 3)), int(rng.integers(-1, 3)),
                                    int(rng.integers(-1, 3)), int(rng.integers(1, 3)),
                                    int(rng.integers(1, 3)), bool(rng.integers(0, 2))))
    spatial = "".join(str(i) for i in range(n))
    lhs_labels = "".join(rng.permutation(list("bf" + spatial)))
    rhs_labels = "".join(rng.permutation(list("io" + spatial)))
    out_labels = "".join(rng.permutation(list("bf" + spatial)))
    dnums = labels(f"{lhs_labels}_{rhs_labels}->{out_labels}")
    lhs_shape = [0] * (n + 2)
    for dim, size in zip((dnums.input_batch_dimension, dnums.input_feature_dimension,
                          *dnums.input_spatial_dimensions),
                         [batch, group_features * feature_groups] + sizes):
        lhs_shape[dim] = size
    rhs_shape = [0] * (n + 2)
    for dim, size in zip((dnums.kernel_output_feature_dimension,
                          dnums.kernel_input_feature_dimension, *dnums.kernel_spatial_dimensions),
                         [out_features, group_features] + [d.size for d in dims]):
        rhs_shape[dim] = size
    return lhs_shape, rhs_shape, dnums, Window(tuple(dims)), feature_groups, batch_groups


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("type_name", ["f64", "s32"])
def test_random_convolutions_match_the_definition(seed, type_name):
    lhs_shape, rhs_shape, dnums, win, fg, bg = random_problem(seed)
    rng = np.random.default_rng(seed + 100)
    check(sample(type_name, lhs_shape, rng), sample(type_name, rhs_shape, rng), dnums, win,
          type_name, fg, bg)


@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_every_dtype(type_name):
    rng = np.random.default_rng(3)
    lhs, rhs = sample(type_name, (2, 5, 4, 3), rng), sample(type_name, (3, 2, 3, 2), rng)
    win = window((3, 2, 1, 0, 1, 1), (2, 1, 0, 1, 2, 1))
    check(lhs, rhs, labels("b01f_01io->b01f"), win, type_name)


@pytest.mark.parametrize("type_name", ["s8", "u16", "f16", "bf16", "c64"])
def test_every_dtype_with_dilation_and_groups(type_name):
    rng = np.random.default_rng(4)
    lhs, rhs = sample(type_name, (2, 4, 3, 4), rng), sample(type_name, (4, 2, 2, 2), rng)
    win = window((2, 1, 1, 1, 1, 2), (2, 2, 0, 0, 1, 1, True))
    check(lhs, rhs, labels("bf01_oi01->bf01"), win, type_name, feature_groups=2)


# -- the layouts JAX uses, against plain NumPy ----------------------------------------
def numpy_nhwc_valid(x, w, stride=(1, 1)):
    """y[n, i, j, o] = sum_{di, dj, c} x[n, i*s + di, j*s + dj, c] w[di, dj, c, o]."""
    kh, kw = w.shape[:2]
    oh = (x.shape[1] - kh) // stride[0] + 1
    ow = (x.shape[2] - kw) // stride[1] + 1
    y = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for di in range(kh):
        for dj in range(kw):
            patch = x[:, di:di + stride[0] * (oh - 1) + 1:stride[0],
                      dj:dj + stride[1] * (ow - 1) + 1:stride[1], :]
            y += np.einsum("nhwc,co->nhwo", patch, w[di, dj])
    return y


def test_nhwc_hwio_matches_numpy():
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((2, 7, 6, 3)), rng.standard_normal((3, 2, 3, 4))
    want = numpy_nhwc_valid(x, w, (2, 1))
    got = convolve(x, w, labels("b01f_01io->b01f"), window((3, 2), (2, 1)), "f64", want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_nchw_oihw_matches_numpy_with_same_padding():
    rng = np.random.default_rng(6)
    x, w = rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((4, 3, 3, 3))
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = numpy_nhwc_valid(padded.transpose(0, 2, 3, 1),
                            w.transpose(2, 3, 1, 0)).transpose(0, 3, 1, 2)
    got = convolve(x, w, labels("bf01_oi01->bf01"),
                   window((3, 1, 1, 1), (3, 1, 1, 1)), "f64", want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_one_and_three_spatial_dims():
    rng = np.random.default_rng(7)
    check(rng.standard_normal((2, 9, 3)), rng.standard_normal((4, 3, 2)),
          labels("b0f_0io->b0f"), window((4, 2, 1, 2, 1, 1)), "f64")
    check(rng.standard_normal((1, 2, 4, 3, 5)), rng.standard_normal((3, 2, 2, 2, 3)),
          labels("bf012_oi012->bf012"), window(2, (2, 1, 1, 0), (3, 2, 0, 1, 2)), "f64")


# -- hand-computed edge cases (1-D, one feature: "b0f_0io->b0f") ----------------------
def conv1d(x, k, dim: tuple, out_len: int):
    x = np.array(x, np.float32).reshape(1, -1, 1)
    k = np.array(k, np.float32).reshape(-1, 1, 1)
    got = convolve(x, k, labels("b0f_0io->b0f"), window(dim), "f32", (1, out_len, 1))
    return got.ravel().tolist()


def test_hand_computed_one_dimensional_cases():
    assert conv1d([1, 2, 3], [1, 2], (2,), 2) == [5, 8]
    assert conv1d([1, 2, 3, 4, 5], [1], (1, 2), 3) == [1, 3, 5]                  # stride
    assert conv1d([1, 2, 3], [1, 1], (2, 1, 1, 1), 4) == [1, 3, 5, 3]             # padding
    assert conv1d([1, 2, 3, 4, 5], [1], (1, 1, -1, -1), 3) == [2, 3, 4]           # crop
    assert conv1d([1, 2, 3], [1, 1], (2, 1, 0, 0, 1, 2), 4) == [1, 2, 2, 3]       # lhs_dilate
    assert conv1d([1, 2, 3, 4], [1, 1], (2, 1, 0, 0, 2), 2) == [4, 6]             # rhs_dilate
    assert conv1d([1, 2, 3], [1, 2], (2, 1, 0, 0, 1, 1, True), 2) == [4, 7]       # reversal
    assert conv1d([1, 2], [1, 1, 1], (3,), 0) == []                               # no room


def test_transposed_convolution_is_lhs_dilation_with_full_padding():
    """Stride-2 transposed conv of [1, 2] with kernel [1, 10, 100]: each input
    scatters a scaled copy of the (reversed) kernel at twice its position."""
    assert conv1d([1, 2], [100, 10, 1], (3, 1, 2, 2, 1, 2), 5) == [1, 10, 102, 20, 200]


def test_depthwise_convolution():
    """feature_group_count = input features: each output feature c*2+m sees only
    input feature c."""
    rng = np.random.default_rng(8)
    x, w = rng.standard_normal((2, 6, 5, 3)), rng.standard_normal((3, 2, 1, 6))
    got = convolve(x, w, labels("b01f_01io->b01f"), window(3, 2), "f64", (2, 4, 4, 6),
                   feature_group_count=3)
    for o in range(6):
        one = numpy_nhwc_valid(x[..., o // 2:o // 2 + 1], w[..., o:o + 1])
        np.testing.assert_allclose(got[..., o:o + 1], one, rtol=1e-12)


def test_batch_group_count_splits_batch_group_major():
    """batch_group_count=2 over batch 4: output feature 0 uses batches 0-1 and
    output feature 1 batches 2-3 (with one feature and a 1x1 window, just scaling)."""
    x = np.arange(1, 5, dtype=np.float64).reshape(4, 1, 1)
    k = np.array([10.0, 100.0]).reshape(1, 1, 2)
    got = convolve(x, k, labels("b0f_0io->b0f"), window(1), "f64", (2, 1, 2),
                   batch_group_count=2)
    np.testing.assert_array_equal(got[:, 0, :], [[10, 300], [20, 400]])


def test_pred_convolution_is_or_of_ands():
    x = np.array([True, False, False, True]).reshape(1, 4, 1)
    k = np.array([True, True]).reshape(2, 1, 1)
    got = convolve(x, k, labels("b0f_0io->b0f"), window(2), "pred", (1, 3, 1))
    assert got.ravel().tolist() == [True, False, True]


def test_integer_convolution_wraps():
    x = np.array([100, 100], np.int8).reshape(1, 2, 1)
    k = np.array([1, 2], np.int8).reshape(2, 1, 1)
    assert convolve(x, k, labels("b0f_0io->b0f"), window(2), "s8", (1, 1, 1)).item() == 44


def test_mixed_precision_result():
    x = np.array([100, 100], np.int8).reshape(1, 2, 1)
    k = np.array([1, 2], np.int8).reshape(2, 1, 1)
    assert convolve(x, k, labels("b0f_0io->b0f"), window(2), "s32", (1, 1, 1)).item() == 300


def test_missing_window_means_unit_window():
    rng = np.random.default_rng(9)
    x, w = rng.standard_normal((1, 4, 4, 2)), rng.standard_normal((2, 2, 2, 3))
    got = run_op("convolution", Shape.array("f64", (1, 3, 3, 3)), x, w,
                 dim_labels=labels("b01f_01io->b01f"))
    np.testing.assert_allclose(got, numpy_nhwc_valid(x, w), rtol=1e-12)


def test_no_spatial_dims_is_a_matmul():
    x, w = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    got = run_op("convolution", Shape.array("f64", (2, 4)), x, w, dim_labels=labels("bf_io->bf"))
    np.testing.assert_array_equal(got, x @ w)


# -- the gradient convolutions JAX emits ----------------------------------------------
# jax.grad of conv_general_dilated(x, w, strides=(2, 1), padding=((1, 2), (0, 1)),
# rhs_dilation=(1, 2), ('NHWC', 'HWIO', 'NHWC'), feature_group_count=2), with
# x: f32[2,6,5,4] and w: f32[3,2,2,6], lowers to these convolutions.
FORWARD = (labels("b01f_01io->b01f"), window((3, 2, 1, 2, 1), (2, 1, 0, 1, 2)), 2, 1)
INPUT_GRAD = (labels("b01f_01oi->b01f"), window((3, 1, 1, 0, 1, 2), (2, 1, 2, 1, 2, 1)), 2, 1)
KERNEL_GRAD = (labels("f01b_i01o->01bf"), window((4, 1, 1, 2, 2), (4, 2, 0, 1, 1)), 1, 2)


def run_conv(lhs, rhs, spec, out_dims):
    dnums, win, fg, bg = spec
    return convolve(lhs, rhs, dnums, win, "f64", out_dims, feature_group_count=fg,
                    batch_group_count=bg)


def test_gradient_convolutions_are_adjoints_of_the_forward_one():
    """<conv(x, w), g> = <x, input_grad(g, w)> = <w, kernel_grad(x, g)> for all x, w, g."""
    rng = np.random.default_rng(10)
    x, w = rng.standard_normal((2, 6, 5, 4)), rng.standard_normal((3, 2, 2, 6))
    y = run_conv(x, w, FORWARD, (2, 4, 4, 6))
    check(x, w, FORWARD[0], FORWARD[1], "f64", feature_groups=2)
    g = rng.standard_normal(y.shape)
    # JAX regroups the kernel [h, w, i, (group, o)] -> [h, w, (group, i), o] and flips it.
    regrouped = w.reshape(3, 2, 2, 2, 3).transpose(0, 1, 3, 2, 4).reshape(3, 2, 4, 3)
    dx = run_conv(g, regrouped[::-1, ::-1], INPUT_GRAD, x.shape)
    dw = run_conv(x, g, KERNEL_GRAD, w.shape)
    inner = np.sum(y * g)
    np.testing.assert_allclose(np.sum(x * dx), inner, rtol=1e-10)
    np.testing.assert_allclose(np.sum(w * dw), inner, rtol=1e-10)


def test_gradient_convolutions_match_the_definition():
    rng = np.random.default_rng(11)
    x, g = rng.standard_normal((2, 6, 5, 4)), rng.standard_normal((2, 4, 4, 6))
    w = rng.standard_normal((3, 2, 4, 3))
    check(g, w, INPUT_GRAD[0], INPUT_GRAD[1], "f64", feature_groups=2)
    check(x, g, KERNEL_GRAD[0], KERNEL_GRAD[1], "f64", batch_groups=2)


# -- errors ---------------------------------------------------------------------------
def test_window_that_does_not_match_the_kernel_raises():
    x, k = np.zeros((1, 4, 1)), np.zeros((2, 1, 1))
    with pytest.raises(ExecutionError, match="window sizes"):
        convolve(x, k, labels("b0f_0io->b0f"), window(3), "f64", (1, 2, 1))


def test_both_group_counts_raise():
    x, k = np.zeros((2, 4, 2)), np.zeros((1, 1, 4))
    with pytest.raises(ExecutionError, match="cannot both"):
        convolve(x, k, labels("b0f_0io->b0f"), window(1), "f64", (1, 4, 4),
                 feature_group_count=2, batch_group_count=2)


def test_wrong_result_shape_raises():
    x, k = np.zeros((1, 4, 1)), np.zeros((2, 1, 1))
    with pytest.raises(ExecutionError, match="convolution computes"):
        convolve(x, k, labels("b0f_0io->b0f"), window(2), "f64", (1, 5, 1))


# -- against XLA itself, where jax is installed -------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_against_jax_when_installed(seed):
    jax = pytest.importorskip("jax")
    lhs_shape, rhs_shape, dnums, win, fg, bg = random_problem(seed)
    if any(d.window_reversal for d in win.dimensions):
        win = Window(tuple(WindowDimension(d.size, d.stride, d.padding_low, d.padding_high,
                                           d.window_dilation, d.base_dilation)
                           for d in win.dimensions))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(lhs_shape).astype(np.float32)
    w = rng.standard_normal(rhs_shape).astype(np.float32)
    spec = jax.lax.ConvDimensionNumbers(
        (dnums.input_batch_dimension, dnums.input_feature_dimension,
         *dnums.input_spatial_dimensions),
        (dnums.kernel_output_feature_dimension, dnums.kernel_input_feature_dimension,
         *dnums.kernel_spatial_dimensions),
        (dnums.output_batch_dimension, dnums.output_feature_dimension,
         *dnums.output_spatial_dimensions))
    d = win.dimensions
    try:
        want = np.asarray(jax.lax.conv_general_dilated(
            x, w, [e.stride for e in d], [(e.padding_low, e.padding_high) for e in d],
            [e.base_dilation for e in d], [e.window_dilation for e in d], spec, fg, bg))
    except (ValueError, TypeError) as e:  # JAX rejects some crops XLA accepts
        pytest.skip(f"jax rejects this problem: {e}")
    got = convolve(x, w, dnums, win, "f32", want.shape, feature_group_count=fg,
                   batch_group_count=bg)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_jax_gradient_module_text_runs():
    """The module JAX prints for the gradients above, through parser and verifier."""
    module = parse(JAX_GRADIENT_HLO)
    verify(module)
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 6, 5, 4)).astype(np.float32)
    w = rng.standard_normal((3, 2, 2, 6)).astype(np.float32)
    dx, dw = Evaluator().call(module.entry_computation, [x, w])
    g = np.ones((2, 4, 4, 6))
    regrouped = w.reshape(3, 2, 2, 2, 3).transpose(0, 1, 3, 2, 4).reshape(3, 2, 4, 3)
    np.testing.assert_allclose(dx, run_conv(g, regrouped[::-1, ::-1], INPUT_GRAD, x.shape),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dw, run_conv(x, g, KERNEL_GRAD, w.shape), rtol=1e-5, atol=1e-5)


JAX_GRADIENT_HLO = """HloModule jit_f, entry_computation_layout={(f32[2,6,5,4]{3,2,1,0}, f32[3,2,2,6]{3,2,1,0})->(f32[2,6,5,4]{3,2,1,0}, f32[3,2,2,6]{3,2,1,0})}

ENTRY main.1 {
  constant.1 = f32[] constant(1)
  broadcast_in_dim.1 = f32[2,4,4,6]{3,2,1,0} broadcast(constant.1), dimensions={}
  w.1 = f32[3,2,2,6]{3,2,1,0} parameter(1)
  reshape.3 = f32[3,2,2,2,3]{4,3,2,1,0} reshape(w.1)
  reshape.4 = f32[3,2,2,2,3]{4,2,3,1,0} transpose(reshape.3), dimensions={0,1,3,2,4}
  reshape.5 = f32[3,2,4,3]{3,2,1,0} reshape(reshape.4)
  rev.1 = f32[3,2,4,3]{3,2,1,0} reverse(reshape.5), dimensions={0,1}
  conv_general_dilated.3 = f32[2,6,5,4]{3,2,1,0} convolution(broadcast_in_dim.1, rev.1), window={size=3x2 pad=1_0x2_1 lhs_dilate=2x1 rhs_dilate=1x2}, dim_labels=b01f_01oi->b01f, feature_group_count=2
  x.1 = f32[2,6,5,4]{3,2,1,0} parameter(0)
  conv_general_dilated.2 = f32[3,2,2,6]{3,2,1,0} convolution(x.1, broadcast_in_dim.1), window={size=4x4 stride=1x2 pad=1_2x0_1 rhs_dilate=2x1}, dim_labels=f01b_i01o->01bf, batch_group_count=2
  ROOT tuple.1 = (f32[2,6,5,4]{3,2,1,0}, f32[3,2,2,6]{3,2,1,0}) tuple(conv_general_dilated.3, conv_general_dilated.2)
}
"""
