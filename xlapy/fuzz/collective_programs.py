"""Random HLO programs with collectives, for differential tests across processes.

A program for `devices` devices (N replicas, N partitions, or 2x2 for four)
mixes the basic steps of `hlo_programs_steps` (elementwise ops, broadcasts,
reshapes, transposes, slices, reductions, dots) with every collective:
all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute,
collective-broadcast, variadic and -start/-done forms, in each group mode
(cross-replica without a channel; channel_id alone: replica-and-partition
for the reductions and gathers, cross-partition for the rest; channel_id with
use_global_device_ids: flattened ids) over random valid replica groups
(explicit, iota, none). replica-id and partition-id enter the arithmetic and
the dynamic starts; some collectives sit in the body of a while loop.

Every process must run the same collectives in the same order, or the job
hangs: the program depends only on (seed, devices), and loops have constant
trip counts (the inputs, which differ per device, never steer control flow).
Elements are mostly f32, some s32, pred and bf16; shapes are tiny, so a
program compiles quickly.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from xlapy.fuzz.hlo_program_builder import Program, Value, is_float, is_int, shape_text
from xlapy.fuzz.hlo_programs import _argument
from xlapy.fuzz.hlo_programs_steps import STEPS as BASIC_STEPS
from xlapy.hlo import parse

REDUCING = ("cross-replica", "cross-replica-and-partition", "flattened")
"""Group modes of all-reduce, all-gather and reduce-scatter."""
MOVING = ("cross-replica", "cross-partition")
"""Group modes of all-to-all, collective-permute and collective-broadcast."""
PRIMARY = (("f32", 0.7), ("s32", 0.12), ("bf16", 0.1), ("pred", 0.08))
"""The element type of a program's parameters, and how often."""
_BIG = 512
"""Most elements a collective's result may have: programs stay tiny."""


class CollectiveProgram(Program):
    """A Program for `replicas` x `partitions` devices; it numbers its channels."""

    def __init__(self, seed: int, devices: int):
        super().__init__(seed, STEPS, KINDS)
        self.rng = np.random.default_rng([seed, devices])
        splits = [(devices, 1), (1, devices)] + ([(2, 2)] * 2 if devices == 4 else [])
        self.replicas, self.partitions = self.choice(splits)
        self.channels = 0
        self.collected: list[Value] = []
        """The results of collectives in the entry: the root keeps some."""

    def channel(self) -> str:
        self.channels += 1
        return f"channel_id={self.channels}"

    def module_text(self) -> str:
        text = super().module_text()
        header = (f"HloModule collective_{self.seed}, replica_count={self.replicas}, "
                  f"num_partitions={self.partitions}")
        return text.replace(f"HloModule random_{self.seed}", header, 1)


# -- group modes and replica groups ---------------------------------------------------------
def _space(p: CollectiveProgram, mode: str) -> int:
    """How many ids the mode's replica groups range over."""
    return {"cross-replica": p.replicas, "cross-replica-and-partition": p.replicas,
            "cross-partition": p.partitions, "flattened": p.replicas * p.partitions}[mode]


def _mode(p: CollectiveProgram, modes: tuple[str, ...]) -> str:
    """A mode, mostly one whose groups can span several devices."""
    wide = [m for m in modes if _space(p, m) > 1 or
            (m == "cross-replica-and-partition" and p.partitions > 1)]
    return p.choice(wide) if wide and p.chance(0.85) else p.choice(modes)


def _groups(p: CollectiveProgram, mode: str, even: bool = True) -> tuple[str, int]:
    """replica_groups for `mode` as text, and how many devices each group holds: none
    (every id; not for flattened ids, which XLA wants spelled out), one group in a
    random order, random groups of one size (or, when `even` is False, of two
    sizes: all-reduce and collective-broadcast allow it), or the iota form."""
    size = _space(p, mode)
    per_id = p.partitions if mode == "cross-replica-and-partition" else 1
    form = p.choice(("none", "one", "split", "split", "iota"))
    if form == "none" and mode != "flattened":
        return ("replica_groups={}" if p.chance(0.5) else ""), size * per_id
    ids = [int(i) for i in p.rng.permutation(size)]
    width = p.choice([d for d in range(1, size + 1) if size % d == 0])
    if form == "one" or size == 1:
        width = size
    if form == "iota" and size == 4 and width == 2 and p.chance(0.5):
        return "replica_groups=[2,2]<=[2,2]T(1,0)", 2 * per_id
    if form == "iota":
        return f"replica_groups=[{size // width},{width}]<=[{size}]", width * per_id
    groups = [ids[i:i + width] for i in range(0, size, width)]
    if not even and size == 4 and p.chance(0.3):
        groups = [ids[:1], ids[1:]]
    spelled = ",".join("{" + ",".join(map(str, g)) + "}" for g in groups)
    return f"replica_groups={{{spelled}}}", width * per_id


def _attributes(p: CollectiveProgram, mode: str, groups: str) -> str:
    parts = [groups] if groups else []
    if mode != "cross-replica":
        parts.append(p.channel())
    if mode == "flattened":
        parts.append("use_global_device_ids=true")
    return ", ".join(parts)


def _reduction(p: CollectiveProgram, t: str) -> str:
    """A reducer for type t: and/or for pred, sums for complex numbers (no order);
    floats rarely multiply (products of a few normal values stay tame), integers
    also combine bitwise."""
    if t in ("c64", "c128"):
        return p.reducer("add", t)
    if t == "pred":
        return p.reducer(p.choice(("and", "or")), t)
    if is_int(t):
        return p.reducer(p.choice(("add", "max", "min", "mul", "and", "or")), t)
    return p.reducer(p.choice(("add", "add", "max", "min", "mul") if p.chance(0.2) else
                              ("add", "add", "max", "min")), t)


def _shape(p: CollectiveProgram, structure) -> str:
    """shape_text, now and then with an array in a non-default layout: the CPU
    backend's collectives read and write buffers in place."""
    if isinstance(structure, Value):
        rank = len(structure.dims)
        layout = p.layout(rank) if rank >= 2 and p.chance(0.15) else ""
        return shape_text(structure) + layout
    return "(" + ", ".join(_shape(p, s) for s in structure) + ")"


def _result(p: CollectiveProgram, name: str, structure) -> list[Value]:
    """The Values of instruction `name` (a Value's shape or a tuple of them), pooled
    and, in the entry, remembered for the root."""
    if isinstance(structure, Value):
        out = [Value(name, structure.type, structure.dims)]
        p.pool.append(out[0])
    else:
        out = p.unpack_result(name, structure)
    if p.depth == 0:
        p.collected.extend(out)
    return out


def _async(p: CollectiveProgram, op: str, operands: str, attrs: str, state: str,
           result) -> list[Value]:
    """op-start, now and then an unrelated instruction in flight, then op-done."""
    start = p.emit(state, f"{op}-start({operands}), {attrs}")
    if p.chance(0.5) and p.pool:
        p.steps["unary"](p, p.choice(p.pool))
    return _result(p, p.emit(_shape(p, result), f"{op}-done({start})"), result)


def _like(p: CollectiveProgram, v: Value, count: int, rank_only: bool = False) -> list[Value]:
    """v and `count - 1` more pooled values of v's type (and dims, or only rank)."""
    same = [q for q in p.pool if q.type == v.type and
            (len(q.dims) == len(v.dims) if rank_only else q.dims == v.dims)]
    return [v] + [p.choice(same) for _ in range(count - 1)]


def _divisible(p: CollectiveProgram, v: Value, count: int) -> tuple[Value, int] | None:
    """v, or v concatenated with itself `count` times (v broadcast, for a scalar),
    and a dimension of it that `count` divides."""
    dims = [d for d, n in enumerate(v.dims) if n % count == 0]
    if dims:
        return v, p.choice(dims)
    if not v.dims:
        return p.add(v.type, (count,), f"broadcast({v.name}), dimensions={{}}"), 0
    if np.prod(v.dims) * count > _BIG:
        return None
    d = p.int(0, len(v.dims) - 1)
    dims = list(v.dims)
    dims[d] *= count
    return p.add(v.type, dims, f"concatenate({', '.join([v.name] * count)}), "
                               f"dimensions={{{d}}}"), d


# -- the collectives ------------------------------------------------------------------------
def all_reduce(p: CollectiveProgram, v: Value) -> None:
    """One operand or several of v's type (variadic), sync or async."""
    mode = _mode(p, REDUCING)
    groups, _ = _groups(p, mode, even=False)
    operands = list(dict.fromkeys(_like(p, v, p.int(2, 3) if p.chance(0.25) else 1, True)))
    reducer = _reduction(p, v.type)
    attrs = f"{_attributes(p, mode, groups)}, to_apply={reducer}".lstrip(", ")
    names = ", ".join(o.name for o in operands)
    result = operands[0] if len(operands) == 1 else operands
    if len(operands) == 1 and p.chance(0.3):
        _async(p, "all-reduce", names, attrs, _shape(p, result), result)
        return
    _result(p, p.emit(_shape(p, result), f"all-reduce({names}), {attrs}"), result)


def all_gather(p: CollectiveProgram, v: Value) -> None:
    mode = _mode(p, REDUCING)
    groups, members = _groups(p, mode)
    if not v.dims:
        v = p.add(v.type, (1,), f"reshape({v.name})")
    operands = list(dict.fromkeys(_like(p, v, p.int(2, 3) if p.chance(0.2) else 1, True)))
    dim = p.int(0, len(v.dims) - 1)
    gathered = []
    for o in operands:
        dims = list(o.dims)
        dims[dim] *= members
        gathered.append(Value("", o.type, tuple(dims)))
    if sum(int(np.prod(g.dims)) for g in gathered) > _BIG:
        return
    one = len(operands) == 1
    attrs = f"dimensions={{{dim}}}, {_attributes(p, mode, groups)}".rstrip(", ")
    names = ", ".join(o.name for o in operands)
    result = gathered[0] if one else gathered
    if p.chance(0.3):
        state = f"({shape_text(operands[0] if one else operands)}, {shape_text(result)})"
        _async(p, "all-gather", names, attrs, state, result)
        return
    _result(p, p.emit(_shape(p, result), f"all-gather({names}), {attrs}"), result)


def reduce_scatter(p: CollectiveProgram, v: Value) -> None:
    mode = _mode(p, REDUCING)
    groups, members = _groups(p, mode)
    made = _divisible(p, v, members)
    if made is None:
        return
    v, dim = made
    others = [q for q in p.pool if q.type == v.type and len(q.dims) > dim and
              q.dims[dim] % members == 0 and q != v]
    operands = [v] + ([p.choice(others)] if others and p.chance(0.2) else [])
    scattered = []
    for o in operands:
        dims = list(o.dims)
        dims[dim] //= members
        scattered.append(Value("", o.type, tuple(dims)))
    result = scattered[0] if len(operands) == 1 else scattered
    attrs = _attributes(p, mode, groups)
    text = (f"reduce-scatter({', '.join(o.name for o in operands)}), dimensions={{{dim}}}, "
            f"{attrs}{', ' if attrs else ''}to_apply={_reduction(p, v.type)}")
    _result(p, p.emit(_shape(p, result), text), result)


def all_to_all(p: CollectiveProgram, v: Value) -> None:
    """The array form (split and concatenate along one dimension) or the tuple form
    (operand i goes to member i)."""
    mode = _mode(p, MOVING)
    groups, members = _groups(p, mode)
    attrs = _attributes(p, mode, groups)
    if p.chance(0.3) and members <= 4:
        operands = _like(p, v, members)
        names = ", ".join(o.name for o in operands)
        _result(p, p.emit(_shape(p, operands), f"all-to-all({names}), {attrs}".rstrip(", ")),
                operands)
        return
    made = _divisible(p, v, members)
    if made is None:
        return
    v, dim = made
    _result(p, p.emit(_shape(p, v), f"all-to-all({v.name}), dimensions={{{dim}}}, "
                                     f"{attrs}".rstrip(", ")), v)


def collective_permute(p: CollectiveProgram, v: Value) -> None:
    """Some ids send to others (a partial permutation, self-sends included); an id
    nobody sends to gets zeros."""
    mode = _mode(p, MOVING)
    size = _space(p, mode)
    targets = [int(i) for i in p.rng.permutation(size)]
    pairs = [(s, t) for s, t in enumerate(targets) if p.chance(0.75)] or [(0, targets[0])]
    spelled = ",".join(f"{{{s},{t}}}" for s, t in pairs)
    attrs = f"source_target_pairs={{{spelled}}}"
    if mode == "cross-partition":
        attrs += ", " + p.channel()
    if p.chance(0.3):
        t = shape_text(v)
        _async(p, "collective-permute", v.name, attrs, f"({t}, {t}, u32[], u32[])", v)
        return
    _result(p, p.emit(_shape(p, v), f"collective-permute({v.name}), {attrs}"), v)


def collective_broadcast(p: CollectiveProgram, v: Value) -> None:
    """Each group gets its first member's value."""
    mode = _mode(p, MOVING)
    groups, _ = _groups(p, mode, even=False)
    attrs = _attributes(p, mode, groups)
    _result(p, p.emit(_shape(p, v), f"collective-broadcast({v.name}), {attrs}".rstrip(", ")),
            v)


def device_id(p: CollectiveProgram, v: Value) -> None:
    """replica-id or partition-id combined with v (a pred: compared first), or as the
    start of a dynamic slice of v."""
    op = p.choice(("replica-id", "partition-id"))
    raw = p.add("u32", (), f"{op}()", pooled=False)
    if v.dims and min(v.dims) > 1 and p.chance(0.3):
        start = p.add("s32", (), f"convert({raw.name})", pooled=False)
        sizes = [p.int(1, d - 1) for d in v.dims]
        starts = ", ".join([start.name] * len(v.dims))
        p.add(v.type, sizes, f"dynamic-slice({v.name}, {starts}), "
                             f"dynamic_slice_sizes={{{','.join(map(str, sizes))}}}")
        return
    if v.type == "pred":
        zero = p.constant("u32", 0)
        id_ = p.add("pred", (), f"compare({raw.name}, {zero.name}), direction=EQ",
                    pooled=False)
        op = "xor"
    else:
        id_ = p.add(v.type, (), f"convert({raw.name})", pooled=False)
        op = p.choice(("add", "multiply", "subtract"))
    wide = p.add(v.type, v.dims, f"broadcast({id_.name}), dimensions={{}}", pooled=False)
    p.add(v.type, v.dims, f"{op}({v.name}, {wide.name})")


def convert(p: CollectiveProgram, v: Value) -> None:
    """To another of f32, s32, bf16, pred. A computed float is not narrowed to bf16
    and widened back (a last-bit difference would round to a bf16 one), nor is a
    computed bf16 truncated to an integer (one ulp may cross an integer)."""
    exact = p.is_entry_parameter(v) or not is_float(v.type)
    if v.type not in ("f32", "s32", "bf16", "pred") or (v.type == "bf16" and not exact):
        return
    target = p.choice([t for t in ("f32", "s32", "bf16", "pred") if t != v.type])
    there = p.add(target, v.dims, f"convert({v.name})")
    if target == "bf16" and exact and p.chance(0.5):
        p.add(v.type, v.dims, f"convert({there.name})")


def chain(p: CollectiveProgram, v: Value) -> None:
    """A few steps, each on the newest value: elementwise ops between collectives
    that fusion may take together."""
    for _ in range(p.int(2, 4)):
        p.steps[p.choice(CHAIN_KINDS)](p, p.pool[-1])


def while_loop(p: CollectiveProgram, v: Value) -> None:
    """A counter loop over (counter, values) with a constant trip count, its body
    grown with collectives as likely as elsewhere; only in the entry."""
    if p.depth:
        return
    values = list(dict.fromkeys([v] + [p.choice(p.pool) for _ in range(p.int(0, 2))]))
    counter = p.constant("s32", 0)
    state = [counter] + values
    body, (inside,) = p.open("body", [state])
    p.scope.indices.append(inside[0])
    p.grow(p.int(2, 5), BODY_KINDS)
    one = p.constant("s32", 1)
    step = p.add("s32", (), f"add({inside[0].name}, {one.name})", pooled=False)
    p.close(body, [step] + [p.newest(s.type, s.dims) for s in inside[1:]])
    condition, (inside,) = p.open("cond", [state])
    limit = p.constant("s32", p.int(1, 3))
    going = p.add("pred", (), f"compare({inside[0].name}, {limit.name}), direction=LT",
                  pooled=False)
    p.close(condition, going)
    loop = p.emit(shape_text(state), f"while({p.tuple_of(state)}), condition={condition}, "
                                     f"body={body}")
    p.unpack_result(loop, state)


COLLECTIVES: dict[str, Callable] = {
    "all_reduce": all_reduce, "all_gather": all_gather, "reduce_scatter": reduce_scatter,
    "all_to_all": all_to_all, "collective_permute": collective_permute,
    "collective_broadcast": collective_broadcast}
STEPS = {**{k: BASIC_STEPS[k] for k in (
    "unary", "binary", "compare", "select", "scale", "iota", "reduce", "reduce_back", "dot",
    "broadcast", "slice", "transpose", "reshape", "concatenate", "pad", "reverse",
    "dynamic_slice", "tuple")}, **COLLECTIVES, "device_id": device_id, "convert": convert,
    "chain": chain, "while": while_loop}
CHAIN_KINDS = ("unary", "binary", "scale", "all_reduce", "collective_permute", "all_gather",
               "device_id")
_BASIC = ("unary", "binary", "binary", "compare", "select", "scale", "iota", "reduce",
          "reduce_back", "dot", "broadcast", "slice", "transpose", "reshape", "concatenate",
          "pad", "reverse", "dynamic_slice", "tuple", "convert", "device_id")
BODY_KINDS = tuple(COLLECTIVES) * 2 + _BASIC
KINDS = tuple(COLLECTIVES) * 3 + _BASIC + ("chain", "chain", "while", "while")
"""The steps a program draws from (a name twice: drawn twice as often)."""


def collective_program(seed: int, devices: int) -> tuple[str, Callable[[int], list]]:
    """Program `seed` for `devices` devices: (its module text, inputs_for(device)),
    each device's inputs different; the same on every call and in every process."""
    p = CollectiveProgram(seed, devices)
    primary = p.rng.choice([t for t, _ in PRIMARY], p=[w for _, w in PRIMARY])
    base = tuple(p.int(1, 4) for _ in range(p.int(0, 3)))
    for _ in range(p.int(1, 3)):
        p.parameter(primary, base, pooled=True)
    for kind in ("device_id", p.choice(tuple(COLLECTIVES))):   # at least one of each
        p.steps[kind](p, p.choice(p.pool))
    p.grow(p.int(4, 12))
    _root(p)
    text = p.module_text()
    shapes = [q.shape for q in parse(text).entry_computation.parameters]

    def inputs_for(device: int) -> list:
        rng = np.random.default_rng([seed, devices, device])
        return [_argument(shape, rng, wide=False, special=0) for shape in shapes]
    return text, inputs_for


def _root(p: CollectiveProgram) -> None:
    """A tuple of the newest value and a few collectives' results (so they stay live)."""
    picks = [p.choice(p.collected) for _ in range(min(3, len(p.collected)))]
    outputs = list(dict.fromkeys([p.pool[-1]] + picks))
    names = ", ".join(v.name for v in outputs)
    p.scope.lines.append(f"  ROOT out = {shape_text(outputs)} tuple({names})")
