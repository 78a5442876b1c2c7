"""What the fusion cost model judges by: how costly an op is to compute twice,
whether it reads an operand's elements more than once, and in how many contexts
a fused consumer evaluates each of its operands (each one a copy of the
operand's code). `fusion_cost` turns these facts into decisions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import ELEMENTWISE, TRANSCENDENTAL, Opcode
from xlapy.hlo.shape import Shape
from xlapy.passes.fusion_utils import INPUT_HEROES, OUTPUT_HEROES, fused_computation

Op = Opcode

MAX_CODE_DUPLICATION = 15
"""XLA's FusionNodeIndexingEvaluation::kAllowedCodeDuplication: how many times the
same fused op may be emitted with different indices."""

_CHEAP = (ELEMENTWISE - TRANSCENDENTAL - {Op.DIVIDE, Op.REMAINDER}) | frozenset({
    Op.BITCAST, Op.BITCAST_CONVERT, Op.BROADCAST, Op.CONCATENATE, Op.CONSTANT, Op.COPY,
    Op.DYNAMIC_RESHAPE, Op.DYNAMIC_SLICE, Op.DYNAMIC_UPDATE_SLICE, Op.GET_TUPLE_ELEMENT,
    Op.IOTA, Op.PAD, Op.PARTITION_ID, Op.REPLICA_ID, Op.RESHAPE, Op.REVERSE, Op.SLICE,
    Op.TRANSPOSE, Op.TUPLE,
})


# -- what ops cost ----------------------------------------------------------------------
def is_expensive(instruction: HloInstruction) -> bool:
    """Too costly to compute twice (XLA's IsExpensive, with every transcendental)."""
    op = instruction.opcode
    if op in (Op.DIVIDE, Op.REMAINDER):
        return not (_element_type(instruction.shape).is_integral
                    and _is_constant_scalar(instruction.operands[1]))
    if op in (Op.ABS, Op.SIGN):  # of a complex number: a square root
        return _element_type(instruction.operands[0].shape).is_complex
    if op is Op.CONVERT:
        return (instruction.shape.element_type is PrimitiveType.BF16
                and instruction.operands[0].shape.element_type is PrimitiveType.F32)
    return op not in _CHEAP


def is_always_duplicable(instruction: HloInstruction) -> bool:
    """Cheaper to copy into every consumer than to store: a broadcast, or a widening
    convert (consumers then read the narrow input). XLA's IsAlwaysDuplicable."""
    if instruction.opcode is Op.BROADCAST:
        return True
    return (instruction.opcode is Op.CONVERT
            and instruction.operands[0].shape.byte_size < instruction.shape.byte_size)


def effectively_at_most_unary(instruction: HloInstruction) -> bool:
    """At most one operand as large as the result; broadcasts, iotas and scalar
    constants do not count (XLA's EffectivelyAtMostUnary)."""
    rank = max((_true_rank(s) for _, s in instruction.shape.leaves()), default=0)
    large = [op for op in instruction.operands
             if op.opcode not in (Op.BROADCAST, Op.IOTA)
             and not (op.opcode is Op.CONSTANT and _is_effective_scalar(op.shape))
             and _true_rank(op.shape) >= rank]
    return len(large) <= 1


def reuses_operand(instruction: HloInstruction, index: int) -> bool:
    """Whether `instruction` reads some element of operand `index` more than once."""
    op = instruction.opcode
    operand = instruction.operands[index]
    outputs = _elements(instruction.shape)
    if op in ELEMENTWISE:
        return _elements(operand.shape) < outputs  # an implicitly broadcast scalar
    if op is Op.BROADCAST:
        return outputs > _elements(operand.shape)
    if op in (Op.BITCAST, Op.COPY, Op.CONCATENATE, Op.RESHAPE, Op.REVERSE, Op.SLICE,
              Op.TRANSPOSE):
        return False
    if op is Op.PAD:
        return index == 1 and outputs > 1
    if op is Op.DYNAMIC_SLICE:
        return index > 0
    if op in (Op.REDUCE, Op.REDUCE_WINDOW):
        inputs = len(instruction.operands) // 2
        if index >= inputs:
            return outputs > 1  # the init value, read once per output element
        return op is Op.REDUCE_WINDOW and _windows_overlap(instruction)
    return True  # dot, convolution, gather and anything unknown: assume so


# -- how a consumer reads its operands --------------------------------------------------
class Step(NamedTuple):
    """On a path from a fusion's output to a value: `user` reads operand `index` at
    other indices than its own (a reshape, slice, broadcast...)."""

    user: HloInstruction
    index: int
    reuses: bool


ROOT = "root"


@dataclass(frozen=True)
class OperandUse:
    """How a consumer reads one operand.

    `contexts` are the distinct ways it is evaluated: (phase, steps), where the phase
    is the fusion's output (ROOT) or an inner reduction/dot that reads it into
    scratch, and steps are the index-changing ops on the way. Their number is how
    many times the operand's fused code would be emitted."""

    contexts: tuple[tuple[object, tuple[Step, ...]], ...]

    @property
    def emissions(self) -> int:
        return len(self.contexts)

    @property
    def reusers(self) -> list[HloInstruction]:
        """The ops that read some element more than once, each once."""
        found: dict[int, HloInstruction] = {}
        for _, steps in self.contexts:
            for step in steps:
                if step.reuses:
                    found.setdefault(id(step.user), step.user)
        return list(found.values())


def consumer_uses(consumer: HloInstruction,
                  contexts: dict[int, dict] | None = None) -> list[OperandUse]:
    """How `consumer` (an instruction or a fusion) reads each of its operands;
    `contexts` is `fusion_contexts` of its fused computation when already known."""
    if consumer.opcode is not Op.FUSION:
        return [OperandUse(((ROOT, _steps(consumer, k)),)) for k in range(len(consumer.operands))]
    computation = fused_computation(consumer)
    if contexts is None:
        contexts = fusion_contexts(computation)
    return [OperandUse(tuple(contexts.get(id(p), ()))) for p in computation.parameters]


def fusion_contexts(computation: HloComputation) -> dict[int, dict]:
    """For every fused instruction, its evaluation contexts (a dict used as an ordered
    set, capped just past MAX_CODE_DUPLICATION). An inner reduction or dot starts a new
    phase: what it reads is evaluated once per element of its own result."""
    root = computation.root_instruction
    users = computation.users()
    contexts: dict[int, dict] = {}
    for instruction in reversed(computation.post_order()):
        found: dict = {(ROOT, ()): None} if instruction is root else {}
        for user in users.get(id(instruction), []):
            for k, operand in enumerate(user.operands):
                if operand is instruction:
                    _flow(found, user, k, contexts[id(user)], root)
        contexts[id(instruction)] = found
    return contexts


def extend_contexts(contexts: dict[int, dict], param: HloInstruction,
                    inner: HloInstruction) -> None:
    """Update `fusion_contexts` after `inner` took the place of fused parameter `param`
    (`fusion_utils.fuse_producer`): nothing above it changes, so `inner` inherits the
    parameter's contexts and passes them on to its own operands."""
    contexts[id(inner)] = contexts.pop(id(param), {})
    root = inner.parent.root_instruction
    for k, operand in enumerate(inner.operands):
        _flow(contexts.setdefault(id(operand), {}), inner, k, contexts[id(inner)], root)


def _flow(found: dict, user: HloInstruction, index: int, user_contexts: dict,
          root: HloInstruction) -> None:
    """Add to `found` the contexts in which `user` evaluates its operand `index`."""
    if len(found) > MAX_CODE_DUPLICATION:
        return
    if user is root and user.opcode is Op.TUPLE:
        found[(ROOT, ())] = None
    elif user is not root and user.opcode in INPUT_HEROES | OUTPUT_HEROES:
        found[(user, _steps(user, index))] = None
    else:
        step = _steps(user, index)
        for phase, steps in user_contexts:
            found[(phase, steps + step)] = None


def _steps(user: HloInstruction, index: int) -> tuple[Step, ...]:
    """() when `user` reads operand `index` at its own index (same-shape elementwise)."""
    if user.opcode in ELEMENTWISE and user.operands[index].shape.dimensions == \
            user.shape.dimensions:
        return ()
    return (Step(user, index, reuses_operand(user, index)),)



# -- helpers ---------------------------------------------------------------------------
def _elements(shape: Shape) -> int:
    """Elements of an array shape; for a tuple, of its largest leaf."""
    return max((s.element_count for _, s in shape.leaves() if s.is_array), default=0)


def _true_rank(shape: Shape) -> int:
    return sum(1 for d in shape.dimensions if d > 1) if shape.is_array else 0


def _is_effective_scalar(shape: Shape) -> bool:
    return shape.is_array and shape.element_count == 1


def _is_constant_scalar(instruction: HloInstruction) -> bool:
    """A scalar constant, or a broadcast of one (XLA's ConstantEffectiveScalar)."""
    if instruction.opcode is Op.BROADCAST:
        instruction = instruction.operands[0]
    return instruction.opcode is Op.CONSTANT and _is_effective_scalar(instruction.shape)


def _element_type(shape: Shape) -> PrimitiveType:
    return shape.element_type if shape.is_array else PrimitiveType.TUPLE


def _windows_overlap(instruction: HloInstruction) -> bool:
    window = instruction.attrs.get("window")
    if window is None:
        return True
    return any(d.size > d.stride or d.window_dilation > 1 or d.base_dilation > 1
               for d in window.dimensions)
