"""xnp contractions (matmul, dot, vdot, vecdot, inner, outer, tensordot,
einsum, kron, matvec, vecmat) and xnp.linalg against NumPy/SciPy, over
shapes and dtypes, eagerly and under jit (the two must agree)."""

import ml_dtypes
import numpy as np
import pytest
import scipy.linalg
from hypothesis import given
from hypothesis import strategies as st

import xlapy
import xlapy.numpy as xnp
from xlapy import config
from xlapy.core.trace import as_array

L = xnp.linalg
BF16 = np.dtype(ml_dtypes.bfloat16)
RTOL = {"float32": 2e-5, "float64": 1e-12, "complex64": 2e-5, "complex128": 1e-12,
        "float16": 4e-3, "bfloat16": 3e-2}


@pytest.fixture(autouse=True)
def _x64():
    """The float64 cases check float64 results (to 1e-12 against NumPy and
    SciPy), so this module runs with x64, as JAX's linalg tests do; float32
    data stays float32 either way."""
    with config.enable_x64(True):
        yield


def both(fn, *args):
    """fn's result eagerly and under jit; they must agree to rounding."""
    eager = fn(*[as_array(a) for a in args])
    jitted = xlapy.jit(fn)(*args)
    outs = []
    for e, j in zip(_list(eager), _list(jitted)):
        e, j = np.asarray(e), np.asarray(j)
        assert e.dtype == j.dtype and e.shape == j.shape, (e.dtype, j.dtype, e.shape, j.shape)
        if e.dtype.kind in "fc" or e.dtype == BF16:
            np.testing.assert_allclose(j.astype(np.complex128), e.astype(np.complex128),
                                       rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(j, e)
        outs.append(e)
    return outs if isinstance(eager, tuple) else outs[0]


def _list(x):
    return list(x) if isinstance(x, tuple) else [x]


def close(got, want, dtype=None, scale=1.0):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    rtol = RTOL.get(got.dtype.name, 0) * scale
    if rtol == 0:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.complex128), want.astype(np.complex128),
                                   rtol=rtol, atol=rtol)


def data(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(-4 if dtype.kind == "i" else 0, 5, shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


# -- matmul and friends ----------------------------------------------------------------------
MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                 ((5, 2, 3), (3, 4)), ((5, 1, 2, 3), (4, 3, 2)), ((1, 2, 3), (1, 3, 4)),
                 ((6, 1, 2, 3), (1, 5, 3, 2)), ((2, 3, 4), (2, 4, 5)), ((0, 3), (3, 2))]


@pytest.mark.parametrize("a_shape, b_shape", MATMUL_SHAPES)
def test_matmul_shapes(a_shape, b_shape):
    a, b = data(a_shape), data(b_shape, seed=1)
    close(both(xnp.matmul, a, b), np.matmul(a, b), np.float32)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.uint8, np.complex64, np.bool_,
                                   np.float16, BF16])
def test_matmul_dtypes(dtype):
    a, b = data((2, 3, 4), dtype), data((4, 2), dtype, seed=1)
    want = np.matmul(a.astype(np.float64) if dtype == BF16 else a,
                     b.astype(np.float64) if dtype == BF16 else b)
    got = both(xnp.matmul, a, b)
    assert got.dtype == np.dtype(dtype)
    close(got, want.astype(dtype), scale=10)


def test_matmul_promotion_operator_and_errors():
    a = data((2, 3))
    assert xnp.matmul(a, data((3,), np.float64)).dtype == np.float64
    assert xnp.matmul(a, np.ones(3, np.int32)).dtype == np.float32
    out = xnp.matmul(a, [1, 2, 3])                         # list: int32, promotes to f32
    close(out, a @ np.array([1, 2, 3], np.float32), np.float32)
    x = as_array(a)
    close(x @ data((3, 2)), a @ data((3, 2)), np.float32)
    close(np.ones((4, 2), np.float32) @ x, np.ones((4, 2), np.float32) @ a, np.float32)
    pref = xnp.matmul(np.ones((2, 3), np.int8), np.ones((3, 2), np.int8),
                      preferred_element_type=np.int32)
    assert pref.dtype == np.int32 and int(pref[0, 0]) == 3
    with pytest.raises(ValueError, match="scalar"):
        xnp.matmul(np.float32(2), a)
    with pytest.raises(ValueError, match="contracting"):
        xnp.matmul(a, data((4, 2)))
    with pytest.raises(ValueError, match="broadcast"):
        xnp.matmul(data((2, 2, 3)), data((3, 3, 2)))


@pytest.mark.parametrize("a_shape, b_shape", [((), (3,)), ((3,), (3,)), ((2, 3), (3,)),
                                              ((2, 3), (3, 4)), ((2, 2, 3), (4, 3, 5)),
                                              ((3,), (2, 3, 4))])
def test_dot(a_shape, b_shape):
    a, b = data(a_shape), data(b_shape, seed=1)
    close(both(xnp.dot, a, b), np.dot(a, b), np.float32)


def test_vdot_inner_outer():
    a, b = data((2, 3), np.complex64), data((3, 2), np.complex64, seed=1)
    close(both(xnp.vdot, a, b), np.vdot(a, b), np.complex64)
    x, y = data((2, 4)), data((3, 4), seed=1)
    close(both(xnp.inner, x, y), np.inner(x, y), np.float32)
    close(both(xnp.inner, x, np.float32(2)), np.inner(x, np.float32(2)), np.float32)
    close(both(xnp.outer, x, data((3,), np.int32)), np.outer(x, data((3,), np.int32)),
          np.float32)


@pytest.mark.parametrize("a_shape, b_shape, axis", [((3,), (3,), -1), ((2, 3), (3,), -1),
                                                    ((4, 1, 3), (2, 3), -1),
                                                    ((3, 2), (3, 1), 0)])
def test_vecdot(a_shape, b_shape, axis):
    a, b = data(a_shape, np.complex64), data(b_shape, np.complex64, seed=1)
    got = both(lambda u, v: xnp.vecdot(u, v, axis=axis), a, b)
    want = np.sum(np.conj(a) * b, axis=axis)
    close(got, want, np.complex64)
    close(both(L.vecdot, a.real, b.real), np.sum(a.real * b.real, axis=-1), np.float32)


@pytest.mark.parametrize("a_shape, b_shape, axes", [((2, 3, 4), (3, 4, 5), 2),
                                                    ((2, 3), (3, 2), 1), ((2, 3), (4,), 0),
                                                    ((2, 3, 4), (4, 2), ([2, 0], [0, 1])),
                                                    ((3, 4), (4, 3), (1, 0))])
def test_tensordot(a_shape, b_shape, axes):
    a, b = data(a_shape), data(b_shape, seed=1)
    close(both(lambda u, v: xnp.tensordot(u, v, axes), a, b), np.tensordot(a, b, axes),
          np.float32)


def test_kron_matvec_vecmat():
    for a_shape, b_shape in [((2, 3), (3, 2)), ((3,), (2, 2)), ((2, 1, 2), (3,))]:
        a, b = data(a_shape, np.int32), data(b_shape, np.int32, seed=1)
        close(both(xnp.kron, a, b), np.kron(a, b), np.int32)
    m, v = data((4, 2, 3)), data((3,), seed=1)
    close(both(xnp.matvec, m, v), np.einsum("...ij,...j->...i", m, v), np.float32)
    u, m2 = data((2, 3), np.complex64), data((3, 4), np.complex64, seed=2)
    close(both(xnp.vecmat, u, m2), np.einsum("...i,...ij->...j", np.conj(u), m2), np.complex64)


# -- einsum --------------------------------------------------------------------------------
EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]), ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("i,i", [(3,), (3,)]),
    ("i,j->ij", [(3,), (4,)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk", [(2, 2, 3), (3, 4)]), ("...ii->...i", [(2, 3, 3)]),
    ("ijk,jl,lk->i", [(2, 3, 4), (3, 5), (5, 4)]), ("iij->j", [(3, 3, 2)]),
    ("ij,ij->", [(2, 3), (1, 3)]), ("a,b,c,a->bc", [(2,), (3,), (4,), (2,)]),
    ("ijk->kji", [(2, 3, 4)]), ("i...,i...->...", [(3, 2, 2), (3, 1, 2)]),
    ("ab,cd,bc->ad", [(2, 3), (4, 5), (3, 4)]), ("Ab,bA->", [(2, 3), (3, 2)]), (",ij", [(), (2, 2)]),
]


@pytest.mark.parametrize("subscripts, shapes", EINSUMS)
def test_einsum_against_numpy(subscripts, shapes):
    ops = [data(s, seed=i) for i, s in enumerate(shapes)]
    got = both(lambda *o: xnp.einsum(subscripts, *o), *ops)
    close(got, np.einsum(subscripts, *ops), np.float32, scale=5)


def test_einsum_options_and_forms():
    a, b, c = data((2, 3)), data((3, 4), seed=1), data((4, 5), seed=2)
    want = np.einsum("ij,jk,kl->il", a, b, c)
    for optimize in (False, True, "greedy", [(1, 2), (0, 1)], ["einsum_path", (0, 1), (0, 1)]):
        close(xnp.einsum("ij,jk,kl->il", a, b, c, optimize=optimize), want, np.float32, 5)
    path, text = xnp.einsum_path("ij,jk,kl->il", a, b, c)
    assert path[0] == "einsum_path" and "contract" in text
    close(xnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), a @ b, np.float32)
    d = data((3, 2), seed=3)
    close(xnp.einsum(a, [Ellipsis, 1], d, [1, Ellipsis]),
          np.einsum(a, [Ellipsis, 1], d, [1, Ellipsis]), np.float32)
    ints = xnp.einsum("ij,jk->ik", np.ones((2, 3), np.int8), np.ones((3, 2), np.int8),
                      preferred_element_type=np.int32)
    assert ints.dtype == np.int32 and int(ints[0, 0]) == 3
    bools = xnp.einsum("ij,jk->ik", np.eye(2, dtype=bool), np.array([[True, False]] * 2))
    assert bools.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(bools), [[True, False], [True, False]])
    assert xnp.einsum("i,->i", np.ones(3, np.float16), 2.0).dtype == np.float16


def test_einsum_errors():
    with pytest.raises(ValueError, match="operand terms"):
        xnp.einsum("ij,jk", data((2, 2)))
    with pytest.raises(ValueError, match="sizes"):
        xnp.einsum("ij,jk", data((2, 3)), data((4, 2)))
    with pytest.raises(ValueError, match="appears in no operand"):
        xnp.einsum("ij->k", data((2, 2)))
    with pytest.raises(ValueError, match="names 2 dimensions"):
        xnp.einsum("ij", data((2, 2, 2)))


@given(st.data())
def test_einsum_random_specs(draw):
    """Random two-operand specs over a small alphabet, explicit and implicit."""
    letters = "abcd"
    sizes = {ch: draw.draw(st.integers(1, 3)) for ch in letters}
    terms = [draw.draw(st.lists(st.sampled_from(letters), min_size=0, max_size=3))
             for _ in range(2)]
    used = sorted(set(terms[0]) | set(terms[1]))
    output = draw.draw(st.permutations(used)).__getitem__(slice(draw.draw(
        st.integers(0, len(used)))))
    explicit = draw.draw(st.booleans())
    spec = ",".join("".join(t) for t in terms) + ("->" + "".join(output) if explicit else "")
    ops = [data(tuple(sizes[ch] for ch in t), np.float64, seed=i) for i, t in enumerate(terms)]
    close(xnp.einsum(spec, *ops), np.einsum(spec, *ops), np.float64, scale=10)


# -- linalg --------------------------------------------------------------------------------
def spd(shape, dtype=np.float64, seed=0):
    a = data(shape, dtype, seed)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
def test_cholesky(dtype, shape):
    a = spd(shape, dtype)
    lower = both(L.cholesky, a)
    close(lower, np.linalg.cholesky(a), dtype, scale=10)
    upper = both(lambda x: L.cholesky(x, upper=True), a)
    close(upper, np.linalg.cholesky(a, upper=True), dtype, scale=10)
    assert np.isnan(np.asarray(L.cholesky(-np.eye(2)))).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("a_shape, b_shape", [((4, 4), (4,)), ((3, 3), (3, 2)),
                                              ((2, 4, 4), (2, 4, 3)), ((2, 3, 3), (3, 1)),
                                              ((3, 3), (5, 3, 2))])
def test_solve(dtype, a_shape, b_shape):
    a = (data(a_shape, dtype) + 2 * np.eye(a_shape[-1])).astype(dtype)
    b = data(b_shape, dtype, seed=1)
    got = both(L.solve, a, b)
    want = np.linalg.solve(a, b)
    close(got, want, dtype, scale=50)


def test_solve_pivots_and_singular():
    a = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [4.0, -3.0, 8.0]])
    b = np.array([1.0, 2.0, 3.0])
    close(L.solve(a, b), np.linalg.solve(a, b), np.float64, scale=10)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert not np.isfinite(np.asarray(L.solve(singular, np.ones(2)))).all()
    assert L.solve(np.eye(2, dtype=np.int32), [1, 2]).dtype == np.float64  # [1, 2]: int64
    with config.enable_x64(False):
        assert L.solve(np.eye(2, dtype=np.int32), [1, 2]).dtype == np.float32
    with pytest.raises(ValueError, match="square"):
        L.solve(np.ones((2, 3)), np.ones(2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_inv_det_slogdet(dtype):
    a = data((3, 4, 4), dtype)
    close(both(L.inv, a), np.linalg.inv(a), dtype, scale=200)
    close(both(L.det, a), np.linalg.det(a), dtype, scale=20)
    sign, logdet = both(L.slogdet, a)
    want_sign, want_log = np.linalg.slogdet(a)
    close(sign, want_sign, dtype, scale=20)
    close(logdet, want_log, np.finfo(dtype).dtype, scale=20)


def test_det_special_cases():
    assert float(L.det(np.array([[1.0, 2.0], [2.0, 4.0]]))) == 0.0
    sign, logdet = L.slogdet(np.zeros((3, 3)))
    assert float(sign) == 0.0 and np.isneginf(float(logdet))
    perm = np.eye(3)[[1, 0, 2]]
    assert float(L.det(perm)) == -1.0
    assert float(L.det(np.eye(1) * 5)) == 5.0
    close(L.det(np.array([[2, 1], [1, 3]], np.int32)), np.float32(5), np.float32)


def test_lu_factor_matches_scipy():
    a = data((5, 5), np.float64)
    lu, piv = both(L.lu_factor, a)
    want_lu, want_piv = scipy.linalg.lu_factor(a)
    close(lu, want_lu, np.float64, scale=10)
    np.testing.assert_array_equal(piv, want_piv)


@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
@pytest.mark.parametrize("lower", [True, False])
def test_solve_triangular(trans, lower):
    a = (np.tril if lower else np.triu)(data((4, 4), np.complex128)) + 3 * np.eye(4)
    b = data((4, 2), np.complex128, seed=1)
    got = L.solve_triangular(a, b, trans=trans, lower=lower)
    close(got, scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower), np.complex128)
    vector = L.solve_triangular(a, b[:, 0], trans=trans, lower=lower, unit_diagonal=True)
    close(vector, scipy.linalg.solve_triangular(a, b[:, 0], trans=trans, lower=lower,
                                                unit_diagonal=True), np.complex128)


def test_triangular_solve_right_side_batched():
    a = np.triu(data((2, 3, 3), np.float64)) + 3 * np.eye(3)
    b = data((2, 4, 3), np.float64, seed=1)
    got = both(lambda u, v: L.triangular_solve(u, v, left_side=False, lower=False,
                                               transpose_a=True), a, b)
    close(got @ np.swapaxes(a, -1, -2), b, np.float64, scale=100)


def test_matrix_power():
    a = data((2, 3, 3), np.float64) + np.eye(3)
    for n in (0, 1, 2, 5, -1, -3):
        close(L.matrix_power(a, n), np.linalg.matrix_power(a, n), np.float64, scale=1000)
    ints = np.array([[1, 1], [1, 0]], np.int32)
    np.testing.assert_array_equal(np.asarray(L.matrix_power(ints, 10)), [[89, 55], [55, 34]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_matches_numpy(dtype, shape, mode):
    a = data(shape, dtype)
    q, r = both(lambda x: L.qr(x, mode), a)
    want_q, want_r = np.linalg.qr(a, mode)
    close(q, want_q, dtype, scale=20)     # LAPACK's sign conventions, so equal, not just
    close(r, want_r, dtype, scale=20)     # equivalent up to signs
    close(np.asarray(L.qr(a, "r")), np.linalg.qr(a, "r"), dtype, scale=20)


def test_qr_edge_cases():
    q, r = L.qr(np.zeros((3, 2)))
    np.testing.assert_array_equal(np.asarray(r), np.zeros((2, 2)))
    np.testing.assert_array_equal(np.asarray(q), np.eye(3)[:, :2])
    q, r = L.qr(np.eye(3, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(q), np.eye(3))
    with pytest.raises(ValueError, match="mode"):
        L.qr(np.eye(2), "raw")


def test_multi_dot_cross_trace_diagonal():
    mats = [data((3,)), data((3, 4), seed=1), data((4, 6), seed=2), data((6, 2), seed=3),
            data((2,), seed=4)]
    close(L.multi_dot(mats), np.linalg.multi_dot(mats), np.float32, scale=10)
    close(L.multi_dot(mats[1:4]), np.linalg.multi_dot(mats[1:4]), np.float32, scale=10)
    u, v = data((4, 3)), data((3,), seed=1)
    close(both(L.cross, u, v), np.cross(u, v), np.float32)
    w = data((2, 3, 3))
    close(L.trace(w), np.trace(w, axis1=-2, axis2=-1), np.float32)
    close(L.diagonal(w, offset=1), np.diagonal(w, 1, -2, -1), np.float32)
    close(L.matrix_transpose(w), np.swapaxes(w, -1, -2), np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (2, 5, 5)])
def test_eigh(dtype, shape):
    a = data(shape, dtype)
    a = a + np.swapaxes(a, -1, -2)
    w, v = both(L.eigh, a)
    assert w.dtype == v.dtype == np.dtype(dtype)
    close(w, np.linalg.eigvalsh(a), dtype, scale=50)
    recon = v @ (w[..., None] * np.swapaxes(v, -1, -2))
    close(recon, a, dtype, scale=50)
    close(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(shape[-1]), shape), dtype, 50)


def test_eigh_variants():
    a = data((4, 4), np.float64)
    sym = a + a.T
    lower = L.eigh(np.tril(sym) + np.triu(a, 1) * 7, UPLO="L", symmetrize_input=False)
    close(lower.eigenvalues, np.linalg.eigvalsh(sym), np.float64, scale=100)
    upper = L.eigvalsh(np.triu(sym), UPLO="U", symmetrize_input=False)
    close(upper, np.linalg.eigvalsh(sym), np.float64, scale=100)
    h = data((3, 3), np.complex128)
    h = h + h.conj().T
    close(L.eigvalsh(h), np.linalg.eigvalsh(h), np.float64, scale=100)
    with pytest.raises(NotImplementedError, match="complex"):
        L.eigh(h)
    deg = np.diag([2.0, 2.0, -1.0])
    w, v = L.eigh(deg)
    close(w, [-1.0, 2.0, 2.0], np.float64)
    close(np.abs(np.asarray(v)).sum(0), [1.0, 1.0, 1.0], np.float64)


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5)])
def test_svdvals(shape):
    x = data(shape, np.float64)
    close(both(L.svdvals, x), np.linalg.svd(x, compute_uv=False), np.float64, scale=1000)


NORM_CASES = [(None, None, (3, 4)), (None, None, (2, 3, 4)), (2, None, (5,)), (1, 0, (3, 4)),
              (np.inf, 1, (3, 4)), (-np.inf, 1, (3, 4)), (0, 1, (3, 4)), (3, -1, (2, 5)),
              (-1.5, 0, (4,)), ("fro", (0, 1), (3, 4)), (1, (1, 0), (3, 4)),
              (-1, None, (3, 4)), (np.inf, (0, 2), (3, 2, 4)), (-np.inf, None, (3, 4)),
              (2, None, (3, 4)), ("nuc", (1, 0), (3, 4)), (-2, (0, 1), (4, 3))]


@pytest.mark.parametrize("ord, axis, shape", NORM_CASES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm(ord, axis, shape, keepdims):
    x = data(shape, np.float32)
    x[0, ...] = 0.0
    got = both(lambda v: L.norm(v, ord=ord, axis=axis, keepdims=keepdims), x)
    with np.errstate(divide="ignore"):  # negative orders of zero vectors
        want = np.linalg.norm(x.astype(np.float64), ord=ord, axis=axis, keepdims=keepdims)
    close(got, want.astype(np.float32), np.float32, scale=5)


def test_norm_dtypes_and_array_api():
    z = data((3, 4), np.complex64)
    assert L.norm(z).dtype == np.float32
    close(L.norm(z), np.linalg.norm(z), np.float32)
    assert L.norm(np.array([3, 4], np.int32)).dtype == np.float32
    assert float(L.norm(np.array([3, 4], np.int32))) == 5.0
    x = data((2, 3, 4))
    close(L.vector_norm(x, axis=(1, 2), ord=1), np.sum(np.abs(x), axis=(1, 2)), np.float32)
    close(L.vector_norm(x), np.linalg.norm(x.ravel()), np.float32)
    close(L.matrix_norm(x, ord=np.inf), np.linalg.norm(x, ord=np.inf, axis=(1, 2)), np.float32)
    for ord in (2, -2, "nuc"):
        close(L.norm(x, ord=ord, axis=(0, 2)), np.linalg.norm(x, ord=ord, axis=(0, 2)),
              np.float32, scale=20)
    with pytest.raises(ValueError, match="axes"):
        L.norm(x, axis=(0, 1, 2))
