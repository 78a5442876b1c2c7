"""Lowerings of ATen's reductions and the ops built on them: sum/mean/amax/var/...,
argmax, softmax and log-softmax (+ backward), layer norm and batch norm (training
and eval, + backward), and the negative log-likelihood loss (+ backward).

Half-precision inputs are reduced in f32 (as PyTorch accumulates them) and the
result converted back; a max-shifted exponential keeps softmax finite.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from xlapy.frontends.torch.convert import GraphLowering
from xlapy.frontends.torch.ops_shape import axis
from xlapy.frontends.torch.registry import Unsupported, lowering
from xlapy.hlo.builder_ops import make_window
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode

aten = torch.ops.aten
H = HloInstruction
F32 = PrimitiveType.F32
PRED = PrimitiveType.PRED


def _axes(g: GraphLowering, x: H, dim) -> list[int]:
    """The reduced axes: all of them for None or an empty list (ATen's convention)."""
    rank = len(g.dims(x))
    if dim is None or (isinstance(dim, list | tuple) and not dim):
        return list(range(rank))
    dims = dim if isinstance(dim, list | tuple) else [dim]
    return sorted({axis(d, rank) for d in dims})


def _accumulator(element_type: PrimitiveType) -> PrimitiveType:
    return F32 if element_type in (PrimitiveType.F16, PrimitiveType.BF16) else element_type


def _count(g: GraphLowering, x: H, axes: Sequence[int]) -> int:
    return math.prod(g.dims(x)[a] for a in axes)


def expand_back(g: GraphLowering, reduced: H, dims: Sequence[int], axes: Sequence[int]) -> H:
    """A reduction's result broadcast back over the reduced `axes` of `dims`."""
    kept = [i for i in range(len(dims)) if i not in axes]
    reduced = g.b.reshape(reduced, [dims[i] for i in kept])
    return g.b.broadcast(reduced, dims, kept)


def _lowest(element_type: PrimitiveType, highest: bool = False):
    kind = element_type.numpy.kind
    if element_type is PRED:
        return highest
    if kind in "fV":
        return math.inf if highest else -math.inf
    info = np.iinfo(element_type.numpy)
    return info.max if highest else info.min


# -- plain reductions ------------------------------------------------------------------------
def _dim_and_dtype(dim, dtype):
    if isinstance(dim, torch.dtype):  # sum.default(self, dtype)
        return None, dim
    return dim, dtype


@lowering(aten.sum)
def sum_(g: GraphLowering, out, x, dim=None, keepdim: bool = False, dtype=None):
    dim, _ = _dim_and_dtype(dim, dtype)
    axes = _axes(g, x, dim)
    x = g.convert(x, _accumulator(g.type_of(out)))
    return g.b.reshape(g.sum(x, axes), g.shape_of(out))


@lowering(aten.mean)
def mean(g: GraphLowering, out, x, dim=None, keepdim: bool = False, dtype=None):
    dim, _ = _dim_and_dtype(dim, dtype)
    axes = _axes(g, x, dim)
    x = g.convert(x, _accumulator(g.type_of(out)))
    total = g.sum(x, axes)
    count = g.const(_count(g, x, axes), g.ptype(x), g.dims(total))
    return g.b.reshape(g.b.divide(total, count), g.shape_of(out))


@lowering(aten.prod)
def prod(g: GraphLowering, out, x, dim=None, keepdim: bool = False, dtype=None):
    dim, _ = _dim_and_dtype(dim, dtype)
    x = g.convert(x, g.type_of(out))
    return g.b.reshape(g.reduce(x, _axes(g, x, dim), Opcode.MULTIPLY, 1), g.shape_of(out))


def _extremum(g: GraphLowering, x: H, axes, highest: bool) -> H:
    opcode = Opcode.MAXIMUM if highest else Opcode.MINIMUM
    if g.ptype(x) is PRED:
        opcode = Opcode.OR if highest else Opcode.AND
    return g.reduce(x, axes, opcode, _lowest(g.ptype(x), not highest))


@lowering(aten.amax, aten.amin)
def amax(g: GraphLowering, out, x, dim=(), keepdim: bool = False):
    result = _extremum(g, x, _axes(g, x, dim), "amax" in g.op)
    return g.b.reshape(result, g.shape_of(out))


@lowering(aten.any, aten.all)
def any_(g: GraphLowering, out, x, dim=None, keepdim: bool = False):
    x = g.convert(x, PRED)
    opcode, init = (Opcode.OR, False) if "any" in g.op else (Opcode.AND, True)
    return g.b.reshape(g.reduce(x, _axes(g, x, dim), opcode, init), g.shape_of(out))


def _arg_extremum(g: GraphLowering, x: H, dim: int, highest: bool) -> tuple[H, H]:
    """(extremum, the first index reaching it) along `dim`; a NaN counts as the extremum,
    as in PyTorch."""
    dims = g.dims(x)
    values = _extremum(g, x, [dim], highest)
    s64 = PrimitiveType.S64
    is_best = g.b.compare(x, expand_back(g, values, dims, [dim]), "EQ")
    if g.ptype(x).numpy.kind in "fV":
        is_best = g.b.or_(is_best, g.b.compare(x, x, "NE"))
    index = g.b.select(is_best, g.iota(s64, dims, dim), g.const(dims[dim], s64, dims))
    return values, g.reduce(index, [dim], Opcode.MINIMUM, dims[dim])


@lowering(aten.max, aten.min)
def max_(g: GraphLowering, out, x, dim=None, keepdim: bool = False):
    highest = "max" in g.op
    if isinstance(dim, H):  # max.other: elementwise
        a, b = g.operands(out, x, dim)
        return g.b.maximum(a, b) if highest else g.b.minimum(a, b)
    if dim is None:
        return g.b.reshape(_extremum(g, x, _axes(g, x, None), highest), g.shape_of(out))
    if not g.dims(x):
        return x, g.const(0, PrimitiveType.S64)
    values, indices = _arg_extremum(g, x, axis(dim, len(g.dims(x))), highest)
    return g.b.reshape(values, g.shape_of(out[0])), g.b.reshape(indices, g.shape_of(out[1]))


@lowering(aten.argmax, aten.argmin)
def argmax(g: GraphLowering, out, x, dim=None, keepdim: bool = False):
    if dim is None:
        x = g.b.reshape(x, [math.prod(g.dims(x))])
        dim = 0
    if not g.dims(x):
        return g.const(0, PrimitiveType.S64)
    _, indices = _arg_extremum(g, x, axis(dim, len(g.dims(x))), "argmax" in g.op)
    return g.b.reshape(indices, g.shape_of(out))


def _variance(g: GraphLowering, x: H, axes, correction) -> tuple[H, H]:
    """(variance with `correction` subtracted from the count, mean), both keepdim-less."""
    count = _count(g, x, axes)
    total = g.sum(x, axes)
    mean_ = g.b.divide(total, g.const(count, g.ptype(x), g.dims(total)))
    centred = g.b.subtract(x, expand_back(g, mean_, g.dims(x), axes))
    squares = g.sum(g.b.multiply(centred, centred), axes)
    correction = 1 if correction is None else correction
    divisor = g.const(max(count - correction, 0), g.ptype(x), g.dims(squares))
    return g.b.divide(squares, divisor), mean_


def _correction(kwargs_correction, unbiased):
    if kwargs_correction is not None:
        return kwargs_correction
    return 1 if unbiased in (None, True) else 0


@lowering(aten.var, aten.std)
def var(g: GraphLowering, out, x, dim=None, unbiased=None, keepdim: bool = False, *,
        correction=None):
    if isinstance(dim, bool):  # var.default(self, unbiased)
        dim, unbiased = None, dim
    x = g.convert(x, _accumulator(g.type_of(out)))
    variance, _ = _variance(g, x, _axes(g, x, dim), _correction(correction, unbiased))
    if "std" in g.op:
        variance = g.b.sqrt(variance)
    return g.b.reshape(variance, g.shape_of(out))


@lowering(aten.var_mean, aten.std_mean)
def var_mean(g: GraphLowering, out, x, dim=None, unbiased=None, keepdim: bool = False, *,
             correction=None):
    if isinstance(dim, bool):  # var_mean.default(self, unbiased)
        dim, unbiased = None, dim
    x = g.convert(x, _accumulator(g.type_of(out[0])))
    variance, mean_ = _variance(g, x, _axes(g, x, dim), _correction(correction, unbiased))
    if "std" in g.op:
        variance = g.b.sqrt(variance)
    return g.b.reshape(variance, g.shape_of(out[0])), g.b.reshape(mean_, g.shape_of(out[1]))


@lowering(aten.logsumexp)
def logsumexp(g: GraphLowering, out, x, dim, keepdim: bool = False):
    x = g.convert(x, _accumulator(g.type_of(out)))
    axes = _axes(g, x, dim)
    top = _extremum(g, x, axes, True)
    finite = g.b.select(g.b.is_finite(top), top, g.const(0, g.ptype(top), g.dims(top)))
    shifted = g.b.exp(g.b.subtract(x, expand_back(g, finite, g.dims(x), axes)))
    result = g.b.add(g.b.log(g.sum(shifted, axes)), finite)
    return g.b.reshape(result, g.shape_of(out))


@lowering(aten.cumsum, aten.cumprod)
def cumsum(g: GraphLowering, out, x, dim: int, dtype=None):
    x = g.convert(x, g.type_of(out))
    dims = g.dims(x)
    if not dims:
        return x
    dim = axis(dim, len(dims))
    opcode, init = (Opcode.ADD, 0) if "cumsum" in g.op else (Opcode.MULTIPLY, 1)
    sizes = [1] * len(dims)
    sizes[dim] = dims[dim]
    padding = [(0, 0)] * len(dims)
    padding[dim] = (dims[dim] - 1, 0)
    window = make_window(sizes, padding=padding)
    return g.b.reduce_window(x, g.const(init, g.ptype(x)), window,
                             g.b.scalar_reducer(opcode, g.ptype(x)))


# -- softmax ---------------------------------------------------------------------------------
def _softmax_parts(g: GraphLowering, out, x, dim) -> tuple[H, H, list[int]]:
    """(x - max, sum(exp(x - max)) broadcast back, [dim]) in the accumulation type."""
    x = g.convert(x, _accumulator(g.type_of(out)))
    axes = [axis(dim, len(g.dims(x)))] if g.dims(x) else []
    if not axes:
        return g.b.subtract(x, x), g.const(1, g.ptype(x)), axes
    top = _extremum(g, x, axes, True)
    shifted = g.b.subtract(x, expand_back(g, top, g.dims(x), axes))
    total = expand_back(g, g.sum(g.b.exp(shifted), axes), g.dims(x), axes)
    return shifted, total, axes


@lowering(aten._softmax)
def softmax(g: GraphLowering, out, x, dim: int, half_to_float: bool = False):
    shifted, total, _ = _softmax_parts(g, out, x, dim)
    return g.b.divide(g.b.exp(shifted), total)


@lowering(aten._log_softmax)
def log_softmax(g: GraphLowering, out, x, dim: int, half_to_float: bool = False):
    shifted, total, _ = _softmax_parts(g, out, x, dim)
    return g.b.subtract(shifted, g.b.log(total))


@lowering(aten._softmax_backward_data)
def softmax_backward(g: GraphLowering, out, grad, y, dim: int, input_dtype=None):
    grad, y = g.operands(out, grad, y, element_type=_accumulator(g.type_of(out)))
    axes = [axis(dim, len(g.dims(y)))] if g.dims(y) else []
    dot = expand_back(g, g.sum(g.b.multiply(grad, y), axes), g.dims(y), axes) if axes \
        else g.b.multiply(grad, y)
    return g.b.multiply(y, g.b.subtract(grad, dot))


@lowering(aten._log_softmax_backward_data)
def log_softmax_backward(g: GraphLowering, out, grad, y, dim: int, input_dtype=None):
    grad, y = g.operands(out, grad, y, element_type=_accumulator(g.type_of(out)))
    axes = [axis(dim, len(g.dims(y)))] if g.dims(y) else []
    total = expand_back(g, g.sum(grad, axes), g.dims(y), axes) if axes else grad
    return g.b.subtract(grad, g.b.multiply(g.b.exp(y), total))


# -- normalisation ---------------------------------------------------------------------------
def _normalise(g: GraphLowering, x: H, axes, eps: float) -> tuple[H, H, H]:
    """(x - mean) * rstd, and mean and rstd (reduced) over `axes`."""
    variance, mean_ = _variance(g, x, axes, 0)
    rstd = g.b.rsqrt(g.b.add(variance, g.const(eps, g.ptype(x), g.dims(variance))))
    centred = g.b.subtract(x, expand_back(g, mean_, g.dims(x), axes))
    return g.b.multiply(centred, expand_back(g, rstd, g.dims(x), axes)), mean_, rstd


def _affine(g: GraphLowering, y: H, weight, bias, axes_kept: Sequence[int]) -> H:
    """y * weight + bias, weight and bias laid along `axes_kept` of y."""
    dims = g.dims(y)
    if weight is not None:
        y = g.b.multiply(y, g.b.broadcast(g.convert(weight, g.ptype(y)), dims, axes_kept))
    if bias is not None:
        y = g.b.add(y, g.b.broadcast(g.convert(bias, g.ptype(y)), dims, axes_kept))
    return y


@lowering(aten.native_layer_norm)
def native_layer_norm(g: GraphLowering, out, x, normalized_shape, weight, bias, eps: float):
    x = g.convert(x, _accumulator(g.ptype(x)))
    rank = len(g.dims(x))
    axes = list(range(rank - len(normalized_shape), rank))
    y, mean_, rstd = _normalise(g, x, axes, eps)
    y = _affine(g, y, weight, bias, axes)
    return y, g.b.reshape(mean_, g.shape_of(out[1])), g.b.reshape(rstd, g.shape_of(out[2]))


@lowering(aten.native_layer_norm_backward)
def native_layer_norm_backward(g: GraphLowering, out, grad, x, normalized_shape, mean_, rstd,
                               weight, bias, output_mask):
    element_type = _accumulator(g.ptype(x))
    grad, x = g.convert(grad, element_type), g.convert(x, element_type)
    dims = g.dims(x)
    rank = len(dims)
    axes = list(range(rank - len(normalized_shape), rank))
    batch = list(range(rank - len(normalized_shape)))
    mean_ = g.b.broadcast(g.b.reshape(g.convert(mean_, element_type),
                                      [dims[i] for i in batch]), dims, batch)
    rstd = g.b.broadcast(g.b.reshape(g.convert(rstd, element_type),
                                     [dims[i] for i in batch]), dims, batch)
    xhat = g.b.multiply(g.b.subtract(x, mean_), rstd)
    results = [None, None, None]
    if output_mask[0]:
        scaled = grad if weight is None else g.b.multiply(
            grad, g.b.broadcast(g.convert(weight, element_type), dims, axes))
        n = _count(g, x, axes)
        total = expand_back(g, g.sum(scaled, axes), dims, axes)
        projection = expand_back(g, g.sum(g.b.multiply(scaled, xhat), axes), dims, axes)
        inner = g.b.subtract(g.b.subtract(g.b.multiply(scaled, g.const(n, element_type, dims)),
                                          total), g.b.multiply(xhat, projection))
        results[0] = g.b.multiply(g.b.divide(rstd, g.const(n, element_type, dims)), inner)
    if output_mask[1] and weight is not None:
        results[1] = g.b.reshape(g.sum(g.b.multiply(grad, xhat), batch), g.shape_of(out[1]))
    if output_mask[2] and bias is not None:
        results[2] = g.b.reshape(g.sum(grad, batch), g.shape_of(out[2]))
    return tuple(results)


def _channel_axes(g: GraphLowering, x: H) -> list[int]:
    return [i for i in range(len(g.dims(x))) if i != 1]


def _batch_norm_eval(g: GraphLowering, x: H, weight, bias, running_mean, running_var, eps):
    dims = g.dims(x)
    mean_ = g.b.broadcast(g.convert(running_mean, g.ptype(x)), dims, [1])
    variance = g.b.broadcast(g.convert(running_var, g.ptype(x)), dims, [1])
    rstd = g.b.rsqrt(g.b.add(variance, g.const(eps, g.ptype(x), dims)))
    return _affine(g, g.b.multiply(g.b.subtract(x, mean_), rstd), weight, bias, [1])


def _batch_norm(g: GraphLowering, out, x, weight, bias, running_mean, running_var,
                training: bool, momentum: float, eps: float, update_stats: bool):
    """(y, save_mean, save_rstd[, new running mean, new running var])."""
    element_type = _accumulator(g.ptype(x))
    x = g.convert(x, element_type)
    results = list(out)
    if not training:
        y = _batch_norm_eval(g, x, weight, bias, running_mean, running_var, eps)
        empty = [g.const(0, g.type_of(o), g.shape_of(o)) for o in out[1:3]]
        stats = [running_mean, running_var] if update_stats else []
        return (y, *empty, *stats)
    axes = _channel_axes(g, x)
    y, mean_, rstd = _normalise(g, x, axes, eps)
    results = [_affine(g, y, weight, bias, [1]), mean_, rstd]
    if update_stats:
        n = _count(g, x, axes)
        variance, _ = _variance(g, x, axes, 0)
        unbiased = g.b.multiply(variance, g.const(n / max(n - 1, 1), element_type,
                                                  g.dims(variance)))
        for stat, new in ((running_mean, mean_), (running_var, unbiased)):
            stat = g.convert(stat, element_type)
            keep = g.const(1 - momentum, element_type, g.dims(stat))
            step = g.const(momentum, element_type, g.dims(stat))
            results.append(g.b.add(g.b.multiply(keep, stat), g.b.multiply(step, new)))
    return tuple(results)


@lowering(aten._native_batch_norm_legit_functional)
def batch_norm_functional(g: GraphLowering, out, x, weight, bias, running_mean, running_var,
                          training, momentum, eps):
    return _batch_norm(g, out, x, weight, bias, running_mean, running_var, training,
                       momentum, eps, update_stats=True)


@lowering(aten._native_batch_norm_legit_no_training)
def batch_norm_no_training(g: GraphLowering, out, x, weight, bias, running_mean, running_var,
                           momentum, eps):
    return _batch_norm(g, out, x, weight, bias, running_mean, running_var, False, momentum,
                       eps, update_stats=False)


@lowering(aten._native_batch_norm_legit.no_stats)
def batch_norm_no_stats(g: GraphLowering, out, x, weight, bias, training, momentum, eps):
    return _batch_norm(g, out, x, weight, bias, None, None, True, momentum, eps,
                       update_stats=False)


@lowering(aten._native_batch_norm_legit.default, aten.native_batch_norm)
def batch_norm_in_place(g: GraphLowering, out, x, weight, bias, running_mean, running_var,
                        training, momentum, eps):
    if training and running_mean is not None:  # it would update the stats in place
        raise Unsupported(g.op, "in-place running-stat updates (not functionalised)")
    return _batch_norm(g, out, x, weight, bias, running_mean, running_var, training,
                       momentum, eps, update_stats=False)


@lowering(aten.native_batch_norm_backward)
def native_batch_norm_backward(g: GraphLowering, out, grad, x, weight, running_mean,
                               running_var, save_mean, save_invstd, train, eps, output_mask):
    element_type = _accumulator(g.ptype(x))
    grad, x = g.convert(grad, element_type), g.convert(x, element_type)
    dims = g.dims(x)
    axes = _channel_axes(g, x)
    if train:
        mean_, invstd = g.convert(save_mean, element_type), g.convert(save_invstd, element_type)
    else:
        mean_ = g.convert(running_mean, element_type)
        variance = g.convert(running_var, element_type)
        invstd = g.b.rsqrt(g.b.add(variance, g.const(eps, element_type, g.dims(variance))))
    mean_b = g.b.broadcast(mean_, dims, [1])
    invstd_b = g.b.broadcast(invstd, dims, [1])
    xhat = g.b.multiply(g.b.subtract(x, mean_b), invstd_b)
    grad_bias = g.sum(grad, axes)
    grad_weight = g.sum(g.b.multiply(grad, xhat), axes)
    scale = invstd_b if weight is None else g.b.multiply(
        invstd_b, g.b.broadcast(g.convert(weight, element_type), dims, [1]))
    results = [None, None, None]
    if output_mask[0]:
        if train:
            n = g.const(_count(g, x, axes), element_type, g.dims(grad_bias))
            mean_grad = g.b.broadcast(g.b.divide(grad_bias, n), dims, [1])
            projection = g.b.broadcast(g.b.divide(grad_weight, n), dims, [1])
            inner = g.b.subtract(g.b.subtract(grad, mean_grad), g.b.multiply(xhat, projection))
            results[0] = g.b.multiply(scale, inner)
        else:
            results[0] = g.b.multiply(scale, grad)
    if output_mask[1]:
        results[1] = grad_weight
    if output_mask[2]:
        results[2] = grad_bias
    return tuple(results)


# -- negative log-likelihood -----------------------------------------------------------------
def _nll_parts(g: GraphLowering, x: H, target: H, weight, ignore_index: int):
    """(one-hot mask of the targets over x's class axis, per-sample weights)."""
    dims = g.dims(x)
    class_axis = 1 if len(dims) >= 2 else 0
    target_axes = [i for i in range(len(dims)) if i != class_axis]
    target = g.convert(target, PrimitiveType.S64)
    hot = g.b.compare(g.iota(PrimitiveType.S64, dims, class_axis),
                      g.b.broadcast(target, dims, target_axes), "EQ")
    element_type = g.ptype(x)
    if weight is None:
        weights = g.const(1, element_type, g.dims(target))
    else:
        spread = g.b.broadcast(g.convert(weight, element_type), dims, [class_axis])
        weights = g.sum(g.b.select(hot, spread, g.const(0, element_type, dims)), [class_axis])
    valid = g.b.compare(target, g.const(ignore_index, PrimitiveType.S64, g.dims(target)), "NE")
    weights = g.b.select(valid, weights, g.const(0, element_type, g.dims(target)))
    return hot, weights, class_axis, target_axes


@lowering(aten.nll_loss_forward)
def nll_loss_forward(g: GraphLowering, out, x, target, weight, reduction: int,
                     ignore_index: int):
    hot, weights, class_axis, _ = _nll_parts(g, x, target, weight, ignore_index)
    zero = g.const(0, g.ptype(x), g.dims(x))
    picked = g.sum(g.b.select(hot, x, zero), [class_axis])
    losses = g.b.negate(g.b.multiply(picked, weights))
    all_axes = list(range(len(g.dims(losses))))
    total_weight = g.sum(weights, all_axes)
    if reduction == 0:
        result, total_weight = losses, g.const(0, g.ptype(x))  # PyTorch leaves it 0
    elif reduction == 2:
        result = g.sum(losses, all_axes)
    else:
        result = g.b.divide(g.sum(losses, all_axes), total_weight)
    return g.b.reshape(result, g.shape_of(out[0])), g.b.reshape(total_weight,
                                                               g.shape_of(out[1]))


@lowering(aten.nll_loss_backward)
def nll_loss_backward(g: GraphLowering, out, grad, x, target, weight, reduction: int,
                      ignore_index: int, total_weight):
    hot, weights, _, target_axes = _nll_parts(g, x, target, weight, ignore_index)
    dims = g.dims(x)
    element_type = g.ptype(x)
    grad = g.convert(grad, element_type)
    if reduction == 0:
        scale = g.b.multiply(g.b.reshape(grad, g.dims(weights)), weights)
    else:
        per = g.b.reshape(grad, [])
        if reduction == 1:
            per = g.b.divide(per, g.b.reshape(g.convert(total_weight, element_type), []))
        scale = g.b.multiply(g.broadcast_to(per, g.dims(weights)), weights)
    spread = g.b.broadcast(g.b.negate(scale), dims, target_axes)
    return g.b.select(hot, spread, g.const(0, element_type, dims))

