"""A lazy step's life with its tape: kept after a step ran as one cluster,
matched by the next step like it, run whole, or diverted into the pending
graph where the step stops matching (see lazy_tape for what a tape holds).

`lazy` calls in here as it records (`begin_tape`, `next_iteration`) and as it
runs clusters (`keep_tape`, `run_tape`, `new_step`); `lazy_replay` and
`lazy_capture` make a step's calls and `grad` cut-outs from the tape.
"""

from __future__ import annotations

import contextlib

from xlapy.core import lazy_cluster, lazy_tape
from xlapy.core.lazy_graph import Node, refs
from xlapy.core.lazy_state import (
    PENDING,
    STATE,
    STATS,
    count_cut,
    held_outputs,
    settings,
    store_values,
)
from xlapy.hlo.ir import HloInstruction

NEXT_ITERATION = "the loop's next iteration began (the first pending operation recorded again)"


TAPES: dict[int, tuple] = {}
"""id(a tape's first instruction) -> (that instruction, its tapes, the latest
first): the steps a loop has run, found again by how they begin."""
MAX_TAPES = 16
MAX_KINDS = 4
"""Tapes kept per first instruction: a loop whose steps differ now and then (a
value logged every tenth step) keeps a tape of each kind of step."""


def keep_tape(nodes: list[Node], leaves: list, held: dict, executable,
              at_cut: int | None = None) -> None:
    """The step just run as one cluster, kept as the tape of the next like it
    (`at_cut`: it ended where the node of this order began the next iteration)."""
    log = STATE.steplog
    if at_cut is not None:
        log = [entry for entry in log if lazy_tape.logged_order(entry) < at_cut]
    tape = lazy_tape.build(log, STATE.stepcalls, nodes, leaves, tuple(held), executable,
                           at_cut is not None)
    if tape is not None:
        first = nodes[0].instruction
        others = [t for t in kinds(first) if not tape.replaces(t)]
        TAPES.pop(id(first), None)
        TAPES[id(first)] = (first, [tape, *others[:MAX_KINDS - 1]])
        while len(TAPES) > MAX_TAPES:
            del TAPES[next(iter(TAPES))]


def kinds(first: HloInstruction) -> list:
    """The tapes of steps that begin with `first`, the latest first."""
    entry = TAPES.get(id(first))
    return entry[1] if entry is not None and entry[0] is first else []


def _switched(run: lazy_tape.TapeRun, fits):
    """(a run of another tape of the step's kind that the step's nodes and
    cut-outs so far match, what `fits(that run)` gave), for the first such run
    it gives something true for; (None, None) where there is none."""
    for tape in kinds(run.nodes[0].instruction) if run.nodes else ():
        if tape is not run.tape and len(tape.instructions) >= len(run.nodes):
            other = run.rematched(tape)
            accepted = fits(other) if other is not None else None
            if accepted:
                return other, accepted
    return None, None


def next_step_log(due: int) -> None:
    """After a cut where the next iteration began (at order `due`): the nodes
    and cut-outs recorded since begin the next step's log."""
    log = STATE.steplog
    if log is None:
        log = list(PENDING.values())
    STATE.steplog = [entry for entry in log if lazy_tape.logged_order(entry) >= due]
    STATE.stepcalls = {k: v for k, v in STATE.stepcalls.items() if k >= due}


def adopt() -> None:
    """After a cut where the next iteration began: if the nodes recorded since
    are the start of a tape kept at such a cut, they become its run."""
    if STATE.tape is not None or not PENDING or not TAPES or STATE.untaped:
        return
    nodes = list(PENDING.values())
    run = next((r for tape in kinds(nodes[0].instruction) if tape.at_cut
                for r in [_adopted(tape, nodes)] if r is not None), None)
    if run is None:
        return
    log = STATE.steplog or ()
    run.captures.extend(e for e in log if type(e) is tuple and e[0].order in run.position)
    PENDING.clear()
    STATE.repeat = None
    STATE.tape = run


def _adopted(tape, nodes: list[Node]):
    run = lazy_tape.TapeRun(tape)
    for node in nodes:
        if not run.matches(node.instruction, node.operands):
            return None
        run.add(node)
    return run


def next_iteration(run: lazy_tape.TapeRun, instruction, operands):
    """A node that does not match the run's tape: where the tape was kept at a
    loop's cut and is matched whole, the next iteration begins (the step runs,
    and a run of a tape that begins with this node, if any, is returned);
    otherwise the match ends (None)."""
    STATE.tape = None
    read = [(run.position[node.order], index) for node, index in refs(operands)
            if node.order in run.position]   # (results the next node reads are outputs)
    if not (run.tape.at_cut and len(run.nodes) == len(run.tape.instructions)
            and run_tape(run, [], NEXT_ITERATION, read)):
        other, _ = _switched(run, lambda r: r.matches(instruction, operands))
        if other is not None:   # (a step of another kind, so far alike)
            STATE.tape = other
            return other
        divert(run)
        return None
    run = begin_tape(instruction)
    if run is not None and not run.matches(instruction, operands):
        divert(run)
        return None
    return run


def begin_tape(instruction: HloInstruction):
    """A run of the latest tape that begins with `instruction` (nothing is
    pending), or None."""
    tapes = kinds(instruction)
    if not tapes or STATE.untaped or not settings()[3]:
        return None
    run = STATE.tape = lazy_tape.TapeRun(tapes[0])
    return run


def read_tape(run: lazy_tape.TapeRun, arrays: list, reason: str) -> bool:
    """`run_tape` for a value read, of the run's tape or, where the step ends
    here and that one does not, of another of its kind; else the match ends."""
    STATE.tape = None
    if run_tape(run, arrays, reason):
        return True
    other, _ = _switched(run, lambda r: len(r.nodes) == len(r.tape.instructions))
    if other is not None and run_tape(other, arrays, reason):
        return True
    divert(run)
    return False


def run_tape(run: lazy_tape.TapeRun, arrays: list, reason: str, read=()) -> bool:
    """Run the tape's executable for a step that matched all of it, where the
    results it holds (and `read`, (position, index) each) are among the tape's
    outputs; False, having run nothing, otherwise."""
    if not run.complete(arrays):
        return False
    nodes = run.nodes
    held = held_outputs(nodes, ())
    for key in read:
        held.setdefault(key, [])
    wanted = run.tape.wanted
    if tuple(held) != wanted:   # (fewer results held than then: computed all the same)
        if not set(held) <= set(wanted):
            return False
        held = {key: held.get(key, []) for key in wanted}
    count_cut(reason, nodes)
    STATS.cache_hits += 1
    STATS.taped += 1
    values = lazy_cluster.run(run.tape.executable, run.leaves)
    store_values(nodes, held, values, rest_dropped=True, reached_only=True)
    new_step()
    return True


def new_step(keeps_tape: bool = True) -> None:
    """A step begins: its log starts empty (or, where it cannot be a tape, is None)."""
    STATE.steplog = [] if keeps_tape else None
    STATE.stepcalls = {}


def divert(run: lazy_tape.TapeRun) -> None:
    """The step stops matching its tape: the nodes made so far enter the pending
    graph as if recorded there (and, with the cut-outs taken from the tape, are
    the step's log: its cluster becomes the next tape)."""
    STATE.tape = None
    plans = run.tape.calls
    calls = STATE.stepcalls
    for k, node in enumerate(run.nodes):
        PENDING[node.order] = node
        if plans[k] is not None and node.order not in calls:   # (a plan stands for its
            calls[node.order] = plans[k]                       # call wherever it matched)
    STATE.steplog = run.nodes + run.captures


def settle() -> None:
    """End the match of a step against its tape (before the pending graph is read)."""
    run = STATE.tape
    if run is not None:
        divert(run)


@contextlib.contextmanager
def untaped():
    """No tape begins inside (a recipe being learned records and drops nodes)."""
    settle()
    STATE.untaped += 1
    try:
        yield
    finally:
        STATE.untaped -= 1


def taped_capture(copies: list[Node], outputs: list, out_tree, handle):
    """(computation, captures) of a `grad` cut-out as the step's tape has it (see
    TapeRun.captured); None, the match over, where there is none to take."""
    run = STATE.tape
    if run is None or not copies or copies[0] is None:
        settle()
        return None
    found = run.captured(copies[0], outputs, out_tree, handle)
    if found is None:
        other, found = _switched(run, lambda r: r.captured(copies[0], outputs, out_tree, handle))
        if other is None:
            divert(run)
        else:
            STATE.tape = other
    return found


def note_capture(first: Node | None, computation, captures: list, outputs: list,
                 out_tree) -> None:
    """A `grad` cut-out of the step (for its tape)."""
    log = STATE.steplog
    if log is not None and first is not None:
        log.append((first, computation, captures, outputs, out_tree))
