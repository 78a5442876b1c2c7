"""`xnp` contractions: matmul, dot, vdot, vecdot, inner, outer, tensordot,
einsum, kron, matvec, vecmat, as jax.numpy defines them.

Each contraction is one HLO `dot` (lax.dot_general) where the operation has
one, with NumPy's shape rules expressed as dimension numbers rather than
materialised broadcasts: matmul's size-1 batch dimensions become free
dimensions of the other operand, and only the output is transposed into
NumPy's order. Operands are promoted with JAX's rules first (weak Python
scalars adapt); `preferred_element_type` picks the accumulation/result type
and `precision` passes through to the HLO dot.
"""

from __future__ import annotations

import operator

import numpy as np

from xlapy.core.trace import Array, as_array, with_weak_type
from xlapy.lax import primitives as lax
from xlapy.numpy._einsum import einsum, einsum_path
from xlapy.numpy._promotion import (
    broadcast_arrays,
    canonicalize_axis,
    promote_dtypes,
    reshape_exact,
    result_dtype_and_weak,
)


def _promoted(*args) -> tuple[list[Array], np.dtype, bool]:
    """The operands in their common dtype, and that (dtype, weak)."""
    dtype, weak = result_dtype_and_weak(*args)
    return promote_dtypes(*args), dtype, weak


def contract(lhs: Array, rhs: Array, dims, precision, preferred_element_type,
             weak: bool) -> Array:
    """lax.dot_general, with the result weak only when no type was asked for."""
    out = lax.dot_general(lhs, rhs, dims, precision=precision,
                          preferred_element_type=preferred_element_type)
    return with_weak_type(out, weak and preferred_element_type is None)


def _conj(x: Array) -> Array:
    """The complex conjugate; real arrays are their own."""
    if x.dtype.kind != "c":
        return x
    return with_weak_type(lax.complex(lax.real(x), lax.neg(lax.imag(x))), x.weak_type)


# -- matmul -------------------------------------------------------------------------------
def matmul(a, b, *, precision=None, preferred_element_type=None) -> Array:
    """NumPy's matmul: 1-D operands are promoted to matrices and the promoted
    dimension removed again; leading (batch) dimensions broadcast."""
    (a, b), _, weak = _promoted(a, b)
    for i, x in enumerate((a, b)):
        if x.ndim < 1:
            raise ValueError(f"matmul: operand {i} must have at least one dimension, "
                             f"got a scalar")
    a_mat, b_mat = a.ndim > 1, b.ndim > 1
    a_batch = a.shape[:-2] if a_mat else ()
    b_batch = b.shape[:-2] if b_mat else ()
    rank = max(len(a_batch), len(b_batch))
    a_batch = (None,) * (rank - len(a_batch)) + tuple(a_batch)
    b_batch = (None,) * (rank - len(b_batch)) + tuple(b_batch)

    a_drop, b_drop, both_drop = [], [], []      # size-1 batch dims squeezed away
    a_batch_pos, b_batch_pos = [], []           # batch dims in the squeezed operands
    out_batch, out_a, out_b = [], [], []        # output positions, in dot_general's order
    for i, (sa, sb) in enumerate(zip(a_batch, b_batch)):
        a_at = len(out_batch) + len(out_a) + len(a_drop)
        b_at = len(out_batch) + len(out_b) + len(b_drop)
        if sa is None:
            out_b.append(i)
        elif sb is None:
            out_a.append(i)
        elif sa == 1 and sb == 1:
            a_drop.append(a_at)
            b_drop.append(b_at)
            both_drop.append(i)
        elif sa == 1:
            a_drop.append(a_at)
            out_b.append(i)
        elif sb == 1:
            b_drop.append(b_at)
            out_a.append(i)
        elif sa == sb:
            a_batch_pos.append(len(out_batch) + len(out_a))
            b_batch_pos.append(len(out_batch) + len(out_b))
            out_batch.append(i)
        else:
            raise ValueError(f"matmul: batch dimensions of shapes {a.shape} and {b.shape} "
                             "do not broadcast")
    if a_mat:
        out_a.append(rank)
    if b_mat:
        out_b.append(rank + a_mat)
    a = _drop_axes(a, a_drop)
    b = _drop_axes(b, b_drop)
    if a.shape[-1] != b.shape[-2 if b_mat else -1]:
        raise ValueError(f"matmul: contracting dimensions differ: shapes {a.shape} and "
                         f"{b.shape}")
    dims = (((a.ndim - 1,), (b.ndim - 1 - b_mat,)), (tuple(a_batch_pos), tuple(b_batch_pos)))
    out = contract(a, b, dims, precision, preferred_element_type, weak)
    perm = tuple(int(p) for p in np.argsort(out_batch + out_a + out_b))
    if perm != tuple(range(len(perm))):
        out = lax.transpose(out, perm)
    if both_drop:
        out = lax.expand_dims(out, tuple(both_drop))
    return out


def _drop_axes(x: Array, axes: list[int]) -> Array:
    return lax.squeeze(x, tuple(axes)) if axes else x


def matvec(x1, x2, /) -> Array:
    """Matrix-vector products over broadcast leading dims: (..., M, N) x (..., N)."""
    x1, x2 = as_array(x1), as_array(x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ValueError(f"matvec needs a (..., M, N) and a (..., N) operand, got shapes "
                         f"{x1.shape} and {x2.shape}")
    out = matmul(x1, lax.expand_dims(x2, (x2.ndim,)))
    return lax.squeeze(out, (out.ndim - 1,))


def vecmat(x1, x2, /) -> Array:
    """Vector-matrix products conj(x1) @ x2 over broadcast leading dims:
    (..., M) x (..., M, N) -> (..., N)."""
    x1, x2 = as_array(x1), as_array(x2)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ValueError(f"vecmat needs a (..., M) and a (..., M, N) operand, got shapes "
                         f"{x1.shape} and {x2.shape}")
    out = matmul(lax.expand_dims(_conj(x1), (x1.ndim - 1,)), x2)
    return lax.squeeze(out, (out.ndim - 2,))


# -- dot, vdot, vecdot, inner, outer, tensordot ------------------------------------------
def dot(a, b, *, precision=None, preferred_element_type=None) -> Array:
    """NumPy's dot: a product for scalars, a sum over a's last axis and b's
    second-to-last (or only) axis otherwise; batch dimensions are stacked."""
    (a, b), _, weak = _promoted(a, b)
    if a.ndim == 0 or b.ndim == 0:
        dims = ((), ())
    elif b.ndim == 1:
        dims = ((a.ndim - 1,), (0,))
    else:
        dims = ((a.ndim - 1,), (b.ndim - 2,))
    return contract(a, b, (dims, ((), ())), precision, preferred_element_type, weak)


def vdot(a, b, *, precision=None, preferred_element_type=None) -> Array:
    """sum(conj(a) * b) over the flattened operands."""
    (a, b), _, weak = _promoted(a, b)
    if a.size != b.size:
        raise ValueError(f"vdot: operands of sizes {a.size} and {b.size} differ")
    a, b = reshape_exact(_conj(a), (a.size,)), reshape_exact(b, (b.size,))
    return contract(a, b, (((0,), (0,)), ((), ())), precision, preferred_element_type, weak)


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None) -> Array:
    """sum(conj(x1) * x2) along `axis`, broadcasting the other dimensions."""
    (x1, x2), _, weak = _promoted(x1, x2)
    x1, x2 = broadcast_arrays(x1, x2)
    if x1.ndim == 0:
        raise ValueError("vecdot needs operands with at least one dimension")
    axis = canonicalize_axis(axis, x1.ndim)
    batch = tuple(d for d in range(x1.ndim) if d != axis)
    dims = (((axis,), (axis,)), (batch, batch))
    return contract(_conj(x1), x2, dims, precision, preferred_element_type, weak)


def inner(a, b, *, precision=None, preferred_element_type=None) -> Array:
    """Sum over the last axes of a and b (a product when either is a scalar)."""
    (a, b), _, weak = _promoted(a, b)
    if a.ndim == 0 or b.ndim == 0:
        dims = ((), ())
    else:
        if a.shape[-1] != b.shape[-1]:
            raise ValueError(f"inner: last dimensions of shapes {a.shape} and {b.shape} differ")
        dims = ((a.ndim - 1,), (b.ndim - 1,))
    return contract(a, b, (dims, ((), ())), precision, preferred_element_type, weak)


def outer(a, b, out=None) -> Array:
    """a.ravel()[:, None] * b.ravel()[None, :]."""
    if out is not None:
        raise NotImplementedError("outer: the out argument is not supported (arrays are "
                                  "immutable)")
    (a, b), _, weak = _promoted(a, b)
    a, b = reshape_exact(a, (a.size,)), reshape_exact(b, (b.size,))
    return contract(a, b, (((), ()), ((), ())), None, None, weak)


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None) -> Array:
    """Sum over the last `axes` axes of a and the first of b, or over the axis
    pairs given as (a_axes, b_axes)."""
    (a, b), _, weak = _promoted(a, b)
    if isinstance(axes, (int, np.integer)):
        n = operator.index(axes)
        if not 0 <= n <= min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={n} must be between 0 and the smaller rank "
                             f"{min(a.ndim, b.ndim)}")
        a_axes, b_axes = tuple(range(a.ndim - n, a.ndim)), tuple(range(n))
    else:
        try:
            a_axes, b_axes = axes
        except (TypeError, ValueError):
            raise TypeError(f"tensordot: axes must be an int or a pair of axis sequences, got "
                            f"{axes!r}") from None
        a_axes, b_axes = _axis_list(a_axes, a.ndim), _axis_list(b_axes, b.ndim)
        if len(a_axes) != len(b_axes):
            raise ValueError(f"tensordot: {len(a_axes)} axes of a against {len(b_axes)} of b")
    for i, j in zip(a_axes, b_axes):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"tensordot: axis {i} of a (size {a.shape[i]}) does not match "
                             f"axis {j} of b (size {b.shape[j]})")
    return contract(a, b, ((a_axes, b_axes), ((), ())), precision, preferred_element_type, weak)


def _axis_list(axes, ndim: int) -> tuple[int, ...]:
    if isinstance(axes, (int, np.integer)):
        axes = (axes,)
    return tuple(canonicalize_axis(ax, ndim) for ax in axes)


def kron(a, b) -> Array:
    """The Kronecker product: blocks a[i, j] * b laid out like a."""
    (a, b), _, _ = _promoted(a, b)
    rank = max(a.ndim, b.ndim)
    a = reshape_exact(a, (1,) * (rank - a.ndim) + a.shape)
    b = reshape_exact(b, (1,) * (rank - b.ndim) + b.shape)
    interleaved = tuple(size for pair in zip(a.shape, b.shape) for size in pair)
    a_wide = lax.broadcast_in_dim(a, interleaved, tuple(range(0, 2 * rank, 2)))
    b_wide = lax.broadcast_in_dim(b, interleaved, tuple(range(1, 2 * rank, 2)))
    product = lax.mul(a_wide, b_wide) if a.dtype != np.bool_ else lax.bitwise_and(a_wide, b_wide)
    return reshape_exact(product, tuple(x * y for x, y in zip(a.shape, b.shape)))


__all__ = ["dot", "einsum", "einsum_path", "inner", "kron", "matmul", "matvec", "outer",
           "tensordot", "vdot", "vecdot", "vecmat"]
