"""`xlapy.lax` contractions: `dot_general` (and `dot`, `batch_matmul`) and
`conv_general_dilated` (and `conv`, `conv_with_general_padding`,
`conv_transpose`), with jax.lax's signatures, dimension numbers, padding
strings and precision spellings.

Each is one HLO `dot` or `convolution`. The result dtype is
`preferred_element_type` when given (declared as the instruction's element
type, e.g. bf16 x bf16 -> f32, s8 x s8 -> s32), else the operands' dtype.
`dot_general` accepts operands of different dtypes as JAX does: the result
takes XLA's higher-precision type and both operands are converted to it
first (what JAX's CPU and GPU lowerings emit).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from xlapy.core import dtypes
from xlapy.core.array import Array
from xlapy.core.trace import as_array, bind, element_type
from xlapy.hlo.attributes import (
    ConvolutionDimensionNumbers,
    Precision,
    Window,
    WindowDimension,
)
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.lax._checks import (
    canonical_axis,
    common_dtype,
    inferred_shape,
    shape_error,
    static_int,
    static_ints,
)
from xlapy.lax.elementwise import convert_element_type
from xlapy.lax.reshaping import rev, transpose

# -- precision ---------------------------------------------------------------------------
_PRECISION_NAMES = {
    "default": Precision.DEFAULT, "fastest": Precision.DEFAULT, "bfloat16": Precision.DEFAULT,
    "high": Precision.HIGH, "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST,
}


def _one_precision(p) -> Precision:
    if isinstance(p, Precision):
        return p
    if isinstance(p, str) and p.lower() in _PRECISION_NAMES:
        return _PRECISION_NAMES[p.lower()]
    raise ValueError(f"precision {p!r} must be None, a lax.Precision, one of "
                     f"{sorted(_PRECISION_NAMES)}, or a pair of those")


def canonicalize_precision(precision) -> tuple[Precision, Precision] | None:
    """(lhs, rhs) precisions from JAX's spellings, or None for the default."""
    if precision is None:
        return None
    if isinstance(precision, (list, tuple)):
        if len(precision) != 2:
            raise ValueError(f"a precision pair needs two entries, got {precision!r}")
        return _one_precision(precision[0]), _one_precision(precision[1])
    p = _one_precision(precision)
    return p, p


def _with_precision(attrs: dict, precision) -> dict:
    pair = canonicalize_precision(precision)
    if pair is not None:
        attrs["operand_precision"] = pair
    return attrs


def _bit_width(dtype: np.dtype) -> int:
    return 1 if dtype.kind == "b" else dtype.itemsize * 8


def _declared(name: str, shape: Shape, result_dtype, preferred) -> Shape | None:
    """The shape to declare for a preferred element type, checked as XLA does."""
    if preferred is None:
        return None
    preferred = np.dtype(preferred)
    if preferred == result_dtype:
        return None
    if not dtypes.is_float(result_dtype) and _bit_width(preferred) < _bit_width(result_dtype):
        raise shape_error(name, f"preferred_element_type {preferred} must not be narrower than "
                                f"the operands' type {result_dtype}")
    return Shape.array(element_type(preferred), shape.dimensions)


# -- dot ---------------------------------------------------------------------------------
def _type_rank(dtype: np.dtype) -> tuple:
    """XLA's order of operand types for a mixed dot (HigherPrecisionElementType)."""
    real = np.dtype(dtypes.finfo(dtype).dtype) if dtypes.is_complex(dtype) else dtype
    floating = dtypes.is_float(real)
    info = dtypes.finfo(real) if floating else None
    return (dtypes.is_complex(dtype), info.maxexp if floating else -1,
            info.nmant if floating else -1, _bit_width(real), real.kind != "u")


def _dot_dtype(lhs: Array, rhs: Array) -> np.dtype:
    if lhs.dtype == rhs.dtype:
        return np.dtype(lhs.dtype)
    a, b = _type_rank(np.dtype(lhs.dtype)), _type_rank(np.dtype(rhs.dtype))
    if a == b:
        raise shape_error("dot_general", f"operand dtypes {lhs.dtype} and {rhs.dtype} have no "
                                         "common type")
    return np.dtype(lhs.dtype if a > b else rhs.dtype)


def _dims(dims, ndim: int, what: str) -> tuple[int, ...]:
    return tuple(canonical_axis(d, ndim, "dot_general") for d in
                 static_ints(dims, "dot_general", what))


def dot_general(lhs, rhs, dimension_numbers, precision=None,
                preferred_element_type=None) -> Array:
    """Contract `lhs` and `rhs` over `((lhs_contracting, rhs_contracting),
    (lhs_batch, rhs_batch))`. Result dimensions: batch, lhs free, rhs free."""
    lhs, rhs = as_array(lhs), as_array(rhs)
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise shape_error("dot_general", "dimension_numbers must be ((lhs_contracting, "
                                         "rhs_contracting), (lhs_batch, rhs_batch)), got "
                                         f"{dimension_numbers!r}") from None
    attrs = {}
    if len(lb) or len(rb):
        attrs["lhs_batch_dims"] = _dims(lb, lhs.ndim, "lhs batch dims")
    attrs["lhs_contracting_dims"] = _dims(lc, lhs.ndim, "lhs contracting dims")
    if len(lb) or len(rb):
        attrs["rhs_batch_dims"] = _dims(rb, rhs.ndim, "rhs batch dims")
    attrs["rhs_contracting_dims"] = _dims(rc, rhs.ndim, "rhs contracting dims")
    _with_precision(attrs, precision)
    weak = lhs.weak_type and rhs.weak_type
    result_dtype = _dot_dtype(lhs, rhs)
    if lhs.dtype != rhs.dtype:
        target = result_dtype if preferred_element_type is None else preferred_element_type
        lhs, rhs = convert_element_type(lhs, target), convert_element_type(rhs, target)
    shape = inferred_shape("dot_general", Opcode.DOT, [lhs, rhs], attrs)
    declared = _declared("dot_general", shape, result_dtype, preferred_element_type)
    return bind(Opcode.DOT, [lhs, rhs], attrs, shape=declared, weak_type=weak, name="dot_general")


def dot(lhs, rhs, precision=None, preferred_element_type=None, *,
        dimension_numbers=None) -> Array:
    """Vector/matrix products: `lhs`'s last dimension with `rhs`'s first (both of
    rank 1 or 2), or a general contraction given `dimension_numbers`."""
    lhs, rhs = as_array(lhs), as_array(rhs)
    if dimension_numbers is None:
        if not (1 <= lhs.ndim <= 2 and 1 <= rhs.ndim <= 2 and lhs.shape[-1] == rhs.shape[0]):
            raise shape_error("dot", f"incompatible shapes for dot: got {lhs.shape} and "
                                     f"{rhs.shape}; pass dimension_numbers for other "
                                     "contractions")
        dimension_numbers = (((lhs.ndim - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)


def batch_matmul(lhs, rhs, precision=None) -> Array:
    """Matrix products over the leading batch dimensions of two arrays of one rank."""
    lhs, rhs = as_array(lhs), as_array(rhs)
    if min(lhs.ndim, rhs.ndim) < 2:
        raise shape_error("batch_matmul", f"arguments must be at least 2-D, got shapes "
                                          f"{lhs.shape} and {rhs.shape}")
    if lhs.ndim != rhs.ndim:
        raise shape_error("batch_matmul", f"arguments must have the same rank, got shapes "
                                          f"{lhs.shape} and {rhs.shape}")
    batch = tuple(range(lhs.ndim - 2))
    return dot_general(lhs, rhs, (((lhs.ndim - 1,), (rhs.ndim - 2,)), (batch, batch)),
                       precision)


# -- convolution dimension numbers and padding -------------------------------------------
class ConvDimensionNumbers(NamedTuple):
    """Where each role lives: lhs_spec = (batch, feature, spatial...), rhs_spec =
    (out feature, in feature, spatial...), out_spec = (batch, feature, spatial...)."""

    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


def conv_general_permutations(dimension_numbers) -> tuple[tuple[int, ...], ...]:
    """The (lhs, rhs, out) specs of string dimension numbers such as ('NHWC',
    'HWIO', 'NHWC'); spatial dimensions are ordered as they appear in the rhs."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(pairs):
        spec = dimension_numbers[i]
        if not spec.count(a) == spec.count(b) == 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {spec}")
        if len(spec) != len(set(spec)):
            raise TypeError(f"convolution dimension_numbers[{i}] cannot repeat a character, "
                            f"got {spec}")
    spatial = [set(s) - set(p) for s, p in zip(dimension_numbers, pairs)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise TypeError("convolution dimension_numbers must each have the same spatial "
                        f"characters, got {tuple(dimension_numbers)}")

    def permutation(spec: str, pair: tuple[str, str]) -> tuple[int, ...]:
        dims = sorted((i for i, c in enumerate(spec) if c not in pair),
                      key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1]), *dims)

    return tuple(permutation(s, p) for s, p in zip(dimension_numbers, pairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """`dimension_numbers` (None for NCHW/OIHW/NCHW, three strings, or
    ConvDimensionNumbers) as ConvDimensionNumbers."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"convolution requires lhs and rhs of one rank, got shapes "
                        f"{tuple(lhs_shape)} and {tuple(rhs_shape)}")
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)) or len(dimension_numbers) != 3 or \
            not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError("convolution dimension_numbers must be None, three strings or "
                        f"ConvDimensionNumbers, got {dimension_numbers!r}")
    for i, spec in enumerate(dimension_numbers):
        if len(spec) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers[{i}] {spec!r} must have one letter "
                            f"per dimension of lhs and rhs of shapes {tuple(lhs_shape)} and "
                            f"{tuple(rhs_shape)}")
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


class PaddingType(enum.Enum):
    VALID = 1
    SAME = 2
    SAME_LOWER = 3


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int], padding) -> list[tuple[int, int]]:
    """(low, high) per spatial dimension for 'VALID' (none), 'SAME' (output size
    ceil(in / stride), an odd extra pad at the end) or 'SAME_LOWER' (at the start)."""
    if isinstance(padding, str):
        try:
            padding = PaddingType[padding.upper()]
        except KeyError:
            raise RuntimeError("Unrecognized padding type: expected 'VALID', 'SAME', or "
                               f"'SAME_LOWER', got {padding}.") from None
    if padding is PaddingType.VALID:
        return [(0, 0)] * len(in_shape)
    if padding not in (PaddingType.SAME, PaddingType.SAME_LOWER):
        raise TypeError(f"Unknown padding type: {padding}.")
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides):
        out = -(-int(size) // int(stride))
        total = max((out - 1) * int(stride) + int(window) - int(size), 0)
        small, large = total // 2, total - total // 2
        pads.append((small, large) if padding is PaddingType.SAME else (large, small))
    return pads


# -- convolution -------------------------------------------------------------------------
def _conv_labels(dnums: ConvDimensionNumbers) -> ConvolutionDimensionNumbers:
    lhs, rhs, out = (tuple(int(d) for d in spec) for spec in dnums)
    return ConvolutionDimensionNumbers(
        input_batch_dimension=lhs[0], input_feature_dimension=lhs[1],
        input_spatial_dimensions=lhs[2:],
        kernel_input_feature_dimension=rhs[1], kernel_output_feature_dimension=rhs[0],
        kernel_spatial_dimensions=rhs[2:],
        output_batch_dimension=out[0], output_feature_dimension=out[1],
        output_spatial_dimensions=out[2:])


def _conv_padding(padding, lhs_spatial, kernel_spatial, strides, lhs_dilation,
                  rhs_dilation) -> list[tuple[int, int]]:
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError("String padding is not implemented for transposed convolution "
                             "using this op. Please either exactly specify the required "
                             "padding or use conv_transpose.")
        effective = [(k - 1) * r + 1 for k, r in zip(kernel_spatial, rhs_dilation)]
        return padtype_to_pads(lhs_spatial, effective, strides, padding)
    try:
        pads = [(static_int(lo, "conv_general_dilated", "padding"),
                 static_int(hi, "conv_general_dilated", "padding")) for lo, hi in padding]
    except (TypeError, ValueError):
        raise ValueError("padding argument to conv_general_dilated should be a string or a "
                         f"sequence of (low, high) pairs, got {padding}") from None
    if len(pads) != len(lhs_spatial):
        raise shape_error("conv_general_dilated", f"padding {pads} needs one (low, high) pair "
                                                  f"per spatial dimension ({len(lhs_spatial)})")
    return pads


def _spatial_ints(values, n: int, what: str) -> tuple[int, ...]:
    result = (1,) * n if values is None else static_ints(values, "conv_general_dilated", what)
    if len(result) != n:
        raise shape_error("conv_general_dilated", f"{what} {result} needs one entry per "
                                                  f"spatial dimension ({n})")
    return result


def conv_general_dilated(lhs, rhs, window_strides: Sequence[int], padding,
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers=None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision=None,
                         preferred_element_type=None) -> Array:
    """XLA's convolution with strides, padding ('SAME', 'VALID', 'SAME_LOWER' or
    (low, high) pairs), input (lhs) and kernel (rhs) dilation, dimension numbers
    and feature/batch grouping."""
    lhs, rhs = common_dtype([as_array(lhs), as_array(rhs)], "conv_general_dilated")
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise shape_error("conv_general_dilated", f"lhs and rhs need one rank >= 2, got shapes "
                                                  f"{lhs.shape} and {rhs.shape}")
    dnums = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    n = lhs.ndim - 2
    strides = _spatial_ints(window_strides, n, "window_strides")
    lhs_dilation = _spatial_ints(lhs_dilation, n, "lhs_dilation")
    rhs_dilation = _spatial_ints(rhs_dilation, n, "rhs_dilation")
    lhs_spatial = [lhs.shape[d] for d in dnums.lhs_spec[2:]]
    kernel_spatial = [rhs.shape[d] for d in dnums.rhs_spec[2:]]
    pads = _conv_padding(padding, lhs_spatial, kernel_spatial, strides, lhs_dilation,
                         rhs_dilation)
    window = Window(tuple(
        WindowDimension(size=k, stride=s, padding_low=lo, padding_high=hi, window_dilation=rd,
                        base_dilation=ld)
        for k, s, (lo, hi), ld, rd in zip(kernel_spatial, strides, pads, lhs_dilation,
                                          rhs_dilation)))
    attrs = {"window": window} if n else {}
    attrs["dim_labels"] = _conv_labels(dnums)
    groups = static_int(feature_group_count, "conv_general_dilated", "feature_group_count")
    batch_groups = static_int(batch_group_count, "conv_general_dilated", "batch_group_count")
    if groups != 1:
        attrs["feature_group_count"] = groups
    if batch_groups != 1:
        attrs["batch_group_count"] = batch_groups
    _with_precision(attrs, precision)
    shape = inferred_shape("conv_general_dilated", Opcode.CONVOLUTION, [lhs, rhs], attrs)
    declared = _declared("conv_general_dilated", shape, np.dtype(lhs.dtype),
                         preferred_element_type)
    return bind(Opcode.CONVOLUTION, [lhs, rhs], attrs, shape=declared,
                name="conv_general_dilated")


def conv(lhs, rhs, window_strides: Sequence[int], padding, precision=None,
         preferred_element_type=None) -> Array:
    """`conv_general_dilated` in NCHW/OIHW/NCHW layout without dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides: Sequence[int], padding,
                              lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision=None,
                              preferred_element_type=None) -> Array:
    """`conv_general_dilated` in NCHW/OIHW/NCHW layout with dilations."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k: int, s: int, padding) -> tuple[int, int]:
    """(before, after) padding of the dilated input for a transposed convolution
    whose forward convolution used `padding`."""
    if padding == "SAME":
        total = k + s - 2
        before = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        before = k - 1
    elif isinstance(padding, tuple):
        pads = tuple(k - p - 1 for p in padding)
        before, total = pads[0], sum(pads)
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return before, total - before


_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                      4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides: Sequence[int], padding,
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers=None,
                   transpose_kernel: bool = False, precision=None,
                   preferred_element_type=None, use_consistent_padding: bool = False) -> Array:
    """The transposed ("fractionally strided") convolution, as jax.lax.conv_transpose:
    the input is dilated by `strides`; layouts default to TensorFlow's (NHWC, HWIO)."""
    lhs, rhs = as_array(lhs), as_array(rhs)
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise shape_error("conv_transpose", f"lhs and rhs need one rank >= 2, got shapes "
                                            f"{lhs.shape} and {rhs.shape}")
    if dimension_numbers is None:
        if lhs.ndim not in _TRANSPOSE_LAYOUTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_LAYOUTS[lhs.ndim]
    dnums = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    n = lhs.ndim - 2
    strides = static_ints(strides, "conv_transpose", "strides")
    rhs_dilation = (1,) * n if rhs_dilation is None else static_ints(
        rhs_dilation, "conv_transpose", "rhs_dilation")
    kernel = [rhs.shape[d] for d in dnums.rhs_spec[2:]]
    if use_consistent_padding or padding in ("SAME", "VALID"):
        per_dim = [padding] * n if isinstance(padding, str) else list(padding)
        pads = [_conv_transpose_padding((k - 1) * r + 1, s, p if isinstance(p, str) else tuple(p))
                for k, r, s, p in zip(kernel, rhs_dilation, strides, per_dim)]
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, dnums.rhs_spec[2:])
        perm = list(range(rhs.ndim))
        perm[dnums.rhs_spec[0]], perm[dnums.rhs_spec[1]] = dnums.rhs_spec[1], dnums.rhs_spec[0]
        rhs = transpose(rhs, perm)
    return conv_general_dilated(lhs, rhs, (1,) * n, pads, strides, rhs_dilation, dnums,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


__all__ = ["ConvDimensionNumbers", "PaddingType", "Precision", "batch_matmul",
           "conv", "conv_dimension_numbers", "conv_general_dilated",
           "conv_general_permutations", "conv_transpose", "conv_with_general_padding", "dot",
           "dot_general", "padtype_to_pads"]
