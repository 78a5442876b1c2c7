"""Lowerings of StableHLO's array ops: constants, conversions, comparisons,
shape and data movement, gather/scatter's gather, dot and convolution, tuples,
random bits and custom calls. Each maps the generic form's attributes onto one
builder call (or a few), with XLA's semantics, which StableHLO shares.
"""

from __future__ import annotations

from xlapy.hlo.attributes import (
    ConvolutionDimensionNumbers,
    FftType,
    Precision,
    RngAlgorithm,
    TriangularSolveTranspose,
    Window,
    WindowDimension,
)
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.shape import Shape
from xlapy.stablehlo.attributes import Dense, Struct, to_numpy
from xlapy.stablehlo.context import OpContext

H = HloInstruction


def constant(ctx: OpContext) -> list[H]:
    ctx.arity(0)
    value = ctx.attr("value")
    if not isinstance(value, Dense):
        raise ctx.error(f"expected a dense<...> value, got {value!r}")
    shape = ctx.result()
    try:
        array = to_numpy(value, value.shape or shape)
    except ValueError as e:
        raise ctx.emitter.error(f"{ctx.op.name}: {e}", value.offset or ctx.op.pos) from e
    return [ctx.b.constant(array, shape.element_type)]


def iota(ctx: OpContext) -> list[H]:
    ctx.arity(0)
    return [ctx.b.iota(ctx.result(), ctx.int("iota_dimension"))]


def convert(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    return [ctx.b.convert(ctx.args[0], ctx.result().element_type)]


def bitcast_convert(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    return [ctx.b.bitcast_convert(ctx.args[0], ctx.result().element_type)]


def compare(ctx: OpContext) -> list[H]:
    ctx.arity(2)
    kind = ctx.word("compare_type", None)
    return [ctx.b.compare(*ctx.args, ctx.word("comparison_direction"), kind)]


def select(ctx: OpContext) -> list[H]:
    ctx.arity(3)
    return [ctx.b.select(*ctx.args)]


def clamp(ctx: OpContext) -> list[H]:
    ctx.arity(3)
    return [ctx.b.clamp(*ctx.args)]


def reduce_precision(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    return [ctx.b.reduce_precision(ctx.args[0], ctx.int("exponent_bits"),
                                   ctx.int("mantissa_bits"))]


# -- shapes and data movement -------------------------------------------------------------
def broadcast_in_dim(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    return [ctx.b.broadcast(ctx.args[0], ctx.result().dimensions,
                            ctx.ints("broadcast_dimensions"))]


def reshape(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    return [ctx.b.reshape(ctx.args[0], ctx.result().dimensions)]


def transpose(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    return [ctx.b.transpose(ctx.args[0], ctx.ints("permutation"))]


def reverse(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    return [ctx.b.reverse(ctx.args[0], ctx.ints("dimensions"))]


def slice_(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    starts = ctx.ints("start_indices")
    return [ctx.b.slice(ctx.args[0], starts, ctx.ints("limit_indices"),
                        ctx.ints("strides", (1,) * len(starts)))]


def dynamic_slice(ctx: OpContext) -> list[H]:
    return [ctx.b.dynamic_slice(ctx.args[0], ctx.args[1:], ctx.ints("slice_sizes"))]


def dynamic_update_slice(ctx: OpContext) -> list[H]:
    if len(ctx.args) < 2:
        raise ctx.error("expects an operand, an update and start indices")
    return [ctx.b.dynamic_update_slice(ctx.args[0], ctx.args[1], ctx.args[2:])]


def concatenate(ctx: OpContext) -> list[H]:
    return [ctx.b.concatenate(ctx.args, ctx.int("dimension"))]


def pad(ctx: OpContext) -> list[H]:
    ctx.arity(2)
    low, high = ctx.ints("edge_padding_low"), ctx.ints("edge_padding_high")
    interior = ctx.ints("interior_padding", (0,) * len(low))
    return [ctx.b.pad(ctx.args[0], ctx.args[1], list(zip(low, high, interior)))]


def get_dimension_size(ctx: OpContext) -> list[H]:
    """Shapes are static in HLO: the size is a constant."""
    ctx.arity(1)
    size = ctx.args[0].shape.dimensions[ctx.int("dimension")]
    return [ctx.b.constant(size, ctx.result().element_type)]


def gather(ctx: OpContext) -> list[H]:
    ctx.arity(2)
    numbers = ctx.attr("dimension_numbers")
    if not isinstance(numbers, Struct):
        raise ctx.error(f"dimension_numbers must be #stablehlo.gather<...>, got {numbers!r}")
    dims = ctx.struct_ints(numbers, ("offset_dims", "collapsed_slice_dims",
                                       "operand_batching_dims", "start_indices_batching_dims",
                                       "start_index_map"))
    return [ctx.b.gather(*ctx.args, **dims,
                         index_vector_dim=int(numbers.fields.get("index_vector_dim", 0)),
                         slice_sizes=ctx.ints("slice_sizes"),
                         indices_are_sorted=ctx.bool("indices_are_sorted"))]


# -- dot and convolution ------------------------------------------------------------------
def _precision(ctx: OpContext):
    config = ctx.attr("precision_config", None)
    if not config:
        return None
    if not isinstance(config, list):
        raise ctx.error(f"precision_config must be a list, got {config!r}")
    return tuple(Precision[getattr(p, "value", p)] for p in config)


def _preferred(ctx: OpContext):
    element = ctx.result().element_type
    return None if element is ctx.args[0].shape.element_type else element


def dot_general(ctx: OpContext) -> list[H]:
    ctx.arity(2)
    numbers = ctx.attr("dot_dimension_numbers", Struct("dot"))
    if not isinstance(numbers, Struct):
        raise ctx.error(f"dot_dimension_numbers must be #stablehlo.dot<...>, got {numbers!r}")
    dims = ctx.struct_ints(numbers, ("lhs_batching_dimensions", "rhs_batching_dimensions",
                                       "lhs_contracting_dimensions",
                                       "rhs_contracting_dimensions"))
    return [ctx.b.dot(*ctx.args, dims["lhs_contracting_dimensions"],
                      dims["rhs_contracting_dimensions"], dims["lhs_batching_dimensions"],
                      dims["rhs_batching_dimensions"], precision=_precision(ctx),
                      preferred_element_type=_preferred(ctx))]


def dot(ctx: OpContext) -> list[H]:
    """stablehlo.dot: vector·vector, matrix·vector, matrix·matrix."""
    ctx.arity(2)
    lhs_rank = ctx.args[0].shape.rank
    return [ctx.b.dot(*ctx.args, (lhs_rank - 1,), (0,), precision=_precision(ctx),
                      preferred_element_type=_preferred(ctx))]


def convolution(ctx: OpContext) -> list[H]:
    ctx.arity(2)
    numbers = ctx.attr("dimension_numbers")
    if not isinstance(numbers, Struct) or "labels" not in numbers.fields:
        raise ctx.error(f"dimension_numbers must be [b, 0, 1, f]x[...]->[...], got {numbers!r}")
    labels = ConvolutionDimensionNumbers.from_text(numbers.fields["labels"])
    kernel = ctx.args[1].shape
    sizes = [kernel.dimensions[d] for d in labels.kernel_spatial_dimensions]
    n = len(sizes)
    strides = ctx.ints("window_strides", (1,) * n)
    padding = ctx.pairs("padding", n)
    lhs = ctx.ints("lhs_dilation", (1,) * n)
    rhs = ctx.ints("rhs_dilation", (1,) * n)
    reversal = ctx.bools("window_reversal", n)
    if not all(len(v) == n for v in (strides, lhs, rhs)):
        raise ctx.error(f"window attributes must each have {n} entries")
    window = Window(tuple(
        WindowDimension(size, stride, lo, hi, rd, ld, rev)
        for size, stride, (lo, hi), ld, rd, rev in zip(sizes, strides, padding, lhs, rhs,
                                                       reversal)))
    return [ctx.b.convolution(*ctx.args, window, labels,
                              feature_group_count=ctx.int("feature_group_count", 1),
                              batch_group_count=ctx.int("batch_group_count", 1),
                              precision=_precision(ctx), preferred_element_type=_preferred(ctx))]


# -- tuples, random bits, linear algebra, custom calls ------------------------------------
def tuple_(ctx: OpContext) -> list[H]:
    return [ctx.b.tuple(ctx.args)]


def get_tuple_element(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    return [ctx.b.get_tuple_element(ctx.args[0], ctx.int("index"))]


def optimization_barrier(ctx: OpContext) -> list[H]:
    if len(ctx.args) == 1:
        return [ctx.b.opt_barrier(ctx.args[0])]
    return ctx.unpack(ctx.b.opt_barrier(ctx.b.tuple(ctx.args)))


def rng_bit_generator(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    algorithm = RngAlgorithm[ctx.word("rng_algorithm", "DEFAULT")]
    return ctx.unpack(ctx.b.rng_bit_generator(ctx.args[0], ctx.result(1), algorithm))


def after_all(ctx: OpContext) -> list[H]:
    return [ctx.b.after_all(ctx.args)]


def fft(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    return [ctx.b.fft(ctx.args[0], FftType[ctx.word("fft_type")], ctx.ints("fft_length"))]


def cholesky(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    return [ctx.b.cholesky(ctx.args[0], ctx.bool("lower"))]


def triangular_solve(ctx: OpContext) -> list[H]:
    ctx.arity(2)
    return [ctx.b.triangular_solve(
        *ctx.args, left_side=ctx.bool("left_side"), lower=ctx.bool("lower"),
        unit_diagonal=ctx.bool("unit_diagonal"),
        transpose_a=TriangularSolveTranspose[ctx.word("transpose_a", "NO_TRANSPOSE")])]


_IDENTITY_TARGETS = frozenset({"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape",
                               "annotate_device_placement", "X64Combine"})
"""Custom calls that only annotate: with one device each returns its operand."""


def _lapack_potrf(ctx: OpContext) -> list[H]:
    """JAX's CPU Cholesky (`lapack_spotrf_ffi`...): (factor, info) as HLO's cholesky and
    info = 0 (HLO's cholesky reports a failure as NaNs, which JAX's checks also catch)."""
    ctx.arity(1)
    config = ctx.attr("mhlo.backend_config", {})
    uplo = config.get("uplo", 76) if isinstance(config, dict) else 76
    factor = ctx.b.cholesky(ctx.args[0], lower=int(getattr(uplo, "value", uplo)) == ord("L"))
    info = ctx.result(1)
    zeros = ctx.b.constant(0, info.element_type)
    return [factor, ctx.b.broadcast(zeros, info.dimensions, ())]


_LAPACK = {f"lapack_{t}potrf_ffi": _lapack_potrf for t in "sdcz"}
"""LAPACK custom calls JAX's CPU lowering emits, as HLO ops."""


def custom_call(ctx: OpContext) -> list[H]:
    target = ctx.attr("call_target_name")
    target = getattr(target, "name", target)
    if not isinstance(target, str):
        raise ctx.error(f"call_target_name must be a string, got {target!r}")
    if target in _IDENTITY_TARGETS and len(ctx.args) == 1 and ctx.op.result_count == 1:
        return [ctx.args[0]]
    if target in _LAPACK:
        return _LAPACK[target](ctx)
    types = ctx.op.result_types or []
    shape = types[0] if len(types) == 1 else Shape.tuple(types)
    config = ctx.attr("backend_config", None)
    config_text = f'"{config}"' if isinstance(config, str) and config else None
    instruction = ctx.b.custom_call(target, ctx.args, shape,
                                    has_side_effect=ctx.bool("has_side_effect"),
                                    backend_config=config_text)
    return ctx.unpack(instruction) if len(types) != 1 else [instruction]


TABLE = {
    "constant": constant, "iota": iota, "convert": convert, "bitcast_convert": bitcast_convert,
    "compare": compare, "select": select, "clamp": clamp, "reduce_precision": reduce_precision,
    "broadcast_in_dim": broadcast_in_dim, "reshape": reshape, "transpose": transpose,
    "reverse": reverse, "slice": slice_, "dynamic_slice": dynamic_slice,
    "dynamic_update_slice": dynamic_update_slice, "concatenate": concatenate, "pad": pad,
    "get_dimension_size": get_dimension_size, "gather": gather, "dot_general": dot_general,
    "dot": dot, "convolution": convolution, "tuple": tuple_,
    "get_tuple_element": get_tuple_element, "optimization_barrier": optimization_barrier,
    "rng_bit_generator": rng_bit_generator, "after_all": after_all, "create_token": after_all,
    "fft": fft, "cholesky": cholesky, "triangular_solve": triangular_solve,
    "custom_call": custom_call,
}

