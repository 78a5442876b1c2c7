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
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from xlapy.backends import get_backend
from xlapy.core.array import ConcreteArray
from xlapy.core.errors import user_frame
from xlapy.flags import debug_options, register_flag
from xlapy.hlo.builder import ModuleBuilder
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.evaluator.evaluator import Evaluator
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.mutation import NameUniquer, clone_computation
from xlapy.hlo.shape import Shape

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


class _State(threading.local):
    def __init__(self):
        self.scopes = 0


_STATE = _State()


def active() -> bool:
    """Whether eager operations are recorded (a jit_scope, or --xla_auto_jit).
    Every eager op asks, so the flag is looked up by the raw environment value
    (50 ns) rather than parsed options (1 µs)."""
    if _STATE.scopes > 0:
        return True
    raw = _ENVIRON.get(_KEY)
    on = _AUTO_JIT.get(raw)
    if on is None:
        on = _AUTO_JIT[raw] = debug_options().xla_auto_jit > 0
    return on


_ENVIRON = getattr(os.environ, "_data", os.environ)
"""The process environment as stored (bytes on POSIX), read without conversions."""
_KEY = b"XLAPY_FLAGS" if _ENVIRON is not os.environ else "XLAPY_FLAGS"
_AUTO_JIT: dict = {}


# -- the pending graph ------------------------------------------------------------------------
@dataclass(eq=False)
class Node:
    """One recorded operation: the interpreter's instruction for its signature
    (shared by every node of that signature) applied to `operands` (Nodes,
    concrete NumPy values, or tuples of them)."""

    instruction: HloInstruction
    operands: list
    weak_type: bool
    outputs: list = field(default_factory=list)
    """Weak references to the LazyArrays that hold each result (one per tuple element)."""
    value: object = None
    """The result once computed (a tuple for tuple-shaped results); then operands go."""
    order: int = 0

    @property
    def pending(self) -> bool:
        return self.operands is not None


_ORDER = itertools.count()
_PENDING: dict[int, Node] = {}
"""Recorded, not yet computed, by order: what a flush may have to compute."""


class LazyArray(ConcreteArray):
    """The handle of a recorded result: its shape and dtype are known; its value is
    computed (with its whole pending cluster) the first time it is read."""

    __slots__ = ("_node", "_index", "_shape", "_dtype", "__weakref__")

    def __init__(self, node: Node, index: int | None, shape, dtype, weak_type: bool):
        super().__init__(None, weak_type)
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
            materialize([self], f"{why}{where_user()}")
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



def recordable(instruction: HloInstruction) -> bool:
    """Whether the result is arrays (tokens run at once: they carry no data)."""
    shape = instruction.shape
    return shape.is_array or (shape.is_tuple and all(s.is_array for s in shape.tuple_shapes))


def record(instruction: HloInstruction, operands, weak_type: bool):
    """A LazyArray (a tuple of them for a tuple shape) for `instruction` applied to
    `operands` (xlapy Arrays, or tuples of them)."""
    node = Node(instruction, [_operand(o) for o in operands], weak_type, order=next(_ORDER))
    shape = instruction.shape
    if shape.is_tuple:
        arrays = tuple(LazyArray(node, i, s.dimensions, np.dtype(s.dtype), weak_type)
                       for i, s in enumerate(shape.tuple_shapes))
    else:
        arrays = (LazyArray(node, None, shape.dimensions, np.dtype(shape.dtype), weak_type),)
    node.outputs = [weakref.ref(a) for a in arrays]
    _PENDING[node.order] = node
    if len(_PENDING) >= debug_options().xlapy_lazy_max_pending:
        _flush_a_prefix()
    return arrays if shape.is_tuple else arrays[0]


def _operand(operand):
    if isinstance(operand, (tuple, list)):
        return tuple(_operand(o) for o in operand)
    if type(operand) is LazyArray and operand._value is None:
        return (operand._node, operand._index)
    return operand.value


def where_user() -> str:
    frame = user_frame()
    return f" at {os.path.basename(frame[0])}:{frame[1]}" if frame else ""


def _reader() -> str:
    """Who needs the value: the xlapy function reading it (an op that cannot be
    recorded, such as `unique` without `size`) and the user's line."""
    frame = sys._getframe(2)
    inside = None
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith(_PACKAGE_DIR):
            if inside is None and not filename.startswith(_CORE_DIR):
                inside = f"{frame.f_code.co_name} ({os.path.basename(filename)})"
        elif not filename.startswith("<frozen"):
            break
        frame = frame.f_back
    user = f" at {os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}" \
        if frame is not None else ""
    return f"{inside or 'a value'} needs the value{user}"


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CORE_DIR = os.path.dirname(os.path.abspath(__file__))


# -- cutting and running clusters ---------------------------------------------------------------
_BREAKS: list[str] = []
_MAX_BREAKS = 1000


def breaks() -> list[str]:
    """Why each cluster so far was cut, oldest first (the last 1000)."""
    return list(_BREAKS)


@dataclass
class Stats:
    clusters: int = 0
    compiles: int = 0
    cache_hits: int = 0
    interpreted: int = 0
    operations: int = 0


STATS = Stats()
"""Counts since the process started: clusters run, compiled, found in the cache."""


def flush(reason: str = "sync") -> None:
    """Run every pending operation whose result is still held."""
    held = [a for node in list(_PENDING.values()) for ref in node.outputs
            if (a := ref()) is not None and a._value is None]
    if held:
        materialize(held[:1], reason)
    _PENDING.clear()


def _flush_a_prefix() -> None:
    """The pending graph is too big: run a prefix of it. A loop records the same
    operations every iteration, so the cut goes just before the last repeat of
    the first pending operation: whole iterations, the same number each time,
    and every such cluster has one structure (compiled once)."""
    nodes = list(_PENDING.values())
    first = signature(nodes[0].instruction)
    cut = next((k for k in range(len(nodes) - 1, len(nodes) // 4, -1)
                if signature(nodes[k].instruction) == first), len(nodes))
    gc.collect(0)
    _run(nodes[:cut], "the pending graph reached --xlapy_lazy_max_pending operations")


def materialize(arrays: list[LazyArray], reason: str) -> None:
    """Compute `arrays` and, in the same cluster, every other pending value the
    program still holds (as PyTorch/XLA's step marker does): a loop's cut then
    falls at the same place every iteration, so its cluster has one structure."""
    arrays = [a for a in arrays if not a._computed()]
    if not arrays:
        return
    gc.collect(0)   # handles kept only by garbage cycles (autodiff's tapes) are not held
    arrays += [a for node in list(_PENDING.values()) for ref in node.outputs
               if (a := ref()) is not None and a._value is None]
    _run(_cluster(arrays), reason)


def _run(nodes: list[Node], reason: str) -> None:
    """Compute the pending `nodes` (closed under their operands, in recording
    order): the values the program holds, and those later nodes will read."""
    if not nodes:
        return
    _BREAKS.append(f"{reason}: a cluster of {len(nodes)} operations")
    del _BREAKS[:-_MAX_BREAKS]
    STATS.clusters += 1
    STATS.operations += len(nodes)
    inside = {n.order for n in nodes}
    wanted = {(n.order, a._index) for n in nodes for ref in n.outputs
              if (a := ref()) is not None and a._value is None}
    for other in _PENDING.values():   # values a later cluster will read
        if other.order not in inside:
            wanted.update((node.order, index) for node, index in _refs(other.operands)
                          if node.order in inside)
    by_order = {n.order: n for n in nodes}
    outputs = [(by_order[k], i) for k, i in sorted(wanted, key=lambda w: (w[0], w[1] or 0))]
    held = _held(nodes)
    if len(nodes) < debug_options().xla_min_cluster_size:
        values = _interpret(nodes, outputs)
    else:
        values = _compiled(nodes, outputs)
    for node in nodes:   # computed: the graph behind them can go
        node.operands = None
        node.value = [None] * (len(node.instruction.shape.tuple_shapes)
                               if node.instruction.shape.is_tuple else 1)
        _PENDING.pop(node.order, None)
    for (node, index), value in zip(outputs, values):
        node.value[index or 0] = value
        for array in held.get((node.order, index), ()):
            array._set(value)


def _held(nodes) -> dict:
    """(node order, index) -> the LazyArrays the program still holds for that result."""
    held: dict = {}
    for n in nodes:
        for ref in n.outputs:
            if (a := ref()) is not None:
                held.setdefault((n.order, a._index), []).append(a)
    return held


def _cluster(arrays) -> list[Node]:
    """The pending nodes the arrays depend on, in recording order."""
    seen: dict[int, Node] = {}
    stack = [a._node for a in arrays if a._value is None and a._node is not None]
    while stack:
        node = stack.pop()
        if node.order in seen or not node.pending:
            continue
        seen[node.order] = node
        for operand in _flat(node.operands):
            if isinstance(operand, tuple) and len(operand) == 2 and isinstance(operand[0], Node):
                stack.append(operand[0])
    return [seen[k] for k in sorted(seen)]


def _flat(operands):
    for operand in operands:
        if isinstance(operand, tuple) and not (len(operand) == 2 and
                                               isinstance(operand[0], Node)):
            yield from _flat(operand)
        else:
            yield operand


def _refs(operands):
    """The (node, index) references among `operands`."""
    for operand in _flat(operands):
        if _is_ref(operand):
            yield operand


def _is_ref(operand) -> bool:
    return isinstance(operand, tuple) and len(operand) == 2 and isinstance(operand[0], Node)


# -- structure -------------------------------------------------------------------------------------
_SIGNATURES: dict[int, tuple] = {}
"""id(instruction or computation) -> (the object, kept alive, and its structural key)."""


def signature(instruction: HloInstruction):
    """What makes two recorded instructions the same op: opcode, shape, attributes,
    called computations by structure (not by name or identity: each eager `grad`
    traces fresh ones)."""
    hit = _SIGNATURES.get(id(instruction))
    if hit is None:
        if len(_SIGNATURES) > 20000:
            _SIGNATURES.clear()
        hit = _SIGNATURES[id(instruction)] = (instruction, (
            instruction.opcode, instruction.shape.to_text(),
            tuple((k, _attr_key(v)) for k, v in instruction.attrs.items() if k != "metadata")))
    return hit[1]


def _attr_key(value):
    if isinstance(value, HloComputation):
        return computation_signature(value)
    if isinstance(value, (tuple, list)):
        return tuple(_attr_key(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def computation_signature(computation: HloComputation) -> tuple:
    hit = _SIGNATURES.get(id(computation))
    if hit is None:
        index = {id(i): k for k, i in enumerate(computation.instructions)}
        body = tuple((i.opcode, i.shape.to_text(), tuple(index[id(o)] for o in i.operands),
                      i.parameter_number,
                      None if i.literal is None else np.asarray(i.literal).tobytes(),
                      tuple((k, _attr_key(v)) for k, v in i.attrs.items() if k != "metadata"))
                     for i in computation.instructions)
        hit = _SIGNATURES[id(computation)] = (computation, (
            body, index[id(computation.root_instruction)]))
    return hit[1]


# -- the compiled path ----------------------------------------------------------------------------
_CACHE: OrderedDict[tuple, object] = OrderedDict()
_CACHE_SIZE = 256
_NUMBER = itertools.count()


def _compiled(nodes: list[Node], outputs: list) -> list:
    """Build (or find) the cluster's executable and run it on the leaves."""
    leaves: list[np.ndarray] = []
    leaf_index: dict[int, int] = {}
    position = {node.order: k for k, node in enumerate(nodes)}

    def spell(operand):
        if _is_ref(operand):
            node, index = operand
            if node.pending:
                return ("n", position[node.order], index)
            operand = node.value[index or 0]
        if isinstance(operand, tuple):
            return ("t", tuple(spell(o) for o in operand))
        key = id(operand)
        if key not in leaf_index:
            leaf_index[key] = len(leaves)
            leaves.append(operand)
        return ("p", leaf_index[key])

    structure = tuple((signature(n.instruction), tuple(spell(o) for o in n.operands))
                      for n in nodes)
    wanted = tuple((position[n.order], i) for n, i in outputs)
    avals = tuple((v.shape, v.dtype) for v in leaves)
    key = (structure, wanted, avals)
    executable = _CACHE.get(key)
    if executable is None:
        module = _module(nodes, structure, wanted, leaves)
        executable = get_backend("cpu").compile(module, optimize=True)
        _CACHE[key] = executable
        STATS.compiles += 1
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
        STATS.cache_hits += 1
    results = executable.run(list(leaves))
    return [_as_numpy(r) for r in results]


def _as_numpy(value):
    return tuple(_as_numpy(v) for v in value) if isinstance(value, (tuple, list)) else value


def _module(nodes, structure, wanted, leaves):
    """The cluster as an HLO module: leaves are parameters, outputs the root tuple."""
    number = next(_NUMBER)
    module_builder = ModuleBuilder(f"cluster_{number}")
    b = module_builder.computation("main")
    params = [b.parameter(i, _shape_of(v), f"leaf_{i}") for i, v in enumerate(leaves)]
    clones: dict[int, HloComputation] = {}
    built: list[HloInstruction] = []

    def operand(spelled):
        kind = spelled[0]
        if kind == "p":
            return params[spelled[1]]
        if kind == "t":
            return b.tuple([operand(s) for s in spelled[1]])
        instruction = built[spelled[1]]
        return instruction if spelled[2] is None else b.get_tuple_element(instruction,
                                                                          spelled[2])

    names = None
    for node, (_, spelled_operands) in zip(nodes, structure):
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
    root = b.tuple(roots)
    module = module_builder.build(b.build(root))
    _dump(module)
    return module


class _Names(NameUniquer):
    """Fresh names for cloned called computations: a cluster may call reducers
    traced in different places whose instruction names collide, with each other
    or with the entry's (`base.N`, which these never are)."""

    def __init__(self):
        self.used = set()
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


def _shape_of(value: np.ndarray) -> Shape:
    return Shape.array(PrimitiveType.from_numpy(value.dtype), value.shape)


def _dump(module) -> None:
    flags = debug_options()
    if not (flags.xla_clustering_debug and flags.xla_dump_to):
        return
    os.makedirs(flags.xla_dump_to, exist_ok=True)
    with open(os.path.join(flags.xla_dump_to, f"{module.name}.hlo.txt"), "w") as f:
        f.write(module.to_text())
    with open(os.path.join(flags.xla_dump_to, "clustering_breaks.txt"), "w") as f:
        f.write("".join(f"{line}\n" for line in _BREAKS))


# -- the interpreted path (tiny clusters) ---------------------------------------------------------
_EVALUATOR = Evaluator()


def _interpret(nodes: list[Node], outputs: list) -> list:
    """Op by op, as eager mode runs (no compile for a cluster not worth one)."""
    computed: dict[int, object] = {}

    def value_of(operand):
        if _is_ref(operand):
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


# -- the scope -----------------------------------------------------------------------------------
@contextlib.contextmanager
def jit_scope():
    """Compile the eager operations of a block as clusters (TF's `jit_scope`):
    values leaving the block are computed when it ends."""
    _STATE.scopes += 1
    try:
        yield
    finally:
        _STATE.scopes -= 1
        if not active():
            flush("the end of a jit_scope")


def block_until_ready(tree):
    """Compute every pending value of `tree` (arrays, or containers of them)."""
    arrays = []

    def visit(x):
        if isinstance(x, LazyArray):
            arrays.append(x)
        elif isinstance(x, (list, tuple)):
            for y in x:
                visit(y)
        elif isinstance(x, dict):
            for y in x.values():
                visit(y)
    visit(tree)
    pending = [a for a in arrays if a._value is None and a._node is not None]
    if pending:
        materialize(pending, f"block_until_ready{where_user()}")
    return tree
