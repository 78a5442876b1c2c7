"""Shape rules of structure and control flow: tuple, get-tuple-element, while,
conditional, call, fusion, opt-barrier, and the asynchronous wrappers
(async-start/update/done, copy-start/done).

Called computations are checked against their call sites the way XLA's
verifier does: parameter counts, each parameter compatible with the operand
it receives, and the results the op forwards.
"""

from __future__ import annotations

from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.hlo.shape_inference.query import Query, array, rule, text

Op = Opcode
_PRED = array(PrimitiveType.PRED, ())
_S32 = array(PrimitiveType.S32, ())
_U32 = array(PrimitiveType.U32, ())


@rule(Op.TUPLE)
def _tuple(q: Query) -> Shape:
    return Shape.tuple(s.without_layout() for s in q.operands)


@rule(Op.GET_TUPLE_ELEMENT)
def _get_tuple_element(q: Query) -> Shape:
    q.count(1)
    operand = q.operands[0]
    index = q.integer("index")
    if not operand.is_tuple:
        q.fail(f"operand 0 must be a tuple, but has shape {text(operand)}")
    if not 0 <= index < len(operand.tuple_shapes):
        q.fail(f"index={index} is out of range for the {len(operand.tuple_shapes)}-element "
               f"tuple {text(operand)}")
    return operand.tuple_shapes[index].without_layout()


@rule(Op.OPTIMIZATION_BARRIER)
def _opt_barrier(q: Query) -> Shape:
    q.count(1)
    return q.operands[0].without_layout()


def _check_call(q: Query, computation, role: str, operands: list[Shape]) -> Shape:
    """`computation` takes exactly `operands`; returns its result shape."""
    params, result = q.signature(computation, role)
    if len(params) != len(operands):
        q.fail(f"{role} computation {computation.name} takes {len(params)} parameter(s) "
               f"but is given {len(operands)} operand(s)")
    for i, (param, operand) in enumerate(zip(params, operands)):
        if not param.compatible(operand):
            q.fail(f"{role} computation {computation.name} parameter {i} has shape "
                   f"{text(param)} but receives {text(operand)}")
    return result


@rule(Op.WHILE)
def _while(q: Query) -> Shape:
    """The loop state keeps the init shape: condition (T) -> pred[], body (T) -> T."""
    q.count(1)
    init = q.operands[0]
    condition = q.computation("condition")
    body = q.computation("body")
    result = _check_call(q, condition, "condition", [init])
    if not result.compatible(_PRED):
        q.fail(f"condition computation {condition.name} must return pred[], "
               f"returns {text(result)}")
    result = _check_call(q, body, "body", [init])
    if not result.compatible(init):
        q.fail(f"body computation {body.name} returns {text(result)} but the loop state is "
               f"{text(init)}")
    return init.without_layout()


@rule(Op.CONDITIONAL)
def _conditional(q: Query) -> Shape:
    """Operand 0 picks a branch: pred[] (true/false computations) or s32[] (index into
    branch_computations); operand j+1 is branch j's argument."""
    q.count_at_least(1)
    selector = q.operands[0]
    if selector.compatible(_PRED):
        if "branch_computations" in q.attrs:
            branches = q.computations("branch_computations")
            if len(branches) != 2:
                q.fail(f"a pred[] selector needs 2 branch computations, got {len(branches)}")
        else:
            branches = (q.computation("true_computation"), q.computation("false_computation"))
    elif selector.compatible(_S32):
        branches = q.computations("branch_computations")
        if not branches:
            q.fail("branch_computations must not be empty")
    else:
        q.fail(f"the branch selector (operand 0) must be pred[] or s32[], got {text(selector)}")
    if len(q.operands) != len(branches) + 1:
        q.fail(f"{len(branches)} branches need {len(branches) + 1} operands (the selector and "
               f"one argument per branch), got {len(q.operands)}")
    results = [_check_call(q, branch, f"branch {j}", [q.operands[j + 1]])
               for j, branch in enumerate(branches)]
    for j, result in enumerate(results[1:], 1):
        if not result.compatible(results[0]):
            q.fail(f"branch {j} ({branches[j].name}) returns {text(result)} but branch 0 "
                   f"({branches[0].name}) returns {text(results[0])}")
    return results[0].without_layout()


@rule(Op.CALL)
def _call(q: Query) -> Shape:
    computation = q.computation("to_apply")
    return _check_call(q, computation, "to_apply", q.operands).without_layout()


@rule(Op.FUSION)
def _fusion(q: Query) -> Shape:
    """The fused computation's root; parameter i receives operand i."""
    computation = q.computation("calls")
    return _check_call(q, computation, "calls", q.operands).without_layout()


@rule(Op.ASYNC_START, declared=True)
def _async_start(q: Query) -> Shape:
    """((operands...), wrapped result, context...): the context is only declared."""
    declared = q.declared_shape("the context part of an async-start's shape is given")
    computation = q.computation("calls")
    result = _check_call(q, computation, "calls", q.operands)
    if not declared.is_tuple or len(declared.tuple_shapes) < 2:
        q.fail(f"the result must be a tuple (operands, result, context...), "
               f"declared {text(declared)}")
    expected = [Shape.tuple(q.operands), result]
    for k, (have, want) in enumerate(zip(declared.tuple_shapes, expected)):
        if not have.compatible(want):
            q.fail(f"element {k} of the declared shape is {text(have)}, expected {text(want)}")
    return declared.without_layout()


def _check_async_state(q: Query, state: Shape) -> None:
    if not state.is_tuple or len(state.tuple_shapes) < 2:
        q.fail(f"operand 0 must be an async state tuple (operands, result, context...), "
               f"got {text(state)}")
    if "calls" in q.attrs:
        params, result = q.signature(q.computation("calls"), "calls")
        if not state.tuple_shapes[1].compatible(result):
            q.fail(f"the async state holds result {text(state.tuple_shapes[1])} but the "
                   f"wrapped computation returns {text(result)}")


@rule(Op.ASYNC_UPDATE)
def _async_update(q: Query) -> Shape:
    q.count(1)
    _check_async_state(q, q.operands[0])
    return q.operands[0].without_layout()


@rule(Op.ASYNC_DONE)
def _async_done(q: Query) -> Shape:
    q.count(1)
    _check_async_state(q, q.operands[0])
    return q.operands[0].tuple_shapes[1].without_layout()


@rule(Op.COPY_START)
def _copy_start(q: Query) -> Shape:
    """(destination, source, u32[] context)."""
    q.count(1)
    operand = q.operands[0].without_layout()
    return Shape.tuple([operand, operand, _U32])


@rule(Op.COPY_DONE)
def _copy_done(q: Query) -> Shape:
    q.count(1)
    state = q.tuple_operand(0, 2)
    destination, source = state.tuple_shapes[:2]
    if not destination.compatible(source):
        q.fail(f"copy-start state has destination {text(destination)} and source "
               f"{text(source)} of different shapes")
    return destination.without_layout()
