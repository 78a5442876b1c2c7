"""argmax/argmin reduces run as two vectorised passes (`codegen/arg_reduce.py`):
recognised by what their reducer computes, and equal to the interpreter's
element-by-element evaluation for NaNs, infinities, ties and every dtype."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlapy
import xlapy.numpy as xnp
from xlapy.codegen.arg_reduce import arg_kind
from xlapy.hlo import parse

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _both(fn, x):
    got = np.asarray(xlapy.jit(fn, backend="cpu")(x))
    want = np.asarray(xlapy.jit(fn, backend="interpreter")(x))
    return got, want


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.uint8,
                                   np.int64])
@pytest.mark.parametrize("shape, axis", [((7, 33), 1), ((5, 1000), 1), ((40, 9), 0),
                                         ((3, 4, 17), 2), ((3, 4, 17), 1), ((6, 1), 1)])
@pytest.mark.parametrize("which", ["argmax", "argmin"])
def test_arg_reductions_agree_with_the_interpreter(dtype, shape, axis, which):
    rng = np.random.default_rng(hash((shape, axis)) % 1000)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    if np.dtype(dtype).kind == "f" and shape[1] > 1:
        x[0, 3 % shape[1]] = np.nan                    # a NaN wins
        x[1, :] = -np.inf                              # all equal: the first
        x.flat[-1] = np.inf
        if shape[0] > 3:
            x[2, :] = 1.0
            x[3, 1] = np.nan                            # the first of two NaNs
            x[3, 5 % shape[1]] = np.nan
        if shape[0] > 4:
            x[4, 0], x[4, 1] = -0.0, 0.0                # ±0 tie
    fn = getattr(xnp, which)
    got, want = _both(lambda a: fn(a, axis), x)
    np.testing.assert_array_equal(got, want)
    if np.dtype(dtype).kind != "f":
        np.testing.assert_array_equal(got, getattr(np, which)(x, axis))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.0, np.inf, -np.inf, np.nan]),
                min_size=1, max_size=70), st.integers(1, 3))
def test_ties_infinities_and_nans_pick_the_interpreters_index(values, rows):
    x = np.array([values] * rows, np.float32)
    x[rows - 1] = x[rows - 1][::-1]
    for which in ("argmax", "argmin"):
        got, want = _both(lambda a, w=which: getattr(xnp, w)(a, 1), x)
        np.testing.assert_array_equal(got, want)


ARG = """
HloModule a
r {{
  a = f32[] parameter(0)
  ia = s32[] parameter(1)
  b = f32[] parameter(2)
  ib = s32[] parameter(3)
  {body}
  ROOT t = (f32[], s32[]) tuple(v, i)
}}
ENTRY e {{
  x = f32[4,16] parameter(0)
  io = s32[4,16] iota(), iota_dimension={iota}
  init = f32[] constant({init})
  zero = s32[] constant(0)
  ROOT red = (f32[4], s32[4]) reduce(x, io, init, zero), dimensions={{1}}, to_apply=r
}}
"""
# the greater value, ties to the lower index: argmax except for NaNs
GREATER = """gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(ia, ib), direction=LT
  tie = pred[] and(eq, lt)
  pick = pred[] or(gt, tie)
  v = f32[] select(pick, a, b)
  i = s32[] select(pick, ia, ib)"""
# JAX's argmax reducer (NaN first), as `jnp.argmax` lowers
JAX = """na = pred[] compare(a, a), direction=NE
  nb = pred[] compare(b, b), direction=NE
  notnb = pred[] not(nb)
  anan = pred[] and(na, notnb)
  gt = pred[] compare(a, b), direction=GT
  g = pred[] or(anan, gt)
  eq = pred[] compare(a, b), direction=EQ
  both = pred[] and(na, nb)
  same = pred[] or(eq, both)
  lt = pred[] compare(ia, ib), direction=LT
  tie = pred[] and(same, lt)
  pick = pred[] or(g, tie)
  v = f32[] select(pick, a, b)
  i = s32[] select(pick, ia, ib)"""


@pytest.mark.parametrize("body, iota, init, kind", [
    (JAX, 1, "-inf", "max"),
    (GREATER, 1, "-inf", None),      # not NaN-first: left to the generic reducer
    (JAX, 0, "-inf", None),          # the index is not along the reduced dimension
    (JAX, 1, "0", None),             # an initial value that is not the identity
])
def test_recognised_by_behaviour_and_otherwise_left_alone(body, iota, init, kind):
    module = parse(ARG.format(body=body, iota=iota, init=init))
    reduce = module.entry_computation.root_instruction
    assert arg_kind(reduce) == kind
    x = np.random.default_rng(5).standard_normal((4, 16)).astype(np.float32)
    x[1, 3] = np.nan
    x[2, :] = 0.5
    want = xlapy.execute(module, [x], backend="interpreter")
    got = xlapy.compile(module, backend="cpu").execute(x)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
