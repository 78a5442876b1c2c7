"""Shape rules of ops whose values come from outside the dataflow: parameters,
constants, custom-calls, random numbers, host transfers (infeed/outfeed,
send/recv) and the token plumbing (after-all, add-dependency).

Most of these declare their result; the rules check what XLA's verifier
checks about the declared shape and the operands.
"""

from __future__ import annotations

from xlapy.hlo.attributes import RandomDistribution
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.hlo.shape_inference.query import Query, array, rule, text

Op = Opcode
_U32 = array(PrimitiveType.U32, ())
_TOKEN = Shape.token()


@rule(Op.PARAMETER, Op.CONSTANT, Op.CUSTOM_CALL, Op.SCAN, Op.SHUFFLE, Op.COLLECTIVE_REDUCE,
      declared=True)
def _declared(q: Query) -> Shape:
    """Nothing implies these shapes: the declared shape is the answer."""
    return q.declared_shape("this op's result shape is given by").without_layout()


@rule(Op.AFTER_ALL)
def _after_all(q: Query) -> Shape:
    for i in range(len(q.operands)):
        q.token(i)
    return _TOKEN


@rule(Op.ADD_DEPENDENCY)
def _add_dependency(q: Query) -> Shape:
    """Forwards operand 0 once token operand 1 is ready."""
    q.count(2)
    q.token(1)
    return q.operands[0].without_layout()


@rule(Op.RNG, declared=True)
def _rng(q: Query) -> Shape:
    """Uniform in [a, b) or normal(mu=a, sigma=b), with the declared dimensions."""
    q.count(2)
    a = q.scalar(0, "a (operand 0)")
    b = q.scalar(1, "b (operand 1)")
    result = q.declared_array("the dimensions of rng's result are")
    if b.element_type is not a.element_type or result.element_type is not a.element_type:
        q.fail(f"operands {text(a)}, {text(b)} and the result {text(result)} must share one "
               f"element type")
    distribution = q.typed("distribution", RandomDistribution)
    element = a.element_type
    if distribution is RandomDistribution.NORMAL and not element.is_float:
        q.fail(f"rng_normal needs a floating-point type, got {element.value}")
    if not (element.is_float or element.is_integral or element.is_pred):
        q.fail(f"rng_uniform needs a floating-point, integral or pred type, got {element.value}")
    return array(element, result.dimensions)


@rule(Op.RNG_BIT_GENERATOR, declared=True)
def _rng_bit_generator(q: Query) -> Shape:
    """(new state, random bits); the new state has the operand state's shape."""
    q.count(1)
    state = q.array(0, "the state (operand 0)")
    declared = q.declared_shape("the shape of the random bits is given by")
    if declared.is_array:
        return declared.without_layout()
    if not declared.is_tuple or len(declared.tuple_shapes) != 2:
        q.fail(f"the result must be (state, bits), declared {text(declared)}")
    new_state, bits = declared.tuple_shapes
    if not new_state.compatible(state):
        q.fail(f"the declared new state {text(new_state)} must match the operand state "
               f"{text(state)}")
    if not bits.is_array:
        q.fail(f"the random bits must be an array, declared {text(bits)}")
    return declared.without_layout()


@rule(Op.RNG_GET_AND_UPDATE_STATE)
def _rng_get_and_update_state(q: Query) -> Shape:
    q.count(0)
    return array(PrimitiveType.U64, (2,))


@rule(Op.INFEED, declared=True)
def _infeed(q: Query) -> Shape:
    """(data, token); the data shape is only declared."""
    q.count(1)
    q.token(0)
    declared = q.declared_shape("the data shape of an infeed is given by")
    if not declared.is_tuple or len(declared.tuple_shapes) != 2:
        q.fail(f"the result must be (data, token), declared {text(declared)}")
    return Shape.tuple([declared.tuple_shapes[0].without_layout(), _TOKEN])


@rule(Op.OUTFEED)
def _outfeed(q: Query) -> Shape:
    q.count(2)
    q.token(1)
    return _TOKEN


@rule(Op.SEND)
def _send(q: Query) -> Shape:
    """(data, u32[] context, token)."""
    q.count(2)
    q.token(1)
    return Shape.tuple([q.operands[0].without_layout(), _U32, _TOKEN])


@rule(Op.SEND_DONE)
def _send_done(q: Query) -> Shape:
    q.count(1)
    q.tuple_operand(0, 1)
    return _TOKEN


@rule(Op.RECV, declared=True)
def _recv(q: Query) -> Shape:
    """(data, u32[] context, token); the data shape is only declared."""
    q.count(1)
    q.token(0)
    declared = q.declared_shape("the data shape of a recv is given by")
    if not declared.is_tuple or len(declared.tuple_shapes) != 3:
        q.fail(f"the result must be (data, u32[], token), declared {text(declared)}")
    return Shape.tuple([declared.tuple_shapes[0].without_layout(), _U32, _TOKEN])


@rule(Op.RECV_DONE)
def _recv_done(q: Query) -> Shape:
    """(data, token) from the recv's (data, context, token)."""
    q.count(1)
    state = q.tuple_operand(0, 1)
    return Shape.tuple([state.tuple_shapes[0].without_layout(), _TOKEN])
