"""Lazy mode: eager operations recorded into a pending graph and compiled as
clusters, the way PyTorch/XLA's lazy tensors and TF's auto-clustering give
the compiler code written op by op.

When lazy mode is on (`XLAPY_FLAGS=--xla_auto_jit=1|2`, or inside
`xlapy.jit_scope()`), an operation outside any trace does not run: `bind`
records it (the interpreter's instruction for its signature, its operands)
and returns a `LazyArray`. The pending graph is cut into a cluster and run
when a value is needed on the host — `np.asarray`, `.item()`, `float()`,
`bool()` (Python control flow), `print`, `block_until_ready` — or when it
grows past `--xlapy_lazy_max_pending` operations. The cluster computes the
asked-for value and every other pending value the program still holds
(values nobody holds are fused away, never stored), through the normal
pipeline and the CPU backend. Compiled clusters are cached by structure
(the recorded instructions, how they connect, the leaves' shapes and types),
so a training loop written eagerly compiles its step once and then only
looks it up. Each cut is recorded with its reason (`breaks()`), and with
`--xla_clustering_debug` each new cluster's HLO and the list of cuts are
written to `--xla_dump_to`. Clusters smaller than `--xla_min_cluster_size`
run op by op in the interpreter instead of being compiled.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import os
import sys
import weakref

import numpy as np

from xlapy.core import lazy_cluster, lazy_steps, pytree
from xlapy.core.array import ConcreteArray
from xlapy.core.errors import where
from xlapy.core.lazy_cluster import STATS, Stats  # noqa: F401  (lazy.STATS, lazy.Stats)
from xlapy.core.lazy_graph import Node, array_shape, is_ref, refs, signature
from xlapy.core.lazy_state import (  # noqa: F401  (lazy.STATE, lazy.PENDING)
    BREAKS,
    ORDER,
    PENDING,
    STATE,
    active,
    count_cut,
    held_outputs,
    settings,
    store_values,
)
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode


class LazyArray(ConcreteArray):
    """The handle of a recorded result: its shape and dtype are known; its value is
    computed (with its whole pending cluster) the first time it is read."""

    __slots__ = ("_node", "_index", "_shape", "_dtype", "__weakref__")

    def __init__(self, node: Node, index: int | None, shape, dtype, weak_type: bool):
        self._value = None   # (ConcreteArray's fields, set here: one made per recorded op)
        self.weak_type = weak_type
        self._node = node
        self._index = index
        self._shape = shape
        self._dtype = dtype

    @property
    def value(self) -> np.ndarray:
        if self._value is None:
            if self._node is None:
                raise RuntimeError("this array was donated to a jit call and deleted; "
                                   "its buffer may now hold the call's result")
            materialize([self], _reader())
        return self._value

    def _computed(self) -> bool:
        """Take the value from a node computed since (by a cluster that did not know
        of this handle); False while the node is pending."""
        node = self._node
        if node is None or node.pending or node.value is None:
            return False
        value = node.value[self._index or 0]
        if value is None:
            raise RuntimeError("internal error: a lazy value was computed without this result")
        self._set(value)
        return True

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    def delete(self) -> None:
        self._value = None
        self._node = None

    def is_deleted(self) -> bool:
        return self._value is None and self._node is None

    def _concrete(self, why: str) -> np.ndarray:
        if self._value is None and self._node is not None:
            materialize([self], f"{why}{_at_user()}")
        return self.value

    def __array__(self, dtype=None, copy=None):
        self._concrete("np.asarray")
        return super().__array__(dtype, copy)

    def __repr__(self) -> str:
        self._concrete("repr")
        return super().__repr__()

    def item(self, *index):
        return self._concrete("item()").item(*index)

    def tolist(self):
        return self._concrete("tolist()").tolist()

    def __dlpack__(self, *args, **kwargs):
        return self._concrete("__dlpack__").__dlpack__(*args, **kwargs)

    def __format__(self, spec: str) -> str:
        self._concrete("format")
        return super().__format__(spec)

    def __str__(self) -> str:
        self._concrete("print")
        return super().__str__()

    def with_weak_type(self, weak_type: bool) -> LazyArray:
        """The same pending value, typed weakly or not (nothing is computed)."""
        if self._value is not None or self._node is None:
            return ConcreteArray(self.value, weak_type)
        twin = LazyArray(self._node, self._index, self._shape, self._dtype, weak_type)
        self._node.outputs.append(weakref.ref(twin))
        return twin

    def _set(self, value) -> None:
        self._value = value
        self._node = None



pytree.LEAF_TYPES.add(LazyArray)   # (a leaf: flattened without a registry lookup)


def recordable(instruction: HloInstruction) -> bool:
    """Whether the result is arrays (tokens run at once: they carry no data)."""
    shape = instruction.shape
    return shape.is_array or (shape.is_tuple and all(s.is_array for s in shape.tuple_shapes))


def record(instruction: HloInstruction, operands, weak_type: bool):
    """A LazyArray (a tuple of them for a tuple shape) for `instruction` applied to
    `operands` (xlapy Arrays, or tuples of them)."""
    return add_node(instruction, [operand_of(o) for o in operands], weak_type)[1]


def add_node(instruction: HloInstruction, operands: list, weak_type: bool,
             may_begin_iteration: bool = True):
    """(the node, its LazyArray or tuple of them) for `instruction` applied to
    operands already spelled as nodes hold them ((node, index) or values)."""
    state = STATE
    run = state.tape
    if run is None and lazy_steps.TAPES and not PENDING:
        run = lazy_steps.begin_tape(instruction)
    if run is not None and not run.matches(instruction, operands):
        run = lazy_steps.next_iteration(run, instruction, operands)
    if run is not None:
        node, arrays = _new_node(instruction, operands, weak_type)
        run.add(node)
        if state.log is not None:
            state.log.append(node)
        return node, arrays
    if state.cut_due is not None and not state.cuts_held:
        _cut_iteration()
        if state.tape is not None:   # (what followed the cut began a tape's run)
            return add_node(instruction, operands, weak_type, may_begin_iteration)
    node, arrays = _new_node(instruction, operands, weak_type)
    order = node.order
    log = state.log
    if log is not None:
        log.append(node)
    if state.steplog is not None:
        state.steplog.append(node)
    pending = PENDING
    if may_begin_iteration and len(pending) >= _ITERATION_MIN and state.cut_due is None and (
            state.repeat is not None or instruction is pending[next(iter(pending))].instruction):
        _watch_for_iteration(state, pending, node)
    pending[order] = node
    if len(pending) >= settings()[1]:
        _flush_a_prefix()
    return node, arrays


def _new_node(instruction: HloInstruction, operands: list, weak_type: bool):
    """(a node for `instruction` on `operands`, its LazyArray or tuple of them)."""
    node = Node(instruction, operands, weak_type, next(ORDER))
    results = _RESULTS.get(id(instruction))
    if results is None or results[0] is not instruction:
        results = _results(instruction)
    if results[1]:
        arrays = tuple([LazyArray(node, i, dims, dtype, weak_type)
                        for i, (dims, dtype) in enumerate(results[2])])
        node.outputs = [weakref.ref(a) for a in arrays]
    else:
        arrays = LazyArray(node, None, results[2], results[3], weak_type)
        node.outputs.append(weakref.ref(arrays))
    return node, arrays


_RESULTS: dict[int, tuple] = {}
"""id(instruction) -> (instruction, is a tuple, then the dimensions and NumPy dtype
of its result, or one (dimensions, dtype) per tuple element): what every node of
that signature hands back."""


def _results(instruction: HloInstruction) -> tuple:
    shape = instruction.shape
    if len(_RESULTS) > 20000:
        _RESULTS.clear()
    if shape.is_tuple:
        hit = (instruction, True, tuple((s.dimensions, np.dtype(s.dtype))
                                        for s in shape.tuple_shapes))
    else:
        hit = (instruction, False, shape.dimensions, np.dtype(shape.dtype))
    _RESULTS[id(instruction)] = hit
    return hit


_ITERATION_MIN = 8
"""How many of the first pending operations a loop's next iteration repeats
before the cut (and how many must be pending: a smaller program is not worth one)."""


def _watch_for_iteration(state, pending: dict, node: Node) -> None:
    """A loop's next iteration has begun when the first _ITERATION_MIN pending
    operations are recorded again, in order: then the cut is due before the
    first of them. (A shorter repeat, such as the three projections of an
    attention layer, is a program's own structure, not an iteration.)"""
    instruction = node.instruction
    if state.repeat is not None:
        start, head, matched = state.repeat
        if instruction is head[matched].instruction:
            matched += 1
            if matched == len(head):
                state.repeat, state.cut_due = None, start
            else:
                state.repeat = (start, head, matched)
            return
        state.repeat = None
    first = pending[next(iter(pending))]
    if instruction is first.instruction and not _inner_loop(pending, instruction):
        head = list(itertools.islice(pending.values(), _ITERATION_MIN))
        state.repeat = (node.order, head, 1)


_INNER_LOOP_SPAN = 128
"""How many pending operations a loop inside the step may repeat before its repeats
count as iterations (see `_inner_loop`)."""


def _inner_loop(pending: dict, instruction: HloInstruction) -> bool:
    """Whether the pending operations, then `instruction`, repeat with a period under
    _ITERATION_MIN: a loop inside the step (an RNN's time steps, a chain of one
    operation), whose next turn is not the program's next iteration: cut there, an
    eager RNN's forward pass ran as a cluster per two time steps (11 clusters and
    430 µs a step, against one and 248). Past _INNER_LOOP_SPAN pending operations
    the repeats count again, so a loop of tiny steps that reads nothing still runs
    in clusters of whole periods, each of one structure."""
    count = len(pending)
    if count >= _INNER_LOOP_SPAN:
        return False
    ops = [node.instruction for node in pending.values()]
    ops.append(instruction)
    return any(ops[period] is ops[0] and all(ops[i] is ops[i - period]
                                             for i in range(period, count + 1))
               for period in range(1, _ITERATION_MIN))


def _cut_iteration() -> None:
    """A loop records the same operations every iteration, so when the first
    pending one is recorded again the iterations before run as one cluster:
    a loop that never reads a value compiles its step once, instead of
    waiting for --xlapy_lazy_max_pending and compiling a cluster of many."""
    due, STATE.cut_due = STATE.cut_due, None
    nodes = []
    for order, node in PENDING.items():
        if order >= due:
            break
        nodes.append(node)
    _run_closed(nodes, lazy_steps.NEXT_ITERATION, at_cut=due)
    lazy_steps.adopt()


def operand_of(operand):
    """An Array as a node holds it: (node, index) while pending, else its value."""
    if isinstance(operand, (tuple, list)):
        return tuple(operand_of(o) for o in operand)
    if type(operand) is LazyArray and operand._value is None:
        return (operand._node, operand._index)
    return operand.value


def _at_user() -> str:
    """` at file.py:12 (in f)`: the user's line a cut happened at ('' if unknown)."""
    location = where()
    return f" at {location}" if location else ""


def _reader() -> str:
    """Who needs the value: the innermost xlapy function outside core reading it (an
    op that cannot be recorded, such as `unique` without `size`), and the user's line."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_CORE_DIR):
        frame = frame.f_back
    inside = "a value"
    if frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        inside = f"{frame.f_code.co_name} ({os.path.basename(frame.f_code.co_filename)})"
    return f"{inside} needs the value{_at_user()}"


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CORE_DIR = os.path.dirname(os.path.abspath(__file__))


# -- stand-ins: where a recording being cut out of the graph starts ---------------------------
_STAND_INS: dict[tuple, HloInstruction] = {}


def stand_in(arg, may_begin_iteration: bool = False) -> LazyArray:
    """A pending copy of `arg`. A recording made on stand-ins cannot depend on
    the arguments' values (reading one runs a cluster, which the caller sees),
    and its operations are told apart from older ones by these nodes. (Those
    that stay in the graph may be where a loop's iteration begins.)"""
    key = (arg.shape, arg.dtype)   # (an Array's: a tuple and a NumPy dtype)
    instruction = _STAND_INS.get(key)
    if instruction is None:
        shape = array_shape(*key)
        parameter = HloInstruction(Opcode.PARAMETER, shape, name="operand.0", parameter_number=0)
        instruction = _STAND_INS[key] = HloInstruction(Opcode.COPY, shape, [parameter],
                                                       name="copy")
    return add_node(instruction, [operand_of(arg)], arg.weak_type, may_begin_iteration)[1]


def unmark(copies: list[Node], nodes: list[Node]) -> None:
    """Point `nodes` (those recorded since the stand-ins, in the log) at the
    stand-ins' arguments themselves and drop the copies from the pending graph
    (a handle kept on a stand-in still works: its node keeps its operand)."""
    lazy_steps.settle()
    sources = {n.order: n.operands[0] for n in copies if n is not None and n.pending}
    if not sources:
        return
    for node in nodes:
        if node.operands is not None and node.order not in sources:
            node.operands = [_redirect(o, sources) for o in node.operands]
    for order in sources:
        PENDING.pop(order, None)


class logged:   # noqa: N801  (a context manager named as the function it was)
    """The nodes recorded inside, in order (a list that fills as they are made);
    an enclosing log gets them too when the block ends, except those the block
    drops from its own list. (A class: every grad step of a loop enters one.)"""

    __slots__ = ("outer", "log")

    def __enter__(self) -> list:
        self.outer = STATE.log
        self.log = STATE.log = []
        return self.log

    def __exit__(self, *exc) -> None:
        STATE.log = self.outer
        if self.outer is not None:
            self.outer.extend(self.log)


def _redirect(operand, sources):
    if is_ref(operand):
        return sources.get(operand[0].order, operand)
    if isinstance(operand, tuple):
        return tuple(_redirect(o, sources) for o in operand)
    return operand


# -- cutting and running clusters ---------------------------------------------------------------

def breaks() -> list[str]:
    """Why each cluster so far was cut, oldest first (the last 1000)."""
    return list(BREAKS)


def flush(reason: str = "sync") -> None:
    """Run every pending operation whose result is still held."""
    lazy_steps.settle()
    held = [a for node in list(PENDING.values()) for ref in node.outputs
            if (a := ref()) is not None and a._value is None]
    if held:
        materialize(held[:1], reason)
    PENDING.clear()
    STATE.cut_due = STATE.repeat = None


def _flush_a_prefix() -> None:
    """The pending graph is too big: run a prefix of it. A loop records the same
    operations every iteration, so the cut goes just before the last repeat of
    the first pending operation: whole iterations, the same number each time,
    and every such cluster has one structure (compiled once)."""
    nodes = list(PENDING.values())
    first = signature(nodes[0].instruction)
    cut = next((k for k in range(len(nodes) - 1, len(nodes) // 4, -1)
                if signature(nodes[k].instruction) == first), len(nodes))
    _run_closed(nodes[:cut], "the pending graph reached --xlapy_lazy_max_pending operations")


def _run_closed(nodes: list[Node], reason: str, rest_dropped: bool = False,
                at_cut: int | None = None) -> None:
    """`_run` of `nodes`, and of any pending node they read from outside the
    pending graph (the copy of a stand-in a handle kept)."""
    try:
        _run(nodes, reason, rest_dropped, at_cut)
    except lazy_cluster.Outside:
        _run(_closure(nodes), reason, rest_dropped)


def materialize(arrays: list[LazyArray], reason: str) -> None:
    """Compute `arrays` and, in the same cluster, every other pending value the
    program still holds (as PyTorch/XLA's step marker does): a loop's cut then
    falls at the same place every iteration, so its cluster has one structure.
    The cluster is the whole pending graph: what nothing holds is left to the
    pipeline's dead-code elimination."""
    arrays = [a for a in arrays if not a._computed()]
    if not arrays:
        return
    run = STATE.tape
    if run is not None and lazy_steps.read_tape(run, arrays, reason):
        return
    nodes = list(PENDING.values())
    if not all(PENDING.get(a._node.order) is a._node for a in arrays):
        nodes = _closure(nodes + [a._node for a in arrays])
    _run_closed(nodes, reason, rest_dropped=True)
    PENDING.clear()   # what is left, nothing holds: it would only join the next cluster
    STATE.cut_due = STATE.repeat = None
    lazy_steps.new_step()


def _run(nodes: list[Node], reason: str, rest_dropped: bool = False,
         at_cut: int | None = None) -> None:
    """Compute the pending `nodes` (in recording order) as one cluster: the values
    the program holds, and those later pending nodes read (none, when the rest
    of the pending graph is dropped after). One walk spells the cluster; its
    outputs are looked up, and only a miss (a new structure, or handles that
    garbage holds) pays for a collection and a second look. Raises
    lazy_cluster.Outside, having run nothing, where a node reads a pending node
    that is not among them."""
    if not nodes:
        return
    later = () if rest_dropped else _later(nodes)
    if len(nodes) < settings()[2]:
        _check_closed(nodes)
        count_cut(reason, nodes)
        held = held_outputs(nodes, later)
        values = lazy_cluster.interpret(nodes, [(nodes[k], i) for k, i in held])
    else:
        structure, leaves = lazy_cluster.spelled(nodes)
        count_cut(reason, nodes)   # (before a compile: a new cluster's dump lists it)
        held = held_outputs(nodes, later)
        executable = lazy_cluster.cached(structure, tuple(held), leaves)
        if executable is None:
            held = None   # (its handles would survive the collection)
            gc.collect(0)
            held = held_outputs(nodes, later)
            executable = (lazy_cluster.cached(structure, tuple(held), leaves)
                          or lazy_cluster.compile_cluster(nodes, structure, tuple(held),
                                                          leaves, BREAKS))
        values = lazy_cluster.run(executable, leaves)
        if (rest_dropped or at_cut is not None) and STATE.steplog is not None \
                and settings()[3]:
            lazy_steps.keep_tape(nodes, leaves, held, executable, at_cut)
    if at_cut is not None:   # the next iteration's first nodes begin the next step's log
        lazy_steps.next_step_log(at_cut)
    elif not rest_dropped:
        lazy_steps.new_step(keeps_tape=False)   # (a part of the step ran: the rest cannot be one)
    store_values(nodes, held, values, rest_dropped)


def _later(nodes: list[Node]) -> list[Node]:
    """The pending nodes recorded after `nodes` and not among them."""
    members = {n.order for n in nodes}
    return [n for n in PENDING.values() if n.order not in members]


def _check_closed(nodes: list[Node]) -> None:
    """Raise Outside where a node reads a pending node that is not among `nodes`."""
    members = {n.order for n in nodes}
    if any(node.pending and node.order not in members
           for n in nodes for node, _ in refs(n.operands)):
        raise lazy_cluster.Outside


def _closure(nodes) -> list[Node]:
    """The pending nodes among `nodes` and those they read, in recording order
    (those left out of the pending graph included)."""
    seen: dict[int, Node] = {}
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if node.order in seen or node.operands is None:
            continue
        seen[node.order] = node
        for operand in node.operands:
            if type(operand) is tuple:
                if len(operand) == 2 and type(operand[0]) is Node:
                    stack.append(operand[0])
                else:
                    stack.extend(ref[0] for ref in refs(operand))
    return [seen[k] for k in sorted(seen)]


# -- the scope -----------------------------------------------------------------------------------
@contextlib.contextmanager
def jit_scope():
    """Compile the eager operations of a block as clusters (TF's `jit_scope`):
    values leaving the block are computed when it ends."""
    STATE.scopes += 1
    try:
        yield
    finally:
        STATE.scopes -= 1
        if not active():
            flush("the end of a jit_scope")


def block_until_ready(tree):
    """Compute every pending value of `tree` (arrays, or containers of them)."""
    arrays: list = []
    _lazy_leaves(tree, arrays)
    pending = [a for a in arrays if a._value is None and a._node is not None]
    if pending:
        materialize(pending, f"block_until_ready{_at_user()}")
    return tree


def _lazy_leaves(x, found: list) -> None:
    if isinstance(x, LazyArray):
        found.append(x)
    elif isinstance(x, (list, tuple)):
        for y in x:
            _lazy_leaves(y, found)
    elif isinstance(x, dict):
        for y in x.values():
            _lazy_leaves(y, found)
