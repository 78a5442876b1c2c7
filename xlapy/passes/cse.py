"""Common subexpression elimination (XLA's HloCSE, pass name "cse").

Within one computation, two instructions that compute the same value are
merged: the later one's users read the earlier one, and the later one goes.
"The same value" means: the same opcode, the same shape (layout included),
the same operands (in any order for a commutative binary op: `add(a, b)` is
`add(b, a)`), and the same attributes compared in full, called computations
compared by structure (so JAX's `%region_0` and `%region_1` reducers, both
`a + b`, count as one). Constants are merged by value, bit for bit (so `0.0`
and `-0.0`, or two NaN payloads, stay apart); iotas by shape and dimension.

Never merged: instructions with side effects (`dce.has_side_effect`: rng,
send/recv, infeed/outfeed, side-effecting custom-calls, ...), parameters, and
instructions of different computations. The `metadata` attribute (source
location) is ignored, as XLA ignores it; the survivor keeps its own.

Shapes are compared with their layouts (XLA's layout-sensitive mode): xlapy
has no layout assignment that would make layouts free to change, so merging
two constants of different layouts would change a printed, parsed program.

Results are exactly unchanged: merged instructions compute identical values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from xlapy.hlo.attributes import RawAttribute
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.mutation import forward_operands
from xlapy.hlo.opcode import COMMUTATIVE, ELEMENTWISE_BINARY, Opcode
from xlapy.passes.dce import has_side_effect
from xlapy.passes.pass_interface import Pass

_IGNORED_ATTRIBUTES = frozenset({"metadata"})
_COMMUTATIVE_BINARY = COMMUTATIVE & ELEMENTWISE_BINARY
_ZERO_OPERAND_PURE = frozenset({Opcode.CONSTANT, Opcode.IOTA, Opcode.PARTITION_ID,
                                Opcode.REPLICA_ID})


class HloCSE(Pass):
    """Merge instructions that compute the same value, one computation at a time."""

    name = "cse"

    def run(self, module: HloModule) -> bool:
        signatures = _Signatures()
        memo: dict[int, bool] = {}
        changed = False
        for computation in module.computations:
            changed |= _cse_computation(computation, signatures, memo)
        return changed


def _cse_computation(computation: HloComputation, signatures: _Signatures,
                     memo: dict[int, bool]) -> bool:
    """One walk in program order: each instruction's operands are forwarded to their
    representatives before its key is taken, so a chain of duplicates collapses in
    a single run, and the representative (earlier) is defined before every user."""
    position = {id(i): n for n, i in enumerate(computation.instructions)}
    representatives: dict[Any, HloInstruction] = {}
    replacements: dict[int, HloInstruction] = {}
    kept: list[HloInstruction] = []
    for instruction in computation.instructions:
        forward_operands(instruction, replacements)
        if _mergeable(instruction, memo):
            key = _key(instruction, position, signatures)
            representative = representatives.setdefault(key, instruction)
            if representative is not instruction:
                replacements[id(instruction)] = representative
                continue
        kept.append(instruction)
    if not replacements:
        return False
    computation.instructions = kept
    root = computation.root_instruction
    computation.root_instruction = replacements.get(id(root), root)
    return True


def _mergeable(instruction: HloInstruction, memo: dict[int, bool]) -> bool:
    if instruction.opcode is Opcode.PARAMETER:
        return False
    if not instruction.operands and instruction.opcode not in _ZERO_OPERAND_PURE:
        return False  # after-all, rng-get-and-update-state, ...: each one is its own
    return not has_side_effect(instruction, memo)


def _key(instruction: HloInstruction, position: dict[int, int],
         signatures: _Signatures) -> tuple:
    """Everything that decides the value: opcode, shape, operands, attributes."""
    operands = tuple(position[id(op)] for op in instruction.operands)
    if instruction.opcode in _COMMUTATIVE_BINARY:
        operands = tuple(sorted(operands))  # add(a, b) is add(b, a)
    return (instruction.opcode, instruction.shape, operands,
            _attributes_key(instruction.attrs, signatures),
            _literal_key(instruction.literal))


def _attributes_key(attrs: dict, signatures: _Signatures) -> tuple:
    return tuple(sorted((name, _value_key(value, signatures))
                        for name, value in attrs.items() if name not in _IGNORED_ATTRIBUTES))


def _value_key(value, signatures: _Signatures):
    if isinstance(value, HloComputation):
        return ("computation", signatures.of(value))
    if isinstance(value, (tuple, list)):
        return tuple(_value_key(v, signatures) for v in value)
    if isinstance(value, np.ndarray):
        return _literal_key(value)
    if isinstance(value, RawAttribute):
        return ("raw", value.text)
    return (type(value).__name__, value)


def _literal_key(literal):
    """A constant's value bit for bit (dtype and dimensions included)."""
    if literal is None:
        return None
    if isinstance(literal, tuple):
        return tuple(_literal_key(v) for v in literal)
    array = np.asarray(literal)
    return ("array", array.dtype.str, array.dtype.name, array.shape,
            np.ascontiguousarray(array).tobytes())


class _Signatures:
    """A structural signature per called computation, names ignored: two reducers
    that both compute `a + b` on f32 scalars have the same signature."""

    def __init__(self):
        self._cache: dict[int, tuple] = {}

    def of(self, computation: HloComputation) -> tuple:
        cached = self._cache.get(id(computation))
        if cached is None:
            cached = self._compute(computation)
            self._cache[id(computation)] = cached
        return cached

    def _compute(self, computation: HloComputation) -> tuple:
        order = computation.post_order()
        position = {id(i): n for n, i in enumerate(order)}
        body = tuple(
            (i.opcode, i.shape, tuple(position[id(op)] for op in i.operands),
             _attributes_key(i.attrs, self), _literal_key(i.literal), i.parameter_number)
            for i in order)
        return body, position[id(computation.root_instruction)]
