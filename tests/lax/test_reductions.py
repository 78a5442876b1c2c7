"""lax.reduce and the monoid reductions, argmax/argmin: against NumPy, eagerly
and under jit, and the reducer cache."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xlapy
from tests.frontend_util import both
from xlapy import config, lax
from xlapy.core.errors import ConcretizationError
from xlapy.core.trace import as_array
from xlapy.hlo.opcode import Opcode
from xlapy.lax import reductions

BF16 = np.dtype(ml_dtypes.bfloat16)
RTOL = {np.dtype(np.float16): 2e-3, BF16: 2e-2, np.dtype(np.float32): 2e-6,
        np.dtype(np.float64): 1e-13, np.dtype(np.complex64): 2e-6}




def assert_matches(actual, expected, dtype=None):
    actual, expected = np.asarray(actual), np.asarray(expected)
    dtype = np.dtype(dtype or expected.dtype)
    assert actual.dtype == dtype, (actual.dtype, dtype)
    assert actual.shape == expected.shape
    if dtype in RTOL:
        wide = np.complex128 if dtype.kind == "c" else np.float64
        np.testing.assert_allclose(actual.astype(wide), expected.astype(wide),
                                   rtol=RTOL[dtype], atol=RTOL[dtype])
    else:
        np.testing.assert_array_equal(actual, expected)


def check(fn, args, expected):
    """fn(*args) equals `expected` eagerly and under jit, and the two agree."""
    expected = expected if isinstance(expected, (tuple, list)) else [expected]
    eager, jitted = both(fn, *args)
    for e, j, want in zip(eager, jitted, expected):
        assert_matches(e, want)
        assert_matches(j, want)
        assert_matches(j, e)


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        lo, hi = (0, 4) if dtype.kind == "u" else (-3, 4)
        return rng.integers(lo, hi, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _wide(x):
    return x.astype(np.float32) if x.dtype in (BF16, np.float16) else x


# -- monoid reductions --------------------------------------------------------------------

SHAPES_AXES = [((5,), (0,)), ((3, 4), (1,)), ((3, 4), (0, 1)), ((2, 3, 4), (0, 2)),
               ((2, 3, 4), ()), ((0, 3), (0,))]


@pytest.mark.parametrize("shape,axes", SHAPES_AXES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, BF16])
def test_reduce_sum(shape, axes, dtype):
    x = sample(shape, dtype)
    expected = np.sum(_wide(x), axis=axes).astype(dtype)
    check(lambda x: lax.reduce_sum(x, axes), [x], expected)


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.complex64, np.int8])
def test_reduce_sum_more_dtypes(dtype):
    x = sample((3, 5), dtype)
    check(lambda x: lax.reduce_sum(x, (1,)), [x], np.sum(_wide(x), axis=1).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64])
def test_reduce_prod(dtype):
    x = sample((3, 4), dtype, seed=1)
    check(lambda x: lax.reduce_prod(x, (0,)), [x], np.prod(x, axis=0).astype(dtype))


@pytest.mark.parametrize("shape,axes", SHAPES_AXES[:4])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.float16, np.bool_])
def test_reduce_max_min(shape, axes, dtype):
    x = sample(shape, dtype)
    check(lambda x: (lax.reduce_max(x, axes), lax.reduce_min(x, axes)), [x],
          [np.max(x, axis=axes), np.min(x, axis=axes)])


def test_reduce_max_min_nan_and_empty():
    x = np.array([[1.0, np.nan, 3.0], [1.0, 2.0, -np.inf]], np.float32)
    check(lambda x: (lax.reduce_max(x, (1,)), lax.reduce_min(x, (1,))), [x],
          [np.array([np.nan, 2.0], np.float32), np.array([np.nan, -np.inf], np.float32)])
    empty = np.zeros((0, 2), np.int32)
    check(lambda x: (lax.reduce_max(x, (0,)), lax.reduce_min(x, (0,))), [empty],
          [np.full(2, np.iinfo(np.int32).min, np.int32), np.full(2, np.iinfo(np.int32).max,
                                                                  np.int32)])


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.uint8])
def test_reduce_logical(dtype):
    x = sample((4, 5), dtype, seed=3)
    if dtype == np.bool_:
        expected = [np.all(x, 0), np.any(x, 0), np.logical_xor.reduce(x, 0)]
    else:
        expected = [np.bitwise_and.reduce(x, 0), np.bitwise_or.reduce(x, 0),
                    np.bitwise_xor.reduce(x, 0)]
    check(lambda x: (lax.reduce_and(x, (0,)), lax.reduce_or(x, (0,)), lax.reduce_xor(x, (0,))),
          [x], expected)


def test_negative_axes_and_weak_types():
    x = sample((2, 3), np.float32)
    np.testing.assert_allclose(np.asarray(lax.reduce_sum(x, (-1,))), x.sum(-1), rtol=1e-6)
    assert not lax.reduce_sum(x, (0,)).weak_type
    weak = lax.reduce_sum(as_array(2.0), ())
    assert weak.weak_type and weak.dtype == np.float32


@pytest.mark.parametrize("fn,dtype", [(lax.reduce_sum, np.bool_), (lax.reduce_prod, np.bool_),
                                      (lax.reduce_and, np.float32),
                                      (lax.reduce_max, np.complex64)])
def test_rejected_dtypes(fn, dtype):
    with pytest.raises(TypeError, match="does not accept"):
        fn(np.zeros(3, dtype), (0,))


def test_bad_axes():
    with pytest.raises(ValueError, match="out of bounds"):
        lax.reduce_sum(np.zeros((2, 3)), (2,))
    with pytest.raises(ValueError, match="repeated"):
        lax.reduce_sum(np.zeros((2, 3)), (1, -1))


# -- reduce -------------------------------------------------------------------------------

def test_reduce_with_lambda():
    # The reducer must be associative with init as its identity (XLA reassociates):
    # the largest magnitude, through a body that is no single binary op.
    x = sample((3, 4), np.float32)
    check(lambda x: lax.reduce(x, 0.0, lambda a, b: lax.max(lax.abs(a), lax.abs(b)), (1,)),
          [x], np.abs(x).max(1))


def test_reduce_with_python_operators():
    # `a + b` on the reducer's arguments: the Array operators xlapy.numpy installs
    x = sample((3, 4), np.int32)
    check(lambda x: lax.reduce(x, 0, lambda a, b: a + b, (0,)), [x], x.sum(0).astype(np.int32))


def test_variadic_reduce_pytrees():
    x = sample((3, 4), np.float32)
    y = sample((3, 4), np.int32, seed=2)

    def fn(x, y):
        def combine(acc, v):
            return {"s": lax.add(acc["s"], v["s"]), "m": lax.max(acc["m"], v["m"])}

        out = lax.reduce({"s": x, "m": y}, {"s": 0.0, "m": np.int32(-100)}, combine, (0,))
        return out["s"], out["m"]

    check(fn, [x, y], [x.sum(0), y.max(0)])


def test_reduce_init_must_match_dtype():
    with config.enable_x64(True), pytest.raises(TypeError, match="must match"):
        lax.reduce(np.zeros(3, np.float32), np.float64(0), lax.add, (0,))
    with pytest.raises(ValueError, match="structure"):
        lax.reduce((np.zeros(3), np.zeros(3)), 0.0, lax.add, (0,))


def test_reducer_must_return_operand_dtype():
    with pytest.raises(TypeError, match="must return"):
        lax.reduce(np.zeros(3, np.float32), 0.0,
                   lambda a, b: lax.convert_element_type(a, np.int32), (0,))


def test_reducer_may_not_capture_a_traced_value():
    def fn(x, y):
        return lax.reduce(x, 0.0, lambda a, b: lax.add(lax.add(a, b), y), (0,))

    with pytest.raises(ConcretizationError, match="may not close over"):
        xlapy.jit(fn)(np.zeros(3, np.float32), np.float32(1))


def test_eager_reducers_are_cached():
    def reducer(a, b):
        return lax.add(a, b)

    x = np.arange(4, dtype=np.float32)
    lax.reduce(x, 0.0, reducer, (0,))
    size = len(reductions._EAGER_CACHE)
    for _ in range(3):
        assert float(np.asarray(lax.reduce(x, 0.0, reducer, (0,)))) == 6.0
    assert len(reductions._EAGER_CACHE) == size
    first = reductions.scalar_computation(lax.add, [np.float32] * 2, [np.float32], "t",
                                          tuple_root=False)
    again = reductions.scalar_computation(lax.add, [np.float32] * 2, [np.float32], "t",
                                          tuple_root=False)
    assert first is again


def test_one_reducer_region_per_module():
    def fn(x):
        return lax.reduce_sum(x, (0,)), lax.reduce_sum(x, (1,)), lax.reduce_window_sum(
            x, (2, 2), (1, 1), "VALID")

    text = xlapy.jit(fn).lower(np.zeros((3, 4), np.float32)).as_text()
    assert text.count("region_add") == 4  # one definition, three calls
    module = xlapy.hlo.parse(text)
    assert sum(1 for c in module.computations if c.name.startswith("region_add")) == 1


# -- argmax / argmin ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_, BF16])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_argmax_argmin(dtype, axis):
    x = sample((5, 6), dtype, seed=4)  # small integer ranges: many ties
    check(lambda x: (lax.argmax(x, axis, np.int32), lax.argmin(x, axis, np.int32)), [x],
          [np.argmax(_wide(x), axis).astype(np.int32), np.argmin(_wide(x), axis).astype(np.int32)])


def test_argmax_nan_and_ties():
    x = np.array([[1.0, 3.0, 3.0, -1.0], [np.nan, 5.0, np.nan, 2.0], [2.0, 1.0, np.nan, 9.0],
                  [-np.inf, -np.inf, -np.inf, -np.inf], [0.0, -0.0, 0.0, -0.0]], np.float32)
    check(lambda x: (lax.argmax(x, 1, np.int32), lax.argmin(x, 1, np.int64)), [x],
          [np.argmax(x, 1).astype(np.int32), np.argmin(x, 1).astype(np.int64)])


def test_argmax_long_axis_first_index():
    # long enough for the interpreter to fold pairwise: ties must still pick the first
    x = np.zeros(3000, np.float32)
    x[[700, 1500, 2999]] = 1.0
    x[[2000, 2500]] = np.nan
    check(lambda x: (lax.argmax(x, 0, np.int32), lax.argmin(x, 0, np.int32)), [x],
          [np.int32(2000), np.int32(2000)])


def test_eager_argmax_runs_the_variadic_reduce_that_jit_emits(monkeypatch):
    # No eager-only algorithm: one variadic reduce, evaluated as a pairwise tree.
    bound = []
    original = reductions.bind

    def record(opcode, operands, *args, **kwargs):
        bound.append((opcode, len(operands)))
        return original(opcode, operands, *args, **kwargs)

    monkeypatch.setattr(reductions, "bind", record)
    x = np.random.default_rng(9).integers(0, 20, (4, 1000)).astype(np.float32)
    x[1, [5, 600]] = np.nan
    eager = np.asarray(lax.argmin(x, 1, np.int32))
    assert bound == [(Opcode.REDUCE, 4)]
    jitted = xlapy.jit(lambda x: lax.argmin(x, 1, np.int32))
    np.testing.assert_array_equal(eager, np.argmin(x, 1))
    np.testing.assert_array_equal(jitted(x), eager)
    assert jitted.lower(x).as_text().count(" reduce(") == 1


def test_argmax_errors():
    with pytest.raises(TypeError, match="index_dtype"):
        lax.argmax(np.zeros(3), 0, np.float32)
    with pytest.raises(TypeError, match="complex"):
        lax.argmax(np.zeros(3, np.complex64), 0, np.int32)


# -- hypothesis ---------------------------------------------------------------------------

@st.composite
def shapes_and_axes(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    axes = draw(st.lists(st.integers(-len(shape), len(shape) - 1), unique_by=lambda a: a
                         % len(shape), max_size=len(shape)))
    return shape, tuple(axes)


@given(shapes_and_axes(), st.sampled_from([np.float32, np.int32]), st.integers(0, 2**16))
def test_reductions_fuzz(shape_axes, dtype, seed):
    shape, axes = shape_axes
    x = sample(shape, dtype, seed)
    axis = axes[0] if axes else 0
    check(lambda x: (lax.reduce_sum(x, axes), lax.reduce_max(x, axes),
                     lax.argmax(x, axis, np.int32)),
          [x], [np.sum(x, axis=axes).astype(dtype), np.max(x, axis=axes),
                np.argmax(x, axis).astype(np.int32)])
