"""The eager shortcut for `+ - * /` on float32/float64 and int32/int64 arrays.

Outside any trace, an xnp op is evaluated at once: promotion, broadcasting,
`bind`, then the interpreter's rule — some 15-50 µs of Python for a tiny
array. For these four ops on these types NumPy's own ufunc computes exactly
what XLA does (IEEE-rounded float arithmetic, wrapping two's-complement
integers), so when no trace is active, both operands are already arrays of
one such dtype (or one is a Python number that takes the array's dtype, as a
weak type does) the shortcut calls the ufunc directly. Anything else —
tracing, other dtypes, mixed dtypes, bools, integer division — returns None
and takes the general path.

In lazy mode the same cases, on operands of one shape (or an array and a
number), are recorded as the HLO op at once (and a broadcast of the number),
skipping promotion and broadcasting: the step a lazy loop records each
iteration is mostly such ops.
"""

from __future__ import annotations

import numpy as np

from xlapy.core import lazy
from xlapy.core.array import ConcreteArray
from xlapy.core.lazy import LazyArray
from xlapy.core.trace import bind, current_trace, element_type
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

_FAST = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))
_FLOATS = frozenset(np.dtype(t) for t in (np.float32, np.float64))


def binary(ufunc, x, y, floats_only: bool = False):
    """`ufunc(x, y)` as a ConcreteArray, or None when the shortcut does not apply."""
    tx, ty = type(x), type(y)
    if tx is LazyArray or ty is LazyArray:
        return _lazy(ufunc, x, y, floats_only)
    if tx is ConcreteArray:
        xv = x._value
        if xv is None:
            return None
        dtype, weak = xv.dtype, x.weak_type
        if ty is ConcreteArray:
            yv = y._value
            if yv is None or yv.dtype != dtype:
                return None
            weak = weak and y.weak_type
        elif ty is float or ty is int:
            yv = _scalar(y, dtype)
            if yv is None:
                return None
        else:
            return None
    elif ty is ConcreteArray and (tx is float or tx is int):
        yv = y._value
        if yv is None:
            return None
        dtype, weak = yv.dtype, y.weak_type
        xv = _scalar(x, dtype)
        if xv is None:
            return None
    else:
        return None
    if dtype not in (_FLOATS if floats_only else _FAST) or current_trace() is not None:
        return None
    if lazy.active():
        return _lazy(ufunc, x, y, floats_only)
    with np.errstate(all="ignore"):
        return ConcreteArray(np.asarray(ufunc(xv, yv)), weak)   # 0-d results are scalars


_OPCODES = {np.add: Opcode.ADD, np.subtract: Opcode.SUBTRACT, np.multiply: Opcode.MULTIPLY,
            np.divide: Opcode.DIVIDE}
_ARRAYS = (ConcreteArray, LazyArray)


def _lazy(ufunc, x, y, floats_only: bool):
    """The recorded op, when at least one operand is pending and lazy mode is on."""
    if current_trace() is not None or not lazy.active():
        return None
    tx, ty = type(x), type(y)
    if tx in _ARRAYS and ty in _ARRAYS:
        dtype = x.dtype
        if y.dtype != dtype:
            return None
        weak = x.weak_type and y.weak_type
        if x.shape != y.shape:
            try:
                shape = np.broadcast_shapes(x.shape, y.shape)
            except ValueError:
                return None   # (the general path says what does not fit)
            x, y = _lazy_broadcast(x, shape), _lazy_broadcast(y, shape)
    elif tx in _ARRAYS and (ty is float or ty is int):
        dtype, weak = x.dtype, x.weak_type
        y = _lazy_scalar(y, dtype, x.shape)
    elif ty in _ARRAYS and (tx is float or tx is int):
        dtype, weak = y.dtype, y.weak_type
        x = _lazy_scalar(x, dtype, y.shape)
    else:
        return None
    if x is None or y is None or dtype not in (_FLOATS if floats_only else _FAST):
        return None
    return bind(_OPCODES[ufunc], [x, y], weak_type=weak)


def _lazy_broadcast(x, shape: tuple):
    """`x` broadcast to `shape` as NumPy does: a reshape dropping the size-1
    dimensions that stretch, then an HLO broadcast (what `broadcast_to` records)."""
    if x.shape == shape:
        return x
    lead = len(shape) - len(x.shape)
    keep = [i for i, d in enumerate(x.shape) if d == shape[lead + i]]
    kind = element_type(x.dtype)
    if len(keep) != len(x.shape):
        x = bind(Opcode.RESHAPE, [x], shape=Shape.array(kind, tuple(x.shape[i] for i in keep)),
                 weak_type=x.weak_type)
    return bind(Opcode.BROADCAST, [x], {"dimensions": tuple(lead + i for i in keep)},
                shape=Shape.array(kind, shape), weak_type=x.weak_type)


def _lazy_scalar(value, dtype: np.dtype, shape):
    scalar = _scalar(value, dtype)
    if scalar is None:
        return None
    scalar = ConcreteArray(scalar, True)
    if not shape:
        return scalar
    return bind(Opcode.BROADCAST, [scalar], {"dimensions": ()},
                shape=Shape.array(element_type(dtype), tuple(shape)), weak_type=True)


def _scalar(value, dtype: np.dtype):
    """A Python number as a 0-d array of `dtype`, when a weak scalar of its kind
    takes that dtype (a float does not make an integer array float here: that
    promotion is the general path's) and fits it."""
    if type(value) is float and dtype.kind != "f":
        return None
    try:
        return np.array(value, dtype)
    except OverflowError:
        return None
