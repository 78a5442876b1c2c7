"""Lazy mode's step tape: a training step recorded once, then matched.

An eager training loop records the same operations every step, reads its loss
(which runs the step's cluster) and begins again with nothing pending. Once a
step has run as a cluster, its recording is kept as a `Tape`: each node's
instruction, where each operand came from (an earlier node of the step and
which of its results, or a leaf: a value from outside, by its place among the
cluster's parameters), what each `grad` cut out of it, and the executable.
When the next step records its first operation with nothing pending, a
`TapeRun` matches the step against the tape as it is recorded: each node is
still made (so a handle is an ordinary LazyArray), but it does not enter the
pending graph, and nothing is logged, watched or spelled. When a value is read
and every operation matched, the tape's executable runs on the leaves gathered
while matching: no spelling of the structure, no cache lookup, no cut-out of
the loss for autodiff. The first operation that differs — another
instruction, an operand from elsewhere, a value read early — moves the step
to another tape its nodes so far match (`TapeRun.rematched`), or ends the
match (`lazy_steps.divert`): the nodes made so far enter the pending graph as
if they had been recorded there, and the step carries on as before. Identity of the
leaves decides the structure as spelling does: two operands that were one
value must be one value again.
"""

from __future__ import annotations

import enum
import operator
from dataclasses import dataclass

import numpy as np

from xlapy.core.array import ConcreteArray
from xlapy.core.lazy_graph import Node

SCALARS = (bool, int, float, complex, str, type(None), np.dtype, type, np.generic, enum.Enum)
"""Arguments a replayed call's signature holds by value (an enum: `lax.Precision`)."""


def signed_zero(value) -> bool:
    """Whether `value` is a floating zero, whose sign a signature must hold
    (0.0 == -0.0: by value alone, x * 0.0 replayed x * -0.0's recipe)."""
    return not value and isinstance(value, (float, complex, np.inexact))


class NoTape(Exception):
    """The step cannot be taped (a node reads a value computed by an earlier cluster)."""


@dataclass(slots=True, eq=False)
class Tape:
    """A step as its cluster ran."""

    instructions: tuple
    """Per node, its instruction."""
    sources: tuple
    """Per node, where each operand comes from (`_source`)."""
    leaf_avals: tuple
    """The leaves' (shape, dtype): the executable's parameters."""
    wanted: tuple
    """The held results, (position, tuple index) each: the executable's outputs."""
    executable: object
    captures: dict
    """Per `grad` cut-out, by the position of its first stand-in: the
    computation, its captures' sources, its outputs and their tree."""
    calls: tuple
    """Per node, the `CallPlan` of the replayed call that made it, or None; and
    a None after the last (no call comes after the step)."""
    constants: tuple
    """(leaf, value) of those recipes' scalar operands: a call made from its plan
    uses its recipe's own, so they are leaves before the step begins."""
    at_cut: bool = False
    """The step ended where the loop's next iteration began (no value read):
    the tape's step ends when its last node is matched and another comes."""

    def replaces(self, other: Tape) -> bool:
        """Whether this tape is of the same step as `other` (a newer take of it)."""
        return (len(self.instructions) == len(other.instructions) and self.at_cut == other.at_cut
                and all(a is b for a, b in zip(self.instructions, other.instructions))
                and self.wanted == other.wanted and self.leaf_avals == other.leaf_avals)


def logged_order(entry) -> int:
    """The order of a step log's node, or of a cut-out's first stand-in."""
    return entry.order if type(entry) is Node else entry[0].order


def build(log: list, calls: dict, nodes: list[Node], leaves: list, wanted: tuple,
          executable, at_cut: bool = False) -> Tape | None:
    """The tape of a step whose cluster just ran: `log` the step's nodes and
    cut-outs in order of recording, `calls` (node order -> (function, arguments,
    recipe, raw flags, x64)) the replayed calls that made nodes; None unless the
    log's nodes are the cluster's, every operand is one of them or a leaf, and
    every cut-out's pieces are too."""
    logged = [entry for entry in log if type(entry) is Node]
    if len(logged) != len(nodes) or any(a is not b for a, b in zip(logged, nodes)):
        return None
    position = {node.order: k for k, node in enumerate(nodes)}
    slot = {id(value): k for k, value in enumerate(leaves)}
    try:
        sources = tuple(tuple(_source(o, position, slot, n) for o in n.operands) for n in nodes)
        captures = {}
        for entry in log:
            if type(entry) is tuple:
                first, computation, captured, outputs, out_tree = entry
                captures[position[first.order]] = (
                    computation, tuple(_captured(c, position, slot) for c in captured),
                    tuple((position[x._node.order], x._index) for x in outputs), out_tree)
    except (NoTape, KeyError):
        return None
    plans = tuple(_call_plan(calls.get(n.order), position, slot) for n in nodes) + (None,)
    constants = {}
    for plan in plans:
        if plan is not None:
            _recipe_constants(plan.specs, slot, constants)
    return Tape(tuple(n.instruction for n in nodes), sources,
                tuple((v.shape, v.dtype) for v in leaves), wanted, executable, captures, plans,
                tuple(constants.items()), at_cut)


def _recipe_constants(specs, slot: dict, found: dict) -> None:
    """The leaves among a recipe step's scalar operands ("c" specs), by number."""
    for spec in specs:
        if spec[0] == "c":
            number = slot.get(id(spec[1]))
            if number is not None:
                found[number] = spec[1]
        elif spec[0] == "t":
            _recipe_constants(spec[1], slot, found)


def noted_arguments(args, recipe) -> tuple | None:
    """A replayed call's arguments as the step notes them for its tape, holding
    no handle (a held handle would make its value an output of the cluster):
    ("h", order, index, weak) for a pending result, ("s", type, value) for a
    scalar, ("t", type, value, element types) for a tuple or list of scalars,
    ("v", type, value, weak) for an array's value, ("k", spelling, value) for an
    index of slices and such, ("l", type, notes) for a list or tuple of these
    (`concatenate`'s arrays, an index of slices and index arrays); None where
    one is none of these, or is a NumPy array the recipe converts."""
    noted = []
    for a in args:
        kind = type(a)
        node = getattr(a, "_node", None)
        if node is not None and a._value is None:
            noted.append(("h", node.order, a._index, a.weak_type))
        elif isinstance(a, SCALARS):
            noted.append(("s", kind, a))
        elif (kind is tuple or kind is list) and all(isinstance(x, SCALARS) for x in a):
            noted.append(("t", kind, tuple(a), tuple(map(type, a))))   # (a list may change)
        elif kind is np.ndarray:
            if not recipe.direct:
                return None   # (its operand is a converted copy)
            noted.append(("v", kind, a, False))
        elif isinstance(a, ConcreteArray):
            noted.append(("v", kind, a.value, a.weak_type))
        else:
            spelled = static_index(a)
            if spelled is not None:
                noted.append(("k", spelled, a))
                continue
            parts = noted_arguments(a, recipe) if kind is list or kind is tuple else None
            if parts is None:
                return None
            noted.append(("l", kind, parts))
    return tuple(noted)


def static_index(value):
    """An index of slices (of ints), Ellipsis, None and ints, or a tuple of
    them, spelled with its types (`x[:, :16]`, `x[..., None]`: calls taped by
    their plans, not replayed generically every step); None for anything else."""
    kind = type(value)
    if kind is slice:
        parts = (value.start, value.stop, value.step)
        return (slice, *parts) if all(type(v) is int or v is None for v in parts) else None
    if value is None or value is Ellipsis or kind is int:
        return (kind, value)
    if kind is tuple:
        spelled = tuple(static_index(v) for v in value)
        return None if None in spelled else (tuple, spelled)
    return None


class CallPlan:
    """How the tape makes one replayed call's node again: `fn` called with
    arguments that pass `checks` (`_call_plan`) under the same flags makes
    `instruction` on the arguments' operands, as its recipe did."""

    __slots__ = ("fn", "checks", "env", "x64", "keywords", "instruction", "specs", "weak",
                 "index", "container", "plain", "pick", "constants", "result", "fast")

    def __init__(self, fn, checks: tuple, recipe, env, x64, keywords: tuple):
        self.fn = fn
        self.checks = checks
        self.env = env
        self.x64 = x64
        self.keywords = keywords
        self.instruction, specs, self.weak = recipe.steps[0]
        self.specs = tuple(specs)
        self.container = recipe.container if recipe.spread else None
        """What holds the node's results, the call's (`split`'s list); else None."""
        self.index = None if self.container is not None else recipe.results[0][2]
        """Which result of the node is the call's (None: its only one, or all)."""
        shape = self.instruction.shape
        self.result = (shape.dimensions, np.dtype(shape.dtype)) if shape.is_array else None
        """The node's one array result: its dimensions and NumPy dtype (None: a tuple)."""
        arrays = _array_count(checks)
        self.plain = self.specs == tuple(("a", i) for i in range(arrays))
        """The node's operands are the array arguments as given, in order."""
        self.pick = self.constants = None
        """Else, where every operand is an argument or a constant: the operands
        picked from the arguments given followed by `constants`."""
        if not self.plain and len(self.specs) > 1 and all(s[0] in "ac" for s in self.specs):
            constants = [s[1] for s in self.specs if s[0] == "c"]
            places = iter(range(arrays, arrays + len(constants)))
            self.pick = operator.itemgetter(*(s[1] if s[0] == "a" else next(places)
                                              for s in self.specs))
            self.constants = constants
        self.fast = 0
        """The plan as one function (`lazy_plan_code`) once it has been used a few
        times (until then, how many times); None where it has none."""


def _array_count(checks) -> int:
    """How many operands `checks` take (kinds 0, 1 and 3, inside lists too)."""
    return sum(1 if c[0] in (0, 1, 3) else _array_count(c[2]) if c[0] == 7 else 0
               for c in checks)


def _call_plan(call, position: dict, slot: dict) -> CallPlan | None:
    """The plan of a replayed call noted as (function, noted arguments (positional,
    then keyword values), recipe, flags, x64, keywords), each argument's check
    as `TapeRun.arguments` reads it: (0, position, index, weak) for a pending
    result of the step; (1, leaf, type, weak, shape, dtype) for a value that is
    a leaf; (2, type, value) for a scalar; (3, type, shape, dtype, weak) for an
    array only the signature reads; (4, type, value, element types) for a tuple
    or list of scalars; (5, type, repr) for a zero scalar, whose sign counts;
    (6, spelling, value) for an index of slices and such (`static_index`; the
    same object is the same index: slices and tuples do not change); (7, type,
    checks) for a list or tuple of other things, a check each.
    None where an argument is none of these."""
    if call is None:
        return None
    if type(call) is CallPlan:   # (made from a plan: its positions and leaves are this
        return call              # step's, the tape's prefix)
    fn, noted, recipe, flags, x64, keywords = call
    checks = None if noted is None else _checks(noted, position, slot)
    if checks is None:
        return None
    return CallPlan(fn, tuple(checks), recipe, flags, x64, keywords)


def _checks(noted, position: dict, slot: dict) -> list | None:
    checks = []
    for a in noted:
        if a[0] == "h":
            k = position.get(a[1])
            if k is None:
                return None
            checks.append((0, k, a[2], a[3]))
        elif a[0] == "l":
            parts = _checks(a[2], position, slot)
            if parts is None:
                return None
            checks.append((7, a[1], tuple(parts)))
        elif a[0] == "s":
            checks.append((5, a[1], repr(a[2])) if signed_zero(a[2]) else (2, a[1], a[2]))
        elif a[0] == "k":
            checks.append((6, a[1], a[2]))
        elif a[0] == "t":
            checks.append((4, a[1], a[2], a[3]))
        else:
            _, kind, value, weak = a
            number = slot.get(id(value))
            if number is not None:
                checks.append((1, number, kind, weak, value.shape, value.dtype))
            else:
                checks.append((3, kind, value.shape, value.dtype, weak))
    return checks


def _source(operand, position: dict, slot: dict, node: Node):
    """How a node's operand is found again: (position, tuple index) of an earlier
    node of the step; a leaf's number; ("t", parts) for a tuple; ("v", value)
    for a scalar the cluster spells as a constant (a reduction's initial value)."""
    if type(operand) is tuple:
        if len(operand) == 2 and type(operand[0]) is Node:
            k = position.get(operand[0].order)
            if k is not None:
                return (k, operand[1])
            if operand[0].operands is not None:
                raise NoTape
            operand = operand[0].value[operand[1] or 0]   # computed by an earlier cluster
        else:
            return ("t", tuple(_source(o, position, slot, node) for o in operand))
    number = slot.get(id(operand))
    if number is not None:
        return number
    if operand.ndim == 0:
        return ("v", operand, operand.tobytes(), operand.dtype)
    raise NoTape


def _captured(array, position: dict, slot: dict):
    """A cut-out's capture as `_source` spells an operand (a pending handle or a leaf)."""
    node = getattr(array, "_node", None)
    if node is not None and array._value is None:
        return (position[node.order], array._index)
    number = slot.get(id(array.value))
    if number is None:
        raise NoTape
    return number


class TapeRun:
    """One step being matched against `tape`: the nodes made so far, the leaves
    gathered, and where each node is (by its order)."""

    __slots__ = ("tape", "nodes", "leaves", "position", "captures")

    def __init__(self, tape: Tape):
        self.tape = tape
        self.nodes: list[Node] = []
        self.leaves: list = [None] * len(tape.leaf_avals)
        for number, value in tape.constants:
            self.leaves[number] = value
        self.position: dict[int, int] = {}
        self.captures: list[tuple] = []
        """The cut-outs taken from the tape, as a step's log notes them."""

    def matches(self, instruction, operands) -> bool:
        """Whether the next node of the tape is `instruction` on these operands
        (filling the leaves it reads)."""
        k = len(self.nodes)
        tape = self.tape
        return (k < len(tape.instructions) and tape.instructions[k] is instruction
                and self._operands(operands, tape.sources[k]))

    def _operands(self, operands, sources) -> bool:
        if len(operands) != len(sources):
            return False
        leaves = self.leaves
        nodes = self.nodes
        for operand, source in zip(operands, sources):
            if type(operand) is tuple:
                if len(operand) == 2 and type(operand[0]) is Node:
                    node = operand[0]
                    if node.operands is not None:   # pending: the step's, where it was then
                        if (type(source) is not tuple or type(source[0]) is not int
                                or nodes[source[0]] is not node or source[1] != operand[1]):
                            return False
                        continue
                    operand = node.value[operand[1] or 0]   # computed earlier: a leaf
                elif not (type(source) is tuple and source[0] == "t"
                          and self._operands(operand, source[1])):
                    return False
                else:
                    continue
            if type(source) is int:
                held = leaves[source]
                if held is None:   # (a leaf of the shape and type compiled for)
                    shape, dtype = self.tape.leaf_avals[source]
                    if operand.shape != shape or operand.dtype != dtype:
                        return False
                    leaves[source] = operand
                elif held is not operand:
                    return False
            elif not (type(source) is tuple and source[0] == "v" and (
                    source[1] is operand or (operand.ndim == 0 and operand.dtype == source[3]
                                             and operand.tobytes() == source[2]))):
                return False
        return True

    def arguments(self, args, checks):
        """The arguments as a node's operands hold them, where each comes from where
        the tape's did (then the leaves they are are gathered); else None."""
        given: list = []
        fills: list = []
        if not self._gather(args, checks, given, fills):
            return None
        leaves = self.leaves
        for number, value in fills:
            if leaves[number] is not None and leaves[number] is not value:
                return None
            leaves[number] = value
        return given

    def _gather(self, args, checks, given: list, fills: list) -> bool:
        """`arguments`' checks: each operand taken into `given`, each leaf not yet
        gathered into `fills` as (number, value); False where one does not pass."""
        if len(args) != len(checks):
            return False
        nodes = self.nodes
        leaves = self.leaves
        for a, check in zip(args, checks):
            kind = check[0]
            if kind == 0:   # (a handle's node is None once computed: the node is pending)
                node = nodes[check[1]]
                if (getattr(a, "_node", None) is not node or a._index != check[2]
                        or a.weak_type != check[3]):
                    return False
                given.append((node, check[2]))
            elif kind == 1:
                if type(a) is not check[2]:
                    return False
                if check[2] is np.ndarray:
                    value = a
                else:   # (None: pending, or deleted; the ordinary path says which)
                    value = a._value
                    if value is None or a.weak_type != check[3]:
                        return False
                if value.shape != check[4] or value.dtype != check[5]:
                    return False
                held = leaves[check[1]]
                if held is None:
                    fills.append((check[1], value))
                elif held is not value:
                    return False
                given.append(value)
            elif kind == 2:   # (a constant of the caller's code is the same object)
                if a is not check[2] and (type(a) is not check[1] or a != check[2]):
                    return False
            elif kind == 6:   # a static index (slices and such), spelled with its types
                if a is not check[2] and static_index(a) != check[1]:
                    return False
            elif kind == 5:   # a zero, whose sign counts (0.0 == -0.0)
                if type(a) is not check[1] or a or repr(a) != check[2]:
                    return False
            elif kind == 4:
                if a is not check[2] and (type(a) is not check[1]
                                          or (tuple(a) if check[1] is list else a) != check[2]
                                          or tuple(map(type, a)) != check[3]):
                    return False
            elif kind == 7:   # a list or tuple, each of its elements checked as one
                if (type(a) is not check[1] or len(a) != len(check[2])
                        or not self._gather(a, check[2], given, fills)):
                    return False
            else:
                if (type(a) is not check[1] or a.shape != check[2] or a.dtype != check[3]
                        or getattr(a, "weak_type", False) != check[4]
                        or getattr(a, "_value", 0) is None and a._node is not None):
                    return False
                given.append(a if check[1] is np.ndarray else a.value)
        return True

    def rematched(self, tape: Tape) -> TapeRun | None:
        """A run of `tape` with this run's nodes and cut-outs so far, where they
        match it (a step of another kind that began alike); else None."""
        other = TapeRun(tape)
        for node in self.nodes:
            if not other.matches(node.instruction, node.operands):
                return None
            other.add(node)
        for first, computation, *_ in self.captures:
            mine = self.tape.captures.get(self.position[first.order])
            theirs = tape.captures.get(other.position[first.order])
            if (mine is None or theirs is None or theirs[0] is not computation
                    or theirs[1:] != mine[1:]):
                return None
        other.captures = list(self.captures)
        return other

    def add(self, node: Node) -> None:
        self.position[node.order] = len(self.nodes)
        self.nodes.append(node)

    def complete(self, arrays) -> bool:
        """Whether the step is the whole tape, with `arrays` among its results and
        every leaf gathered (each checked against the tape's shape and type as it
        was: by its call's plan, or by `_operands`)."""
        nodes = self.nodes
        if len(nodes) != len(self.tape.instructions) or any(v is None for v in self.leaves):
            return False
        for array in arrays:
            k = self.position.get(array._node.order)
            if k is None or nodes[k] is not array._node:
                return False
        return True

    def captured(self, first: Node, outputs: list, out_tree, handle):
        """(computation, captures) of a `grad` cut-out whose first stand-in is
        `first`, as the tape has it, if the function's `outputs` and tree are
        those of the tape's; else None. `handle(operand)` makes the Array of a
        capture from a (node, index) reference or a leaf's value."""
        k = self.position.get(first.order)
        entry = self.tape.captures.get(k) if k is not None else None
        if entry is None:
            return None
        computation, captures, wanted, tree = entry
        if tree != out_tree or len(outputs) != len(wanted):
            return None
        nodes = self.nodes
        for x, (position, index) in zip(outputs, wanted):   # (the tape may be another program's
            if position >= len(nodes) or nodes[position] is not x._node or x._index != index:
                return None                                  # that began alike)
        arrays = []
        for source in captures:
            if type(source) is int:
                value = self.leaves[source]
                if value is None:
                    return None
                arrays.append(handle(value))
            elif source[0] < len(nodes):
                arrays.append(handle((nodes[source[0]], source[1])))
            else:
                return None
        self.captures.append((first, computation, arrays, outputs, out_tree))
        return computation, arrays
