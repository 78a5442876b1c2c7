"""The memory-aware scheduler (XLA's HloMemoryScheduler, pass "hlo-memory-scheduler").

Orders each computation's instructions so that fewer bytes are live at
once, then marks the module `is_scheduled=true`; the instruction order is
the schedule from then on (liveness and buffer assignment read it).

Like XLA's DefaultMemoryScheduler it tries several orders and keeps the one
whose peak of live bytes (`sequence_memory`, no fragmentation) is lowest:

1. **list**: greedy. Among the instructions whose operands are all
   scheduled, take the one that frees the most bytes net of what it
   defines (bytes of operand buffers it reads last, minus its own output
   bytes), ties to the one with more users, then the most recently readied.
   Scalar results go first, so scalar chains stay together.
2. **dfs**: post-order from the root, visiting first the operands with the
   most transitive fan-out, then the larger transitive size, then by name.
3. **post-order**: plain post-order from the root.
4. **program order** (ours): the order it came in, so scheduling never
   makes a module worse.

Ties keep the program order (so a second run changes nothing), then prefer
list, dfs, post-order, as XLA does. Called computations (loop bodies, branches,
called functions) are scheduled first, callees before callers, and their
peak counts as live while the instruction calling them runs. Fusion bodies
and reducers are left as they are: they hold no buffers.

Dependences are never broken: operands come before users, and so do
`control-predecessors` and the previous side-effecting instruction (rng,
infeed/outfeed, send/recv keep their relative order, which is their meaning).
Results are therefore unchanged. The pass is deterministic: ties are broken
by positions and names, never by object identity.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable

from xlapy.analysis.liveness import (
    CONTROL_FLOW_OPS,
    Source,
    points_to,
    sequence_memory,
    source_size,
)
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.opcode import Opcode
from xlapy.passes.dce import has_side_effect
from xlapy.passes.pass_interface import Pass

ALGORITHMS = ("default", "list", "dfs", "post-order")


class HloMemoryScheduler(Pass):
    """Reorder computations to lower peak memory; `algorithm` is "default" (the best
    of all candidates) or one of "list", "dfs", "post-order"."""

    name = "hlo-memory-scheduler"

    def __init__(self, algorithm: str = "default"):
        if algorithm not in ALGORITHMS:
            raise ValueError(f"unknown scheduler {algorithm!r}; expected one of {ALGORITHMS}")
        self.algorithm = algorithm
        self.peak_bytes: dict[str, int] = {}
        """computation name -> peak live bytes of the chosen order (for dumps and tests)."""
        self.chosen: dict[str, str] = {}
        """computation name -> the candidate that won."""

    def run(self, module: HloModule) -> bool:
        """Schedule the entry and every computation control flow runs; True when an
        order changed or the module was not yet marked `is_scheduled`."""
        changed = False
        memory: dict[HloComputation, int] = {}
        for computation in scheduled_computations(module):
            order, peak, chosen = self.schedule(computation, memory)
            memory[computation] = peak
            self.peak_bytes[computation.name] = peak
            self.chosen[computation.name] = chosen
            if order != computation.instructions:
                computation.instructions = order
                changed = True
        if module.attributes.get("is_scheduled") is not True:
            module.attributes = {"is_scheduled": True, **{
                k: v for k, v in module.attributes.items() if k != "is_scheduled"}}
            changed = True
        return changed

    def schedule(self, computation: HloComputation, memory: dict[HloComputation, int]):
        """(order, its peak bytes, the candidate's name) for one computation."""
        graph = _Graph(computation)
        candidates: list[tuple[str, Callable[[], list[HloInstruction]]]] = [
            ("program", lambda: list(computation.instructions)),
            ("list", lambda: list_schedule(graph, memory)),
            ("dfs", lambda: dfs_schedule(graph)),
            ("post-order", lambda: post_order_schedule(graph)),
        ]
        if self.algorithm != "default":
            candidates = [c for c in candidates if c[0] == self.algorithm]
        best = None
        for name, make in candidates:
            order = _parameters_first(make(), graph)
            peak = sequence_memory(computation, order, callee_bytes=memory)
            if best is None or peak < best[1]:
                best = (order, peak, name)
        return best


def _parameters_first(order: list[HloInstruction], graph: _Graph) -> list[HloInstruction]:
    """Parameters lead, in their original order: they are not temporaries, so this
    costs nothing, and the schedule reads like the signature."""
    params = [i for i in graph.instructions
              if i.opcode is Opcode.PARAMETER and not graph.preds[i]]
    chosen = set(map(id, params))
    return params + [i for i in order if id(i) not in chosen]


def scheduled_computations(module: HloModule) -> list[HloComputation]:
    """The entry and every computation control flow runs, callees before callers."""
    result: list[HloComputation] = []
    seen: set[int] = set()

    def visit(computation: HloComputation) -> None:
        if id(computation) in seen:
            return
        seen.add(id(computation))
        for instruction in computation.instructions:
            if instruction.opcode in CONTROL_FLOW_OPS:
                for callee in instruction.called_computations:
                    visit(callee)
        result.append(computation)

    visit(module.entry_computation)
    return result


# -- the dependence graph ------------------------------------------------------------------
class _Graph:
    """Operands plus ordering edges, and the buffers each instruction defines and reads."""

    def __init__(self, computation: HloComputation):
        self.computation = computation
        self.instructions = list(computation.instructions)
        extra = extra_predecessors(computation)
        self.preds = {i: list(dict.fromkeys(i.operands + extra.get(i, [])))
                      for i in self.instructions}
        self.succs: dict[HloInstruction, list[HloInstruction]] = {i: [] for i in self.instructions}
        for instruction in self.instructions:
            for pred in self.preds[instruction]:
                self.succs[pred].append(instruction)
        pts = points_to(computation)
        self.defines = {i: [s for s in pts[i].values() if s[0] is i] for i in self.instructions}
        self.reads = {i: list(dict.fromkeys(s for op in i.operands for s in pts[op].values()))
                      for i in self.instructions}
        self.live_out = set(pts[computation.root_instruction].values())
        self.users = {i: len(dict.fromkeys(u for u in self.succs[i] if i in u.operands))
                      for i in self.instructions}


def extra_predecessors(computation: HloComputation) -> dict[HloInstruction, list[HloInstruction]]:
    """Ordering edges that are not operands: `control-predecessors`, and each
    side-effecting instruction after the previous one."""
    by_name = {i.name: i for i in computation.instructions}
    result: dict[HloInstruction, list[HloInstruction]] = {}
    previous = None
    memo: dict[int, bool] = {}
    for instruction in computation.instructions:
        preds = [by_name[n] for n in _control_predecessor_names(instruction) if n in by_name]
        if has_side_effect(instruction, memo):
            if previous is not None:
                preds.append(previous)
            previous = instruction
        if preds:
            result[instruction] = preds
    return result


_NAME = re.compile(r"%?([^\s,{}%]+)")


def _control_predecessor_names(instruction: HloInstruction) -> list[str]:
    raw = instruction.attr("control-predecessors")
    if raw is None:
        return []
    return _NAME.findall(getattr(raw, "text", str(raw)))


def _ignored(source: Source) -> bool:
    """Parameters and constants are not temporaries: they do not count."""
    return source[0].opcode in (Opcode.PARAMETER, Opcode.CONSTANT)


# -- list scheduling -----------------------------------------------------------------------
def list_schedule(graph: _Graph, memory: dict[HloComputation, int]) -> list[HloInstruction]:
    """XLA's ListScheduler: repeatedly take the ready instruction with the best
    (bytes freed - bytes defined, user count), scalars first, newest ready first."""
    unscheduled_uses: dict[Source, int] = {}
    for instruction in graph.instructions:
        for source in graph.reads[instruction]:
            unscheduled_uses[source] = unscheduled_uses.get(source, 0) + 1
    for source in graph.live_out:
        unscheduled_uses[source] = unscheduled_uses.get(source, 0) + 1
    waiting = {i: len(graph.preds[i]) for i in graph.instructions}
    stamp: dict = {}  # ready instruction -> (counter, priority) of its live queue entry
    queue: list = []
    counter = 0

    def priority(instruction: HloInstruction) -> tuple:
        if instruction.shape.is_array and instruction.shape.element_count == 1:
            return (float("inf"), float("inf"))
        freed = sum(source_size(s) for s in graph.reads[instruction]
                    if not _ignored(s) and unscheduled_uses[s] == 1)
        defined = sum(source_size(s) for s in graph.defines[instruction] if not _ignored(s))
        callee = max((memory.get(c, 0) for c in instruction.called_computations), default=0)
        if callee and instruction.opcode in CONTROL_FLOW_OPS:
            defined = callee  # the callee's root already is this output
        else:
            defined += callee
        return (freed - defined, graph.users[instruction])

    def push(instruction: HloInstruction, rank: tuple) -> None:
        nonlocal counter
        counter += 1
        stamp[instruction] = (counter, rank)
        heapq.heappush(queue, (-rank[0], -rank[1], -counter, instruction))

    for instruction in graph.instructions:
        if not waiting[instruction]:
            push(instruction, priority(instruction))
    order: list[HloInstruction] = []
    while queue:
        entry = heapq.heappop(queue)
        best = entry[-1]
        if best not in stamp or stamp[best][0] != -entry[2]:
            continue  # a stale entry: its priority was updated
        del stamp[best]
        order.append(best)
        became_last_use = False
        for source in graph.reads[best]:
            unscheduled_uses[source] -= 1
            became_last_use |= unscheduled_uses[source] == 1
        for succ in graph.succs[best]:
            waiting[succ] -= 1
            if not waiting[succ]:
                push(succ, priority(succ))
        if became_last_use:
            for operand in dict.fromkeys(best.operands):
                for user in graph.succs[operand]:
                    if user in stamp and priority(user) != stamp[user][1]:
                        push(user, priority(user))
    if len(order) != len(graph.instructions):
        stuck = [i.name for i in graph.instructions if waiting[i]]
        raise ValueError(f"computation {graph.computation.name}: operands and control "
                         f"predecessors form a cycle through {', '.join(stuck[:5])}")
    return order


# -- depth-first orders --------------------------------------------------------------------
def dfs_schedule(graph: _Graph) -> list[HloInstruction]:
    """XLA's DFSMemoryScheduler: post-order, heavier operand subtrees first."""
    extra_users: dict[HloInstruction, int] = {}
    total_sizes: dict[HloInstruction, int] = {}
    cap_users, cumulative = len(graph.instructions), 0
    for instruction in post_order_schedule(graph):
        if instruction.opcode in (Opcode.PARAMETER, Opcode.CONSTANT):
            extra_users[instruction] = total_sizes[instruction] = 0
            continue
        own = sum(source_size(s) for s in graph.defines[instruction])
        cumulative += own
        users = graph.users[instruction]
        preds = graph.preds[instruction]
        extra_users[instruction] = min(max(users - 1, 0) + sum(extra_users[p] for p in preds),
                                       cap_users)
        total_sizes[instruction] = min(own + sum(total_sizes[p] for p in preds), cumulative)

    def key(pred: HloInstruction) -> tuple:
        return (-extra_users[pred], -total_sizes[pred], pred.name)

    return _post_order(graph, key)


def post_order_schedule(graph: _Graph) -> list[HloInstruction]:
    """Post-order from the root (operands in operand order), then the rest."""
    return _post_order(graph, None)


def _post_order(graph: _Graph, key) -> list[HloInstruction]:
    order: list[HloInstruction] = []
    done: set[int] = set()
    root = graph.computation.root_instruction
    for start in [root] + graph.instructions:
        if id(start) in done:
            continue
        stack = [(start, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                if id(node) not in done:
                    done.add(id(node))
                    order.append(node)
                continue
            if id(node) in done:
                continue
            stack.append((node, True))
            preds = graph.preds[node] if key is None else sorted(graph.preds[node], key=key)
            stack.extend((p, False) for p in reversed(preds) if id(p) not in done)
    return order
