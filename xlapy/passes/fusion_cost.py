"""The fusion cost model: may this producer join that consumer, and if not, why.

It follows XLA's InstructionFusion (xla/service/instruction_fusion.cc) with the
refinements of its CPU and GPU subclasses (cpu_instruction_fusion.cc,
gpu_fusible.cc). Every answer is a `FusionDecision` that carries its reason,
so dumps can say "not fused: would duplicate an expensive producer (dot.3)
into 2 consumers".
The facts the rules judge by (op costs, element reuse, how often a fused
operand's code is emitted) are in `fusion_operands`.

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
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import COLLECTIVE, CONTROL_FLOW, ELEMENTWISE, SIDE_EFFECTING, Opcode
from xlapy.passes.fusion_operands import (  # noqa: F401  (re-exported: fusion passes, tests)
    MAX_CODE_DUPLICATION,
    ROOT,
    OperandUse,
    Step,
    _elements,
    _is_effective_scalar,
    consumer_uses,
    effectively_at_most_unary,
    extend_contexts,
    fusion_contexts,
    is_always_duplicable,
    is_expensive,
    reuses_operand,
)
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
MAX_REDUCTIONS_IN_FUSION = 5
"""XLA:CPU's kMaxReductionsInFusion."""
MAX_CONCATENATE_OPERANDS = 8
"""XLA:CPU's kMaxConcatenateArguments: a fused concatenate is a select tree."""
WHOLE_REDUCTION_INPUT = 1 << 15
"""A reduction of a whole array this big or bigger to one value is split between
threads by CPU kernels only when it is the fusion's one output
(backends/cpu/parallel_reduce.py; two threads from 2^15 elements)."""
SMALL_CONSTANT_BYTES = 1024
"""Constants up to this size may be fused (and copied); larger ones stay one
read-only buffer (XLA's LiteralCanonicalizer deduplicates literals from 1 KiB)."""

LOOP_FUSIBLE = ELEMENTWISE | frozenset({
    Op.BITCAST, Op.BROADCAST, Op.CONCATENATE, Op.COPY, Op.DYNAMIC_SLICE, Op.GATHER, Op.IOTA,
    Op.PAD, Op.RESHAPE, Op.REVERSE, Op.SLICE, Op.TRANSPOSE,
})
"""Ops with an elemental form (index -> value) that a loop fusion composes: XLA:CPU's
CanBeLoopFused, without dynamic-update-slice (in place: it stays its own kernel)."""

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
    if op is Op.REDUCE_WINDOW and is_running_reduction(consumer):
        return f"{consumer.name} is a running reduction (cumsum...): a scan kernel of its " \
               "own reads its operand from memory"
    if op in LOOP_FUSIBLE or op in INPUT_HEROES:
        return None
    return f"{consumer.name} ({op.value}) cannot take fused producers"


def is_running_reduction(reduce_window: HloInstruction) -> bool:
    """A reduce-window computing a running reduction: backends run it as a scan,
    not window by window."""
    return running_axis(reduce_window) is not None


def running_axis(reduce_window: HloInstruction) -> tuple[int, bool] | None:
    """(axis, reversed) when the window spans one whole axis, padded by n-1 on one
    side (lax.cumsum's form; padded after: a reversed scan), and is a plain 1
    along every other; else None."""
    shape = reduce_window.operands[0].shape
    if not shape.is_array:
        return None
    found = None
    for d, dim in enumerate(reduce_window.attr("window").dimensions):
        n = shape.dimensions[d]
        plain = dim.stride == 1 and dim.window_dilation == 1 and dim.base_dilation == 1
        if plain and dim.size == 1 and dim.padding_low == 0 and dim.padding_high == 0:
            continue
        spans = plain and n > 1 and dim.size == n and \
            (dim.padding_low, dim.padding_high) in ((n - 1, 0), (0, n - 1))
        if not spans or found is not None:
            return None
        found = (d, dim.padding_low == 0)
    return found


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
        reduce = _hero_of(consumer, INPUT_HEROES)
        if reduce is not None and reduce.opcode is Op.REDUCE and \
                _feeds(consumer, producer, reduce):
            return f"{producer.name} is what {reduce.name} reduces: each keeps the kernel " \
                   "its own dimensions give it (a reduction computed per element of another " \
                   "walks its input with strides)"
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
    diamond = all(u.opcode is Op.BROADCAST and _elements(u.shape) == rows
                  and _keeps_outer_dims(u) for u in reusers)
    if diamond and options.fuse_reduction_diamonds and _reduces_minor_dims(producer):
        return None
    return f"{consumer.name} reads each element of {producer.name} more than once (through " \
           f"{_names(reusers)}); a reduction is fused where it is read once or broadcast " \
           "back over the minor dimensions it reduced (a row's value, computed once per " \
           "row; a column's would be recomputed for every element)"


def _layout_order(shape) -> list[int]:
    """Dimensions from major to minor."""
    return list(reversed(shape.layout.minor_to_major if shape.layout is not None
                         else range(shape.rank)))


def _reduces_minor_dims(reduce: HloInstruction) -> bool:
    """Whether `reduce` folds its operand's minor-most dimensions: each result
    element is one row's, which the code generators compute once per row."""
    order = _layout_order(reduce.operands[0].shape)
    reduced = sorted(order.index(d) for d in reduce.attr("dimensions") or ())
    return reduced == list(range(len(order) - len(reduced), len(order)))


def _keeps_outer_dims(broadcast: HloInstruction) -> bool:
    """Whether `broadcast` maps its operand to its own outermost dimensions."""
    order = _layout_order(broadcast.shape)
    kept = sorted(order.index(d) for d in broadcast.attr("dimensions") or ())
    return kept == list(range(len(kept)))


def _reuse(producer: HloInstruction, consumer: HloInstruction, use: OperandUse,
           options: FusionOptions) -> str | None:
    if producer.opcode in OUTPUT_HEROES or producer.opcode is Op.REDUCE:
        return None  # judged by the hero rules
    reusers = use.reusers
    if reusers and is_expensive(producer):
        if options.fuse_reduction_diamonds and _read_once_per_row(consumer, use):
            return None
        return f"{producer.name} is expensive and {consumer.name} reads each of its elements " \
               f"more than once (through {_names(reusers)}); fusing would recompute it " \
               "for every read"
    return None


def _read_once_per_row(consumer: HloInstruction, use: OperandUse) -> bool:
    """Whether every read goes through one broadcast right under the consumer's output
    that keeps only the output's outermost dimensions (in layout order): the
    producer is a value per row, such as a layer norm's sqrt(variance), which the
    code generators compute once per row, hoisted out of the row's loop. Fusing
    it recomputes nothing, and lets the row's reductions join the same kernel."""
    shape = consumer.shape
    if not shape.is_array:
        return False
    for phase, steps in use.contexts:
        if phase != ROOT or not steps:
            return False
        broadcast = steps[0].user
        if broadcast.opcode is not Op.BROADCAST or any(s.reuses for s in steps[1:]) \
                or broadcast.shape.dimensions != shape.dimensions \
                or not _keeps_outer_dims(broadcast):
            return False
    return True


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
