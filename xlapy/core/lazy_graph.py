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
    """The structure of `nodes` (in recording order) as one flat hashable tuple,
    and the recipe a module is built from (`unspelled` gives it per node).
    Each node is its instruction's signature and operand count, then each
    operand: "n", position, tuple index for a node among them; "t", count,
    then the parts, for a tuple; and what `leaf(operand, node, out)` appends
    to `out` for anything else (the caller's spelling of a module parameter,
    "p", number, or of a constant, "c", bytes, dtype). Every step spells its
    cluster again and looks it up: a flat tuple of small items hashes and
    compares in C, where nested tuples would be walked twice more."""
    position = {node.order: k for k, node in enumerate(nodes)}
    flat: list = []
    signatures = _SIGNATURES
    for n in nodes:
        instruction = n.instruction
        hit = signatures.get(id(instruction))
        flat += (hit[1] if hit is not None and hit[0] is instruction else
                 signature(instruction), len(n.operands))
        _spell_operands(n.operands, position, leaf, n, flat)
    return tuple(flat)


def _spell_operands(operands, position: dict, leaf, node: Node, flat: list) -> None:
    # (a module function, not a recursive closure: such a closure is a reference
    # cycle that would keep the cluster's leaves alive until the next full collection)
    for o in operands:
        if type(o) is tuple:
            if len(o) == 2 and type(o[0]) is Node:
                k = position.get(o[0].order)
                if k is not None:
                    flat += ("n", k, o[1])
                    continue
            else:
                flat += ("t", len(o))
                _spell_operands(o, position, leaf, node, flat)
                continue
        leaf(o, node, flat)


def unspelled(structure: tuple) -> list[tuple]:
    """`spell`'s flat structure per node: (signature, operands), each operand
    ("n", position, index), ("p", number), ("c", bytes, dtype) or ("t", parts)."""
    nodes = []
    at = 0
    while at < len(structure):
        sig, count = structure[at], structure[at + 1]
        at += 2
        operands = []
        for _ in range(count):
            operand, at = _unspelled_operand(structure, at)
            operands.append(operand)
        nodes.append((sig, tuple(operands)))
    return nodes


_WIDTHS = {"n": 3, "p": 2, "c": 3}


def _unspelled_operand(structure: tuple, at: int) -> tuple[tuple, int]:
    kind = structure[at]
    if kind == "t":
        parts = []
        at += 2
        for _ in range(structure[at - 1]):
            part, at = _unspelled_operand(structure, at)
            parts.append(part)
        return ("t", tuple(parts)), at
    width = _WIDTHS[kind]
    return structure[at:at + width], at + width


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
