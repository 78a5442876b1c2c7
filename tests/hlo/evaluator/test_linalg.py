"""Interpreter linear algebra against NumPy and hand-computed values, for every
dtype each op takes: dot (with random dimension numbers), cholesky,
triangular-solve and fft."""

from __future__ import annotations

import string

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.hlo.evaluator.util import run_op
from xlapy.errors import ExecutionError
from xlapy.hlo.attributes import FftType, Precision, TriangularSolveTranspose
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.shape import Shape

INTEGER_TYPES = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]
FLOAT_TYPES = ["f16", "bf16", "f32", "f64"]
COMPLEX_TYPES = ["c64", "c128"]
ALL_TYPES = ["pred"] + INTEGER_TYPES + FLOAT_TYPES + COMPLEX_TYPES
TOLERANCE = {"f16": 2e-3, "bf16": 1e-2, "f32": 1e-5, "f64": 1e-12, "c64": 1e-5, "c128": 1e-12}


def dtype(type_name: str) -> np.dtype:
    return PrimitiveType.from_text(type_name).numpy


def sample(type_name: str, dims, rng) -> np.ndarray:
    """Random values spanning an integer type's range; moderate floats."""
    t = PrimitiveType.from_text(type_name)
    if t.is_pred:
        return rng.integers(0, 2, dims).astype(bool)
    if t.is_integral:
        info = np.iinfo(t.numpy)
        return rng.integers(info.min, info.max, dims, dtype=t.numpy, endpoint=True)
    values = rng.standard_normal(dims)
    if t.is_complex:
        values = values + 1j * rng.standard_normal(dims)
    return values.astype(t.numpy)


def dot(result: str | Shape, lhs, rhs, lb=(), rb=(), lc=(), rc=(), **attrs):
    if isinstance(result, str):
        result = Shape.array(result, ())
    return run_op("dot", result, lhs, rhs, lhs_batch_dims=lb, rhs_batch_dims=rb,
                  lhs_contracting_dims=lc, rhs_contracting_dims=rc, **attrs)


def exact_dot(lhs, rhs, subscripts: str, type_name: str) -> np.ndarray:
    """The exact dot in Python integers (or float64/complex128), rounded or
    wrapped once to the result type: the reference the rule must meet."""
    t = PrimitiveType.from_text(type_name)
    if t.is_pred:
        return np.einsum(subscripts, lhs.astype(np.int64), rhs.astype(np.int64)) != 0
    if t.is_integral:
        exact = np.asarray(np.einsum(subscripts, lhs.astype(object), rhs.astype(object)),
                           dtype=object)
        bits, signed = t.bit_width, t.is_signed_int

        def wrap(v):
            v = int(v) % 2**bits
            return v - 2**bits if signed and v >= 2 ** (bits - 1) else v

        return np.array([wrap(v) for v in exact.ravel()], dtype=t.numpy).reshape(exact.shape)
    wide = np.complex128 if t.is_complex else np.float64
    return np.einsum(subscripts, lhs.astype(wide), rhs.astype(wide)).astype(t.numpy)


def assert_close(got, want, type_name):
    assert got.dtype == dtype(type_name) and got.shape == want.shape
    if type_name in TOLERANCE:
        tol = TOLERANCE[type_name]
        np.testing.assert_allclose(got.astype(np.complex128), want.astype(np.complex128),
                                   rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


# -- dot -----------------------------------------------------------------------------
@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_dot_batch_matmul_every_type(type_name):
    rng = np.random.default_rng(1)
    lhs, rhs = sample(type_name, (2, 3, 4), rng), sample(type_name, (2, 4, 5), rng)
    got = dot(Shape.array(type_name, (2, 3, 5)), lhs, rhs, (0,), (0,), (2,), (1,))
    assert_close(got, exact_dot(lhs, rhs, "bmk,bkn->bmn", type_name), type_name)


@pytest.mark.parametrize("type_name", ALL_TYPES)
def test_dot_matrix_vector_every_type(type_name):
    rng = np.random.default_rng(2)
    lhs, rhs = sample(type_name, (3, 6), rng), sample(type_name, (6,), rng)
    got = dot(Shape.array(type_name, (3,)), lhs, rhs, lc=(1,), rc=(0,))
    assert_close(got, exact_dot(lhs, rhs, "mk,k->m", type_name), type_name)


@st.composite
def dot_problems(draw):
    """Random dimension numbers: how many batch, contracting and free dims, their
    sizes (zero included) and where each sits in either operand."""
    nb, nc = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    nl, nr = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    size = st.integers(0, 3)
    batch = [draw(size) for _ in range(nb)]
    contracting = [draw(size) for _ in range(nc)]
    lfree = [draw(size) for _ in range(nl)]
    rfree = [draw(size) for _ in range(nr)]
    lperm = draw(st.permutations(range(nb + nc + nl)))
    rperm = draw(st.permutations(range(nb + nc + nr)))
    return batch, contracting, lfree, rfree, list(lperm), list(rperm)


@given(dot_problems(), st.sampled_from(["s32", "u8", "f64", "c64"]))
def test_dot_random_dimension_numbers(problem, type_name):
    batch, contracting, lfree, rfree, lperm, rperm = problem
    nb, nc = len(batch), len(contracting)
    letters = iter(string.ascii_letters)
    b, c = [next(letters) for _ in batch], [next(letters) for _ in contracting]
    lf, rf = [next(letters) for _ in lfree], [next(letters) for _ in rfree]
    # Logical dim i of an operand (batch, contracting, free) sits at position perm[i].
    lhs_logical = list(zip(b + c + lf, batch + contracting + lfree))
    rhs_logical = list(zip(b + c + rf, batch + contracting + rfree))
    lhs_axes, rhs_axes = [None] * len(lperm), [None] * len(rperm)
    for i, p in enumerate(lperm):
        lhs_axes[p] = lhs_logical[i]
    for i, p in enumerate(rperm):
        rhs_axes[p] = rhs_logical[i]
    rng = np.random.default_rng(len(lperm) * 7 + len(rperm))
    lhs = sample(type_name, [s for _, s in lhs_axes], rng)
    rhs = sample(type_name, [s for _, s in rhs_axes], rng)
    # Result: batch dims in lhs_batch_dims order, then each operand's free dims
    # in the order they sit in that operand.
    out_axes = (lhs_logical[:nb] + [a for a in lhs_axes if a[0] in lf]
                + [a for a in rhs_axes if a[0] in rf])
    subscripts = ("".join(x for x, _ in lhs_axes) + "," + "".join(x for x, _ in rhs_axes)
                  + "->" + "".join(x for x, _ in out_axes))
    result = Shape.array(type_name, [s for _, s in out_axes])
    got = dot(result, lhs, rhs, tuple(lperm[:nb]), tuple(rperm[:nb]),
              tuple(lperm[nb:nb + nc]), tuple(rperm[nb:nb + nc]))
    assert_close(got, exact_dot(lhs, rhs, subscripts, type_name), type_name)


@pytest.mark.parametrize("type_name, lhs, rhs, expected", [
    ("s8", [100, 100], [2, 1], 44),            # 300 wraps to 300 - 256
    ("s8", [-128], [-1], -128),                # 128 wraps to -128
    ("u8", [200], [2], 144),                   # 400 mod 256
    ("s16", [300, 300], [300, 100], -11072),   # 120000 mod 2^16, signed
    ("u32", [2**31, 2**31], [1, 1], 0),        # 2^32 wraps to 0
    ("s32", [2**30, 2**30], [2, 0], -2**31),   # 2^31 wraps to -2^31
    ("s64", [2**62], [2], -2**63),
    ("u64", [2**63, 3], [2, 5], 15),           # 2^64 + 15 wraps to 15
])
def test_dot_integer_wraparound(type_name, lhs, rhs, expected):
    lhs, rhs = np.array(lhs, dtype(type_name)), np.array(rhs, dtype(type_name))
    got = dot(type_name, lhs, rhs, lc=(0,), rc=(0,))
    assert got.dtype == dtype(type_name) and int(got) == expected


def test_dot_pred_is_or_of_ands():
    lhs = np.array([[True, False], [True, True], [False, False]])
    rhs = np.array([[False, True], [True, True]])
    got = dot(Shape.array("pred", (3, 2)), lhs, rhs, lc=(1,), rc=(0,))
    np.testing.assert_array_equal(got, [[False, True], [True, True], [False, False]])


@pytest.mark.parametrize("type_name, big", [("f16", 2048.0), ("bf16", 256.0)])
def test_dot_narrow_floats_accumulate_in_f32_and_round_once(type_name, big):
    """Summing in the narrow type would lose both +1s (they are half an ulp);
    f32 accumulation keeps them and 2*ulp rounds exactly."""
    lhs = np.array([big, 1, 1], dtype(type_name))
    rhs = np.ones(3, dtype(type_name))
    assert float(dot(type_name, lhs, rhs, lc=(0,), rc=(0,))) == big + 2


@pytest.mark.parametrize("operands, result, expected", [
    ("s8", "s32", 300),        # preferred element type: no wrap in the wider result
    ("u8", "s32", 400),
    ("bf16", "f32", 300.0),
    ("f16", "f32", 300.0),
    ("s8", "f32", 300.0),
])
def test_dot_mixed_precision_result(operands, result, expected):
    lhs = np.array([100, 100], dtype(operands)) if operands != "u8" else np.array(
        [200, 100], np.uint8)
    rhs = np.array([2, 1], dtype(operands)) if operands != "u8" else np.array(
        [1, 2], np.uint8)
    got = dot(result, lhs, rhs, lc=(0,), rc=(0,))
    assert got.dtype == dtype(result) and got == expected


def test_dot_complex_conjugates_nothing():
    lhs = np.array([1 + 2j, 3 - 1j], np.complex64)
    rhs = np.array([2 - 1j, 1j], np.complex64)
    # (1+2j)(2-1j) + (3-1j)(1j) = (4+3j) + (1+3j)
    assert dot("c64", lhs, rhs, lc=(0,), rc=(0,)) == 5 + 6j


def test_dot_operand_precision_does_not_change_the_result():
    rng = np.random.default_rng(3)
    lhs, rhs = sample("f32", (4, 5), rng), sample("f32", (5, 3), rng)
    result = Shape.array("f32", (4, 3))
    plain = dot(result, lhs, rhs, lc=(1,), rc=(0,))
    precise = dot(result, lhs, rhs, lc=(1,), rc=(0,),
                  operand_precision=(Precision.HIGHEST, Precision.DEFAULT))
    np.testing.assert_array_equal(plain, precise)


def test_dot_outer_product_and_scalars():
    lhs, rhs = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])
    np.testing.assert_array_equal(dot(Shape.array("f64", (2, 3)), lhs, rhs), np.outer(lhs, rhs))
    assert dot("s32", np.array(6, np.int32), np.array(7, np.int32)) == 42


def test_dot_empty_contraction_is_zero():
    got = dot(Shape.array("f32", (2, 3)), np.zeros((2, 0), np.float32),
              np.zeros((0, 3), np.float32), lc=(1,), rc=(0,))
    np.testing.assert_array_equal(got, np.zeros((2, 3), np.float32))


def test_dot_mismatched_contracting_sizes_raise():
    with pytest.raises(ExecutionError, match="contracting dimension sizes"):
        dot(Shape.array("f32", (2, 2)), np.zeros((2, 3), np.float32),
            np.zeros((4, 2), np.float32), lc=(1,), rc=(0,))


# -- cholesky ------------------------------------------------------------------------
CHOLESKY_TYPES = ["f16", "bf16", "f32", "f64", "c64", "c128"]


def hermitian_pd(type_name: str, batch, n: int, rng) -> np.ndarray:
    m = rng.standard_normal(batch + (n, n))
    if PrimitiveType.from_text(type_name).is_complex:
        m = m + 1j * rng.standard_normal(batch + (n, n))
    a = m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n)
    return a.astype(dtype(type_name))


def cholesky(a, lower: bool):
    t = PrimitiveType.from_numpy(a.dtype)
    return run_op("cholesky", Shape.array(t, a.shape), a, lower=lower)


@pytest.mark.parametrize("type_name", CHOLESKY_TYPES)
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_against_numpy(type_name, lower):
    rng = np.random.default_rng(4)
    a = hermitian_pd(type_name, (2, 3), 4, rng)
    got = cholesky(a, lower)
    wide = np.complex128 if type_name.startswith("c") else np.float64
    want = np.linalg.cholesky(a.astype(wide))   # a = L L^H
    if not lower:
        want = np.conj(np.swapaxes(want, -1, -2))  # a = U^H U with U = L^H
    assert_close(got, want.astype(a.dtype), type_name)


def test_cholesky_hand_computed():
    a = np.array([[4.0, 2.0], [2.0, 5.0]])
    np.testing.assert_array_equal(cholesky(a, True), [[2, 0], [1, 2]])
    np.testing.assert_array_equal(cholesky(a, False), [[2, 1], [0, 2]])


@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_reads_one_triangle_and_zeroes_the_other(lower):
    rng = np.random.default_rng(5)
    a = hermitian_pd("c128", (), 4, rng)
    garbage = a.copy()
    other = np.triu_indices(4, 1) if lower else np.tril_indices(4, -1)
    garbage[other] = 99 - 7j
    got = cholesky(garbage, lower)
    np.testing.assert_allclose(got, cholesky(a, lower), rtol=1e-12)
    assert np.all(got[other] == 0)


def test_cholesky_not_positive_definite_gives_nan_for_that_matrix_only():
    a = np.stack([np.array([[4.0, 2.0], [2.0, 5.0]]),     # fine
                  np.array([[1.0, 2.0], [2.0, 1.0]]),     # indefinite
                  np.array([[-1.0, 0.0], [0.0, 1.0]])])   # negative pivot first
    got = cholesky(a.astype(np.float32), True)
    np.testing.assert_array_equal(got[0], [[2, 0], [1, 2]])
    assert np.isnan(got[1]).all() and np.isnan(got[2]).all()


def test_cholesky_nan_input_gives_nan():
    a = np.array([[np.nan, 0.0], [0.0, 1.0]])
    assert np.isnan(cholesky(a, True)).all()


def test_cholesky_empty_and_one_by_one():
    assert cholesky(np.zeros((3, 0, 0)), True).shape == (3, 0, 0)
    np.testing.assert_array_equal(cholesky(np.array([[9.0]], np.float32), False), [[3.0]])


def test_cholesky_complex_uses_real_part_of_diagonal():
    a = np.array([[4 + 5j, 2 - 2j], [2 + 2j, 6 + 0j]])
    want = np.linalg.cholesky(np.array([[4, 2 - 2j], [2 + 2j, 6]]))
    np.testing.assert_allclose(cholesky(a, True), want, rtol=1e-12)


# -- triangular-solve ----------------------------------------------------------------
SOLVE_TYPES = ["f16", "bf16", "f32", "f64", "c64", "c128"]
TRANSPOSES = list(TriangularSolveTranspose)


def solve(a, b, **attrs):
    t = PrimitiveType.from_numpy(b.dtype)
    return run_op("triangular-solve", Shape.array(t, b.shape), a, b, **attrs)


def reference_solve(a, b, left_side, lower, unit_diagonal, transpose):
    """op(T) x = b or x op(T) = b with np.linalg.solve on the triangle spelled out."""
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t - np.diag(np.diag(t)) + np.eye(len(t))
    if transpose is TriangularSolveTranspose.TRANSPOSE:
        t = t.T
    elif transpose is TriangularSolveTranspose.ADJOINT:
        t = t.conj().T
    if left_side:
        return np.linalg.solve(t, b)
    return np.linalg.solve(t.T, b.T).T


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose", TRANSPOSES)
@pytest.mark.parametrize("unit_diagonal", [False, True])
def test_triangular_solve_every_option(left_side, lower, transpose, unit_diagonal):
    rng = np.random.default_rng(6)
    m, k = 4, 3
    a = rng.standard_normal((2, m, m)) + 1j * rng.standard_normal((2, m, m)) + 4 * np.eye(m)
    b = rng.standard_normal((2, m, k) if left_side else (2, k, m)) + 0j
    got = solve(a, b, left_side=left_side, lower=lower, unit_diagonal=unit_diagonal,
                transpose_a=transpose)
    for i in range(2):
        want = reference_solve(a[i], b[i], left_side, lower, unit_diagonal, transpose)
        np.testing.assert_allclose(got[i], want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("type_name", SOLVE_TYPES)
@pytest.mark.parametrize("left_side", [True, False])
def test_triangular_solve_every_type(type_name, left_side):
    rng = np.random.default_rng(7)
    a = sample(type_name, (3, 3), rng) + np.eye(3, dtype=dtype(type_name)) * 3
    b = sample(type_name, (3, 2) if left_side else (2, 3), rng)
    got = solve(a, b, left_side=left_side, lower=True,
                transpose_a=TriangularSolveTranspose.NO_TRANSPOSE)
    wide = np.complex128 if type_name.startswith("c") else np.float64
    want = reference_solve(a.astype(wide), b.astype(wide), left_side, True, False,
                           TriangularSolveTranspose.NO_TRANSPOSE)
    assert_close(got, want.astype(b.dtype), type_name)


def test_triangular_solve_hand_computed():
    a = np.array([[2.0, 99.0], [1.0, 1.0]])  # 99 is above the diagonal: never read
    b = np.array([[2.0], [3.0]])
    got = solve(a, b, left_side=True, lower=True,
                transpose_a=TriangularSolveTranspose.NO_TRANSPOSE)
    np.testing.assert_array_equal(got, [[1.0], [2.0]])  # 2x = 2; x + y = 3


def test_triangular_solve_unit_diagonal_never_reads_the_diagonal():
    a = np.array([[0.0, 0.0], [3.0, np.nan]])
    b = np.array([[1.0, 2.0], [4.0, 5.0]])
    got = solve(a, b, left_side=True, lower=True, unit_diagonal=True,
                transpose_a=TriangularSolveTranspose.NO_TRANSPOSE)
    np.testing.assert_array_equal(got, [[1.0, 2.0], [1.0, -1.0]])


def test_triangular_solve_zero_pivot_gives_inf_or_nan():
    a = np.array([[0.0, 0.0], [1.0, 1.0]], np.float32)
    b = np.array([[1.0], [1.0]], np.float32)
    got = solve(a, b, left_side=True, lower=True,
                transpose_a=TriangularSolveTranspose.NO_TRANSPOSE)
    assert not np.isfinite(got).any()


def test_triangular_solve_broadcasts_nothing_and_handles_empty():
    a = np.eye(3)[None].repeat(2, axis=0)
    b = np.zeros((2, 3, 0))
    assert solve(a, b, left_side=True, lower=True,
                 transpose_a=TriangularSolveTranspose.TRANSPOSE).shape == (2, 3, 0)


# -- fft -----------------------------------------------------------------------------
def fft(x, fft_type, lengths, result_type, result_dims):
    return run_op("fft", Shape.array(result_type, result_dims), x, fft_type=fft_type,
                  fft_length=tuple(lengths))


@pytest.mark.parametrize("type_name", COMPLEX_TYPES)
@pytest.mark.parametrize("lengths", [(8,), (5,), (3, 4), (2, 3, 5)])
def test_fft_and_ifft(type_name, lengths):
    rng = np.random.default_rng(8)
    dims = (2,) + lengths
    x = sample(type_name, dims, rng)
    axes = tuple(range(1, len(dims)))
    assert_close(fft(x, FftType.FFT, lengths, type_name, dims),
                 np.fft.fftn(x.astype(np.complex128), axes=axes).astype(x.dtype), type_name)
    assert_close(fft(x, FftType.IFFT, lengths, type_name, dims),
                 np.fft.ifftn(x.astype(np.complex128), axes=axes).astype(x.dtype), type_name)


@pytest.mark.parametrize("real, complex_", [("f32", "c64"), ("f64", "c128")])
@pytest.mark.parametrize("lengths", [(8,), (7,), (4, 6), (2, 3, 5)])
def test_rfft_and_irfft(real, complex_, lengths):
    rng = np.random.default_rng(9)
    axes = tuple(range(1, len(lengths) + 1))
    x = sample(real, (3,) + lengths, rng)
    spectrum_dims = (3,) + lengths[:-1] + (lengths[-1] // 2 + 1,)
    spectrum = fft(x, FftType.RFFT, lengths, complex_, spectrum_dims)
    assert_close(spectrum, np.fft.rfftn(x.astype(np.float64), axes=axes).astype(spectrum.dtype),
                 complex_)
    # A spectrum that is not Hermitian: IRFFT keeps only what the real transform uses.
    y = sample(complex_, spectrum_dims, rng)
    want = np.fft.irfftn(y.astype(np.complex128), s=lengths, axes=axes).astype(dtype(real))
    assert_close(fft(y, FftType.IRFFT, lengths, real, (3,) + lengths), want, real)
    back = fft(spectrum, FftType.IRFFT, lengths, real, (3,) + lengths)
    assert_close(back, x, real)


def test_fft_hand_computed():
    impulse = np.array([1, 0, 0, 0], np.complex64)
    np.testing.assert_array_equal(fft(impulse, FftType.FFT, [4], "c64", (4,)), [1, 1, 1, 1])
    dc = np.array([4, 0, 0, 0], np.complex64)
    np.testing.assert_array_equal(fft(dc, FftType.IFFT, [4], "c64", (4,)), [1, 1, 1, 1])
    ramp = np.array([0.0, 1.0, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(fft(ramp, FftType.RFFT, [4], "c64", (3,)),
                               [6, -2 + 2j, -2], atol=1e-6)


def test_fft_empty_batch():
    x = np.zeros((0, 4), np.complex64)
    assert fft(x, FftType.FFT, [4], "c64", (0, 4)).shape == (0, 4)


def test_rules_are_registered():
    from xlapy.hlo.evaluator.evaluator import RULES
    from xlapy.hlo.opcode import Opcode

    for opcode in (Opcode.DOT, Opcode.CONVOLUTION, Opcode.CHOLESKY, Opcode.TRIANGULAR_SOLVE,
                   Opcode.FFT, Opcode.RNG_BIT_GENERATOR):
        assert opcode in RULES


def test_bf16_dtype_is_ml_dtypes():
    assert dtype("bf16") == ml_dtypes.bfloat16
