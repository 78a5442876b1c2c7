"""Derivatives of cholesky, triangular-solve, fft and the batch-norm ops,
checked against finite differences (tests/autodiff/check.py).

cholesky reads one triangle of a symmetric matrix, and its rules treat a
tangent as its symmetric part, so it is checked along symmetric directions
(with `_check_symmetric`), and its cotangents must be symmetric.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlapy
from xlapy import lax
from xlapy.core.trace import as_array, bind
from xlapy.hlo.attributes import FftType, TriangularSolveTranspose
from xlapy.hlo.opcode import Opcode

from .check import check_grads

SETTINGS = settings(max_examples=15)


def _op(opcode, *operands, **attrs):
    return bind(opcode, [as_array(o) for o in operands], attrs)


def _spd(rng, batch, n):
    x = rng.standard_normal(batch + (n, n))
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)


def _sym(x):
    return (x + np.swapaxes(x, -1, -2)) / 2


def _inner(a, b):
    return float(sum(np.vdot(np.asarray(x), np.asarray(y)) for x, y in zip(a, b)))


def _check_symmetric(f, a, rng, eps=1e-6, tol=1e-6):
    """check_grads for f(a) with a symmetric, along a symmetric direction."""
    v = _sym(rng.standard_normal(a.shape))
    fd = [(np.asarray(p) - np.asarray(m)) / (2 * eps)
          for p, m in zip(_tuple(f(a + eps * v)), _tuple(f(a - eps * v)))]
    u = [rng.standard_normal(d.shape) for d in fd]

    def forward(x, t):
        return xlapy.jvp(f, (x,), (t,))[1]

    def reverse(x, *cts):
        out, pullback = xlapy.vjp(f, x)
        return pullback(tuple(cts) if isinstance(out, tuple) else cts[0])[0]

    scale = max(1.0, max(np.abs(d).max() for d in fd))
    for wrap in (lambda g: g, xlapy.jit):
        tangent = [np.asarray(t) for t in _tuple(wrap(forward)(a, v))]
        for t, d in zip(tangent, fd):
            np.testing.assert_allclose(t, d, atol=tol * scale, rtol=tol)
        ct = np.asarray(wrap(reverse)(a, *u))
        np.testing.assert_allclose(ct, np.swapaxes(ct, -1, -2), atol=1e-12)
        lhs, rhs = _inner([v], [ct]), _inner(u, fd)
        assert abs(lhs - rhs) <= tol * scale * (1 + abs(rhs)) * 10, (lhs, rhs)
        assert abs(_inner(tangent, u) - lhs) <= 1e-9 * (1 + abs(lhs)), "dot-product test"


def _tuple(x):
    return x if isinstance(x, tuple) else (x,)


# -- cholesky ---------------------------------------------------------------------------
@SETTINGS
@given(n=st.integers(1, 4), batch=st.sampled_from([(), (2,)]), lower=st.booleans(),
       seed=st.integers(0, 2**16))
def test_cholesky(n, batch, lower, seed):
    rng = np.random.default_rng(seed)
    _check_symmetric(lambda a: _op(Opcode.CHOLESKY, a, lower=lower), _spd(rng, batch, n), rng)


def test_cholesky_cotangent_is_symmetric_and_matches_reference():
    """grad of <W, L> against the closed form sym(L⁻ᵀ Φ(Lᵀ W) L⁻¹)."""
    rng = np.random.default_rng(1)
    a, w = _spd(rng, (), 3), rng.standard_normal((3, 3))
    g = np.asarray(xlapy.grad(lambda x: lax.reduce_sum(
        lax.mul(_op(Opcode.CHOLESKY, x, lower=True), as_array(w)), (0, 1)))(a))
    low = np.linalg.cholesky(a)
    inv = np.linalg.inv(low)
    phi = np.tril(low.T @ w) - np.diag(np.diag(low.T @ w)) / 2
    np.testing.assert_allclose(g, _sym(inv.T @ phi @ inv), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_complex_hermitian_directions(lower):
    """Complex (Hermitian) input, split into real and imaginary parts; JAX's
    no-conjugation convention makes the dot-product test hold exactly."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    a = x @ x.conj().T + 3 * np.eye(3)
    vr, vi = _sym(rng.standard_normal((3, 3))), rng.standard_normal((3, 3))
    vi = (vi - vi.T) / 2

    def f(re, im):
        y = _op(Opcode.CHOLESKY, lax.complex(as_array(re), as_array(im)), lower=lower)
        return lax.real(y), lax.imag(y)

    eps = 1e-6
    plus, minus = f(a.real + eps * vr, a.imag + eps * vi), f(a.real - eps * vr, a.imag - eps * vi)
    fd = [(np.asarray(p) - np.asarray(m)) / (2 * eps) for p, m in zip(plus, minus)]
    tangent = xlapy.jvp(f, (a.real, a.imag), (vr, vi))[1]
    for t, d in zip(tangent, fd):
        np.testing.assert_allclose(np.asarray(t), d, atol=1e-6)
    u = [rng.standard_normal((3, 3)) for _ in range(2)]
    cts = xlapy.vjp(f, a.real, a.imag)[1](tuple(u))
    lhs, rhs = _inner([vr, vi], cts), _inner(u, fd)
    assert abs(lhs - rhs) <= 1e-5 * (1 + abs(rhs))
    assert abs(_inner(tangent, u) - lhs) <= 1e-9 * (1 + abs(lhs))


# -- triangular-solve -------------------------------------------------------------------
def _solve_fn(left_side, lower, unit_diagonal, transpose_a):
    def f(a, b):
        return _op(Opcode.TRIANGULAR_SOLVE, a, b, left_side=left_side, lower=lower,
                   unit_diagonal=unit_diagonal, transpose_a=transpose_a)
    return f


@SETTINGS
@given(left_side=st.booleans(), lower=st.booleans(), unit_diagonal=st.booleans(),
       transpose_a=st.sampled_from(list(TriangularSolveTranspose)),
       batch=st.sampled_from([(), (2,)]), m=st.integers(1, 4), n=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_triangular_solve(left_side, lower, unit_diagonal, transpose_a, batch, m, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(batch + (m, m)) + 3 * np.eye(m)
    b = rng.standard_normal(batch + ((m, n) if left_side else (n, m)))
    check_grads(_solve_fn(left_side, lower, unit_diagonal, transpose_a), [a, b], seed=seed)


@pytest.mark.parametrize("transpose_a", list(TriangularSolveTranspose))
@pytest.mark.parametrize("unit_diagonal", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("left_side", [True, False])
def test_triangular_solve_every_attribute(left_side, lower, unit_diagonal, transpose_a):
    rng = np.random.default_rng(15)
    a = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((2, 3, 2) if left_side else (2, 2, 3))
    check_grads(_solve_fn(left_side, lower, unit_diagonal, transpose_a), [a, b], use_jit=False)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
def test_triangular_solve_cotangent_only_on_read_triangle(lower, unit_diagonal):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((4, 4)) + 3 * np.eye(4), rng.standard_normal((4, 2))
    f = _solve_fn(True, lower, unit_diagonal, TriangularSolveTranspose.TRANSPOSE)
    ct_a = np.asarray(xlapy.vjp(lambda x: f(x, b), a)[1](np.ones((4, 2)))[0])
    k = (-1 if lower else 1) if unit_diagonal else 0
    read = np.tril(np.ones((4, 4)), k) if lower else np.triu(np.ones((4, 4)), k)
    assert np.all(ct_a[read == 0] == 0)
    assert np.all(ct_a[read == 1] != 0)


@pytest.mark.parametrize("transpose_a", list(TriangularSolveTranspose))
@pytest.mark.parametrize("left_side", [True, False])
def test_triangular_solve_complex(transpose_a, left_side):
    rng = np.random.default_rng(4)
    parts = [rng.standard_normal((3, 3)) + 3 * np.eye(3), rng.standard_normal((3, 3)),
             rng.standard_normal((3, 2) if left_side else (2, 3)),
             rng.standard_normal((3, 2) if left_side else (2, 3))]
    solve = _solve_fn(left_side, True, False, transpose_a)

    def f(ar, ai, br, bi):
        x = solve(lax.complex(as_array(ar), as_array(ai)), lax.complex(as_array(br), as_array(bi)))
        return lax.real(x), lax.imag(x)

    check_grads(f, parts, use_jit=False)


# -- fft --------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", [FftType.FFT, FftType.IFFT])
@pytest.mark.parametrize("lengths", [(1,), (4,), (5,), (3, 4)])
def test_fft_complex(kind, lengths):
    rng = np.random.default_rng(5)
    shape = (2,) + lengths

    def f(re, im):
        y = _op(Opcode.FFT, lax.complex(as_array(re), as_array(im)), fft_type=kind,
                fft_length=lengths)
        return lax.real(y), lax.imag(y)

    check_grads(f, [rng.standard_normal(shape), rng.standard_normal(shape)])


@pytest.mark.parametrize("lengths", [(1,), (2,), (4,), (5,), (3, 4), (2, 3, 5)])
def test_rfft(lengths):
    rng = np.random.default_rng(6)

    def f(x):
        y = _op(Opcode.FFT, x, fft_type=FftType.RFFT, fft_length=lengths)
        return lax.real(y), lax.imag(y)

    check_grads(f, [rng.standard_normal((2,) + lengths)])


@pytest.mark.parametrize("lengths", [(1,), (2,), (4,), (5,), (3, 4), (2, 3, 5)])
def test_irfft(lengths):
    rng = np.random.default_rng(7)
    shape = (2,) + lengths[:-1] + (lengths[-1] // 2 + 1,)

    def f(re, im):
        return _op(Opcode.FFT, lax.complex(as_array(re), as_array(im)),
                   fft_type=FftType.IRFFT, fft_length=lengths)

    check_grads(f, [rng.standard_normal(shape), rng.standard_normal(shape)])


# -- batch normalisation ----------------------------------------------------------------
BN_SHAPES = [((5, 3), 1), ((5, 3), 0), ((2, 3, 4), 1), ((2, 3, 4), 2), ((4, 1, 2), 1)]


@pytest.mark.parametrize("shape,feature", BN_SHAPES)
def test_batch_norm_training(shape, feature):
    rng = np.random.default_rng(8)
    c = shape[feature]

    def f(x, scale, offset):
        return _op(Opcode.BATCH_NORM_TRAINING, x, scale, offset, epsilon=1e-3,
                   feature_index=feature)

    check_grads(f, [rng.standard_normal(shape), rng.standard_normal(c),
                    rng.standard_normal(c)])


@pytest.mark.parametrize("shape,feature", BN_SHAPES)
def test_batch_norm_inference(shape, feature):
    rng = np.random.default_rng(9)
    c = shape[feature]

    def f(x, scale, offset, mean, var):
        return _op(Opcode.BATCH_NORM_INFERENCE, x, scale, offset, mean, var, epsilon=1e-3,
                   feature_index=feature)

    check_grads(f, [rng.standard_normal(shape), rng.standard_normal(c), rng.standard_normal(c),
                    rng.standard_normal(c), rng.uniform(0.5, 2.0, c)])


def test_batch_norm_training_under_grad_of_a_loss():
    """Only y used: the mean/variance outputs get no cotangent."""
    rng = np.random.default_rng(10)
    x = rng.standard_normal((6, 2))

    def loss(x):
        y, _, _ = _op(Opcode.BATCH_NORM_TRAINING, x, np.ones(2), np.zeros(2), epsilon=1e-3,
                      feature_index=1)
        return lax.reduce_sum(lax.mul(y, as_array(np.arange(12.0).reshape(6, 2))), (0, 1))

    g = np.asarray(xlapy.grad(loss)(x))
    np.testing.assert_allclose(g.sum(axis=0), 0, atol=1e-10)  # normalising removes the mean


@pytest.mark.parametrize("shape,feature", BN_SHAPES[:3])
def test_batch_norm_grad(shape, feature):
    """batch-norm-grad differentiates its decomposition (reduce and broadcast rules)."""
    rng = np.random.default_rng(11)
    c = shape[feature]

    def f(x, scale, mean, var, dy):
        return _op(Opcode.BATCH_NORM_GRAD, x, scale, mean, var, dy, epsilon=1e-3,
                   feature_index=feature)

    check_grads(f, [rng.standard_normal(shape), rng.standard_normal(c), rng.standard_normal(c),
                    rng.uniform(0.5, 2.0, c), rng.standard_normal(shape)])


# -- through the frontend, and second order ---------------------------------------------
def test_xnp_cholesky_and_solve_triangular():
    """xnp.linalg.cholesky symmetrises its input, so general directions work."""
    import xlapy.numpy as xnp

    rng = np.random.default_rng(12)
    a, b = _spd(rng, (2,), 3), rng.standard_normal((2, 3, 2))

    def f(a, b):
        low = xnp.linalg.cholesky(a)
        return xnp.linalg.solve_triangular(low, b, lower=True, trans="T")

    check_grads(f, [a, b])


def test_second_order_triangular_solve_and_cholesky():
    """The rules' own HLO (solves, dots, masks) is differentiable again."""
    rng = np.random.default_rng(13)
    a, b = _spd(rng, (), 3), rng.standard_normal((3, 2))
    solve = _solve_fn(True, True, False, TriangularSolveTranspose.NO_TRANSPOSE)

    def g(a, b):
        def loss(a, b):
            low = _op(Opcode.CHOLESKY, _sym_op(a), lower=True)
            return lax.reduce_sum(lax.mul(solve(low, b), solve(low, b)), (0, 1))
        return xlapy.grad(loss, argnums=(0, 1))(a, b)

    check_grads(g, [a, b], rtol=1e-4)


def _sym_op(a):
    a = as_array(a)
    return lax.mul(lax.add(a, lax.transpose(a, (1, 0))), as_array(np.array(0.5)))


def test_second_order_batch_norm_training():
    rng = np.random.default_rng(14)
    x, scale = rng.standard_normal((4, 3)), rng.standard_normal(3)
    w = rng.standard_normal((4, 3))

    def g(x, scale):
        def loss(x, scale):
            y, mean, var = _op(Opcode.BATCH_NORM_TRAINING, x, scale, np.zeros(3),
                               epsilon=1e-3, feature_index=1)
            return lax.add(lax.reduce_sum(lax.mul(lax.mul(y, y), as_array(w)), (0, 1)),
                           lax.reduce_sum(lax.mul(mean, var), (0,)))
        return xlapy.grad(loss, argnums=(0, 1))(x, scale)

    check_grads(g, [x, scale], rtol=1e-4)


def test_float32_cotangents_keep_dtype():
    rng = np.random.default_rng(16)
    a = _spd(rng, (), 3).astype(np.float32)
    b = rng.standard_normal((3, 2)).astype(np.float32)
    solve = _solve_fn(True, True, False, TriangularSolveTranspose.ADJOINT)
    cts = xlapy.vjp(lambda a, b: solve(_op(Opcode.CHOLESKY, a, lower=False), b), a, b)[1](
        np.ones((3, 2), np.float32))
    assert [np.asarray(c).dtype for c in cts] == [np.float32, np.float32]
    x = rng.standard_normal((4, 3)).astype(np.float32)
    ones = np.ones(3, np.float32)
    out, pullback = xlapy.vjp(lambda x: _op(Opcode.BATCH_NORM_TRAINING, x, ones, ones,
                                            epsilon=1e-3, feature_index=1), x)
    (ct,) = pullback(tuple(np.ones(o.shape, np.float32) for o in out))
    assert np.asarray(ct).dtype == np.float32
