"""The random programs' basic steps: elementwise ops of every element type,
reductions and their diamonds, dots, and data movement.

Each step takes the `Program` and a pooled value and adds a few instructions
using it (or nothing, when the value does not suit it). Numerically touchy
ops get tame operands (a divisor is `1 + |y|`, a square root takes `|x|`)
so that results differ between backends only by rounding. Complex values
get the ops XLA defines for them (no ordering: no max, min, clamp or LT).
"""

from __future__ import annotations

import numpy as np

from xlapy.fuzz.f32_programs import _dims
from xlapy.fuzz.hlo_program_builder import (
    COMPLEX,
    FLOATS,
    INTS,
    Program,
    Value,
    identity,
    is_complex,
    is_float,
    is_int,
    is_signed,
)

CONVERTS = ("f32", "f64", "bf16", "f16", "pred", "s8", "s16", "s32", "s64", "u8", "u16",
            "u32", "u64", "c64", "c128")

# -- elementwise ---------------------------------------------------------------------------
_FLOAT_UNARY = ("negate", "abs", "exponential", "tanh", "sine", "cosine", "floor", "ceil",
                "round-nearest-even", "round-nearest-afz", "sign", "logistic",
                "exponential-minus-one", "cbrt", "atan", "tan", "erf", "sinh", "cosh", "asinh")
_POSITIVE_UNARY = ("sqrt", "rsqrt", "log", "log-plus-one")
_UNIT_UNARY = ("asin", "acos", "atanh")
"""Functions defined on (-1, 1): they take tanh(x)."""
_INT_UNARY = ("negate", "not", "popcnt", "count-leading-zeros")
_SIGNED_UNARY = ("abs", "sign")
_COMPLEX_UNARY = ("negate", "exponential", "sqrt", "sign", "tanh", "sine", "cosine",
                  "log-plus-one", "log", "rsqrt", "exponential-minus-one", "logistic", "atan")


def unary(p: Program, v: Value) -> None:
    if v.type == "pred":
        p.add("pred", v.dims, f"not({v.name})")
    elif is_int(v.type):
        signed = _SIGNED_UNARY if is_signed(v.type) else ()
        p.add(v.type, v.dims, f"{p.choice(_INT_UNARY + signed)}({v.name})")
    elif is_complex(v.type):
        _complex_unary(p, v)
    elif p.chance(0.25):
        magnitude = p.add(v.type, v.dims, f"abs({v.name})", pooled=False)
        p.add(v.type, v.dims, f"{p.choice(_POSITIVE_UNARY)}({magnitude.name})")
    elif p.chance(0.1):
        unit = p.add(v.type, v.dims, f"tanh({v.name})", pooled=False)
        p.add(v.type, v.dims, f"{p.choice(_UNIT_UNARY)}({unit.name})")
    elif p.chance(0.1):
        p.add("pred", v.dims, f"is-finite({v.name})")
    else:
        p.add(v.type, v.dims, f"{p.choice(_FLOAT_UNARY)}({v.name})")


def _complex_unary(p: Program, v: Value) -> None:
    """A complex function, or the real parts out of a complex value: abs, real, imag."""
    part = COMPLEX[v.type]
    if p.chance(0.5):
        p.add(part, v.dims, f"{p.choice(('abs', 'real', 'imag'))}({v.name})")
    else:
        p.add(v.type, v.dims, f"{p.choice(_COMPLEX_UNARY)}({v.name})")


def binary(p: Program, v: Value) -> None:
    w = p.partner(v)
    if v.type == "pred":
        op = p.choice(("and", "or", "xor", "multiply", "maximum", "minimum"))
        p.add("pred", v.dims, f"{op}({v.name}, {w.name})")
    elif is_int(v.type):
        op = p.choice(("add", "subtract", "multiply", "maximum", "minimum", "and", "or",
                       "xor", "divide", "remainder", "shift-left", "shift-right-logical",
                       "shift-right-arithmetic", "mulhi"))
        p.add(v.type, v.dims, f"{op}({v.name}, {w.name})")
    elif is_complex(v.type):
        op = p.choice(("add", "subtract", "multiply", "divide"))
        p.add(v.type, v.dims, f"{op}({v.name}, {w.name})")
    elif p.chance(0.15):
        whole = {"f32": "c64", "f64": "c128"}.get(v.type)
        if whole:
            p.add(whole, v.dims, f"complex({finite(p, v).name}, {finite(p, w).name})")
    elif p.chance(0.3):
        _tame_binary(p, v, w)
    else:
        op = p.choice(("add", "subtract", "multiply", "maximum", "minimum", "atan2"))
        p.add(v.type, v.dims, f"{op}({v.name}, {w.name})")


def finite(p: Program, v: Value) -> Value:
    """v with its infinities and NaNs made 0: what a complex number is made of. With an
    infinite part, complex products and sums are NaN or infinite by the formula
    (C99's Annex G, the textbook one, BLAS's), which XLA does not fix."""
    if not is_float(v.type):
        return v
    ok = p.add("pred", v.dims, f"is-finite({v.name})", pooled=False)
    zero = p.splat(v.type, v.dims, 0)
    return p.add(v.type, v.dims, f"select({ok.name}, {v.name}, {zero.name})", pooled=False)


def _tame_binary(p: Program, v: Value, w: Value) -> None:
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


def compare(p: Program, v: Value) -> None:
    w = p.partner(v)
    directions = ("EQ", "NE") if is_complex(v.type) else ("EQ", "NE", "LT", "LE", "GT", "GE")
    direction = p.choice(directions)
    total = ", type=TOTALORDER" if is_float(v.type) and p.chance(0.2) else ""
    pred = p.add("pred", v.dims, f"compare({v.name}, {w.name}), direction={direction}{total}",
                 pooled=p.chance(0.4))
    if v.type != "pred":
        p.add(v.type, v.dims, f"select({pred.name}, {v.name}, {w.name})")


def select(p: Program, v: Value) -> None:
    """select(pred, a, b) by a pooled pred of v's dims, or by a scalar one."""
    preds = [q for q in p.pool if q.type == "pred" and q.dims == v.dims]
    if v.dims and p.chance(0.2):
        preds = [q for q in p.pool if q.type == "pred" and not q.dims]
    if not preds or v.type == "pred":
        return compare(p, v)
    w = p.partner(v)
    p.add(v.type, v.dims, f"select({p.choice(preds).name}, {w.name}, {v.name})")


def clamp(p: Program, v: Value) -> None:
    """clamp(lo, v, hi) with constant bounds (lo < hi), or with two other values as
    bounds (lo > hi and NaN bounds included: XLA's clamp is min(max(v, lo), hi))."""
    if v.type == "pred" or is_complex(v.type):
        return
    if p.chance(0.25):
        lo, hi = p.partner(v), p.partner(v)
        p.add(v.type, v.dims, f"clamp({lo.name}, {v.name}, {hi.name})")
        return
    low, high = ("-0.5", "1.25") if is_float(v.type) else (-2 if is_signed(v.type) else 1, 3)
    lo, hi = p.constant(v.type, low), p.constant(v.type, high)
    if p.chance(0.5) and v.dims:
        lo = p.add(v.type, v.dims, f"broadcast({lo.name}), dimensions={{}}", pooled=False)
    p.add(v.type, v.dims, f"clamp({lo.name}, {v.name}, {hi.name})")


_MANTISSA = {"bf16": 8, "f16": 11, "f32": 24, "c64": 24, "f64": 53, "c128": 53}


def convert(p: Program, v: Value) -> None:
    """To any type; a complex value to the other complex type or, through real or imag,
    to its parts (XLA has no complex-to-real convert). A computed float widened to a
    more precise type goes straight back: in the wider type, its last-bit differences
    between backends would exceed that type's tolerance."""
    if is_complex(v.type) and p.chance(0.5):
        p.add(COMPLEX[v.type], v.dims, f"{p.choice(('real', 'imag'))}({v.name})")
        return
    targets = tuple(COMPLEX) if is_complex(v.type) else CONVERTS
    target = p.choice([t for t in targets if t != v.type])
    widening = _MANTISSA.get(target, 0) > _MANTISSA.get(v.type, 99) and \
        not p.is_entry_parameter(v)
    source = finite(p, v) if is_complex(target) else v
    there = p.add(target, v.dims, f"convert({source.name})", pooled=not widening)
    if (widening or p.chance(0.6)) and not (is_complex(target) and not is_complex(v.type)):
        p.add(v.type, v.dims, f"convert({there.name})")


def scale(p: Program, v: Value) -> None:
    if v.type == "pred":
        return
    c = p.splat(v.type, v.dims, p.small(v.type, -3, 3))
    p.add(v.type, v.dims, f"{p.choice(('multiply', 'add'))}({v.name}, {c.name})")


def iota(p: Program, v: Value) -> None:
    """An iota of v's type (or, now and then, of another type converted) combined with v."""
    if not v.dims or v.type == "pred":
        return
    dim = p.int(0, len(v.dims) - 1)
    counted = v.type
    if p.chance(0.3):
        counted = p.choice(FLOATS + tuple(INTS) + tuple(COMPLEX))
        if is_complex(counted) and not is_complex(v.type):
            counted = v.type
    i = p.add(counted, v.dims, f"iota(), iota_dimension={dim}", pooled=False)
    if counted != v.type:
        i = p.add(v.type, v.dims, f"convert({i.name})", pooled=False)
    ops = ("add", "subtract", "multiply") if is_complex(v.type) else \
        ("add", "subtract", "maximum")
    p.add(v.type, v.dims, f"{p.choice(ops)}({v.name}, {i.name})")


# -- reductions ----------------------------------------------------------------------------
def _reduce_kind(p: Program, t: str) -> str:
    if t == "pred":
        return p.choice(("and", "or"))
    if is_complex(t):
        return p.choice(("add", "add", "mul"))
    return p.choice(("add", "add", "max", "min", "mul"))


def reduce(p: Program, v: Value, dims=None) -> Value | None:
    if not v.dims:
        return None
    if dims is None:
        shape = p.choice(("row", "column", "all", "subset"))
        rank = len(v.dims)
        dims = {"row": [rank - 1], "column": [0], "all": list(range(rank)),
                "subset": sorted(set(int(d) for d in p.rng.integers(rank, size=2)))}[shape]
    kind = _reduce_kind(p, v.type)
    init = p.add(v.type, (), f"constant({identity(kind, v.type)})", pooled=False)
    out = tuple(d for i, d in enumerate(v.dims) if i not in dims)
    dims_text = ",".join(map(str, dims))
    return p.add(v.type, out, f"reduce({v.name}, {init.name}), dimensions={{{dims_text}}}, "
                              f"to_apply={p.reducer(kind, v.type)}")


def reduce_back(p: Program, v: Value) -> None:
    """A reduction over one dimension broadcast back and combined with its input."""
    if not v.dims or v.type == "pred":
        return
    dim = p.int(0, len(v.dims) - 1)
    reduced = reduce(p, v, [dim])
    kept = ",".join(str(i) for i in range(len(v.dims)) if i != dim)
    back = p.add(v.type, v.dims, f"broadcast({reduced.name}), dimensions={{{kept}}}",
                 pooled=False)
    ops = ("subtract", "add") if is_complex(v.type) else ("subtract", "add", "maximum")
    p.add(v.type, v.dims, f"{p.choice(ops)}({v.name}, {back.name})")


def _row_stat(p: Program, v: Value, x: Value, kind: str) -> Value:
    """reduce(x) over the last dimension with `kind`, broadcast back to v's shape."""
    last = len(v.dims) - 1
    init = p.add(v.type, (), f"constant({identity(kind, v.type)})", pooled=False)
    reduced = p.add(v.type, v.dims[:-1], f"reduce({x.name}, {init.name}), "
                                         f"dimensions={{{last}}}, "
                                         f"to_apply={p.reducer(kind, v.type)}", pooled=False)
    kept = ",".join(map(str, range(last)))
    return p.add(v.type, v.dims, f"broadcast({reduced.name}), dimensions={{{kept}}}",
                 pooled=False)


def softmax(p: Program, v: Value) -> None:
    if not v.dims or not is_float(v.type):
        return
    top = _row_stat(p, v, v, "max")
    shifted = p.add(v.type, v.dims, f"subtract({v.name}, {top.name})", pooled=False)
    e = p.add(v.type, v.dims, f"exponential({shifted.name})", pooled=False)
    total = _row_stat(p, v, e, "add")
    p.add(v.type, v.dims, f"divide({e.name}, {total.name})")


def layernorm(p: Program, v: Value) -> None:
    if not v.dims or not is_float(v.type):
        return
    scale_ = p.splat(v.type, v.dims, 1 / v.dims[-1] if v.dims[-1] else 1)
    total = _row_stat(p, v, v, "add")
    mean = p.add(v.type, v.dims, f"multiply({total.name}, {scale_.name})", pooled=False)
    centred = p.add(v.type, v.dims, f"subtract({v.name}, {mean.name})", pooled=False)
    square = p.add(v.type, v.dims, f"multiply({centred.name}, {centred.name})", pooled=False)
    variance = p.add(v.type, v.dims, f"multiply({_row_stat(p, v, square, 'add').name}, "
                                     f"{scale_.name})", pooled=False)
    eps = p.splat(v.type, v.dims, "0.5")
    denominator = p.add(v.type, v.dims, f"add({variance.name}, {eps.name})", pooled=False)
    inverse = p.add(v.type, v.dims, f"rsqrt({denominator.name})", pooled=False)
    p.add(v.type, v.dims, f"multiply({centred.name}, {inverse.name})")


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


def argmax(p: Program, v: Value) -> None:
    """A variadic (value, index) reduce over the last dimension."""
    if not v.dims or v.type == "pred" or is_complex(v.type):
        return
    last = len(v.dims) - 1
    name = f"argmax_{v.type}"
    p.computations.setdefault(name, _argmax_text(name, v.type))
    index = p.add("s32", v.dims, f"iota(), iota_dimension={last}", pooled=False)
    lowest = p.add(v.type, (), f"constant({identity('max', v.type)})", pooled=False)
    zero = p.constant("s32", 0)
    out = v.dims[:-1]
    both = p.emit(f"({_dims(out, v.type)}, {_dims(out, 's32')})",
                  f"reduce({v.name}, {index.name}, {lowest.name}, {zero.name}), "
                  f"dimensions={{{last}}}, to_apply={name}")
    p.add(v.type, out, f"get-tuple-element({both}), index=0")
    p.add("s32", out, f"get-tuple-element({both}), index=1")


_WIDER = {"s8": ("s32", "s16"), "s16": ("s32", "s64"), "s32": ("s64",), "u8": ("u32", "s32"),
          "u16": ("u32", "u64"), "u32": ("u64",), "f16": ("f32",), "bf16": ("f32",),
          "f32": ("f64",)}
"""Wider result types a dot may declare (JAX's preferred_element_type)."""


def _wider(p: Program, v: Value) -> str:
    """v's type, or now and then a wider one for a dot's result: for floats only when v
    is a parameter (a computed operand's last-bit differences would show in the wider
    type's tolerance)."""
    if v.type not in _WIDER or not p.chance(0.25):
        return v.type
    if is_float(v.type) and not p.is_entry_parameter(v):
        return v.type
    return p.choice(_WIDER[v.type])


def dot(p: Program, v: Value) -> None:
    """v times a new operand (batched for rank 3; with a bias now and then), the result
    sometimes declared in a wider type."""
    if v.type == "pred" or len(v.dims) not in (2, 3):
        return
    n = p.int(1, 4)
    out = _wider(p, v)
    if len(v.dims) == 3:
        batch, m, k = v.dims
        w = p.parameter(v.type, (batch, k, n))
        p.add(out, (batch, m, n), f"dot({v.name}, {w.name}), lhs_batch_dims={{0}}, "
                                  "lhs_contracting_dims={2}, rhs_batch_dims={0}, "
                                  "rhs_contracting_dims={1}")
        return
    contract = p.int(0, 1)
    m, k = v.dims[1 - contract], v.dims[contract]
    w = p.parameter(v.type, (k, n))
    with_bias = p.chance(0.7)
    d = p.add(out, (m, n), f"dot({v.name}, {w.name}), lhs_contracting_dims={{{contract}}}, "
                           "rhs_contracting_dims={0}", pooled=not with_bias)
    if not with_bias:
        return
    bias = p.parameter(out, (n,))
    b = p.add(out, (m, n), f"broadcast({bias.name}), dimensions={{1}}", pooled=False)
    p.add(out, (m, n), f"add({d.name}, {b.name})")


# -- data movement -------------------------------------------------------------------------
def broadcast(p: Program, v: Value) -> None:
    """v with one new dimension inserted somewhere."""
    if len(v.dims) >= 3 or p.scope.scalar:
        return
    at = p.int(0, len(v.dims))
    out = v.dims[:at] + (p.int(1, 4),) + v.dims[at:]
    mapping = ",".join(str(i if i < at else i + 1) for i in range(len(v.dims)))
    p.add(v.type, out, f"broadcast({v.name}), dimensions={{{mapping}}}")


def slice_(p: Program, v: Value) -> None:
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


def pad(p: Program, v: Value) -> None:
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
    fill = p.constant(v.type, False if v.type == "pred" else p.small(v.type, -1, 2))
    p.add(v.type, out, f"pad({v.name}, {fill.name}), padding={'x'.join(config)}")


def concatenate(p: Program, v: Value) -> None:
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


def transpose(p: Program, v: Value) -> None:
    if len(v.dims) < 2:
        return
    perm = [int(i) for i in p.rng.permutation(len(v.dims))]
    out = [v.dims[i] for i in perm]
    p.add(v.type, out, f"transpose({v.name}), dimensions={{{','.join(map(str, perm))}}}")


def reshape(p: Program, v: Value) -> None:
    count = int(np.prod(v.dims)) if v.dims else 1
    if count == 0 or p.scope.scalar:
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


def reverse(p: Program, v: Value) -> None:
    if not v.dims:
        return
    dims = sorted(set(int(d) for d in p.rng.integers(len(v.dims), size=p.int(1, 2))))
    p.add(v.type, v.dims, f"reverse({v.name}), dimensions={{{','.join(map(str, dims))}}}")


_START_TYPES = ("s32", "s32", "s32", "s64", "u32", "u8", "s16", "u64")


def start(p: Program, t: str = "s32") -> Value:
    """A scalar start index of integer type t: a parameter (0..7, or anywhere in the
    type's range), a loop's counter (sometimes offset) or a constant, in range or not."""
    if p.scope.indices and p.chance(0.6) and t == "s32":
        counter = p.choice(p.scope.indices)
        if p.chance(0.5):
            return counter
        offset = p.constant("s32", p.int(-2, 2))
        return p.add("s32", (), f"add({counter.name}, {offset.name})", pooled=False)
    if p.scope.entry and p.chance(0.5):
        return p.parameter(t, ())
    return p.constant(t, p.small(t, -3, 6))


def dynamic_slice(p: Program, v: Value) -> None:
    if not v.dims or min(v.dims) == 0:
        return
    sizes = [p.int(1, d) for d in v.dims]
    t = p.choice(_START_TYPES)
    starts = ", ".join(start(p, t).name for _ in v.dims)
    p.add(v.type, sizes, f"dynamic-slice({v.name}, {starts}), "
                         f"dynamic_slice_sizes={{{','.join(map(str, sizes))}}}")


def dynamic_update_slice(p: Program, v: Value) -> None:
    if not v.dims or min(v.dims) == 0:
        return
    sizes = tuple(p.int(1, d) for d in v.dims)
    smaller = [q for q in p.pool if q.type == v.type and q.dims == sizes]
    update = p.choice(smaller) if smaller else p.parameter(v.type, sizes)
    t = p.choice(_START_TYPES)
    starts = ", ".join(start(p, t).name for _ in v.dims)
    p.add(v.type, v.dims, f"dynamic-update-slice({v.name}, {update.name}, {starts})")


def tuple_(p: Program, v: Value) -> None:
    """A tuple built and taken apart inside the computation."""
    w = p.partner(v)
    t = p.emit(f"({_dims(v.dims, v.type)}, {_dims(w.dims, w.type)})",
               f"tuple({v.name}, {w.name})")
    index = p.int(0, 1)
    element = (v, w)[index]
    p.add(element.type, element.dims, f"get-tuple-element({t}), index={index}")


STEPS = {
    "unary": unary, "binary": binary, "compare": compare, "select": select, "clamp": clamp,
    "convert": convert, "scale": scale, "iota": iota, "reduce": reduce,
    "reduce_back": reduce_back, "softmax": softmax, "layernorm": layernorm,
    "argmax": argmax, "dot": dot, "broadcast": broadcast, "slice": slice_, "pad": pad,
    "concatenate": concatenate, "transpose": transpose, "reshape": reshape,
    "reverse": reverse, "dynamic_slice": dynamic_slice,
    "dynamic_update_slice": dynamic_update_slice, "tuple": tuple_,
}
ELEMENTWISE_KINDS = ("unary", "binary", "compare", "select", "clamp", "convert", "scale")
"""Steps that keep a scalar a scalar (a map's body may use only these)."""
