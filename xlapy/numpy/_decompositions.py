"""Matrix factorisations as masked lax loops: LU with partial pivoting,
Householder QR, and Jacobi's symmetric eigensolver.

Each is a `fori_loop` (or `while_loop`) whose body touches the whole matrix
with iota masks and selects, so shapes never depend on the data: the loop
traces to one HLO `while`, runs batched over leading dimensions, and gives
the same numbers eagerly and under jit. Picking a row or column by a traced
index uses a mask and a sum of zeros (exact for any values) rather than
gathers. `xnp.linalg` builds its public functions on these kernels.
"""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy.core import dtypes
from xlapy.core.trace import Array, as_array
from xlapy.lax import primitives as lax

_INT = np.dtype(np.int32)


def zeros(shape, dtype) -> Array:
    return lax.broadcast_in_dim(as_array(0, dtype), tuple(shape), ())


def ones(shape, dtype) -> Array:
    return lax.broadcast_in_dim(as_array(1, dtype), tuple(shape), ())


def identity(n: int, dtype, batch=()) -> Array:
    eye = lax.eq(lax.broadcasted_iota(_INT, (n, n), 0), lax.broadcasted_iota(_INT, (n, n), 1))
    eye = lax.convert_element_type(eye, dtype)
    return lax.broadcast_in_dim(eye, (*batch, n, n), (len(batch), len(batch) + 1))


# -- LU -----------------------------------------------------------------------------------
def _column(x: Array, k) -> Array:
    """Column k of x (..., r, c), as (..., r)."""
    return lax.dynamic_index_in_dim(x, k, x.ndim - 1, False, allow_negative_indices=False)


def _pivot_row(x: Array, k) -> Array:
    """Per batch element, the row at or below k with the largest |x[row, k]|."""
    magnitude = xnp.abs(_column(x, k))
    rows = lax.broadcasted_iota(_INT, magnitude.shape, magnitude.ndim - 1)
    candidate = lax.ge(rows, lax.broadcast_in_dim(k, rows.shape, ()))
    excluded = lax.broadcast_in_dim(as_array(-1, magnitude.dtype), rows.shape, ())
    return lax.argmax(lax.select(candidate, magnitude, excluded), magnitude.ndim - 1, _INT)


def _swap_rows(x: Array, k, p: Array) -> tuple[Array, Array]:
    """x with rows k and p exchanged per batch element, and the new row k. Row p
    is picked with a mask and a sum of zeros, which is exact for any values."""
    batch_dims = tuple(range(x.ndim - 2))
    rows = lax.broadcasted_iota(_INT, x.shape, x.ndim - 2)
    at_p = lax.eq(rows, lax.broadcast_in_dim(p, x.shape, batch_dims))
    at_k = lax.eq(rows, lax.broadcast_in_dim(k, x.shape, ()))
    row_p = lax.reduce_sum(lax.select(at_p, x, zeros(x.shape, x.dtype)), (x.ndim - 2,))
    row_k = lax.dynamic_index_in_dim(x, k, x.ndim - 2, False, allow_negative_indices=False)
    spread = (*batch_dims, x.ndim - 1)
    wide_p, wide_k = (lax.broadcast_in_dim(r, x.shape, spread) for r in (row_p, row_k))
    return lax.select(at_k, wide_p, lax.select(at_p, wide_k, x)), row_p


def _eliminate(x: Array, k, pivot_row: Array) -> Array:
    """Subtract multiples of row k from the rows below it, right of column k,
    and store the multipliers in column k. A zero pivot (a singular column)
    eliminates nothing, as LAPACK's getrf."""
    batch_dims = tuple(range(x.ndim - 2))
    rows = lax.broadcasted_iota(_INT, x.shape, x.ndim - 2)
    cols = lax.broadcasted_iota(_INT, x.shape, x.ndim - 1)
    k_wide = lax.broadcast_in_dim(k, x.shape, ())
    pivot = lax.dynamic_index_in_dim(pivot_row, k, pivot_row.ndim - 1, False,
                                     allow_negative_indices=False)
    pivot = lax.broadcast_in_dim(pivot, x.shape, batch_dims)
    nonzero = lax.ne(pivot, zeros(x.shape, x.dtype))
    safe = lax.select(nonzero, pivot, lax.broadcast_in_dim(as_array(1, x.dtype),
                                                           x.shape, ()))
    column = lax.broadcast_in_dim(_column(x, k), x.shape, (*batch_dims, x.ndim - 2))
    below = lax.bitwise_and(lax.gt(rows, k_wide), nonzero)
    factors = lax.select(below, lax.div(column, safe), zeros(x.shape, x.dtype))
    row = lax.broadcast_in_dim(pivot_row, x.shape, (*batch_dims, x.ndim - 1))
    trailing = lax.bitwise_and(below, lax.gt(cols, k_wide))
    x = lax.select(trailing, lax.sub(x, lax.mul(factors, row)), x)
    return lax.select(lax.bitwise_and(below, lax.eq(cols, k_wide)), factors, x)


def _lu_step(k, state):
    """Column k of Gaussian elimination with partial pivoting."""
    x, pivots = state
    p = _pivot_row(x, k)
    x, pivot_row = _swap_rows(x, k, p)
    pivots = lax.dynamic_update_index_in_dim(pivots, p, k, pivots.ndim - 1,
                                             allow_negative_indices=False)
    return _eliminate(x, k, pivot_row), pivots


def lu(a: Array, rhs: Array | None = None):
    """(lu, rhs', pivots): P a = L U packed in lu (unit L below the diagonal),
    pivots LAPACK's row swaps (row k exchanged with pivots[k] at step k), and
    rhs' = L^-1 P rhs when rhs is given, eliminated alongside as extra columns
    of an augmented matrix."""
    batch, n = a.shape[:-2], a.shape[-1]
    x = a if rhs is None else lax.concatenate([a, rhs], a.ndim - 1)
    pivots = zeros((*batch, n), _INT)
    x, pivots = lax.fori_loop(np.int32(0), np.int32(n), _lu_step, (x, pivots))
    if rhs is None:
        return x, None, pivots
    lu = lax.slice_in_dim(x, 0, n, axis=x.ndim - 1)
    return lu, lax.slice_in_dim(x, n, x.shape[-1], axis=x.ndim - 1), pivots



def diagonal(x: Array) -> Array:
    rows = lax.broadcasted_iota(_INT, x.shape, x.ndim - 2)
    cols = lax.broadcasted_iota(_INT, x.shape, x.ndim - 1)
    return lax.reduce_sum(lax.select(lax.eq(rows, cols), x, zeros(x.shape, x.dtype)),
                          (x.ndim - 1,))


def parity_negative(pivots: Array) -> Array:
    """Whether the row swaps make an odd permutation, per batch element."""
    steps = lax.broadcasted_iota(_INT, pivots.shape, pivots.ndim - 1)
    swaps = lax.convert_element_type(lax.ne(pivots, steps), _INT)
    count = lax.reduce_sum(swaps, (pivots.ndim - 1,))
    return lax.eq(lax.rem(count, as_array(np.int32(2))), as_array(np.int32(1)))




# -- QR -----------------------------------------------------------------------------------
def _householder(x: Array, j) -> tuple[Array, Array, Array]:
    """LAPACK's larfg on x[j:] (x is (..., m)): (v, tau, beta) with
    (I - tau v v^H)^H x = beta e_j, v[j] = 1, v zero above j, beta real and of
    the opposite sign to Re(x[j]); tau = 0 when x[j+1:] is already zero (and
    x[j] real), so that column is left as it is."""
    rows = lax.broadcasted_iota(_INT, x.shape, x.ndim - 1)
    j_wide = lax.broadcast_in_dim(j, x.shape, ())
    at_j, below = lax.eq(rows, j_wide), lax.gt(rows, j_wide)
    zero = zeros(x.shape, x.dtype)
    alpha = lax.dynamic_index_in_dim(x, j, x.ndim - 1, False, allow_negative_indices=False)
    tail = lax.reduce_sum(abs2(lax.select(below, x, zero)), (x.ndim - 1,))
    norm = lax.sqrt(lax.add(abs2(alpha), tail))
    real_alpha = lax.real(alpha) if dtypes.is_complex(x.dtype) else alpha
    beta = lax.select(lax.ge(real_alpha, zeros(norm.shape, norm.dtype)), lax.neg(norm), norm)
    trivial = lax.eq(tail, zeros(tail.shape, tail.dtype))
    if dtypes.is_complex(x.dtype):
        trivial = lax.bitwise_and(trivial, lax.eq(lax.imag(alpha), zeros(tail.shape,
                                                                         tail.dtype)))
    beta = lax.convert_element_type(beta, x.dtype)
    beta = lax.select(trivial, alpha, beta)
    ones = lax.broadcast_in_dim(as_array(1, x.dtype), alpha.shape, ())
    denominator = lax.select(trivial, ones, lax.sub(alpha, beta))
    tau = lax.select(trivial, zeros(alpha.shape, x.dtype),
                     lax.div(lax.sub(beta, alpha), lax.select(trivial, ones, beta)))
    scaled = lax.div(x, lax.broadcast_in_dim(denominator, x.shape, tuple(range(x.ndim - 1))))
    full_ones = lax.broadcast_in_dim(as_array(1, x.dtype), x.shape, ())
    v = lax.select(at_j, full_ones, lax.select(below, scaled, zero))
    return v, tau, beta


def abs2(v: Array) -> Array:
    """|v|^2, real."""
    if dtypes.is_complex(v.dtype):
        return lax.add(lax.mul(lax.real(v), lax.real(v)), lax.mul(lax.imag(v), lax.imag(v)))
    return lax.mul(v, v)


def _qr_step(j, state):
    """Reflect column j of r onto e_j and accumulate the reflector into q."""
    r, q = state
    batch = tuple(range(r.ndim - 2))
    v, tau, beta = _householder(_column(r, j), j)
    v_conj = xnp.conjugate(v) if dtypes.is_complex(v.dtype) else v
    tau_h = xnp.conjugate(tau) if dtypes.is_complex(tau.dtype) else tau
    # r <- (I - tau v v^H)^H r = r - conj(tau) v (v^H r)
    w = lax.dot_general(v_conj, r, (((r.ndim - 2,), (r.ndim - 2,)), (batch, batch)))
    update = lax.mul(lax.broadcast_in_dim(tau_h, r.shape, batch),
                     lax.mul(lax.broadcast_in_dim(v, r.shape, (*batch, r.ndim - 2)),
                             lax.broadcast_in_dim(w, r.shape, (*batch, r.ndim - 1))))
    r = lax.sub(r, update)
    rows = lax.broadcasted_iota(_INT, r.shape, r.ndim - 2)
    cols = lax.broadcasted_iota(_INT, r.shape, r.ndim - 1)
    j_wide = lax.broadcast_in_dim(j, r.shape, ())
    in_column = lax.eq(cols, j_wide)
    r = lax.select(lax.bitwise_and(in_column, lax.eq(rows, j_wide)),
                   lax.broadcast_in_dim(beta, r.shape, batch), r)
    r = lax.select(lax.bitwise_and(in_column, lax.gt(rows, j_wide)), zeros(r.shape, r.dtype), r)
    # q <- q (I - tau v v^H)
    qv = lax.dot_general(q, v, (((q.ndim - 1,), (v.ndim - 1,)), (batch, batch)))
    q = lax.sub(q, lax.mul(lax.broadcast_in_dim(tau, q.shape, batch),
                           lax.mul(lax.broadcast_in_dim(qv, q.shape, (*batch, q.ndim - 2)),
                                   lax.broadcast_in_dim(v_conj, q.shape,
                                                        (*batch, q.ndim - 1)))))
    return r, q


def householder_qr(a: Array) -> tuple[Array, Array]:
    """(Q, R) with a = Q R: Q (..., m, m) the product of min(m, n) Householder
    reflectors, R (..., m, n) upper triangular, both with LAPACK's signs."""
    m, n = a.shape[-2:]
    q = identity(m, a.dtype, a.shape[:-2])
    r, q = lax.fori_loop(np.int32(0), np.int32(min(m, n)), _qr_step, (a, q))
    return q, r


# -- Jacobi eigensolver -------------------------------------------------------------------
def _round_robin(m: int) -> tuple[np.ndarray, np.ndarray]:
    """(p, q) index pairs, shape (m - 1, m / 2) each with p < q: every pair of
    0..m-1 meets exactly once, and the pairs of one round are disjoint, so a
    whole round of rotations applies at once (Brent and Luk's ordering)."""
    players = list(range(m))
    p_rounds, q_rounds = [], []
    for _ in range(m - 1):
        pairs = [tuple(sorted((players[i], players[m - 1 - i]))) for i in range(m // 2)]
        p_rounds.append([a for a, _ in pairs])
        q_rounds.append([b for _, b in pairs])
        players = [players[0], players[-1], *players[1:-1]]
    return np.array(p_rounds, np.int32), np.array(q_rounds, np.int32)


def _one_hot(index: Array, m: int, dtype) -> Array:
    """(h, m) rows selecting `index` (h,)."""
    cols = lax.broadcasted_iota(_INT, (index.shape[0], m), 1)
    return lax.convert_element_type(lax.eq(cols, lax.broadcast_in_dim(index, cols.shape, (0,))),
                                    dtype)


def _rotation_angles(app: Array, aqq: Array, apq: Array) -> tuple[Array, Array]:
    """(c, s) of the Jacobi rotation zeroing a[p, q] (Golub and Van Loan 8.5.2),
    with the smaller of the two angles; (1, 0) where a[p, q] is already 0."""
    zero = lax.eq(apq, zeros(apq.shape, apq.dtype))
    one = ones(apq.shape, apq.dtype)
    tau = lax.div(lax.sub(aqq, app), lax.mul(lax.add(one, one), lax.select(zero, one, apq)))
    magnitude = lax.abs(tau)
    huge = lax.gt(magnitude, as_array(1e15, apq.dtype))
    root = lax.select(huge, magnitude, lax.sqrt(lax.add(one, lax.mul(tau, tau))))
    sign = lax.select(lax.ge(tau, zeros(tau.shape, tau.dtype)), one, lax.neg(one))
    t = lax.select(zero, zeros(apq.shape, apq.dtype), lax.div(sign, lax.add(magnitude, root)))
    c = lax.rsqrt(lax.add(one, lax.mul(t, t)))
    return c, lax.mul(t, c)


def _jacobi_round(r, state, rounds_p: Array, rounds_q: Array):
    """One round of disjoint rotations: a <- J^T a J, v <- v J."""
    a, v = state
    m = a.shape[-1]
    batch = tuple(range(a.ndim - 2))
    e_p = _one_hot(lax.dynamic_index_in_dim(rounds_p, r, 0, False), m, a.dtype)
    e_q = _one_hot(lax.dynamic_index_in_dim(rounds_q, r, 0, False), m, a.dtype)

    def pick(left, right):  # a[..., p_k, q_k] for each pair k
        rows = lax.dot_general(a, left, (((a.ndim - 2,), (1,)), ((), ())))   # (..., m, h)
        return lax.reduce_sum(lax.mul(rows, lax.broadcast_in_dim(
            lax.transpose(right, (1, 0)), rows.shape, (a.ndim - 2, a.ndim - 1))), (a.ndim - 2,))

    c, s = _rotation_angles(pick(e_p, e_p), pick(e_q, e_q), pick(e_p, e_q))
    c_minus_1 = lax.sub(c, ones(c.shape, c.dtype))

    def outer(weights, left, right):  # sum_k w_k e_left_k e_right_k^T
        scaled = lax.mul(lax.broadcast_in_dim(weights, (*weights.shape, m),
                                              (*batch, a.ndim - 2)),
                         lax.broadcast_in_dim(left, (*weights.shape, m), (a.ndim - 2, a.ndim - 1)))
        return lax.dot_general(scaled, right, (((a.ndim - 2,), (0,)), ((), ())))

    rotation = lax.add(identity(m, a.dtype, a.shape[:-2]),
                       lax.add(lax.add(outer(c_minus_1, e_p, e_p), outer(c_minus_1, e_q, e_q)),
                               lax.sub(outer(s, e_p, e_q), outer(s, e_q, e_p))))
    dims = (((a.ndim - 1,), (a.ndim - 2,)), (batch, batch))
    left = lax.dot_general(_swap_last(rotation), a, dims)
    return lax.dot_general(left, rotation, dims), lax.dot_general(v, rotation, dims)


def _swap_last(x: Array) -> Array:
    return lax.transpose(x, (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2))


def _off_diagonal_ratio(a: Array) -> Array:
    """max over the batch of ||offdiag(a)|| / ||a|| (0 for a zero matrix)."""
    rows = lax.broadcasted_iota(_INT, a.shape, a.ndim - 2)
    cols = lax.broadcasted_iota(_INT, a.shape, a.ndim - 1)
    squares = lax.mul(a, a)
    everything = lax.reduce_sum(squares, tuple(range(a.ndim)))
    off = lax.reduce_sum(lax.select(lax.ne(rows, cols), squares, zeros(a.shape, a.dtype)),
                         tuple(range(a.ndim)))
    safe = lax.select(lax.eq(everything, zeros((), a.dtype)), ones((), a.dtype), everything)
    return lax.sqrt(lax.div(off, safe))


def jacobi_eigh(a: Array, max_sweeps: int = 30) -> tuple[Array, Array]:
    """(w, v) with a = v diag(w) v^T for real symmetric a (..., n, n): cyclic
    Jacobi sweeps until the off-diagonal part is negligible. w is ascending,
    v's columns the matching unit eigenvectors."""
    n = a.shape[-1]
    m = n + n % 2
    if m != n:  # a decoupled zero row and column make the size even; dropped at the end
        a = lax.pad(a, as_array(0, a.dtype),
                    [(0, 0, 0)] * (a.ndim - 2) + [(0, 1, 0), (0, 1, 0)])
    rounds_p, rounds_q = (as_array(x) for x in _round_robin(m))
    tolerance = as_array(np.finfo(a.dtype).eps, a.dtype)

    def sweep(state):
        a, v, count = state

        def one_round(r, inner):
            return _jacobi_round(r, inner, rounds_p, rounds_q)

        a, v = lax.fori_loop(np.int32(0), np.int32(m - 1), one_round, (a, v))
        return a, v, lax.add(count, as_array(np.int32(1)))

    def unfinished(state):
        a, _, count = state
        return lax.bitwise_and(lax.gt(_off_diagonal_ratio(a), tolerance),
                               lax.lt(count, as_array(np.int32(max_sweeps))))

    v = identity(m, a.dtype, a.shape[:-2])
    if m > 1:
        a, v, _ = lax.while_loop(unfinished, sweep, (a, v, as_array(np.int32(0))))
    if m != n:
        a = lax.slice_in_dim(lax.slice_in_dim(a, 0, n, axis=a.ndim - 1), 0, n, axis=a.ndim - 2)
        v = lax.slice_in_dim(lax.slice_in_dim(v, 0, n, axis=v.ndim - 1), 0, n, axis=v.ndim - 2)
    return _sorted_pairs(diagonal(a), v)


def _sorted_pairs(w: Array, v: Array) -> tuple[Array, Array]:
    """Eigenvalues ascending, eigenvector columns permuted to match (through a
    one-hot permutation: each output entry is one input entry plus zeros)."""
    n = w.shape[-1]
    order = lax.broadcasted_iota(_INT, w.shape, w.ndim - 1)
    w, order = lax.sort_key_val(w, order, w.ndim - 1)
    k = lax.broadcasted_iota(_INT, (*w.shape, n), w.ndim - 1)
    moved = lax.eq(k, lax.broadcast_in_dim(order, k.shape, (*range(w.ndim - 1), w.ndim)))
    batch = tuple(range(w.ndim - 1))
    columns = lax.broadcast_in_dim(v, (*v.shape[:-1], n, n), (*batch, v.ndim - 2, v.ndim - 1))
    picked = lax.select(
        lax.broadcast_in_dim(moved, columns.shape, (*batch, v.ndim - 1, v.ndim)), columns,
        zeros(columns.shape, v.dtype))
    return w, lax.reduce_sum(picked, (v.ndim - 1,))
