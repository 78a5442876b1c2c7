"""Derivatives of data-movement ops (rules/structural.py): each checked against
central finite differences in both modes, with the dot-product test between
them, eagerly and under jit (check_grads), on hypothesis-drawn shapes and
parameters. Ops without a lax wrapper run from HLO text via tape.evaluate."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlapy
from xlapy import lax
from xlapy.autodiff.rules.nondifferentiable import UNSUPPORTED
from xlapy.autodiff.tape import evaluate
from xlapy.core.trace import as_array
from xlapy.errors import CompileError
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.parser import parse_module

from .check import check_grads

FEW = settings(max_examples=20)
dims = st.lists(st.integers(0, 3), min_size=0, max_size=3)
positive_dims = st.lists(st.integers(1, 3), min_size=1, max_size=3)
seeds = st.integers(0, 2**16)


def normal(seed, shape, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def hlo(text: str):
    """A function running the entry computation of `text` on its arguments."""
    computation = parse_module("HloModule m\n" + text).entry_computation

    def f(*args):
        return evaluate(computation, [as_array(a) for a in args])
    return f


# -- shape changes ------------------------------------------------------------------------
@FEW
@given(dims, st.data(), seeds)
def test_broadcast(shape, data, seed):
    new = data.draw(st.lists(st.integers(1, 3), max_size=2))
    out_rank = len(shape) + len(new)
    targets = data.draw(st.permutations(range(out_rank)))[:len(shape)]
    out = [0] * out_rank
    for size, d in zip(shape, targets):
        out[d] = size
    rest = iter(new)
    out = [next(rest) if d not in targets else s for d, s in enumerate(out)]
    check_grads(lambda x: lax.broadcast_in_dim(x, out, targets), [normal(seed, shape)])


@FEW
@given(positive_dims, st.integers(0, 2), seeds)
def test_reshape(shape, how, seed):
    size = int(np.prod(shape))
    new = [(size,), tuple(reversed(shape)), (1, size, 1)][how]
    check_grads(lambda x: lax.reshape(x, new), [normal(seed, shape)])


@FEW
@given(dims, st.data(), seeds)
def test_transpose(shape, data, seed):
    perm = data.draw(st.permutations(range(len(shape))))
    check_grads(lambda x: lax.transpose(x, perm), [normal(seed, shape)])


@FEW
@given(dims, st.data(), seeds)
def test_reverse(shape, data, seed):
    axes = data.draw(st.lists(st.sampled_from(range(len(shape))), unique=True)
                     if shape else st.just([]))
    check_grads(lambda x: lax.rev(x, axes), [normal(seed, shape)])


# -- slicing, padding, concatenation ------------------------------------------------------
@FEW
@given(positive_dims, st.data(), seeds)
def test_slice_with_strides(shape, data, seed):
    starts, limits, strides = [], [], []
    for size in shape:
        lo = data.draw(st.integers(0, size))
        starts.append(lo)
        limits.append(data.draw(st.integers(lo, size)))
        strides.append(data.draw(st.integers(1, 3)))
    check_grads(lambda x: lax.slice(x, starts, limits, strides), [normal(seed, shape)])


@FEW
@given(dims, st.data(), seeds)
def test_pad_negative_and_interior(shape, data, seed):
    config = []
    for size in shape:
        interior = data.draw(st.integers(0, 2))
        full = size + max(size - 1, 0) * interior
        low = data.draw(st.integers(-min(full, 2), 2))
        high = data.draw(st.integers(-min(full + low, 2), 2))
        config.append((low, high, interior))
    x, value = normal(seed, shape), normal(seed + 1, ())
    check_grads(lambda x, v: lax.pad(x, v, config), [x, value])


@FEW
@given(st.lists(st.integers(0, 3), min_size=1, max_size=3), positive_dims, st.data(), seeds)
def test_concatenate(sizes, shape, data, seed):
    axis = data.draw(st.integers(0, len(shape) - 1))
    arrays = []
    for i, size in enumerate(sizes):
        each = list(shape)
        each[axis] = size
        arrays.append(normal(seed + i, each))
    check_grads(lambda *xs: lax.concatenate(xs, axis), arrays)


def test_concatenate_with_an_inactive_operand():
    x = normal(0, (2, 3))
    check_grads(lambda x, n: lax.concatenate([x, lax.convert_element_type(n, x.dtype)], 0),
                [x, np.arange(6, dtype=np.int32).reshape(2, 3)])


# -- dynamic slices: clamped start indices --------------------------------------------------
@FEW
@given(positive_dims, st.data(), seeds)
def test_dynamic_slice_clamps(shape, data, seed):
    sizes = [data.draw(st.integers(0, s)) for s in shape]
    starts = [np.int32(data.draw(st.integers(-3, s + 3))) for s in shape]

    def f(x, *starts):
        return lax.dynamic_slice(x, starts, sizes, allow_negative_indices=False)
    check_grads(f, [normal(seed, shape), *starts])


@FEW
@given(positive_dims, st.data(), seeds)
def test_dynamic_update_slice_clamps(shape, data, seed):
    sizes = [data.draw(st.integers(0, s)) for s in shape]
    starts = [np.int32(data.draw(st.integers(-3, s + 3))) for s in shape]

    def f(x, update, *starts):
        return lax.dynamic_update_slice(x, update, starts, allow_negative_indices=False)
    check_grads(f, [normal(seed, shape), normal(seed + 1, sizes), *starts])


def test_dynamic_update_slice_of_a_constant_operand():
    base = normal(1, (4, 3))
    check_grads(lambda u: lax.dynamic_update_slice(base, u, (np.int32(3), np.int32(1))),
                [normal(0, (2, 2))])


# -- conversions ---------------------------------------------------------------------------
@FEW
@given(dims, seeds)
def test_convert_through_complex(shape, seed):
    def f(x):
        z = lax.mul(lax.convert_element_type(x, np.complex128), as_array(np.complex128(1 + 2j)))
        return lax.convert_element_type(z, np.float64), lax.imag(z)
    check_grads(f, [normal(seed, shape)])


def test_convert_from_int_is_inactive_and_to_int_has_zero_derivative():
    x, n = normal(0, (3,)) * 3, np.array([1, -2, 5], np.int32)
    check_grads(lambda x, n: lax.mul(x, lax.convert_element_type(n, np.float64)), [x, n])
    g = xlapy.grad(lambda x: lax.reduce_sum(lax.mul(
        x, lax.convert_element_type(lax.convert_element_type(x, np.int32), np.float64)), (0,)))
    np.testing.assert_array_equal(np.asarray(g(x)), np.trunc(x))


@pytest.mark.parametrize("use_jit", [False, True])
def test_grad_of_float32_is_float32(use_jit):
    def f(x):
        y = lax.pad(lax.slice(x, (0, 1), (3, 4), (2, 1)), np.float32(0), [(1, 0, 1), (0, 2, 0)])
        y = lax.broadcast_in_dim(lax.convert_element_type(y, np.float64), (2, 4, 5), (1, 2))
        return lax.convert_element_type(lax.reduce_sum(lax.rev(y, (0,)), (0, 1, 2)), np.float32)
    g = xlapy.grad(f)
    g = xlapy.jit(g) if use_jit else g
    x = normal(0, (3, 4), np.float32)
    out = g(x)
    assert out.dtype == np.float32 and out.shape == (3, 4)
    _, tangent = xlapy.jvp(f, (x,), (np.ones_like(x),))
    assert tangent.dtype == np.float32


def test_second_order_through_structural_rules():
    def f(x):
        y = lax.pad(lax.slice(x, (1, 0), (4, 3), (2, 1)), 0.5, [(1, -1, 1), (0, 1, 0)])
        return lax.reduce_sum(lax.mul(y, lax.sin(y)), (0, 1))
    check_grads(xlapy.grad(f), [normal(0, (4, 3))])


# -- ops from HLO text: copy, domain, add-dependency, bitcast, all-reduce, map -------------
ADD = """
add {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT s = f64[] add(a, b)
}
"""

IDENTITIES = ADD + """
ENTRY e {
  x = f64[2,3] parameter(0)
  c = f64[2,3] copy(x)
  d = f64[2,3] domain(c), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=0}}
  ar = f64[2,3] all-reduce(d), replica_groups={}, to_apply=add
  ROOT n = f64[2,3] multiply(ar, x)
}
"""


@FEW
@given(seeds)
def test_copy_domain_all_reduce(seed):
    check_grads(hlo(IDENTITIES), [normal(seed, (2, 3))])


VARIADIC_ALL_REDUCE = ADD + """
ENTRY e {
  x = f64[2,3] parameter(0)
  y = f64[4] parameter(1)
  ar = (f64[2,3], f64[4]) all-reduce(x, y), replica_groups={{0}}, to_apply=add
  a = f64[2,3] get-tuple-element(ar), index=0
  b = f64[4] get-tuple-element(ar), index=1
  ROOT t = (f64[2,3], f64[4]) tuple(a, b)
}
"""


def test_variadic_all_reduce():
    check_grads(hlo(VARIADIC_ALL_REDUCE), [normal(0, (2, 3)), normal(1, (4,))])


def test_all_reduce_with_a_max_reducer_is_refused():
    text = IDENTITIES.replace("add(a, b)", "maximum(a, b)")
    with pytest.raises(CompileError, match="not an add"):
        xlapy.grad(lambda x: lax.reduce_sum(hlo(text)(x), (0, 1)))(normal(0, (2, 3)))


def test_add_dependency_passes_the_value_through():
    # tokens exist only under a trace, so the function is jitted
    f = xlapy.jit(hlo("""
ENTRY e {
  x = f64[2,3] parameter(0)
  t = token[] after-all()
  d = f64[2,3] add-dependency(x, t)
  ROOT n = f64[2,3] sine(d)
}
"""))
    check_grads(f, [normal(0, (2, 3))])


BITCASTS = """
ENTRY e {
  x = f64[2,3] parameter(0)
  b = f64[3,2]{0,1} bitcast(x)
  t = f64[2,3] transpose(b), dimensions={1,0}
  f = f64[6] bitcast(t)
  ROOT r = (f64[3,2], f64[6]) tuple(b, f)
}
"""


def test_bitcast_as_reshape_and_with_a_layout():
    f = hlo(BITCASTS)
    x = normal(0, (2, 3))
    np.testing.assert_array_equal(np.asarray(f(x)[0]), x.T)  # {0,1} reads as a transpose
    check_grads(f, [x])


MAP = """
mapped {
  p0 = f64[] parameter(0)
  p1 = f64[] parameter(1)
  n = s32[] parameter(2)
  m = f64[] multiply(p0, p1)
  c = f64[] convert(n)
  sn = f64[] sine(p0)
  q = f64[] multiply(sn, c)
  ROOT r = f64[] add(m, q)
}

ENTRY e {
  x = f64[2,3] parameter(0)
  y = f64[2,3] parameter(1)
  k = s32[2,3] parameter(2)
  ROOT mp = f64[2,3] map(x, y, k), dimensions={0,1}, to_apply=mapped
}
"""


@FEW
@given(seeds)
def test_map_differentiates_the_scalar_computation(seed):
    k = np.random.default_rng(seed).integers(-3, 3, (2, 3)).astype(np.int32)
    check_grads(hlo(MAP), [normal(seed, (2, 3)), normal(seed + 1, (2, 3)), k])


def test_map_with_one_argument_differentiated():
    k = np.ones((2, 3), np.int32)
    check_grads(hlo(MAP), [normal(0, (2, 3)), normal(1, (2, 3)), k], wrt=(1,))


@pytest.mark.parametrize("op", [Opcode.DYNAMIC_RESHAPE, Opcode.SET_DIMENSION_SIZE])
def test_dynamic_shapes_are_refused_with_a_reason(op):
    assert "dynamic shapes" in UNSUPPORTED[op]


def test_set_dimension_size_error_names_the_reason():
    f = hlo("""
ENTRY e {
  x = f64[4] parameter(0)
  n = s32[] constant(2)
  ROOT s = f64[<=4] set-dimension-size(x, n), dimensions={0}
}
""")
    with pytest.raises(CompileError, match="dynamic shapes"):
        xlapy.jit(lambda x: xlapy.jvp(f, (x,), (x,))[1])(normal(0, (4,)))
