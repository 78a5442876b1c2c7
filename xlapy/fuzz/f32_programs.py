"""Random HLO programs for pass tests: f32 arrays of random small shapes
through elementwise chains, broadcasts, reductions (some broadcast back),
dots with bias, slices, concatenates, selects, pads, transposes, reshapes.
Seed-driven, so a failure names the seed that reproduces it."""

from __future__ import annotations

import numpy as np

REDUCERS = """
add_f32 {
  ra = f32[] parameter(0)
  rb = f32[] parameter(1)
  ROOT rc = f32[] add(ra, rb)
}

max_f32 {
  rd = f32[] parameter(0)
  re = f32[] parameter(1)
  ROOT rf = f32[] maximum(rd, re)
}
"""



def module(body: str, name: str = "m") -> str:
    return f"HloModule {name}\n{REDUCERS}\nENTRY main {{\n{body}\n}}\n"


def _dims(dims, element_type: str = "f32") -> str:
    return element_type + "[" + ",".join(map(str, dims)) + "]"


def random_program(seed: int) -> str:
    """A random module over f32 arrays: elementwise chains, broadcasts, reductions
    (some broadcast back), dots with bias, slices, concatenates, selects, pads,
    transposes, reshapes; one or several outputs."""
    rng = np.random.default_rng(seed)
    base = tuple(int(d) for d in rng.integers(1, 5, size=int(rng.integers(1, 3))))
    lines: list[str] = []
    pool: list[tuple[str, tuple]] = []
    params = [0]

    def add(dims, text, pooled=True, element_type="f32"):
        name = f"v{len(lines)}"
        lines.append(f"  {name} = {_dims(dims, element_type)} {text}")
        if pooled:
            pool.append((name, dims))
        return name

    def parameter(dims):
        params[0] += 1
        return add(dims, f"parameter({params[0] - 1})", pooled=False)

    for _ in range(int(rng.integers(1, 4))):
        pool.append((parameter(base), base))
    for _ in range(int(rng.integers(2, 14))):
        name, dims = pool[int(rng.integers(len(pool)))]
        same = [p for p in pool if p[1] == dims]
        other = same[int(rng.integers(len(same)))][0]
        kind = rng.choice(["unary", "binary", "binary", "reduce", "row_diamond", "scale",
                           "select", "slice", "concat", "dot", "transpose", "reshape", "pad"])
        _GROW[kind](rng, add, parameter, name, dims, other)
    outputs = list(dict.fromkeys([pool[-1]] + [pool[int(i)] for i in
                                               rng.integers(len(pool), size=2)]))
    outputs = outputs[:int(rng.integers(1, len(outputs) + 1))]
    shapes = ", ".join(_dims(d) for _, d in outputs)
    lines.append(f"  ROOT out = ({shapes}) tuple({', '.join(n for n, _ in outputs)})")
    return module("\n".join(lines), f"random_{seed}")


def _unary(rng, add, parameter, name, dims, other):
    op = rng.choice(["negate", "exponential", "tanh", "abs", "sine", "floor", "sqrt"])
    add(dims, f"{op}({name})")


def _binary(rng, add, parameter, name, dims, other):
    op = rng.choice(["add", "multiply", "subtract", "maximum", "divide", "minimum"])
    if op == "divide":   # by 1 + |other|: a sum that cancels to ~0 (its size and sign
        # rounding noise, which reassociation may change) must not become the divisor
        one = add((), "constant(1)", pooled=False)
        ones = add(dims, f"broadcast({one}), dimensions={{}}", pooled=False)
        magnitude = add(dims, f"abs({other})", pooled=False)
        other = add(dims, f"add({magnitude}, {ones})", pooled=False)
    add(dims, f"{op}({name}, {other})")


def _reduce(rng, add, parameter, name, dims, other, dim=None):
    if not dims:
        return None
    dim = int(rng.integers(len(dims))) if dim is None else dim
    reducer, init = (("add_f32", "0"), ("max_f32", "-inf"))[int(rng.integers(2))]
    zero = add((), f"constant({init})", pooled=False)
    out = tuple(d for i, d in enumerate(dims) if i != dim)
    return add(out, f"reduce({name}, {zero}), dimensions={{{dim}}}, to_apply={reducer}")


def _row_diamond(rng, add, parameter, name, dims, other):
    reduced = _reduce(rng, add, parameter, name, dims, other, dim=len(dims) - 1)
    if reduced is not None:
        kept = ",".join(str(i) for i in range(len(dims) - 1))
        back = add(dims, f"broadcast({reduced}), dimensions={{{kept}}}")
        add(dims, f"subtract({name}, {back})")


def _scale(rng, add, parameter, name, dims, other):
    c = add((), f"constant({int(rng.integers(-3, 4))})", pooled=False)
    b = add(dims, f"broadcast({c}), dimensions={{}}")
    add(dims, f"multiply({name}, {b})")


def _select(rng, add, parameter, name, dims, other):
    pred = add(dims, f"compare({name}, {other}), direction=GT", False, "pred")
    add(dims, f"select({pred}, {name}, {other})")


def _slice(rng, add, parameter, name, dims, other):
    if dims and dims[0] > 1:
        ranges = ", ".join([f"[1:{dims[0]}]"] + [f"[0:{d}]" for d in dims[1:]])
        add((dims[0] - 1,) + dims[1:], f"slice({name}), slice={{{ranges}}}")


def _concat(rng, add, parameter, name, dims, other):
    if dims:
        add((2 * dims[0],) + dims[1:], f"concatenate({name}, {other}), dimensions={{0}}")


def _dot(rng, add, parameter, name, dims, other):
    if len(dims) != 2:
        return
    n = int(rng.integers(1, 4))
    w = parameter((dims[1], n))
    d = add((dims[0], n), f"dot({name}, {w}), lhs_contracting_dims={{1}}, "
                          "rhs_contracting_dims={0}")
    if rng.random() < 0.7:
        bias = parameter((n,))
        b = add((dims[0], n), f"broadcast({bias}), dimensions={{1}}")
        add((dims[0], n), f"add({d}, {b})")


def _transpose(rng, add, parameter, name, dims, other):
    if len(dims) == 2:
        add(dims[::-1], f"transpose({name}), dimensions={{1,0}}")


def _reshape(rng, add, parameter, name, dims, other):
    if dims:
        add((int(np.prod(dims)),), f"reshape({name})")


def _pad(rng, add, parameter, name, dims, other):
    if dims:
        zero = add((), "constant(0)", pooled=False)
        padding = "x".join(["1_0"] + ["0_0"] * (len(dims) - 1))
        add((dims[0] + 1,) + dims[1:], f"pad({name}, {zero}), padding={padding}")


_GROW = {"unary": _unary, "binary": _binary, "reduce": _reduce, "row_diamond": _row_diamond,
         "scale": _scale, "select": _select, "slice": _slice, "concat": _concat, "dot": _dot,
         "transpose": _transpose, "reshape": _reshape, "pad": _pad}
