"""Lazy mode's state: the pending graph, the flags every recorded operation
reads, and what running a cluster does with its results. Shared by `lazy`
(recording, cutting clusters) and `lazy_steps` (a step matched against its
tape), which both build on it."""

from __future__ import annotations

import itertools
import os
import threading

from xlapy.core import lazy_tape
from xlapy.core.lazy_cluster import STATS
from xlapy.core.lazy_graph import Node, refs
from xlapy.flags import debug_options, register_flag

register_flag("xla_auto_jit", "int", 0,
              "auto-clustering of eager code (TF's --tf_xla_auto_jit): 1 or 2 records eager "
              "operations and compiles them as clusters; 0 runs them one at a time")
register_flag("xla_min_cluster_size", "int", 1,
              "clusters with fewer operations than this run op by op instead of compiled")
register_flag("xla_clustering_debug", "bool", False,
              "with --xla_dump_to, write each new cluster's HLO and the list of cluster "
              "breaks with their reasons")
register_flag("xlapy_lazy_max_pending", "int", 1024,
              "a pending lazy graph of this many operations is run without waiting to be asked")
register_flag("xlapy_lazy_tape", "bool", True,
              "match a step recorded like the last one against its tape (lazy_tape) instead "
              "of spelling and looking up its cluster again")


class _State(threading.local):
    def __init__(self):
        self.scopes = 0
        self.cuts_held = 0       # a recording is being cut out of the graph: no cluster runs
        self.log: list | None = None   # nodes made, for a recording being learned
        self.cut_due: int | None = None   # a loop's next iteration starts at this node
        self.repeat: tuple | None = None  # (first node, the pending head it must repeat, matched)
        self.tape: lazy_tape.TapeRun | None = None   # this step, matched against a tape
        self.steplog: list | None = []   # the step's nodes and cut-outs, for its tape
        self.stepcalls: dict = {}   # node order -> the replayed call that made it
        self.untaped = 0   # a recipe is being learned: no tape begins
        self.traces = 0   # traces entered (their ops are traced, not recorded or taped)


STATE = _State()


def active() -> bool:
    """Whether eager operations are recorded (a jit_scope, or --xla_auto_jit).
    Every eager op asks, so the flag is looked up by the raw environment value
    (50 ns) rather than parsed options (1 µs)."""
    return STATE.scopes > 0 or settings()[0]


def settings() -> tuple[bool, int, int, bool]:
    """(--xla_auto_jit on, --xlapy_lazy_max_pending, --xla_min_cluster_size,
    --xlapy_lazy_tape), by the raw XLAPY_FLAGS."""
    raw = ENVIRON.get(KEY)
    hit = _SETTINGS.get(raw)
    if hit is None:
        options = debug_options()
        hit = _SETTINGS[raw] = (options.xla_auto_jit > 0, options.xlapy_lazy_max_pending,
                                options.xla_min_cluster_size, options.xlapy_lazy_tape)
    return hit


ENVIRON = getattr(os.environ, "_data", os.environ)
"""The process environment as stored (bytes on POSIX), read without conversions."""
KEY = b"XLAPY_FLAGS" if ENVIRON is not os.environ else "XLAPY_FLAGS"
_SETTINGS: dict = {}


ORDER = itertools.count()
PENDING: dict[int, Node] = {}
"""Recorded, not yet computed, by order: what a flush may have to compute."""


BREAKS: list[str] = []
"""Why each cluster was cut (the last MAX_BREAKS), for `lazy.breaks()`."""
MAX_BREAKS = 1000


def store_values(nodes: list[Node], held: dict, values: list, rest_dropped: bool,
                 reached_only: bool = False) -> None:
    """The cluster's `values` into the `held` handles; the computed nodes' operands
    go (with `reached_only`, only those of nodes a value is stored for: nothing
    reaches the others, a run of a tape whose nodes go with it)."""
    if not reached_only:
        for node in nodes:   # computed: the graph behind them can go
            _computed(node)
            if not rest_dropped:
                PENDING.pop(node.order, None)
    for (k, index), value in zip(held, values):
        node = nodes[k]
        if node.operands is not None:
            _computed(node)
        node.value[index or 0] = value
        for array in held[k, index]:
            array._set(value)


def _computed(node: Node) -> None:
    node.operands = None
    node.value = [None] * len(node.outputs)   # (one output per tuple element at least)


def count_cut(reason: str, nodes: list[Node]) -> None:
    BREAKS.append(f"{reason}: a cluster of {len(nodes)} operations")
    del BREAKS[:-MAX_BREAKS]
    STATS.clusters += 1
    STATS.operations += len(nodes)


def held_outputs(nodes: list[Node], later) -> dict:
    """(position, tuple index) -> the LazyArrays the program holds for that result
    and has not computed (none, for a result only `later` nodes read), in
    order of position and index: the cluster's outputs."""
    held: dict = {}
    for k, node in enumerate(nodes):
        for ref in node.outputs:
            if (a := ref()) is not None and a._value is None:
                key = (k, a._index)
                if key in held:
                    held[key].append(a)
                else:
                    held[key] = [a]
    if later:
        position = {n.order: k for k, n in enumerate(nodes)}
        for other in later:
            for node, index in refs(other.operands):
                k = position.get(node.order)
                if k is not None and (k, index) not in held:
                    held[k, index] = []
    if len(held) > 1:   # twins of one tuple element, later nodes' reads: out of order
        held = dict(sorted(held.items(), key=lambda item: (item[0][0], item[0][1] or 0)))
    return held
