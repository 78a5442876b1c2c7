"""The builder's op methods that call computations (reductions, sort, map,
control flow, fusion) and the collectives; mixed into `builder.ComputationBuilder`.

A called computation may be given as a finished HloComputation or as the
ComputationBuilder making it (built at this call). Attributes go in the order
XLA prints them, the called computations last.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from xlapy.hlo.attributes import FusionKind, Window
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import Opcode

if TYPE_CHECKING:
    from xlapy.hlo.builder import ComputationBuilder

    Operands = HloInstruction | Sequence[HloInstruction]
    Callee = HloComputation | ComputationBuilder  # a builder is built when called

H = HloInstruction


def _collective_attrs(channel_id: int | None, replica_groups) -> dict:
    attrs = {}
    if channel_id is not None:
        attrs["channel_id"] = channel_id
    attrs["replica_groups"] = replica_groups
    return attrs


class ControlOps:
    """Reductions, sort, map, while, conditional, call, fusion and collectives."""

    # reductions
    def reduce(self, operands: Operands, inits: Operands, dimensions: Sequence[int],
               computation: Callee) -> H:
        """Reduce `dimensions` of each operand with `computation`, starting from `inits`
        (one operand and init, or equally many: a variadic reduce returns a tuple)."""
        args = self._operands(operands, "reduce operands") + self._operands(inits, "inits")
        return self.add_instruction(Opcode.REDUCE, args, dimensions=dimensions,
                                    to_apply=computation)

    def reduce_window(self, operands: Operands, inits: Operands, window: Window,
                      computation: Callee) -> H:
        """`window` from `builder_ops.make_window`."""
        args = self._operands(operands, "reduce_window operands") + self._operands(inits, "inits")
        return self.add_instruction(Opcode.REDUCE_WINDOW, args, window=window,
                                    to_apply=computation)

    def select_and_scatter(self, operand: H, select: Callee, window: Window, source: H,
                           init_value: H, scatter: Callee) -> H:
        """XLA's operand order: (operand, source, init_value)."""
        return self.add_instruction(Opcode.SELECT_AND_SCATTER, [operand, source, init_value],
                                    window=window, select=select, scatter=scatter)

    def map(self, operands: Operands, computation: Callee,
            dimensions: Sequence[int] | None = None) -> H:
        """Apply the scalar `computation` elementwise; `dimensions` defaults to all."""
        args = self._operands(operands, "map operands")
        if dimensions is None:
            shape = self._shape_of(args[0]) if args else None
            dimensions = range(shape.rank) if shape is not None and shape.is_array else ()
        return self.add_instruction(Opcode.MAP, args, dimensions=dimensions,
                                    to_apply=computation)

    def sort(self, operands: Operands, dimension: int, comparator: Callee,
             is_stable: bool = False) -> H:
        """Sort along `dimension`; `comparator` takes two scalars per operand (lhs, rhs
        of operand 0, then of operand 1, ...) and returns pred[]."""
        attrs = {"dimensions": (dimension,)}
        if is_stable:
            attrs["is_stable"] = True
        attrs["to_apply"] = comparator
        return self.add_instruction(Opcode.SORT, operands, **attrs)

    # control flow
    def while_loop(self, condition: Callee, body: Callee, init: H) -> H:
        """Run `body` on the loop state while `condition` (state -> pred[]) holds."""
        return self.add_instruction(Opcode.WHILE, [init], condition=condition, body=body)

    def conditional(self, branch_index: H, operands: Sequence[H],
                    branches: Sequence[Callee]) -> H:
        """Run branch `branch_index` on its operand. A pred[] index takes two branches,
        [true_branch, false_branch]; an s32[] index any number (out of range: the last)."""
        if isinstance(branches, str) or not isinstance(branches, Iterable):
            raise self._error(f"conditional: branches must be a sequence of computations, "
                              f"got {branches!r}")
        branches = [self._called(b) for b in branches]
        args = [branch_index, *self._operands(operands, "conditional operands")]
        index_shape = self._shape_of(branch_index)
        if index_shape.is_array and index_shape.element_type is PrimitiveType.PRED:
            pair = dict(zip(("true_computation", "false_computation"), branches))
            return self.add_instruction(Opcode.CONDITIONAL, args, **pair)
        return self.add_instruction(Opcode.CONDITIONAL, args, branch_computations=branches)

    def call(self, computation: Callee, operands: Operands) -> H:
        return self.add_instruction(Opcode.CALL, operands, to_apply=computation)

    def fusion(self, operands: Operands, computation: Callee,
               kind: FusionKind | str = FusionKind.LOOP) -> H:
        """A fusion instruction running the fused `computation` on `operands`."""
        return self.add_instruction(Opcode.FUSION, operands, kind=kind, calls=computation)

    # collectives
    def all_reduce(self, operands: Operands, computation: Callee, replica_groups=(),
                   channel_id: int | None = None, use_global_device_ids: bool = False) -> H:
        """Reduce across replicas; more than one operand returns a tuple."""
        attrs = _collective_attrs(channel_id, replica_groups)
        if use_global_device_ids:
            attrs["use_global_device_ids"] = True
        attrs["to_apply"] = computation
        return self.add_instruction(Opcode.ALL_REDUCE, operands, **attrs)

    def all_gather(self, operand: H, dimension: int, replica_groups=(),
                   channel_id: int | None = None, use_global_device_ids: bool = False) -> H:
        attrs = _collective_attrs(channel_id, replica_groups)
        attrs["dimensions"] = (dimension,)
        if use_global_device_ids:
            attrs["use_global_device_ids"] = True
        return self.add_instruction(Opcode.ALL_GATHER, [operand], **attrs)

    def reduce_scatter(self, operand: H, dimension: int, computation: Callee, replica_groups=(),
                       channel_id: int | None = None, use_global_device_ids: bool = False) -> H:
        attrs = _collective_attrs(channel_id, replica_groups)
        if use_global_device_ids:
            attrs["use_global_device_ids"] = True
        attrs["dimensions"] = (dimension,)
        attrs["to_apply"] = computation
        return self.add_instruction(Opcode.REDUCE_SCATTER, [operand], **attrs)

    def all_to_all(self, operands: Operands, dimension: int | None = None, replica_groups=(),
                   channel_id: int | None = None) -> H:
        """Array form (one operand, split and concatenated along `dimension`) or tuple
        form (several operands, no dimension)."""
        attrs = _collective_attrs(channel_id, replica_groups)
        if dimension is not None:
            attrs["dimensions"] = (dimension,)
        return self.add_instruction(Opcode.ALL_TO_ALL, operands, **attrs)

    def collective_permute(self, operand: H, source_target_pairs, channel_id: int | None = None
                           ) -> H:
        attrs = {"channel_id": channel_id} if channel_id is not None else {}
        attrs["source_target_pairs"] = source_target_pairs
        return self.add_instruction(Opcode.COLLECTIVE_PERMUTE, [operand], **attrs)

    def replica_id(self) -> H:
        return self.add_instruction(Opcode.REPLICA_ID, [])

    def partition_id(self) -> H:
        return self.add_instruction(Opcode.PARTITION_ID, [])
