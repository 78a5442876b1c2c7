"""A function's recording taken from lazy mode's pending graph, for autodiff.

`grad` needs the function as one computation. Tracing it again every step
costs a builder and shape inference per operation; in lazy mode the
function's operations are being recorded anyway, so `capture` runs it once
on stand-ins of its arguments and cuts the computation out of the pending
graph: the nodes between the stand-ins and the outputs, spelled as a
structure and built into a module once per structure. The recorded nodes
stay pending and compute the forward values; autodiff adds one call of the
derivative beside them.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from xlapy.core import lazy, lazy_cluster, lazy_steps
from xlapy.core.array import Array, ConcreteArray
from xlapy.core.lazy_graph import array_shape, is_ref, spell
from xlapy.core.pytree import TreeDef, tree_flatten, tree_unflatten
from xlapy.hlo.ir import HloComputation


@dataclass
class Capture:
    computation: HloComputation   # parameters: the arguments, then the captures
    captures: list[Array]         # values from outside the function (pending or concrete)
    outputs: list                 # the function's flat outputs, pending in the graph
    out_tree: TreeDef


class _State:
    tainted = False   # a capture under way met something the recording cannot express


_STATE = _State()


def taint() -> None:
    """Called by operations that behave differently under a trace (a custom_vjp
    function runs its rule only there): a capture under way gives up, and the
    function is traced instead."""
    if lazy.STATE.cuts_held:
        _STATE.tainted = True


_COMPUTATIONS: OrderedDict[tuple, HloComputation] = OrderedDict()
_SIZE = 256


def capture(fun, args: list[Array], in_tree: TreeDef, name: str) -> Capture | None:
    """Run `fun(*tree_unflatten(in_tree, args))` in lazy mode and return it as a
    computation of its arguments, or None where the recording cannot stand for
    it: a cluster ran inside (a value was read, so later operations saw
    constants, not the arguments), or an output is not a pending array."""
    stand_ins = [lazy.stand_in(a, may_begin_iteration=True) for a in args]
    clusters = lazy.STATS.clusters   # (a stand-in may end a loop's step: a cluster before)
    copies = [a._node for a in stand_ins]
    marks = {n.order: k for k, n in enumerate(copies) if n is not None}
    tainted, _STATE.tainted = _STATE.tainted, False
    lazy.STATE.cuts_held += 1
    with lazy.logged() as log:
        try:
            out = fun(*tree_unflatten(in_tree, stand_ins))
        except BaseException:
            lazy.unmark(copies, log)
            raise
        finally:
            lazy.STATE.cuts_held -= 1
            tainted, _STATE.tainted = _STATE.tainted, tainted
        leaves, out_tree = tree_flatten(out)
        try:
            cut = None
            if not tainted and lazy.STATS.clusters == clusters and all(
                    type(x) is lazy.LazyArray and x._value is None and x._node is not None
                    and x._node.pending and x._node.order not in marks for x in leaves):
                cut = lazy_steps.taped_capture(copies, leaves, out_tree, _handle)
                if cut is None:
                    cut = _cut_out(name, args, log, marks, leaves)
                    lazy_steps.note_capture(copies[0] if copies else None, *cut, leaves, out_tree)
        except BaseException:
            lazy.unmark(copies, log)
            raise
    if cut is None:
        lazy.unmark(copies, log)
        return None
    # the stand-ins stay in the graph as copies of the arguments (the pipeline
    # removes them): pointing the recording past them would walk it once more
    return Capture(cut[0], cut[1], leaves, out_tree)


def _cut_out(name: str, args: list, log: list, marks: dict, leaves: list):
    """(the computation, its captures) of what the function recorded and is still
    pending, in order (what learning an xnp call made and dropped is not)."""
    pending = lazy.PENDING
    nodes = [n for n in log if n.order in pending]
    captures: list[Array] = []
    capture_index: dict = {}

    def leaf(operand, node, out: list) -> None:
        if is_ref(operand) and operand[0].order in marks:
            out += ("p", marks[operand[0].order])
            return
        key = (operand[0].order, operand[1]) if is_ref(operand) else id(operand)
        if key not in capture_index:
            capture_index[key] = len(args) + len(captures)
            captures.append(_handle(operand))
        out += ("p", capture_index[key])

    structure = spell(nodes, leaf)
    position = {n.order: k for k, n in enumerate(nodes)}
    wanted = tuple((position[x._node.order], x._index) for x in leaves)
    avals = tuple((tuple(a.shape), np.dtype(a.dtype)) for a in (*args, *captures))
    return _computation(name, nodes, structure, wanted, avals), captures


def _handle(operand) -> Array:
    """An Array for a value from outside: a pending result or a concrete one."""
    if is_ref(operand):
        node, index = operand
        if not node.pending:
            return ConcreteArray(node.value[index or 0])
        shape = node.instruction.shape
        shape = shape.tuple_shapes[index] if index is not None else shape
        return lazy.LazyArray(node, index, shape.dimensions, np.dtype(shape.dtype),
                              node.weak_type)
    return ConcreteArray(operand)


def _computation(name, nodes, structure, wanted, avals) -> HloComputation:
    key = (structure, wanted, avals)
    hit = _COMPUTATIONS.get(key)
    if hit is None:
        module = lazy_cluster.build_module(name, nodes, structure, wanted,
                                           [array_shape(*aval) for aval in avals])
        hit = _COMPUTATIONS[key] = module.entry_computation
        if len(_COMPUTATIONS) > _SIZE:
            _COMPUTATIONS.popitem(last=False)
    else:
        _COMPUTATIONS.move_to_end(key)
    return hit
