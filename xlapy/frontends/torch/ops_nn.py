"""Lowerings of ATen's neural-network kernels: matrix products, convolution (+ backward),
max and average pooling (+ backward), dropout.

Convolutions keep PyTorch's layouts (input NC..., weight OI...) in the HLO
`dim_labels`; `convolution_backward` is two more convolutions, JAX's transpose
rules (the input gradient a convolution of the output gradient with the
flipped kernel, dilated by the stride; the weight gradient one with batch and
feature swapped). Pooling is written as strided slices of the padded input,
one per kernel position, so a max pool's indices are exact (the first maximum,
as PyTorch picks it) and its backward scatters the gradient to them.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from xlapy.frontends.torch.convert import GraphLowering
from xlapy.frontends.torch.registry import Unsupported, lowering
from xlapy.hlo.attributes import Window, WindowDimension
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode

aten = torch.ops.aten
H = HloInstruction
S64 = PrimitiveType.S64
PRED = PrimitiveType.PRED


# -- matrix products -------------------------------------------------------------------------
def _scale(g: GraphLowering, out, x: H, factor) -> H:
    if factor == 1:
        return x
    (factor,) = g.operands(out, factor)
    return g.b.multiply(x, factor)


def _plus_bias(g: GraphLowering, out, product: H, bias, beta, alpha) -> H:
    product = _scale(g, out, product, alpha)
    if beta == 0:
        return product
    (bias,) = g.operands(out, bias)
    return g.b.add(_scale(g, out, bias, beta), product)


@lowering(aten.mm)
def mm(g: GraphLowering, out, a, b):
    a, b = (g.convert(v, g.type_of(out)) for v in (a, b))
    return g.b.dot(a, b, [1], [0])


@lowering(aten.addmm)
def addmm(g: GraphLowering, out, bias, a, b, *, beta=1, alpha=1):
    return _plus_bias(g, out, mm(g, out, a, b), bias, beta, alpha)


@lowering(aten.bmm)
def bmm(g: GraphLowering, out, a, b):
    a, b = (g.convert(v, g.type_of(out)) for v in (a, b))
    return g.b.dot(a, b, [2], [1], [0], [0])


@lowering(aten.baddbmm)
def baddbmm(g: GraphLowering, out, bias, a, b, *, beta=1, alpha=1):
    return _plus_bias(g, out, bmm(g, out, a, b), bias, beta, alpha)


@lowering(aten.dot, aten.vdot)
def dot(g: GraphLowering, out, a, b):
    a, b = (g.convert(v, g.type_of(out)) for v in (a, b))
    return g.b.dot(a, b, [0], [0])


@lowering(aten.mv)
def mv(g: GraphLowering, out, a, v):
    a, v = (g.convert(x, g.type_of(out)) for x in (a, v))
    return g.b.dot(a, v, [1], [0])


# -- convolution -----------------------------------------------------------------------------
def _ints(values, n: int) -> list[int]:
    values = [int(v) for v in values] if isinstance(values, list | tuple) else [int(values)]
    return values * n if len(values) == 1 else values


def _labels(spatial: int, kernel: str = "oi", lhs: str = "bf", out: str = "bf") -> str:
    digits = "".join(str(i) for i in range(spatial))
    return f"{lhs}{digits}_{kernel}{digits}->{out}{digits}"


def _window(sizes, strides, pads, lhs_dilation, rhs_dilation) -> Window:
    return Window(tuple(
        WindowDimension(size=int(k), stride=int(s), padding_low=int(lo), padding_high=int(hi),
                        window_dilation=int(rd), base_dilation=int(ld))
        for k, s, (lo, hi), ld, rd in zip(sizes, strides, pads, lhs_dilation, rhs_dilation)))


def _dilate(sizes, dilation):
    return [0 if d == 0 else 1 + r * (d - 1) for d, r in zip(sizes, dilation)]


def _reshape_axis_out_of(g: GraphLowering, src: int, size: int, x: H) -> H:
    dims = list(g.dims(x))
    dims[src:src + 1] = [size, dims[src] // size]
    return g.b.reshape(x, dims)


def _reshape_axis_into(g: GraphLowering, src: int, dst: int, x: H) -> H:
    dims = g.dims(x)
    perm = [i for i in range(len(dims)) if i != src]
    perm.insert(dst, src)
    x = g.b.transpose(x, perm)
    shape = [dims[i] for i in range(len(dims)) if i != src]
    shape[dst] *= dims[src]
    return g.b.reshape(x, shape)


@lowering(aten.convolution)
def convolution(g: GraphLowering, out, x, weight, bias, stride, padding, dilation,
                transposed: bool, output_padding, groups: int):
    element_type = g.type_of(out)
    x, weight = g.convert(x, element_type), g.convert(weight, element_type)
    spatial = len(g.dims(x)) - 2
    stride, padding = _ints(stride, spatial), _ints(padding, spatial)
    dilation = _ints(dilation, spatial)
    kernel = g.dims(weight)[2:]
    if transposed:
        result = _transposed_convolution(g, x, weight, stride, padding, dilation,
                                         _ints(output_padding, spatial), groups, kernel)
    else:
        window = _window(kernel, stride, [(p, p) for p in padding], [1] * spatial, dilation)
        result = g.b.convolution(x, weight, window, _labels(spatial),
                                 feature_group_count=groups)
    if bias is not None:
        result = g.b.add(result, g.b.broadcast(g.convert(bias, element_type),
                                               g.dims(result), [1]))
    return result


def _transposed_convolution(g: GraphLowering, x, weight, stride, padding, dilation,
                            output_padding, groups, kernel):
    """The input gradient of the convolution whose weight this is: a convolution of x
    dilated by the stride with the flipped kernel, in and out features swapped."""
    spatial = len(kernel)
    if groups > 1:  # weight (I, O/G, k): move the groups from I onto O
        weight = _reshape_axis_out_of(g, 0, groups, weight)
        weight = _reshape_axis_into(g, 0, 1, weight)
    flipped = g.b.reverse(weight, list(range(2, 2 + spatial)))
    pads = [(d * (k - 1) - p, d * (k - 1) - p + op)
            for k, p, d, op in zip(kernel, padding, dilation, output_padding)]
    window = _window(kernel, [1] * spatial, pads, stride, dilation)
    return g.b.convolution(x, flipped, window, _labels(spatial, kernel="io"),
                           feature_group_count=groups)


@lowering(aten.convolution_backward)
def convolution_backward(g: GraphLowering, out, grad, x, weight, bias_sizes, stride, padding,
                         dilation, transposed: bool, output_padding, groups: int,
                         output_mask):
    if transposed:
        raise Unsupported(g.op, "the backward of a transposed convolution")
    element_type = g.type_of(out[1] if out[1] is not None else out[0] or out[2])
    grad, x, weight = (g.convert(v, element_type) for v in (grad, x, weight))
    spatial = len(g.dims(x)) - 2
    stride, padding = _ints(stride, spatial), _ints(padding, spatial)
    dilation = _ints(dilation, spatial)
    in_sizes, kernel, out_sizes = g.dims(x)[2:], g.dims(weight)[2:], g.dims(grad)[2:]
    results = [None, None, None]
    if output_mask[0]:
        kernel_weight = weight
        if groups > 1:  # the groups move from the kernel's out features to its in features
            kernel_weight = _reshape_axis_out_of(g, 0, groups, kernel_weight)
            kernel_weight = _reshape_axis_into(g, 0, 1, kernel_weight)
        lhs_d, rhs_d = _dilate(in_sizes, [1] * spatial), _dilate(kernel, dilation)
        out_d = _dilate(out_sizes, stride)
        before = [r - p - 1 for r, p in zip(rhs_d, padding)]
        pads = [(b, ld + r - 1 - o - b) for ld, r, o, b in zip(lhs_d, rhs_d, out_d, before)]
        flipped = g.b.reverse(kernel_weight, list(range(2, 2 + spatial)))
        window = _window(kernel, [1] * spatial, pads, stride, dilation)
        results[0] = g.b.convolution(grad, flipped, window, _labels(spatial, kernel="io"),
                                     feature_group_count=groups)
    if output_mask[1]:
        lhs_d, rhs_d = _dilate(in_sizes, [1] * spatial), _dilate(kernel, dilation)
        out_d = _dilate(out_sizes, stride)
        pads = [(p, o - ld + r - p - 1) for p, o, ld, r in zip(padding, out_d, lhs_d, rhs_d)]
        window = _window(out_sizes, dilation, pads, [1] * spatial, stride)
        results[1] = g.b.convolution(x, grad, window,
                                     _labels(spatial, kernel="io", lhs="fb", out="fb"),
                                     batch_group_count=groups)
    if output_mask[2]:
        axes = [i for i in range(len(g.dims(grad))) if i != 1]
        results[2] = g.sum(grad, axes)
    return tuple(results)


# -- pooling ---------------------------------------------------------------------------------
class _Pool:
    """A 2-D pooling window over the last two dims of an (N, C, H, W) or (C, H, W) input."""

    def __init__(self, g: GraphLowering, x: H, out_dims, kernel, stride, padding, dilation=1):
        self.kernel = _ints(kernel, 2)
        self.stride = _ints(stride, 2) if stride not in (None, [], ()) else list(self.kernel)
        self.padding = _ints(padding, 2)
        self.dilation = _ints(dilation, 2)
        self.in_dims = g.dims(x)
        self.out_dims = tuple(out_dims)
        self.spatial_in = self.in_dims[-2:]
        self.spatial_out = self.out_dims[-2:]
        self.high = [max(0, (o - 1) * s + (k - 1) * d + 1 - n - p) for o, s, k, d, n, p in zip(
            self.spatial_out, self.stride, self.kernel, self.dilation, self.spatial_in,
            self.padding)]

    def positions(self):
        """(row, column) offsets of the kernel, in PyTorch's scan order."""
        for i in range(self.kernel[0]):
            for j in range(self.kernel[1]):
                yield i * self.dilation[0], j * self.dilation[1]

    def padded(self, g: GraphLowering, x: H, value) -> H:
        rank = len(self.in_dims)
        config = [(0, 0, 0)] * (rank - 2) + [(p, h, 0) for p, h in zip(self.padding, self.high)]
        return g.b.pad(x, g.const(value, g.ptype(x)), config)

    def window_slice(self, g: GraphLowering, padded: H, offset) -> H:
        rank = len(self.in_dims)
        starts = [0] * (rank - 2) + list(offset)
        limits = list(self.in_dims[:-2]) + [o + (n - 1) * s + 1 for o, n, s in zip(
            offset, self.spatial_out, self.stride)]
        strides = [1] * (rank - 2) + list(self.stride)
        return g.b.slice(padded, starts, limits, strides)

    def flat_index(self, g: GraphLowering, offset) -> H:
        """Each output position's input index (row * W + column) at kernel `offset`."""
        rank = len(self.out_dims)
        rows = g.iota(S64, self.out_dims, rank - 2)
        cols = g.iota(S64, self.out_dims, rank - 1)
        row = g.b.add(g.b.multiply(rows, g.const(self.stride[0], S64, self.out_dims)),
                      g.const(offset[0] - self.padding[0], S64, self.out_dims))
        col = g.b.add(g.b.multiply(cols, g.const(self.stride[1], S64, self.out_dims)),
                      g.const(offset[1] - self.padding[1], S64, self.out_dims))
        width = g.const(self.spatial_in[1], S64, self.out_dims)
        return g.b.add(g.b.multiply(row, width), col)


def _lowest(element_type: PrimitiveType):
    if element_type.numpy.kind in "fV":
        return -math.inf
    return np.iinfo(element_type.numpy).min


@lowering(aten.max_pool2d_with_indices)
def max_pool2d_with_indices(g: GraphLowering, out, x, kernel_size, stride=(), padding=0,
                            dilation=1, ceil_mode: bool = False):
    pool = _Pool(g, x, g.shape_of(out[0]), kernel_size, stride, padding, dilation)
    padded = pool.padded(g, x, _lowest(g.ptype(x)))
    slices = [(offset, pool.window_slice(g, padded, offset)) for offset in pool.positions()]
    values = slices[0][1]
    for _, s in slices[1:]:
        values = g.b.maximum(values, s)
    indices = None
    for offset, s in reversed(slices):  # the first maximum wins
        index = pool.flat_index(g, offset)
        if indices is None:
            indices = index
            continue
        hit = g.b.compare(s, values, "EQ")
        if g.ptype(s).numpy.kind in "fV":
            hit = g.b.or_(hit, g.b.compare(s, s, "NE"))
        indices = g.b.select(hit, index, indices)
    return values, indices


@lowering(aten.max_pool2d_with_indices_backward)
def max_pool2d_with_indices_backward(g: GraphLowering, out, grad, x, kernel_size, stride,
                                     padding, dilation, ceil_mode, indices):
    """Each output gradient added at its recorded input position (a scatter-add over the
    flattened input; positions shared by windows add up, as in PyTorch)."""
    dims = g.dims(x)
    plane = dims[-2] * dims[-1]
    planes = math.prod(dims[:-2])
    out_dims = g.dims(grad)
    count = math.prod(out_dims)
    per_plane = math.prod(out_dims[-2:])
    plane_index = g.b.reshape(g.iota(S64, [planes, per_plane], 0), out_dims)
    flat = g.b.add(g.b.multiply(plane_index, g.const(plane, S64, out_dims)),
                   g.convert(indices, S64))
    flat = g.b.reshape(flat, [count, 1])
    element_type = g.type_of(out)
    updates = g.b.reshape(g.convert(grad, element_type), [count])
    zeros = g.const(0, element_type, [planes * plane])
    result = g.b.scatter(zeros, flat, updates, g.b.scalar_reducer(Opcode.ADD, element_type),
                         update_window_dims=(), inserted_window_dims=(0,),
                         scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    return g.b.reshape(result, dims)


def _average_divisors(pool: _Pool, count_include_pad: bool, divisor_override) -> np.ndarray:
    """PyTorch's divisor of each output position (Ho, Wo), from the static shapes."""
    if divisor_override:
        return np.full(pool.spatial_out, float(divisor_override))
    factors = []
    for n, o, k, s, p in zip(pool.spatial_in, pool.spatial_out, pool.kernel, pool.stride,
                             pool.padding):
        sizes = []
        for i in range(o):
            start = i * s - p
            end = min(start + k, n + p)
            size = end - start
            if not count_include_pad:
                size = min(end, n) - max(start, 0)
            sizes.append(size)
        factors.append(np.asarray(sizes, np.float64))
    return np.outer(factors[0], factors[1])


def _divisors(g: GraphLowering, pool: _Pool, element_type, count_include_pad,
              divisor_override) -> H:
    divisors = _average_divisors(pool, count_include_pad, divisor_override)
    constant = g.b.constant(divisors.astype(element_type.numpy))
    rank = len(pool.out_dims)
    return g.b.broadcast(constant, pool.out_dims, [rank - 2, rank - 1])


@lowering(aten.avg_pool2d)
def avg_pool2d(g: GraphLowering, out, x, kernel_size, stride=(), padding=0,
               ceil_mode: bool = False, count_include_pad: bool = True, divisor_override=None):
    pool = _Pool(g, x, g.shape_of(out), kernel_size, stride, padding)
    element_type = g.type_of(out)
    padded = pool.padded(g, g.convert(x, element_type), 0)
    total = None
    for offset in pool.positions():
        s = pool.window_slice(g, padded, offset)
        total = s if total is None else g.b.add(total, s)
    return g.b.divide(total, _divisors(g, pool, element_type, count_include_pad,
                                       divisor_override))


@lowering(aten.avg_pool2d_backward)
def avg_pool2d_backward(g: GraphLowering, out, grad, x, kernel_size, stride, padding,
                        ceil_mode, count_include_pad, divisor_override):
    pool = _Pool(g, x, g.dims(grad), kernel_size, stride, padding)
    element_type = g.type_of(out)
    share = g.b.divide(g.convert(grad, element_type),
                       _divisors(g, pool, element_type, count_include_pad, divisor_override))
    return _spread(g, pool, share, element_type)


def _spread(g: GraphLowering, pool: _Pool, share: H, element_type) -> H:
    """The transpose of the window slices: each output's share added at every input
    position of its window, then the padding cut off."""
    rank = len(pool.in_dims)
    padded_sizes = [n + p + h for n, p, h in zip(pool.spatial_in, pool.padding, pool.high)]
    zero = g.const(0, element_type)
    total = None
    for offset in pool.positions():
        config = [(0, 0, 0)] * (rank - 2)
        for start, o, s, size in zip(offset, pool.spatial_out, pool.stride, padded_sizes):
            config.append((start, size - (start + (o - 1) * s + 1), s - 1))
        placed = g.b.pad(share, zero, config)
        total = placed if total is None else g.b.add(total, placed)
    starts = [0] * (rank - 2) + list(pool.padding)
    limits = list(pool.in_dims[:-2]) + [p + n for p, n in zip(pool.padding, pool.spatial_in)]
    return g.b.slice(total, starts, limits)


def _adaptive_pool(g: GraphLowering, x: H, output_size) -> _Pool:
    spatial = g.dims(x)[-2:]
    output_size = _ints(output_size, 2)
    if any(n % o for n, o in zip(spatial, output_size)):
        raise Unsupported(g.op, f"adaptive pooling of {list(spatial)} to {output_size} "
                                "(sizes that do not divide)")
    kernel = [n // o for n, o in zip(spatial, output_size)]
    out_dims = list(g.dims(x)[:-2]) + output_size
    return _Pool(g, x, out_dims, kernel, kernel, 0)


@lowering(aten._adaptive_avg_pool2d)
def adaptive_avg_pool2d(g: GraphLowering, out, x, output_size):
    pool = _adaptive_pool(g, x, output_size)
    return avg_pool2d(g, out, x, pool.kernel, pool.stride, 0)


@lowering(aten._adaptive_avg_pool2d_backward)
def adaptive_avg_pool2d_backward(g: GraphLowering, out, grad, x):
    pool = _adaptive_pool(g, x, g.dims(grad)[-2:])
    return avg_pool2d_backward(g, out, grad, x, pool.kernel, pool.stride, 0, False, True, None)


# -- dropout and random numbers --------------------------------------------------------------
@lowering(aten.native_dropout)
def native_dropout(g: GraphLowering, out, x, p: float, train=True):
    element_type = g.type_of(out[0])
    dims = g.dims(x)
    if not train or p == 0:
        return x, g.const(True, PRED, dims)
    if p >= 1:
        return g.const(0, element_type, dims), g.const(False, PRED, dims)
    keep = g.b.compare(g.random_uniform(dims, PrimitiveType.F32),
                       g.const(p, PrimitiveType.F32, dims), "GE")
    scaled = g.b.multiply(g.convert(x, element_type), g.const(1 / (1 - p), element_type, dims))
    return g.b.select(keep, scaled, g.const(0, element_type, dims)), keep


@lowering(aten.native_dropout_backward)
def native_dropout_backward(g: GraphLowering, out, grad, mask, scale: float):
    grad, mask, scale = g.operands(out, grad, mask, scale)
    return g.b.multiply(g.b.multiply(grad, mask), scale)


@lowering(aten.rand, aten.rand_like)
def rand(g: GraphLowering, out, *args, **kwargs):
    return g.random_uniform(g.shape_of(out), g.type_of(out))


@lowering(aten.bernoulli.p)
def bernoulli(g: GraphLowering, out, x, p: float = 0.5, **kwargs):
    dims = g.shape_of(out)
    hit = g.b.compare(g.random_uniform(dims, PrimitiveType.F32),
                      g.const(p, PrimitiveType.F32, dims), "LT")
    return g.convert(hit, g.type_of(out))
