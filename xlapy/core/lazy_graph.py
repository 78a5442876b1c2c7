"""The pending graph of lazy mode: recorded operations (`Node`), how their
operands refer to one another, and the structural signature that decides
when two recordings are the same program (so a cluster is compiled once)."""

from __future__ import annotations

import itertools

import numpy as np

from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.shape import Shape


class Node:
    """One recorded operation: the interpreter's instruction for its signature
    (shared by every node of that signature) applied to `operands` (Nodes,
    concrete NumPy values, or tuples of them). A plain slotted class: lazy
    mode makes one per eager operation."""

    __slots__ = ("instruction", "operands", "weak_type", "outputs", "value", "order")

    def __init__(self, instruction: HloInstruction, operands: list, weak_type: bool,
                 order: int = 0):
        self.instruction = instruction
        self.operands = operands
        self.weak_type = weak_type
        self.outputs: list = []
        """Weak references to the LazyArrays that hold each result (one per tuple element)."""
        self.value = None
        """The result once computed (a list, one per tuple element); then operands go."""
        self.order = order

    @property
    def pending(self) -> bool:
        return self.operands is not None


def array_shape(dimensions, dtype) -> Shape:
    """The HLO shape of an array value of these dimensions and NumPy dtype."""
    return Shape.array(PrimitiveType.from_numpy(np.dtype(dtype)), tuple(dimensions))


def flat_operands(operands):
    for operand in operands:
        if isinstance(operand, tuple) and not (len(operand) == 2 and
                                               isinstance(operand[0], Node)):
            yield from flat_operands(operand)
        else:
            yield operand


def refs(operands):
    """The (node, index) references among `operands`."""
    for operand in flat_operands(operands):
        if is_ref(operand):
            yield operand


def is_ref(operand) -> bool:
    return isinstance(operand, tuple) and len(operand) == 2 and isinstance(operand[0], Node)


def spell(nodes: list[Node], leaf) -> tuple:
    """The structure of `nodes` (in recording order) as a hashable key, and the
    recipe a module is built from: per node, its instruction's signature and
    its operands spelled ("n", position, tuple index) for a node among them,
    ("t", parts) for a tuple, and `leaf(operand, node)` for anything else (the
    caller's spelling of a module parameter, ("p", number), or a constant).
    Every step records it again, so the common operands are spelled inline."""
    position = {node.order: k for k, node in enumerate(nodes)}
    spelled = []
    for n in nodes:
        operands = []
        for o in n.operands:
            if type(o) is tuple and len(o) == 2 and type(o[0]) is Node:
                k = position.get(o[0].order)
                operands.append(("n", k, o[1]) if k is not None else leaf(o, n))
            else:
                operands.append(_spell(o, position, leaf, n))
        spelled.append((signature(n.instruction), tuple(operands)))
    return tuple(spelled)


def _spell(operand, position: dict, leaf, node: Node):
    # (a module function, not a recursive closure: such a closure is a reference
    # cycle that would keep the cluster's leaves alive until the next full collection)
    if type(operand) is tuple:
        if len(operand) == 2 and type(operand[0]) is Node:
            k = position.get(operand[0].order)
            if k is not None:
                return ("n", k, operand[1])
        else:
            return ("t", tuple(_spell(o, position, leaf, node) for o in operand))
    return leaf(operand, node)


_SIGNATURES: dict[int, tuple] = {}
"""id(instruction or computation) -> (the object, kept alive, and its signature)."""
_INTERNED: dict[tuple, int] = {}
"""Structural key -> its signature: a small int, so the keys built of signatures
every step (a cluster's, a capture's) hash in time of their length, not of the
structures of the called computations inside them."""
_NUMBERS = itertools.count()
"""Signatures are never reused, so a cache key kept past a reset cannot match
another structure."""


def _interned(key: tuple) -> int:
    number = _INTERNED.get(key)
    if number is None:
        number = _INTERNED[key] = next(_NUMBERS)
    return number


def _remembered(thing, key: tuple) -> int:
    if len(_SIGNATURES) > 20000:
        _SIGNATURES.clear()
        _INTERNED.clear()
    number = _interned(key)
    _SIGNATURES[id(thing)] = (thing, number)
    return number


def signature(instruction: HloInstruction) -> int:
    """What makes two recorded instructions the same op: opcode, shape, attributes,
    called computations by structure (not by name or identity: each eager `grad`
    traces fresh ones); equal signatures mean equal structures."""
    hit = _SIGNATURES.get(id(instruction))
    if hit is not None and hit[0] is instruction:
        return hit[1]
    return _remembered(instruction, (
        instruction.opcode, instruction.shape.to_text(),
        tuple((k, _attr_key(v)) for k, v in instruction.attrs.items() if k != "metadata")))


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


def computation_signature(computation: HloComputation) -> int:
    hit = _SIGNATURES.get(id(computation))
    if hit is not None and hit[0] is computation:
        return hit[1]
    index = {id(i): k for k, i in enumerate(computation.instructions)}
    body = tuple((i.opcode, i.shape.to_text(), tuple(index[id(o)] for o in i.operands),
                  i.parameter_number,
                  None if i.literal is None else np.asarray(i.literal).tobytes(),
                  tuple((k, _attr_key(v)) for k, v in i.attrs.items() if k != "metadata"))
                 for i in computation.instructions)
    return _remembered(computation, (body, index[id(computation.root_instruction)]))
