"""Interpreter rule for convolution, XLA's general form.

The computation reads like XLA's definition, one step per line:

1. move the operands to canonical order: input [batch, feature, spatial...],
   kernel [output feature, input feature, spatial...];
2. flip the kernel along the spatial dims with `rhs_reversal`;
3. base-dilate the input (`lhs_dilate`: d-1 zeros between elements) and pad
   it (`pad`, negative padding crops);
4. gather every window: output position o and window position w read input
   position o*stride + w*rhs_dilate;
5. contract feature and window dims per group (feature_group_count splits
   the input features, batch_group_count the input batch; either splits the
   output features group-major), summing in the accumulation type of
   `linalg.accumulation_dtype` and rounding once;
6. move the result to the output's dim_labels order.
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.errors import ExecutionError
from xlapy.hlo.attributes import Window, WindowDimension
from xlapy.hlo.evaluator.linalg import (
    accumulation_dtype,
    from_accumulation,
    to_accumulation,
)
from xlapy.hlo.evaluator.rules import rule
from xlapy.hlo.opcode import Opcode


def _dilate_and_pad(x: np.ndarray, axis: int, dim: WindowDimension) -> np.ndarray:
    """`x` with base dilation and (possibly negative) padding applied on `axis`."""
    size = x.shape[axis]
    dilated = (size - 1) * dim.base_dilation + 1 if size else 0
    low, high = max(dim.padding_low, 0), max(dim.padding_high, 0)
    shape = list(x.shape)
    shape[axis] = low + dilated + high
    full = np.zeros(shape, x.dtype)
    place = [slice(None)] * x.ndim
    place[axis] = slice(low, low + dilated, dim.base_dilation)
    full[tuple(place)] = x
    start = max(-dim.padding_low, 0)
    stop = max(start, shape[axis] - max(-dim.padding_high, 0))
    place[axis] = slice(start, stop)
    return full[tuple(place)]


def _output_size(padded: int, dim: WindowDimension) -> int:
    extent = (dim.size - 1) * dim.window_dilation + 1
    return 0 if padded < extent else (padded - extent) // dim.stride + 1


def _windows(x: np.ndarray, dims: tuple[WindowDimension, ...]) -> np.ndarray:
    """[N, C, S...] -> [N, C, OUT..., K...]: input[o*stride + w*dilation] at (o, w)."""
    n = len(dims)
    indices = []
    for i, dim in enumerate(dims):
        out = np.arange(_output_size(x.shape[2 + i], dim)) * dim.stride
        window = np.arange(dim.size) * dim.window_dilation
        index = out[:, None] + window[None, :]
        # Place this dim's (OUT_i, K_i) at axes i and n+i of a 2n-dim broadcast.
        shape = [1] * (2 * n)
        shape[i], shape[n + i] = index.shape
        indices.append(index.reshape(shape))
    return x[(slice(None), slice(None)) + tuple(indices)]


def _contract(patches: np.ndarray, kernel: np.ndarray, feature_groups: int,
              batch_groups: int) -> np.ndarray:
    """[N, C, OUT..., K...] x [O, I, K...] -> [N / batch_groups, O, OUT...]."""
    n_spatial = kernel.ndim - 2
    batch, features = patches.shape[:2]
    out_dims = patches.shape[2:2 + n_spatial]
    out_count, window_count = math.prod(out_dims), math.prod(kernel.shape[2:])
    groups = feature_groups * batch_groups
    out_features = kernel.shape[0]
    group_batch, group_features = batch // batch_groups, features // feature_groups
    group_out = out_features // groups
    p = patches.reshape(batch_groups, group_batch, feature_groups, group_features,
                        out_count, window_count)
    p = p.transpose(0, 2, 1, 4, 3, 5).reshape(groups, group_batch * out_count,
                                               group_features * window_count)
    k = kernel.reshape(groups, group_out, group_features * window_count).transpose(0, 2, 1)
    with np.errstate(all="ignore"):
        result = np.matmul(p, k)
    result = result.reshape(groups, group_batch, out_count, group_out).transpose(1, 0, 3, 2)
    return result.reshape((group_batch, out_features) + out_dims)


def _check_groups(lhs_batch: int, lhs_features: int, kernel_in: int, kernel_out: int,
                  feature_groups: int, batch_groups: int) -> None:
    if feature_groups < 1 or batch_groups < 1:
        raise ExecutionError("feature_group_count and batch_group_count must be positive")
    if feature_groups > 1 and batch_groups > 1:
        raise ExecutionError("feature_group_count and batch_group_count cannot both be > 1")
    if lhs_features % feature_groups or lhs_features // feature_groups != kernel_in:
        raise ExecutionError(f"input features {lhs_features} / feature_group_count "
                             f"{feature_groups} must equal kernel input features {kernel_in}")
    if lhs_batch % batch_groups:
        raise ExecutionError(f"input batch {lhs_batch} is not a multiple of "
                             f"batch_group_count {batch_groups}")
    if kernel_out % (feature_groups * batch_groups):
        raise ExecutionError(f"kernel output features {kernel_out} are not a multiple of "
                             f"the group count {feature_groups * batch_groups}")


@rule(Opcode.CONVOLUTION)
def convolution(instruction, operands, evaluator):
    """XLA's convolution with any dim_labels and window; see the module docstring."""
    lhs, rhs = operands
    dnums = instruction.attr("dim_labels")
    if dnums is None:
        raise ExecutionError(f"{instruction.name}: convolution needs dim_labels")
    n_spatial = len(dnums.input_spatial_dimensions)
    kernel_sizes = [rhs.shape[d] for d in dnums.kernel_spatial_dimensions]
    window = instruction.attr("window") or Window(())
    dims = window.dimensions or tuple(WindowDimension(size) for size in kernel_sizes)
    if len(dims) != n_spatial or [d.size for d in dims] != kernel_sizes:
        raise ExecutionError(f"{instruction.name}: window sizes {[d.size for d in dims]} "
                             f"do not match the kernel's spatial sizes {kernel_sizes}")
    if any(d.size < 1 or d.stride < 1 or d.base_dilation < 1 or d.window_dilation < 1
           for d in dims):
        raise ExecutionError(f"{instruction.name}: window sizes, strides and dilations "
                             "must be positive")
    feature_groups = int(instruction.attr("feature_group_count", 1))
    batch_groups = int(instruction.attr("batch_group_count", 1))
    _check_groups(lhs.shape[dnums.input_batch_dimension],
                  lhs.shape[dnums.input_feature_dimension],
                  rhs.shape[dnums.kernel_input_feature_dimension],
                  rhs.shape[dnums.kernel_output_feature_dimension],
                  feature_groups, batch_groups)

    element_type = instruction.shape.element_type
    dtype = accumulation_dtype(element_type)
    x = to_accumulation(lhs, dtype).transpose(
        (dnums.input_batch_dimension, dnums.input_feature_dimension)
        + tuple(dnums.input_spatial_dimensions))
    kernel = to_accumulation(rhs, dtype).transpose(
        (dnums.kernel_output_feature_dimension, dnums.kernel_input_feature_dimension)
        + tuple(dnums.kernel_spatial_dimensions))
    reversed_axes = tuple(2 + i for i, d in enumerate(dims) if d.window_reversal)
    if reversed_axes:
        kernel = np.flip(kernel, axis=reversed_axes)
    for i, dim in enumerate(dims):
        x = _dilate_and_pad(x, 2 + i, dim)
    result = _contract(_windows(x, dims), kernel, feature_groups, batch_groups)

    out_order = ((dnums.output_batch_dimension, dnums.output_feature_dimension)
                 + tuple(dnums.output_spatial_dimensions))
    out_dims = instruction.shape.dimensions
    expected = tuple(out_dims[d] for d in out_order) if len(out_dims) == n_spatial + 2 else ()
    if result.shape != expected:
        raise ExecutionError(f"{instruction.name}: convolution computes "
                             f"[batch, feature, spatial...] = {list(result.shape)}, but the "
                             f"result shape {instruction.shape.to_text(False)} says "
                             f"{list(expected)}")
    return from_accumulation(result.transpose(np.argsort(out_order)), element_type)
