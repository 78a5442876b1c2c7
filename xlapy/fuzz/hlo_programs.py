"""Random HLO programs for differential tests of compiled backends.

Extends the pass tests' f32 generator (`f32_programs`, every seventh
program) to the shapes of bugs a code generator has:

- every element type: pred, s8-s64, u8-u64, f16, bf16, f32, f64, c64, c128,
  with the ops XLA defines on each and conversions between all of them
  (`hlo_programs_steps`): integer edge cases (division by zero, shifts past
  the width, wrapping, saturating converts), complex arithmetic and parts,
  boolean arithmetic, iotas of every numeric type;
- reductions over rows, columns, every dimension or any subset, an
  argmax-style variadic reduce, softmax and layernorm diamonds, dots with
  bias (batched too), strided slices, pads with interior and negative
  edges, concatenates, transposes, reshapes, reverses, dynamic slices and
  updates with in- and out-of-range starts, tuples;
- sort, gather/scatter out of range, reduce-window, select-and-scatter,
  convolution, map, reduce-precision, bitcast-convert, rng-bit-generator,
  copies into other layouts (`hlo_programs_ops`);
- while loops, conditionals and calls whose bodies are grown with the same
  steps (`hlo_programs_control`).

Roots are one array, a tuple or a nested tuple. Shapes are mostly tiny;
some programs have a minor dimension long enough for vector loops, a few
enough elements for the parallel path. Numerically touchy ops get tame
operands, so results differ between backends only by rounding;
`compare.mismatch` says by how much. Seed-driven: a failure names its seed.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from xlapy.fuzz.f32_programs import _dims
from xlapy.fuzz.f32_programs import random_program as f32_program
from xlapy.fuzz.hlo_program_builder import Program
from xlapy.fuzz.hlo_programs_control import STEPS as CONTROL_STEPS
from xlapy.fuzz.hlo_programs_ops import STEPS as OPS_STEPS
from xlapy.fuzz.hlo_programs_steps import STEPS as BASIC_STEPS

PRIMARY = (("f32", 0.24), ("f64", 0.14), ("s32", 0.16), ("bf16", 0.08), ("f16", 0.08),
           ("u8", 0.03), ("s64", 0.03), ("u32", 0.03), ("s16", 0.03), ("u16", 0.03),
           ("u64", 0.03), ("c64", 0.06), ("c128", 0.04), ("pred", 0.02))
"""The element type of a program's parameters, and how often."""

STEPS = {**BASIC_STEPS, **OPS_STEPS, **CONTROL_STEPS}
KINDS = ("unary", "unary", "binary", "binary", "binary", "compare", "select", "clamp",
         "convert", "scale", "iota", "reduce", "reduce", "reduce_back", "softmax",
         "layernorm", "argmax", "dot", "dot", "broadcast", "slice", "pad", "concatenate",
         "transpose", "reshape", "reverse", "dynamic_slice", "dynamic_update_slice", "tuple",
         "while", "while", "conditional", "conditional", "call", "sort", "gather", "scatter",
         "reduce_window", "select_and_scatter", "convolution", "map", "reduce_precision",
         "bitcast_convert", "rng_bit_generator", "copy_layout", "barrier",
         "stochastic_convert", "reduce_pair")
"""The steps a program draws from (a name twice: drawn twice as often)."""


def random_program(seed: int) -> str:
    """The module text of program `seed`: every seventh one is the pass tests'
    f32 program, the others this module's typed ones."""
    if seed % 7 == 3:
        return f32_program(seed)
    p = Program(seed, STEPS, KINDS)
    primary = p.rng.choice([t for t, _ in PRIMARY], p=[w for _, w in PRIMARY])
    base = _base_dims(p, primary)
    for _ in range(p.int(1, 3)):
        p.parameter(primary, base, pooled=True)
    p.grow(p.int(3, 14))
    _root(p)
    return p.module_text()


_BIG = ("f64", "c128", "s32", "s64", "u32", "u64", "s16", "u16")
"""Types whose sums stay exact enough for the parallel path's big shapes."""


def _base_dims(p: Program, primary: str) -> tuple:
    """The parameters' dimensions: mostly tiny; sometimes a minor dimension long
    enough for vector loops and their remainders, or (f64, c128 and integers
    of 16 bits and more, whose sums stay exact enough) enough elements for the
    parallel path; rarely empty."""
    rank = p.int(0, 3)
    base = tuple(p.int(1, 5) for _ in range(rank))
    if rank and p.chance(0.03):
        return base[:-1] + (0,)
    if primary in _BIG and p.chance(0.04):
        return p.choice(((64, 5000), (3, 100003), (600, 600)))
    if rank and p.chance(0.2):   # one past a vector, the remainders of 8, 16 and 32 lanes
        narrow = primary in ("f16", "bf16")   # their sums round too coarsely beyond that
        return base[:-1] + (p.choice((9, 17) if narrow else (9, 17, 33, 100)),)
    return base


def _root(p: Program) -> None:
    """One array, a tuple of a few values, or a tuple whose first two are nested."""
    pool = p.pool
    outputs = list(dict.fromkeys([pool[-1]] + [p.choice(pool) for _ in range(3)]))
    outputs = outputs[:p.int(1, len(outputs))]
    if len(outputs) == 1 and p.chance(0.4):
        p.mark_root(outputs[0])
        return
    shapes = [_dims(v.dims, v.type) for v in outputs]
    names = [v.name for v in outputs]
    if len(outputs) >= 3 and p.chance(0.3):
        inner = f"({', '.join(shapes[:2])})"
        shapes[:2] = [inner]
        names[:2] = [p.emit(inner, f"tuple({names[0]}, {names[1]})")]
    p.scope.lines.append(f"  ROOT out = ({', '.join(shapes)}) tuple({', '.join(names)})")


def arguments(module, seed: int) -> list:
    """Inputs for the module's parameters: normal floats, sometimes with special
    values among them (infinities, NaN and -0; or, in other programs, subnormals,
    the smallest normal and -0); complex numbers with normal parts; integers small
    (0..7, in-range indices) or, in a third of the programs, anywhere in the type's
    range."""
    rng = np.random.default_rng(seed)
    wide = rng.random() < 0.33
    special = rng.random() < 0.15
    tiny = rng.random() < 0.4
    return [_argument(p.shape, rng, wide, special and (1 + tiny))
            for p in module.entry_computation.parameters]


def _argument(shape, rng, wide: bool, special: int) -> np.ndarray:
    """special: 0 none, 1 infinities and NaN, 2 subnormals."""
    dims, dtype = shape.dimensions, shape.dtype
    if dtype == np.bool_:
        return rng.random(dims) < 0.5
    if dtype.kind in "iu":
        if wide:
            limits = np.iinfo(dtype)
            return rng.integers(limits.min, limits.max, size=dims, dtype=dtype,
                                endpoint=True)
        return rng.integers(0, 8, size=dims).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(dims) + 1j * rng.standard_normal(dims)).astype(dtype)
    values = rng.standard_normal(dims)
    if special and values.size:
        picks = rng.integers(values.size, size=3)
        values.flat[picks] = rng.choice(_specials(dtype)[special - 1], size=3)
    return values.astype(dtype)


def _specials(dtype) -> tuple[list[float], list[float]]:
    """Values where float semantics have edges, in two sets no program mixes:
    infinities, NaN and -0; subnormals, the smallest normal and -0. Mixed, an
    infinity times a product that underflowed in one order but not another is NaN
    or infinite by the order of a reduction, which XLA leaves to the backend. Not
    the largest finite value: whether a sum of products near it overflows depends
    on the precision and order of accumulation (the interpreter sums f32 dots in
    f64)."""
    info = ml_dtypes.finfo(dtype)
    return ([np.inf, -np.inf, np.nan, -0.0],
            [3 * float(info.smallest_subnormal), -float(info.tiny), -0.0])
