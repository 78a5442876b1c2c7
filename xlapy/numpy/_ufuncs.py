"""`xnp` elementwise functions that map onto one lax op or a short fixed
composition: exponentials and logarithms, trigonometry, rounding,
comparisons, logic and bit operations.

Transcendental functions compute integers and bools in the default float
(`xnp.sin(int32)` is float32, as in JAX). Comparisons of complex numbers
order them lexicographically (real part, then imaginary), as NumPy does.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from xlapy.core.trace import Array
from xlapy.lax import primitives as lax
from xlapy.numpy._arithmetic import divmod as _divmod
from xlapy.numpy._promotion import (
    constant_like,
    promote_args,
    promote_args_inexact,
    promote_args_numeric,
)


def _inexact_unary(lax_fn: Callable, name: str, doc: str) -> Callable:
    def fn(x, /) -> Array:
        (x,) = promote_args_inexact(name, x)
        return lax_fn(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


exp = _inexact_unary(lax.exp, "exp", "e ** x.")
expm1 = _inexact_unary(lax.expm1, "expm1", "e ** x - 1, accurate near 0.")
log = _inexact_unary(lax.log, "log", "Natural logarithm.")
log1p = _inexact_unary(lax.log1p, "log1p", "log(1 + x), accurate near 0.")
sqrt = _inexact_unary(lax.sqrt, "sqrt", "Square root (NaN below 0 for reals).")
cbrt = _inexact_unary(lax.cbrt, "cbrt", "Real cube root.")
sin = _inexact_unary(lax.sin, "sin", "Sine.")
cos = _inexact_unary(lax.cos, "cos", "Cosine.")
tan = _inexact_unary(lax.tan, "tan", "Tangent.")
arcsin = _inexact_unary(lax.asin, "arcsin", "Inverse sine.")
arccos = _inexact_unary(lax.acos, "arccos", "Inverse cosine.")
arctan = _inexact_unary(lax.atan, "arctan", "Inverse tangent.")
sinh = _inexact_unary(lax.sinh, "sinh", "Hyperbolic sine.")
cosh = _inexact_unary(lax.cosh, "cosh", "Hyperbolic cosine.")
tanh = _inexact_unary(lax.tanh, "tanh", "Hyperbolic tangent.")
arcsinh = _inexact_unary(lax.asinh, "arcsinh", "Inverse hyperbolic sine.")
arccosh = _inexact_unary(lax.acosh, "arccosh", "Inverse hyperbolic cosine.")
arctanh = _inexact_unary(lax.atanh, "arctanh", "Inverse hyperbolic tangent.")
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh


def exp2(x, /) -> Array:
    """2 ** x, as HLO power so that integral exponents are exact."""
    (x,) = promote_args_inexact("exp2", x)
    return lax.pow(constant_like(x, 2), x)


def log2(x, /) -> Array:
    """Base-2 logarithm, as log(x) / log(2) (the way jax.numpy computes it)."""
    (x,) = promote_args_inexact("log2", x)
    return lax.div(lax.log(x), constant_like(x, math.log(2)))


def log10(x, /) -> Array:
    """Base-10 logarithm, as log(x) / log(10) (the way jax.numpy computes it)."""
    (x,) = promote_args_inexact("log10", x)
    return lax.div(lax.log(x), constant_like(x, math.log(10)))


def arctan2(x1, x2, /) -> Array:
    """The angle of the point (x2, x1), in (-pi, pi]."""
    return lax.atan2(*promote_args_inexact("arctan2", x1, x2))


atan2 = arctan2


# -- rounding -----------------------------------------------------------------------------
def _real_rounding(lax_fn: Callable, name: str, doc: str) -> Callable:
    def fn(x, /) -> Array:
        (x,) = promote_args(name, x)
        if x.dtype.kind in "iub":
            return x  # already integral
        if x.dtype.kind == "c":
            raise TypeError(f"xnp.{name} does not accept complex operands ({x.dtype})")
        return lax_fn(x)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _trunc(x: Array) -> Array:
    return lax.select(lax.lt(x, constant_like(x, 0)), lax.ceil(x), lax.floor(x))


floor = _real_rounding(lax.floor, "floor", "The largest integral value <= x (ints unchanged).")
ceil = _real_rounding(lax.ceil, "ceil", "The smallest integral value >= x (ints unchanged).")
trunc = _real_rounding(_trunc, "trunc", "x rounded toward zero (ints unchanged).")
fix = _real_rounding(_trunc, "fix", "x rounded toward zero (ints unchanged).")


def rint(x, /) -> Array:
    """The nearest integral value, ties to even; ints become the default float."""
    (x,) = promote_args_inexact("rint", x)
    if x.dtype.kind == "c":
        return lax.complex(rint(lax.real(x)), rint(lax.imag(x)))
    return lax.round(x, "to_nearest_even")


def round(a, decimals: int = 0, out=None) -> Array:  # noqa: A001 - NumPy's name
    """`a` rounded to `decimals` decimal places, ties to even, as NumPy.

    Floats scale by 10**decimals, round and scale back (float16 in float32);
    integers are unchanged unless `decimals` is negative."""
    if out is not None:
        raise NotImplementedError("xnp.round: out= is not supported (arrays are immutable)")
    decimals = int(decimals)
    (a,) = promote_args("round", a)
    if a.dtype.kind == "c":
        return lax.complex(round(lax.real(a), decimals), round(lax.imag(a), decimals))
    if a.dtype.kind in "iub":
        return a if decimals >= 0 or a.dtype == np.bool_ else _round_int(a, 10 ** -decimals)
    if decimals == 0:
        return lax.round(a, "to_nearest_even")
    dtype = a.dtype
    x = lax.convert_element_type(a, np.float32) if dtype == np.float16 else a
    factor = constant_like(x, 10.0 ** decimals)
    out_ = lax.div(lax.round(lax.mul(x, factor), "to_nearest_even"), factor)
    return lax.convert_element_type(out_, dtype) if dtype == np.float16 else out_


around = round


def _round_int(a: Array, factor: int) -> Array:
    """An integer rounded to a multiple of `factor`, ties to the even multiple."""
    if np.iinfo(a.dtype).max < factor:
        return lax.mul(a, constant_like(a, 0))
    q, r = _divmod(a, constant_like(a, factor))
    f = constant_like(a, factor)
    odd = lax.ne(lax.rem(q, constant_like(a, 2)), constant_like(a, 0))
    # r < factor, so comparing r with factor - r avoids overflowing 2 * r.
    up = lax.bitwise_or(lax.gt(r, lax.sub(f, r)),
                        lax.bitwise_and(lax.eq(r, lax.sub(f, r)), odd))
    return lax.mul(lax.add(q, lax.convert_element_type(up, a.dtype)), f)


# -- comparisons --------------------------------------------------------------------------
def _comparison(lax_fn: Callable, name: str, doc: str, ordered: bool) -> Callable:
    def fn(x, y, /) -> Array:
        x, y = promote_args(name, x, y)
        if ordered and x.dtype.kind == "c":
            real_equal = lax.eq(lax.real(x), lax.real(y))
            return lax.select(real_equal, lax_fn(lax.imag(x), lax.imag(y)),
                              lax_fn(lax.real(x), lax.real(y)))
        return lax_fn(x, y)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


equal = _comparison(lax.eq, "equal", "x == y, elementwise.", False)
not_equal = _comparison(lax.ne, "not_equal", "x != y, elementwise.", False)
less = _comparison(lax.lt, "less", "x < y, elementwise.", True)
less_equal = _comparison(lax.le, "less_equal", "x <= y, elementwise.", True)
greater = _comparison(lax.gt, "greater", "x > y, elementwise.", True)
greater_equal = _comparison(lax.ge, "greater_equal", "x >= y, elementwise.", True)


# -- logic --------------------------------------------------------------------------------
def _to_bool(x: Array) -> Array:
    return x if x.dtype == np.bool_ else lax.ne(x, constant_like(x, 0))


def logical_and(x, y, /) -> Array:
    """Truth of `x and y`, elementwise (nonzero is true)."""
    return lax.bitwise_and(*map(_to_bool, promote_args("logical_and", x, y)))


def logical_or(x, y, /) -> Array:
    """Truth of `x or y`, elementwise (nonzero is true)."""
    return lax.bitwise_or(*map(_to_bool, promote_args("logical_or", x, y)))


def logical_xor(x, y, /) -> Array:
    """Truth of `bool(x) != bool(y)`, elementwise."""
    return lax.bitwise_xor(*map(_to_bool, promote_args("logical_xor", x, y)))


def logical_not(x, /) -> Array:
    """Truth of `not x`, elementwise."""
    (x,) = promote_args("logical_not", x)
    return lax.bitwise_not(_to_bool(x))


# -- bits ---------------------------------------------------------------------------------
def _integral(name: str, *args) -> list[Array]:
    arrays = promote_args(name, *args)
    if arrays[0].dtype.kind not in "iub":
        raise TypeError(f"xnp.{name} needs integer or bool operands, got {arrays[0].dtype}")
    return arrays


def bitwise_and(x, y, /) -> Array:
    """Bitwise `x & y` of integers (logical for bools)."""
    return lax.bitwise_and(*_integral("bitwise_and", x, y))


def bitwise_or(x, y, /) -> Array:
    """Bitwise `x | y` of integers (logical for bools)."""
    return lax.bitwise_or(*_integral("bitwise_or", x, y))


def bitwise_xor(x, y, /) -> Array:
    """Bitwise `x ^ y` of integers (logical for bools)."""
    return lax.bitwise_xor(*_integral("bitwise_xor", x, y))


def invert(x, /) -> Array:
    """Bitwise `~x` of integers (logical not for bools)."""
    return lax.bitwise_not(*_integral("invert", x))


bitwise_not = bitwise_invert = invert


def _shift_operands(name: str, x, y) -> list[Array]:
    arrays = promote_args_numeric(name, x, y)
    if arrays[0].dtype.kind not in "iu":
        raise TypeError(f"xnp.{name} needs integer operands, got {arrays[0].dtype}")
    return arrays


def left_shift(x, y, /) -> Array:
    """`x << y`; shifting by the bit width or more gives 0 (XLA's rule)."""
    return lax.shift_left(*_shift_operands("left_shift", x, y))


def right_shift(x, y, /) -> Array:
    """`x >> y`: arithmetic for signed, logical for unsigned integers."""
    x, y = _shift_operands("right_shift", x, y)
    if x.dtype.kind == "i":
        return lax.shift_right_arithmetic(x, y)
    return lax.shift_right_logical(x, y)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


__all__ = [
    "acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh",
    "around", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and", "bitwise_invert",
    "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "cbrt", "ceil", "cos", "cosh", "equal", "exp", "exp2", "expm1", "fix", "floor", "greater",
    "greater_equal", "invert", "left_shift", "less", "less_equal", "log", "log10", "log1p",
    "log2", "logical_and", "logical_not", "logical_or", "logical_xor", "not_equal",
    "right_shift", "rint", "round", "sin", "sinh", "sqrt", "tan", "tanh", "trunc",
]
