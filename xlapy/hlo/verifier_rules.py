"""Per-instruction rules of the HLO verifier: well-formed shapes and layouts,
operand counts, required attributes and their Python types, and the result
shape against the shape rule.

Shape rules, including the signatures of called computations (reducers,
comparators, loop bodies, branches, fused computations) and the checks of ops
whose result only the declared shape says (broadcast, reshape, convert...),
live in `xlapy.hlo.shape_inference`; `check_result_shape` hands every
instruction to its `check_shape`. The builder runs these same checks as it
adds each instruction.
"""

from __future__ import annotations

from xlapy.errors import ShapeError, VerifierError
from xlapy.hlo.attributes import (
    ATTRIBUTE_ENUMS,
    AttrKind,
    ConvolutionDimensionNumbers,
    IotaReplicaGroups,
    OpMetadata,
    PaddingConfig,
    Precision,
    RawAttribute,
    SliceRange,
    Window,
    attribute_kind,
)
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import VARIADIC, Opcode
from xlapy.hlo.shape import Shape
from xlapy.hlo.shape_inference import check_shape

Op = Opcode


# -- shapes ------------------------------------------------------------------------------
def shape_problem(shape) -> str:
    """Why `shape` is malformed (bad dims, a layout that is not a permutation), or ''."""
    if not isinstance(shape, Shape):
        return f"a {type(shape).__name__} is not a Shape"
    if not isinstance(shape.element_type, PrimitiveType):
        return f"element type {shape.element_type!r} is not a PrimitiveType"
    if shape.is_tuple:
        for i, sub in enumerate(shape.tuple_shapes):
            problem = shape_problem(sub)
            if problem:
                return f"tuple element {i}: {problem}"
        return ""
    if not shape.is_array:
        return ""
    if not all(isinstance(d, int) and d >= 0 for d in shape.dimensions):
        return f"dimensions {list(shape.dimensions)} must be ints >= 0"
    if _size_overflows(shape):
        return "its size in bytes may overflow int64 (as XLA's ValidateShape says)"
    if shape.dynamic_dimensions and len(shape.dynamic_dimensions) != shape.rank:
        return f"{len(shape.dynamic_dimensions)} dynamic-dimension flags for rank {shape.rank}"
    layout = shape.layout
    if layout is not None and sorted(layout.minor_to_major) != list(range(shape.rank)):
        return f"layout {layout} is not a permutation of 0..{shape.rank - 1}; minor_to_major " \
               "must list each dimension exactly once"
    return ""


def _size_overflows(shape: Shape) -> bool:
    """XLA's ValidateShapeSize: the running product of the dimensions, then of the
    element size, passes 2^63 - 1 (a 0 met first keeps it 0)."""
    size = 1
    for factor in (*shape.dimensions, shape.element_type.byte_size):
        size *= factor
        if size > _INT64_MAX:
            return True
    return False


_INT64_MAX = (1 << 63) - 1


# -- operand counts ----------------------------------------------------------------------
def check_operand_count(instruction: HloInstruction) -> None:
    """Fixed arities from the opcode table, and the rules of the variadic ops."""
    problem = _operand_count_problem(instruction)
    if problem:
        raise VerifierError(f"has {len(instruction.operands)} operands but {problem}",
                            instruction)


def _operand_count_problem(instruction: HloInstruction) -> str:
    op, n = instruction.opcode, len(instruction.operands)
    if op.arity != VARIADIC:
        return "" if n == op.arity else f"{op.value} takes {op.arity}"
    if op in (Op.REDUCE, Op.REDUCE_WINDOW):
        ok = n >= 2 and n % 2 == 0
        return "" if ok else f"{op.value} takes N inputs then N init values (an even number >= 2)"
    if op is Op.SCATTER:
        ok = n >= 3 and n % 2 == 1
        return "" if ok else "scatter takes N inputs, the indices, then N updates (2N+1)"
    if op is Op.CONDITIONAL:
        branches = _branches(instruction)
        if branches is None or n == 1 + len(branches):
            return ""
        return f"conditional takes the branch index plus one operand per branch ({len(branches)})"
    sliced = instruction.operands[0].shape if n else None
    if op in (Op.DYNAMIC_SLICE, Op.DYNAMIC_UPDATE_SLICE) and sliced is not None and sliced.is_array:
        fixed = 1 if op is Op.DYNAMIC_SLICE else 2
        rank = sliced.rank
        if n == fixed + rank:
            return ""
        return f"{op.value} takes {fixed} operand(s) plus one scalar start index per dimension " \
               f"of operand 0 (rank {rank}): {fixed + rank}"
    if op is Op.RNG:
        return "" if n == 2 else "rng takes 2 (the distribution's parameters)"
    if op in (Op.SORT, Op.CONCATENATE, Op.MAP, Op.ALL_REDUCE, Op.ALL_GATHER, Op.REDUCE_SCATTER,
              Op.ALL_TO_ALL, Op.COLLECTIVE_PERMUTE) and n == 0:
        return f"{op.value} takes at least 1"
    return ""


def _branches(instruction: HloInstruction) -> tuple | None:
    attrs = instruction.attrs
    if "branch_computations" in attrs:
        return attrs["branch_computations"]
    if "true_computation" in attrs and "false_computation" in attrs:
        return (attrs["true_computation"], attrs["false_computation"])
    return None


# -- attributes --------------------------------------------------------------------------
REQUIRED_ATTRIBUTES: dict[Opcode, tuple[str, ...]] = {
    Op.BROADCAST: ("dimensions",), Op.TRANSPOSE: ("dimensions",), Op.REVERSE: ("dimensions",),
    Op.CONCATENATE: ("dimensions",), Op.REDUCE: ("dimensions", "to_apply"),
    Op.SORT: ("dimensions", "to_apply"), Op.MAP: ("to_apply",), Op.CALL: ("to_apply",),
    Op.REDUCE_WINDOW: ("window", "to_apply"),
    Op.SELECT_AND_SCATTER: ("window", "select", "scatter"),
    Op.GATHER: ("offset_dims", "collapsed_slice_dims", "start_index_map", "index_vector_dim",
               "slice_sizes"),
    Op.SCATTER: ("update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
                "index_vector_dim", "to_apply"),
    Op.COMPARE: ("direction",), Op.GET_TUPLE_ELEMENT: ("index",), Op.FUSION: ("kind", "calls"),
    Op.WHILE: ("condition", "body"), Op.SLICE: ("slice",),
    Op.DYNAMIC_SLICE: ("dynamic_slice_sizes",), Op.PAD: ("padding",), Op.IOTA: ("iota_dimension",),
    Op.REDUCE_PRECISION: ("exponent_bits", "mantissa_bits"), Op.CONVOLUTION: ("dim_labels",),
    Op.CUSTOM_CALL: ("custom_call_target",), Op.ALL_REDUCE: ("to_apply",),
    Op.REDUCE_SCATTER: ("dimensions", "to_apply"), Op.ALL_GATHER: ("dimensions",),
    Op.COLLECTIVE_PERMUTE: ("source_target_pairs",), Op.RNG_BIT_GENERATOR: ("algorithm",),
    Op.RNG: ("distribution",), Op.FFT: ("fft_type", "fft_length"), Op.TOPK: ("k",),
    Op.BATCH_NORM_TRAINING: ("epsilon", "feature_index"),
    Op.BATCH_NORM_INFERENCE: ("epsilon", "feature_index"),
    Op.BATCH_NORM_GRAD: ("epsilon", "feature_index"),
    Op.GET_DIMENSION_SIZE: ("dimensions",), Op.SET_DIMENSION_SIZE: ("dimensions",),
}
"""Attributes without which an opcode means nothing (as XLA's parser requires them).
Conditional needs `branch_computations` or both `true_computation` and
`false_computation`, checked separately."""


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_ints(v) -> bool:
    return isinstance(v, tuple) and all(_is_int(x) for x in v)


def _tuple_of(cls):
    return lambda v: isinstance(v, tuple) and all(isinstance(x, cls) for x in v)


_KIND_CHECKS = {
    AttrKind.INT: (_is_int, "an int"),
    AttrKind.FLOAT: (lambda v: _is_int(v) or isinstance(v, float), "a float"),
    AttrKind.BOOL: (lambda v: isinstance(v, bool), "a bool"),
    AttrKind.STRING: (lambda v: isinstance(v, str), "a str"),
    AttrKind.INT_LIST: (_is_ints, "a tuple of ints"),
    AttrKind.INT_LIST_LIST: (lambda v: isinstance(v, tuple) and all(_is_ints(x) for x in v),
                             "a tuple of tuples of ints"),
    AttrKind.REPLICA_GROUPS: (
        lambda v: isinstance(v, IotaReplicaGroups) or (
            isinstance(v, tuple) and all(_is_ints(x) for x in v)),
        "a tuple of tuples of ints or an IotaReplicaGroups"),
    AttrKind.COMPUTATION: (lambda v: isinstance(v, HloComputation), "an HloComputation"),
    AttrKind.COMPUTATION_LIST: (_tuple_of(HloComputation), "a tuple of HloComputations"),
    AttrKind.WINDOW: (lambda v: isinstance(v, Window), "a Window"),
    AttrKind.DIM_LABELS: (lambda v: isinstance(v, ConvolutionDimensionNumbers),
                          "a ConvolutionDimensionNumbers"),
    AttrKind.SLICE: (_tuple_of(SliceRange), "a tuple of SliceRanges"),
    AttrKind.PADDING: (lambda v: isinstance(v, PaddingConfig), "a PaddingConfig"),
    AttrKind.PRECISION_LIST: (_tuple_of(Precision), "a tuple of Precisions"),
    # the parser keeps metadata with fields it does not read (profile_type={...}) raw
    AttrKind.METADATA: (lambda v: isinstance(v, (OpMetadata, RawAttribute)),
                        "an OpMetadata or a RawAttribute"),
    AttrKind.SHAPE_LIST: (_tuple_of(Shape), "a tuple of Shapes"),
    AttrKind.RAW: (lambda v: isinstance(v, RawAttribute), "a RawAttribute"),
}


def check_attributes(instruction: HloInstruction) -> None:
    """Required attributes are present and every attribute has the Python type that
    `attributes.attribute_kind` fixes for its name."""
    attrs = instruction.attrs
    if not isinstance(attrs, dict):
        raise VerifierError(f"attrs is a {type(attrs).__name__}, not a dict", instruction)
    for name in REQUIRED_ATTRIBUTES.get(instruction.opcode, ()):
        if name not in attrs:
            raise VerifierError(f"missing required attribute {name}", instruction)
    if instruction.opcode is Op.CONDITIONAL:
        _check_conditional_attributes(instruction)
    for name, value in attrs.items():
        if not isinstance(name, str):
            raise VerifierError(f"attribute name {name!r} is not a str", instruction)
        problem = _attribute_type_problem(instruction.opcode, name, value)
        if problem:
            raise VerifierError(f"attribute {name} must be {problem}, got "
                                f"{type(value).__name__} {value!r}", instruction)


def _check_conditional_attributes(instruction: HloInstruction) -> None:
    attrs = instruction.attrs
    has_pair = "true_computation" in attrs or "false_computation" in attrs
    if "branch_computations" in attrs:
        if has_pair:
            raise VerifierError("has both branch_computations and true/false_computation",
                                instruction)
        if not attrs["branch_computations"]:
            raise VerifierError("branch_computations is empty; a conditional needs a branch",
                                instruction)
        return
    for name in ("true_computation", "false_computation"):
        if name not in attrs:
            raise VerifierError(f"missing required attribute {name} (or branch_computations)",
                                instruction)


def _attribute_type_problem(opcode: Opcode, name: str, value) -> str:
    kind = attribute_kind(opcode.value, name)
    if kind is AttrKind.ENUM:
        enum_type = ATTRIBUTE_ENUMS.get(name)
        if enum_type is None or isinstance(value, enum_type):
            return ""
        return f"a {enum_type.__name__}"
    ok, expected = _KIND_CHECKS[kind]
    return "" if ok(value) else expected


# -- result shapes -----------------------------------------------------------------------
def check_result_shape(instruction: HloInstruction) -> None:
    """The declared shape agrees with the opcode's shape rule, which also checks the
    signatures of called computations against the call site. A ShapeError, or a
    crash inside shape inference, becomes a VerifierError naming the instruction."""
    shapes = [op.shape for op in instruction.operands]
    try:
        check_shape(instruction.opcode, shapes, instruction.attrs, instruction.shape)
    except ShapeError as e:
        raise VerifierError(f"shape check failed: {e}", instruction) from e
    except Exception as e:  # a bug in inference must not pass as a valid module
        raise VerifierError(f"shape inference raised {type(e).__name__}: {e}",
                            instruction) from e
