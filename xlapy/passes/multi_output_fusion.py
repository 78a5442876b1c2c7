"""Multi-output fusion: XLA's MultiOutputFusion, pass name "multi_output_fusion".

Runs after instruction fusion, over the fusions it left, as XLA:GPU's
multi_output_fusion.cc does. Instructions are visited from uses to
definitions; for each one:

1. Sibling fusion: the fusions, reductions and elementwise ops that read it
   are merged into one fusion returning a tuple, so it is read once. The mean
   and mean-of-squares of a layer norm, or a max and a min of the same input,
   become one kernel; their readers take `get-tuple-element`s. (XLA needs the
   first sibling to be a fusion already; two lone reductions merge here too.)
2. Producer-consumer fusion: if it still has several readers (it was kept
   whole because copying it would cost too much, like an `exp` whose values
   are both summed and returned), it is fused into one of its consumer
   fusions, which returns it as an extra output.

A merge must not create a cycle (the two may not depend on each other
through other instructions), must keep one iteration space (loop outputs of
one shape; reductions of the same input shape over the same dimensions, with
loop outputs of that input shape), and must fit the same budget as
instruction fusion. Scalars are not worth merging over: reading one twice
costs nothing (XLA refuses only scalar constants). Every decision is kept in
`decisions` as (producer or sibling, consumer, reason).

Exactness: merging moves computations between kernels without changing any
op, so results are bit-identical as the interpreter computes them.
"""

from __future__ import annotations

from dataclasses import dataclass

from xlapy.hlo.attributes import FusionKind
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.opcode import ELEMENTWISE, Opcode
from xlapy.passes.fusion import DecisionLog
from xlapy.passes.fusion_cost import (
    LOOP_FUSIBLE,
    MAX_FUSED_INSTRUCTIONS,
    MAX_OPERANDS_AND_OUTPUTS,
    MAX_REDUCTIONS_IN_FUSION,
    WHOLE_REDUCTION_INPUT,
    FusionDecision,
    FusionRecord,
    consumer_uses,
    is_expensive,
)
from xlapy.passes.fusion_utils import (
    INPUT_HEROES,
    FusionNames,
    Reachability,
    UserMap,
    create_fusion,
    fuse_producer,
    fused_computation,
    fused_instructions,
    fusible_computations,
    fusion_outputs,
    is_multi_output,
    merge_fusions,
    tidy,
)
from xlapy.passes.pass_interface import Pass


class MultiOutputFusion(Pass):
    """Merges sibling fusions and producer-consumer pairs into multi-output fusions."""

    name = "multi_output_fusion"

    def __init__(self):
        self.decisions: list[FusionRecord] = []

    def run(self, module: HloModule) -> bool:
        """Merge throughout `module`; True when any fusions were merged."""
        names = FusionNames(module)
        log = DecisionLog()
        touched: dict[int, HloComputation] = {}
        for computation in fusible_computations(module):
            _Merger(computation, names, log, touched).run()
        self.decisions = log.records()
        if touched:
            tidy(module, list(touched.values()), names)
        return bool(touched)


class _Merger:
    """Multi-output fusion over one computation."""

    def __init__(self, computation: HloComputation, names: FusionNames, log: DecisionLog,
                 touched: dict):
        self.computation = computation
        self.names = names
        self.log = log
        self.touched = touched
        self.reach = Reachability(computation)
        self.users = UserMap(computation)
        self._profiles: dict[int, _Profile] = {}

    def alive(self, instruction: HloInstruction) -> bool:
        """Still in this computation (merged and wrapped instructions left it)."""
        return instruction.parent is self.computation

    def run(self) -> None:
        for producer in reversed(self.computation.post_order()):
            if not self.alive(producer) or producer.opcode is Opcode.CONSTANT:
                continue
            self._fuse_siblings(producer)
            if self.alive(producer):
                self._fuse_into_consumer(producer)

    # -- siblings ---------------------------------------------------------------------------
    def _fuse_siblings(self, parent: HloInstruction) -> None:
        if not parent.shape.is_array or parent.shape.element_count <= 1:
            return
        siblings = sorted(self.users(parent), key=lambda s: -_priority(s))
        i = 0
        while i < len(siblings):
            first = siblings[i]
            if self.profile(first).root_problem is None:
                self._merge_into(first, siblings, i + 1, parent)
            i += 1

    def _merge_into(self, first: HloInstruction, siblings: list, start: int,
                    parent: HloInstruction) -> None:
        j = start
        while j < len(siblings):
            other = siblings[j]
            decision = self._siblings(first, other, parent)
            self.log.add(other, first, decision)
            if not decision:
                j += 1
                continue
            first = self._merge(first, other)
            siblings.pop(j)

    def _siblings(self, first: HloInstruction, other: HloInstruction,
                  parent: HloInstruction) -> FusionDecision:
        a, b = self.profile(first), self.profile(other)
        if b.root_problem is not None:
            return FusionDecision.forbid(b.root_problem)
        if self.reach.connected(first, other):
            return FusionDecision.forbid(f"{first.name} and {other.name} are connected; "
                                         "merging them would create a cycle")
        problem = _incompatible(a, b) or _over_budget(a, b)
        if problem is not None:
            return FusionDecision.forbid(problem)
        return FusionDecision.allow(f"{other.name} and {first.name} both read {parent.name} "
                                    f"(sibling multi-output fusion, {_kind(a, b)})")

    # -- producer into consumer ---------------------------------------------------------------
    def _fuse_into_consumer(self, producer: HloInstruction) -> None:
        consumers = list(self.users(producer))
        if len(consumers) < 2 or _producer_problem(producer) is not None:
            return
        chosen = None
        for consumer in consumers:
            decision = self._producer_consumer(producer, consumer)
            self.log.add(producer, consumer, decision)
            if decision and (chosen is None or _priority(consumer) > _priority(chosen)):
                chosen = consumer
        if chosen is not None:
            self._merge(chosen, producer)

    def _producer_consumer(self, producer: HloInstruction,
                           consumer: HloInstruction) -> FusionDecision:
        a, b = self.profile(consumer), self.profile(producer)
        if a.root_problem is not None:
            return FusionDecision.forbid(a.root_problem)
        for operand in consumer.operands:
            if operand is not producer and self.reach.reaches(producer, operand):
                return FusionDecision.forbid(
                    f"fusing {producer.name} into {consumer.name} would create a cycle "
                    f"(through {operand.name})")
        problem = _incompatible(a, b) or _over_budget(a, b) or _recomputed(b, consumer)
        if problem is not None:
            return FusionDecision.forbid(problem)
        return FusionDecision.allow(f"{producer.name} into {consumer.name}, which also "
                                    f"returns it (multi-output, {_kind(a, b)})")

    def _wrap(self, instruction: HloInstruction) -> HloInstruction:
        """A fusion of `instruction` alone, with its scalar constants pulled inside
        (instruction fusion would have fused them had it made this fusion)."""
        fusion = create_fusion(instruction, self.names, self.users)
        self.reach.alias(fusion, instruction)
        for operand in list(fusion.operands):
            if operand.opcode is Opcode.CONSTANT and operand.shape.element_count == 1:
                fuse_producer(fusion, operand, self.names, self.users)
        return fusion

    def profile(self, instruction: HloInstruction) -> _Profile:
        """The candidate's profile, cached until it changes."""
        found = self._profiles.get(id(instruction))
        if found is None:
            found = self._profiles[id(instruction)] = _profile(instruction)
        return found

    # -- merging ------------------------------------------------------------------------------
    def _merge(self, target: HloInstruction, source: HloInstruction) -> HloInstruction:
        """Merge `source` into `target`, wrapping plain instructions in fusions first;
        return the merged fusion."""
        if target.opcode is not Opcode.FUSION:
            target = self._wrap(target)
        if source.opcode is not Opcode.FUSION:
            source = self._wrap(source)
        self.reach.merge(target, source)
        merge_fusions(target, source, self.names, self.users)
        self._profiles.pop(id(target), None)
        computation = fused_computation(target)
        self.touched[id(computation)] = computation
        return target


# -- the rules --------------------------------------------------------------------------------
def _priority(instruction: HloInstruction) -> int:
    """XLA's FusionPriority: multi-output fusions, then fusions, then the rest."""
    if instruction.opcode is not Opcode.FUSION:
        return 0
    return 2 if is_multi_output(instruction) else 1


@dataclass(frozen=True)
class _Profile:
    """What the merge rules need to know of a candidate, computed once per version."""

    instruction: HloInstruction  # held, so that its id stays its own
    root_problem: str | None
    space: tuple | None
    size: int
    reductions: int
    outputs: int
    expensive: bool
    whole: str | None
    """Why its reduction must stay alone (it reduces a whole large array), or None."""


def _profile(instruction: HloInstruction) -> _Profile:
    inside = _inside(instruction)
    outputs = fusion_outputs(instruction) if instruction.opcode is Opcode.FUSION \
        else [instruction]
    return _Profile(instruction, _root_problem(instruction, inside, outputs),
                    _space(inside, outputs), len(inside),
                    sum(1 for i in inside if i.opcode in INPUT_HEROES), len(outputs),
                    any(is_expensive(i) for i in inside), _whole_reduction(inside))


def _whole_reduction(inside: list) -> str | None:
    """Why a reduce of `inside` must keep a kernel of its own, or None. A large
    array reduced to one value is split between threads only alone; merged with
    anything it would run on one thread (a squared-error loss over f32[8,128,256]
    and its gradient: 149 us in one kernel, 58 in two; two sums of it 73 and 34).
    Column reductions to a few values merge: their kernel handles both kinds of
    root (backends/cpu/column_reduce.py)."""
    for i in inside:
        if i.opcode is Opcode.REDUCE and i.shape.is_array and i.shape.element_count == 1 \
                and i.operands[0].shape.element_count >= WHOLE_REDUCTION_INPUT:
            return f"{i.name} reduces all {i.operands[0].shape.element_count} elements: " \
                   "it runs alone, split between threads"
    return None


def _root_problem(instruction: HloInstruction, inside: list, outputs: list) -> str | None:
    """Why `instruction` cannot be (part of) a multi-output fusion root, or None."""
    name = instruction.name
    if instruction.opcode is Opcode.FUSION:
        kind = instruction.attrs.get("kind")
        if kind not in (FusionKind.LOOP, FusionKind.INPUT):
            return f"{name} is a {kind.value} fusion; only loop and input fusions merge"
        if any(not o.shape.is_array for o in outputs):
            return f"{name} returns a tuple from one op (a variadic reduce)"
        if any(i.opcode is Opcode.REDUCE_WINDOW for i in inside):
            return f"{name} holds a reduce-window"
        return None
    if not instruction.shape.is_array:
        return f"{name} ({instruction.opcode.value}) returns a tuple"
    if instruction.opcode is Opcode.REDUCE or instruction.opcode in ELEMENTWISE:
        return None
    return f"{name} ({instruction.opcode.value}) cannot be a multi-output fusion root"


def _producer_problem(producer: HloInstruction) -> str | None:
    """Why `producer` cannot be fused into a consumer as an extra output, or None."""
    if producer.opcode is Opcode.FUSION:
        if producer.attrs.get("kind") is not FusionKind.LOOP:
            return f"{producer.name} is not a loop fusion"
        return None
    if producer.opcode in LOOP_FUSIBLE and producer.shape.is_array:
        return None
    return f"{producer.name} ({producer.opcode.value}) is not loop-fusible"


def _space(inside: list, outputs: list) -> tuple | None:
    """The iteration space: ("reduce", input dims, reduced dims) for reductions, or
    ("loop", dims); None when the reductions inside disagree."""
    reduces = {_hero_space(r) for r in inside if r.opcode in INPUT_HEROES}
    if len(reduces) > 1:
        return None
    if reduces:
        return ("reduce",) + reduces.pop()
    dims = {o.shape.dimensions for o in outputs}
    return ("loop", dims.pop()) if len(dims) == 1 else None


def _hero_space(hero: HloInstruction) -> tuple:
    """What a reduction iterates over: its input dims and reduced dims (a reduce)
    or its window (a reduce-window)."""
    if hero.opcode is Opcode.REDUCE:
        return hero.operands[0].shape.dimensions, tuple(hero.attrs["dimensions"])
    return hero.operands[0].shape.dimensions, hero.attrs.get("window")


def _incompatible(a: _Profile, b: _Profile) -> str | None:
    if a.whole or b.whole:
        return a.whole or b.whole
    space_a, space_b = a.space, b.space
    if space_a is None or space_b is None:
        which = a if space_a is None else b
        return f"{which.instruction.name} holds reductions of different shapes"
    if space_a == space_b:
        return None
    if {space_a[0], space_b[0]} == {"reduce", "loop"}:
        reduce, loop = (space_a, space_b) if space_a[0] == "reduce" else (space_b, space_a)
        if reduce[1] == loop[1]:
            return None
    return f"{a.instruction.name} and {b.instruction.name} iterate over different shapes"


def _over_budget(a: _Profile, b: _Profile) -> str | None:
    x, y = a.instruction, b.instruction
    operands = {id(op) for op in x.operands + y.operands if op is not x and op is not y
                and not (op.opcode is Opcode.GET_TUPLE_ELEMENT and op.operands[0] in (x, y))}
    outputs = a.outputs + b.outputs
    names = f"{x.name} and {y.name}"
    if len(operands) + outputs > MAX_OPERANDS_AND_OUTPUTS:
        return f"merging {names} would need {len(operands) + outputs} operands and outputs " \
               f"(limit {MAX_OPERANDS_AND_OUTPUTS})"
    if a.size + b.size > MAX_FUSED_INSTRUCTIONS:
        return f"merging {names} would hold {a.size + b.size} instructions " \
               f"(limit {MAX_FUSED_INSTRUCTIONS})"
    if a.reductions + b.reductions > MAX_REDUCTIONS_IN_FUSION:
        return f"merging {names} would hold {a.reductions + b.reductions} reductions " \
               f"(limit {MAX_REDUCTIONS_IN_FUSION})"
    return None


def _recomputed(producer: _Profile, consumer: HloInstruction) -> str | None:
    """An expensive producer must not be recomputed for each read of the consumer."""
    if not producer.expensive:
        return None
    producer = producer.instruction
    index = next(k for k, op in enumerate(consumer.operands) if op is producer)
    reusers = consumer_uses(consumer)[index].reusers
    if reusers:
        return f"{consumer.name} reads each element of {producer.name} more than once " \
               f"(through {', '.join(r.name for r in reusers)}) and it is expensive"
    return None


def _inside(instruction: HloInstruction) -> list[HloInstruction]:
    if instruction.opcode is Opcode.FUSION:
        return fused_instructions(instruction)
    return [instruction]


def _kind(a: _Profile, b: _Profile) -> str:
    return (FusionKind.INPUT if a.reductions + b.reductions else FusionKind.LOOP).value
