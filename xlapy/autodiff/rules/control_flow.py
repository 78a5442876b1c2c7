"""`while` and `conditional`.

Reverse mode through a `while` needs its trip count N at trace time (a
fori_loop or scan with static bounds, XLA's `known_trip_count` annotation, or
a loop whose state is concrete outside jit), as in JAX. The forward pass then
runs the loop once more as a fori_loop that also stacks every iteration's
incoming carry in [N, ...] buffers (loop-invariant elements are not stacked);
the backward pass runs N iterations in reverse, each replaying the body at
its stored carry and pulling the carry's cotangent back through it. Memory:
N × the varying part of the carry; compute: the body twice plus its VJP.

Forward mode needs no trip count: the loop carries (value, tangent) pairs.
A `conditional` is differentiated branch-wise inside a conditional on the
same index; every branch returns cotangents for all branch operands (zeros
for the operands of the branches not taken).
"""

from __future__ import annotations

import numpy as np

from xlapy.autodiff import forward, reverse
from xlapy.autodiff.rules import jvp, vjp, vjp_forward
from xlapy.autodiff.rules._util import instantiate, zeros_like
from xlapy.autodiff.tape import (
    evaluate,
    is_differentiable_type,
    known_trip_count_config,
    known_value,
)
from xlapy.errors import CompileError
from xlapy.hlo.attributes import ComparisonDirection
from xlapy.hlo.evaluator.evaluator import Evaluator
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.lax import primitives as lax


# -- trip counts -------------------------------------------------------------------------
def trip_count(node) -> int | None:
    """The number of iterations of a `while` node, when it is known while tracing."""
    configured = known_trip_count_config(node.instruction)
    if configured is not None:
        return configured
    init = node.operands[0]
    counted = _counter_pattern(node.attr("condition"), node.attr("body"), init)
    if counted is not None:
        return counted
    values = [known_value(x) for x in init]
    if all(v is not None for v in values):  # concrete state: run the loop to count
        return _count_iterations(node, values)
    return None


def _counter_pattern(condition: HloComputation, body: HloComputation, init) -> int | None:
    """`i < n` in the condition, `i + 1` in the body, i and n known at the start."""
    root = condition.root_instruction
    if root.opcode is not Opcode.COMPARE:
        return None
    direction = root.attrs.get("direction")
    lhs, rhs = root.operands
    if direction is ComparisonDirection.GT:
        lhs, rhs = rhs, lhs
    elif direction is not ComparisonDirection.LT:
        return None
    index = _state_index(lhs)
    if index is None or not _increments(body, index):
        return None
    start = known_value(init[index])
    limit = _bound(rhs, body, init)
    if start is None or limit is None:
        return None
    return max(0, int(limit) - int(start))


def _state_index(instruction: HloInstruction) -> int | None:
    if (instruction.opcode is Opcode.GET_TUPLE_ELEMENT
            and instruction.operands[0].opcode is Opcode.PARAMETER):
        return instruction.attrs["index"]
    return None


def _bound(instruction: HloInstruction, body: HloComputation, init):
    if instruction.opcode is Opcode.CONSTANT:
        return instruction.literal
    index = _state_index(instruction)
    if index is not None and _invariant(body, index):
        return known_value(init[index])
    return None


def _invariant(body: HloComputation, index: int) -> bool:
    element = body.root_instruction.operands[index]
    return _state_index(element) == index


def _increments(body: HloComputation, index: int) -> bool:
    element = body.root_instruction.operands[index]
    if element.opcode is not Opcode.ADD:
        return False
    a, b = element.operands
    if _state_index(b) == index:
        a, b = b, a
    return (_state_index(a) == index and b.opcode is Opcode.CONSTANT
            and np.asarray(b.literal).shape == () and int(b.literal) == 1)


def _count_iterations(node, values) -> int:
    evaluator = Evaluator()
    condition, body = node.attr("condition"), node.attr("body")
    state, count = tuple(values), 0
    while bool(evaluator.call(condition, [state])):
        state = evaluator.call(body, [state])
        count += 1
    return count


# -- reverse mode ----------------------------------------------------------------------------
@vjp_forward(Opcode.WHILE)
def _while_forward(node):
    n = trip_count(node)
    if n is None:
        raise CompileError(
            f"reverse-mode differentiation of {node.instruction.name} needs its trip count "
            "at trace time: use fori_loop with static bounds or scan (a while_loop whose "
            "condition depends on traced values cannot be reversed)")
    body = node.attr("body")
    init = tuple(node.operands[0])
    if n == 0:  # the loop never runs: the carry passes through unchanged
        return init, (0, [], ())
    varying = [i for i in range(len(init)) if not _invariant(body, i)]
    stacks0 = tuple(lax.broadcast_in_dim(zeros_like(init[i]), (n, *init[i].shape),
                                         tuple(range(1, 1 + len(init[i].shape))))
                    for i in varying)

    def step(i, state):
        carry, stacks = state
        stacks = tuple(lax.dynamic_update_index_in_dim(s, carry[k], i, 0)
                       for s, k in zip(stacks, varying))
        return tuple(evaluate(body, [carry])), stacks

    carry, stacks = lax.fori_loop(0, n, step, (init, stacks0))
    return tuple(carry), (n, varying, stacks)


@vjp(Opcode.WHILE)
def _while_vjp(node, ct):
    n, varying, stacks = node.residuals
    body = node.attr("body")
    init = tuple(node.operands[0])
    floats = [i for i, x in enumerate(init) if is_differentiable_type(x.dtype)]
    ct = instantiate(ct, node.result)
    ct0 = tuple(ct[i] for i in floats)
    if n == 0:
        return [tuple(ct[i] if i in floats else None for i in range(len(init)))]

    def step(j, cts):
        i = lax.sub(lax.convert_element_type(n - 1, j.dtype), j)
        carry = list(init)
        for s, k in zip(stacks, varying):
            carry[k] = lax.dynamic_index_in_dim(s, i, 0, keepdims=False)
        _, pullback = reverse.vjp_computation(body, [tuple(carry)])
        seed = [None] * len(init)
        for c, k in zip(cts, floats):
            seed[k] = c
        (ct_carry,) = pullback([tuple(seed)])
        return tuple(instantiate(ct_carry[k], init[k]) for k in floats)

    cts = lax.fori_loop(0, n, step, ct0)
    out = [None] * len(init)
    for c, k in zip(cts, floats):
        out[k] = c
    return [tuple(out)]


@vjp(Opcode.CONDITIONAL)
def _conditional_vjp(node, ct):
    index, branches = _branch_index(node)
    operands = tuple(node.operands[1:])
    ct = instantiate(ct, node.result)

    def branch_vjp(b):
        def run(ops, ct):
            _, pullback = reverse.vjp_computation(branches[b], [ops[b]])
            (ct_b,) = pullback([ct])
            return tuple(instantiate(ct_b, op) if k == b else zeros_like(op)
                         for k, op in enumerate(ops))
        return run

    cts = lax.switch(index, [branch_vjp(b) for b in range(len(branches))], operands, ct)
    return [None, *cts]


def _branch_index(node):
    """(an s32 branch index, the branch computations in index order)."""
    selector = node.operands[0]
    branches = node.attr("branch_computations")
    if branches is None:  # the predicate form: operand 1 is the true branch's
        branches = (node.attr("true_computation"), node.attr("false_computation"))
        selector = lax.convert_element_type(lax.not_(selector), np.int32)
    return selector, list(branches)


# -- forward mode ----------------------------------------------------------------------------
@jvp(Opcode.WHILE, joint=True)
def _while_jvp(node, tangents):
    condition, body = node.attr("condition"), node.attr("body")
    init = tuple(node.operands[0])
    floats = [i for i, x in enumerate(init) if is_differentiable_type(x.dtype)]
    t0 = instantiate(tangents[0], init)
    t0 = tuple(t0[i] for i in floats)

    def cond(state):
        return evaluate(condition, [state[0]])

    def step(state):
        carry, tans = state
        full = [None] * len(carry)
        for t, k in zip(tans, floats):
            full[k] = t
        out, out_t = forward.jvp_computation(body, [tuple(carry)], [tuple(full)])
        out_t = instantiate(out_t, out)
        return tuple(out), tuple(out_t[k] for k in floats)

    carry, tans = lax.while_loop(cond, step, (init, t0))
    full = [None] * len(init)
    for t, k in zip(tans, floats):
        full[k] = t
    return tuple(carry), tuple(full)


@jvp(Opcode.CONDITIONAL, joint=True)
def _conditional_jvp(node, tangents):
    index, branches = _branch_index(node)
    operands = tuple(node.operands[1:])
    tans = tuple(instantiate(t, op) for t, op in zip(tangents[1:], operands))

    def branch_jvp(b):
        def run(ops, tans):
            out, out_t = forward.jvp_computation(branches[b], [ops[b]], [tans[b]])
            return out, instantiate(out_t, out)
        return run

    return lax.switch(index, [branch_jvp(b) for b in range(len(branches))], operands, tans)
