"""Contractions: `dot` and `convolution`, bilinear in their two operands.

Forward mode is `bilinear_jvp` (the op with one operand replaced by its
tangent, summed). Reverse mode follows JAX's transpose rules
(jax/_src/lax/lax.py `_dot_general_transpose_lhs/rhs`,
jax/_src/lax/convolution.py `_conv_general_dilated_transpose_lhs/rhs`):

- dot: each operand's cotangent is a `dot` of the result's cotangent with the
  other operand (contracting what was free in the other operand, batching the
  batch dims), transposed back to the operand's dimension order.
- convolution wrt lhs: a convolution of the cotangent with the spatially
  reversed kernel, base-dilated by the forward strides and strided by the
  forward base dilation; feature (and batch) groups move into the kernel's
  input features.
- convolution wrt rhs: a convolution of lhs with the cotangent as the kernel,
  batch and feature roles swapped; forward feature groups become batch groups
  and forward batch groups feature groups.

`operand_precision` is kept as given (JAX passes `precision` unchanged). A
result declared wider than the operands (preferred_element_type) contracts
in the result's type and is converted back to the operand's.
"""

from __future__ import annotations

import numpy as np

from xlapy.autodiff.rules import jvp, vjp
from xlapy.autodiff.rules._util import bilinear_jvp, zeros_like
from xlapy.autodiff.rules.nondifferentiable import unsupported
from xlapy.core.trace import bind
from xlapy.hlo.attributes import ConvolutionDimensionNumbers, Window, WindowDimension
from xlapy.hlo.opcode import Opcode
from xlapy.lax import primitives as lax

Op = Opcode

unsupported("ragged-dot has no differentiation rule in xlapy yet (its group sizes make the "
            "transpose a ragged contraction of its own)", Op.RAGGED_DOT)
unsupported("scaled-dot has no differentiation rule in xlapy yet (the block scales are "
            "quantisation metadata)", Op.SCALED_DOT)


@jvp(Op.DOT, Op.CONVOLUTION)
def _contraction_jvp(node, tangents):
    return bilinear_jvp(node, tangents)


def _kept_attrs(node) -> dict:
    precision = node.attr("operand_precision")
    return {} if precision is None else {"operand_precision": precision}


def _in_dtype(a, b, dtype):
    """`a` and `b` in the cotangent's dtype (the result's, maybe wider than theirs)."""
    return tuple(x if x.dtype == dtype else lax.convert_element_type(x, dtype) for x in (a, b))


def _to(x, like):
    return x if x.dtype == like.dtype else lax.convert_element_type(x, like.dtype)


# -- dot -------------------------------------------------------------------------------
def _dot_dims(node):
    """((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)) as lists."""
    def get(name):
        return [int(d) for d in node.attr(name, ())]
    return ((get("lhs_contracting_dims"), get("rhs_contracting_dims")),
            (get("lhs_batch_dims"), get("rhs_batch_dims")))


def _remaining(ndim: int, *taken) -> list[int]:
    used = {d for dims in taken for d in dims}
    return [d for d in range(ndim) if d not in used]


def _dot(node, lhs, rhs, contracting, batch):
    attrs = {}
    if batch[0]:
        attrs["lhs_batch_dims"] = tuple(batch[0])
    attrs["lhs_contracting_dims"] = tuple(contracting[0])
    if batch[1]:
        attrs["rhs_batch_dims"] = tuple(batch[1])
    attrs["rhs_contracting_dims"] = tuple(contracting[1])
    attrs.update(_kept_attrs(node))
    return bind(Op.DOT, [lhs, rhs], attrs, weak_type=False, name="dot_general")


def _dot_transpose(node, ct, x, y, dims, swap_ans: bool):
    """The cotangent of `x` in dot(x, y) (or, with `swap_ans`, in dot(y, x), the
    result then holding y's free dims before x's)."""
    (x_contract, y_contract), (x_batch, y_batch) = dims
    x_kept = _remaining(x.ndim, x_contract, x_batch)
    y_kept = _remaining(y.ndim, y_contract, y_batch)
    nb = len(x_batch)
    ans_batch = list(range(nb))
    start = nb if swap_ans else nb + len(x_kept)
    ans_y = list(range(start, start + len(y_kept)))
    ct, y = _in_dtype(ct, y, ct.dtype)
    # result dims: batch, x's free dims (in x's order), y's contracting dims (in y's order)
    out = _dot(node, ct, y, (ans_y, y_kept), (ans_batch, y_batch))
    x_contract_by_y = [x_contract[i] for i in np.argsort(y_contract, kind="stable")]
    order = list(x_batch) + x_kept + x_contract_by_y
    out = lax.transpose(out, tuple(int(i) for i in np.argsort(order, kind="stable")))
    return _to(out, x)


@vjp(Op.DOT)
def _dot_vjp(node, ct):
    lhs, rhs = node.operands
    (lc, rc), (lb, rb) = _dot_dims(node)
    cts = [None, None]
    if node.active[0]:
        cts[0] = _dot_transpose(node, ct, lhs, rhs, ((lc, rc), (lb, rb)), swap_ans=False)
    if node.active[1]:
        cts[1] = _dot_transpose(node, ct, rhs, lhs, ((rc, lc), (rb, lb)), swap_ans=True)
    return cts


# -- convolution -----------------------------------------------------------------------
def _specs(dn: ConvolutionDimensionNumbers):
    """(lhs, rhs, out) specs as JAX's ConvDimensionNumbers: (batch, feature,
    spatial...), (out feature, in feature, spatial...), (batch, feature, spatial...)."""
    return ((dn.input_batch_dimension, dn.input_feature_dimension,
             *dn.input_spatial_dimensions),
            (dn.kernel_output_feature_dimension, dn.kernel_input_feature_dimension,
             *dn.kernel_spatial_dimensions),
            (dn.output_batch_dimension, dn.output_feature_dimension,
             *dn.output_spatial_dimensions))


def _labels(lhs, rhs, out) -> ConvolutionDimensionNumbers:
    return ConvolutionDimensionNumbers(
        input_batch_dimension=lhs[0], input_feature_dimension=lhs[1],
        input_spatial_dimensions=tuple(lhs[2:]),
        kernel_input_feature_dimension=rhs[1], kernel_output_feature_dimension=rhs[0],
        kernel_spatial_dimensions=tuple(rhs[2:]),
        output_batch_dimension=out[0], output_feature_dimension=out[1],
        output_spatial_dimensions=tuple(out[2:]))


def _transposed(spec):
    """Swap the first two roles (batch <-> feature, out <-> in feature)."""
    return (spec[1], spec[0], *spec[2:])


def _window_dims(node, rhs, rhs_spec):
    window = node.attr("window")
    dims = window.dimensions if window is not None else ()
    if not dims:
        dims = tuple(WindowDimension(rhs.shape[d]) for d in rhs_spec[2:])
    return dims


def _conv(node, lhs, rhs, specs, strides, pads, lhs_dilation, rhs_dilation,
          feature_groups: int = 1, batch_groups: int = 1):
    """A convolution carrying `node`'s precision; the window sizes are `rhs`'s."""
    lhs_spec, rhs_spec, out_spec = specs
    sizes = [rhs.shape[d] for d in rhs_spec[2:]]
    attrs = {}
    if sizes:
        attrs["window"] = Window(tuple(
            WindowDimension(size=int(k), stride=int(s), padding_low=int(lo),
                            padding_high=int(hi), window_dilation=int(rd),
                            base_dilation=int(ld))
            for k, s, (lo, hi), ld, rd in zip(sizes, strides, pads, lhs_dilation,
                                              rhs_dilation)))
    attrs["dim_labels"] = _labels(lhs_spec, rhs_spec, out_spec)
    if feature_groups != 1:
        attrs["feature_group_count"] = int(feature_groups)
    if batch_groups != 1:
        attrs["batch_group_count"] = int(batch_groups)
    attrs.update(_kept_attrs(node))
    return bind(Op.CONVOLUTION, [lhs, rhs], attrs, weak_type=False,
                name="conv_general_dilated")


def _dilate(sizes, dilation):
    return [0 if d == 0 else 1 + r * (d - 1) for d, r in zip(sizes, dilation)]


def _vjp_lhs_padding(in_shape, window, strides, out_shape, pads, lhs_dilation, rhs_dilation):
    """JAX's _conv_general_vjp_lhs_padding."""
    lhs_d = _dilate(in_shape, lhs_dilation)
    rhs_d = _dilate(window, rhs_dilation)
    out_d = _dilate(out_shape, strides)
    before = [r - lo - 1 for r, (lo, _) in zip(rhs_d, pads)]
    after = [ld + r - 1 - o - b for ld, r, o, b in zip(lhs_d, rhs_d, out_d, before)]
    return list(zip(before, after))


def _vjp_rhs_padding(in_shape, window, strides, out_shape, pads, lhs_dilation, rhs_dilation):
    """JAX's _conv_general_vjp_rhs_padding."""
    lhs_d = _dilate(in_shape, lhs_dilation)
    rhs_d = _dilate(window, rhs_dilation)
    out_d = _dilate(out_shape, strides)
    return [(lo, o - ld + r - lo - 1) for (lo, _), o, ld, r in zip(pads, out_d, lhs_d, rhs_d)]


def _reshape_axis_out_of(src: int, size: int, x):
    """Split axis `src` into (size, rest), `size` major."""
    shape = list(x.shape)
    shape[src:src + 1] = [size, shape[src] // size]
    return lax.reshape(x, shape)


def _reshape_axis_into(src: int, dst: int, x):
    """Merge axis `src` into axis `dst` (numbered with `src` removed), `src` major."""
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    shape = [x.shape[i] for i in range(x.ndim) if i != src]
    shape[dst] *= x.shape[src]
    return lax.reshape(x, shape, perm)


class _Conv:
    """The forward convolution's parameters, read once from the node."""

    def __init__(self, node, rhs):
        dn = node.attr("dim_labels")
        self.specs = _specs(dn)
        dims = _window_dims(node, rhs, self.specs[1])
        self.strides = [d.stride for d in dims]
        self.pads = [(d.padding_low, d.padding_high) for d in dims]
        self.lhs_dilation = [d.base_dilation for d in dims]
        self.rhs_dilation = [d.window_dilation for d in dims]
        self.reversed = [d.window_reversal for d in dims]
        self.feature_groups = int(node.attr("feature_group_count", 1))
        self.batch_groups = int(node.attr("batch_group_count", 1))

    def padding_args(self, lhs, rhs, ct):
        lhs_spec, rhs_spec, out_spec = self.specs
        return ([lhs.shape[d] for d in lhs_spec[2:]], [rhs.shape[d] for d in rhs_spec[2:]],
                self.strides, [ct.shape[d] for d in out_spec[2:]], self.pads,
                self.lhs_dilation, self.rhs_dilation)


def _conv_transpose_lhs(node, conv: _Conv, ct, lhs, rhs):
    lhs_spec, rhs_spec, out_spec = conv.specs
    groups = max(conv.feature_groups, conv.batch_groups)
    if groups > 1:  # the groups move from the kernel's out features to its in features
        rhs = _reshape_axis_out_of(rhs_spec[0], groups, rhs)
        rhs = _reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
    pads = _vjp_lhs_padding(*conv.padding_args(lhs, rhs, ct))
    kernel = lax.rev(rhs, rhs_spec[2:]) if len(rhs_spec) > 2 else rhs
    specs = (out_spec, _transposed(rhs_spec), lhs_spec)
    out = _conv(node, ct, kernel, specs, conv.lhs_dilation, pads, conv.strides,
                conv.rhs_dilation, feature_groups=groups)
    if conv.batch_groups > 1:  # the batch groups come back as feature groups
        out = _reshape_axis_out_of(lhs_spec[1], conv.batch_groups, out)
        out = _reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
    return out


def _conv_transpose_rhs(node, conv: _Conv, ct, lhs, rhs):
    if ct.size == 0:
        return zeros_like(rhs)
    specs = tuple(_transposed(s) for s in conv.specs)
    pads = _vjp_rhs_padding(*conv.padding_args(lhs, rhs, ct))
    return _conv(node, lhs, ct, (specs[0], specs[2], specs[1]), conv.rhs_dilation, pads,
                 conv.lhs_dilation, conv.strides, feature_groups=conv.batch_groups,
                 batch_groups=conv.feature_groups)


@vjp(Op.CONVOLUTION)
def _convolution_vjp(node, ct):
    lhs, rhs = node.operands
    conv = _Conv(node, rhs)
    # a window reversal is a reversed kernel: differentiate as that, then reverse back
    flipped = [d for d, r in zip(conv.specs[1][2:], conv.reversed) if r]
    kernel = lax.rev(rhs, flipped) if flipped else rhs
    ct_lhs = ct_rhs = None
    if node.active[0]:
        c, k = _in_dtype(ct, kernel, ct.dtype)
        ct_lhs = _to(_conv_transpose_lhs(node, conv, c, lhs, k), lhs)
    if node.active[1]:
        c, x = _in_dtype(ct, lhs, ct.dtype)
        ct_rhs = _conv_transpose_rhs(node, conv, c, x, kernel)
        ct_rhs = _to(lax.rev(ct_rhs, flipped) if flipped else ct_rhs, rhs)
    return [ct_lhs, ct_rhs]
