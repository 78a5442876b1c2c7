"""The builder's op methods for iota, shape and data movement, gather/scatter,
dot and convolution, tuples, linear algebra, random bits and custom calls
(mixed into `builder.ComputationBuilder`), and the value helpers the builder
modules share (element types, enum spellings, windows, padding).

Each method builds XLA's attributes in the order XLA prints them, leaving out
the ones XLA leaves out at their defaults (empty batch dims of a dot, a
group count of 1, all-default precision), so printed modules read like XLA's.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence

from xlapy.hlo.attributes import (
    ConvolutionDimensionNumbers,
    FftType,
    PaddingConfig,
    PaddingDimension,
    Precision,
    RawAttribute,
    RngAlgorithm,
    SliceRange,
    TriangularSolveTranspose,
    Window,
    WindowDimension,
)
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

H = HloInstruction


# -- value helpers -----------------------------------------------------------------------
def element_type_of(value) -> PrimitiveType:
    """A PrimitiveType from itself, its text ("f32") or a NumPy dtype."""
    if isinstance(value, PrimitiveType):
        return value
    if isinstance(value, str):
        try:
            return PrimitiveType.from_text(value)
        except KeyError:
            pass
    return PrimitiveType.from_numpy(value)


def enum_value(enum_type: type[enum.Enum], value):
    """`value` as a member of `enum_type`: a member, its text spelling or its name."""
    if isinstance(value, enum_type):
        return value
    if isinstance(value, str):
        for member in enum_type:
            if value in (member.value, member.name):
                return member
    spellings = ", ".join(m.value for m in enum_type)
    raise ValueError(f"{value!r} is not a {enum_type.__name__} (one of {spellings})")


def make_window(sizes: Sequence[int], strides: Sequence[int] | None = None,
                padding: Sequence[tuple[int, int]] | None = None,
                lhs_dilation: Sequence[int] | None = None,
                rhs_dilation: Sequence[int] | None = None) -> Window:
    """A Window from per-dimension lists (XLA's MakeWindow); omitted lists mean stride 1,
    no padding, no dilation. `lhs_dilation` dilates the base, `rhs_dilation` the window."""
    n = len(sizes)
    strides = strides or [1] * n
    padding = padding or [(0, 0)] * n
    lhs_dilation = lhs_dilation or [1] * n
    rhs_dilation = rhs_dilation or [1] * n
    if not all(len(x) == n for x in (strides, padding, lhs_dilation, rhs_dilation)):
        raise ValueError(f"window lists must all have {n} entries (one per dimension)")
    return Window(tuple(
        WindowDimension(size=int(size), stride=int(stride), padding_low=int(low),
                        padding_high=int(high), window_dilation=int(rhs), base_dilation=int(lhs))
        for size, stride, (low, high), lhs, rhs
        in zip(sizes, strides, padding, lhs_dilation, rhs_dilation)))


def make_padding(config: Sequence[Sequence[int]]) -> PaddingConfig:
    """A PaddingConfig from (low, high) or (low, high, interior) per dimension."""
    return PaddingConfig(tuple(PaddingDimension(*(int(v) for v in dim)) for dim in config))


def _precision_config(builder, precision) -> tuple[Precision, ...] | None:
    """operand_precision for two operands, or None when all default (XLA omits it)."""
    if precision is None:
        return None
    if isinstance(precision, Precision | str):
        precision = (precision, precision)
    if not isinstance(precision, Iterable):
        raise builder._error(f"precision {precision!r} is not a Precision or a pair of them")
    config = tuple(builder._enum(Precision, p, "precision") for p in precision)
    return None if all(p is Precision.DEFAULT for p in config) else config


class ArrayOps:
    """Iota, shape and data movement, gather and scatter, dot and convolution, tuples,
    linear algebra, random bits and custom calls."""

    def iota(self, shape: Shape, dimension: int) -> H:
        return self.add_instruction(Opcode.IOTA, [], shape, iota_dimension=dimension)

    def broadcast(self, x: H, dims: Sequence[int], broadcast_dimensions: Sequence[int]) -> H:
        """XLA's BroadcastInDim: operand dimension i becomes result dimension
        `broadcast_dimensions[i]` of `dims`. Operand dimensions of size 1 may stretch
        (they are reshaped away first, as XlaBuilder does)."""
        dims = self._ints(dims, "broadcast dims")
        mapping = self._ints(broadcast_dimensions, "broadcast_dimensions")
        operand = self._shape_of(x)
        stretched = [i for i, d in enumerate(mapping) if operand.is_array and i < operand.rank
                     and d < len(dims) and operand.dimensions[i] == 1 and dims[d] != 1]
        if stretched and len(mapping) == operand.rank:
            kept = [i for i in range(operand.rank) if i not in stretched]
            x = self.reshape(x, [operand.dimensions[i] for i in kept])
            mapping = tuple(mapping[i] for i in kept)
        shape = Shape.array(operand.element_type, dims)
        return self.add_instruction(Opcode.BROADCAST, [x], shape, dimensions=mapping)

    def reshape(self, x: H, dims: Sequence[int]) -> H:
        shape = Shape.array(self._shape_of(x).element_type, self._ints(dims, "reshape dims"))
        return self.add_instruction(Opcode.RESHAPE, [x], shape)

    def transpose(self, x: H, permutation: Sequence[int]) -> H:
        return self.add_instruction(Opcode.TRANSPOSE, [x], dimensions=permutation)

    def reverse(self, x: H, dimensions: Sequence[int]) -> H:
        return self.add_instruction(Opcode.REVERSE, [x], dimensions=dimensions)

    def slice(self, x: H, start_indices: Sequence[int], limit_indices: Sequence[int],
              strides: Sequence[int] | None = None) -> H:
        starts = self._ints(start_indices, "slice start_indices")
        limits = self._ints(limit_indices, "slice limit_indices")
        steps = self._ints(strides, "slice strides") if strides else (1,) * len(starts)
        if not len(starts) == len(limits) == len(steps):
            raise self._error(f"slice: {len(starts)} starts, {len(limits)} limits and "
                              f"{len(steps)} strides; give one of each per dimension")
        ranges = tuple(SliceRange(*r) for r in zip(starts, limits, steps))
        return self.add_instruction(Opcode.SLICE, [x], slice=ranges)

    def dynamic_slice(self, x: H, start_indices: Sequence[H], slice_sizes: Sequence[int]) -> H:
        """One scalar start index per dimension; XLA clamps them into range."""
        starts = self._operands(start_indices, "start_indices")
        return self.add_instruction(Opcode.DYNAMIC_SLICE, [x, *starts],
                                    dynamic_slice_sizes=slice_sizes)

    def dynamic_update_slice(self, x: H, update: H, start_indices: Sequence[H]) -> H:
        starts = self._operands(start_indices, "start_indices")
        return self.add_instruction(Opcode.DYNAMIC_UPDATE_SLICE, [x, update, *starts])

    def concatenate(self, operands: Sequence[H], dimension: int) -> H:
        return self.add_instruction(Opcode.CONCATENATE, operands, dimensions=(dimension,))

    def pad(self, x: H, padding_value: H,
            padding_config: PaddingConfig | Sequence[Sequence[int]]) -> H:
        """`padding_config`: a PaddingConfig or (low, high[, interior]) per dimension."""
        if not isinstance(padding_config, PaddingConfig):
            try:
                padding_config = make_padding(padding_config)
            except (TypeError, ValueError) as e:
                raise self._error(f"pad: padding_config {padding_config!r}: {e}") from e
        return self.add_instruction(Opcode.PAD, [x, padding_value], padding=padding_config)

    def gather(self, operand: H, start_indices: H, *, offset_dims, collapsed_slice_dims,
               start_index_map, index_vector_dim: int, slice_sizes,
               operand_batching_dims=(), start_indices_batching_dims=(),
               indices_are_sorted: bool = False) -> H:
        attrs = {"offset_dims": offset_dims, "collapsed_slice_dims": collapsed_slice_dims,
                 "start_index_map": start_index_map}
        if operand_batching_dims:
            attrs["operand_batching_dims"] = operand_batching_dims
        if start_indices_batching_dims:
            attrs["start_indices_batching_dims"] = start_indices_batching_dims
        attrs["index_vector_dim"] = index_vector_dim
        attrs["slice_sizes"] = slice_sizes
        if indices_are_sorted:
            attrs["indices_are_sorted"] = True
        return self.add_instruction(Opcode.GATHER, [operand, start_indices], **attrs)

    def scatter(self, operands, scatter_indices: H, updates, computation, *,
                update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
                index_vector_dim: int, input_batching_dims=(), scatter_indices_batching_dims=(),
                indices_are_sorted: bool = False, unique_indices: bool = False) -> H:
        """Variadic: `operands` and `updates` are one instruction or equally many."""
        attrs = {"update_window_dims": update_window_dims,
                 "inserted_window_dims": inserted_window_dims,
                 "scatter_dims_to_operand_dims": scatter_dims_to_operand_dims}
        if input_batching_dims:
            attrs["input_batching_dims"] = input_batching_dims
        if scatter_indices_batching_dims:
            attrs["scatter_indices_batching_dims"] = scatter_indices_batching_dims
        attrs["index_vector_dim"] = index_vector_dim
        if indices_are_sorted:
            attrs["indices_are_sorted"] = True
        if unique_indices:
            attrs["unique_indices"] = True
        attrs["to_apply"] = computation
        args = [*self._operands(operands, "scatter operands"), scatter_indices,
                *self._operands(updates, "scatter updates")]
        return self.add_instruction(Opcode.SCATTER, args, **attrs)

    def dot(self, lhs: H, rhs: H, lhs_contracting_dims, rhs_contracting_dims,
            lhs_batch_dims=(), rhs_batch_dims=(), precision=None,
            preferred_element_type=None) -> H:
        """XLA's DotGeneral: result dims are batch, lhs free, rhs free. `precision` is one
        Precision for both operands or a pair; `preferred_element_type` widens the result."""
        attrs = {}
        if lhs_batch_dims:
            attrs["lhs_batch_dims"] = lhs_batch_dims
        attrs["lhs_contracting_dims"] = lhs_contracting_dims
        if rhs_batch_dims:
            attrs["rhs_batch_dims"] = rhs_batch_dims
        attrs["rhs_contracting_dims"] = rhs_contracting_dims
        config = _precision_config(self, precision)
        if config is not None:
            attrs["operand_precision"] = config
        shape = None
        if preferred_element_type is not None:
            inferred = self.infer_shape(Opcode.DOT, [lhs, rhs], None, **attrs)
            shape = inferred.with_element_type(self._element_type(preferred_element_type))
        return self.add_instruction(Opcode.DOT, [lhs, rhs], shape, **attrs)

    def convolution(self, lhs: H, rhs: H, window: Window, dim_labels,
                    feature_group_count: int = 1, batch_group_count: int = 1,
                    precision=None, preferred_element_type=None) -> H:
        """`dim_labels` is a ConvolutionDimensionNumbers or its text ("b01f_01io->b01f")."""
        if isinstance(dim_labels, str):
            try:
                dim_labels = ConvolutionDimensionNumbers.from_text(dim_labels)
            except ValueError as e:
                raise self._error(f"convolution: {e}") from e
        if not isinstance(window, Window):
            raise self._error(f"convolution: window must be a Window (see make_window), "
                              f"got {window!r}")
        attrs = {}
        if window.dimensions:
            attrs["window"] = window
        attrs["dim_labels"] = dim_labels
        if feature_group_count != 1:
            attrs["feature_group_count"] = feature_group_count
        if batch_group_count != 1:
            attrs["batch_group_count"] = batch_group_count
        config = _precision_config(self, precision)
        if config is not None:
            attrs["operand_precision"] = config
        shape = None
        if preferred_element_type is not None:
            inferred = self.infer_shape(Opcode.CONVOLUTION, [lhs, rhs], None, **attrs)
            shape = inferred.with_element_type(self._element_type(preferred_element_type))
        return self.add_instruction(Opcode.CONVOLUTION, [lhs, rhs], shape, **attrs)

    # tuples, tokens, copies
    def tuple(self, elements: Sequence[H]) -> H:  # noqa: A003 - XLA's name
        return self.add_instruction(Opcode.TUPLE, elements)

    def get_tuple_element(self, t: H, index: int) -> H:
        return self.add_instruction(Opcode.GET_TUPLE_ELEMENT, [t], index=index)

    def opt_barrier(self, x: H) -> H:
        return self.add_instruction(Opcode.OPTIMIZATION_BARRIER, [x])

    def after_all(self, tokens: Sequence[H] = ()) -> H:
        return self.add_instruction(Opcode.AFTER_ALL, tokens)

    def copy(self, x: H) -> H:
        return self.add_instruction(Opcode.COPY, [x])

    # linear algebra, fft, top-k, random bits
    def cholesky(self, a: H, lower: bool = False) -> H:
        return self.add_instruction(Opcode.CHOLESKY, [a], lower=lower)

    def triangular_solve(self, a: H, b: H, *, left_side: bool, lower: bool,
                         unit_diagonal: bool = False,
                         transpose_a: TriangularSolveTranspose | str =
                         TriangularSolveTranspose.NO_TRANSPOSE) -> H:
        """Solve op(a) x = b (left_side) or x op(a) = b for x; a is triangular."""
        attrs = {}
        if left_side:
            attrs["left_side"] = True
        if lower:
            attrs["lower"] = True
        if unit_diagonal:
            attrs["unit_diagonal"] = True
        attrs["transpose_a"] = transpose_a
        return self.add_instruction(Opcode.TRIANGULAR_SOLVE, [a, b], **attrs)

    def fft(self, x: H, fft_type: FftType | str, fft_length: Sequence[int]) -> H:
        return self.add_instruction(Opcode.FFT, [x], fft_type=fft_type,
                                    fft_length=fft_length)

    def topk(self, x: H, k: int, largest: bool = True) -> H:
        """(values, s32 indices) of the k largest (or smallest) along the last dimension."""
        return self.add_instruction(Opcode.TOPK, [x], k=k, largest=largest)

    def rng_bit_generator(self, state: H, shape: Shape,
                          algorithm: RngAlgorithm | str = RngAlgorithm.DEFAULT) -> H:
        """(new state, random bits of `shape`) from `state`."""
        if not isinstance(shape, Shape):
            raise self._error(f"rng_bit_generator: shape must be a Shape, got {shape!r}")
        result = Shape.tuple([self._shape_of(state), shape.with_default_layout()])
        return self.add_instruction(Opcode.RNG_BIT_GENERATOR, [state], result,
                                    algorithm=algorithm)

    def custom_call(self, target: str, operands: Sequence[H], shape: Shape, *,
                    has_side_effect: bool = False, operand_layout_constraints=None,
                    api_version: str | None = None, called_computations=(),
                    backend_config: str | None = None) -> H:
        """A call to `target`; the result shape is given, since nothing can infer it.
        `api_version` and `backend_config` are text printed verbatim (with the quotes
        or braces XLA prints, e.g. backend_config='"cfg"')."""
        attrs = {"custom_call_target": target}
        if operand_layout_constraints is not None:
            attrs["operand_layout_constraints"] = operand_layout_constraints
        if has_side_effect:
            attrs["custom_call_has_side_effect"] = True
        if api_version is not None:
            attrs["api_version"] = RawAttribute(api_version)
        if called_computations:
            attrs["called_computations"] = called_computations
        if backend_config is not None:
            attrs["backend_config"] = RawAttribute(backend_config)
        return self.add_instruction(Opcode.CUSTOM_CALL, operands, shape, **attrs)

