"""Applying a scalar computation (a reducer, comparator, combiner or mapped
function) to whole arrays at once.

XLA's reducers, comparators, scatter combiners and mapped functions are
scalar computations. `ScalarFunction` walks such a body with the ordinary
rules on arrays (every op in it is elementwise), and falls back to one
`evaluator.call` per element when the body holds anything else.

Reductions, scans and sorts call one body many times on arrays of changing
sizes, so the walk is planned once per body (the op order, each step's kind
and rule) and each call only runs the rules.
"""

from __future__ import annotations

import numpy as np

from xlapy.hlo import ir
from xlapy.hlo.evaluator.rules import RULES
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import ELEMENTWISE, Opcode
from xlapy.hlo.shape import Shape

_TABLE_OPS = frozenset({Opcode.CONSTANT, Opcode.TUPLE, Opcode.GET_TUPLE_ELEMENT})
_SCALAR_IDENTITIES = frozenset({
    Opcode.BROADCAST, Opcode.RESHAPE, Opcode.COPY, Opcode.BITCAST, Opcode.TRANSPOSE,
})
"""Movement ops that are the identity when operand and result are both scalars."""

_ARGUMENT, _TABLE, _IDENTITY, _CALL, _ELEMENTWISE = range(5)
"""How a planned step runs: read an argument, run a rule on scalars (constants,
tuples), pass its operand through, walk a called body, or run an elementwise
rule on arrays of the batch shape."""


class _NotVectorisable(Exception):
    """The body holds an op that cannot run on whole arrays."""


class _Step:
    """One instruction of a planned walk: its kind, rule and operand slots."""

    __slots__ = ("instruction", "kind", "rule", "operands", "callee", "index", "dtype", "twin")

    def __init__(self, instruction: HloInstruction, kind: int, slots: list[int], callee=None,
                 index: int = 0):
        self.instruction = instruction
        self.kind = kind
        self.rule = RULES.get(instruction.opcode)
        self.operands = slots
        self.callee = callee
        self.index = index  # an argument step's position among the arguments
        self.dtype = instruction.shape.dtype if instruction.shape.is_array else None
        self.twin: HloInstruction | None = None  # the instruction with the last batch dims


def _plan(order: list[HloInstruction], plans: dict[int, list[_Step]],
          inputs: dict[int, int] | None = None) -> list[_Step]:
    """`order` (operands first) as steps reading earlier steps' slots; raises
    _NotVectorisable for an op that cannot run on whole arrays.

    Arguments are the parameters by number, or with `inputs` (id(instruction)
    -> argument position) the values of those instructions, which then stand
    in for everything they depend on.
    """
    slot = {id(node): i for i, node in enumerate(order)}
    steps = []
    for node in order:
        op = node.opcode
        callee = None
        if inputs is not None and id(node) in inputs:
            steps.append(_Step(node, _ARGUMENT, [], index=inputs[id(node)]))
            continue
        slots = [slot[id(operand)] for operand in node.operands]
        if op is Opcode.PARAMETER:
            if inputs is not None:
                raise _NotVectorisable("a parameter outside the given inputs")
            steps.append(_Step(node, _ARGUMENT, [], index=node.parameter_number))
            continue
        if op is Opcode.CALL:
            kind, body = _CALL, node.attrs["to_apply"]
            callee = plans.get(id(body))
            if callee is None:
                callee = plans[id(body)] = _plan(operand_post_order(body.root_instruction),
                                                  plans)
        elif op is Opcode.BITCAST and _changes_type(node):
            # XLA's sort comparators bitcast f16 keys to s16: an elementwise bitcast-convert
            if not (node.shape.is_scalar and node.operands[0].shape.is_scalar):
                raise _NotVectorisable(op.value)
            steps.append(_Step(node, _ELEMENTWISE, slots))
            steps[-1].rule = RULES[Opcode.BITCAST_CONVERT]
            continue
        elif op in _SCALAR_IDENTITIES:
            if not (node.shape.is_scalar and node.operands[0].shape.is_scalar):
                raise _NotVectorisable(op.value)
            kind = _IDENTITY
        elif op in _TABLE_OPS:
            if any(not leaf.is_scalar for _, leaf in node.shape.leaves()):
                raise _NotVectorisable(op.value)
            kind = _TABLE
        elif op in ELEMENTWISE or op is Opcode.BITCAST_CONVERT:
            if op is Opcode.BITCAST_CONVERT and (node.shape.element_type.bit_width
                                                 != node.operands[0].shape.element_type.bit_width):
                raise _NotVectorisable(op.value)
            kind = _ELEMENTWISE
        else:
            raise _NotVectorisable(op.value)
        if kind in (_TABLE, _ELEMENTWISE) and RULES.get(op) is None:
            raise _NotVectorisable(op.value)
        steps.append(_Step(node, kind, slots, callee))
    return steps


def _changes_type(node: HloInstruction) -> bool:
    return node.shape.is_array and node.shape.element_type != node.operands[0].shape.element_type


class ScalarFunction:
    """A scalar computation applied element by element to arrays.

    `fn(*args)` takes one array per parameter (all of one shape, or 0-d) and
    returns the computation's value at every index: an array of that shape, or
    a tuple of them for a tuple-shaped root.
    """

    def __init__(self, evaluator, computation: HloComputation):
        self.evaluator = evaluator
        self.computation = computation
        self._shapes: dict[tuple, Shape] = {}
        self._plans: dict[int, list[_Step]] = {}
        try:
            self._steps = _plan(operand_post_order(computation.root_instruction),
                                self._plans)
            self.vectorise = True
        except _NotVectorisable:
            self._steps = []
            self.vectorise = False

    def __call__(self, *args):
        args = [np.asarray(a) for a in args]
        batch = np.broadcast_shapes(*(a.shape for a in args)) if args else ()
        if self.vectorise:
            try:
                return _broadcast_value(self._run(self._steps, args, batch), batch)
            except Exception:  # a rule that needs scalars: go element by element
                self.vectorise = False
        return self._per_element(args, batch)

    def value_of(self, instruction: HloInstruction, args: dict[int, np.ndarray]):
        """The value `instruction` (one of this computation's, depending only on
        the parameters numbered in `args`) takes at every index of the arrays in
        `args`; None when its subgraph cannot run on whole arrays.

        Lets a caller evaluate part of a body, such as the key one side of a
        comparator computes from its parameter.
        """
        args = {k: np.asarray(v) for k, v in args.items()}
        batch = np.broadcast_shapes(*(a.shape for a in args.values())) if args else ()
        try:
            steps = _plan(operand_post_order(instruction), self._plans)
            numbered = [args.get(n) for n in range(max(args, default=-1) + 1)]
            return _broadcast_value(self._run(steps, numbered, batch), batch)
        except Exception:  # an op that needs scalars, or a parameter not in `args`
            return None

    def with_inputs(self, inputs: list[HloInstruction]):
        """A function taking one array per instruction of `inputs` and returning
        the root's value computed from them (what they depend on is not
        evaluated); None when the rest of the body cannot run on whole arrays or
        reads a parameter the inputs do not cover.

        With `value_of`, this splits a body: a sort computes the parts of its
        comparator that read one element once per element, not per comparison.
        """
        root = self.computation.root_instruction
        positions = {id(node): i for i, node in enumerate(inputs)}
        try:
            steps = _plan(operand_post_order(root, stop=positions), self._plans, positions)
        except Exception:  # an op that needs scalars, or a parameter read past the inputs
            return None

        def apply(*values):
            values = [np.asarray(v) for v in values]
            batch = np.broadcast_shapes(*(v.shape for v in values)) if values else ()
            return _broadcast_value(self._run(steps, values, batch), batch)

        return apply

    def _run(self, steps: list[_Step], args, batch):
        """The last step's value (the root's), every step run on `args`."""
        values: list = []
        for step in steps:
            kind = step.kind
            if kind == _ARGUMENT:
                value = args[step.index]
                if value is None:
                    raise _NotVectorisable("an argument without a value")
            else:
                operands = [values[i] for i in step.operands]
                if kind == _CALL:
                    value = self._run(step.callee, operands, batch)
                elif kind == _IDENTITY:
                    value = operands[0]
                elif kind == _TABLE:
                    value = step.rule(step.instruction, operands, self.evaluator)
                    if type(value) is not tuple:
                        value = np.asarray(value)
                else:
                    value = self._elementwise(step, operands, batch)
            values.append(value)
        return values[-1]

    def _elementwise(self, step: _Step, operands: list, batch):
        instruction = step.instruction
        batched = False
        for v in operands:
            if type(v) is tuple:
                raise _NotVectorisable(instruction.opcode.value)
            batched = batched or v.ndim > 0
        if batched:
            operands = [v if v.shape == batch else np.broadcast_to(v, batch) for v in operands]
            instruction = self._batched(step, batch)
        value = np.asarray(step.rule(instruction, operands, self.evaluator))
        if value.dtype != step.dtype or value.shape != (batch if batched else ()):
            raise _NotVectorisable(instruction.opcode.value)
        return value

    def _batched(self, step: _Step, batch) -> HloInstruction:
        """A stand-in for a step's scalar instruction with `batch` dims, so that its
        rule sees the shape of the arrays it is given (kept for the last batch)."""
        if step.twin is not None and step.twin.shape.dimensions == batch:
            return step.twin
        instruction = step.instruction
        key = (instruction.shape.element_type, batch)
        shape = self._shapes.get(key)
        if shape is None:
            if len(self._shapes) > 1024:  # many batch shapes (a sort's searches)
                self._shapes.clear()
            shape = self._shapes[key] = Shape.array(*key)
        twin = HloInstruction(instruction.opcode, shape, instruction.operands,
                              instruction.attrs, name=instruction.name)
        twin.parent = instruction.parent
        step.twin = twin
        return twin

    def _per_element(self, args, batch):
        shape = self.computation.root_instruction.shape
        leaves = shape.tuple_shapes if shape.is_tuple else (shape,)
        outs = [np.empty(batch, dtype=leaf.dtype) for leaf in leaves]
        full = [np.broadcast_to(a, batch) for a in args]
        for index in np.ndindex(*batch):
            value = self.evaluator.call(self.computation, [np.asarray(a[index]) for a in full])
            for out, v in zip(outs, value if shape.is_tuple else (value,)):
                out[index] = v
        return tuple(outs) if shape.is_tuple else outs[0]


def operand_post_order(root: HloInstruction, stop=()) -> list[HloInstruction]:
    """`root` and everything it depends on, each after its operands (root last);
    the operands of instructions in `stop` (ids) are not followed."""
    return ir.operand_post_order([root], stop)


def _broadcast_value(value, batch):
    if isinstance(value, tuple):
        return tuple(_broadcast_value(v, batch) for v in value)
    return np.array(np.broadcast_to(value, batch))


def as_list(value) -> list:
    """A tuple value's elements, or a single value as a one-element list."""
    return list(value) if isinstance(value, tuple) else [value]
