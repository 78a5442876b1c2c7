"""The CPU backend's reduce-window (an element generator) and select-and-scatter
(kernels/windows.py) against the interpreter: random windows (strides, padding
negative included, base and window dilation), layouts, reducers (single ops,
general bodies, variadic argmax), every element type; ties under ge/gt/le
selects, overlapping windows, the large-window loop, threads; pooling fused
with its producers and consumers; the JAX max-pool gradient. No instruction may
go to the interpreter fallback."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.backends.cpu.test_convolution import (  # noqa: F401  (_no_disk_cache: autouse)
    _no_disk_cache,
    module_arguments,
    run_both,
)
from xlapy.hlo.attributes import Window, WindowDimension
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Layout, Shape

REPO = Path(__file__).resolve().parents[3]

_BODIES = {
    "add": "ROOT r{n} = {t}[] add(a{n}, b{n})",
    "max": "ROOT r{n} = {t}[] maximum(a{n}, b{n})",
    "min": "ROOT r{n} = {t}[] minimum(a{n}, b{n})",
    "mul": "ROOT r{n} = {t}[] multiply(a{n}, b{n})",
    "and": "ROOT r{n} = {t}[] and(a{n}, b{n})",
    "or": "ROOT r{n} = {t}[] or(a{n}, b{n})",
    # a general body: max written as compare + select
    "select": "g{n} = pred[] compare(a{n}, b{n}), direction=GT\n"
              "  ROOT r{n} = {t}[] select(g{n}, a{n}, b{n})",
}
_INIT = {"add": "0", "max": "-inf", "min": "inf", "mul": "1", "and": "true", "or": "false",
         "select": "-inf"}
_INT_INIT = {"add": "0", "max": "-100", "min": "100", "mul": "1", "select": "-100"}


def reducer(name: str, kind: str, t: str) -> str:
    return (f"{name} {{\n  a{name} = {t}[] parameter(0)\n  b{name} = {t}[] parameter(1)\n  "
            + _BODIES[kind].format(n=name, t=t) + "\n}\n")


def comparator(name: str, direction: str, t: str) -> str:
    return (f"{name} {{\n  a{name} = {t}[] parameter(0)\n  b{name} = {t}[] parameter(1)\n"
            f"  ROOT r{name} = pred[] compare(a{name}, b{name}), direction={direction}\n}}\n")


def argmax(name: str, t: str) -> str:
    """(value, index) of the larger value, the lower index on ties."""
    return f"""{name} {{
  av{name} = {t}[] parameter(0)
  ai{name} = s32[] parameter(1)
  bv{name} = {t}[] parameter(2)
  bi{name} = s32[] parameter(3)
  gt{name} = pred[] compare(av{name}, bv{name}), direction=GT
  eq{name} = pred[] compare(av{name}, bv{name}), direction=EQ
  lt{name} = pred[] compare(ai{name}, bi{name}), direction=LT
  tie{name} = pred[] and(eq{name}, lt{name})
  take{name} = pred[] or(gt{name}, tie{name})
  v{name} = {t}[] select(take{name}, av{name}, bv{name})
  i{name} = s32[] select(take{name}, ai{name}, bi{name})
  ROOT r{name} = ({t}[], s32[]) tuple(v{name}, i{name})
}}
"""


def output_size(n: int, d: WindowDimension) -> int:
    dilated = (n - 1) * d.base_dilation + 1 if n else 0
    padded = dilated + d.padding_low + d.padding_high
    extent = (d.size - 1) * d.window_dilation + 1
    return 0 if padded < extent else (padded - extent) // d.stride + 1


def _no_negative_size(n: int, d: WindowDimension) -> WindowDimension:
    """`d`, without its padding if that crops more than the whole (dilated) input."""
    if (n - 1) * d.base_dilation + 1 + d.padding_low + d.padding_high >= 0:
        return d
    return WindowDimension(d.size, d.stride, 0, 0, d.window_dilation, d.base_dilation)


class Module:
    """Cases collected into one module (one compilation), outputs in a tuple."""

    def __init__(self):
        self.computations, self.lines, self.outputs, self.types = [], [], [], []
        self.parameters = 0

    def parameter(self, name: str, shape: Shape) -> None:
        self.lines.append(f"  {name} = {shape.to_text()} parameter({self.parameters})")
        self.parameters += 1

    def output(self, name: str, shape_text: str, types: list[str]) -> None:
        self.outputs.append((name, shape_text))
        self.types += types

    def text(self, name: str) -> str:
        shapes = ", ".join(s for _, s in self.outputs)
        root = f"  ROOT t = ({shapes}) tuple({', '.join(n for n, _ in self.outputs)})"
        return (f"HloModule {name}\n\n" + "\n".join(self.computations) + "\nENTRY e {\n"
                + "\n".join(self.lines + [root]) + "\n}\n")


@st.composite
def array_shape(draw, t: str, min_size: int = 1) -> Shape:
    rank = draw(st.integers(1, 4))
    dims = [draw(st.integers(min_size, 6)) for _ in range(rank)]
    return Shape.array(PrimitiveType.from_text(t), dims,
                       Layout(tuple(draw(st.permutations(range(rank))))))


@st.composite
def reduce_window_case(draw, m: Module, i: int, t: str) -> None:
    shape = draw(array_shape(t))
    dims = Window(tuple(_no_negative_size(n, WindowDimension(
        draw(st.sampled_from([1, 1, 2, 3])), draw(st.integers(1, 3)), draw(st.integers(-1, 2)),
        draw(st.integers(-1, 2)), draw(st.sampled_from([1, 1, 2])),
        draw(st.sampled_from([1, 1, 2])))) for n in shape.dimensions))
    out = Shape.array(shape.element_type, [output_size(n, d) for n, d in
                                           zip(shape.dimensions, dims.dimensions)],
                      Layout(tuple(draw(st.permutations(range(shape.rank))))))
    m.parameter(f"x{i}", shape)
    t_ = PrimitiveType.from_text(t)
    if t_.is_float and draw(st.booleans()):     # variadic: argmax over an index operand
        m.parameter(f"j{i}", Shape.array(PrimitiveType.S32, shape.dimensions, shape.layout))
        m.computations.append(argmax(f"am{i}", t))
        m.lines += [f"  z{i} = {t}[] constant(-inf)", f"  zi{i} = s32[] constant(-1)"]
        index = Shape.array(PrimitiveType.S32, out.dimensions, out.layout)
        text = f"({out.to_text()}, {index.to_text()})"
        m.lines.append(f"  o{i} = {text} reduce-window(x{i}, j{i}, z{i}, zi{i}), "
                       f"window={dims.to_text()}, to_apply=am{i}")
        m.output(f"o{i}", text, [t, "s32"])
        return
    if t_.is_pred:
        kind = draw(st.sampled_from(["and", "or"]))
    elif t_.is_complex:
        kind = draw(st.sampled_from(["add", "mul"]))
    else:
        kind = draw(st.sampled_from(["add", "max", "min", "mul", "select"]))
    init = "(1, 0)" if t_.is_complex and kind == "mul" else "(0, 0)" if t_.is_complex else \
        (_INIT if t_.is_float or t_.is_pred else _INT_INIT)[kind]
    m.computations.append(reducer(f"red{i}", kind, t))
    m.lines += [f"  z{i} = {t}[] constant({init})",
                f"  o{i} = {out.to_text()} reduce-window(x{i}, z{i}), window={dims.to_text()}, "
                f"to_apply=red{i}"]
    m.output(f"o{i}", out.to_text(), [t])


def tied_arguments(text: str, seed: int) -> list:
    """Floats rounded to halves (ties in windows), small integers, indices."""
    args = module_arguments(text, seed)
    return [np.round(a * 2) / 2 if a.dtype.kind == "f" else a for a in args]


@settings(max_examples=8)
@given(data=st.data(), t=st.sampled_from(["f32", "f32", "f64", "f16", "bf16", "s32", "s8",
                                          "pred", "c64"]))
def test_random_reduce_windows_match_the_interpreter(data, t):
    m = Module()
    for i in range(data.draw(st.integers(3, 5))):
        data.draw(reduce_window_case(m, i, t))
    text = m.text("reduce_windows")
    run_both(text, tied_arguments(text, 0), m.types)


@st.composite
def select_and_scatter_case(draw, m: Module, i: int, t: str) -> None:
    shape = draw(array_shape(t))
    dims = Window(tuple(WindowDimension(
        draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(0, 2)),
        draw(st.integers(0, 2))) for _ in shape.dimensions))
    source = Shape.array(shape.element_type, [output_size(n, d) for n, d in
                                              zip(shape.dimensions, dims.dimensions)],
                         Layout(tuple(draw(st.permutations(range(shape.rank))))))
    m.parameter(f"x{i}", shape)
    m.parameter(f"src{i}", source)
    direction = draw(st.sampled_from(["GE", "GT", "LE"]))
    kind = draw(st.sampled_from(["add", "max", "mul"]))
    m.computations += [comparator(f"sel{i}", direction, t), reducer(f"sct{i}", kind, t)]
    m.lines += [f"  z{i} = {t}[] constant({'1' if kind == 'mul' else '0'})",
                f"  o{i} = {shape.to_text()} select-and-scatter(x{i}, src{i}, z{i}), "
                f"window={dims.to_text()}, select=sel{i}, scatter=sct{i}"]
    m.output(f"o{i}", shape.to_text(), [t])


@settings(max_examples=6)
@given(data=st.data(), t=st.sampled_from(["f32", "f32", "s32", "f16"]))
def test_random_select_and_scatter_match_the_interpreter(data, t):
    m = Module()
    for i in range(data.draw(st.integers(3, 5))):
        data.draw(select_and_scatter_case(m, i, t))
    text = m.text("select_and_scatter")
    run_both(text, tied_arguments(text, 1), m.types)


MAX_F32 = reducer("max_f32", "max", "f32") + reducer("add_f32", "add", "f32") + \
    comparator("ge_f32", "GE", "f32")


def test_pooling_fuses_with_its_producer_and_consumer():
    """relu -> max pool -> exp runs as one fusion; average pool (sum / count) too."""
    text = f"""HloModule pools

{MAX_F32}
ENTRY e {{
  x = f32[2,10,10,4] parameter(0)
  z = f32[] constant(0)
  zb = f32[2,10,10,4] broadcast(z), dimensions={{}}
  relu = f32[2,10,10,4] maximum(x, zb)
  ninf = f32[] constant(-inf)
  pool = f32[2,5,5,4] reduce-window(relu, ninf), window={{size=1x2x2x1 stride=1x2x2x1}}, to_apply=max_f32
  e = f32[2,5,5,4] exponential(pool)
  sum = f32[2,10,10,4] reduce-window(x, z), window={{size=1x3x3x1 pad=0_0x1_1x1_1x0_0}}, to_apply=add_f32
  nine = f32[] constant(9)
  nb = f32[2,10,10,4] broadcast(nine), dimensions={{}}
  avg = f32[2,10,10,4] divide(sum, nb)
  ROOT t = (f32[2,5,5,4], f32[2,10,10,4]) tuple(e, avg)
}}
"""
    executable = run_both(text, module_arguments(text, 2), ["f32", "f32"])
    fused = [i.name for c in executable.module.computations for i in c.instructions
             if i.opcode is Opcode.REDUCE_WINDOW and c is not executable.module.entry_computation]
    assert "pool" in fused


def test_large_windows_threads_and_scalars():
    """9x9 and 7x7 windows (loops, not straight-line code), pooling big enough to
    split between threads, a window split over dimension 0 with stride 2, rank 0."""
    text = f"""HloModule big

{MAX_F32}
ENTRY e {{
  x = f32[2,12,12,3] parameter(0)
  s = f32[2,6,6,3] parameter(1)
  z = f32[] constant(0)
  a = f32[2,12,12,3] select-and-scatter(x, s, z), window={{size=1x9x9x1 stride=1x2x2x1 pad=0_0x3_4x3_4x0_0}}, select=ge_f32, scatter=add_f32
  y = f32[8,64,64,16] parameter(2)
  ys = f32[8,32,32,16] parameter(3)
  g = f32[8,64,64,16] select-and-scatter(y, ys, z), window={{size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_0x1_0x0_0}}, select=ge_f32, scatter=add_f32
  ninf = f32[] constant(-inf)
  p = f32[8,32,32,16] reduce-window(y, ninf), window={{size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_0x1_0x0_0}}, to_apply=max_f32
  q = f32[2,12,12,3] reduce-window(x, z), window={{size=1x7x7x1 pad=0_0x3_3x3_3x0_0}}, to_apply=add_f32
  v = f32[9,5] parameter(4)
  vs = f32[5,5] parameter(5)
  h = f32[9,5] select-and-scatter(v, vs, z), window={{size=1x2 stride=2x1 pad=0_0x1_0}}, select=ge_f32, scatter=add_f32
  w = f32[] parameter(6)
  ws = f32[] parameter(7)
  k = f32[] select-and-scatter(w, ws, z), window={{}}, select=ge_f32, scatter=add_f32
  ROOT t = (f32[2,12,12,3], f32[8,64,64,16], f32[8,32,32,16], f32[9,5], f32[], f32[2,12,12,3]) tuple(a, g, p, h, k, q)
}}
"""
    run_both(text, tied_arguments(text, 3), ["f32"] * 6)


def test_jax_max_pool_gradient():
    text = (REPO / "tests" / "hlo" / "corpus" / "jax_maxpool_grad.hlo").read_text()
    run_both(text, tied_arguments(text, 4), ["f32", "f32"])


@pytest.mark.parametrize("t", ["f32", "s32"])
def test_empty_windows(t):
    """An empty operand: every window is empty (init); an empty source: nothing scattered."""
    init = "-inf" if t == "f32" else "-100"
    text = f"""HloModule empty_{t}

{reducer("mx", "max", t)}{comparator("ge", "GE", t)}{reducer("ad", "add", t)}
ENTRY e {{
  x = {t}[0,4] parameter(0)
  z = {t}[] constant({init})
  r = {t}[2,2] reduce-window(x, z), window={{size=1x2 stride=1x2 pad=1_1x0_0}}, to_apply=mx
  y = {t}[3,4] parameter(1)
  s = {t}[0,2] parameter(2)
  zero = {t}[] constant(0)
  g = {t}[3,4] select-and-scatter(y, s, zero), window={{size=4x2 stride=1x2}}, select=ge, scatter=ad
  ROOT t = ({t}[2,2], {t}[3,4]) tuple(r, g)
}}
"""
    run_both(text, module_arguments(text, 5), [t, t])
