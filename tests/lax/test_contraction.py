"""lax contractions: dot_general/dot/batch_matmul against np.einsum, and
conv_general_dilated/conv/conv_transpose against a direct sliding-window
convolution; eagerly and under jit, with dtypes, precision, preferred element
types and errors."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xlapy
from xlapy import lax
from xlapy.core.pytree import tree_leaves
from xlapy.hlo import parse
from xlapy.hlo.attributes import Precision
from xlapy.hlo.opcode import Opcode


def both(fn, *args):
    """fn eagerly and under jit; asserts they agree and returns the eager result."""
    eager = fn(*args)
    jitted = xlapy.jit(fn)(*args)
    for e, j in zip(tree_leaves(eager), tree_leaves(jitted), strict=True):
        assert e.dtype == j.dtype and e.shape == j.shape and e.weak_type == j.weak_type
        np.testing.assert_array_equal(np.asarray(e), np.asarray(j))
    return eager


def close(out, expected, dtype):
    assert out.dtype == np.dtype(dtype) and out.shape == expected.shape
    tol = {"f": 1e-5, "c": 1e-5}.get(np.dtype(dtype).kind, 0)
    if np.dtype(dtype) in (np.float16, ml_dtypes.bfloat16):
        tol = 2e-2
    np.testing.assert_allclose(np.asarray(out).astype(expected.dtype), expected, rtol=tol,
                               atol=tol)


def the_op(fn, *args, opcode):
    module = xlapy.jit(fn).lower(*args).module
    return [i for i in module.entry_computation.instructions if i.opcode is opcode][0]


def sample(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.integers(-4, 5, size=shape)
    if np.dtype(dtype).kind == "c":
        return (values + 1j * rng.integers(-4, 5, size=shape)).astype(dtype)
    if np.dtype(dtype).kind == "u":
        values = np.abs(values)
    return values.astype(dtype)


# -- dot_general -------------------------------------------------------------------------
DOT_CASES = [  # lhs shape, rhs shape, dimension numbers, einsum spec
    ((3, 4), (4, 5), (((1,), (0,)), ((), ())), "ij,jk->ik"),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,))), "bij,bjk->bik"),
    ((3, 2, 4), (4, 5, 2), (((2,), (0,)), ((1,), (2,))), "ibj,jkb->bik"),
    ((2, 3, 4), (4, 3, 5), (((1, 2), (1, 0)), ((), ())), "ijk,kjl->il"),
    ((3,), (4,), (((), ()), ((), ())), "i,j->ij"),
    ((4,), (4,), (((0,), (0,)), ((), ())), "i,i->"),
    ((2, 3, 4), (4, 2), (((-1,), (0,)), ((0,), (1,))), "bij,jb->bi"),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64, np.int8])
@pytest.mark.parametrize("lhs_shape,rhs_shape,dims,spec", DOT_CASES)
def test_dot_general_matches_einsum(dtype, lhs_shape, rhs_shape, dims, spec):
    lhs, rhs = sample(lhs_shape, dtype), sample(rhs_shape, dtype, 1)
    out = both(lambda a, b: lax.dot_general(a, b, dims), lhs, rhs)
    close(out, np.einsum(spec, lhs, rhs).astype(dtype), dtype)


@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 4), st.integers(1, 3))
def test_dot_general_batched_matmul_shapes(m, k, n, b):
    lhs, rhs = sample((b, m, k)), sample((b, k, n), seed=1)
    out = lax.dot_general(lhs, rhs, (((2,), (1,)), ((0,), (0,))))
    close(out, np.einsum("bij,bjk->bik", lhs, rhs), np.float32)


@pytest.mark.parametrize("lhs_dtype,rhs_dtype,out_dtype", [
    (np.int8, np.int8, np.int32), (ml_dtypes.bfloat16, ml_dtypes.bfloat16, np.float32),
    (np.float16, np.float16, np.float32), (np.int8, np.int8, np.float32)])
def test_dot_general_preferred_element_type_is_declared(lhs_dtype, rhs_dtype, out_dtype):
    lhs, rhs = sample((3, 4), lhs_dtype), sample((4, 2), rhs_dtype, 1)

    def f(a, b):
        return lax.dot(a, b, preferred_element_type=out_dtype)

    out = both(f, lhs, rhs)
    close(out, lhs.astype(np.float64) @ rhs.astype(np.float64), out_dtype)
    dot = the_op(f, lhs, rhs, opcode=Opcode.DOT)
    assert dot.shape.dtype == out_dtype and dot.operands[0].shape.dtype == lhs_dtype


@pytest.mark.parametrize("lhs_dtype,rhs_dtype,out_dtype", [
    (np.int32, np.float32, np.float32), (np.float16, ml_dtypes.bfloat16, ml_dtypes.bfloat16),
    (np.int8, np.uint8, np.int8), (np.float32, np.complex64, np.complex64)])
def test_dot_general_mixed_dtypes_follow_jax(lhs_dtype, rhs_dtype, out_dtype):
    lhs, rhs = sample((2, 3), lhs_dtype), sample((3,), rhs_dtype, 1)
    out = both(lambda a, b: lax.dot(a, b), lhs, rhs)
    close(out, lhs.astype(np.complex128) @ rhs.astype(np.complex128), out_dtype)


def test_dot_general_precision_becomes_operand_precision():
    a, b = sample((2, 3)), sample((3, 2), seed=1)
    dot = the_op(lambda a, b: lax.dot(a, b, precision=lax.Precision.HIGHEST), a, b,
                 opcode=Opcode.DOT)
    assert dot.attrs["operand_precision"] == (Precision.HIGHEST, Precision.HIGHEST)
    dot = the_op(lambda a, b: lax.dot(a, b, precision=("bfloat16", "float32")), a, b,
                 opcode=Opcode.DOT)
    assert dot.attrs["operand_precision"] == (Precision.DEFAULT, Precision.HIGHEST)
    assert "operand_precision" not in the_op(lambda a, b: lax.dot(a, b), a, b,
                                             opcode=Opcode.DOT).attrs
    with pytest.raises(ValueError, match="precision 'fast'"):
        lax.dot(a, b, precision="fast")


def test_dot_and_batch_matmul():
    v, m = sample((4,)), sample((3, 4), seed=1)
    close(both(lambda a, b: lax.dot(a, b), v, v), np.dot(v, v), np.float32)
    close(both(lambda a, b: lax.dot(a, b), m, v), m @ v, np.float32)
    close(both(lambda a, b: lax.dot(a, b), m, m.T.copy()), m @ m.T, np.float32)
    x, y = sample((2, 2, 3, 4)), sample((2, 2, 4, 5), seed=1)
    close(both(lambda a, b: lax.batch_matmul(a, b), x, y), x @ y, np.float32)
    w = sample((2, 3, 4))
    close(lax.dot(w, sample((4, 2)), dimension_numbers=(((2,), (0,)), ((), ()))),
          np.einsum("bij,jk->bik", w, sample((4, 2))), np.float32)


def test_dot_errors():
    a = sample((2, 3))
    with pytest.raises(TypeError, match=r"lax\.dot_general: .*contracting dimension"):
        lax.dot_general(a, a, (((1,), (0,)), ((), ())))
    with pytest.raises(TypeError, match="incompatible shapes for dot"):
        lax.dot(sample((2, 3, 4)), sample((4,)))
    with pytest.raises(TypeError, match="preferred_element_type int16 must not be narrower"):
        lax.dot(sample((2, 3), np.int32), sample((3,), np.int32), preferred_element_type=np.int16)
    with pytest.raises(TypeError, match="dimension_numbers must be"):
        lax.dot_general(a, a, ((1,), (0,)))
    with pytest.raises(TypeError, match="same rank"):
        lax.batch_matmul(sample((2, 3, 4)), sample((4, 5)))


# -- convolution -------------------------------------------------------------------------
def dilate(x, dilation):
    """Insert dilation - 1 zeros between the elements of each spatial dimension."""
    spatial = [(s - 1) * d + 1 if s else 0 for s, d in zip(x.shape[2:], dilation)]
    out = np.zeros(x.shape[:2] + tuple(spatial), x.dtype)
    out[(slice(None),) * 2 + tuple(slice(None, None, d) for d in dilation)] = x
    return out


def pad_spatial(x, pads):
    for axis, (lo, hi) in enumerate(pads, 2):
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths)
        index = [slice(None)] * x.ndim
        index[axis] = slice(max(-lo, 0), x.shape[axis] - max(-hi, 0))
        x = x[tuple(index)]
    return x


def conv_reference(x, k, strides, pads, lhs_dilation=None, rhs_dilation=None, groups=1,
                   batch_groups=1):
    """Direct convolution in NCHW/OIHW: every output is a sum over a window of the
    dilated, padded input times the dilated kernel."""
    n = x.ndim - 2
    x = pad_spatial(dilate(x, lhs_dilation or (1,) * n), pads)
    k = dilate(k, rhs_dilation or (1,) * n)
    windows = np.lib.stride_tricks.sliding_window_view(x, k.shape[2:], axis=tuple(range(2, x.ndim)))
    windows = windows[(slice(None),) * 2 + tuple(slice(None, None, s) for s in strides)]
    out_letters, win_letters = "xyz"[:n], "pqr"[:n]
    spec = f"nc{out_letters}{win_letters},oc{win_letters}->no{out_letters}"
    wide = np.complex128 if x.dtype.kind == "c" else np.float64
    g = max(groups, batch_groups)
    o = k.shape[0] // g
    parts = []
    for i in range(g):
        kernel = k[i * o:(i + 1) * o].astype(wide)
        if batch_groups > 1:
            b = x.shape[0] // g
            parts.append(np.einsum(spec, windows[i * b:(i + 1) * b].astype(wide), kernel))
        else:
            c = k.shape[1]
            parts.append(np.einsum(spec, windows[:, i * c:(i + 1) * c].astype(wide), kernel))
    return np.concatenate(parts, axis=1)


CONV_CASES = [  # lhs shape, rhs shape, keyword arguments of conv_general_dilated
    ((1, 2, 5, 6), (3, 2, 3, 3), dict(window_strides=(1, 1), padding="VALID")),
    ((2, 2, 7, 6), (3, 2, 3, 2), dict(window_strides=(2, 1), padding=((1, 0), (2, 1)),
                                      rhs_dilation=(1, 2))),
    ((1, 1, 4, 4), (2, 1, 2, 2), dict(window_strides=(1, 2), padding=((1, 1), (0, 1)),
                                      lhs_dilation=(2, 1))),
    ((1, 3, 8), (2, 3, 3), dict(window_strides=(3,), padding=((-1, 2),))),
    ((1, 2, 3, 4, 3), (2, 2, 2, 2, 1), dict(window_strides=(1, 1, 2), padding="VALID")),
    ((2, 4, 5, 5), (6, 2, 3, 3), dict(window_strides=(1, 1), padding="VALID",
                                      feature_group_count=2)),
    ((4, 3, 5, 5), (4, 3, 2, 2), dict(window_strides=(1, 1), padding="VALID",
                                      batch_group_count=2)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex64])
@pytest.mark.parametrize("lhs_shape,rhs_shape,kwargs", CONV_CASES)
def test_conv_general_dilated_matches_direct_convolution(dtype, lhs_shape, rhs_shape, kwargs):
    x, k = sample(lhs_shape, dtype), sample(rhs_shape, dtype, 1)
    out = both(lambda x, k: lax.conv_general_dilated(x, k, **kwargs), x, k)
    kw = dict(kwargs)
    pads = kw.pop("padding")
    if isinstance(pads, str):
        pads = [(0, 0)] * (x.ndim - 2)
    expected = conv_reference(x, k, kw.pop("window_strides"), pads, kw.get("lhs_dilation"),
                              kw.get("rhs_dilation"), kw.get("feature_group_count", 1),
                              kw.get("batch_group_count", 1))
    close(out, expected, dtype)


@pytest.mark.parametrize("padding", ["SAME", "SAME_LOWER", "VALID"])
@pytest.mark.parametrize("strides", [(1, 1), (2, 3)])
def test_conv_padding_strings(padding, strides):
    x, k = sample((1, 2, 7, 8)), sample((2, 2, 4, 3), seed=1)
    out = both(lambda x, k: lax.conv(x, k, strides, padding), x, k)
    pads = lax.padtype_to_pads((7, 8), (4, 3), strides, padding)
    close(out, conv_reference(x, k, strides, pads), np.float32)
    if padding != "VALID":
        assert out.shape[2:] == (-(-7 // strides[0]), -(-8 // strides[1]))


def test_padtype_to_pads_values():
    # Values from jax 0.10.2.
    assert lax.padtype_to_pads((5, 6, 7), (3, 2, 4), (2, 1, 3), "SAME") == [(1, 1), (0, 1), (1, 2)]
    assert lax.padtype_to_pads((5, 6, 7), (3, 2, 4), (2, 1, 3), "same_lower") == [
        (1, 1), (1, 0), (2, 1)]
    assert lax.padtype_to_pads((5,), (3,), (1,), lax.PaddingType.VALID) == [(0, 0)]
    with pytest.raises(RuntimeError, match="Unrecognized padding type"):
        lax.padtype_to_pads((5,), (3,), (1,), "FULL")


@pytest.mark.parametrize("specs", [("NHWC", "HWIO", "NHWC"), ("NCHW", "IOHW", "NHWC"),
                                   ("NWHC", "OIHW", "CNHW"), ("NCHW", "OIWH", "NCHW")])
def test_conv_string_dimension_numbers(specs):
    x, k = sample((1, 2, 6, 5)), sample((3, 2, 3, 2), seed=1)  # NCHW and OIHW
    expected = conv_reference(x, k, (2, 1), [(1, 1), (0, 1)], rhs_dilation=(1, 2))
    # Strides, padding and dilations follow the order of the rhs spec's spatial letters.
    swap = specs[1].index("W") < specs[1].index("H")
    strides, pads, dilation = (2, 1), [(1, 1), (0, 1)], (1, 2)
    if swap:
        strides, pads, dilation = strides[::-1], pads[::-1], dilation[::-1]

    def layout(a, spec, canonical):
        return np.transpose(a, [canonical.index(c) for c in spec])

    xs, ks = layout(x, specs[0], "NCHW"), layout(k, specs[1], "OIHW")
    out = both(lambda x, k: lax.conv_general_dilated(x, k, strides, pads, rhs_dilation=dilation,
                                                     dimension_numbers=specs), xs, ks)
    close(out, layout(expected, specs[2], "NCHW"), np.float32)


def test_conv_dimension_numbers_match_jax():
    # Values from jax 0.10.2.
    dn = lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    dn = lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), ("NCWH", "IOHW", "NHCW"))
    assert dn == lax.ConvDimensionNumbers((0, 1, 3, 2), (1, 0, 2, 3), (0, 2, 1, 3))
    assert lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), None) == ((0, 1, 2),) * 3


def test_conv_hlo_attributes():
    x, k = sample((1, 2, 5, 5)), sample((4, 1, 3, 3), seed=1)

    def f(x, k):
        return lax.conv_general_dilated(x, k, (2, 2), "SAME", rhs_dilation=(1, 2),
                                        dimension_numbers=("NCHW", "OIHW", "NHWC"),
                                        feature_group_count=2, precision="highest")

    conv = the_op(f, x, k, opcode=Opcode.CONVOLUTION)
    assert conv.attrs["dim_labels"].to_text() == "bf01_oi01->b01f"
    assert conv.attrs["window"].to_text() == "{size=3x3 stride=2x2 pad=1_1x2_2 rhs_dilate=1x2}"
    assert conv.attrs["feature_group_count"] == 2
    assert conv.attrs["operand_precision"] == (Precision.HIGHEST, Precision.HIGHEST)
    text = xlapy.jit(f).lower(x, k).as_text()
    assert [i.opcode for i in parse(text).entry_computation.instructions].count(
        Opcode.CONVOLUTION) == 1


@pytest.mark.parametrize("dtype,out_dtype", [(np.int8, np.int32), (np.float16, np.float32)])
def test_conv_preferred_element_type(dtype, out_dtype):
    x, k = sample((1, 2, 4, 4), dtype), sample((2, 2, 2, 2), dtype, 1)

    def f(x, k):
        return lax.conv(x, k, (1, 1), "VALID", preferred_element_type=out_dtype)

    close(both(f, x, k), conv_reference(x, k, (1, 1), [(0, 0)] * 2), out_dtype)
    assert the_op(f, x, k, opcode=Opcode.CONVOLUTION).shape.dtype == out_dtype


def test_conv_with_general_padding():
    x, k = sample((1, 1, 4, 5)), sample((1, 1, 2, 3), seed=1)
    out = both(lambda x, k: lax.conv_with_general_padding(x, k, (1, 2), ((1, 2), (0, 0)), (1, 2),
                                                          (2, 1)), x, k)
    close(out, conv_reference(x, k, (1, 2), [(1, 2), (0, 0)], (1, 2), (2, 1)), np.float32)


CONV_T_X = np.array([1.0, 2.0, 3.0], np.float32).reshape(1, 3, 1)
CONV_T_K = np.array([1.0, 10.0, 100.0], np.float32).reshape(3, 1, 1)


@pytest.mark.parametrize("padding,stride,expected", [  # values from jax 0.10.2
    ("SAME", 1, [210, 321, 32]), ("SAME", 2, [100, 10, 201, 20, 302, 30]),
    ("VALID", 1, [100, 210, 321, 32, 3]), ("VALID", 2, [100, 10, 201, 20, 302, 30, 3])])
def test_conv_transpose_1d(padding, stride, expected):
    out = both(lambda x, k: lax.conv_transpose(x, k, (stride,), padding), CONV_T_X, CONV_T_K)
    close(out, np.array(expected, np.float32).reshape(1, -1, 1), np.float32)


def test_conv_transpose_with_transposed_kernel():
    out = lax.conv_transpose(CONV_T_X, CONV_T_K, (2,), "VALID", transpose_kernel=True)
    close(out, np.array([1, 10, 102, 20, 203, 30, 300], np.float32).reshape(1, -1, 1), np.float32)


def test_conv_errors():
    x, k = sample((1, 2, 5, 5)), sample((3, 3, 2, 2))
    with pytest.raises(TypeError, match=r"lax\.conv_general_dilated: .*input features"):
        lax.conv(x, k, (1, 1), "VALID")
    with pytest.raises(ValueError, match="String padding is not implemented"):
        lax.conv_general_dilated(x, sample((3, 2, 2, 2)), (1, 1), "SAME", lhs_dilation=(2, 2))
    with pytest.raises(TypeError, match="must contain the characters 'N' and 'C'"):
        lax.conv_general_dilated(x, k, (1, 1), "VALID", dimension_numbers=("NHWX", "HWIO", "NHWC"))
    with pytest.raises(TypeError, match="window_strides .* one entry per spatial dimension"):
        lax.conv(x, sample((3, 2, 2, 2)), (1,), "VALID")
    with pytest.raises(TypeError, match="one dtype"):
        lax.conv(x, sample((3, 2, 2, 2), np.int32), (1, 1), "VALID")


def test_conv_transpose_against_jax():
    jax = pytest.importorskip("jax")
    x, k = sample((2, 5, 6, 3)), sample((3, 2, 3, 4), seed=1)  # NHWC, HWIO
    for padding in ("SAME", "VALID", ((1, 2), (0, 1))):
        for strides in ((1, 1), (2, 3)):
            for transpose_kernel in (False, True):
                kernel = k if not transpose_kernel else sample((3, 2, 4, 3), seed=1)
                ours = lax.conv_transpose(x, kernel, strides, padding, rhs_dilation=(1, 2),
                                          transpose_kernel=transpose_kernel)
                theirs = jax.lax.conv_transpose(x, kernel, strides, padding, rhs_dilation=(1, 2),
                                                transpose_kernel=transpose_kernel)
                np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5)


def test_lowered_contractions_verify_and_parse_back():
    from xlapy.hlo import verifier

    def f(a, b, x, k):
        d = lax.dot_general(a, b, (((1,), (0,)), ((), ())), precision="highest",
                            preferred_element_type=np.float64)
        c = lax.conv_general_dilated(x, k, (2, 1), "SAME", rhs_dilation=(1, 2),
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return d, c, lax.conv_transpose(x, k, (2, 2), "VALID")

    args = (sample((2, 3)), sample((3, 4), seed=1), sample((1, 5, 6, 2)), sample((3, 2, 2, 4)))
    lowered = xlapy.jit(f).lower(*args)
    verifier.verify(lowered.module)
    verifier.verify(parse(lowered.as_text()))
    for a, b in zip(tree_leaves(xlapy.jit(f)(*args)), tree_leaves(f(*args))):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
