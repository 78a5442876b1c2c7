"""The random programs' steps for ops that are not one loop over their output,
or that reinterpret bits: sort (several operands, stable or not, total-order
and lexicographic comparators), gather and scatter (indices of several
types, out of range as often as not), reduce-window and select-and-scatter,
small convolutions, map, reduce-precision, bitcast-convert, stochastic-convert,
rng-bit-generator (every algorithm, u32/u64 states and outputs), copies into
another layout, and opt-barrier and add-dependency.

Discrete results must not depend on rounding: sort keys and bitcasts of
floats come from the entry's parameters or from integers, and a comparator
on floats is a total order (`type=TOTALORDER`), since under a plain `LT` a
NaN breaks the strict weak order a sort needs. Scatters that overwrite use
a single index (duplicates would make the order of writes matter).
The old `rng` op is left out: its numbers are the backend's own (XLA does
not fix them), so no two backends agree on them.
"""

from __future__ import annotations

from xlapy.fuzz.f32_programs import _dims
from xlapy.fuzz.hlo_program_builder import (
    FLOATS,
    INTS,
    WIDTH,
    Program,
    Value,
    identity,
    is_complex,
    is_float,
    is_int,
    shape_text,
)
from xlapy.fuzz.hlo_programs_steps import ELEMENTWISE_KINDS
from xlapy.hlo.attributes import Window, WindowDimension

INDEX_TYPES = ("s32", "s32", "s64", "u32", "s8", "u8", "s16", "u64")


def _braces(values) -> str:
    return "{" + ",".join(map(str, values)) + "}"


# -- sort ----------------------------------------------------------------------------------
def _comparator(p: Program, types: list[str], keys: int) -> str:
    """A sort comparator over operands of `types` ordering by the first `keys` of them,
    lexicographically, ascending or descending: (a0 < b0) or (a0 == b0 and (a1 < b1 ...))."""
    scalars = [Value("", t, ()) for t in types for _ in "ab"]
    name, params = p.open("compare", scalars)
    direction = p.choice(("LT", "GT"))
    result = None
    for k in reversed(range(keys)):
        a, b = params[2 * k], params[2 * k + 1]
        total = ", type=TOTALORDER" if is_float(a.type) else ""
        before = p.add("pred", (), f"compare({a.name}, {b.name}), direction={direction}{total}",
                       pooled=False)
        if result is None:
            result = before
            continue
        same = p.add("pred", (), f"compare({a.name}, {b.name}), direction=EQ{total}",
                     pooled=False)
        tie = p.add("pred", (), f"and({same.name}, {result.name})", pooled=False)
        result = p.add("pred", (), f"or({before.name}, {tie.name})", pooled=False)
    p.close(name, result)
    return name


def sort(p: Program, v: Value) -> None:
    """Sort along one dimension: keys first (v, maybe a second key), then payloads of
    any type (an iota makes it an argsort)."""
    if not v.dims or is_complex(v.type) or (is_float(v.type) and not _exact_key(p, v)):
        return
    dim = p.int(0, len(v.dims) - 1)
    operands = [v]
    second = [q for q in p.pool if q.dims == v.dims and q is not v and
              (is_int(q.type) or q.type == "pred" or (is_float(q.type) and _exact_key(p, q)))]
    keys = 1
    if second and p.chance(0.3):
        operands.append(p.choice(second))
        keys = 2
    if p.chance(0.5):
        operands.append(p.add("s32", v.dims, f"iota(), iota_dimension={dim}", pooled=False))
    payloads = [q for q in p.pool if q.dims == v.dims]
    for _ in range(p.int(0, 1)):
        operands.append(p.choice(payloads))
    comparator = _comparator(p, [o.type for o in operands], keys)
    stable = "true" if len(operands) > 1 or p.chance(0.5) else "false"
    names = ", ".join(o.name for o in operands)
    attrs = f"dimensions={{{dim}}}, is_stable={stable}, to_apply={comparator}"
    if len(operands) == 1:
        p.add(v.type, v.dims, f"sort({names}), {attrs}")
        return
    name = p.emit(shape_text(operands), f"sort({names}), {attrs}")
    p.unpack_result(name, operands)


def _exact_key(p: Program, v: Value) -> bool:
    """Whether float v may order a sort: an entry parameter (its values are the same
    on every backend, where a computed one may differ in its last bit)."""
    return p.is_entry_parameter(v)


# -- gather and scatter ----------------------------------------------------------------------
def _indices(p: Program, batch: tuple, count: int) -> tuple[Value, int]:
    """Start indices for `batch` index vectors of `count` components: (the value, its
    index_vector_dim). From a parameter (0..7, or anywhere in the type's range) or a
    fresh value in a nested computation."""
    t = p.choice(INDEX_TYPES)
    implicit = count == 1 and p.chance(0.5)
    if implicit:
        dims = batch
    else:
        dims = batch + (count,)
    return p.parameter(t, dims), len(batch)


def _batching(p: Program, v: Value) -> list[int]:
    """An operand dimension paired with a dimension of the indices (a batching
    dimension: each index vector reads its own slice of it), or none."""
    return [p.int(0, len(v.dims) - 1)] if len(v.dims) >= 2 and p.chance(0.25) else []


def _batch(p: Program, v: Value, batching: list[int]) -> tuple[tuple, list[int]]:
    """The indices' batch dimensions (the paired one, of the operand's size, among
    them) and where the paired one is."""
    batch = [p.int(1, 3) for _ in range(p.int(0, 2))]
    paired = []
    if batching:
        at = p.int(0, len(batch))
        batch.insert(at, v.dims[batching[0]])
        paired = [at]
    return tuple(batch), paired


def _batching_attrs(operand: str, indices: str, batching: list[int], paired: list[int]) -> str:
    if not batching:
        return ""
    return f", {operand}={_braces(batching)}, {indices}={_braces(paired)}"


def _interleave(batch: tuple, window: list, window_dims: list[int]) -> list[int]:
    """Dimensions with the window's sizes at `window_dims` and the batch's elsewhere."""
    rest, dims = iter(batch), []
    for j in range(len(batch) + len(window)):
        dims.append(window[window_dims.index(j)] if j in window_dims else next(rest))
    return dims


def gather(p: Program, v: Value) -> None:
    if not v.dims or min(v.dims) == 0 or p.scope.scalar:
        return
    rank = len(v.dims)
    batching = _batching(p, v)
    free = [d for d in range(rank) if d not in batching]
    index_map = [free[int(i)] for i in p.rng.permutation(len(free))[:p.int(1, len(free))]]
    collapsed = sorted(d for d in index_map if p.chance(0.5))
    sizes = [1 if d in collapsed or d in batching else p.int(1, v.dims[d]) for d in range(rank)]
    kept = [d for d in range(rank) if d not in collapsed and d not in batching]
    batch, paired = _batch(p, v, batching)
    indices, vector_dim = _indices(p, batch, len(index_map))
    offset_dims = sorted(int(d) for d in p.rng.permutation(len(batch) + len(kept))[:len(kept)])
    out = _interleave(batch, [sizes[d] for d in kept], offset_dims)
    p.add(v.type, out, f"gather({v.name}, {indices.name}), offset_dims={_braces(offset_dims)}, "
                       f"collapsed_slice_dims={_braces(collapsed)}, "
                       f"start_index_map={_braces(index_map)}"
                       + _batching_attrs("operand_batching_dims",
                                         "start_indices_batching_dims", batching, paired)
                       + f", index_vector_dim={vector_dim}, slice_sizes={_braces(sizes)}")


_OPS = {"add": "add", "max": "maximum", "min": "minimum", "mul": "multiply", "and": "and",
        "or": "or"}


def _combining_kind(p: Program, t: str, replace: bool = False) -> str:
    if t == "pred":
        kinds = ["or", "and"]
    elif is_complex(t):
        kinds = ["add", "add"]
    else:
        kinds = ["add", "add", "max", "min"]
    return p.choice(kinds + (["replace"] if replace else []))


def _pair_computation(p: Program, kind: str, values: list[Value], kinds: list[str]) -> str:
    """(a0..an, b0..bn) -> (op0(a0, b0), ..., opn(an, bn)): a variadic reducer or
    combiner that works on each operand apart ('replace' takes b)."""
    if len(values) == 1 and kinds[0] != "replace":
        return p.reducer(kinds[0], values[0].type)
    scalars = [Value("", v.type, ()) for v in values]
    name, params = p.open(kind, scalars + scalars)
    n = len(values)
    results = []
    for k, (a, b) in enumerate(zip(params[:n], params[n:])):
        if kinds[k] == "replace":
            results.append(b)
        else:
            results.append(p.add(a.type, (), f"{_OPS[kinds[k]]}({a.name}, {b.name})",
                                 pooled=False))
    p.close(name, results[0] if n == 1 else results)
    return name


def scatter(p: Program, v: Value) -> None:
    """scatter into v (and, now and then, a second operand of v's dimensions, each
    combined on its own), windows out of range skipped; overwriting only with a single
    index (duplicates would make the order of writes matter)."""
    if not v.dims or min(v.dims) == 0 or p.scope.scalar:
        return
    rank = len(v.dims)
    operands = [v] + ([p.choice([q for q in p.pool if q.dims == v.dims])]
                      if p.chance(0.25) else [])
    kinds = [_combining_kind(p, o.type, replace=True) for o in operands]
    batching = _batching(p, v)
    free = [d for d in range(rank) if d not in batching]
    index_map = [free[int(i)] for i in p.rng.permutation(len(free))[:p.int(1, len(free))]]
    inserted = sorted(d for d in index_map if p.chance(0.5))
    windowed = [d for d in range(rank) if d not in inserted and d not in batching]
    window = [p.int(1, v.dims[d]) for d in windowed]
    if "replace" in kinds:
        batching, batch, paired = [], (), []
        windowed = [d for d in range(rank) if d not in inserted]
        window = [p.int(1, v.dims[d]) for d in windowed]
    else:
        batch, paired = _batch(p, v, batching)
    indices, vector_dim = _indices(p, batch, len(index_map))
    window_dims = sorted(int(d) for d in
                         p.rng.permutation(len(batch) + len(windowed))[:len(windowed)])
    dims = tuple(_interleave(batch, window, window_dims))
    updates = []
    for o in operands:
        same = [q for q in p.pool if q.type == o.type and q.dims == dims]
        updates.append(p.choice(same) if same and p.chance(0.5) else p.parameter(o.type, dims))
    combiner = _pair_computation(p, "combine", operands, kinds)
    names = ", ".join([o.name for o in operands] + [indices.name] + [u.name for u in updates])
    text = (f"scatter({names}), update_window_dims={_braces(window_dims)}, "
            f"inserted_window_dims={_braces(inserted)}, "
            f"scatter_dims_to_operand_dims={_braces(index_map)}"
            + _batching_attrs("input_batching_dims", "scatter_indices_batching_dims",
                              batching, paired)
            + f", index_vector_dim={vector_dim}, to_apply={combiner}")
    if len(operands) == 1:
        p.add(v.type, v.dims, text)
    else:
        p.unpack_result(p.emit(shape_text(operands), text), operands)


def reduce_pair(p: Program, v: Value) -> None:
    """A variadic reduce of v and another value of its dimensions, each with its own
    reducer, over some dimensions."""
    others = [q for q in p.pool if q.dims == v.dims and q is not v]
    if not v.dims or not others or p.scope.scalar:
        return
    operands = [v, p.choice(others)]
    kinds = [_combining_kind(p, o.type) for o in operands]
    rank = len(v.dims)
    dims = sorted(set(int(d) for d in p.rng.integers(rank, size=p.int(1, 2))))
    inits = [p.add(o.type, (), f"constant({identity(k, o.type)})", pooled=False)
             for o, k in zip(operands, kinds)]
    reducer = _pair_computation(p, "reducer", operands, kinds)
    out = tuple(d for i, d in enumerate(v.dims) if i not in dims)
    results = [Value("", o.type, out) for o in operands]
    names = ", ".join(q.name for q in operands + inits)
    p.unpack_result(p.emit(shape_text(results), f"reduce({names}), dimensions={_braces(dims)}, "
                                                 f"to_apply={reducer}"), results)


# -- windows --------------------------------------------------------------------------------
def _window_size(n: int, d: WindowDimension) -> int:
    dilated = (n - 1) * d.base_dilation + 1 if n else 0
    padded = dilated + d.padding_low + d.padding_high
    extent = (d.size - 1) * d.window_dilation + 1
    return 0 if padded < extent else (padded - extent) // d.stride + 1


def _window(p: Program, dims, dilations: bool) -> Window:
    out = []
    for _ in dims:
        dilate = dilations and p.chance(0.2)
        out.append(WindowDimension(
            size=p.choice((1, 1, 2, 3)), stride=p.int(1, 2), padding_low=p.int(0, 1),
            padding_high=p.int(0, 1), window_dilation=2 if dilate and p.chance(0.5) else 1,
            base_dilation=2 if dilate and p.chance(0.5) else 1))
    return Window(tuple(out))


def reduce_window(p: Program, v: Value) -> None:
    """reduce-window of v (and, now and then, a second value of its dimensions, each
    with its own reducer), with strides, padding and dilations."""
    if not v.dims or p.scope.scalar:
        return
    window = _window(p, v.dims, dilations=True)
    operands = [v] + ([p.choice([q for q in p.pool if q.dims == v.dims])]
                      if p.chance(0.2) else [])
    kinds = [_combining_kind(p, o.type) for o in operands]
    if len(operands) == 1 and is_complex(v.type) and p.chance(0.5):
        kinds = ["mul"]
    out = tuple(_window_size(n, d) for n, d in zip(v.dims, window.dimensions))
    inits = [p.add(o.type, (), f"constant({identity(k, o.type)})", pooled=False)
             for o, k in zip(operands, kinds)]
    reducer = _pair_computation(p, "reducer", operands, kinds)
    names = ", ".join(q.name for q in operands + inits)
    text = f"reduce-window({names}), window={window.to_text()}, to_apply={reducer}"
    if len(operands) == 1:
        p.add(v.type, out, text)
        return
    results = [Value("", o.type, out) for o in operands]
    p.unpack_result(p.emit(shape_text(results), text), results)


def _select_computation(p: Program, t: str) -> str:
    name, (a, b) = p.open("select", [Value("", t, ()), Value("", t, ())])
    direction = p.choice(("GE", "GT", "LE", "LT"))
    total = ", type=TOTALORDER" if is_float(t) else ""
    p.close(name, p.add("pred", (), f"compare({a.name}, {b.name}), direction={direction}"
                                    f"{total}", pooled=False))
    return name


def select_and_scatter(p: Program, v: Value) -> None:
    if not v.dims or v.type == "pred" or is_complex(v.type) or p.scope.scalar:
        return
    if is_float(v.type) and not _exact_key(p, v):
        return
    window = _window(p, v.dims, dilations=False)
    source_dims = [_window_size(n, d) for n, d in zip(v.dims, window.dimensions)]
    same = [q for q in p.pool if q.type == v.type and q.dims == tuple(source_dims)]
    source = p.choice(same) if same and p.chance(0.5) else p.parameter(v.type, source_dims)
    select = _select_computation(p, v.type)
    init = p.constant(v.type, 0)
    p.add(v.type, v.dims, f"select-and-scatter({v.name}, {source.name}, {init.name}), "
                          f"window={window.to_text()}, select={select}, "
                          f"scatter={p.reducer('add', v.type)}")


# -- convolution ----------------------------------------------------------------------------
def convolution(p: Program, v: Value) -> None:
    """v (rank 3 or 4) as the input of a small convolution with random dimension labels."""
    if len(v.dims) not in (3, 4) or v.type == "pred" or min(v.dims) == 0 or p.scope.scalar:
        return
    spatial = len(v.dims) - 2
    letters = ["b", "f"] + [str(i) for i in range(spatial)]
    lhs = "".join(letters[int(i)] for i in p.rng.permutation(len(letters)))
    kernel_letters = ["i", "o"] + [str(i) for i in range(spatial)]
    rhs = "".join(kernel_letters[int(i)] for i in p.rng.permutation(len(kernel_letters)))
    out_labels = "".join(letters[int(i)] for i in p.rng.permutation(len(letters)))
    size = dict(zip(lhs, v.dims))
    groups = p.choice([g for g in (1, 2, 3) if size["f"] % g == 0])
    batch_groups = 1
    if groups == 1 and p.chance(0.3):
        batch_groups = p.choice([g for g in (1, 2, 3) if size["b"] % g == 0])
    outputs = groups * batch_groups * p.int(1, 3)
    window = []
    for i in range(spatial):
        n = size[str(i)]
        window.append(WindowDimension(size=p.int(1, min(3, n + 1)), stride=p.int(1, 2),
                                      padding_low=p.int(0, 1), padding_high=p.int(0, 1),
                                      window_dilation=p.choice((1, 1, 2)),
                                      base_dilation=p.choice((1, 1, 2))))
    window = [d if _window_size(size[str(i)], d) > 0 else
              WindowDimension(1, d.stride, d.padding_low, d.padding_high)
              for i, d in enumerate(window)]
    kernel_size = {"i": size["f"] // groups, "o": outputs}
    kernel_size.update({str(i): d.size for i, d in enumerate(window)})
    kernel = p.parameter(v.type, [kernel_size[c] for c in rhs])
    result = {"b": size["b"] // batch_groups, "f": outputs}
    result.update({str(i): _window_size(size[str(i)], d) for i, d in enumerate(window)})
    extra = f", feature_group_count={groups}" if groups > 1 else ""
    extra += f", batch_group_count={batch_groups}" if batch_groups > 1 else ""
    p.add(v.type, [result[c] for c in out_labels],
          f"convolution({v.name}, {kernel.name}), window={Window(tuple(window)).to_text()}, "
          f"dim_labels={lhs}_{rhs}->{out_labels}{extra}")


# -- map, reduce-precision, bitcast-convert ----------------------------------------------------
def map_(p: Program, v: Value) -> None:
    """map over v (and a partner) with a random scalar computation of elementwise steps."""
    if p.scope.scalar or p.depth >= 2:
        return
    operands = [v] + ([p.partner(v)] if p.chance(0.5) else [])
    scalars = [Value("", o.type, ()) for o in operands]
    name, _ = p.open("map", scalars, scalar=True)
    p.grow(p.int(1, 4), ELEMENTWISE_KINDS)
    root = p.choice([q for q in p.pool if q.dims == ()][-3:])
    p.close(name, root)
    dims = _braces(range(len(v.dims)))
    names = ", ".join(o.name for o in operands)
    p.add(root.type, v.dims, f"map({names}), dimensions={dims}, to_apply={name}")


_PRECISION = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52)}


def reduce_precision(p: Program, v: Value) -> None:
    if v.type not in _PRECISION:
        return
    exponent, mantissa = _PRECISION[v.type]
    p.add(v.type, v.dims, f"reduce-precision({v.name}), exponent_bits={p.int(1, exponent)}, "
                          f"mantissa_bits={p.int(0, mantissa)}")


_BIT_TYPES = tuple(FLOATS) + tuple(INTS)


def bitcast_convert(p: Program, v: Value) -> None:
    """v's bits as another type of the same width, or of a wider or narrower one (a
    minor dimension of the width ratio appears or goes). Floats only from the entry's
    parameters: a computed float may differ from the interpreter's in its last bit."""
    if v.type == "pred" or is_complex(v.type) or (is_float(v.type) and not _exact_key(p, v)):
        return
    width = WIDTH[v.type]
    target = p.choice([t for t in _BIT_TYPES if t != v.type])
    ratio = WIDTH[target] / width
    if ratio == 1:
        dims = v.dims
    elif ratio < 1:
        dims = v.dims + (int(1 / ratio),)
    elif v.dims and v.dims[-1] == ratio:
        dims = v.dims[:-1]
    else:
        target, dims = p.choice([t for t in _BIT_TYPES if WIDTH[t] == width]), v.dims
    if target == v.type:
        return
    p.add(target, dims, f"bitcast-convert({v.name})")


def stochastic_convert(p: Program, v: Value) -> None:
    """A float parameter to a signed integer, rounded up or down by random bits of its
    width (from the pool, a generator or a parameter)."""
    if not is_float(v.type) or not _exact_key(p, v):
        return
    bits = f"u{WIDTH[v.type]}"
    same = [q for q in p.pool if q.type == bits and q.dims == v.dims]
    random = p.choice(same) if same and p.chance(0.5) else p.parameter(bits, v.dims)
    target = p.choice(("s8", "s16", "s32", "s64"))
    p.add(target, v.dims, f"stochastic-convert({v.name}, {random.name})")


# -- random bits, layouts -------------------------------------------------------------------
_ALGORITHMS = {"rng_default": (2, 3), "rng_three_fry": (2,), "rng_philox": (2, 3)}
_RANDOM_TYPES = ("u32", "u32", "u64", "u64", "s32", "s64", "u8", "u16", "f32")


def rng_bit_generator(p: Program, v: Value) -> None:
    """Random bits of v's shape (or a small one) from a u64 state: a state made
    earlier (so states chain, and loops carry them) or a new parameter."""
    if p.scope.scalar:
        return
    algorithm = p.choice(tuple(_ALGORITHMS))
    sizes = _ALGORITHMS[algorithm]
    states = [q for q in p.pool if q.type == "u64" and len(q.dims) == 1 and q.dims[0] in sizes]
    state = p.choice(states) if states and p.chance(0.7) else \
        p.parameter("u64", (p.choice(sizes),))
    t = p.choice(_RANDOM_TYPES)
    dims = v.dims if v.dims and p.chance(0.5) else tuple(p.int(1, 5) for _ in range(p.int(1, 2)))
    name = p.emit(f"({_dims(state.dims, 'u64')}, {_dims(dims, t)})",
                  f"rng-bit-generator({state.name}), algorithm={algorithm}")
    p.unpack_result(name, [state, Value("", t, tuple(dims))])


def copy_layout(p: Program, v: Value) -> None:
    """A copy of v into a non-default layout (a physical transpose)."""
    if len(v.dims) < 2:
        return
    p.add(v.type, v.dims, f"copy({v.name})", layout=p.layout(len(v.dims)))


def barrier(p: Program, v: Value) -> None:
    """v (and another value) through an optimization barrier, or v made to wait for a
    token: ops that order side effects and must pass their operands on unchanged."""
    if p.chance(0.5):
        w = p.choice(p.pool)
        both = p.emit(shape_text([v, w]), f"tuple({v.name}, {w.name})")
        kept = p.emit(shape_text([v, w]), f"opt-barrier({both})")
        p.unpack_result(kept, [v, w])
        return
    token = p.emit("token[]", "after-all()")
    p.add(v.type, v.dims, f"add-dependency({v.name}, {token})")


STEPS = {
    "sort": sort, "gather": gather, "scatter": scatter, "reduce_window": reduce_window,
    "reduce_pair": reduce_pair,
    "select_and_scatter": select_and_scatter, "convolution": convolution, "map": map_,
    "reduce_precision": reduce_precision, "bitcast_convert": bitcast_convert,
    "rng_bit_generator": rng_bit_generator, "copy_layout": copy_layout, "barrier": barrier,
    "stochastic_convert": stochastic_convert,
}
