"""xnp array creation against NumPy, eagerly and under jit: dtypes and weak
types as jax.numpy gives them, static-shape errors under jit."""

import numpy as np
import pytest

import xlapy
import xlapy.numpy as xnp
from tests.numpy.math_util import BF16, assert_close, check, sample
from xlapy import config
from xlapy.core.errors import ConcretizationError
from xlapy.errors import CompileError

F32, F64, I32, I8, U8, B = (np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int8,
                                                   np.uint8, np.bool_))
C64 = np.dtype(np.complex64)


def both_ways(make):
    """make() eagerly and inside a jitted function of no arguments."""
    return make(), xlapy.jit(make)()


def check_made(make, expected, dtype, weak=False):
    for out in both_ways(make):
        assert np.dtype(out.dtype) == np.dtype(dtype), (out.dtype, dtype)
        assert out.weak_type == weak
        assert_close(out, np.asarray(expected).astype(dtype), dtype)


# -- from data ----------------------------------------------------------------------------
def test_array_from_python_data():
    cases = [([1, 2, 3], I32), ([1.5, 2], F32), ([[True, False]], B), ([1 + 2j], C64),
             ([], F32), (((1, 2), (3, 4)), I32)]
    for data, dtype in cases:
        out = xnp.array(data)
        assert out.dtype == dtype and not out.weak_type
        np.testing.assert_array_equal(out, np.array(data).astype(dtype))


def test_array_of_python_scalars_is_weak():
    for value, dtype in [(3, I32), (3.0, F32), (1j, C64)]:
        out = xnp.asarray(value)
        assert out.dtype == dtype and out.weak_type
    assert not xnp.asarray(True).weak_type
    assert not xnp.asarray(3.0, dtype=np.float32).weak_type


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
def test_array_keeps_numpy_dtypes_canonicalized(x64):
    """NumPy data keeps its dtype, except that without x64 the 64-bit types
    become their 32-bit counterparts, as in JAX."""
    wide = {F64: F32, np.dtype(np.int64): I32} if not x64 else {}
    with config.enable_x64(x64):
        for dtype in (F64, np.dtype(np.int64), U8, np.dtype(np.float16), BF16):
            data = np.arange(4).astype(dtype)
            out = xnp.asarray(data)
            assert out.dtype == wide.get(dtype, dtype)
            np.testing.assert_array_equal(out, data)
        assert xnp.asarray(np.float64(2.5)).dtype == (F64 if x64 else F32)


def test_array_with_dtype_is_exact():
    with config.enable_x64(True):   # float64 exists only with x64
        out = xnp.array([0.1, 1e-300], dtype=np.float64)
    np.testing.assert_array_equal(out, np.array([0.1, 1e-300]))
    np.testing.assert_array_equal(xnp.asarray([300, -1], dtype=np.int16), [300, -1])
    assert xnp.asarray(xnp.ones(2), dtype=np.int32).dtype == I32


def test_array_ndmin_and_order():
    assert xnp.array(5, ndmin=3).shape == (1, 1, 1)
    assert xnp.array([1, 2], ndmin=2).shape == (1, 2)
    with pytest.raises(NotImplementedError, match="order"):
        xnp.array([1], order="F")
    with pytest.raises(TypeError):
        xnp.array(object())


def test_array_of_arrays_stacks_them_under_jit():
    def stack(x, y):
        return xnp.array([x, y, [7.5, 8.5]])

    x, y = np.array([1.0, 2.0], np.float32), np.array([3, 4], np.int32)
    check(stack, lambda a, b: np.array([a, b, [7.5, 8.5]]), x, y, dtype=F32)
    out = xnp.array([xnp.float16(1), 2.0])
    assert out.dtype == np.float16 and not out.weak_type
    with pytest.raises(ValueError, match="ragged"):
        xnp.array([xnp.ones(2), xnp.ones(3)])


def test_array_does_not_alias_numpy_data():
    data = np.arange(3, dtype=np.float32)
    out = xnp.asarray(data)
    data[0] = 100
    assert float(out[0]) == 0.0


def test_asarray_is_the_identity_on_arrays():
    x = xnp.ones(3)
    assert xnp.asarray(x) is x
    weak = xnp.asarray(2.0)
    assert xnp.array(weak).weak_type


# -- filled -------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(), 3, (2, 3), (0, 4)])
def test_zeros_ones_full_empty(shape):
    np_shape = (shape,) if isinstance(shape, int) else shape
    check_made(lambda: xnp.zeros(shape), np.zeros(np_shape), F32)
    check_made(lambda: xnp.ones(shape, np.int8), np.ones(np_shape), I8)
    check_made(lambda: xnp.empty(shape, xnp.bfloat16), np.zeros(np_shape), BF16)
    check_made(lambda: xnp.full(shape, 7), np.full(np_shape, 7), I32, weak=True)
    check_made(lambda: xnp.full(shape, 2.5), np.full(np_shape, 2.5), F32, weak=True)
    check_made(lambda: xnp.full(shape, 3, dtype=np.uint8), np.full(np_shape, 3), U8)
    check_made(lambda: xnp.full(shape, np.float64(0.1)), np.full(np_shape, 0.1), F32)
    with config.enable_x64(True):
        check_made(lambda: xnp.full(shape, np.float64(0.1)), np.full(np_shape, 0.1), F64)
        check_made(lambda: xnp.zeros(shape), np.zeros(np_shape), F64)
        check_made(lambda: xnp.full(shape, 7), np.full(np_shape, 7), np.int64, weak=True)


def test_full_with_array_and_traced_fill():
    check(lambda v: xnp.full((3, 2), v), lambda v: np.full((3, 2), v), np.float32(1.5), dtype=F32)
    check(lambda v: xnp.full((4, 3), v), lambda v: np.full((4, 3), v),
          np.arange(3, dtype=np.int32), dtype=I32)


@pytest.mark.parametrize("dtype", [F32, I32, U8, B, C64, BF16])
def test_like_functions(dtype):
    x = sample((2, 3), dtype)
    check(xnp.zeros_like, np.zeros_like, x, dtype=dtype)
    check(xnp.ones_like, np.ones_like, x, dtype=dtype)
    check(xnp.empty_like, np.zeros_like, x, dtype=dtype)
    check(lambda v: xnp.full_like(v, 3), lambda v: np.full_like(v, 3), x, dtype=dtype)
    check(lambda v: xnp.zeros_like(v, dtype=np.float64, shape=(4,)),
          lambda v: np.zeros_like(v, dtype=np.float64, shape=(4,)), x, dtype=F64)


def test_like_functions_keep_weak_types():
    weak = xnp.asarray(2.0)
    assert xnp.zeros_like(weak).weak_type and xnp.full_like(weak, 3).weak_type
    assert not xnp.zeros_like(weak, dtype=np.float32).weak_type
    assert xnp.ones_like(5).dtype == I32 and xnp.ones_like([1.0, 2.0]).shape == (2,)


# -- ranges -------------------------------------------------------------------------------
ARANGES = [(5,), (2, 9), (9, 2, -2), (0, 10, 3), (-3, 3), (5, 5), (0.0, 1.0, 0.1),
           (2.5,), (-1, 2, 0.25), (10, 0, -1.5)]


@pytest.mark.parametrize("args", ARANGES, ids=str)
def test_arange(args):
    want = np.arange(*args)
    dtype = I32 if want.dtype.kind == "i" else F32
    check_made(lambda: xnp.arange(*args), want, dtype)


def test_arange_dtypes_and_iota():
    check_made(lambda: xnp.arange(3, 10, 2, dtype=np.uint8), np.arange(3, 10, 2), U8)
    check_made(lambda: xnp.arange(6, dtype=np.float32), np.arange(6), F32)
    check_made(lambda: xnp.arange(5, 0, -1, dtype=np.uint8), np.arange(5, 0, -1), U8)
    check_made(lambda: xnp.arange(np.float64(4)), np.arange(4.0), F32)
    with config.enable_x64(True):
        check_made(lambda: xnp.arange(np.float64(4)), np.arange(4.0), F64)
        check_made(lambda: xnp.arange(4), np.arange(4), np.int64)
    text = xlapy.jit(lambda: xnp.arange(1000)).lower().as_text()
    assert "iota" in text and "constant({" not in text  # no large literal


def test_arange_needs_static_bounds():
    with pytest.raises(ConcretizationError, match="arange"):
        xlapy.jit(lambda n: xnp.arange(n))(5)
    with pytest.raises(ValueError, match="zero"):
        xnp.arange(0, 5, 0)


LINSPACES = [dict(start=0, stop=1, num=5), dict(start=-2.5, stop=7, num=11, endpoint=False),
             dict(start=3, stop=-3, num=1), dict(start=0, stop=1, num=0),
             dict(start=1, stop=2, num=2), dict(start=0, stop=10, num=7, dtype=np.int32)]


@pytest.mark.parametrize("kwargs", LINSPACES, ids=str)
def test_linspace(kwargs):
    want = np.linspace(**kwargs)
    dtype = kwargs.get("dtype", F32)
    check_made(lambda: xnp.linspace(**kwargs), want, dtype)


def test_linspace_arrays_axis_retstep_and_traced_ends():
    start, stop = np.array([0.0, 1.0], np.float32), np.array([[2.0], [5.0], [-1.0]], np.float32)
    for axis in (0, 1, -1, 2):
        check(lambda a, b, ax=axis: xnp.linspace(a, b, 4, axis=ax),
              lambda a, b, ax=axis: np.linspace(a, b, 4, axis=ax), start, stop, dtype=F32)
    samples, step = xnp.linspace(0, 1, 5, retstep=True)
    assert float(step) == pytest.approx(0.25) and samples.shape == (5,)
    _, step = xnp.linspace(0, 1, 1, retstep=True)
    assert np.isnan(float(step))
    check(lambda a, b: xnp.linspace(a, b, 6, dtype=np.float64),
          lambda a, b: np.linspace(a, b, 6), np.float64(-1), np.float64(3), dtype=F64)


def test_logspace_and_geomspace():
    check_made(lambda: xnp.logspace(0, 3, 4), np.logspace(0, 3, 4), F32)
    check_made(lambda: xnp.logspace(0, 3, 4, base=2.0, endpoint=False),
               np.logspace(0, 3, 4, base=2.0, endpoint=False), F32)
    check_made(lambda: xnp.geomspace(1, 1000, 4), np.geomspace(1, 1000, 4), F32)
    with config.enable_x64(True):
        check_made(lambda: xnp.geomspace(-1, -256, 5, dtype=np.float64),
                   np.geomspace(-1, -256, 5), F64)
    check(lambda a, b: xnp.geomspace(a, b, 3, axis=1),
          lambda a, b: np.geomspace(a, b, 3, axis=1), np.array([1.0, 2.0], np.float32),
          np.array([100.0, 8.0], np.float32), dtype=F32)


# -- matrices -----------------------------------------------------------------------------
@pytest.mark.parametrize("n, m, k", [(3, None, 0), (3, 5, 1), (4, 2, -1), (2, 3, 5), (0, 2, 0)])
def test_eye_tri(n, m, k):
    check_made(lambda: xnp.eye(n, m, k), np.eye(n, m, k), F32)
    check_made(lambda: xnp.eye(n, m, k, dtype=np.int32), np.eye(n, m, k), I32)
    check_made(lambda: xnp.tri(n, m, k), np.tri(n, m, k), F32)
    check_made(lambda: xnp.tri(n, m, k, dtype=bool), np.tri(n, m, k), B)


def test_identity():
    check_made(lambda: xnp.identity(4), np.identity(4), F32)
    check_made(lambda: xnp.identity(2, dtype=np.uint8), np.identity(2), U8)


@pytest.mark.parametrize("k", [0, 1, -2])
@pytest.mark.parametrize("dtype", [F32, I32, B])
def test_tril_triu(k, dtype):
    for shape in [(4, 4), (3, 5), (2, 4, 3)]:
        x = sample(shape, dtype, 1, 9)
        check(lambda v: xnp.tril(v, k), lambda v: np.tril(v, k), x, dtype=dtype)
        check(lambda v: xnp.triu(v, k), lambda v: np.triu(v, k), x, dtype=dtype)
    with pytest.raises(ValueError, match="2 dimensions"):
        xnp.tril(np.ones(3))


@pytest.mark.parametrize("k", [0, 1, -1, 3])
def test_diag(k):
    v = sample((4,), I32, 1, 9)
    check(lambda a: xnp.diag(a, k), lambda a: np.diag(a, k), v, dtype=I32)
    m = sample((3, 5), F32)
    check(lambda a: xnp.diag(a, k), lambda a: np.diag(a, k), m, dtype=F32)
    check(lambda a: xnp.diagflat(a, k), lambda a: np.diagflat(a, k), sample((2, 2), F32))
    with pytest.raises(ValueError):
        xnp.diag(np.ones((2, 2, 2)))


# -- grids --------------------------------------------------------------------------------
@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing, sparse):
    x, y, z = np.arange(3.0, dtype=np.float32), np.arange(4, dtype=np.int32), np.ones(2, bool)
    for args in [(x,), (x, y), (x, y, z)]:
        check(lambda *a: xnp.meshgrid(*a, indexing=indexing, sparse=sparse),
              lambda *a: np.meshgrid(*a, indexing=indexing, sparse=sparse), *args)
    with pytest.raises(ValueError, match="indexing"):
        xnp.meshgrid(x, indexing="yx")


@pytest.mark.parametrize("dims", [(2, 3), (4,), (2, 1, 3), ()])
def test_indices(dims):
    check_made(lambda: xnp.indices(dims), np.indices(dims), I32)
    for got, want in zip(xnp.indices(dims, sparse=True), np.indices(dims, sparse=True)):
        np.testing.assert_array_equal(got, want)
    assert xnp.indices(dims, dtype=np.int8).dtype == I8


# -- static shapes under jit --------------------------------------------------------------
def test_traced_shapes_are_errors_naming_the_function():
    with pytest.raises(ConcretizationError, match="xnp.zeros"):
        xlapy.jit(lambda n: xnp.zeros(n))(3)
    with pytest.raises(CompileError):
        xlapy.jit(lambda n: xnp.ones((2, n)))(3)
    with pytest.raises(ValueError, match="negative"):
        xnp.zeros((-1, 2))
