"""The random programs' control flow: while loops, conditionals and calls whose
bodies are computations grown with the same random steps as the entry.

- `while`: a counter loop over a state tuple (counter, limit, then values of
  whatever types the pool holds — one value may appear twice, and the last
  ones sometimes sit in a nested tuple). The trip count comes from a
  parameter (clamped to 0..5, so a wide argument is 0 or 5 trips), from data
  (an integer value reduced and clamped), from an enclosing loop's counter,
  or is a constant; the condition sometimes also asks the data (an integer
  or boolean value of the state). The body's steps may use the counter as a
  dynamic start, and may hold a loop or a conditional of their own.
- `conditional`: a pred form, or an index form whose index (a parameter,
  data, a counter or a constant) is often outside [0, n), which runs the
  last branch. Each branch takes its own operand (an array or a tuple).
- `call`: a computation of one to three arguments giving one array or a tuple.

Nesting stops two computations deep, and a program opens at most a dozen
computations, so programs stay quick to compile.
"""

from __future__ import annotations

from xlapy.fuzz.hlo_program_builder import Program, Value, identity, is_int, leaves, shape_text

_MAX_DEPTH = 2
_MAX_COMPUTATIONS = 12


def _room(p: Program) -> bool:
    return p.depth < _MAX_DEPTH and not p.scope.scalar and p.numbered <= _MAX_COMPUTATIONS


def _like(p: Program, structure):
    """What a body gives back for `structure`: for each leaf, the newest value of
    its type and dimensions in the body."""
    if isinstance(structure, Value):
        return p.newest(structure.type, structure.dims)
    return [_like(p, s) for s in structure]


def _scalar_of(p: Program, v: Value, kind: str) -> Value:
    """v reduced to a scalar with `kind` (or v itself when it is one)."""
    if not v.dims:
        return v
    init = p.add(v.type, (), f"constant({identity(kind, v.type)})", pooled=False)
    dims = ",".join(map(str, range(len(v.dims))))
    return p.add(v.type, (), f"reduce({v.name}, {init.name}), dimensions={{{dims}}}, "
                             f"to_apply={p.reducer(kind, v.type)}", pooled=False)


def _integer_data(p: Program) -> Value | None:
    """A pooled integer value reduced to an s32 scalar (exact on every backend), if any."""
    ints = [q for q in p.pool if is_int(q.type)]
    if not ints:
        return None
    scalar = _scalar_of(p, p.choice(ints), "max")
    if scalar.type == "s32":
        return scalar
    return p.add("s32", (), f"convert({scalar.name})", pooled=False)


def _clamped(p: Program, v: Value, low: int, high: int) -> Value:
    lo, hi = p.constant("s32", low), p.constant("s32", high)
    return p.add("s32", (), f"clamp({lo.name}, {v.name}, {hi.name})", pooled=False)


def _trip_count(p: Program) -> Value:
    """A loop's limit: a parameter or data (clamped), an enclosing counter, a constant."""
    source = p.choice(("parameter", "parameter", "data", "counter", "constant"))
    if source == "counter" and p.scope.indices:
        return _clamped(p, p.choice(p.scope.indices), 0, 4)
    if source == "data":
        data = _integer_data(p)
        if data is not None:
            return _clamped(p, data, -1, 5)
    if source in ("parameter", "data", "counter") and p.scope.entry:
        return _clamped(p, p.parameter("s32", ()), 0, 5)
    return p.constant("s32", p.int(0, 4))


def while_(p: Program, v: Value) -> None:
    if not _room(p):
        return
    values = [v] + [p.choice(p.pool) for _ in range(p.int(0, 2))]
    if p.chance(0.15):
        values[-1:] = [v, v]   # the state holds one buffer twice
    counter = p.constant("s32", p.choice((0, 0, 0, -1, 1)))
    limit = _trip_count(p)
    if len(values) >= 3 and p.chance(0.4):
        values = values[:1] + [values[1:]]
    state = [counter, limit] + values

    body, (inside,) = p.open("body", [state])
    p.scope.indices.append(inside[0])
    p.grow(p.int(1, 5))
    one = p.constant("s32", 1)
    step = p.add("s32", (), f"add({inside[0].name}, {one.name})", pooled=False)
    p.close(body, [step, inside[1]] + [_like(p, s) for s in inside[2:]])

    condition, (inside,) = p.open("cond", [state])
    going = p.add("pred", (), f"compare({inside[0].name}, {inside[1].name}), direction=LT",
                  pooled=False)
    data = [q for q in leaves(inside[2:]) if is_int(q.type) or q.type == "pred"]
    if data and p.chance(0.3):
        going = _and_data(p, going, p.choice(data))
    p.close(condition, going)

    init = p.tuple_of(state)
    loop = p.emit(shape_text(state), f"while({init}), condition={condition}, body={body}")
    p.unpack_result(loop, state)


def _and_data(p: Program, going: Value, q: Value) -> Value:
    """`going` and a test of the data q (a pred reduced with or; an integer's maximum
    compared with a constant)."""
    if q.type == "pred":
        test = _scalar_of(p, q, p.choice(("or", "and")))
        if p.chance(0.5):
            test = p.add("pred", (), f"not({test.name})", pooled=False)
    else:
        top = _scalar_of(p, q, "max")
        bound = p.constant(q.type, p.small(q.type, -2, 6))
        test = p.add("pred", (), f"compare({top.name}, {bound.name}), "
                                 f"direction={p.choice(('LT', 'NE', 'GE'))}", pooled=False)
    return p.add("pred", (), f"and({going.name}, {test.name})", pooled=False)


def _predicate(p: Program) -> Value:
    """A pred[] to branch on: one the pool holds, a parameter or data compared with
    a constant, or a boolean array reduced."""
    scalars = [q for q in p.pool if q.type == "pred" and not q.dims]
    if scalars and p.chance(0.4):
        return p.choice(scalars)
    arrays = [q for q in p.pool if q.type == "pred" and q.dims]
    if arrays and p.chance(0.4):
        return _scalar_of(p, p.choice(arrays), p.choice(("or", "and")))
    number = _integer_data(p) if p.chance(0.5) else None
    if number is None:
        number = p.parameter("s32", ())
    bound = p.constant("s32", p.int(0, 5))
    return p.add("pred", (), f"compare({number.name}, {bound.name}), direction=LT",
                 pooled=False)


def _branch_index(p: Program) -> Value:
    """An s32[] to choose a branch: a parameter (0..7, or anywhere), data, a loop's
    counter or a constant, in range or not (out of range: the last branch)."""
    source = p.choice(("parameter", "parameter", "data", "counter", "constant"))
    if source == "counter" and p.scope.indices:
        return p.choice(p.scope.indices)
    if source == "data":
        data = _integer_data(p)
        if data is not None:
            return data
    if source != "constant" and p.scope.entry:
        return p.parameter("s32", ())
    return p.constant("s32", p.int(-1, 4))


def conditional(p: Program, v: Value) -> None:
    if not _room(p):
        return
    w = p.choice(p.pool)
    result = v if p.chance(0.5) else [v, w]
    pred_form = p.chance(0.4)
    selector = _predicate(p) if pred_form else _branch_index(p)
    count = 2 if pred_form else p.int(1, 4)
    operands, names = [], []
    for _ in range(count):
        operand = p.choice((v, [v, w], [p.choice(p.pool)], p.choice(p.pool)))
        operands.append(p.tuple_of(operand))
        branch, (inside,) = p.open("branch", [operand])
        p.grow(p.int(0, 4))
        p.close(branch, _like(p, result))
        names.append(branch)
    args = ", ".join([selector.name] + operands)
    if pred_form:
        text = (f"conditional({args}), true_computation={names[0]}, "
                f"false_computation={names[1]}")
    else:
        text = f"conditional({args}), branch_computations={{{', '.join(names)}}}"
    if isinstance(result, Value):
        p.add(result.type, result.dims, text)
    else:
        p.unpack_result(p.emit(shape_text(result), text), result)


def call(p: Program, v: Value) -> None:
    if not _room(p):
        return
    args = [v] + [p.choice(p.pool) for _ in range(p.int(0, 2))]
    callee, _ = p.open("call", args)
    p.grow(p.int(1, 5))
    outputs = list(dict.fromkeys([p.pool[-1]] + [p.choice(p.pool) for _ in range(p.int(0, 2))]))
    single = len(outputs) == 1 and p.chance(0.5)
    p.close(callee, outputs[0] if single else outputs)
    text = f"call({', '.join(a.name for a in args)}), to_apply={callee}"
    if single:
        p.add(outputs[0].type, outputs[0].dims, text)
    else:
        p.unpack_result(p.emit(shape_text(outputs), text), outputs)


STEPS = {"while": while_, "conditional": conditional, "call": call}
