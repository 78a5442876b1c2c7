"""Shape rules of linear algebra: dot, convolution, fft, cholesky,
triangular-solve and the three batch-norm ops.

dot and convolution may declare a wider result element type than their
operands (JAX's preferred_element_type, e.g. bf16 x bf16 -> f32): given the
declared shape, the rules take its element type when XLA would (never a
narrower integer type).
"""

from __future__ import annotations

from xlapy.hlo.attributes import ConvolutionDimensionNumbers, FftType, Window
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.hlo.shape_inference.query import Query, array, braces, rule, text
from xlapy.hlo.shape_inference.reductions import window_output

Op = Opcode
P = PrimitiveType


def _higher_precision(a: PrimitiveType, b: PrimitiveType) -> PrimitiveType:
    """The operand type a mixed-type dot computes in: floating over integral, wider
    over narrower, lhs on a tie (XLA's HigherPrecisionElementType)."""
    return max(a, b, key=lambda t: (t.is_floating_or_complex, t.is_complex, t.bit_width))


def result_type(q: Query, lhs: Shape, rhs: Shape) -> PrimitiveType:
    """The operands' type, or the declared (preferred) type where XLA allows it."""
    inferred = _higher_precision(lhs.element_type, rhs.element_type)
    if q.declared is None or not q.declared.is_array:
        return inferred
    preferred = q.declared.element_type
    if (preferred is not inferred and not inferred.is_float
            and preferred.bit_width < inferred.bit_width):
        q.fail(f"the declared result type {preferred.value} is narrower than the operand "
               f"type {inferred.value}")
    return preferred


def _check_dims(q: Query, side: str, dims, rank: int, name: str) -> None:
    for d in dims:
        if not 0 <= d < rank:
            q.fail(f"{side}_{name}={braces(dims)} holds {d}, out of range for the {side} "
                   f"of rank {rank}")


@rule(Op.DOT)
def _dot(q: Query) -> Shape:
    """Result dims: batch dims (in lhs order), lhs free dims, rhs free dims."""
    q.count(2)
    lhs, rhs = q.array(0, "the lhs"), q.array(1, "the rhs")
    lhs_contracting = q.integers("lhs_contracting_dims", ())
    rhs_contracting = q.integers("rhs_contracting_dims", ())
    lhs_batch = q.integers("lhs_batch_dims", ())
    rhs_batch = q.integers("rhs_batch_dims", ())
    for side, shape, contracting, batch in (("lhs", lhs, lhs_contracting, lhs_batch),
                                            ("rhs", rhs, rhs_contracting, rhs_batch)):
        _check_dims(q, side, contracting, shape.rank, "contracting_dims")
        _check_dims(q, side, batch, shape.rank, "batch_dims")
        if len(set(contracting + batch)) != len(contracting + batch):
            q.fail(f"{side} dimension numbers repeat a dimension: contracting "
                   f"{braces(contracting)}, batch {braces(batch)}")
    for kind, lhs_dims, rhs_dims in (("contracting", lhs_contracting, rhs_contracting),
                                     ("batch", lhs_batch, rhs_batch)):
        if len(lhs_dims) != len(rhs_dims):
            q.fail(f"lhs_{kind}_dims={braces(lhs_dims)} and rhs_{kind}_dims="
                   f"{braces(rhs_dims)} must have equal lengths")
        for a, b in zip(lhs_dims, rhs_dims):
            if lhs.dimensions[a] != rhs.dimensions[b]:
                q.fail(f"lhs {kind} dimension {a} (size {lhs.dimensions[a]}) does not match "
                       f"rhs {kind} dimension {b} (size {rhs.dimensions[b]})")
    dims = [lhs.dimensions[d] for d in lhs_batch]
    dims += [s for d, s in enumerate(lhs.dimensions) if d not in lhs_contracting + lhs_batch]
    dims += [s for d, s in enumerate(rhs.dimensions) if d not in rhs_contracting + rhs_batch]
    return array(result_type(q, lhs, rhs), dims)


def _check_permutation(q: Query, dnums: ConvolutionDimensionNumbers, rank: int) -> None:
    parts = (
        ("input", [dnums.input_batch_dimension, dnums.input_feature_dimension,
                   *dnums.input_spatial_dimensions]),
        ("kernel", [dnums.kernel_input_feature_dimension,
                    dnums.kernel_output_feature_dimension, *dnums.kernel_spatial_dimensions]),
        ("output", [dnums.output_batch_dimension, dnums.output_feature_dimension,
                    *dnums.output_spatial_dimensions]),
    )
    for part, dims in parts:
        if sorted(dims) != list(range(rank)):
            q.fail(f"dim_labels={dnums.to_text()}: the {part} dimensions must name each of "
                   f"0..{rank - 1} once")


@rule(Op.CONVOLUTION)
def _convolution(q: Query) -> Shape:
    q.count(2)
    lhs, rhs = q.array(0, "the input (lhs)"), q.array(1, "the kernel (rhs)")
    dnums = q.typed("dim_labels", ConvolutionDimensionNumbers)
    window = q.typed("window", Window, Window(()))
    feature_groups = q.integer("feature_group_count", 1)
    batch_groups = q.integer("batch_group_count", 1)
    spatial = len(dnums.input_spatial_dimensions)
    if len(dnums.kernel_spatial_dimensions) != spatial or len(
            dnums.output_spatial_dimensions) != spatial:
        q.fail(f"dim_labels={dnums.to_text()} must give input, kernel and output the same "
               f"number of spatial dimensions")
    for role, shape in (("input", lhs), ("kernel", rhs)):
        if shape.rank != spatial + 2:
            q.fail(f"the {role} {text(shape)} must have rank {spatial + 2} for "
                   f"dim_labels={dnums.to_text()}")
    _check_permutation(q, dnums, spatial + 2)
    if len(window.dimensions) != spatial:
        q.fail(f"window {window.to_text()} has {len(window.dimensions)} dimensions but the "
               f"convolution has {spatial} spatial dimensions")
    if feature_groups <= 0 or batch_groups <= 0:
        q.fail(f"feature_group_count={feature_groups} and batch_group_count={batch_groups} "
               f"must be positive")
    if feature_groups > 1 and batch_groups > 1:
        q.fail("feature_group_count and batch_group_count cannot both exceed 1")

    batch = lhs.dimensions[dnums.input_batch_dimension]
    in_features = lhs.dimensions[dnums.input_feature_dimension]
    kernel_in = rhs.dimensions[dnums.kernel_input_feature_dimension]
    kernel_out = rhs.dimensions[dnums.kernel_output_feature_dimension]
    if in_features % feature_groups or in_features // feature_groups != kernel_in:
        q.fail(f"input features {in_features} / feature_group_count {feature_groups} must "
               f"equal the kernel's input features {kernel_in}")
    if kernel_out % feature_groups:
        q.fail(f"kernel output features {kernel_out} must be divisible by "
               f"feature_group_count {feature_groups}")
    if kernel_out % batch_groups:
        q.fail(f"kernel output features {kernel_out} must be divisible by "
               f"batch_group_count {batch_groups}")
    if batch % batch_groups:
        q.fail(f"input batch {batch} must be divisible by batch_group_count {batch_groups}")
    kernel_spatial = [rhs.dimensions[d] for d in dnums.kernel_spatial_dimensions]
    window_sizes = [w.size for w in window.dimensions]
    if kernel_spatial != window_sizes:
        q.fail(f"window sizes {'x'.join(map(str, window_sizes))} do not match the kernel's "
               f"spatial dimensions {'x'.join(map(str, kernel_spatial))} ({text(rhs)})")
    spatial_out = window_output(
        q, tuple(lhs.dimensions[d] for d in dnums.input_spatial_dimensions), window)
    dims = [0] * (spatial + 2)
    dims[dnums.output_batch_dimension] = batch // batch_groups
    dims[dnums.output_feature_dimension] = kernel_out
    for d, size in zip(dnums.output_spatial_dimensions, spatial_out):
        dims[d] = size
    return array(result_type(q, lhs, rhs), dims)


@rule(Op.FFT)
def _fft(q: Query) -> Shape:
    """FFT/IFFT: complex -> same; RFFT: f32/f64 -> c64/c128 with the last dim n//2+1;
    IRFFT: complex -> real with the last dim fft_length[-1]."""
    q.count(1)
    operand = q.array(0)
    kind = q.typed("fft_type", FftType)
    lengths = q.integers("fft_length")
    if not 1 <= len(lengths) <= 3:
        q.fail(f"fft_length={braces(lengths)} must have 1 to 3 entries")
    if operand.rank < len(lengths):
        q.fail(f"a rank-{len(lengths)} FFT needs an operand of rank >= {len(lengths)}, "
               f"got {text(operand)}")
    element = operand.element_type
    inner = list(operand.dimensions[operand.rank - len(lengths):])
    dims = list(operand.dimensions)
    if kind is FftType.RFFT:
        if element not in (P.F32, P.F64):
            q.fail(f"RFFT needs an f32 or f64 operand, got {element.value}")
        if inner != list(lengths):
            q.fail(f"RFFT needs innermost dimensions {braces(lengths)} (fft_length), "
                   f"got {text(operand)}")
        if lengths[-1]:
            dims[-1] = lengths[-1] // 2 + 1
        return array(P.C64 if element is P.F32 else P.C128, dims)
    if not element.is_complex:
        q.fail(f"{kind.value} needs a complex operand, got {element.value}")
    if kind is FftType.IRFFT:
        expected = list(lengths[:-1]) + [lengths[-1] // 2 + 1]
        if inner[:-1] != expected[:-1] or (inner[-1] != expected[-1] and (
                inner[-1] or lengths[-1])):
            q.fail(f"IRFFT with fft_length={braces(lengths)} needs innermost dimensions "
                   f"{braces(expected)}, got {text(operand)}")
        dims[-1] = lengths[-1]
        return array(element.component_type, dims)
    if inner != list(lengths):
        q.fail(f"{kind.value} needs innermost dimensions {braces(lengths)} (fft_length), "
               f"got {text(operand)}")
    return operand.without_layout()


def _check_square(q: Query, a: Shape, role: str) -> None:
    if not a.element_type.is_floating_or_complex:
        q.fail(f"{role} must be floating-point or complex, got {a.element_type.value}")
    if a.rank < 2:
        q.fail(f"{role} {text(a)} must have rank >= 2")
    if a.dimensions[-1] != a.dimensions[-2]:
        q.fail(f"the two minor dimensions of {role} {text(a)} must be equal (square matrices)")


@rule(Op.CHOLESKY)
def _cholesky(q: Query) -> Shape:
    q.count(1)
    a = q.array(0, "'a'")
    _check_square(q, a, "'a'")
    return a.without_layout()


@rule(Op.TRIANGULAR_SOLVE)
def _triangular_solve(q: Query) -> Shape:
    """Solves op(a) x = b (left_side) or x op(a) = b; the result has b's shape."""
    q.count(2)
    a, b = q.array(0, "'a'"), q.array(1, "'b'")
    _check_square(q, a, "'a'")
    if b.element_type is not a.element_type:
        q.fail(f"'b' has element type {b.element_type.value} but 'a' has {a.element_type.value}")
    if b.rank != a.rank:
        q.fail(f"'b' {text(b)} must have the rank of 'a' {text(a)}")
    left_side = q.flag("left_side", False)
    shared = b.dimensions[-2] if left_side else b.dimensions[-1]
    if a.dimensions[-1] != shared:
        q.fail(f"'a' {text(a)} and 'b' {text(b)} do not share a dimension "
               f"(left_side={str(left_side).lower()})")
    if a.dimensions[:-2] != b.dimensions[:-2]:
        q.fail(f"the batch dimensions of 'a' {text(a)} and 'b' {text(b)} differ")
    return b.without_layout()


def _batch_norm(q: Query, roles: tuple[str, ...]) -> tuple[Shape, int]:
    """Checks operand 0 (float, rank >= 1) and per-feature rank-1 operands named in
    `roles`; the feature dimension is `feature_index`."""
    q.count(len(roles) + 1)
    operand = q.array(0)
    feature_index = q.integer("feature_index")
    if not operand.element_type.is_float:
        q.fail(f"the operand must be floating-point, got {operand.element_type.value}")
    if not 0 <= feature_index < operand.rank:
        q.fail(f"feature_index={feature_index} is out of range for the operand "
               f"{text(operand)}")
    features = operand.dimensions[feature_index]
    for i, role in enumerate(roles, 1):
        shape = q.array(i, f"{role} (operand {i})")
        if shape.element_type is not operand.element_type:
            q.fail(f"{role} (operand {i}) has element type {shape.element_type.value} but "
                   f"the operand has {operand.element_type.value}")
        if role == "grad_output":
            if shape.dimensions != operand.dimensions:
                q.fail(f"grad_output {text(shape)} must have the operand's shape "
                       f"{text(operand)}")
        elif shape.dimensions != (features,):
            q.fail(f"{role} (operand {i}) has shape {text(shape)}; it must be rank 1 with "
                   f"the feature count {features}")
    return operand, features


@rule(Op.BATCH_NORM_TRAINING)
def _batch_norm_training(q: Query) -> Shape:
    """(operand, scale, offset) -> (normalized, batch mean, batch variance)."""
    operand, features = _batch_norm(q, ("scale", "offset"))
    stats = array(operand.element_type, (features,))
    return Shape.tuple([operand.without_layout(), stats, stats])


@rule(Op.BATCH_NORM_INFERENCE)
def _batch_norm_inference(q: Query) -> Shape:
    operand, _ = _batch_norm(q, ("scale", "offset", "mean", "variance"))
    return operand.without_layout()


@rule(Op.BATCH_NORM_GRAD)
def _batch_norm_grad(q: Query) -> Shape:
    """(operand, scale, mean, variance, grad_output) -> (grad operand, grad scale,
    grad offset)."""
    operand, features = _batch_norm(q, ("scale", "mean", "variance", "grad_output"))
    stats = array(operand.element_type, (features,))
    return Shape.tuple([operand.without_layout(), stats, stats])


@rule(Op.RAGGED_DOT, Op.SCALED_DOT, declared=True)
def _declared_dot(q: Query) -> Shape:
    """Dimension numbers of these dots are kept as raw text; trust the declared shape."""
    q.arrays()
    return q.declared_array("the result of this dot is").without_layout()
