"""Typed values of instruction attributes, and the table of how each is spelled.

An instruction keeps its attributes in a dict keyed by XLA's own text names
(`dimensions`, `lhs_contracting_dims`, `window`, `to_apply`, ...), in the order
they were given, so text round-trips. This module fixes the Python value of
each name: plain ints, bools and tuples where XLA prints those, small frozen
dataclasses for the structured ones (windows, padding, slices, convolution
dimension labels), enums for the named choices, `HloComputation` objects for
called computations, and `RawAttribute` for anything kept only to print back.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from xlapy.hlo.shape import Shape


# -- enums whose value is the text spelling -----------------------------------------
class ComparisonDirection(enum.Enum):
    EQ = "EQ"
    NE = "NE"
    LT = "LT"
    LE = "LE"
    GT = "GT"
    GE = "GE"


class ComparisonType(enum.Enum):
    FLOAT = "FLOAT"
    TOTALORDER = "TOTALORDER"
    SIGNED = "SIGNED"
    UNSIGNED = "UNSIGNED"


class FusionKind(enum.Enum):
    LOOP = "kLoop"
    INPUT = "kInput"
    OUTPUT = "kOutput"
    CUSTOM = "kCustom"


class FftType(enum.Enum):
    FFT = "FFT"
    IFFT = "IFFT"
    RFFT = "RFFT"
    IRFFT = "IRFFT"


class RngAlgorithm(enum.Enum):
    DEFAULT = "rng_default"
    THREE_FRY = "rng_three_fry"
    PHILOX = "rng_philox"


class RandomDistribution(enum.Enum):
    UNIFORM = "rng_uniform"
    NORMAL = "rng_normal"


class TriangularSolveTranspose(enum.Enum):
    NO_TRANSPOSE = "NO_TRANSPOSE"
    TRANSPOSE = "TRANSPOSE"
    ADJOINT = "ADJOINT"


class Precision(enum.Enum):
    DEFAULT = "default"
    HIGH = "high"
    HIGHEST = "highest"


# -- structured values --------------------------------------------------------------
@dataclass(frozen=True)
class WindowDimension:
    size: int
    stride: int = 1
    padding_low: int = 0
    padding_high: int = 0
    window_dilation: int = 1
    base_dilation: int = 1
    window_reversal: bool = False


@dataclass(frozen=True)
class Window:
    """`window={size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=.. rhs_dilate=.. rhs_reversal=..}`.

    lhs_dilate is each dimension's base dilation, rhs_dilate its window dilation.
    """

    dimensions: tuple[WindowDimension, ...]

    def to_text(self) -> str:
        dims = self.dimensions
        if not dims:
            return "{}"

        def field(key, values, default):
            return [] if all(v == default for v in values) else [key + "=" + "x".join(values)]

        parts = ["size=" + "x".join(str(d.size) for d in dims)]
        parts += field("stride", [str(d.stride) for d in dims], "1")
        parts += field("pad", [f"{d.padding_low}_{d.padding_high}" for d in dims], "0_0")
        parts += field("lhs_dilate", [str(d.base_dilation) for d in dims], "1")
        parts += field("rhs_dilate", [str(d.window_dilation) for d in dims], "1")
        parts += field("rhs_reversal", [str(int(d.window_reversal)) for d in dims], "0")
        return "{" + " ".join(parts) + "}"


@dataclass(frozen=True)
class PaddingDimension:
    low: int = 0
    high: int = 0
    interior: int = 0


@dataclass(frozen=True)
class PaddingConfig:
    """`padding=0_0x1_2_1`: low_high[_interior] per dimension (low/high may be negative).

    When any dimension has interior padding XLA spells the interior of all of
    them (`0_0_0x1_2_1`)."""

    dimensions: tuple[PaddingDimension, ...]

    def to_text(self) -> str:
        interior = any(d.interior for d in self.dimensions)
        return "x".join(f"{d.low}_{d.high}" + (f"_{d.interior}" if interior else "")
                        for d in self.dimensions)


@dataclass(frozen=True)
class SliceRange:
    start: int
    limit: int
    stride: int = 1

    def to_text(self) -> str:
        stride = f":{self.stride}" if self.stride != 1 else ""
        return f"[{self.start}:{self.limit}{stride}]"


@dataclass(frozen=True)
class ConvolutionDimensionNumbers:
    """`dim_labels=b01f_01io->b01f`: where batch, feature and each spatial dim live."""

    input_batch_dimension: int
    input_feature_dimension: int
    input_spatial_dimensions: tuple[int, ...]
    kernel_input_feature_dimension: int
    kernel_output_feature_dimension: int
    kernel_spatial_dimensions: tuple[int, ...]
    output_batch_dimension: int
    output_feature_dimension: int
    output_spatial_dimensions: tuple[int, ...]

    @staticmethod
    def from_text(text: str) -> ConvolutionDimensionNumbers:
        """Parse `b01f_01io->b01f`; raises ValueError saying what is wrong."""
        try:
            lhs_rhs, out = text.split("->")
            lhs, rhs = lhs_rhs.split("_")
        except ValueError:
            raise ValueError(f"dim_labels {text!r} is not of the form LHS_RHS->OUT") from None
        n = len(lhs) - 2
        if n < 0 or len(rhs) != n + 2 or len(out) != n + 2:
            raise ValueError(f"dim_labels {text!r}: the three parts must have equal rank")

        def locate(labels, letters):
            spatial = [labels.find(str(i)) for i in range(n)]
            fixed = [labels.find(c) for c in letters]
            expected = set(letters) | {str(i) for i in range(n)}
            if -1 in spatial + fixed or set(labels) != expected or len(set(labels)) != len(labels):
                raise ValueError(
                    f"dim_labels {text!r}: {labels!r} must hold {letters} and 0..{n - 1} once each")
            return fixed, tuple(spatial)

        (ib, if_), isp = locate(lhs, "bf")
        (ki, ko), ksp = locate(rhs, "io")
        (ob, of), osp = locate(out, "bf")
        return ConvolutionDimensionNumbers(ib, if_, isp, ki, ko, ksp, ob, of, osp)

    def to_text(self) -> str:
        def spell(rank, fixed, spatial):
            labels = [""] * rank
            for dim, letter in fixed:
                labels[dim] = letter
            for i, dim in enumerate(spatial):
                labels[dim] = str(i)
            return "".join(labels)

        n = len(self.input_spatial_dimensions) + 2
        lhs = spell(n, [(self.input_batch_dimension, "b"), (self.input_feature_dimension, "f")],
                    self.input_spatial_dimensions)
        rhs = spell(n, [(self.kernel_input_feature_dimension, "i"),
                        (self.kernel_output_feature_dimension, "o")],
                    self.kernel_spatial_dimensions)
        out = spell(n, [(self.output_batch_dimension, "b"), (self.output_feature_dimension, "f")],
                    self.output_spatial_dimensions)
        return f"{lhs}_{rhs}->{out}"


@dataclass(frozen=True)
class IotaReplicaGroups:
    """`replica_groups=[2,4]<=[4,2]T(1,0)`: groups from a reshaped, transposed iota."""

    group_shape: tuple[int, int]
    reshape_dims: tuple[int, ...]
    transpose_perm: tuple[int, ...] = ()

    def groups(self) -> tuple[tuple[int, ...], ...]:
        ids = np.arange(int(np.prod(self.reshape_dims))).reshape(self.reshape_dims)
        if self.transpose_perm:
            ids = ids.transpose(self.transpose_perm)
        return tuple(tuple(int(i) for i in row) for row in ids.reshape(self.group_shape))

    def to_text(self) -> str:
        def dims(values):
            return "[" + ",".join(str(v) for v in values) + "]"

        text = dims(self.group_shape) + "<=" + dims(self.reshape_dims)
        return text + ("T(" + ",".join(map(str, self.transpose_perm)) + ")"
                       if self.transpose_perm else "")


@dataclass(frozen=True)
class OpMetadata:
    """`metadata={op_type="dot" op_name="jit(f)/dot" source_file="f.py" source_line=3}`.

    Kept as ordered (key, value) pairs, values str or int, so unknown keys
    (`stack_frame_id`, `deduplicated_name`, ...) print back unchanged.
    """

    items: tuple[tuple[str, str | int], ...] = ()

    def get(self, key: str, default=None):
        for k, v in self.items:
            if k == key:
                return v
        return default


@dataclass(frozen=True)
class RawAttribute:
    """An attribute kept verbatim (sharding, frontend_attributes, unknown keys...)."""

    text: str

    def to_text(self) -> str:
        return self.text


# -- how each attribute is spelled --------------------------------------------------
class AttrKind(enum.Enum):
    """The text form of an attribute value, which fixes its Python type."""

    INT = "int"                      # 3                       -> int
    FLOAT = "float"                  # 0.001                   -> float
    BOOL = "bool"                    # true                    -> bool
    STRING = "string"                # "TopK"                  -> str
    INT_LIST = "int_list"            # {1,0}                   -> tuple[int, ...]
    INT_LIST_LIST = "int_list_list"  # {{0,1},{2,3}}           -> tuple[tuple[int, ...], ...]
    REPLICA_GROUPS = "replica_groups"  # {{0,1}} | [2,2]<=[4] -> tuples | IotaReplicaGroups
    COMPUTATION = "computation"      # %region_0              -> HloComputation
    COMPUTATION_LIST = "computation_list"  # {%a, %b}         -> tuple[HloComputation, ...]
    WINDOW = "window"                # {size=2x2 stride=2x2}   -> Window
    DIM_LABELS = "dim_labels"        # b01f_01io->b01f         -> ConvolutionDimensionNumbers
    SLICE = "slice"                  # {[0:2], [1:4:2]}        -> tuple[SliceRange, ...]
    PADDING = "padding"              # 0_0x1_1_1               -> PaddingConfig
    ENUM = "enum"                    # LT, kLoop, FFT          -> the enum named in ATTRIBUTE_ENUMS
    PRECISION_LIST = "precision_list"  # {default,highest}     -> tuple[Precision, ...]
    METADATA = "metadata"            # {op_name="..." ...}     -> OpMetadata
    SHAPE_LIST = "shape_list"        # {f32[2]{0}, s32[]}      -> tuple[Shape, ...]
    RAW = "raw"                      # anything else           -> RawAttribute


ATTRIBUTE_KINDS: dict[str, AttrKind] = {
    # shapes and dimensions
    "dimensions": AttrKind.INT_LIST,
    "iota_dimension": AttrKind.INT,
    "index": AttrKind.INT,
    "slice": AttrKind.SLICE,
    "dynamic_slice_sizes": AttrKind.INT_LIST,
    "padding": AttrKind.PADDING,
    "inferred_dimension": AttrKind.INT,
    # dot
    "lhs_batch_dims": AttrKind.INT_LIST,
    "lhs_contracting_dims": AttrKind.INT_LIST,
    "rhs_batch_dims": AttrKind.INT_LIST,
    "rhs_contracting_dims": AttrKind.INT_LIST,
    "operand_precision": AttrKind.PRECISION_LIST,
    # convolution and windows
    "window": AttrKind.WINDOW,
    "dim_labels": AttrKind.DIM_LABELS,
    "feature_group_count": AttrKind.INT,
    "batch_group_count": AttrKind.INT,
    # gather / scatter
    "offset_dims": AttrKind.INT_LIST,
    "collapsed_slice_dims": AttrKind.INT_LIST,
    "start_index_map": AttrKind.INT_LIST,
    "operand_batching_dims": AttrKind.INT_LIST,
    "start_indices_batching_dims": AttrKind.INT_LIST,
    "index_vector_dim": AttrKind.INT,
    "slice_sizes": AttrKind.INT_LIST,
    "indices_are_sorted": AttrKind.BOOL,
    "unique_indices": AttrKind.BOOL,
    "update_window_dims": AttrKind.INT_LIST,
    "inserted_window_dims": AttrKind.INT_LIST,
    "scatter_dims_to_operand_dims": AttrKind.INT_LIST,
    "input_batching_dims": AttrKind.INT_LIST,
    "scatter_indices_batching_dims": AttrKind.INT_LIST,
    # comparison, conversion
    "direction": AttrKind.ENUM,
    "type": AttrKind.ENUM,
    "exponent_bits": AttrKind.INT,
    "mantissa_bits": AttrKind.INT,
    # called computations
    "to_apply": AttrKind.COMPUTATION,
    "condition": AttrKind.COMPUTATION,
    "body": AttrKind.COMPUTATION,
    "calls": AttrKind.COMPUTATION,
    "select": AttrKind.COMPUTATION,
    "scatter": AttrKind.COMPUTATION,
    "true_computation": AttrKind.COMPUTATION,
    "false_computation": AttrKind.COMPUTATION,
    "branch_computations": AttrKind.COMPUTATION_LIST,
    "called_computations": AttrKind.COMPUTATION_LIST,
    "kind": AttrKind.ENUM,
    "is_stable": AttrKind.BOOL,
    # linear algebra, fft, rng, topk
    "lower": AttrKind.BOOL,
    "left_side": AttrKind.BOOL,
    "unit_diagonal": AttrKind.BOOL,
    "transpose_a": AttrKind.ENUM,
    "fft_type": AttrKind.ENUM,
    "fft_length": AttrKind.INT_LIST,
    "algorithm": AttrKind.ENUM,
    "distribution": AttrKind.ENUM,
    "k": AttrKind.INT,
    "largest": AttrKind.BOOL,
    "epsilon": AttrKind.FLOAT,
    "feature_index": AttrKind.INT,
    # custom-call
    "custom_call_target": AttrKind.STRING,
    "custom_call_has_side_effect": AttrKind.BOOL,
    "operand_layout_constraints": AttrKind.SHAPE_LIST,
    # collectives
    "replica_groups": AttrKind.REPLICA_GROUPS,
    "channel_id": AttrKind.INT,
    "use_global_device_ids": AttrKind.BOOL,
    "constrain_layout": AttrKind.BOOL,
    "source_target_pairs": AttrKind.INT_LIST_LIST,
    "split_dimension": AttrKind.INT,
    # generic
    "metadata": AttrKind.METADATA,
}
"""Every attribute whose value xlapy reads; anything else is kept as RawAttribute."""

ATTRIBUTE_ENUMS: dict[str, type[enum.Enum]] = {
    "direction": ComparisonDirection,
    "type": ComparisonType,
    "kind": FusionKind,
    "transpose_a": TriangularSolveTranspose,
    "fft_type": FftType,
    "algorithm": RngAlgorithm,
    "distribution": RandomDistribution,
}
"""For each ENUM attribute, the enum whose values spell it."""

OPCODE_ATTRIBUTE_KINDS: dict[tuple[str, str], AttrKind] = {
    ("dot", "algorithm"): AttrKind.RAW,          # ALG_DOT_BF16_BF16_F32, not an RNG choice
    ("custom-call", "algorithm"): AttrKind.RAW,
    ("sort", "dimensions"): AttrKind.INT_LIST,
    ("collective-permute", "slice_sizes"): AttrKind.INT_LIST_LIST,
    ("collective-permute-start", "slice_sizes"): AttrKind.INT_LIST_LIST,
    ("ragged-dot", "algorithm"): AttrKind.RAW,
    ("scaled-dot", "algorithm"): AttrKind.RAW,
}
"""Per-opcode exceptions to ATTRIBUTE_KINDS, keyed by (opcode text, attribute name)."""


def attribute_kind(opcode_text: str, name: str) -> AttrKind:
    """How attribute `name` of an instruction with opcode `opcode_text` is spelled."""
    default = ATTRIBUTE_KINDS.get(name, AttrKind.RAW)
    return OPCODE_ATTRIBUTE_KINDS.get((opcode_text, name), default)


# -- module header attributes -------------------------------------------------------
@dataclass(frozen=True)
class ComputationLayout:
    """`entry_computation_layout={(f32[8,4]{1,0}, s32[])->f32[8]{0}}`."""

    parameter_shapes: tuple  # tuple[Shape, ...]
    result_shape: object     # Shape

    def to_text(self) -> str:
        params = Shape.tuple(self.parameter_shapes).to_text()
        return "{" + params + "->" + self.result_shape.to_text() + "}"


@dataclass(frozen=True)
class InputOutputAlias:
    """One entry of `input_output_alias={ {0}: (1, {}, may-alias) }`: the output at
    `output_index` shares its buffer with parameter `parameter_number` at
    `parameter_index`; `kind` is "may-alias", "must-alias" or "" when unprinted."""

    output_index: tuple[int, ...]
    parameter_number: int
    parameter_index: tuple[int, ...] = ()
    kind: str = ""


MODULE_ATTRIBUTE_KINDS: dict[str, str] = {
    "entry_computation_layout": "computation_layout",  # -> ComputationLayout
    "input_output_alias": "input_output_alias",        # -> tuple[InputOutputAlias, ...]
    "is_scheduled": "bool",                            # -> bool
    "replica_count": "int",                            # -> int
    "num_partitions": "int",                           # -> int
}
"""Header attributes xlapy reads; any other header attribute is a RawAttribute."""
