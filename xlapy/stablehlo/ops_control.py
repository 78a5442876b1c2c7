"""Lowerings of the StableHLO ops that hold regions or call functions: reduce,
reduce_window, select_and_scatter, sort, scatter, map, while, case, if, and
func.call / composite.

Reducer-like regions become computations of their own (`ctx.region`). Control
flow regions may use outer values; `Emitter.captures` finds them and they
travel as extra loop state (while) or as the branch operand (case, if).
"""

from __future__ import annotations

from xlapy.hlo.builder_ops import make_window
from xlapy.hlo.ir import HloInstruction
from xlapy.stablehlo.attributes import Struct, Symbol
from xlapy.stablehlo.context import OpContext

H = HloInstruction


def _halves(ctx: OpContext, what: str) -> int:
    if not ctx.args or len(ctx.args) % 2:
        raise ctx.error(f"expects as many {what} as init values, got {len(ctx.args)} operands")
    return len(ctx.args) // 2


def reduce(ctx: OpContext) -> list[H]:
    n = _halves(ctx, "inputs")
    body = ctx.region(0, "region")
    result = ctx.b.reduce(ctx.args[:n], ctx.args[n:], ctx.ints("dimensions"), body)
    return ctx.unpack(result)


def reduce_window(ctx: OpContext) -> list[H]:
    n = _halves(ctx, "inputs")
    sizes = ctx.ints("window_dimensions")
    rank = len(sizes)
    window = make_window(sizes, ctx.ints("window_strides", (1,) * rank),
                         ctx.pairs("padding", rank), ctx.ints("base_dilations", (1,) * rank),
                         ctx.ints("window_dilations", (1,) * rank))
    body = ctx.region(0, "region")
    return ctx.unpack(ctx.b.reduce_window(ctx.args[:n], ctx.args[n:], window, body))


def select_and_scatter(ctx: OpContext) -> list[H]:
    ctx.arity(3)
    operand, source, init = ctx.args
    sizes = ctx.ints("window_dimensions")
    rank = len(sizes)
    window = make_window(sizes, ctx.ints("window_strides", (1,) * rank),
                         ctx.pairs("padding", rank))
    select = ctx.region(0, "select")
    scatter = ctx.region(1, "scatter")
    return [ctx.b.select_and_scatter(operand, select, window, source, init, scatter)]


def sort(ctx: OpContext) -> list[H]:
    if not ctx.args:
        raise ctx.error("expects at least one operand")
    dimension = ctx.int("dimension", -1)
    if dimension < 0:
        dimension += ctx.args[0].shape.rank
    comparator = ctx.region(0, "compare")
    result = ctx.b.sort(ctx.args, dimension, comparator, ctx.bool("is_stable"))
    return ctx.unpack(result)


_SCATTER_FIELDS = ("update_window_dims", "inserted_window_dims", "input_batching_dims",
                   "scatter_indices_batching_dims", "scatter_dims_to_operand_dims")


def scatter(ctx: OpContext) -> list[H]:
    if len(ctx.args) < 3 or len(ctx.args) % 2 == 0:
        raise ctx.error(f"expects N inputs, the indices and N updates, got {len(ctx.args)} "
                        "operands")
    n = (len(ctx.args) - 1) // 2
    numbers = ctx.attr("scatter_dimension_numbers")
    if not isinstance(numbers, Struct):
        raise ctx.error(f"scatter_dimension_numbers must be #stablehlo.scatter<...>, got "
                        f"{numbers!r}")
    dims = ctx.struct_ints(numbers, _SCATTER_FIELDS)
    update = ctx.region(0, "region")
    result = ctx.b.scatter(ctx.args[:n], ctx.args[n], ctx.args[n + 1:], update, **dims,
                           index_vector_dim=int(numbers.fields.get("index_vector_dim", 0)),
                           indices_are_sorted=ctx.bool("indices_are_sorted"),
                           unique_indices=ctx.bool("unique_indices"))
    return ctx.unpack(result)


def map_(ctx: OpContext) -> list[H]:
    body = ctx.region(0, "map")
    return [ctx.b.map(ctx.args, body, ctx.ints("dimensions", None) or None)]


# -- control flow -------------------------------------------------------------------------
def while_(ctx: OpContext) -> list[H]:
    """Loop state is a tuple: the loop variables, then the outer values the condition
    and body use, passed through unchanged."""
    op, b, emitter = ctx.op, ctx.b, ctx.emitter
    if len(op.regions) != 2:
        raise ctx.error(f"expects a cond and a body region, got {len(op.regions)}")
    captured = emitter.captures(op.regions, ctx.scope)
    state = [a.shape for a in ctx.args]
    cond, returned, _ = emitter.state_region(b, op.regions[0], "cond", state, captured)
    if len(returned) != 1:
        raise ctx.error("the cond region must return one boolean")
    cond_computation = cond.build(returned[0])
    body, returned, inside = emitter.state_region(b, op.regions[1], "body", state, captured)
    if len(returned) != len(state):
        raise ctx.error(f"the body returns {len(returned)} value(s) for {len(state)} loop "
                        "variables")
    body_computation = body.build(body.tuple(returned + inside))
    loop = b.while_loop(cond_computation, body_computation,
                        b.tuple(list(ctx.args) + captured.values))
    return [b.get_tuple_element(loop, i) for i in range(len(state))]


def _branches(ctx: OpContext, index: H) -> list[H]:
    """case and if: each region a branch taking the tuple of the outer values it uses."""
    op, b, emitter = ctx.op, ctx.b, ctx.emitter
    if not op.regions:
        raise ctx.error("expects at least one branch region")
    computations, operands = [], []
    for i, region in enumerate(op.regions):
        captured = emitter.captures([region], ctx.scope)
        branch, returned, _ = emitter.state_region(b, region, f"branch_{i}", [], captured)
        if len(returned) != op.result_count:
            raise ctx.error(f"branch {i} returns {len(returned)} value(s), the op has "
                            f"{op.result_count} result(s)")
        root = returned[0] if len(returned) == 1 else branch.tuple(returned)
        computations.append(branch.build(root))
        operands.append(b.tuple(captured.values))
    return ctx.unpack(b.conditional(index, operands, computations))


def case(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    return _branches(ctx, ctx.args[0])


def if_(ctx: OpContext) -> list[H]:
    ctx.arity(1)
    if len(ctx.op.regions) != 2:
        raise ctx.error("expects a true and a false region")
    return _branches(ctx, ctx.args[0])


def call(ctx: OpContext) -> list[H]:
    callee = ctx.attr("callee" if ctx.op.kind == "call" else "decomposition")
    if not isinstance(callee, Symbol):
        raise ctx.error(f"expected a function symbol (@name), got {callee!r}")
    computation = ctx.emitter.function(callee.name, ctx.op.pos)
    params = [p.shape for p in computation.parameters]
    if len(params) != len(ctx.args):
        raise ctx.error(f"@{callee.name} takes {len(params)} argument(s), got {len(ctx.args)}")
    return ctx.unpack(ctx.b.call(computation, ctx.args))


TABLE = {
    "reduce": reduce, "reduce_window": reduce_window, "select_and_scatter": select_and_scatter,
    "sort": sort, "scatter": scatter, "map": map_, "while": while_, "case": case, "if": if_,
    "call": call, "composite": call,
}
