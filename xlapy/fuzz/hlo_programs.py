"""Random HLO programs for differential tests of compiled backends.

Extends the pass tests' f32 generator (`f32_programs`) to the
shapes of bugs a code generator has: several element types (f32, f64, s32,
bf16, f16; u8, u32 and s64 now and then, s8 through converts; pred through
compares, selects and converts), integer edge cases (division by zero,
shifts past the width, wrapping, saturating converts), reductions over rows,
columns, every dimension or any subset with add/max/min/mul reducers (and
an argmax-style variadic reduce), softmax and layernorm diamonds, dots with
bias (batched too), strided slices, pads with interior and negative edges,
concatenates, transposes, reshapes, reverses, iotas, dynamic slices and
updates with in- and out-of-range starts, clamps, tuples inside the
computation, and roots of one array, a tuple or a nested tuple. Shapes are
mostly tiny; some programs have a minor dimension long enough for vector
loops, a few enough elements for the parallel path.

Numerically touchy ops get tame operands (a divisor is `1 + |y|`, a square
root takes `|x|`) so that results differ between backends only by rounding;
`compare.mismatch` says by how much. Seed-driven: a failure names its seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xlapy.fuzz.f32_programs import _dims
from xlapy.fuzz.f32_programs import random_program as f32_program

FLOATS = ("f32", "f64", "bf16", "f16")
INTS = {"s32": np.int32, "s8": np.int8, "u8": np.uint8, "u32": np.uint32, "s64": np.int64}
PRIMARY = (("f32", 0.32), ("f64", 0.18), ("s32", 0.2), ("bf16", 0.1), ("f16", 0.1),
           ("u8", 0.04), ("s64", 0.03), ("u32", 0.03))
CONVERTS = ("f32", "f64", "s32", "bf16", "f16", "pred", "s8", "u8", "u32", "s64")


@dataclass(frozen=True)
class Value:
    name: str
    type: str
    dims: tuple


def random_program(seed: int) -> str:
    """The module text of program `seed`: every seventh one is the pass tests'
    f32 program, the others this module's typed ones."""
    if seed % 7 == 3:
        return f32_program(seed)
    return _Program(seed).build()


def arguments(module, seed: int) -> list:
    """Inputs for the module's parameters: normal floats, sometimes with infinities
    and signed zeros among them; s32 values small (0..7, in-range indices) or, in a
    third of the programs, anywhere in the type's range."""
    rng = np.random.default_rng(seed)
    wide = rng.random() < 0.33
    special = rng.random() < 0.15
    return [_argument(p.shape, rng, wide, special)
            for p in module.entry_computation.parameters]


def _argument(shape, rng, wide: bool, special: bool) -> np.ndarray:
    dims, dtype = shape.dimensions, shape.dtype
    if dtype == np.bool_:
        return rng.random(dims) < 0.5
    if dtype.kind in "iu":
        if wide:
            limits = np.iinfo(dtype)
            return rng.integers(limits.min, limits.max, size=dims, dtype=dtype,
                                endpoint=True)
        return rng.integers(0, 8, size=dims).astype(dtype)
    values = rng.standard_normal(dims)
    if special and values.size:
        picks = rng.integers(values.size, size=2)
        values.flat[picks] = rng.choice([np.inf, -np.inf, -0.0], size=2)
    return values.astype(dtype)


def _is_float(t: str) -> bool:
    return t in FLOATS


def _reducer_text(name: str, kind: str, t: str) -> str:
    op = {"add": "add", "max": "maximum", "min": "minimum", "mul": "multiply",
          "and": "and", "or": "or"}[kind]
    x = name + "_"  # names are unique across a module
    return (f"{name} {{\n  {x}a = {t}[] parameter(0)\n  {x}b = {t}[] parameter(1)\n"
            f"  ROOT {x}c = {t}[] {op}({x}a, {x}b)\n}}\n")


def _argmax_text(name: str, t: str) -> str:
    """(value, index) pairs: NaN above everything, then the larger value, then the
    smaller index; a total order, so the reduction's association cannot matter.
    Names carry the computation's as a prefix: they are unique across a module."""
    n = name + "_"
    lines = [f"{n}av = {t}[] parameter(0)", f"{n}ai = s32[] parameter(1)",
             f"{n}bv = {t}[] parameter(2)", f"{n}bi = s32[] parameter(3)",
             f"{n}an = pred[] compare({n}av, {n}av), direction=NE",
             f"{n}bn = pred[] compare({n}bv, {n}bv), direction=NE",
             f"{n}bnum = pred[] not({n}bn)", f"{n}anan = pred[] and({n}an, {n}bnum)",
             f"{n}gt = pred[] compare({n}av, {n}bv), direction=GT",
             f"{n}better = pred[] or({n}anan, {n}gt)",
             f"{n}nans = pred[] and({n}an, {n}bn)",
             f"{n}eq = pred[] compare({n}av, {n}bv), direction=EQ",
             f"{n}same = pred[] or({n}nans, {n}eq)",
             f"{n}lt = pred[] compare({n}ai, {n}bi), direction=LT",
             f"{n}tie = pred[] and({n}same, {n}lt)",
             f"{n}first = pred[] or({n}better, {n}tie)",
             f"{n}v = {t}[] select({n}first, {n}av, {n}bv)",
             f"{n}i = s32[] select({n}first, {n}ai, {n}bi)",
             f"ROOT {n}r = ({t}[], s32[]) tuple({n}v, {n}i)"]
    return f"{name} {{\n" + "".join(f"  {line}\n" for line in lines) + "}\n"


def _identity(kind: str, t: str) -> str:
    if kind in ("add", "or"):
        return "false" if t == "pred" else "0"
    if kind in ("mul", "and"):
        return "true" if t == "pred" else "1"
    if t in INTS:
        limits = np.iinfo(INTS[t])
        return str(limits.min if kind == "max" else limits.max)
    return "-inf" if kind == "max" else "inf"


class _Program:
    """One program under construction: computations, entry lines and a pool of
    values later ops take operands from."""

    def __init__(self, seed: int):
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.lines: list[str] = []
        self.computations: dict[str, str] = {}
        self.pool: list[Value] = []
        self.params = 0

    # -- building blocks ----------------------------------------------------------------
    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def int(self, low: int, high: int) -> int:
        """A random integer in [low, high]."""
        return int(self.rng.integers(low, high + 1))

    def small(self, t: str, low: int, high: int) -> int:
        """A random constant of type t in [low, high] ([0, high] if t is unsigned)."""
        return self.int(0 if t[0] == "u" else low, high)

    def choice(self, options):
        return options[int(self.rng.integers(len(options)))]

    def add(self, t: str, dims, text: str, pooled: bool = True) -> Value:
        value = Value(self.emit(_dims(dims, t), text), t, tuple(dims))
        if pooled:
            self.pool.append(value)
        return value

    def emit(self, shape: str, text: str) -> str:
        """A new line `name = shape text`; its name."""
        name = f"v{len(self.lines)}"
        self.lines.append(f"  {name} = {shape} {text}")
        return name

    def parameter(self, t: str, dims, pooled: bool = False) -> Value:
        self.params += 1
        return self.add(t, dims, f"parameter({self.params - 1})", pooled)

    def constant(self, t: str, text) -> Value:
        return self.add(t, (), f"constant({text})", pooled=False)

    def splat(self, t: str, dims, text) -> Value:
        """A constant broadcast to `dims`."""
        c = self.constant(t, text)
        return self.add(t, dims, f"broadcast({c.name}), dimensions={{}}", pooled=False)

    def reducer(self, kind: str, t: str) -> str:
        name = f"{kind}_{t}"
        self.computations.setdefault(name, _reducer_text(name, kind, t))
        return name

    def partner(self, v: Value) -> Value:
        """Another pooled value of v's type and dimensions (v itself if none)."""
        same = [p for p in self.pool if p.type == v.type and p.dims == v.dims]
        return self.choice(same) if same else v

    # -- the program --------------------------------------------------------------------
    def build(self) -> str:
        rng = self.rng
        self.primary = rng.choice([t for t, _ in PRIMARY], p=[w for _, w in PRIMARY])
        base = self.base_dims()
        for _ in range(self.int(1, 3)):
            self.pool.append(self.parameter(self.primary, base))
        for _ in range(self.int(3, 12)):
            v = self.choice(self.pool)
            kind = self.choice(_KINDS)
            _GROW[kind](self, v)
        return self.text()

    def base_dims(self) -> tuple:
        """The parameters' dimensions: mostly tiny; sometimes a minor dimension long
        enough for vector loops and their remainders, or (f64 and s32 only, whose
        sums stay exact enough) enough elements for the parallel path; rarely empty."""
        rank = self.int(0, 3)
        base = tuple(self.int(1, 5) for _ in range(rank))
        wide = self.primary in ("f32", "f64", "s32")
        if rank and self.chance(0.03):
            return base[:-1] + (0,)
        if wide and self.primary != "f32" and self.chance(0.04):
            return self.choice(((64, 5000), (3, 100003), (600, 600)))
        if wide and rank and self.chance(0.15):
            return base[:-1] + (self.choice((17, 33, 100)),)
        return base

    def text(self) -> str:
        outputs = list(dict.fromkeys([self.pool[-1]] + [self.choice(self.pool)
                                                        for _ in range(3)]))
        outputs = outputs[:self.int(1, len(outputs))]
        if len(outputs) == 1 and self.chance(0.4):
            self.root_array(outputs[0])
        else:
            self.root_tuple(outputs)
        body = "\n".join(self.lines)
        comps = "\n".join(self.computations.values())
        return f"HloModule random_{self.seed}\n\n{comps}\nENTRY main {{\n{body}\n}}\n"

    def root_array(self, v: Value) -> None:
        """v itself is the root (wherever its line is)."""
        number = int(v.name[1:])
        self.lines[number] = self.lines[number].replace("  ", "  ROOT ", 1)

    def root_tuple(self, outputs: list[Value]) -> None:
        """A tuple of the outputs; sometimes the first two nested in a tuple of their own."""
        shapes = [_dims(v.dims, v.type) for v in outputs]
        names = [v.name for v in outputs]
        if len(outputs) >= 3 and self.chance(0.3):
            inner = f"({', '.join(shapes[:2])})"
            shapes[:2] = [inner]
            names[:2] = [self.emit(inner, f"tuple({names[0]}, {names[1]})")]
        self.lines.append(f"  ROOT out = ({', '.join(shapes)}) tuple({', '.join(names)})")


# -- elementwise ---------------------------------------------------------------------------
_FLOAT_UNARY = ("negate", "abs", "exponential", "tanh", "sine", "cosine", "floor", "ceil",
                "round-nearest-even", "round-nearest-afz", "sign", "logistic",
                "exponential-minus-one", "cbrt", "atan")
_POSITIVE_UNARY = ("sqrt", "rsqrt", "log", "log-plus-one")
_INT_UNARY = ("negate", "not", "popcnt", "count-leading-zeros")
_SIGNED_UNARY = ("abs", "sign")


def _unary(p: _Program, v: Value) -> None:
    if v.type == "pred":
        p.add("pred", v.dims, f"not({v.name})")
    elif v.type in INTS:
        signed = _SIGNED_UNARY if v.type[0] == "s" else ()
        p.add(v.type, v.dims, f"{p.choice(_INT_UNARY + signed)}({v.name})")
    elif p.chance(0.25):
        magnitude = p.add(v.type, v.dims, f"abs({v.name})", pooled=False)
        p.add(v.type, v.dims, f"{p.choice(_POSITIVE_UNARY)}({magnitude.name})")
    elif p.chance(0.1):
        p.add("pred", v.dims, f"is-finite({v.name})")
    else:
        p.add(v.type, v.dims, f"{p.choice(_FLOAT_UNARY)}({v.name})")


def _binary(p: _Program, v: Value) -> None:
    w = p.partner(v)
    if v.type == "pred":
        p.add("pred", v.dims, f"{p.choice(('and', 'or', 'xor'))}({v.name}, {w.name})")
    elif v.type in INTS:
        op = p.choice(("add", "subtract", "multiply", "maximum", "minimum", "and", "or",
                       "xor", "divide", "remainder", "shift-left", "shift-right-logical",
                       "shift-right-arithmetic"))
        p.add(v.type, v.dims, f"{op}({v.name}, {w.name})")
    elif p.chance(0.3):
        _tame_binary(p, v, w)
    else:
        op = p.choice(("add", "subtract", "multiply", "maximum", "minimum", "atan2"))
        p.add(v.type, v.dims, f"{op}({v.name}, {w.name})")


def _tame_binary(p: _Program, v: Value, w: Value) -> None:
    """divide, remainder and power with operands away from their poles."""
    one = p.splat(v.type, v.dims, 1)
    magnitude = p.add(v.type, v.dims, f"abs({w.name})", pooled=False)
    safe = p.add(v.type, v.dims, f"add({magnitude.name}, {one.name})", pooled=False)
    op = p.choice(("divide", "remainder", "power"))
    if op == "power":
        base = p.add(v.type, v.dims, f"abs({v.name})", pooled=False)
        exponent = p.add(v.type, v.dims, f"sine({w.name})", pooled=False)
        p.add(v.type, v.dims, f"power({base.name}, {exponent.name})")
    else:
        p.add(v.type, v.dims, f"{op}({v.name}, {safe.name})")


def _compare(p: _Program, v: Value) -> None:
    w = p.partner(v)
    direction = p.choice(("EQ", "NE", "LT", "LE", "GT", "GE"))
    pred = p.add("pred", v.dims, f"compare({v.name}, {w.name}), direction={direction}",
                 pooled=p.chance(0.4))
    if v.type != "pred":
        p.add(v.type, v.dims, f"select({pred.name}, {v.name}, {w.name})")


def _select(p: _Program, v: Value) -> None:
    preds = [q for q in p.pool if q.type == "pred" and q.dims == v.dims]
    if not preds or v.type == "pred":
        return _compare(p, v)
    w = p.partner(v)
    p.add(v.type, v.dims, f"select({p.choice(preds).name}, {w.name}, {v.name})")


def _clamp(p: _Program, v: Value) -> None:
    if v.type == "pred":
        return
    low, high = ("-0.5", "1.25") if _is_float(v.type) else (-2 if v.type[0] == "s" else 1, 3)
    lo, hi = p.constant(v.type, low), p.constant(v.type, high)
    if p.chance(0.5):
        lo = p.add(v.type, v.dims, f"broadcast({lo.name}), dimensions={{}}", pooled=False)
    p.add(v.type, v.dims, f"clamp({lo.name}, {v.name}, {hi.name})")


def _convert(p: _Program, v: Value) -> None:
    target = p.choice([t for t in CONVERTS if t != v.type])
    there = p.add(target, v.dims, f"convert({v.name})")
    if p.chance(0.6):
        p.add(v.type, v.dims, f"convert({there.name})")


def _scale(p: _Program, v: Value) -> None:
    if v.type == "pred":
        return
    c = p.splat(v.type, v.dims, p.small(v.type, -3, 3))
    p.add(v.type, v.dims, f"{p.choice(('multiply', 'add'))}({v.name}, {c.name})")


def _iota(p: _Program, v: Value) -> None:
    if not v.dims or v.type == "pred":
        return
    dim = p.int(0, len(v.dims) - 1)
    i = p.add(v.type, v.dims, f"iota(), iota_dimension={dim}", pooled=False)
    p.add(v.type, v.dims, f"{p.choice(('add', 'subtract', 'maximum'))}({v.name}, {i.name})")


# -- reductions ----------------------------------------------------------------------------
def _reduce_kind(p: _Program, t: str) -> str:
    if t == "pred":
        return p.choice(("and", "or"))
    return p.choice(("add", "add", "max", "min", "mul"))


def _reduce(p: _Program, v: Value, dims=None) -> Value | None:
    if not v.dims:
        return None
    if dims is None:
        shape = p.choice(("row", "column", "all", "subset"))
        rank = len(v.dims)
        dims = {"row": [rank - 1], "column": [0], "all": list(range(rank)),
                "subset": sorted(set(int(d) for d in p.rng.integers(rank, size=2)))}[shape]
    kind = _reduce_kind(p, v.type)
    init = p.constant(v.type, _identity(kind, v.type))
    out = tuple(d for i, d in enumerate(v.dims) if i not in dims)
    dims_text = ",".join(map(str, dims))
    return p.add(v.type, out, f"reduce({v.name}, {init.name}), dimensions={{{dims_text}}}, "
                              f"to_apply={p.reducer(kind, v.type)}")


def _reduce_back(p: _Program, v: Value) -> None:
    """A reduction over one dimension broadcast back and combined with its input."""
    if not v.dims or v.type == "pred":
        return
    dim = p.int(0, len(v.dims) - 1)
    reduced = _reduce(p, v, [dim])
    kept = ",".join(str(i) for i in range(len(v.dims)) if i != dim)
    back = p.add(v.type, v.dims, f"broadcast({reduced.name}), dimensions={{{kept}}}",
                 pooled=False)
    p.add(v.type, v.dims, f"{p.choice(('subtract', 'add', 'maximum'))}({v.name}, {back.name})")


def _row_stat(p: _Program, v: Value, x: Value, kind: str) -> Value:
    """reduce(x) over the last dimension with `kind`, broadcast back to v's shape."""
    last = len(v.dims) - 1
    init = p.constant(v.type, _identity(kind, v.type))
    reduced = p.add(v.type, v.dims[:-1], f"reduce({x.name}, {init.name}), "
                                         f"dimensions={{{last}}}, "
                                         f"to_apply={p.reducer(kind, v.type)}", pooled=False)
    kept = ",".join(map(str, range(last)))
    return p.add(v.type, v.dims, f"broadcast({reduced.name}), dimensions={{{kept}}}",
                 pooled=False)


def _softmax(p: _Program, v: Value) -> None:
    if not v.dims or not _is_float(v.type):
        return
    top = _row_stat(p, v, v, "max")
    shifted = p.add(v.type, v.dims, f"subtract({v.name}, {top.name})", pooled=False)
    e = p.add(v.type, v.dims, f"exponential({shifted.name})", pooled=False)
    total = _row_stat(p, v, e, "add")
    p.add(v.type, v.dims, f"divide({e.name}, {total.name})")


def _layernorm(p: _Program, v: Value) -> None:
    if not v.dims or not _is_float(v.type):
        return
    scale = p.splat(v.type, v.dims, 1 / v.dims[-1] if v.dims[-1] else 1)
    total = _row_stat(p, v, v, "add")
    mean = p.add(v.type, v.dims, f"multiply({total.name}, {scale.name})", pooled=False)
    centred = p.add(v.type, v.dims, f"subtract({v.name}, {mean.name})", pooled=False)
    square = p.add(v.type, v.dims, f"multiply({centred.name}, {centred.name})", pooled=False)
    variance = p.add(v.type, v.dims, f"multiply({_row_stat(p, v, square, 'add').name}, "
                                     f"{scale.name})", pooled=False)
    eps = p.splat(v.type, v.dims, "0.5")
    denominator = p.add(v.type, v.dims, f"add({variance.name}, {eps.name})", pooled=False)
    inverse = p.add(v.type, v.dims, f"rsqrt({denominator.name})", pooled=False)
    p.add(v.type, v.dims, f"multiply({centred.name}, {inverse.name})")


def _argmax(p: _Program, v: Value) -> None:
    """A variadic (value, index) reduce over the last dimension."""
    if not v.dims or v.type == "pred":
        return
    last = len(v.dims) - 1
    name = f"argmax_{v.type}"
    p.computations.setdefault(name, _argmax_text(name, v.type))
    index = p.add("s32", v.dims, f"iota(), iota_dimension={last}", pooled=False)
    lowest = p.constant(v.type, _identity("max", v.type))
    zero = p.constant("s32", 0)
    out = v.dims[:-1]
    both = p.emit(f"({_dims(out, v.type)}, {_dims(out, 's32')})",
                  f"reduce({v.name}, {index.name}, {lowest.name}, {zero.name}), "
                  f"dimensions={{{last}}}, to_apply={name}")
    p.add(v.type, out, f"get-tuple-element({both}), index=0")
    p.add("s32", out, f"get-tuple-element({both}), index=1")


def _dot(p: _Program, v: Value) -> None:
    if v.type == "pred" or len(v.dims) not in (2, 3):
        return
    n = p.int(1, 4)
    if len(v.dims) == 3:
        batch, m, k = v.dims
        w = p.parameter(v.type, (batch, k, n))
        p.add(v.type, (batch, m, n), f"dot({v.name}, {w.name}), lhs_batch_dims={{0}}, "
                                     "lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                                     "rhs_contracting_dims={1}")
        return
    contract = p.int(0, 1)
    m, k = v.dims[1 - contract], v.dims[contract]
    w = p.parameter(v.type, (k, n))
    with_bias = p.chance(0.7)
    d = p.add(v.type, (m, n), f"dot({v.name}, {w.name}), lhs_contracting_dims={{{contract}}}, "
                              "rhs_contracting_dims={0}", pooled=not with_bias)
    if not with_bias:
        return
    bias = p.parameter(v.type, (n,))
    b = p.add(v.type, (m, n), f"broadcast({bias.name}), dimensions={{1}}", pooled=False)
    p.add(v.type, (m, n), f"add({d.name}, {b.name})")


# -- data movement -------------------------------------------------------------------------
def _broadcast(p: _Program, v: Value) -> None:
    """v with one new dimension inserted somewhere."""
    if len(v.dims) >= 3:
        return
    at = p.int(0, len(v.dims))
    out = v.dims[:at] + (p.int(1, 4),) + v.dims[at:]
    mapping = ",".join(str(i if i < at else i + 1) for i in range(len(v.dims)))
    p.add(v.type, out, f"broadcast({v.name}), dimensions={{{mapping}}}")


def _slice(p: _Program, v: Value) -> None:
    if not v.dims or min(v.dims) == 0:
        return
    ranges, out = [], []
    for d in v.dims:
        start = p.int(0, d - 1)
        limit = p.int(start + 1, d)
        stride = p.int(1, 3)
        ranges.append(f"[{start}:{limit}:{stride}]" if stride > 1 else f"[{start}:{limit}]")
        out.append(-(-(limit - start) // stride))
    p.add(v.type, out, f"slice({v.name}), slice={{{', '.join(ranges)}}}")


def _pad(p: _Program, v: Value) -> None:
    if not v.dims:
        return
    config, out = [], []
    for d in v.dims:
        interior = p.int(0, 2) if p.chance(0.4) and d > 1 else 0
        full = d + max(d - 1, 0) * interior
        low, high = p.int(-1, 2), p.int(-1, 2)
        if full + low + high < 1:
            low, high = 0, 0
        config.append(f"{low}_{high}" + (f"_{interior}" if interior else ""))
        out.append(full + low + high)
    fill = p.constant(v.type, "false" if v.type == "pred" else p.small(v.type, -1, 2))
    p.add(v.type, out, f"pad({v.name}, {fill.name}), padding={'x'.join(config)}")


def _concatenate(p: _Program, v: Value) -> None:
    if not v.dims:
        return
    dim = p.int(0, len(v.dims) - 1)
    others = [q for q in p.pool if q.type == v.type and len(q.dims) == len(v.dims) and
              all(a == b for i, (a, b) in enumerate(zip(q.dims, v.dims)) if i != dim)]
    parts = [v] + [p.choice(others) for _ in range(p.int(1, 2))]
    out = list(v.dims)
    out[dim] = sum(q.dims[dim] for q in parts)
    names = ", ".join(q.name for q in parts)
    p.add(v.type, out, f"concatenate({names}), dimensions={{{dim}}}")


def _transpose(p: _Program, v: Value) -> None:
    if len(v.dims) < 2:
        return
    perm = [int(i) for i in p.rng.permutation(len(v.dims))]
    out = [v.dims[i] for i in perm]
    p.add(v.type, out, f"transpose({v.name}), dimensions={{{','.join(map(str, perm))}}}")


def _reshape(p: _Program, v: Value) -> None:
    count = int(np.prod(v.dims)) if v.dims else 1
    if count == 0:
        return
    factors = [f for f in range(2, count + 1) if count % f == 0]
    out: list[int] = []
    rest = count
    while rest > 1 and len(out) < 3 and p.chance(0.6):
        f = p.choice([f for f in factors if rest % f == 0])
        out.append(f)
        rest //= f
    out.append(rest)
    if p.chance(0.3):
        out.insert(p.int(0, len(out)), 1)
    p.add(v.type, out, f"reshape({v.name})")


def _reverse(p: _Program, v: Value) -> None:
    if not v.dims:
        return
    dims = sorted(set(int(d) for d in p.rng.integers(len(v.dims), size=p.int(1, 2))))
    p.add(v.type, v.dims, f"reverse({v.name}), dimensions={{{','.join(map(str, dims))}}}")


def _start(p: _Program) -> Value:
    """An s32 scalar start index: a parameter (0..7) or a constant, in range or not."""
    if p.chance(0.5):
        return p.parameter("s32", ())
    return p.constant("s32", p.int(-3, 6))


def _dynamic_slice(p: _Program, v: Value) -> None:
    if not v.dims or min(v.dims) == 0:
        return
    sizes = [p.int(1, d) for d in v.dims]
    starts = ", ".join(_start(p).name for _ in v.dims)
    p.add(v.type, sizes, f"dynamic-slice({v.name}, {starts}), "
                         f"dynamic_slice_sizes={{{','.join(map(str, sizes))}}}")


def _dynamic_update_slice(p: _Program, v: Value) -> None:
    if not v.dims or min(v.dims) == 0:
        return
    sizes = tuple(p.int(1, d) for d in v.dims)
    smaller = [q for q in p.pool if q.type == v.type and q.dims == sizes]
    update = p.choice(smaller) if smaller else p.parameter(v.type, sizes)
    starts = ", ".join(_start(p).name for _ in v.dims)
    p.add(v.type, v.dims, f"dynamic-update-slice({v.name}, {update.name}, {starts})")


def _tuple(p: _Program, v: Value) -> None:
    """A tuple built and taken apart inside the computation."""
    w = p.partner(v)
    t = p.emit(f"({_dims(v.dims, v.type)}, {_dims(w.dims, w.type)})",
               f"tuple({v.name}, {w.name})")
    index = p.int(0, 1)
    element = (v, w)[index]
    p.add(element.type, element.dims, f"get-tuple-element({t}), index={index}")


_GROW = {
    "unary": _unary, "binary": _binary, "compare": _compare, "select": _select,
    "clamp": _clamp, "convert": _convert, "scale": _scale, "iota": _iota, "reduce": _reduce,
    "reduce_back": _reduce_back, "softmax": _softmax, "layernorm": _layernorm,
    "argmax": _argmax, "dot": _dot, "broadcast": _broadcast, "slice": _slice, "pad": _pad,
    "concatenate": _concatenate, "transpose": _transpose, "reshape": _reshape,
    "reverse": _reverse, "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice, "tuple": _tuple,
}
_KINDS = ("unary", "unary", "binary", "binary", "binary", "compare", "select", "clamp",
          "convert", "scale", "iota", "reduce", "reduce", "reduce_back", "softmax",
          "layernorm", "argmax", "dot", "dot", "broadcast", "slice", "pad", "concatenate",
          "transpose", "reshape", "reverse", "dynamic_slice", "dynamic_update_slice", "tuple")
