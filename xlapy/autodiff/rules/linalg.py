"""Linear algebra and batch normalisation: cholesky, triangular-solve, fft and
the three batch-norm ops.

Complex values follow JAX's convention: a VJP is the linear transpose, not
the adjoint (no conjugation), i.e. conj ∘ adjoint ∘ conj.

- `cholesky` reads one triangle of a Hermitian matrix, so only Hermitian
  tangents are meaningful. Both modes treat a tangent Ṡ as its Hermitian part
  (Ṡ + Ṡᴴ)/2, so the cotangent is Hermitian too (what JAX gives through
  jnp.linalg.cholesky, which symmetrises its input). Both agree with finite
  differences along Hermitian directions, whichever triangle `lower` reads.
  JVP (Murray, arXiv:1602.07527, as JAX): L̇ = L Φ(L⁻¹ Ṡ L⁻ᴴ), Φ = lower
  triangle with the diagonal halved; VJP: its transpose, S̄ = sym(L⁻ᴴ Φ(Lᴴ L̄) L⁻¹).
- `triangular-solve` as JAX's: b enters linearly; a only through the triangle
  the op reads (not the diagonal when `unit_diagonal`), and the cotangent of
  a is zero outside it.
- `fft`: linear. FFT and IFFT are their own transposes; RFFT's transpose is
  the real part of the FFT of the zero-padded cotangent, IRFFT's the RFFT of
  the cotangent with the de-duplicated bins doubled, scaled by 1/N and
  conjugated (JAX's _fft_transpose_rule).
- batch-norm-training/-inference: the op's math (XLA's definition, epsilon
  rounded to f32 as the interpreter does) differentiated by hand.
  batch-norm-grad (second derivatives) by decomposition: its math written
  with lax, differentiated with autodiff.api.jvp / vjp.
"""

from __future__ import annotations

import math

import numpy as np

from xlapy.autodiff import api
from xlapy.autodiff.rules import jvp, vjp
from xlapy.autodiff.rules._util import instantiate, linear_jvp, rebind, zeros_like
from xlapy.core import dtypes
from xlapy.core.array import ConcreteArray
from xlapy.core.trace import bind
from xlapy.hlo.attributes import FftType, TriangularSolveTranspose
from xlapy.hlo.opcode import Opcode
from xlapy.lax import primitives as lax

Op = Opcode
Transpose = TriangularSolveTranspose


# -- matrix helpers ---------------------------------------------------------------------
def _is_complex(x) -> bool:
    return dtypes.is_complex(x.dtype)


def _conj(x):
    if not _is_complex(x):
        return x
    return lax.complex(lax.real(x), lax.neg(lax.imag(x)))


def _mT(x):
    """x with its last two dimensions swapped."""
    perm = (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2)
    return lax.transpose(x, perm)


def _H(x):
    return _conj(_mT(x))


def _matmul(a, b):
    return lax.batch_matmul(a, b)


def _scalar(value, like):
    return ConcreteArray(np.array(value, dtype=np.dtype(like.dtype)))


def _scale(x, value):
    return lax.mul(x, lax.broadcast_in_dim(_scalar(value, x), x.shape, ()))


def _triangle_mask(x, lower: bool, k: int = 0):
    """True on the lower (upper) triangle, shifted by k diagonals, as tril(x, k)
    (triu(x, k)) keeps."""
    shape = tuple(x.shape)
    row = lax.broadcasted_iota(np.int32, shape, len(shape) - 2)
    col = lax.broadcasted_iota(np.int32, shape, len(shape) - 1)
    offset = lax.broadcast_in_dim(ConcreteArray(np.array(k, np.int32)), shape, ())
    return lax.le(col, lax.add(row, offset)) if lower else lax.ge(col, lax.add(row, offset))


def _triangle(x, lower: bool, k: int = 0):
    return lax.select(_triangle_mask(x, lower, k), x, zeros_like(x))


def _solve(a, b, *, left_side: bool, lower: bool, transpose_a: Transpose,
           unit_diagonal: bool = False):
    attrs = {"left_side": left_side, "lower": lower, "unit_diagonal": unit_diagonal,
             "transpose_a": transpose_a}
    return bind(Op.TRIANGULAR_SOLVE, [a, b], attrs, weak_type=False)


# -- cholesky ---------------------------------------------------------------------------
def _phi(x):
    """The lower triangle of x with its diagonal halved."""
    halved = lax.select(_triangle_mask(x, True), _scale(x, 0.5), zeros_like(x))
    return lax.select(_triangle_mask(x, True, -1), x, halved)


def _cholesky_factor(node):
    """The lower factor L (A = L Lᴴ) of the node's result, other triangle zeroed."""
    result = node.result
    lower = bool(node.attr("lower", False))
    return _triangle(result if lower else _H(result), True)


def _hermitian_part(x):
    return _scale(lax.add(x, _H(x)), 0.5)


@jvp(Op.CHOLESKY)
def _cholesky_jvp(node, tangents):
    (t,) = tangents
    factor = _cholesky_factor(node)
    sigma = _hermitian_part(t)
    left = _solve(factor, sigma, left_side=True, lower=True, transpose_a=Transpose.NO_TRANSPOSE)
    inner = _solve(factor, left, left_side=False, lower=True, transpose_a=Transpose.ADJOINT)
    l_dot = _matmul(factor, _phi(inner))
    return l_dot if node.attr("lower", False) else _H(l_dot)


@vjp(Op.CHOLESKY)
def _cholesky_vjp(node, ct):
    factor = _cholesky_factor(node)
    ct = _conj(ct)                   # JAX's transpose = conj ∘ adjoint ∘ conj
    l_bar = ct if node.attr("lower", False) else _H(ct)
    inner = _phi(_matmul(_H(factor), l_bar))
    left = _solve(factor, inner, left_side=True, lower=True, transpose_a=Transpose.ADJOINT)
    sigma = _solve(factor, left, left_side=False, lower=True,
                   transpose_a=Transpose.NO_TRANSPOSE)
    return [_conj(_hermitian_part(sigma))]


# -- triangular-solve -------------------------------------------------------------------
def _ts_attrs(node):
    transpose = node.attr("transpose_a", Transpose.NO_TRANSPOSE)
    if not isinstance(transpose, Transpose):
        transpose = Transpose(str(transpose).upper())
    return (bool(node.attr("left_side", False)), bool(node.attr("lower", False)),
            bool(node.attr("unit_diagonal", False)), transpose)


def _referenced(node, a):
    """a on the triangle the op reads (strictly, with a unit diagonal), zero elsewhere."""
    _, lower, unit, _ = _ts_attrs(node)
    k = (-1 if lower else 1) if unit else 0
    return _triangle(a, lower, k)


def _op_a(x, transpose: Transpose):
    if transpose is Transpose.NO_TRANSPOSE:
        return x
    return _mT(x) if transpose is Transpose.TRANSPOSE else _H(x)


@jvp(Op.TRIANGULAR_SOLVE)
def _triangular_solve_jvp(node, tangents):
    a, _ = node.operands
    t_a, t_b = tangents
    x = node.result
    left_side, _, _, transpose = _ts_attrs(node)
    total = None if t_b is None else rebind(node, [a, t_b])
    if t_a is not None:
        d = _op_a(_referenced(node, t_a), transpose)
        rhs = _matmul(d, x) if left_side else _matmul(x, d)
        term = lax.neg(rebind(node, [a, rhs]))
        total = term if total is None else lax.add(total, term)
    return total


def _solve_transposed(node, ct):
    """op(a)⁻ᵀ ct (or ct op(a)⁻ᵀ): the transpose of b ↦ x."""
    a, _ = node.operands
    _, _, _, transpose = _ts_attrs(node)
    if transpose is Transpose.NO_TRANSPOSE:
        return rebind(node, [a, ct], transpose_a=Transpose.TRANSPOSE)
    if transpose is Transpose.TRANSPOSE:
        return rebind(node, [a, ct], transpose_a=Transpose.NO_TRANSPOSE)
    return rebind(node, [_conj(a), ct], transpose_a=Transpose.NO_TRANSPOSE)  # (aᴴ)ᵀ = conj a


@vjp(Op.TRIANGULAR_SOLVE)
def _triangular_solve_vjp(node, ct):
    left_side, _, _, transpose = _ts_attrs(node)
    ct_b = _solve_transposed(node, ct)
    ct_a = None
    if node.active[0]:
        x = node.result
        d_bar = _matmul(ct_b, _mT(x)) if left_side else _matmul(_mT(x), ct_b)
        # _op_a is its own linear transpose (JAX's, no conjugation)
        ct_a = _referenced(node, lax.neg(_op_a(d_bar, transpose)))
    return [ct_a, ct_b if node.active[1] else None]


# -- fft --------------------------------------------------------------------------------
def _fft(x, fft_type: FftType, lengths):
    return bind(Op.FFT, [x], {"fft_type": fft_type, "fft_length": tuple(lengths)},
                weak_type=False)


def _fft_type(node) -> FftType:
    kind = node.attr("fft_type", FftType.FFT)
    return kind if isinstance(kind, FftType) else FftType(str(kind).upper())


@jvp(Op.FFT)
def _fft_jvp(node, tangents):
    return linear_jvp(node, tangents)


@vjp(Op.FFT)
def _fft_vjp(node, ct):
    kind = _fft_type(node)
    lengths = tuple(node.attr("fft_length"))
    if kind in (FftType.FFT, FftType.IFFT):
        return [rebind(node, [ct])]
    if kind is FftType.RFFT:
        return [_rfft_transpose(ct, lengths)]
    return [_irfft_transpose(ct, lengths)]


def _rfft_transpose(ct, lengths):
    """rfft(x) = FFT(x + 0i)[..., :n//2+1]: pad, FFT, real part."""
    missing = lengths[-1] - ct.shape[-1]
    config = [(0, 0, 0)] * (ct.ndim - 1) + [(0, missing, 0)]
    padded = lax.pad(ct, _scalar(0, ct), config)
    return lax.real(_fft(padded, FftType.FFT, lengths))


def _irfft_transpose(ct, lengths):
    """The RFFT of the cotangent, bins that stand for two (Hermitian pairs)
    doubled, scaled by 1/N and conjugated (JAX's _irfft_transpose)."""
    x = _fft(ct, FftType.RFFT, lengths)
    n = x.shape[-1]
    odd = lengths[-1] % 2
    mask = np.array([1.0] + [2.0] * (n - 2 + odd) + [1.0] * (1 - odd))[:n]
    mask = mask / math.prod(lengths)
    mask = ConcreteArray(mask.astype(np.dtype(x.dtype)))
    scaled = lax.mul(x, lax.broadcast_in_dim(mask, x.shape, (x.ndim - 1,)))
    return _conj(scaled)


# -- batch normalisation ----------------------------------------------------------------
class _BatchNorm:
    """Shared pieces of the batch-norm math for one node."""

    def __init__(self, x, feature: int, epsilon: float):
        self.x, self.feature, self.epsilon = x, feature, epsilon
        self.axes = tuple(d for d in range(x.ndim) if d != self.feature)
        self.count = math.prod(x.shape[d] for d in self.axes)

    @classmethod
    def of(cls, node):
        return cls(node.operands[0], int(node.attr("feature_index")),
                   float(np.float32(node.attr("epsilon"))))

    def bcast(self, v):
        return lax.broadcast_in_dim(v, self.x.shape, (self.feature,))

    def sum(self, v):
        return lax.reduce_sum(v, self.axes)

    def mean(self, v):
        return _scale(self.sum(v), 1.0 / self.count) if self.count else self.sum(v)

    def rsqrt(self, var):
        return lax.rsqrt(lax.add(var, lax.broadcast_in_dim(_scalar(self.epsilon, var),
                                                           var.shape, ())))


def _cube_half(s):
    """-s³/2: d rsqrt(v + ε) / dv."""
    return _scale(lax.mul(s, lax.mul(s, s)), -0.5)


@jvp(Op.BATCH_NORM_TRAINING)
def _bn_training_jvp(node, tangents):
    bn = _BatchNorm.of(node)
    x, scale, _ = node.operands
    _, mean, var = node.result
    t_x, t_scale, t_offset = tangents
    s = bn.rsqrt(var)
    centred = lax.sub(x, bn.bcast(mean))
    normed = lax.mul(centred, bn.bcast(s))
    t_y = t_mean = t_var = None
    if t_x is not None:
        t_mean = bn.mean(t_x)
        t_centred = lax.sub(t_x, bn.bcast(t_mean))
        t_var = _scale(bn.mean(lax.mul(centred, t_centred)), 2.0)
        t_s = lax.mul(_cube_half(s), t_var)
        t_normed = lax.add(lax.mul(t_centred, bn.bcast(s)), lax.mul(centred, bn.bcast(t_s)))
        t_y = lax.mul(t_normed, bn.bcast(scale))
    t_y = _add(t_y, None if t_scale is None else lax.mul(normed, bn.bcast(t_scale)))
    t_y = _add(t_y, None if t_offset is None else bn.bcast(t_offset))
    return (t_y, t_mean, t_var)


@vjp(Op.BATCH_NORM_TRAINING)
def _bn_training_vjp(node, ct):
    bn = _BatchNorm.of(node)
    x, scale, _ = node.operands
    _, mean, var = node.result
    ct_y, ct_mean, ct_var = ct
    s = bn.rsqrt(var)
    centred = lax.sub(x, bn.bcast(mean))
    normed = lax.mul(centred, bn.bcast(s))
    ct_x = ct_scale = ct_offset = None
    if ct_y is not None:
        ct_offset = bn.sum(ct_y)
        ct_scale = bn.sum(lax.mul(ct_y, normed))
        inner = lax.sub(lax.sub(ct_y, bn.bcast(bn.mean(ct_y))),
                        lax.mul(normed, bn.bcast(bn.mean(lax.mul(ct_y, normed)))))
        ct_x = lax.mul(inner, bn.bcast(lax.mul(scale, s)))
    if ct_mean is not None:
        ct_x = _add(ct_x, bn.bcast(_scale(ct_mean, 1.0 / bn.count)))
    if ct_var is not None:
        ct_x = _add(ct_x, lax.mul(_scale(centred, 2.0 / bn.count), bn.bcast(ct_var)))
    return [ct_x, ct_scale, ct_offset]


@jvp(Op.BATCH_NORM_INFERENCE)
def _bn_inference_jvp(node, tangents):
    bn = _BatchNorm.of(node)
    x, scale, _, mean, var = node.operands
    t_x, t_scale, t_offset, t_mean, t_var = tangents
    s = bn.rsqrt(var)
    centred = lax.sub(x, bn.bcast(mean))
    t_centred = None
    if t_x is not None or t_mean is not None:
        t_centred = lax.sub(instantiate(t_x, x), bn.bcast(instantiate(t_mean, mean)))
    total = None
    if t_centred is not None:
        total = lax.mul(t_centred, bn.bcast(lax.mul(scale, s)))
    if t_var is not None:
        t_s = lax.mul(_cube_half(s), t_var)
        total = _add(total, lax.mul(centred, bn.bcast(lax.mul(scale, t_s))))
    if t_scale is not None:
        total = _add(total, lax.mul(centred, bn.bcast(lax.mul(t_scale, s))))
    if t_offset is not None:
        total = _add(total, bn.bcast(t_offset))
    return total


@vjp(Op.BATCH_NORM_INFERENCE)
def _bn_inference_vjp(node, ct):
    bn = _BatchNorm.of(node)
    x, scale, _, mean, var = node.operands
    s = bn.rsqrt(var)
    centred = lax.sub(x, bn.bcast(mean))
    scale_s = lax.mul(scale, s)
    ct_sum = bn.sum(ct)
    ct_centred = bn.sum(lax.mul(ct, centred))
    return [lax.mul(ct, bn.bcast(scale_s)),
            lax.mul(ct_centred, s),
            ct_sum,
            lax.neg(lax.mul(ct_sum, scale_s)),
            lax.mul(ct_centred, lax.mul(scale, _cube_half(s)))]


def _add(a, b):
    if a is None:
        return b
    return a if b is None else lax.add(a, b)


# batch-norm-grad: by decomposition -----------------------------------------------------
def _bn_grad_math(feature: int, epsilon: float):
    """batch-norm-grad's definition (as the interpreter computes it) as a function
    of its five operands."""

    def math_(x, scale, mean, var, dy):
        bn = _BatchNorm(x, feature, epsilon)
        s = bn.rsqrt(var)
        centred = lax.sub(x, bn.bcast(mean))
        c = bn.mean(lax.mul(lax.mul(dy, centred), bn.bcast(lax.mul(s, s))))
        d = bn.mean(dy)
        inner = lax.sub(lax.sub(dy, bn.bcast(d)), lax.mul(bn.bcast(c), centred))
        grad_x = lax.mul(bn.bcast(lax.mul(scale, s)), inner)
        grad_scale = bn.sum(lax.mul(dy, lax.mul(centred, bn.bcast(s))))
        return grad_x, grad_scale, bn.sum(dy)

    return math_


def _bn_grad_fn(node):
    bn = _BatchNorm.of(node)
    return _bn_grad_math(bn.feature, bn.epsilon)


@jvp(Op.BATCH_NORM_GRAD)
def _bn_grad_jvp(node, tangents):
    tangents = [instantiate(t, o) for t, o in zip(tangents, node.operands)]
    _, out_tangents = api.jvp(_bn_grad_fn(node), tuple(node.operands), tuple(tangents))
    return tuple(out_tangents)


@vjp(Op.BATCH_NORM_GRAD)
def _bn_grad_vjp(node, ct):
    _, pullback = api.vjp(_bn_grad_fn(node), *node.operands)
    return list(pullback(tuple(instantiate(ct, node.result))))
