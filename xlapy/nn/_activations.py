"""Elementwise activation functions of `xlapy.nn`, with jax.nn's formulas.

The formulas are JAX's, including its choices for stability (softplus as
logaddexp(x, 0), log_sigmoid as -softplus(-x), elu evaluating expm1 only on
the non-positive side) so results match jax.nn to rounding, eagerly and
under `xlapy.jit`.
"""

from __future__ import annotations

import numpy as np

import xlapy.numpy as xnp
from xlapy.core.trace import Array
from xlapy.lax import primitives as lax
from xlapy.numpy._promotion import promote_args_inexact

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _inexact(name: str, x) -> Array:
    (x,) = promote_args_inexact(name, x)
    return x


def identity(x) -> Array:
    """x itself, as an array."""
    return xnp.asarray(x)


def relu(x) -> Array:
    """max(x, 0); integer inputs stay integers."""
    return xnp.maximum(x, 0)


def relu6(x) -> Array:
    """min(max(x, 0), 6)."""
    return xnp.minimum(xnp.maximum(x, 0), 6.0)


def sigmoid(x) -> Array:
    """1 / (1 + exp(-x)), as HLO's logistic."""
    return lax.logistic(_inexact("sigmoid", x))


def softplus(x) -> Array:
    """log(1 + exp(x)), computed as logaddexp(x, 0) so it never overflows."""
    return xnp.logaddexp(_inexact("softplus", x), 0)


def log_sigmoid(x) -> Array:
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    return -softplus(-_inexact("log_sigmoid", x))


def silu(x) -> Array:
    """x * sigmoid(x) (also called swish)."""
    x = _inexact("silu", x)
    return x * sigmoid(x)


swish = silu


def gelu(x, approximate: bool = True) -> Array:
    """Gaussian error linear unit: x * Phi(x). approximate=True (JAX's default)
    uses the tanh formula, approximate=False the exact erf form."""
    x = _inexact("gelu", x)
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(x.dtype)
        cdf = 0.5 * (1.0 + xnp.tanh(sqrt_2_over_pi * (x + 0.044715 * (x ** 3))))
        return x * cdf
    sqrt_half = np.sqrt(0.5).astype(x.dtype)
    return 0.5 * x * (1.0 + lax.erf(x * sqrt_half))


def leaky_relu(x, negative_slope=1e-2) -> Array:
    """x where x >= 0, else negative_slope * x."""
    x = _inexact("leaky_relu", x)
    return xnp.where(x >= 0, x, negative_slope * x)


def elu(x, alpha=1.0) -> Array:
    """x where x > 0, else alpha * (exp(x) - 1)."""
    x = _inexact("elu", x)
    negative_part = xnp.where(x > 0, 0.0, x)  # keeps expm1 away from overflow
    return xnp.where(x > 0, x, alpha * xnp.expm1(negative_part))


def celu(x, alpha=1.0) -> Array:
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha): elu made C1 for any alpha."""
    x = _inexact("celu", x)
    return xnp.maximum(x, 0.0) + alpha * xnp.expm1(xnp.minimum(x, 0.0) / alpha)


def selu(x) -> Array:
    """scale * elu(x, alpha) with the self-normalising constants."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


def hard_tanh(x) -> Array:
    """x clipped to [-1, 1] (integers stay integers)."""
    x = xnp.asarray(x)
    return xnp.where(x > 1, 1, xnp.where(x < -1, -1, x))


def hard_sigmoid(x) -> Array:
    """relu6(x + 3) / 6."""
    return relu6(xnp.asarray(x) + 3.0) / 6.0


def hard_silu(x) -> Array:
    """x * hard_sigmoid(x) (also called hard_swish)."""
    x = _inexact("hard_silu", x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def soft_sign(x) -> Array:
    """x / (|x| + 1)."""
    x = _inexact("soft_sign", x)
    return x / (xnp.abs(x) + 1)


def squareplus(x, b=4) -> Array:
    """(x + sqrt(x**2 + b)) / 2, a smooth relu."""
    x = _inexact("squareplus", x)
    return (x + xnp.sqrt(xnp.square(x) + b)) / 2


def mish(x) -> Array:
    """x * tanh(softplus(x))."""
    x = _inexact("mish", x)
    return x * xnp.tanh(softplus(x))


def glu(x, axis: int = -1) -> Array:
    """Gated linear unit: the first half of x along `axis` times the sigmoid of
    the second half (the axis must have even size)."""
    x = xnp.asarray(x)
    size = x.shape[axis]
    if size % 2:
        raise ValueError(f"glu needs an even size along axis {axis}, got {size}")
    first, second = xnp.split(x, 2, axis)
    return first * sigmoid(second)
