"""`xlapy.lax` elementwise primitives: one function per HLO elementwise op.

As in JAX's lax, operands must already agree: same dtype and same shape. The
one convenience is JAX's: a Python scalar (weak-typed) takes the other
operand's dtype, and a 0-d operand is broadcast to the other's shape.
"""

from __future__ import annotations

import builtins

import numpy as np

from xlapy.core.trace import Array, as_array, bind, convert, element_type
from xlapy.hlo.attributes import ComparisonDirection
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape


def _coerce(*operands) -> list[Array]:
    """Operands as Arrays of one dtype and shape (weak scalars adapt, 0-d broadcast)."""
    arrays = [as_array(o) for o in operands]
    first = arrays[0]
    if all(a.dtype == first.dtype and a.shape == first.shape for a in arrays[1:]):
        return arrays  # the common case: nothing to adapt
    strong = [a for a in arrays if not a.weak_type]
    target = (strong or arrays)[0].dtype
    arrays = [convert_element_type(a, target) if a.dtype != target and a.weak_type else a
              for a in arrays]
    dtypes = {np.dtype(a.dtype) for a in arrays}
    if len(dtypes) > 1:
        raise TypeError("lax ops need operands of one dtype, got "
                        + ", ".join(str(a.dtype) for a in arrays)
                        + "; convert with lax.convert_element_type (xnp promotes for you)")
    shape = builtins.max((a.shape for a in arrays), key=len)
    out = []
    for a in arrays:
        if a.shape != shape:
            if a.shape:
                raise TypeError("lax ops need operands of one shape, got "
                                + ", ".join(str(list(x.shape)) for x in arrays)
                                + "; broadcast with lax.broadcast_in_dim (xnp broadcasts)")
            a = broadcast_in_dim(a, shape, ())
        out.append(a)
    return out


def _unary(opcode: Opcode, name: str):
    def op(x):
        (x,) = _coerce(x)
        return bind(opcode, [x], name=name)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise `{opcode.value}` (HLO)."
    return op


def _binary(opcode: Opcode, name: str):
    def op(x, y):
        x, y = _coerce(x, y)
        return bind(opcode, [x, y], name=name)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise `{opcode.value}` (HLO)."
    return op


abs = _unary(Opcode.ABS, "abs")  # noqa: A001
acos = _unary(Opcode.ACOS, "acos")
acosh = _unary(Opcode.ACOSH, "acosh")
asin = _unary(Opcode.ASIN, "asin")
asinh = _unary(Opcode.ASINH, "asinh")
atan = _unary(Opcode.ATAN, "atan")
atanh = _unary(Opcode.ATANH, "atanh")
cbrt = _unary(Opcode.CBRT, "cbrt")
ceil = _unary(Opcode.CEIL, "ceil")
clz = _unary(Opcode.CLZ, "clz")
cos = _unary(Opcode.COS, "cos")
cosh = _unary(Opcode.COSH, "cosh")
erf = _unary(Opcode.ERF, "erf")
exp = _unary(Opcode.EXP, "exp")
expm1 = _unary(Opcode.EXPM1, "expm1")
floor = _unary(Opcode.FLOOR, "floor")
imag = _unary(Opcode.IMAG, "imag")
is_finite = _unary(Opcode.IS_FINITE, "is_finite")
log = _unary(Opcode.LOG, "log")
log1p = _unary(Opcode.LOG1P, "log1p")
logistic = _unary(Opcode.LOGISTIC, "logistic")
neg = _unary(Opcode.NEGATE, "neg")
bitwise_not = _unary(Opcode.NOT, "not")
population_count = _unary(Opcode.POPCNT, "population_count")
real = _unary(Opcode.REAL, "real")
round_nearest_afz = _unary(Opcode.ROUND_NEAREST_AFZ, "round")
round_nearest_even = _unary(Opcode.ROUND_NEAREST_EVEN, "round_nearest_even")
rsqrt = _unary(Opcode.RSQRT, "rsqrt")
sign = _unary(Opcode.SIGN, "sign")
sin = _unary(Opcode.SIN, "sin")
sinh = _unary(Opcode.SINH, "sinh")
sqrt = _unary(Opcode.SQRT, "sqrt")
tan = _unary(Opcode.TAN, "tan")
tanh = _unary(Opcode.TANH, "tanh")

add = _binary(Opcode.ADD, "add")
atan2 = _binary(Opcode.ATAN2, "atan2")
bitwise_and = _binary(Opcode.AND, "and")
bitwise_or = _binary(Opcode.OR, "or")
bitwise_xor = _binary(Opcode.XOR, "xor")
div = _binary(Opcode.DIVIDE, "div")
max = _binary(Opcode.MAXIMUM, "max")  # noqa: A001
min = _binary(Opcode.MINIMUM, "min")  # noqa: A001
mul = _binary(Opcode.MULTIPLY, "mul")
pow = _binary(Opcode.POWER, "pow")  # noqa: A001
rem = _binary(Opcode.REMAINDER, "rem")
shift_left = _binary(Opcode.SHIFT_LEFT, "shift_left")
shift_right_arithmetic = _binary(Opcode.SHIFT_RIGHT_ARITHMETIC, "shift_right_arithmetic")
shift_right_logical = _binary(Opcode.SHIFT_RIGHT_LOGICAL, "shift_right_logical")
sub = _binary(Opcode.SUBTRACT, "sub")

# JAX's spellings of the logical ops
bitwise_and.__doc__ = "Elementwise and (logical for bool)."
and_, or_, xor, not_ = bitwise_and, bitwise_or, bitwise_xor, bitwise_not


def round(x, rounding_method: str = "away_from_zero"):  # noqa: A001
    """Round to integral values: 'away_from_zero' (default) or 'to_nearest_even'."""
    if rounding_method in ("to_nearest_even", 1):
        return round_nearest_even(x)
    return round_nearest_afz(x)


def complex(x, y):  # noqa: A001
    """`x + i y` from two real arrays of one dtype (f32 -> c64, f64 -> c128)."""
    x, y = _coerce(x, y)
    return bind(Opcode.COMPLEX, [x, y], weak_type=False, name="complex")


def _compare(direction: ComparisonDirection, name: str):
    def op(x, y):
        x, y = _coerce(x, y)
        return bind(Opcode.COMPARE, [x, y], {"direction": direction}, weak_type=False, name=name)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise comparison {direction.value}, giving bool."
    return op


eq = _compare(ComparisonDirection.EQ, "eq")
ne = _compare(ComparisonDirection.NE, "ne")
lt = _compare(ComparisonDirection.LT, "lt")
le = _compare(ComparisonDirection.LE, "le")
gt = _compare(ComparisonDirection.GT, "gt")
ge = _compare(ComparisonDirection.GE, "ge")


def select(pred, on_true, on_false):
    """`on_true` where `pred`, else `on_false` (pred is bool of the same shape)."""
    on_true, on_false = _coerce(on_true, on_false)
    pred = as_array(pred)
    if pred.shape != on_true.shape and not pred.shape:
        pred = broadcast_in_dim(pred, on_true.shape, ())
    elif pred.shape != on_true.shape and not on_true.shape:  # scalar branches, shaped pred
        on_true = broadcast_in_dim(on_true, pred.shape, ())
        on_false = broadcast_in_dim(on_false, pred.shape, ())
    return bind(Opcode.SELECT, [pred, on_true, on_false],
                weak_type=on_true.weak_type and on_false.weak_type, name="select")


def clamp(lo, x, hi):
    """`min(max(x, lo), hi)`; lo and hi may be scalars."""
    x = as_array(x)
    lo, hi = as_array(lo), as_array(hi)
    lo = convert_element_type(lo, x.dtype) if lo.weak_type else lo
    hi = convert_element_type(hi, x.dtype) if hi.weak_type else hi
    return bind(Opcode.CLAMP, [lo, x, hi], weak_type=x.weak_type, name="clamp")


def convert_element_type(x, new_dtype):
    """`x` converted to `new_dtype` with XLA's conversion semantics (saturating
    float -> int, round to nearest even, NaN -> 0)."""
    return convert(as_array(x), new_dtype)


def bitcast_convert_type(x, new_dtype):
    """Reinterpret the bits of `x` as `new_dtype`; a narrower type adds a minor
    dimension, a wider one consumes the minor dimension."""
    x = as_array(x)
    new_dtype = np.dtype(new_dtype)
    old, new = x.dtype.itemsize, new_dtype.itemsize
    if old == new:
        dims = x.shape
    elif old > new:
        dims = (*x.shape, old // new)
    else:
        if not x.shape or x.shape[-1] != new // old:
            raise TypeError(f"bitcast_convert_type from {x.dtype} to {new_dtype} needs a minor "
                            f"dimension of {new // old}, got shape {list(x.shape)}")
        dims = x.shape[:-1]
    shape = Shape.array(element_type(new_dtype), dims)
    return bind(Opcode.BITCAST_CONVERT, [x], shape=shape, weak_type=False,
                name="bitcast_convert_type")


def reduce_precision(x, exponent_bits: int, mantissa_bits: int):
    """Round `x` to a float format with the given exponent and mantissa bits."""
    x = as_array(x)
    return bind(Opcode.REDUCE_PRECISION, [x],
                {"exponent_bits": int(exponent_bits), "mantissa_bits": int(mantissa_bits)},
                name="reduce_precision")


def broadcast_in_dim(x, shape, broadcast_dimensions):
    """`x` broadcast to `shape`; operand dim i becomes result dim broadcast_dimensions[i]."""
    x = as_array(x)
    shape = tuple(int(d) for d in shape)
    dims = tuple(int(d) for d in broadcast_dimensions)
    if x.shape == shape and dims == tuple(range(len(shape))):
        return x
    result = Shape.array(element_type(x.dtype), shape)
    return bind(Opcode.BROADCAST, [x], {"dimensions": dims}, shape=result,
                weak_type=x.weak_type, name="broadcast_in_dim")


def iota(dtype, size: int):
    """[0, 1, ..., size-1] of `dtype`."""
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype, shape, dimension: int):
    """An array of `shape` whose values count along `dimension`."""
    result = Shape.array(element_type(dtype), tuple(int(d) for d in shape))
    return bind(Opcode.IOTA, [], {"iota_dimension": int(dimension)}, shape=result,
                weak_type=False, name="iota")


__all__ = [n for n in dir() if not n.startswith("_") and n not in {
    "annotations", "builtins", "np", "Array", "as_array", "bind", "element_type", "with_weak_type",
    "ComparisonDirection", "Opcode", "Shape"}]
