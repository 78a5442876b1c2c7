"""Running one cluster of lazy mode: the recorded nodes as an HLO module
(leaves become parameters, the held values the root tuple), compiled by the
CPU backend through the normal pipeline and cached by structure; or, for a
cluster under `--xla_min_cluster_size`, op by op in the interpreter."""

from __future__ import annotations

import itertools
import os
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from xlapy.backends import get_backend
from xlapy.core.lazy_graph import Node, array_shape, is_ref, spell, unspelled
from xlapy.flags import debug_options
from xlapy.hlo.builder import ModuleBuilder
from xlapy.hlo.evaluator.evaluator import Evaluator
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.mutation import clone_computation
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape


@dataclass
class Stats:
    clusters: int = 0
    compiles: int = 0
    cache_hits: int = 0
    interpreted: int = 0
    operations: int = 0
    taped: int = 0


STATS = Stats()
"""Counts since the process started: clusters run, compiled, found in the cache."""


INITIAL_VALUE_OPS = frozenset((Opcode.REDUCE, Opcode.REDUCE_WINDOW, Opcode.SELECT_AND_SCATTER,
                                Opcode.PAD, Opcode.SCATTER))
"""Their scalar operands (a reduction's initial value, padding) are constants of
the cluster, as a trace makes them: fixed by the operation, and what codegen
recognises (a sum from zero); other scalars (a learning rate) are parameters."""

CACHE: OrderedDict[tuple, object] = OrderedDict()
CACHE_SIZE = 256
_NUMBER = itertools.count()


class Outside(Exception):
    """A cluster's node reads a pending node that is not among the cluster's."""


def spelled(nodes: list[Node]) -> tuple[tuple, list[np.ndarray]]:
    """(the cluster's structure, its leaves: the values its parameters take)."""
    leaves: list[np.ndarray] = []
    leaf_index: dict[int, int] = {}

    def leaf(operand, node: Node, out: list) -> None:
        if type(operand) is tuple:   # a node computed by an earlier cluster
            computed, index = operand
            if computed.operands is not None:
                raise Outside
            operand = computed.value[index or 0]
        elif operand.ndim == 0 and node.instruction.opcode in INITIAL_VALUE_OPS:
            out += ("c", operand.tobytes(), operand.dtype)
            return
        number = leaf_index.get(id(operand))
        if number is None:
            number = leaf_index[id(operand)] = len(leaves)
            leaves.append(operand)
        out += ("p", number)

    return spell(nodes, leaf), leaves


def _key(structure: tuple, wanted: tuple, leaves: list) -> tuple:
    return structure, wanted, tuple((v.shape, v.dtype) for v in leaves)


def cached(structure: tuple, wanted: tuple, leaves: list):
    """The executable compiled for this structure, outputs `wanted` ((position,
    tuple index) each) and leaves' shapes and types; None if there is none."""
    key = _key(structure, wanted, leaves)
    executable = CACHE.get(key)
    if executable is not None:
        CACHE.move_to_end(key)
        STATS.cache_hits += 1
    return executable


def compile_cluster(nodes: list[Node], structure: tuple, wanted: tuple, leaves: list,
                    breaks: list[str]):
    """Build the cluster's module, compile it, and cache the executable (with
    --xla_clustering_debug, dump the module and the list of cuts first)."""
    module = build_module(f"cluster_{next(_NUMBER)}", nodes, structure, wanted,
                          [array_shape(v.shape, v.dtype) for v in leaves])
    _dump(module, breaks)
    executable = get_backend("cpu").compile(module, optimize=True)
    CACHE[_key(structure, wanted, leaves)] = executable
    STATS.compiles += 1
    if len(CACHE) > CACHE_SIZE:
        CACHE.popitem(last=False)
    return executable


def run(executable, leaves: list) -> list:
    """The cluster's outputs, as NumPy values, for these leaves."""
    return [_as_numpy(r) for r in executable.run(list(leaves))]


def _as_numpy(value):
    return tuple(_as_numpy(v) for v in value) if isinstance(value, (tuple, list)) else value


def build_module(name: str, nodes, structure, wanted, leaf_shapes: list[Shape]):
    """Recorded nodes as an HLO module: leaves are parameters, the `wanted`
    (position, tuple index) results the root tuple."""
    module_builder = ModuleBuilder(name)
    b = module_builder.computation("main")
    params = [b.parameter(i, s, f"leaf_{i}") for i, s in enumerate(leaf_shapes)]
    clones: dict[int, HloComputation] = {}
    built: list[HloInstruction] = []

    def operand(spelled):
        kind = spelled[0]
        if kind == "p":
            return params[spelled[1]]
        if kind == "c":
            return b.constant(np.frombuffer(spelled[1], spelled[2]).reshape(()))
        if kind == "t":
            return b.tuple([operand(s) for s in spelled[1]])
        instruction = built[spelled[1]]
        return instruction if spelled[2] is None else b.get_tuple_element(instruction,
                                                                          spelled[2])

    names = None
    for node, (_, spelled_operands) in zip(nodes, unspelled(structure)):
        template = node.instruction
        attrs = {}
        for k, v in template.attrs.items():
            if isinstance(v, HloComputation):
                if id(v) not in clones:
                    names = names or _Names()
                    clones[id(v)] = _clone_deep(v, names)
                v = clones[id(v)]
            elif isinstance(v, (list, tuple)) and v and all(isinstance(c, HloComputation)
                                                           for c in v):
                names = names or _Names()
                v = tuple(clones.setdefault(id(c), _clone_deep(c, names)) for c in v)
            attrs[k] = v
        built.append(b.add_instruction(template.opcode, [operand(s) for s in spelled_operands],
                                       shape=template.shape, **attrs))
    roots = [built[k] if i is None else b.get_tuple_element(built[k], i) for k, i in wanted]
    return module_builder.build(b.build(b.tuple(roots)))


class _Names:
    """Fresh names for cloned called computations (what `clone_computation` asks
    for): a cluster may call reducers traced in different places whose names
    collide, with each other or with the entry's (`base.N`, which these never are)."""

    def __init__(self):
        self._counter = itertools.count(1)

    def __call__(self, base: str) -> str:
        return f"{base.partition('.')[0] or 'instruction'}.called{next(self._counter)}"


def _clone_deep(computation: HloComputation, names) -> HloComputation:
    """A copy of `computation` and everything it calls, freshly named."""
    inner: dict[int, HloComputation] = {}
    copy = clone_computation(computation, names)
    for instruction in copy.instructions:
        for k, v in list(instruction.attrs.items()):
            if isinstance(v, HloComputation):
                if id(v) not in inner:
                    inner[id(v)] = _clone_deep(v, names)
                instruction.attrs[k] = inner[id(v)]
            elif isinstance(v, tuple) and v and all(isinstance(c, HloComputation) for c in v):
                instruction.attrs[k] = tuple(inner.setdefault(id(c), _clone_deep(c, names))
                                             for c in v)
    return copy


def _dump(module, breaks: list[str]) -> None:
    flags = debug_options()
    if not (flags.xla_clustering_debug and flags.xla_dump_to):
        return
    os.makedirs(flags.xla_dump_to, exist_ok=True)
    with open(os.path.join(flags.xla_dump_to, f"{module.name}.hlo.txt"), "w") as f:
        f.write(module.to_text())
    with open(os.path.join(flags.xla_dump_to, "clustering_breaks.txt"), "w") as f:
        f.write("".join(f"{line}\n" for line in breaks))


# -- the interpreted path (tiny clusters) ---------------------------------------------------------
_EVALUATOR = Evaluator()


def interpret(nodes: list[Node], outputs: list) -> list:
    """Op by op, as eager mode runs (no compile for a cluster not worth one)."""
    computed: dict[int, object] = {}

    def value_of(operand):
        if is_ref(operand):
            node, index = operand
            value = computed[node.order] if node.pending else node.value[index or 0]
            return value if index is None or not node.pending else value[index]
        if isinstance(operand, tuple):
            return tuple(value_of(o) for o in operand)
        return operand

    for node in nodes:
        computed[node.order] = _EVALUATOR.evaluate(node.instruction,
                                                   [value_of(o) for o in node.operands])
    STATS.interpreted += 1
    return [computed[n.order] if i is None else computed[n.order][i] for n, i in outputs]
