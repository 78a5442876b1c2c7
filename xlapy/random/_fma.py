"""A fused multiply-add, a * b + c rounded once, from plain HLO ops.

XLA's CPU and GPU compilers contract `x * y + z` into FMA instructions, and
JAX's samplers are written as such expressions (the uniform's affine map,
the erf_inv polynomial). Drawing JAX's exact floats therefore needs the
single rounding spelled out: narrow floats compute exactly in float64 and
round once; float64 uses Dekker's error-free product and Knuth's two-sum,
whose compensated result is the correctly rounded one except in cases far
rarer than the draws that reach them. bfloat16 is the exception: XLA widens
it op by op, rounding in between, so there a * b + c stays two roundings.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from xlapy.core.trace import Array, as_array
from xlapy.lax import primitives as lax

_F64 = np.dtype(np.float64)
_BF16 = np.dtype(ml_dtypes.bfloat16)
_SPLITTER = 134217729.0  # 2**27 + 1: splits a float64 into two 26-bit halves


def fma(a: Array, b: Array, c: Array) -> Array:
    """a * b + c with one rounding; a, b, c share one float dtype and shape."""
    dtype = np.dtype(a.dtype)
    if dtype == _BF16:  # XLA widens bf16 op by op, rounding in between: no contraction
        return lax.add(lax.mul(a, b), c)
    if dtype != _F64:
        wide = [lax.convert_element_type(v, _F64) for v in (a, b, c)]
        return lax.convert_element_type(lax.add(lax.mul(wide[0], wide[1]), wide[2]), dtype)
    product = lax.mul(a, b)
    product_error = _product_error(a, b, product)
    total = lax.add(product, c)
    sum_error = _sum_error(product, c, total)
    exact = lax.add(total, lax.add(sum_error, product_error))
    # Dekker's split overflows for huge operands; there a * b + c is what it is.
    finite = lax.is_finite(lax.mul(a, as_array(_SPLITTER, _F64)))
    finite = lax.bitwise_and(finite, lax.is_finite(lax.mul(b, as_array(_SPLITTER, _F64))))
    return lax.select(lax.bitwise_and(finite, lax.is_finite(exact)), exact, total)


def _split(x: Array) -> tuple[Array, Array]:
    scaled = lax.mul(x, as_array(_SPLITTER, _F64))
    high = lax.sub(scaled, lax.sub(scaled, x))
    return high, lax.sub(x, high)


def _product_error(a: Array, b: Array, product: Array) -> Array:
    """a * b - fl(a * b), exactly (Dekker)."""
    a_hi, a_lo = _split(a)
    b_hi, b_lo = _split(b)
    error = lax.sub(lax.mul(a_hi, b_hi), product)
    error = lax.add(error, lax.mul(a_hi, b_lo))
    error = lax.add(error, lax.mul(a_lo, b_hi))
    return lax.add(error, lax.mul(a_lo, b_lo))


def _sum_error(x: Array, y: Array, total: Array) -> Array:
    """x + y - fl(x + y), exactly (Knuth's two-sum)."""
    y_part = lax.sub(total, x)
    x_part = lax.sub(total, y_part)
    return lax.add(lax.sub(x, x_part), lax.sub(y, y_part))
