"""The fusion cost model: may this producer join that consumer, and if not, why.

It follows XLA's InstructionFusion (xla/service/instruction_fusion.cc) with the
refinements of its CPU and GPU subclasses (cpu_instruction_fusion.cc,
gpu_fusible.cc). Every answer is a `FusionDecision` that carries its reason,
so dumps can say "not fused: would duplicate an expensive producer (dot.3)
into 2 consumers".

The rules, in the order `should_fuse` applies them (XLA's name for each):
- stays outside (IsFusible): parameters, tuples, get-tuple-element, control
  flow, custom-calls, side-effecting ops, rng-bit-generator, fusions,
  tuple-shaped results and ops with no elemental form are never fused;
- cannot head (CanBeLoopFused): the consumer must be loop-fusible, a
  reduction or a fusion;
- root (ShouldFuse): the computation's result is stored anyway;
- duplication (FusionWouldDuplicate): a producer with other users is copied
  only if cheap (broadcasts and widening converts always are);
- constants (XLA:CPU): no non-scalar constant over 1 KiB, and no fusion made
  of a constant and one instruction;
- concatenate (kMaxConcatenateArguments): at most 8 operands;
- heroes (output and input fusion): a dot or convolution joins only an
  elementwise epilogue of its own shape, and nothing joins its operands; a
  reduction joins a consumer that reads it once per element or broadcasts it
  back over the rows it reduced; at most 5 reductions per fusion;
- reuse (ReusesOperandElements): an expensive producer is not recomputed for
  each of several reads of one element;
- budget: code emitted at most 15 times (kAllowedCodeDuplication), at most 64
  operands and outputs (kMaxOperandsAndOutputsPerFusion), 256 instructions.

Exactness: fusion never changes arithmetic (a fused computation evaluates the
same ops on the same values), so results are bit-identical as the
interpreter computes them. XLA allows one difference a compiled backend may
show: an elementwise producer duplicated into two kernels may be contracted
into an FMA in one and not the other (XLA:CPU's
IsCoupledReductionShiftExpProducer keeps the softmax shift producer whole for
that reason). Here that producer is fused once, into the reduction diamond.

Two choices differ from XLA and are written down here: every transcendental
counts as expensive (XLA:CPU lets sin/cos/tan of reals be duplicated), and a
reduce may join a consumer that broadcasts it back over the rows it reduced
(a reduction diamond, as XLA:GPU's Triton softmax fusion does), because the
fusion contract (see `fusion_utils`) computes an inner reduce once into
kernel-local scratch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from xlapy.hlo.attributes import FusionKind
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import (
    COLLECTIVE,
    CONTROL_FLOW,
    ELEMENTWISE,
    SIDE_EFFECTING,
    TRANSCENDENTAL,
    Opcode,
)
from xlapy.hlo.shape import Shape
from xlapy.passes.fusion_utils import (
    INPUT_HEROES,
    OUTPUT_HEROES,
    fused_computation,
    fused_instructions,
    fusion_outputs,
    is_multi_output,
)

Op = Opcode

MAX_OPERANDS_AND_OUTPUTS = 64
"""XLA:GPU's kMaxOperandsAndOutputsPerFusion (gpu_fusible.h): bounds kernel arguments."""
MAX_FUSED_INSTRUCTIONS = 256
"""Ours: bounds a kernel's size, and so its compile time."""
MAX_CODE_DUPLICATION = 15
"""XLA's FusionNodeIndexingEvaluation::kAllowedCodeDuplication: how many times the
same fused op may be emitted with different indices."""
MAX_REDUCTIONS_IN_FUSION = 5
"""XLA:CPU's kMaxReductionsInFusion."""
MAX_CONCATENATE_OPERANDS = 8
"""XLA:CPU's kMaxConcatenateArguments: a fused concatenate is a select tree."""
SMALL_CONSTANT_BYTES = 1024
"""Constants up to this size may be fused (and copied); larger ones stay one
read-only buffer (XLA's LiteralCanonicalizer deduplicates literals from 1 KiB)."""

LOOP_FUSIBLE = ELEMENTWISE | frozenset({
    Op.BITCAST, Op.BROADCAST, Op.CONCATENATE, Op.COPY, Op.DYNAMIC_SLICE, Op.GATHER, Op.IOTA,
    Op.PAD, Op.RESHAPE, Op.REVERSE, Op.SLICE, Op.TRANSPOSE,
})
"""Ops with an elemental form (index -> value) that a loop fusion composes: XLA:CPU's
CanBeLoopFused, without dynamic-update-slice (in place: it stays its own kernel)."""

_CHEAP = (ELEMENTWISE - TRANSCENDENTAL - {Op.DIVIDE, Op.REMAINDER}) | frozenset({
    Op.BITCAST, Op.BITCAST_CONVERT, Op.BROADCAST, Op.CONCATENATE, Op.CONSTANT, Op.COPY,
    Op.DYNAMIC_RESHAPE, Op.DYNAMIC_SLICE, Op.DYNAMIC_UPDATE_SLICE, Op.GET_TUPLE_ELEMENT,
    Op.IOTA, Op.PAD, Op.PARTITION_ID, Op.REPLICA_ID, Op.RESHAPE, Op.REVERSE, Op.SLICE,
    Op.TRANSPOSE, Op.TUPLE,
})

_FUSIBLE_PRODUCERS = LOOP_FUSIBLE | OUTPUT_HEROES | {Op.CONSTANT, Op.REDUCE}

_MUST_STAY_OUTSIDE = {
    Op.PARAMETER: "parameters are the computation's inputs and stay outside fusions",
    Op.TUPLE: "tuples stay at the top level",
    Op.GET_TUPLE_ELEMENT: "get-tuple-element stays at the top level",
    Op.CUSTOM_CALL: "custom-calls stay outside fusions",
    Op.RNG_BIT_GENERATOR: "rng-bit-generator updates its state and runs once, on its own",
    Op.FUSION: "it is itself a fusion (fusions are merged by multi-output fusion)",
    Op.DYNAMIC_UPDATE_SLICE: "dynamic-update-slice updates its operand in place and stays "
                             "its own kernel",
}


# -- decisions --------------------------------------------------------------------------
@dataclass(frozen=True)
class FusionDecision:
    """Whether a producer may join a consumer, and why (XLA's FusionDecision).

    Truthy when fusion may go ahead; `explain()` gives the reason with its verdict."""

    can_fuse: bool
    reason: str

    @staticmethod
    def allow(reason: str) -> FusionDecision:
        return FusionDecision(True, reason)

    @staticmethod
    def forbid(reason: str) -> FusionDecision:
        return FusionDecision(False, reason)

    def __bool__(self) -> bool:
        return self.can_fuse

    def explain(self) -> str:
        """"fused: ..." or "not fused: ...", as dumps print it."""
        return ("fused: " if self.can_fuse else "not fused: ") + self.reason


class FusionRecord(NamedTuple):
    """One decision a fusion pass took, by instruction names, for dumps."""

    producer: str
    consumer: str
    reason: str


@dataclass(frozen=True)
class FusionOptions:
    """What kinds of fusion to form.

    `may_duplicate`: cheap producers may be copied into several consumers (XLA:CPU
    runs with it on). `fuse_dot_epilogues`: a dot or convolution heads a kOutput
    fusion of its elementwise consumers. `fuse_reduction_diamonds`: a reduce may join
    a consumer that broadcasts it back over its rows; a backend that cannot emit an
    inner reduce once per row turns it off."""

    may_duplicate: bool = True
    fuse_dot_epilogues: bool = True
    fuse_reduction_diamonds: bool = True


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


# -- the decision -----------------------------------------------------------------------
UsersOf = Callable[[HloInstruction], list]


def should_fuse(consumer: HloInstruction, index: int, users_of: UsersOf,
                options: FusionOptions = FusionOptions(),
                use: OperandUse | None = None) -> FusionDecision:
    """May operand `index` of `consumer` be fused into it? `users_of(i)` lists the users
    of `i` in the consumer's computation; `use` is `consumer_uses(consumer)[index]`
    when the caller already has it."""
    producer = consumer.operands[index]
    for rule in (_stays_outside, _cannot_head, _is_root):
        reason = rule(producer, consumer)
        if reason:
            return FusionDecision.forbid(reason)
    for rule in (_duplication, _constants, _concatenate):
        reason = rule(producer, consumer, users_of)
        if reason:
            return FusionDecision.forbid(reason)
    use = use if use is not None else consumer_uses(consumer)[index]
    for rule in (_heroes, _reuse, _budget):
        reason = rule(producer, consumer, use, options)
        if reason:
            return FusionDecision.forbid(reason)
    return FusionDecision.allow(_allow_reason(producer, consumer, use))


def _stays_outside(producer: HloInstruction, consumer: HloInstruction) -> str | None:
    op = producer.opcode
    if op in _FUSIBLE_PRODUCERS and producer.shape.is_array:
        return None
    if op in _MUST_STAY_OUTSIDE:
        return f"{producer.name}: {_MUST_STAY_OUTSIDE[op]}"
    if op in CONTROL_FLOW:
        return f"{producer.name} is a {op.value}: control flow stays outside fusions"
    if op in SIDE_EFFECTING or op in COLLECTIVE:
        return f"{producer.name} ({op.value}) has side effects; it runs once, on its own"
    if not producer.shape.is_array:
        return f"{producer.name} ({op.value}) returns a {producer.shape.element_type.value}, " \
               "not an array"
    if op in INPUT_HEROES:
        return f"{producer.name} ({op.value}) only heads a fusion"
    return f"{producer.name} ({op.value}) has no elemental form to fuse"


def _cannot_head(producer: HloInstruction, consumer: HloInstruction) -> str | None:
    op = consumer.opcode
    if op is Op.FUSION:
        if consumer.attrs.get("kind") is FusionKind.CUSTOM:
            return f"{consumer.name} is a custom fusion, left as it is"
        return None
    if op in OUTPUT_HEROES:
        return f"{consumer.name} is a {op.value}: it reads its operands from memory " \
               "(only its elementwise consumers fuse with it)"
    if op in LOOP_FUSIBLE or op in INPUT_HEROES:
        return None
    return f"{consumer.name} ({op.value}) cannot take fused producers"


def _is_root(producer: HloInstruction, consumer: HloInstruction) -> str | None:
    computation = producer.parent
    if computation is not None and computation.root_instruction is producer:
        return f"{producer.name} is the result of {computation.name}; " \
               "its value is stored anyway"
    return None


def _duplication(producer: HloInstruction, consumer: HloInstruction,
                 users_of: UsersOf) -> str | None:
    consumers = len(users_of(producer))
    if consumers <= 1 or is_always_duplicable(producer):
        return None
    if producer.opcode is Op.CONSTANT:
        return None  # large constants are refused below, whatever their users
    if is_expensive(producer):
        return f"would duplicate an expensive producer ({producer.name}) into " \
               f"{consumers} consumers"
    return None


def _constants(producer: HloInstruction, consumer: HloInstruction,
               users_of: UsersOf) -> str | None:
    if producer.opcode is not Op.CONSTANT:
        return None
    size = producer.shape.byte_size
    if not _is_effective_scalar(producer.shape) and size > SMALL_CONSTANT_BYTES:
        return f"{producer.name} is a large constant ({size} bytes); it stays one " \
               "read-only buffer"
    if consumer.opcode is not Op.FUSION:
        return f"a constant alone ({producer.name}) does not make a fusion worth a kernel"
    return None


def _concatenate(producer: HloInstruction, consumer: HloInstruction,
                 users_of: UsersOf) -> str | None:
    for concat in (producer, consumer):
        if concat.opcode is Op.CONCATENATE and len(concat.operands) > MAX_CONCATENATE_OPERANDS:
            return f"{concat.name} concatenates {len(concat.operands)} operands (a fused " \
                   f"concatenate of more than {MAX_CONCATENATE_OPERANDS} is a deep select tree)"
    return None


def _heroes(producer: HloInstruction, consumer: HloInstruction, use: OperandUse,
            options: FusionOptions) -> str | None:
    hero = _hero_of(consumer, OUTPUT_HEROES)
    if producer.opcode in OUTPUT_HEROES:
        return _output_fusion(producer, consumer, use, options)
    if hero is not None:
        if _feeds(consumer, producer, hero):
            return f"{producer.name} feeds the {hero.opcode.value} hero of {consumer.name}, " \
                   "which reads its operands from memory"
        if producer.opcode is Op.REDUCE:
            return f"{consumer.name} holds a {hero.opcode.value} hero; a reduction does not " \
                   "join an output fusion"
    if producer.opcode is Op.REDUCE:
        return _reduction(producer, consumer, use, options)
    return None


def _output_fusion(producer: HloInstruction, consumer: HloInstruction, use: OperandUse,
                   options: FusionOptions) -> str | None:
    """A dot/convolution joins only an elementwise epilogue of its own shape."""
    if not options.fuse_dot_epilogues:
        return f"{producer.name} ({producer.opcode.value}) is not fused (output fusion is off)"
    name, op = producer.name, producer.opcode.value
    if consumer.opcode is Op.FUSION and (_hero_of(consumer, INPUT_HEROES | OUTPUT_HEROES)
                                         or is_multi_output(consumer)):
        return f"{name} ({op}) fuses only into an elementwise epilogue; {consumer.name} " \
               "already holds a reduction or dot"
    if consumer.opcode is not Op.FUSION and consumer.opcode not in ELEMENTWISE:
        return f"{name} ({op}) fuses only into an elementwise epilogue, not into " \
               f"{consumer.name} ({consumer.opcode.value})"
    if use.contexts != ((ROOT, ()),) or consumer.shape.dimensions != \
            producer.shape.dimensions:
        return f"{name} ({op}) fuses only into an epilogue that reads each of its elements " \
               f"once, at its own index; {consumer.name} does not"
    return None


def _reduction(producer: HloInstruction, consumer: HloInstruction, use: OperandUse,
               options: FusionOptions) -> str | None:
    """A reduce joins a consumer that reads it once per element (an epilogue) or
    broadcasts it back over the rows it reduced (a diamond)."""
    held = sum(1 for i in _instructions(consumer) if i.opcode in INPUT_HEROES)
    if held + 1 > MAX_REDUCTIONS_IN_FUSION:
        return f"{consumer.name} would hold {held + 1} reductions " \
               f"(limit {MAX_REDUCTIONS_IN_FUSION})"
    reusers = use.reusers
    if not reusers:
        return None
    rows = _elements(producer.operands[0].shape)
    diamond = all(u.opcode is Op.BROADCAST and _elements(u.shape) == rows for u in reusers)
    if diamond and options.fuse_reduction_diamonds:
        return None
    return f"{consumer.name} reads each element of {producer.name} more than once (through " \
           f"{_names(reusers)}); a reduction is fused where it is read once or broadcast " \
           "back over the rows it reduced"


def _reuse(producer: HloInstruction, consumer: HloInstruction, use: OperandUse,
           options: FusionOptions) -> str | None:
    if producer.opcode in OUTPUT_HEROES or producer.opcode is Op.REDUCE:
        return None  # judged by the hero rules
    reusers = use.reusers
    if reusers and is_expensive(producer):
        return f"{producer.name} is expensive and {consumer.name} reads each of its elements " \
               f"more than once (through {_names(reusers)}); fusing would recompute it " \
               "for every read"
    return None


def _budget(producer: HloInstruction, consumer: HloInstruction, use: OperandUse,
            options: FusionOptions) -> str | None:
    if use.emissions > MAX_CODE_DUPLICATION:
        return f"{producer.name} would be emitted more than {MAX_CODE_DUPLICATION} times " \
               f"in {consumer.name} (code duplication)"
    operands = {id(op) for op in consumer.operands if op is not producer}
    operands |= {id(op) for op in producer.operands}
    outputs = len(fusion_outputs(consumer)) if consumer.opcode is Op.FUSION else 1
    if len(operands) + outputs > MAX_OPERANDS_AND_OUTPUTS:
        return f"{consumer.name} would have {len(operands) + outputs} operands and outputs " \
               f"(limit {MAX_OPERANDS_AND_OUTPUTS})"
    size = _size(consumer) + 1
    if size > MAX_FUSED_INSTRUCTIONS:
        return f"{consumer.name} would hold {size} instructions " \
               f"(limit {MAX_FUSED_INSTRUCTIONS})"
    return None


def _allow_reason(producer: HloInstruction, consumer: HloInstruction,
                  use: OperandUse) -> str:
    kind = predicted_kind(producer, consumer).value
    if producer.opcode in OUTPUT_HEROES:
        return f"{producer.name} heads an output fusion with its elementwise epilogue " \
               f"{consumer.name} ({kind})"
    if producer.opcode is Op.REDUCE:
        shape = "broadcast back over its rows (reduction diamond)" if use.reusers else \
            "read once per element (reduction epilogue)"
        return f"{producer.name} into {consumer.name}, {shape} ({kind})"
    return f"{producer.name} into {consumer.name} ({kind})"


def predicted_kind(producer: HloInstruction, consumer: HloInstruction) -> FusionKind:
    """The kind the fusion of `producer` into `consumer` will have."""
    kinds = {_kind_of(producer), _kind_of(consumer)}
    for kind in (FusionKind.OUTPUT, FusionKind.INPUT):
        if kind in kinds:
            return kind
    return FusionKind.LOOP


def _kind_of(instruction: HloInstruction) -> FusionKind:
    """A fusion's kind, or the kind a lone instruction would give a fusion."""
    if instruction.opcode is Op.FUSION:
        return instruction.attrs["kind"]
    if instruction.opcode in OUTPUT_HEROES:
        return FusionKind.OUTPUT
    return FusionKind.INPUT if instruction.opcode in INPUT_HEROES else FusionKind.LOOP


# -- helpers ----------------------------------------------------------------------------
def _instructions(consumer: HloInstruction) -> list[HloInstruction]:
    """What a consumer holds: a fusion's fused instructions, or the instruction itself."""
    return fused_instructions(consumer) if consumer.opcode is Op.FUSION else [consumer]


def _hero_of(consumer: HloInstruction, heroes: frozenset) -> HloInstruction | None:
    """The first op of `heroes` in `consumer`; a loop fusion (by kind) holds none."""
    if consumer.opcode is Op.FUSION and consumer.attrs["kind"] is FusionKind.LOOP:
        return None
    return next((i for i in _instructions(consumer) if i.opcode in heroes), None)


def _size(consumer: HloInstruction) -> int:
    """How many instructions a consumer holds (fused parameters aside)."""
    if consumer.opcode is not Op.FUSION:
        return 1
    computation = fused_computation(consumer)
    return len(computation.instructions) - computation.num_parameters


def _feeds(consumer: HloInstruction, producer: HloInstruction,
           hero: HloInstruction) -> bool:
    """Whether `producer` is read by `hero` directly (through its fusion parameter)."""
    if consumer.opcode is not Op.FUSION:
        return any(op is producer for op in hero.operands)
    numbers = {n for n, op in enumerate(consumer.operands) if op is producer}
    return any(op.opcode is Op.PARAMETER and op.parameter_number in numbers
               for op in hero.operands)


def _names(instructions: list[HloInstruction]) -> str:
    return ", ".join(i.name for i in instructions)


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
