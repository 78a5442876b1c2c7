"""Shape rules of reductions and sorts: reduce, reduce-window,
select-and-scatter, sort and topk; plus the two helpers other rules share,
the reducer signature check and the window output size.

A reducer over n inputs takes (acc_1..acc_n, x_1..x_n) scalars and returns
acc (n = 1) or the tuple (acc_1..acc_n); without mixed precision every acc_i
and x_i has input i's element type.
"""

from __future__ import annotations

from xlapy.hlo.attributes import Window
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.hlo.shape_inference.movement import check_dimension, check_unique
from xlapy.hlo.shape_inference.query import Query, array, rule, text

Op = Opcode


def check_reducer(q: Query, attr: str, element_types: list[PrimitiveType],
                  init_shapes: list[Shape] | None = None) -> list[PrimitiveType]:
    """Check computation `attr` reduces n = len(element_types) inputs; return the
    accumulator element types. `init_shapes` are the init values, if any."""
    computation = q.computation(attr)
    params, result = q.signature(computation, attr)
    n, name = len(element_types), computation.name
    if len(params) != 2 * n:
        q.fail(f"{attr} computation {name} must take {2 * n} parameters (an accumulator and "
               f"a value per input), but takes {len(params)}")
    if result.is_tuple:
        accumulators = list(result.tuple_shapes)
        if len(accumulators) != n:
            q.fail(f"{attr} computation {name} returns {len(accumulators)} values "
                   f"({text(result)}) for {n} input(s)")
    elif result.is_array and n == 1:
        accumulators = [result]
    else:
        q.fail(f"{attr} computation {name} must return "
               f"{'a scalar' if n == 1 else f'a tuple of {n} scalars'}, returns {text(result)}")
    for i, (acc, element) in enumerate(zip(accumulators, element_types)):
        if not acc.is_scalar:
            q.fail(f"{attr} computation {name} must return scalars, returns {text(result)}")
        expected = array(element, ())
        for role, param in (("accumulator", params[i]), ("value", params[n + i])):
            if not param.compatible(expected):
                q.fail(f"{attr} computation {name}: {role} parameter for input {i} is "
                       f"{text(param)}, expected {text(expected)}")
        if not acc.compatible(expected):
            q.fail(f"{attr} computation {name} returns {text(acc)} for input {i}, "
                   f"expected {text(expected)}")
        if init_shapes is not None and not init_shapes[i].compatible(expected):
            q.fail(f"init value {i} has shape {text(init_shapes[i])}, expected "
                   f"{text(expected)} like the reducer's accumulator")
    return [acc.element_type for acc in accumulators]


def _dilated(size: int, dilation: int) -> int:
    return 0 if size == 0 else (size - 1) * dilation + 1


def window_output(q: Query, base: tuple[int, ...], window: Window) -> list[int]:
    """Output size per dimension of sliding `window` over dims `base`."""
    if len(window.dimensions) != len(base):
        q.fail(f"window {window.to_text()} has {len(window.dimensions)} dimensions but "
               f"the windowed operand has {len(base)}")
    out = []
    for d, (w, size) in enumerate(zip(window.dimensions, base)):
        if w.size <= 0 or w.stride <= 0:
            q.fail(f"window dimension {d}: size {w.size} and stride {w.stride} must be positive")
        if w.base_dilation < 1 or w.window_dilation < 1:
            q.fail(f"window dimension {d}: dilations must be at least 1")
        padded = w.padding_low + _dilated(size, w.base_dilation) + w.padding_high
        if padded < 0:
            q.fail(f"window dimension {d}: padding {w.padding_low}_{w.padding_high} leaves "
                   f"a negative size {padded}")
        span = _dilated(w.size, w.window_dilation)
        out.append(0 if span > padded else (padded - span) // w.stride + 1)
    return out


def _split_inputs(q: Query) -> tuple[list[Shape], list[Shape]]:
    """Operands (in_1..in_n, init_1..init_n) with equal input dims and scalar inits."""
    if not q.operands or len(q.operands) % 2:
        q.fail(f"expects n inputs followed by n init values, got {len(q.operands)} operands")
    n = len(q.operands) // 2
    inputs = q.arrays(0, n)
    inits = [q.scalar(n + i, f"init value {i} (operand {n + i})") for i in range(n)]
    for i, shape in enumerate(inputs[1:], 1):
        if shape.dimensions != inputs[0].dimensions:
            q.fail(f"input {i} has shape {text(shape)} but input 0 has {text(inputs[0])}; "
                   f"all inputs need equal dimensions")
    return inputs, inits


def _results(types: list[PrimitiveType], dims, single: bool) -> Shape:
    if single:
        return array(types[0], dims)
    return Shape.tuple(array(t, dims) for t in types)


@rule(Op.REDUCE)
def _reduce(q: Query) -> Shape:
    inputs, inits = _split_inputs(q)
    dims = q.integers("dimensions")
    rank = inputs[0].rank
    for d in dims:
        check_dimension(q, d, rank, "reduced dimension")
    check_unique(q, dims, "dimensions")
    types = check_reducer(q, "to_apply", [s.element_type for s in inputs], inits)
    kept = [size for d, size in enumerate(inputs[0].dimensions) if d not in dims]
    return _results(types, kept, not q.attrs["to_apply"].root_instruction.shape.is_tuple)


@rule(Op.REDUCE_WINDOW)
def _reduce_window(q: Query) -> Shape:
    inputs, inits = _split_inputs(q)
    window = q.typed("window", Window)
    types = check_reducer(q, "to_apply", [s.element_type for s in inputs], inits)
    dims = window_output(q, inputs[0].dimensions, window)
    return _results(types, dims, not q.attrs["to_apply"].root_instruction.shape.is_tuple)


@rule(Op.SELECT_AND_SCATTER)
def _select_and_scatter(q: Query) -> Shape:
    """Operands: operand, source (one value per window), init value."""
    q.count(3)
    operand = q.array(0)
    source = q.array(1, "the source (operand 1)")
    init = q.scalar(2, "the init value (operand 2)")
    window = q.typed("window", Window)
    select = q.computation("select")
    params, result = q.signature(select, "select")
    element = array(operand.element_type, ())
    if len(params) != 2 or not all(p.compatible(element) for p in params):
        q.fail(f"select computation {select.name} must take two {text(element)} parameters, "
               f"takes ({', '.join(text(p) for p in params)})")
    if not result.compatible(array(PrimitiveType.PRED, ())):
        q.fail(f"select computation {select.name} must return pred[], returns {text(result)}")
    check_reducer(q, "scatter", [source.element_type], [init])
    expected = window_output(q, operand.dimensions, window)
    if list(source.dimensions) != expected or source.element_type is not operand.element_type:
        q.fail(f"the source {text(source)} must have the windowed operand's shape "
               f"{text(array(operand.element_type, expected))}")
    return operand.without_layout()


@rule(Op.SORT)
def _sort(q: Query) -> Shape:
    """Sorts n same-dimension operands along `dimensions={d}` with a comparator
    taking 2n scalars (two per operand) and returning pred[]."""
    q.count_at_least(1)
    operands = q.arrays()
    first = operands[0]
    for i, shape in enumerate(operands[1:], 1):
        if shape.dimensions != first.dimensions:
            q.fail(f"operand {i} has shape {text(shape)} but operand 0 has {text(first)}; "
                   f"sorted operands need equal dimensions")
    check_dimension(q, q.single_dimension(), first.rank, "sort dimension")
    comparator = q.computation("to_apply")
    params, result = q.signature(comparator, "to_apply")
    if len(params) != 2 * len(operands):
        q.fail(f"comparator {comparator.name} must take {2 * len(operands)} parameters "
               f"(two per operand), takes {len(params)}")
    for k, param in enumerate(params):
        expected = array(operands[k // 2].element_type, ())
        if not param.compatible(expected):
            q.fail(f"comparator {comparator.name} parameter {k} is {text(param)}, expected "
                   f"{text(expected)} (an element of operand {k // 2})")
    if not result.compatible(array(PrimitiveType.PRED, ())):
        q.fail(f"comparator {comparator.name} must return pred[], returns {text(result)}")
    if len(operands) == 1:
        return first.without_layout()
    return Shape.tuple(s.without_layout() for s in operands)


@rule(Op.TOPK)
def _topk(q: Query) -> Shape:
    """(the k largest or smallest values along the last dimension, their s32 indices)."""
    q.count(1)
    operand = q.array(0)
    k = q.integer("k")
    if not operand.rank:
        q.fail(f"the operand {text(operand)} must have rank >= 1")
    if not 0 <= k <= operand.dimensions[-1]:
        q.fail(f"k={k} must be within [0, {operand.dimensions[-1]}] (the last dimension "
               f"of {text(operand)})")
    dims = operand.dimensions[:-1] + (k,)
    return Shape.tuple([array(operand.element_type, dims), array(PrimitiveType.S32, dims)])

