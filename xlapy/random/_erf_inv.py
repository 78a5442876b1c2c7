"""The inverse error function as XLA expands it (Giles' polynomials).

`jax.random.normal` is `sqrt(2) * erf_inv(u)`; to draw the same normals as
JAX, erf_inv must be the same polynomials in the same order of operations:
XLA's ErfInv32 (two pieces in w = -log1p(-x*x), float32, also used for f16
and bf16 by upcasting) and ErfInv64 (three pieces). Coefficients are from
M. Giles, "Approximating the erfinv function", GPU Computing Gems (2011).
"""

from __future__ import annotations

import numpy as np

from xlapy.core.trace import Array, as_array
from xlapy.lax import primitives as lax
from xlapy.random._fma import fma

_F32_BELOW_5 = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_F32_ABOVE_5 = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)

_F64_BELOW_6_25 = (
    -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
    1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
    6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
    2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
    4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
    0.24015818242558961693, 1.6536545626831027356)
_F64_BELOW_16 = (
    2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
    1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
    2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
    6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
    0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
    -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
    3.0838856104922207635)
_F64_ABOVE_16 = (
    -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
    -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
    2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
    -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
    7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
    1.0103004648645343977, 4.8499064014085844221)


def erf_inv(x) -> Array:
    """Inverse of erf on [-1, 1]: +-inf at +-1, NaN outside, as XLA computes it."""
    x = as_array(x)
    dtype = np.dtype(x.dtype)
    if dtype == np.float64:
        return _erf_inv_f64(x)
    if dtype == np.float32:
        return _erf_inv_f32(x)
    if dtype.kind == "f" or dtype.name == "bfloat16":
        return lax.convert_element_type(_erf_inv_f32(lax.convert_element_type(x, np.float32)),
                                        dtype)
    raise TypeError(f"erf_inv needs a floating-point array, got {dtype}")


def _const(value: float, like: Array) -> Array:
    return as_array(value, like.dtype)


def _full(value: float, like: Array) -> Array:
    """`value` broadcast to `like`'s shape (select needs whole operands)."""
    return lax.broadcast_in_dim(_const(value, like), like.shape, ())


def _w(x: Array) -> Array:
    """-log1p(-x*x), the variable the polynomials are in."""
    return lax.neg(lax.log1p(lax.mul(x, lax.neg(x))))


def _finish(x: Array, p: Array) -> Array:
    """p * x, with erf_inv(+-1) = +-inf where the polynomial is indeterminate."""
    at_one = lax.eq(lax.abs(x), _const(1, x))
    return lax.select(at_one, lax.mul(x, _const(np.inf, x)), lax.mul(p, x))


def _erf_inv_f32(x: Array) -> Array:
    w = _w(x)
    small = lax.lt(w, _const(5, x))
    w = lax.select(small, lax.sub(w, _const(2.5, x)),
                   lax.sub(lax.sqrt(w), _const(3, x)))

    def coefficient(i):
        return lax.select(small, _full(_F32_BELOW_5[i], x), _full(_F32_ABOVE_5[i], x))

    p = coefficient(0)
    for i in range(1, len(_F32_BELOW_5)):
        p = fma(p, w, coefficient(i))
    return _finish(x, p)


def _erf_inv_f64(x: Array) -> Array:
    w = _w(x)
    below_6_25 = lax.lt(w, _const(6.25, x))
    below_16 = lax.lt(w, _const(16, x))
    root_shift = lax.select(below_16, _full(3.25, x), _full(5, x))
    w = lax.select(below_6_25, lax.sub(w, _const(3.125, x)),
                   lax.sub(lax.sqrt(w), root_shift))

    def coefficient(i):
        c = _full(_F64_BELOW_6_25[i], x)
        if i < len(_F64_BELOW_16):
            c = lax.select(below_6_25, c, _full(_F64_BELOW_16[i], x))
        if i < len(_F64_ABOVE_16):
            c = lax.select(below_16, c, _full(_F64_ABOVE_16[i], x))
        return c

    p = coefficient(0)
    for i in range(1, len(_F64_ABOVE_16)):
        p = fma(p, w, coefficient(i))
    for i in range(len(_F64_ABOVE_16), len(_F64_BELOW_16)):
        p = lax.select(below_16, fma(p, w, coefficient(i)), p)
    for i in range(len(_F64_BELOW_16), len(_F64_BELOW_6_25)):
        p = lax.select(below_6_25, fma(p, w, coefficient(i)), p)
    return _finish(x, p)
