"""`xnp.linalg`: norms, Cholesky, linear solves, inverses, determinants, as
jax.numpy.linalg (plus the triangular solves of jax.scipy.linalg and
jax.lax.linalg).

Cholesky and triangular solves are HLO ops of their own. Square solves,
inverses and determinants factor A = P^T L U by Gaussian elimination with
partial pivoting, then solve with two `triangular-solve`s; qr uses
Householder reflections and eigh Jacobi rotations. Those factorisations are
loops of masked lax ops (`_decompositions.py`): no data-dependent shapes, so
each traces as one HLO `while` and runs batched over leading dimensions.
Every function broadcasts leading (batch) dimensions like NumPy.
"""

from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

import xlapy.numpy as xnp
from xlapy.core import dtypes
from xlapy.core.trace import Array, as_array, bind
from xlapy.hlo.attributes import TriangularSolveTranspose
from xlapy.hlo.opcode import Opcode
from xlapy.lax import primitives as lax
from xlapy.numpy import _decompositions as dec
from xlapy.numpy._linalg_ops import matmul, outer, tensordot, vecdot
from xlapy.numpy._promotion import (
    broadcast_shapes,
    broadcast_to,
    canonicalize_axis,
    promote_dtypes,
    promote_dtypes_inexact,
)


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


# -- helpers ------------------------------------------------------------------------------
def _inexact(*args) -> list[Array]:
    return [as_array(a) for a in promote_dtypes_inexact(*args)]


def _compute_dtype(x: Array) -> Array:
    """f16/bf16 factor in float32 (the result is rounded back by the caller)."""
    if x.dtype in (dtypes.float16, dtypes.bfloat16):
        return lax.convert_element_type(x, np.float32)
    return x


def _square(name: str, a: Array) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name} needs square matrices in the last two dimensions, got "
                         f"shape {a.shape}")


def _batched(a: Array, b: Array, b_core: int) -> tuple[Array, Array]:
    """a (..., n, n) and b (..., *core) broadcast to one batch shape."""
    batch = broadcast_shapes(a.shape[:-2], b.shape[:b.ndim - b_core])
    return (broadcast_to(a, batch + a.shape[-2:]),
            broadcast_to(b, batch + b.shape[b.ndim - b_core:]))


def _real_dtype(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    return {np.dtype(np.complex64): dtypes.float32,
            np.dtype(np.complex128): dtypes.float64}.get(dtype, dtype)


def matrix_transpose(x, /) -> Array:
    """x with its last two axes swapped."""
    x = as_array(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least two dimensions, got shape {x.shape}")
    perm = (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2)
    return lax.transpose(x, perm)


def _adjoint(x: Array) -> Array:
    return xnp.conjugate(matrix_transpose(x)) if dtypes.is_complex(x.dtype) \
        else matrix_transpose(x)


# -- triangular solves --------------------------------------------------------------------
def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Array:
    """x with op(a) x = b (left_side) or x op(a) = b, as jax.lax.linalg's:
    a is (..., m, m) triangular, b (..., m, n) or (..., n, m); one HLO
    triangular-solve, which reads only a's `lower` (or upper) triangle."""
    a, b = _inexact(a, b)
    _square("triangular_solve", a)
    if b.ndim < 2:
        raise ValueError(f"triangular_solve needs b of rank >= 2, got shape {b.shape}")
    a, b = _batched(a, b, 2)
    shared = b.shape[-2] if left_side else b.shape[-1]
    if shared != a.shape[-1]:
        raise ValueError(f"triangular_solve: a of shape {a.shape} and b of shape {b.shape} "
                         f"do not match (left_side={left_side})")
    if conjugate_a and not transpose_a and dtypes.is_complex(a.dtype):
        a = xnp.conjugate(a)
    if transpose_a:
        transpose = TriangularSolveTranspose.ADJOINT if conjugate_a \
            else TriangularSolveTranspose.TRANSPOSE
    else:
        transpose = TriangularSolveTranspose.NO_TRANSPOSE
    attrs = {"left_side": bool(left_side), "lower": bool(lower),
             "unit_diagonal": bool(unit_diagonal), "transpose_a": transpose}
    wide_a, wide_b = _compute_dtype(a), _compute_dtype(b)
    x = bind(Opcode.TRIANGULAR_SOLVE, [wide_a, wide_b], attrs, name="triangular_solve")
    return lax.convert_element_type(x, b.dtype) if x.dtype != b.dtype else x


def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, debug=None, check_finite: bool = True) -> Array:
    """x with op(a) x = b for triangular a, as jax.scipy.linalg's: trans 0/'N'
    (a), 1/'T' (a^T) or 2/'C' (a^H); b is (..., n) or (..., n, k)."""
    del overwrite_b, debug, check_finite
    a, b = _inexact(a, b)
    _square("solve_triangular", a)
    modes = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
             2: (True, True), "C": (True, True)}
    if trans not in modes:
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got "
                         f"{trans!r}")
    transpose_a, conjugate_a = modes[trans]
    vector = b.ndim == a.ndim - 1 or b.ndim == 1
    rhs = lax.expand_dims(b, (b.ndim,)) if vector else b
    x = triangular_solve(a, rhs, left_side=True, lower=lower, transpose_a=transpose_a,
                         conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    return lax.squeeze(x, (x.ndim - 1,)) if vector else x


def lu_factor(a, *, overwrite_a: bool = False, check_finite: bool = True):
    """(lu, piv) as jax.scipy.linalg.lu_factor: L (unit, below the diagonal)
    and U packed in lu; row i was swapped with row piv[i] at step i."""
    del overwrite_a, check_finite
    (a,) = _inexact(a)
    _square("lu_factor", a)
    lu, _, pivots = dec.lu(_compute_dtype(a))
    return lax.convert_element_type(lu, a.dtype), pivots


# -- solve, inv, det ----------------------------------------------------------------------
def solve(a, b) -> Array:
    """x with a @ x = b for square a (..., n, n); b is (n,) or (..., n, m) with
    batch dimensions broadcast (JAX's and NumPy 2's rule). Singular a gives
    inf or NaN."""
    a, b = _inexact(a, b)
    _square("solve", a)
    vector = b.ndim == 1
    if b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1] \
            and a.shape[-1] != b.shape[-2]:
        raise ValueError(f"solve: shapes {a.shape} and {b.shape} look like a batch of vectors; "
                         "pass b[..., None] and squeeze the result")
    rhs = lax.expand_dims(b, (1,)) if vector else b
    if rhs.shape[-2] != a.shape[-1]:
        raise ValueError(f"solve: a of shape {a.shape} does not match b of shape {b.shape}")
    a, rhs = _batched(a, rhs, 2)
    lu, y, _ = dec.lu(_compute_dtype(a), _compute_dtype(rhs))
    x = triangular_solve(lu, y, left_side=True, lower=False)
    x = lax.convert_element_type(x, b.dtype) if x.dtype != b.dtype else x
    return lax.squeeze(x, (x.ndim - 1,)) if vector else x


def inv(a) -> Array:
    """The inverse of square a (..., n, n), by solving a x = I."""
    (a,) = _inexact(a)
    _square("inv", a)
    return solve(a, dec.identity(a.shape[-1], a.dtype, a.shape[:-2]))


def _lu_diagonal(a: Array) -> tuple[Array, Array]:
    lu, _, pivots = dec.lu(_compute_dtype(a))
    return dec.diagonal(lu), dec.parity_negative(pivots)


def det(a) -> Array:
    """The determinant of square a (..., n, n): the LU diagonal's product with
    the sign of the pivoting permutation."""
    (a,) = _inexact(a)
    _square("det", a)
    diagonal, odd = _lu_diagonal(a)
    product = lax.reduce_prod(diagonal, (diagonal.ndim - 1,))
    product = lax.select(odd, lax.neg(product), product)
    return lax.convert_element_type(product, a.dtype) if product.dtype != a.dtype else product


def slogdet(a, *, method=None) -> SlogdetResult:
    """(sign, log|det|) of square a (..., n, n), which does not overflow where
    det would. A singular matrix gives sign 0 and logabsdet -inf."""
    if method not in (None, "lu"):
        raise ValueError(f"slogdet: method must be None or 'lu', got {method!r}")
    (a,) = _inexact(a)
    _square("slogdet", a)
    diagonal, odd = _lu_diagonal(a)
    magnitude = xnp.abs(diagonal)
    logabsdet = lax.reduce_sum(lax.log(magnitude), (diagonal.ndim - 1,))
    zero = lax.eq(magnitude, dec.zeros(magnitude.shape, magnitude.dtype))
    ones = lax.broadcast_in_dim(as_array(1, magnitude.dtype), magnitude.shape, ())
    # d / |d| is the sign (a unit complex number); a zero pivot makes it 0 / 1 = 0
    unit = lax.div(diagonal, lax.convert_element_type(lax.select(zero, ones, magnitude),
                                                      diagonal.dtype))
    sign = lax.reduce_prod(unit, (unit.ndim - 1,))
    sign = lax.select(odd, lax.neg(sign), sign)
    real = _real_dtype(a.dtype)
    return SlogdetResult(lax.convert_element_type(sign, a.dtype),
                         lax.convert_element_type(logabsdet, real))


def matrix_power(a, n: int) -> Array:
    """a raised to the integer power n by repeated squaring (n < 0 inverts)."""
    a = as_array(a)
    _square("matrix_power", a)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: the exponent must be an integer, got {n!r}") from None
    if n == 0:
        return dec.identity(a.shape[-1], a.dtype, a.shape[:-2])
    if n < 0:
        a, n = inv(a), -n
    result, power = None, a
    while n:
        if n & 1:
            result = power if result is None else matmul(result, power)
        n >>= 1
        if n:
            power = matmul(power, power)
    return result


# -- QR -----------------------------------------------------------------------------------
class QRResult(NamedTuple):
    Q: Array  # noqa: N815 - NumPy's field names
    R: Array  # noqa: N815


def qr(a, mode: str = "reduced"):
    """a = Q R with orthonormal (unitary) Q and upper-triangular R, by
    Householder reflections with LAPACK's sign conventions (so Q and R match
    NumPy's). mode 'reduced' (k = min(m, n) columns of Q), 'complete' or 'r'."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    (a,) = _inexact(a)
    if a.ndim < 2:
        raise ValueError(f"qr needs at least two dimensions, got shape {a.shape}")
    k = min(a.shape[-2:])
    q, r = dec.householder_qr(_compute_dtype(a))
    if mode != "complete":
        q = lax.slice_in_dim(q, 0, k, axis=q.ndim - 1)
        r = lax.slice_in_dim(r, 0, k, axis=r.ndim - 2)
    r, q = (lax.convert_element_type(x, a.dtype) if x.dtype != a.dtype else x for x in (r, q))
    return r if mode == "r" else QRResult(q, r)


# -- small conveniences -------------------------------------------------------------------
def multi_dot(arrays, *, precision=None) -> Array:
    """The product of a chain of matrices (1-D ends are vectors), multiplied
    in the order that keeps intermediate results smallest."""
    arrays = [as_array(x) for x in arrays]
    if len(arrays) < 2:
        raise ValueError("multi_dot needs at least two arrays")
    first_vector, last_vector = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_vector:
        arrays[0] = lax.expand_dims(arrays[0], (0,))
    if last_vector:
        arrays[-1] = lax.expand_dims(arrays[-1], (1,))
    result = _chain(arrays, precision)
    if first_vector:
        result = lax.squeeze(result, (0,))
    if last_vector:
        result = lax.squeeze(result, (result.ndim - 1,))
    return result


def _chain(arrays: list[Array], precision) -> Array:
    """Matrix-chain order by dynamic programming over the (few) matrices."""
    dims = [a.shape[0] for a in arrays] + [arrays[-1].shape[1]]
    count = len(arrays)
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j], split[i][j] = min(
                (cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1], s)
                for s in range(i, j))

    def product(i, j):
        if i == j:
            return arrays[i]
        s = split[i][j]
        return matmul(product(i, s), product(s + 1, j), precision=precision)

    return product(0, count - 1)


def diagonal(x, /, *, offset: int = 0) -> Array:
    """The diagonals of the matrices in x's last two axes (array API)."""
    return xnp.diagonal(x, offset, -2, -1)


def trace(x, /, *, offset: int = 0, dtype=None) -> Array:
    """The traces of the matrices in x's last two axes (array API)."""
    return xnp.trace(x, offset, -2, -1, dtype=dtype)


def cross(x1, x2, /, *, axis: int = -1) -> Array:
    """The cross product of 3-vectors along `axis`."""
    x1, x2 = promote_dtypes(x1, x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"cross needs vectors of size 3 along axis {axis}, got shapes "
                         f"{x1.shape} and {x2.shape}")
    a = [xnp.take(x1, i, axis=axis) for i in range(3)]
    b = [xnp.take(x2, i, axis=axis) for i in range(3)]
    parts = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    return xnp.stack(parts, axis=axis)


# -- symmetric eigenproblems and singular values -----------------------------------------
class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


def _hermitian_input(name: str, a, UPLO, symmetrize_input: bool) -> Array:  # noqa: N803
    (a,) = _inexact(a)
    _square(name, a)
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"{name}: UPLO must be 'L' or 'U', got {UPLO!r}")
    if symmetrize_input:
        return lax.div(lax.add(a, _adjoint(a)), as_array(2, a.dtype))
    rows = lax.broadcasted_iota(np.int32, a.shape, a.ndim - 2)
    cols = lax.broadcasted_iota(np.int32, a.shape, a.ndim - 1)
    keep = lax.ge(rows, cols) if UPLO in (None, "L") else lax.le(rows, cols)
    strict = lax.gt(rows, cols) if UPLO in (None, "L") else lax.lt(rows, cols)
    triangle = lax.select(keep, a, dec.zeros(a.shape, a.dtype))
    mirrored = _adjoint(lax.select(strict, a, dec.zeros(a.shape, a.dtype)))
    return lax.add(triangle, mirrored)


def eigh(a, UPLO=None, symmetrize_input: bool = True) -> EighResult:  # noqa: N803
    """(eigenvalues ascending, unit eigenvectors as columns) of real symmetric
    a (..., n, n), by cyclic Jacobi rotations."""
    a = _hermitian_input("eigh", a, UPLO, symmetrize_input)
    if dtypes.is_complex(a.dtype):
        raise NotImplementedError("eigh of complex Hermitian matrices is not implemented; "
                                  "eigvalsh gives their eigenvalues")
    w, v = dec.jacobi_eigh(_compute_dtype(a))
    return EighResult(*(lax.convert_element_type(x, a.dtype) for x in (w, v)))


def eigvalsh(a, UPLO="L", *, symmetrize_input: bool = True) -> Array:  # noqa: N803
    """The eigenvalues, ascending, of Hermitian a (..., n, n). A complex matrix
    X + iY is solved as the real symmetric [[X, -Y], [Y, X]], whose spectrum is
    a's with every eigenvalue twice."""
    a = _hermitian_input("eigvalsh", a, UPLO, symmetrize_input)
    if not dtypes.is_complex(a.dtype):
        return lax.convert_element_type(dec.jacobi_eigh(_compute_dtype(a))[0], a.dtype)
    x, y = lax.real(a), lax.imag(a)
    top = lax.concatenate([x, lax.neg(y)], a.ndim - 1)
    bottom = lax.concatenate([y, x], a.ndim - 1)
    doubled, _ = dec.jacobi_eigh(lax.concatenate([top, bottom], a.ndim - 2))
    return lax.slice_in_dim(doubled, 0, doubled.shape[-1], 2, axis=doubled.ndim - 1)


def svdvals(x, /) -> Array:
    """The singular values of x (..., m, n), descending, as the square roots of
    the eigenvalues of x^H x. Exact enough for norms; singular values far below
    the largest lose relative accuracy (about eps * (s_max / s)^2)."""
    (x,) = _inexact(x)
    if x.ndim < 2:
        raise ValueError(f"svdvals needs at least two dimensions, got shape {x.shape}")
    if x.shape[-2] < x.shape[-1]:
        x = matrix_transpose(x)
    gram = matmul(_adjoint(x), x)
    w = eigvalsh(gram)
    w = lax.max(w, dec.zeros(w.shape, w.dtype))
    return lax.rev(lax.sqrt(w), (w.ndim - 1,))


# -- cholesky -----------------------------------------------------------------------------
def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True) -> Array:
    """L with a = L L^H for Hermitian positive-definite a (..., n, n); U = L^H
    when upper=True. The input is symmetrised as (a + a^H) / 2 first, as JAX
    does; a matrix that is not positive definite gives NaNs."""
    (a,) = _inexact(a)
    _square("cholesky", a)
    if symmetrize_input:
        a = lax.div(lax.add(a, _adjoint(a)), as_array(2, a.dtype))
    wide = _compute_dtype(a)
    lower = bind(Opcode.CHOLESKY, [wide], {"lower": True}, name="cholesky")
    lower = lax.convert_element_type(lower, a.dtype) if lower.dtype != a.dtype else lower
    return _adjoint(lower) if upper else lower


# -- norms --------------------------------------------------------------------------------
def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2) -> Array:
    """The ord-norm of x over `axis` (all axes when None): 2 (default), inf,
    -inf, 0 (count of nonzeros), 1, or any other power p."""
    (x,) = _inexact(x)
    if axis is None and x.ndim != 1:
        flat = xnp.ravel(x)
        result = vector_norm(flat, ord=ord)
        return xnp.reshape(result, (1,) * x.ndim) if keepdims else result
    if ord is None or ord == 2:
        return xnp.sqrt(xnp.sum(xnp.real(x * xnp.conjugate(x)), axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"invalid order {ord!r} for a vector norm")
    magnitude = xnp.abs(x)
    if ord == np.inf:
        return xnp.max(magnitude, axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return xnp.min(magnitude, axis=axis, keepdims=keepdims)
    if ord == 0:
        return xnp.sum(x != 0, axis=axis, keepdims=keepdims, dtype=magnitude.dtype)
    if ord == 1:
        return xnp.sum(magnitude, axis=axis, keepdims=keepdims)
    p = np.array(ord, magnitude.dtype)
    return xnp.power(xnp.sum(xnp.power(magnitude, p), axis=axis, keepdims=keepdims),
                     np.array(1 / ord, magnitude.dtype))


def _matrix_norm(x: Array, ord, axis: tuple[int, int], keepdims: bool) -> Array:
    row, col = axis
    if ord is None or ord in ("f", "fro"):
        return xnp.sqrt(xnp.sum(xnp.real(x * xnp.conjugate(x)), axis=axis, keepdims=keepdims))
    if ord in (1, -1):  # max/min column sum
        sums, other = xnp.sum(xnp.abs(x), axis=row, keepdims=keepdims), col
        if not keepdims and col > row:
            other -= 1
    elif ord in (np.inf, -np.inf):  # max/min row sum
        sums, other = xnp.sum(xnp.abs(x), axis=col, keepdims=keepdims), row
        if not keepdims and row > col:
            other -= 1
    elif ord in ("nuc", 2, -2):
        return _singular_value_norm(x, ord, axis, keepdims)
    else:
        raise ValueError(f"invalid order {ord!r} for a matrix norm")
    if ord in (1, np.inf):
        return xnp.max(sums, axis=other, keepdims=keepdims, initial=0)
    return xnp.min(sums, axis=other, keepdims=keepdims)


def _singular_value_norm(x: Array, ord, axis: tuple[int, int], keepdims: bool) -> Array:
    moved = xnp.moveaxis(x, axis, (-2, -1))
    s = svdvals(moved)
    if ord == 2:
        y = xnp.max(s, axis=-1, initial=0)
    elif ord == -2:
        y = xnp.min(s, axis=-1)
    else:
        y = xnp.sum(s, axis=-1)
    return xnp.expand_dims(y, axis) if keepdims else y


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro") -> Array:
    """The ord-norm of the matrices in x's last two axes."""
    (x,) = _inexact(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_norm needs at least two dimensions, got shape {x.shape}")
    return _matrix_norm(x, ord, (x.ndim - 2, x.ndim - 1), keepdims)


def norm(x, ord=None, axis=None, keepdims: bool = False) -> Array:
    """NumPy's norm: a vector norm over one axis, a matrix norm over two, and
    for axis=None the 2-norm of everything (ord None), of a vector or of a
    matrix (ord given)."""
    (x,) = _inexact(x)
    if axis is None:
        if ord is None:
            total = xnp.sum(xnp.real(x * xnp.conjugate(x)), keepdims=keepdims)
            return xnp.sqrt(total)
        axis = tuple(range(x.ndim))
    elif isinstance(axis, (tuple, list)):
        axis = tuple(canonicalize_axis(ax, x.ndim) for ax in axis)
    else:
        axis = (canonicalize_axis(axis, x.ndim),)
    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) == 2:
        return _matrix_norm(x, ord, axis, keepdims)
    raise ValueError(f"norm: improper number of axes {axis}; pass one axis for a vector norm "
                     "or two for a matrix norm")


__all__ = ["EighResult", "QRResult", "SlogdetResult", "cholesky", "cross", "det", "diagonal",
           "eigh", "eigvalsh", "inv", "lu_factor", "matmul", "matrix_norm", "matrix_power",
           "matrix_transpose", "multi_dot", "norm", "outer", "qr", "slogdet", "solve",
           "solve_triangular", "svdvals", "tensordot", "trace", "triangular_solve", "vecdot",
           "vector_norm"]
