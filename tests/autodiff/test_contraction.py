"""Derivatives of dot and convolution: finite differences and the dot-product
test (check_grads) over drawn dimension numbers, strides, paddings, dilations
and groupings, eager and under jit; small sizes, as it runs in the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlapy
from tests.autodiff.check import check_grads
from xlapy import lax
from xlapy.autodiff.rules import JVP, VJP
from xlapy.autodiff.rules.nondifferentiable import UNSUPPORTED
from xlapy.core.trace import as_array, bind
from xlapy.errors import CompileError
from xlapy.hlo.attributes import ConvolutionDimensionNumbers, Window, WindowDimension
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import PrimitiveType, Shape


def _values(seed: int, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


# -- dot ---------------------------------------------------------------------------------
@st.composite
def dot_problems(draw):
    """Shapes and dimension numbers with batch/contracting/free dims in any positions."""
    nb = draw(st.integers(0, 2))
    nc = draw(st.integers(0, 2))
    nl = draw(st.integers(0, 2))
    nr = draw(st.integers(0, 2))
    size = st.integers(1, 3)
    batch = [draw(size) for _ in range(nb)]
    contract = [draw(size) for _ in range(nc)]
    lfree = [draw(size) for _ in range(nl)]
    rfree = [draw(size) for _ in range(nr)]
    # roles: ("b", i), ("c", i), ("f", i); positions drawn as permutations
    lroles = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + \
        [("f", i) for i in range(nl)]
    rroles = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + \
        [("f", i) for i in range(nr)]
    lperm = draw(st.permutations(range(len(lroles))))
    rperm = draw(st.permutations(range(len(rroles))))
    lpos = {lroles[j]: p for p, j in enumerate(lperm)}
    rpos = {rroles[j]: p for p, j in enumerate(rperm)}
    sizes = {"b": batch, "c": contract}
    lshape = [0] * len(lroles)
    for (kind, i), p in lpos.items():
        lshape[p] = (sizes | {"f": lfree})[kind][i]
    rshape = [0] * len(rroles)
    for (kind, i), p in rpos.items():
        rshape[p] = (sizes | {"f": rfree})[kind][i]
    dims = (([lpos["c", i] for i in range(nc)], [rpos["c", i] for i in range(nc)]),
            ([lpos["b", i] for i in range(nb)], [rpos["b", i] for i in range(nb)]))
    return tuple(lshape), tuple(rshape), dims


@given(dot_problems(), st.integers(0, 2**16))
@settings(max_examples=30)
def test_dot_general_any_dimension_numbers(problem, seed):
    lshape, rshape, dims = problem
    a, b = _values(seed, lshape, rshape)
    check_grads(lambda x, y: lax.dot_general(x, y, dims), [a, b])


@pytest.mark.parametrize("lshape,rshape,dims", [
    ((3,), (3,), (((0,), (0,)), ((), ()))),                     # inner product
    ((2,), (3,), (((), ()), ((), ()))),                         # outer product
    ((2, 3), (3, 4), (((1,), (0,)), ((), ()))),                 # matmul
    ((3, 2), (4, 3), (((0,), (1,)), ((), ()))),                 # transposed both
    ((2, 3, 4), (4, 2, 3), (((1, 2), (2, 0)), ((0,), (1,)))),   # batch in odd positions
    ((3, 2, 4, 2), (2, 4, 3, 2), (((2,), (1,)), ((1, 3), (3, 0)))),
    ((4, 2, 3), (3, 4, 2), (((2, 0), (0, 1)), ((1,), (2,)))),   # multiple contracting
])
def test_dot_general_fixed(lshape, rshape, dims):
    a, b = _values(1, lshape, rshape)
    check_grads(lambda x, y: lax.dot_general(x, y, dims), [a, b])


def test_dot_one_operand_and_shared():
    a, b = _values(2, (3, 4), (4, 2))
    check_grads(lambda x: lax.dot(x, b), [a])
    check_grads(lambda y: lax.dot(a, y), [b])
    sq = _values(3, (3, 3))[0]
    check_grads(lambda x: lax.dot(x, x), [sq])   # both operands one value


def test_dot_keeps_precision():
    a, b = _values(4, (2, 3), (3, 4))

    def f(x, y):
        return lax.dot_general(x, y, (((1,), (0,)), ((), ())), precision="highest")

    check_grads(f, [a, b])

    def pullback(x, y, ct):
        return xlapy.vjp(f, x, y)[1](ct)

    text = xlapy.jit(pullback).lower(a, b, np.ones((2, 4))).as_text()
    dots = [line for line in text.splitlines() if " dot(" in line]
    assert len(dots) == 3 and all("operand_precision={highest,highest}" in d for d in dots)


def test_dot_preferred_element_type():
    a, b = (v.astype(np.float32) for v in _values(5, (2, 3), (3, 2)))

    def f(x, y):
        return lax.dot_general(x, y, (((1,), (0,)), ((), ())),
                               preferred_element_type=np.float64)

    out, pullback = xlapy.vjp(f, a, b)
    assert np.asarray(out).dtype == np.float64
    ga, gb = pullback(np.ones((2, 2)))
    assert np.asarray(ga).dtype == np.float32 and np.asarray(gb).dtype == np.float32
    np.testing.assert_allclose(ga, np.ones((2, 2)) @ b.T, rtol=1e-6)
    np.testing.assert_allclose(gb, a.T @ np.ones((2, 2)), rtol=1e-6)


# -- convolution -------------------------------------------------------------------------
def _conv(lhs_shape, rhs_shape, *, strides=None, padding="VALID", lhs_dilation=None,
          rhs_dilation=None, dn=None, fgc=1, bgc=1, seed=0, **kw):
    x, w = _values(seed, lhs_shape, rhs_shape)
    n = len(lhs_shape) - 2
    strides = strides or (1,) * n

    def f(a, b):
        return lax.conv_general_dilated(a, b, strides, padding, lhs_dilation, rhs_dilation,
                                        dn, feature_group_count=fgc, batch_group_count=bgc)

    check_grads(f, [x, w], **kw)


@pytest.mark.parametrize("case", [
    dict(lhs_shape=(2, 1, 5), rhs_shape=(2, 1, 3)),                                  # 1D
    dict(lhs_shape=(1, 2, 7), rhs_shape=(3, 2, 2), strides=(2,), padding=[(1, 2)]),
    dict(lhs_shape=(1, 1, 6), rhs_shape=(1, 1, 2), padding=[(-1, -2)]),             # negative
    dict(lhs_shape=(1, 2, 4), rhs_shape=(2, 2, 3), lhs_dilation=(2,), padding=[(2, 1)]),
    dict(lhs_shape=(1, 1, 8), rhs_shape=(1, 1, 3), rhs_dilation=(2,), strides=(3,)),
    dict(lhs_shape=(1, 2, 4, 4), rhs_shape=(3, 2, 2, 2), padding="SAME"),          # NCHW/OIHW
    dict(lhs_shape=(2, 5, 4, 2), rhs_shape=(3, 2, 2, 3), strides=(2, 1),
         padding=[(1, 0), (0, -1)], dn=("NHWC", "HWIO", "NHWC")),                    # NHWC/HWIO
    dict(lhs_shape=(1, 4, 5, 3), rhs_shape=(2, 2, 3, 2), rhs_dilation=(1, 2),
         lhs_dilation=(2, 1), padding=[(0, 1), (1, 1)], dn=("NHWC", "HWIO", "NCHW")),
    dict(lhs_shape=(1, 4, 3, 3), rhs_shape=(4, 1, 2, 2), fgc=4, padding="SAME"),    # depthwise
    dict(lhs_shape=(1, 2, 4, 4), rhs_shape=(6, 1, 3, 3), fgc=2, strides=(2, 2),
         padding=[(1, 1), (1, 1)]),                                                  # multiplier
    dict(lhs_shape=(3, 5, 4), rhs_shape=(2, 2, 6), fgc=2, dn=("NWC", "WIO", "NWC"),
         strides=(2,)),
    dict(lhs_shape=(4, 2, 5), rhs_shape=(6, 2, 2), bgc=2),                          # batch groups
    dict(lhs_shape=(4, 3, 3, 1), rhs_shape=(2, 2, 1, 4), bgc=4, strides=(1, 2),
         padding=[(1, 0), (0, 1)], dn=("NHWC", "HWIO", "NHWC")),
    dict(lhs_shape=(1, 1, 3, 4, 3), rhs_shape=(2, 1, 2, 2, 2), strides=(1, 2, 1),
         padding=[(0, 1), (1, 0), (0, 0)], rhs_dilation=(1, 1, 2)),                  # 3D
    dict(lhs_shape=(3, 4), rhs_shape=(2, 4)),                                        # 0 spatial
])
def test_conv_fixed(case):
    _conv(**case)


_LAYOUTS = {1: [("NCH", "OIH", "NCH"), ("NHC", "HIO", "NHC"), ("HNC", "IHO", "CHN")],
            2: [("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"), ("CWNH", "WOHI", "HNWC")]}


@st.composite
def conv_problems(draw):
    n = draw(st.integers(1, 2))
    layout = draw(st.sampled_from(_LAYOUTS[n]))
    grouping = draw(st.sampled_from(["none", "feature", "batch"]))
    groups = 1 if grouping == "none" else draw(st.integers(2, 3))
    batch = draw(st.integers(1, 2)) * (groups if grouping == "batch" else 1)
    in_per_group = draw(st.integers(1, 2))
    features = in_per_group * (groups if grouping == "feature" else 1)
    out_features = draw(st.integers(1, 2)) * groups
    kernel = [draw(st.integers(1, 3)) for _ in range(n)]
    strides = [draw(st.integers(1, 3)) for _ in range(n)]
    lhs_dil = [draw(st.integers(1, 2)) for _ in range(n)]
    rhs_dil = [draw(st.integers(1, 2)) for _ in range(n)]
    pads, spatial = [], []
    for k, rd, ld in zip(kernel, rhs_dil, lhs_dil):
        lo, hi = draw(st.integers(-1, 2)), draw(st.integers(-1, 2))
        extent = (k - 1) * rd + 1
        # the smallest input whose dilated, padded size still fits one window
        need = max(1, -(-(extent - lo - hi - 1) // ld) + 1)
        spatial.append(draw(st.integers(need, need + 3)))
        pads.append((lo, hi))
    roles = {"N": batch, "C": features, "O": out_features,
             "I": in_per_group if grouping == "feature" else features}
    for c, size in zip("HW", spatial):
        roles[c] = size
    kroles = dict(roles)
    for c, size in zip("HW", kernel):
        kroles[c] = size
    lhs_shape = tuple(roles[c] for c in layout[0])
    rhs_shape = tuple(kroles[c] for c in layout[1])
    fgc = groups if grouping == "feature" else 1
    bgc = groups if grouping == "batch" else 1
    return dict(lhs_shape=lhs_shape, rhs_shape=rhs_shape, strides=tuple(strides),
                padding=pads, lhs_dilation=tuple(lhs_dil), rhs_dilation=tuple(rhs_dil),
                dn=layout, fgc=fgc, bgc=bgc)


@given(conv_problems(), st.integers(0, 2**16))
@settings(max_examples=30)
def test_conv_drawn(case, seed):
    _conv(**case, seed=seed)


def test_conv_preferred_element_type():
    x, w = (v.astype(np.float32) for v in _values(6, (1, 2, 5), (3, 2, 2)))

    def f(a, b):
        return lax.conv_general_dilated(a, b, (2,), [(1, 0)],
                                        preferred_element_type=np.float64)

    out, pullback = xlapy.vjp(f, x, w)
    ct = np.ones(np.shape(out))
    gx, gw = pullback(ct)
    ref = xlapy.vjp(f, x.astype(np.float64), w.astype(np.float64))[1](ct)
    assert np.asarray(gx).dtype == np.float32 and np.asarray(gw).dtype == np.float32
    np.testing.assert_allclose(gx, ref[0], rtol=1e-6)
    np.testing.assert_allclose(gw, ref[1], rtol=1e-6)


def test_conv_empty_batch():
    x, w = _values(9, (0, 2, 4), (3, 2, 2))
    f = lambda a, b: lax.conv_general_dilated(a, b, (1,), "VALID")  # noqa: E731
    gx, gw = xlapy.vjp(f, x, w)[1](np.ones((0, 3, 3)))
    assert np.shape(gx) == (0, 2, 4) and np.shape(gw) == (3, 2, 2)
    np.testing.assert_array_equal(gw, 0)


def test_conv_window_reversal():
    """A window that reverses the kernel (parsed HLO may have one; JAX never emits it)."""
    x, w = _values(7, (1, 1, 5), (1, 1, 3))
    dn = ConvolutionDimensionNumbers(0, 1, (2,), 1, 0, (2,), 0, 1, (2,))

    def f(a, b):
        window = Window((WindowDimension(size=3, padding_low=1, padding_high=0,
                                         window_reversal=True),))
        return bind(Opcode.CONVOLUTION, [as_array(a), as_array(b)],
                    {"window": window, "dim_labels": dn})

    def g(a, b):
        return lax.conv_general_dilated(a, lax.rev(b, (2,)), (1,), [(1, 0)])

    np.testing.assert_allclose(np.asarray(f(x, w)), np.asarray(g(x, w)), rtol=1e-12)
    check_grads(f, [x, w])


def test_ragged_and_scaled_dot_unsupported():
    assert Opcode.RAGGED_DOT in UNSUPPORTED and Opcode.SCALED_DOT in UNSUPPORTED
    assert Opcode.RAGGED_DOT not in VJP and Opcode.SCALED_DOT not in JVP
    x, w = _values(8, (8, 4), (2, 4, 5))
    sizes = np.array([3, 5], np.int32)
    shape = Shape.array(PrimitiveType.F64, (8, 5))

    def f(a):
        return bind(Opcode.RAGGED_DOT, [as_array(a), as_array(w), as_array(sizes)], {},
                    shape=shape)

    with pytest.raises(CompileError, match="ragged-dot"):
        xlapy.jit(lambda a: xlapy.vjp(f, a)[1](np.ones((8, 5)))).lower(x)
