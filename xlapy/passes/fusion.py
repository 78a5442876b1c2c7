"""Producer-consumer instruction fusion: XLA's InstructionFusion, pass name "fusion".

Each computation (the entry and control-flow bodies; never fused or scalar
computations) is walked from its outputs back to its inputs, in reverse post
order as XLA's ReversePostOrderFusionQueue does. Each instruction offers its
operands, latest first, to the cost model (`fusion_cost.should_fuse`); the
first one accepted is fused (the consumer becomes a `fusion` if it is not one
yet) and the grown fusion is offered its new operands in turn. So a chain of
elementwise ops collapses into one kLoop fusion, `sum(x + y * z)` into one
kInput fusion rooted at the reduce, `relu(dot + bias)` into one kOutput
fusion around the dot, and a row softmax into one kInput fusion holding both
reductions (each broadcast back over the rows it reduced).

Before the walk, as XLA does when it may duplicate, producers that would be
duplicated but cannot be fused into every consumer on every path (and read
more than they write) are marked to stay materialised. Unlike XLA, only
producers with several users are judged so: a single-user producer is
decided by the cost model alone.

Every decision is kept on the pass, `decisions`: a list of (producer,
consumer, reason) with the latest reason for each pair, for dumps.
"""

from __future__ import annotations

from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.opcode import Opcode
from xlapy.passes.fusion_cost import (
    FusionDecision,
    FusionOptions,
    FusionRecord,
    consumer_uses,
    effectively_at_most_unary,
    extend_contexts,
    fusion_contexts,
    should_fuse,
)
from xlapy.passes.fusion_utils import (
    FusionNames,
    Reachability,
    UserMap,
    create_fusion,
    fuse_producer,
    fused_computation,
    fused_parameter,
    fusible_computations,
    tidy,
)
from xlapy.passes.pass_interface import Pass


class InstructionFusion(Pass):
    """Fuses producers into consumers: loop, reduction-input and dot-epilogue fusion."""

    name = "fusion"

    def __init__(self, *, may_duplicate: bool = True, fuse_dot_epilogues: bool = True,
                 fuse_reduction_diamonds: bool = True):
        self.options = FusionOptions(may_duplicate, fuse_dot_epilogues, fuse_reduction_diamonds)
        self.decisions: list[FusionRecord] = []

    def run(self, module: HloModule) -> bool:
        """Fuse throughout `module`; True when any fusion was formed or grown."""
        names = FusionNames(module)
        log = DecisionLog()
        touched: dict[int, HloComputation] = {}
        for computation in fusible_computations(module):
            _Fuser(computation, names, self.options, log, touched).run()
        self.decisions = log.records()
        if touched:
            tidy(module, list(touched.values()), names)
        return bool(touched)


class DecisionLog:
    """The latest decision per (producer, consumer) pair, in first-seen order."""

    def __init__(self):
        self._records: dict[tuple[str, str], FusionRecord] = {}

    def add(self, producer: HloInstruction, consumer: HloInstruction,
            decision: FusionDecision) -> None:
        key = (producer.name, consumer.name)
        self._records[key] = FusionRecord(producer.name, consumer.name, decision.explain())

    def records(self) -> list[FusionRecord]:
        return list(self._records.values())


class _Fuser:
    """The fusion loop over one computation."""

    def __init__(self, computation: HloComputation, names: FusionNames,
                 options: FusionOptions, log: DecisionLog, touched: dict):
        self.computation = computation
        self.names = names
        self.options = options
        self.log = log
        self.touched = touched
        self.users = UserMap(computation)
        self.queue = _Queue(computation.post_order())
        self.keep: dict[int, FusionDecision] = {}
        self.contexts: dict[int, dict] = {}
        if options.may_duplicate:
            self.keep = _globally_unfusible(computation, self.users, options)

    def run(self) -> None:
        while (consumer := self.queue.pop()) is not None:
            self._offer_operands(consumer)

    def _offer_operands(self, consumer: HloInstruction) -> None:
        """Fuse the first acceptable operand; the grown fusion goes back in the queue."""
        uses = None
        for index in self.queue.operands_by_priority(consumer):
            producer = consumer.operands[index]
            uses = uses if uses is not None else consumer_uses(consumer,
                                                               self._contexts(consumer))
            decision = should_fuse(consumer, index, self.users, self.options, uses[index])
            if decision and len(self.users(producer)) > 1:
                decision = self.keep.get(id(producer), decision)
            self.log.add(producer, consumer, decision)
            if decision:
                self._fuse(producer, consumer)
                return

    def _contexts(self, consumer: HloInstruction) -> dict | None:
        """The fused contexts of a fusion consumer, kept up to date as it grows (so the
        cost model does not re-walk a fusion for every producer it is offered)."""
        if consumer.opcode is not Opcode.FUSION:
            return None
        if id(consumer) not in self.contexts:
            self.contexts[id(consumer)] = fusion_contexts(fused_computation(consumer))
        return self.contexts[id(consumer)]

    def _fuse(self, producer: HloInstruction, consumer: HloInstruction) -> None:
        fusion = consumer
        if consumer.opcode is not Opcode.FUSION:
            fusion = create_fusion(consumer, self.names, self.users)
        contexts = self._contexts(fusion)
        param = fused_parameter(fusion, producer)
        inner = fuse_producer(fusion, producer, self.names, self.users)
        extend_contexts(contexts, param, inner)
        if producer.parent is not self.computation:  # moved inside: gone from here
            self.queue.remove(producer)
            self.keep.pop(id(producer), None)
        computation = fused_computation(fusion)
        self.touched[id(computation)] = computation
        self.queue.push(fusion)


class _Queue:
    """Reverse post order with removals and re-insertion (ReversePostOrderFusionQueue)."""

    def __init__(self, post_order: list[HloInstruction]):
        self._items: list[HloInstruction | None] = list(post_order)
        self._position = {id(i): n for n, i in enumerate(post_order)}

    def pop(self) -> HloInstruction | None:
        while self._items and self._items[-1] is None:
            self._items.pop()
        if not self._items:
            return None
        item = self._items.pop()
        del self._position[id(item)]
        return item

    def push(self, item: HloInstruction) -> None:
        self._position[id(item)] = len(self._items)
        self._items.append(item)

    def remove(self, item: HloInstruction) -> None:
        n = self._position.pop(id(item), None)
        if n is not None:
            self._items[n] = None

    def operands_by_priority(self, instruction: HloInstruction) -> list[int]:
        """One operand index per distinct queued operand, latest in the queue first, so
        that a producer is offered before the producers it reads (no double copies)."""
        first: dict[int, int] = {}
        for k, op in enumerate(instruction.operands):
            if id(op) in self._position:
                first.setdefault(id(op), k)
        return sorted(first.values(),
                      key=lambda k: -self._position[id(instruction.operands[k])])


def _globally_unfusible(computation: HloComputation, users: UserMap,
                        options: FusionOptions) -> dict[int, FusionDecision]:
    """Producers to keep materialised: those that read more than they write (more than
    one large operand, more input elements than output elements) and cannot be fused
    into every consumer along every path, so that copying them into some consumers
    would read their inputs again while the value is stored anyway (XLA's
    ComputeGloballyUnfusible). Only producers with several users are judged here."""
    reach = Reachability(computation)
    order = computation.post_order()
    keep: dict[int, FusionDecision] = {}
    for producer in reversed(order):
        consumers = users(producer)
        if len(consumers) <= 1 or effectively_at_most_unary(producer):
            continue
        inputs = sum(op.shape.element_count for op in {id(o): o for o in producer.operands}
                     .values() if op.shape.is_array)
        if not producer.shape.is_array or inputs <= producer.shape.element_count:
            continue
        blocked = _path_not_fusible(producer, reach, users, options, keep)
        if blocked is not None:
            keep[id(producer)] = FusionDecision.forbid(
                f"{producer.name} cannot be fused into all {len(consumers)} of its consumers "
                f"on every path ({blocked.name} would keep it), and copying it would read "
                "its inputs again")
    return keep


def _path_not_fusible(producer: HloInstruction, reach: Reachability, users: UserMap,
                      options: FusionOptions, keep: dict) -> HloInstruction | None:
    """The first consumer of `producer` that could not take its share of the fusion on
    some path from it (CanFuseOnAllPaths), or None."""
    consumers = users(producer)
    ok: dict[int, bool] = {id(producer): True}
    for instruction in reach.between(producer, consumers):
        ok[id(instruction)] = _takes_share(instruction, producer, reach, users, options,
                                           keep, ok)
    for consumer in consumers:
        if not ok.get(id(consumer), False):
            return consumer
    return None


def _takes_share(instruction: HloInstruction, producer: HloInstruction, reach: Reachability,
                 users: UserMap, options: FusionOptions, keep: dict, ok: dict) -> bool:
    """Whether every operand of `instruction` on a path from `producer` may be fused
    into it, and recursively (already computed, in post order) into those operands."""
    for k, operand in enumerate(instruction.operands):
        if operand is not producer and not ok.get(id(operand), False):
            if reach.reaches(producer, operand):
                return False
            continue
        if id(operand) in keep or not should_fuse(instruction, k, users, options):
            return False
    return True
