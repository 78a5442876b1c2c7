"""Interpreter rules for linear algebra: dot, cholesky, triangular-solve, fft.

Arithmetic follows one rule for every contraction here and in
`convolution.py` (see `accumulation_dtype`): operands are converted to the
result's element type's accumulation type, products are summed there, and
the sum is rounded (or wrapped) once to the result type. So integer dots
wrap around exactly as XLA's do, f16/bf16/f8 dots accumulate in f32, and
f32 dots accumulate in f64 (at least as exact as XLA's f32 accumulation,
which makes this the more accurate side of any comparison). A pred dot is
the OR of ANDs, as XLA computes it. `operand_precision` does not change
the interpreter's result.

cholesky and triangular-solve compute in float64/complex128 and round once.
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.errors import ExecutionError
from xlapy.hlo.attributes import FftType, TriangularSolveTranspose
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.evaluator.rules import rule
from xlapy.hlo.opcode import Opcode


# -- accumulation, shared with convolution.py ----------------------------------------
def accumulation_dtype(element_type: PrimitiveType) -> np.dtype:
    """The NumPy type in which a contraction producing `element_type` sums."""
    if element_type.is_pred or element_type.is_signed_int:
        return np.dtype(np.int64)
    if element_type.is_unsigned_int:
        return np.dtype(np.uint64)
    if element_type.is_complex:
        return np.dtype(np.complex128)
    if element_type in (PrimitiveType.F32, PrimitiveType.F64):
        return np.dtype(np.float64)
    if element_type.is_float:
        return np.dtype(np.float32)
    raise ExecutionError(f"no arithmetic on {element_type.value}")


def to_accumulation(value: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """`value` converted to the accumulation type (pred becomes 0/1; a complex
    value feeding a real result keeps its real part, as a convert would)."""
    value = np.asarray(value)
    if value.dtype.kind == "c" and dtype.kind != "c":
        value = value.real
    with np.errstate(all="ignore"):
        return value.astype(dtype)


def from_accumulation(value: np.ndarray, element_type: PrimitiveType) -> np.ndarray:
    """Round (floats) or wrap (integers) an accumulated value once to the result."""
    if element_type.is_pred:
        return value != 0
    with np.errstate(all="ignore"):
        return value.astype(element_type.numpy)


# -- dot -----------------------------------------------------------------------------
@rule(Opcode.DOT)
def dot(instruction, operands, evaluator):
    """General dot: result dims are batch, lhs free, rhs free (each in operand order)."""
    lhs, rhs = operands
    lhs_batch = tuple(instruction.attr("lhs_batch_dims", ()))
    rhs_batch = tuple(instruction.attr("rhs_batch_dims", ()))
    lhs_contracting = tuple(instruction.attr("lhs_contracting_dims", ()))
    rhs_contracting = tuple(instruction.attr("rhs_contracting_dims", ()))
    if len(lhs_batch) != len(rhs_batch) or len(lhs_contracting) != len(rhs_contracting):
        raise ExecutionError(f"{instruction.name}: lhs and rhs batch/contracting dims differ "
                             "in number")
    lhs_free = [d for d in range(lhs.ndim) if d not in lhs_batch + lhs_contracting]
    rhs_free = [d for d in range(rhs.ndim) if d not in rhs_batch + rhs_contracting]

    def sizes(array, dims):
        return [array.shape[d] for d in dims]

    batch, k = sizes(lhs, lhs_batch), sizes(lhs, lhs_contracting)
    m, n = sizes(lhs, lhs_free), sizes(rhs, rhs_free)
    if batch != sizes(rhs, rhs_batch) or k != sizes(rhs, rhs_contracting):
        raise ExecutionError(f"{instruction.name}: batch or contracting dimension sizes "
                             f"differ between {list(lhs.shape)} and {list(rhs.shape)}")
    element_type = instruction.shape.element_type
    dtype = accumulation_dtype(element_type)
    b, mm, kk, nn = math.prod(batch), math.prod(m), math.prod(k), math.prod(n)
    lhs3 = to_accumulation(lhs, dtype).transpose(lhs_batch + tuple(lhs_free) + lhs_contracting)
    rhs3 = to_accumulation(rhs, dtype).transpose(rhs_batch + rhs_contracting + tuple(rhs_free))
    with np.errstate(all="ignore"):
        product = np.matmul(lhs3.reshape(b, mm, kk), rhs3.reshape(b, kk, nn))
    return from_accumulation(product.reshape(batch + m + n), element_type)


# -- cholesky ------------------------------------------------------------------------
def _compute_dtype(element_type: PrimitiveType) -> np.dtype:
    if element_type.is_complex:
        return np.dtype(np.complex128)
    if element_type.is_float:
        return np.dtype(np.float64)
    raise ExecutionError(f"{element_type.value} is not a floating-point or complex type")


def _cholesky_lower(a: np.ndarray) -> np.ndarray:
    """L with a = L L^H, reading only a's lower triangle; the strict upper
    triangle of L is zero. A matrix whose pivot is NaN (not positive definite,
    or NaN input) becomes all NaN, as XLA's CholeskyExpander makes it."""
    n = a.shape[-1]
    result = np.zeros_like(a)
    failed = np.zeros(a.shape[:-2], dtype=bool)
    for j in range(n):
        row = result[..., j, :j]
        pivot = a[..., j, j].real - np.sum((row * row.conj()).real, axis=-1)
        diagonal = np.sqrt(pivot)
        failed |= np.isnan(diagonal)
        result[..., j, j] = diagonal
        below = a[..., j + 1:, j] - np.einsum("...ik,...k->...i",
                                              result[..., j + 1:, :j], row.conj())
        result[..., j + 1:, j] = below / diagonal[..., None]
    result[failed] = np.nan
    return result


@rule(Opcode.CHOLESKY)
def cholesky(instruction, operands, evaluator):
    """`lower=true`: L with a = L L^H from a's lower triangle, zero above the
    diagonal. `lower=false`: U = (cholesky of a^T)^T, i.e. a = U^H U from a's
    upper triangle, zero below. XLA leaves the other triangle unspecified;
    zero is what its expander produces. Batched over leading dims; a matrix
    that is not positive definite gives all NaN rather than an error."""
    (a,) = operands
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ExecutionError(f"{instruction.name}: cholesky needs square matrices, "
                             f"got {list(a.shape)}")
    element_type = instruction.shape.element_type
    a = a.astype(_compute_dtype(element_type))
    lower = bool(instruction.attr("lower", False))
    with np.errstate(all="ignore"):
        if lower:
            result = _cholesky_lower(a)
        else:
            result = np.swapaxes(_cholesky_lower(np.swapaxes(a, -1, -2)), -1, -2)
        return result.astype(element_type.numpy)


# -- triangular-solve ----------------------------------------------------------------
def _substitute(t: np.ndarray, c: np.ndarray, lower: bool) -> np.ndarray:
    """y with t y = c for triangular t (forward or back substitution), batched,
    vectorised over c's columns."""
    m = t.shape[-1]
    y = np.zeros(np.broadcast_shapes(t.shape[:-2], c.shape[:-2]) + c.shape[-2:], c.dtype)
    for i in range(m) if lower else range(m - 1, -1, -1):
        solved = slice(0, i) if lower else slice(i + 1, m)
        known = np.matmul(t[..., i:i + 1, solved], y[..., solved, :])[..., 0, :]
        y[..., i, :] = (c[..., i, :] - known) / t[..., i, i][..., None]
    return y


@rule(Opcode.TRIANGULAR_SOLVE)
def triangular_solve(instruction, operands, evaluator):
    """x with op(a) x = b (`left_side=true`) or x op(a) = b, op per `transpose_a`.

    Reads only a's `lower` (or upper) triangle, and not its diagonal when
    `unit_diagonal=true`. A zero on the diagonal gives inf/NaN, not an error.
    """
    a, b = operands
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ExecutionError(f"{instruction.name}: a must be square matrices, "
                             f"got {list(a.shape)}")
    element_type = instruction.shape.element_type
    dtype = _compute_dtype(element_type)
    lower = bool(instruction.attr("lower", False))
    left_side = bool(instruction.attr("left_side", False))
    transpose = instruction.attr("transpose_a", TriangularSolveTranspose.NO_TRANSPOSE)
    a, b = a.astype(dtype), b.astype(dtype)
    t = np.tril(a) if lower else np.triu(a)
    if instruction.attr("unit_diagonal", False):
        diagonal = np.arange(t.shape[-1])
        t[..., diagonal, diagonal] = 1
    if transpose is not TriangularSolveTranspose.NO_TRANSPOSE:
        t, lower = np.swapaxes(t, -1, -2), not lower
        if transpose is TriangularSolveTranspose.ADJOINT:
            t = t.conj()
    if not left_side:  # x t = b  <=>  t^T x^T = b^T
        t, lower, b = np.swapaxes(t, -1, -2), not lower, np.swapaxes(b, -1, -2)
    with np.errstate(all="ignore"):
        x = _substitute(t, b, lower)
        if not left_side:
            x = np.swapaxes(x, -1, -2)
        return x.astype(element_type.numpy)


# -- fft -----------------------------------------------------------------------------
@rule(Opcode.FFT)
def fft(instruction, operands, evaluator):
    """FFT/IFFT (complex to complex), RFFT (real to complex, last dim n//2+1)
    and IRFFT (its inverse) over the last len(fft_length) dims, computed in
    complex128 and rounded once. IFFT and IRFFT scale by 1/N, as XLA does."""
    (x,) = operands
    fft_type = instruction.attr("fft_type", FftType.FFT)
    lengths = tuple(instruction.attr("fft_length", ()))
    shape = instruction.shape
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    if shape.element_count == 0 or 0 in lengths:
        return np.zeros(shape.dimensions, shape.dtype)
    if fft_type is FftType.RFFT:
        result = np.fft.rfftn(x.astype(np.float64), s=lengths, axes=axes)
    elif fft_type is FftType.IRFFT:
        result = np.fft.irfftn(x.astype(np.complex128), s=lengths, axes=axes)
    elif fft_type is FftType.IFFT:
        result = np.fft.ifftn(x.astype(np.complex128), axes=axes)
    else:
        result = np.fft.fftn(x.astype(np.complex128), axes=axes)
    return result.astype(shape.dtype)
