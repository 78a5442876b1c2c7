"""Replaying an HLO computation on frontend arrays: the forward half of both modes.

Autodiff works on HLO, not on Python: `grad(f)` first records `f` as an
HloComputation, and a module parsed from text already is one. `Replay` walks a
computation in post order and re-applies each instruction to Arrays with
`bind` (so the replayed ops land in the current trace, or run at once with no
trace), inlining `call` and `fusion`, turning `tuple`/`get-tuple-element`
into Python tuples, and handing every other instruction to a hook that the
reverse and forward passes specialise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from xlapy.core import dtypes, lazy
from xlapy.core.array import Array, ConcreteArray
from xlapy.core.trace import Tracer, bind, current_trace
from xlapy.hlo.attributes import RawAttribute
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import Opcode

STOP_GRADIENT = "xlapy_stop_gradient"
CUSTOM_VJP = "xlapy_custom_vjp"
CUSTOM_JVP = "xlapy_custom_jvp"


@dataclass(eq=False)
class Node:
    """One replayed instruction: what a differentiation rule is given."""

    instruction: HloInstruction   # the opcode, attributes and result shape
    operands: list                # Arrays (tuples of Arrays for tuple operands), as bound
    result: Any                   # an Array, or a tuple of them
    active: tuple[bool, ...] = ()  # which operands carry a derivative
    residuals: Any = None         # what a rule's forward hook saved for the backward pass
    rule: Any = None              # a custom rule overriding the opcode's (custom_vjp)
    extra: dict = field(default_factory=dict)

    @property
    def opcode(self) -> Opcode:
        return self.instruction.opcode

    def attr(self, name: str, default=None):
        return self.instruction.attrs.get(name, default)

    @property
    def shape(self):
        return self.instruction.shape


def frontend_attribute(instruction: HloInstruction, key: str) -> str | None:
    """The value of `key` in an instruction's `frontend_attributes={...}`."""
    raw = instruction.attrs.get("frontend_attributes")
    if raw is None:
        return None
    text = raw.text if isinstance(raw, RawAttribute) else str(raw)
    marker = f"{key}="
    start = text.find(marker)
    if start < 0:
        return None
    rest = text[start + len(marker):].lstrip()
    if rest.startswith('"'):
        return rest[1:rest.index('"', 1)]
    end = min((i for i in (rest.find(","), rest.find("}")) if i >= 0), default=len(rest))
    return rest[:end]


def frontend_attributes(**items: str) -> RawAttribute:
    return RawAttribute("{" + ",".join(f'{k}="{v}"' for k, v in items.items()) + "}")


def known_trip_count_config(instruction: HloInstruction) -> int | None:
    """`backend_config={"known_trip_count":{"n":"8"}}`, as XLA annotates loops."""
    raw = instruction.attrs.get("backend_config")
    if raw is None:
        return None
    text = raw.text if isinstance(raw, RawAttribute) else str(raw)
    try:
        config = json.loads(text.strip("'"))
        return int(config["known_trip_count"]["n"])
    except (ValueError, KeyError, TypeError):
        return None


def known_value(x) -> np.ndarray | None:
    """`x`'s value if it is known while tracing (concrete, or a traced constant)."""
    if isinstance(x, lazy.LazyArray) and x._value is None:
        return None   # pending: reading it would cut the lazy graph
    if isinstance(x, ConcreteArray):
        return x.value
    if isinstance(x, Tracer):
        if x.known is not None:
            return x.known
        if x.instruction.opcode is Opcode.CONSTANT:
            return x.instruction.literal
    return None


def fresh(x):
    """The same value as a new Array object: tapes key derivatives by identity, so
    two uses of one value as different inputs must not share one key."""
    if isinstance(x, tuple):
        return tuple(fresh(v) for v in x)
    if isinstance(x, Tracer):
        return Tracer(x.trace, x.instruction, x.weak_type, x.origin, x.known)
    if isinstance(x, lazy.LazyArray):
        return x.with_weak_type(x.weak_type)
    if isinstance(x, ConcreteArray):
        return ConcreteArray(x.value, x.weak_type)
    return x


def leaves(x) -> list:
    if isinstance(x, (tuple, list)):
        return [leaf for v in x for leaf in leaves(v)]
    return [x]


def is_differentiable_type(dtype) -> bool:
    """Floating point (real or complex) values carry derivatives; integers and
    booleans get zero cotangents, as in JAX. (Asked per argument per gradient
    step: answered from a table.)"""
    known = _DIFFERENTIABLE.get(dtype)
    if known is None:
        known = _DIFFERENTIABLE[dtype] = dtypes.is_float(dtype) or dtypes.is_complex(dtype)
    return known


_DIFFERENTIABLE: dict = {}


def constant_array(instruction: HloInstruction):
    literal = instruction.literal
    if isinstance(literal, tuple):
        return tuple(ConcreteArray(np.asarray(v)) for v in literal)
    return ConcreteArray(np.asarray(literal))


class Replay:
    """Walks a computation on Arrays; subclasses decide what `apply` does."""

    def __init__(self, precomputed: dict[int, Any] | None = None):
        # id(instruction) -> value recorded by a concrete trace; used only when
        # replaying with no trace, so the forward pass is not computed twice
        self.precomputed = precomputed if current_trace() is None else None

    def run(self, computation: HloComputation, args: list) -> Any:
        env: dict[int, Any] = {}
        for instruction in computation.post_order():
            env[id(instruction)] = self.visit(instruction, env, args)
        return env[id(computation.root_instruction)]

    def visit(self, instruction: HloInstruction, env: dict, args: list):
        opcode = instruction.opcode
        if opcode is Opcode.PARAMETER:
            return args[instruction.parameter_number]
        operands = [env[id(o)] for o in instruction.operands]
        if opcode is Opcode.TUPLE:
            return tuple(operands)
        if opcode is Opcode.GET_TUPLE_ELEMENT:
            return operands[0][instruction.attrs["index"]]
        if opcode is Opcode.CONSTANT:
            return constant_array(instruction)
        if frontend_attribute(instruction, STOP_GRADIENT) is not None:
            return self.stop_gradient(instruction, operands)
        if opcode in (Opcode.CALL, Opcode.FUSION):
            custom = (frontend_attribute(instruction, CUSTOM_VJP)
                      or frontend_attribute(instruction, CUSTOM_JVP))
            if custom is not None:
                return self.custom(instruction, operands)
            return self.run(instruction.called_computations[0], operands)
        if opcode is Opcode.OPTIMIZATION_BARRIER:
            return operands[0]
        return self.apply(instruction, operands)

    # -- hooks -------------------------------------------------------------------------
    def primal(self, instruction: HloInstruction, operands: list):
        """The instruction's value on these operands (recorded, or bound now)."""
        if self.precomputed is not None and id(instruction) in self.precomputed:
            return _wrap(self.precomputed[id(instruction)])
        attrs = instruction.attrs
        if current_trace() is None:  # eager: metadata would only defeat the op cache
            attrs = {k: v for k, v in attrs.items() if k != "metadata"}
        return bind(instruction.opcode, operands, attrs, shape=instruction.shape,
                    weak_type=False, name=_op_name(instruction))

    def apply(self, instruction: HloInstruction, operands: list):
        return self.primal(instruction, operands)

    def stop_gradient(self, instruction: HloInstruction, operands: list):
        return fresh(operands[0])

    def custom(self, instruction: HloInstruction, operands: list):
        return self.run(instruction.called_computations[0], operands)


def _wrap(value):
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    return ConcreteArray(value)


def _op_name(instruction: HloInstruction) -> str:
    metadata = instruction.attrs.get("metadata")
    name = metadata.get("op_name") if metadata is not None else None
    return name.rsplit("/", 1)[-1] if name else instruction.opcode.value


def evaluate(computation: HloComputation, args: list) -> Any:
    """`computation` applied to Arrays: its instructions bound one by one (emitted
    into the current trace, or evaluated at once)."""
    return Replay().run(computation, args)


__all__ = ["Array", "Node", "Replay", "evaluate", "fresh", "known_value", "leaves"]
