"""`xnp` arithmetic: the four operations, NumPy's flooring division and
modulo, powers, signs and absolute values.

HLO's integer `divide` and `remainder` truncate toward zero; NumPy floors
and gives the remainder the divisor's sign. The corrections below compose
those results from lax ops the way jax.numpy does, so eager mode and `jit`
agree bit for bit. Integer `x // 0` gives what jax.numpy gives on XLA
(-1 or -2 by the sign of x; all ones unsigned) where NumPy warns and gives
0; `x % 0` and `fmod(x, 0)` give 0, as in NumPy and JAX.
"""

from __future__ import annotations

import builtins

import numpy as np

from xlapy.core.trace import Array
from xlapy.lax import primitives as lax
from xlapy.numpy import _eager_fast
from xlapy.numpy._promotion import (
    constant_like,
    full_like_of,
    is_inexact,
    promote_args,
    promote_args_inexact,
    promote_args_numeric,
    promote_dtypes,
)


def _no_bool(name: str, x: Array, hint: str) -> None:
    if x.dtype == np.bool_:
        raise TypeError(f"xnp.{name} does not accept bool operands; {hint}")


def _no_complex(name: str, x: Array) -> None:
    if np.dtype(x.dtype).kind == "c":
        raise TypeError(f"xnp.{name} does not accept complex operands ({x.dtype})")


# -- + - * / ------------------------------------------------------------------------------
def add(x, y, /) -> Array:
    """`x + y`, broadcast; on bools it is logical or, as in NumPy."""
    fast = _eager_fast.binary(np.add, x, y)
    if fast is not None:
        return fast
    x, y = promote_args("add", x, y)
    return lax.bitwise_or(x, y) if x.dtype == np.bool_ else lax.add(x, y)


def subtract(x, y, /) -> Array:
    """`x - y`, broadcast (bools are refused, as by NumPy)."""
    fast = _eager_fast.binary(np.subtract, x, y)
    if fast is not None:
        return fast
    x, y = promote_args("subtract", x, y)
    _no_bool("subtract", x, "use xnp.logical_xor or xnp.not_equal")
    return lax.sub(x, y)


def multiply(x, y, /) -> Array:
    """`x * y`, broadcast; on bools it is logical and."""
    fast = _eager_fast.binary(np.multiply, x, y)
    if fast is not None:
        return fast
    x, y = promote_args("multiply", x, y)
    return lax.bitwise_and(x, y) if x.dtype == np.bool_ else lax.mul(x, y)


def true_divide(x, y, /) -> Array:
    """`x / y`; integers and bools divide as the default float (int32 / int32
    is float32)."""
    fast = _eager_fast.binary(np.divide, x, y, floats_only=True)
    if fast is not None:
        return fast
    x, y = promote_args_inexact("true_divide", x, y)
    return lax.div(x, y)


divide = true_divide


def _float_divmod(x: Array, y: Array) -> tuple[Array, Array]:
    """Python's float divmod: the quotient floored, the remainder with y's sign."""
    mod = lax.rem(x, y)
    zero = constant_like(x, 0)
    div = lax.div(lax.select(lax.eq(y, zero), x, lax.sub(x, mod)), y)
    fix = lax.bitwise_and(lax.ne(mod, zero), lax.ne(lax.sign(y), lax.sign(mod)))
    mod = lax.select(fix, lax.add(mod, y), mod)
    div = lax.select(fix, lax.sub(div, constant_like(x, 1)), div)
    return lax.round(div, "to_nearest_even"), mod


def floor_divide(x, y, /) -> Array:
    """`x // y` rounding toward minus infinity, as NumPy (HLO truncates)."""
    x, y = promote_args_numeric("floor_divide", x, y)
    _no_complex("floor_divide", x)
    if x.dtype.kind == "u":
        return lax.div(x, y)
    if x.dtype.kind == "i":
        quotient = lax.div(x, y)
        zero = constant_like(x, 0)
        inexact = lax.ne(lax.rem(x, y), zero)
        signs_differ = lax.ne(lax.sign(x), lax.sign(y))
        fix = lax.bitwise_and(signs_differ, inexact)
        return lax.select(fix, lax.sub(quotient, constant_like(x, 1)), quotient)
    return _float_divmod(x, y)[0]


def remainder(x, y, /) -> Array:
    """`x % y` with the sign of `y`, as NumPy (HLO's remainder follows `x`)."""
    x, y = promote_args_numeric("remainder", x, y)
    _no_complex("remainder", x)
    zero = constant_like(x, 0)
    if x.dtype.kind in "iu":  # NumPy's x % 0 is 0
        y = lax.select(lax.eq(y, zero), constant_like(y, 1), y)
    trunc = lax.rem(x, y)
    nonzero = lax.ne(trunc, zero)
    if x.dtype.kind == "u":
        return trunc
    signs_differ = lax.ne(lax.lt(trunc, zero), lax.lt(y, zero))
    return lax.select(lax.bitwise_and(signs_differ, nonzero), lax.add(trunc, y), trunc)


mod = remainder


def fmod(x, y, /) -> Array:
    """C's fmod: the remainder with the sign of `x` (HLO's remainder)."""
    x, y = promote_args_numeric("fmod", x, y)
    _no_complex("fmod", x)
    if x.dtype.kind in "iu":  # NumPy's fmod(x, 0) is 0
        y = lax.select(lax.eq(y, constant_like(y, 0)), constant_like(y, 1), y)
    return lax.rem(x, y)


def divmod(x, y, /) -> tuple[Array, Array]:  # noqa: A001 - NumPy's name
    """`(x // y, x % y)` with NumPy's flooring semantics."""
    x, y = promote_args_numeric("divmod", x, y)
    _no_complex("divmod", x)
    if x.dtype.kind in "iu":
        return floor_divide(x, y), remainder(x, y)
    return _float_divmod(x, y)


# -- powers -------------------------------------------------------------------------------
def _integer_pow(x: Array, n: int) -> Array:
    """`x ** n` for a static int by square-and-multiply (as jax's integer_pow),
    exact for integers and cheaper than HLO power."""
    if n == 0:
        return full_like_of(x, 1)
    result, base, k = None, x, builtins.abs(n)
    while k:
        if k & 1:
            result = base if result is None else lax.mul(result, base)
        k >>= 1
        if k:
            base = lax.mul(base, base)
    return lax.div(constant_like(result, 1), result) if n < 0 else result


def power(x, y, /) -> Array:
    """`x ** y` by JAX's rules: a Python int exponent multiplies (exactly), an
    integer result uses HLO's integer power (negative exponents give 0 but
    for base 1, where NumPy raises), and bools raise as integers."""
    if isinstance(y, (int, np.integer)) and not isinstance(y, (bool, np.bool_)):
        (x,) = promote_dtypes(x)
        if x.dtype == np.bool_:
            (x,) = promote_args_numeric("power", x)
        if is_inexact(x.dtype) or y >= 0:
            return _integer_pow(x, int(y))
    x, y = promote_args_numeric("power", x, y)
    return lax.pow(x, y)


def float_power(x, y, /) -> Array:
    """`x ** y` in floating point (ints become the default float, as in JAX)."""
    return lax.pow(*promote_args_inexact("float_power", x, y))


def square(x, /) -> Array:
    """`x * x` (bool squares as int, as NumPy)."""
    (x,) = promote_args_numeric("square", x)
    return lax.mul(x, x)


def reciprocal(x, /) -> Array:
    """`1 / x` in floating point (ints become the default float, as in JAX)."""
    (x,) = promote_args_inexact("reciprocal", x)
    return lax.div(constant_like(x, 1), x)


# -- signs --------------------------------------------------------------------------------
def negative(x, /) -> Array:
    """`-x`; unsigned integers wrap; bools are refused, as by NumPy."""
    (x,) = promote_args("negative", x)
    _no_bool("negative", x, "use xnp.logical_not or xnp.invert")
    return lax.neg(x)


def positive(x, /) -> Array:
    """`+x`: the value itself (bools too, as in JAX)."""
    (x,) = promote_args("positive", x)
    return x


def absolute(x, /) -> Array:
    """|x|; complex gives its real magnitude, unsigned and bool are unchanged."""
    (x,) = promote_args("absolute", x)
    if x.dtype.kind in "ub":
        return x
    return lax.abs(x)


abs = absolute  # noqa: A001 - NumPy's name


def sign(x, /) -> Array:
    """-1, 0 or 1 (NaN for NaN); `x / |x|` for complex, as NumPy 2."""
    (x,) = promote_args("sign", x)
    _no_bool("sign", x, "it has no sign")
    if x.dtype.kind == "u":
        return lax.select(lax.eq(x, constant_like(x, 0)), x, constant_like(x, 1))
    return lax.sign(x)


__all__ = ["abs", "absolute", "add", "divide", "divmod", "float_power", "floor_divide", "fmod",
           "mod", "multiply", "negative", "positive", "power", "reciprocal", "remainder", "sign",
           "square", "subtract", "true_divide"]
