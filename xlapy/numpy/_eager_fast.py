"""Eager shortcuts: `+ - * /` on float32/float64 and int32/int64 arrays, and
basic indexing of concrete arrays.

Outside any trace, an xnp op is evaluated at once: promotion, broadcasting,
`bind`, then the interpreter's rule — some 15-50 µs of Python for a tiny
array. For these four ops on these types NumPy's own ufunc computes exactly
what XLA does (IEEE-rounded float arithmetic, wrapping two's-complement
integers), so when no trace is active, both operands are already arrays of
one such dtype (or one is a Python number that takes the array's dtype, as a
weak type does) the shortcut calls the ufunc directly. Anything else —
tracing, other dtypes, mixed dtypes, bools, integer division — returns None
and takes the general path.

`x[i, j:k, None, ...]` of a concrete array (ints in bounds, slices of ints)
is NumPy's view of its value, in lazy mode too: it is data movement whose
result the general path would compute the same, and a slice start that
changes every step (a minibatch loop's `X[j:j + B]`) recorded instead would
make every step a new program (a compile per batch offset).
"""

from __future__ import annotations

import numpy as np

from xlapy.core import lazy
from xlapy.core.array import ConcreteArray
from xlapy.core.trace import current_trace

_FAST = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))
_FLOATS = frozenset(np.dtype(t) for t in (np.float32, np.float64))


def binary(ufunc, x, y, floats_only: bool = False):
    """`ufunc(x, y)` as a ConcreteArray, or None when the shortcut does not apply."""
    tx, ty = type(x), type(y)
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
    if dtype not in (_FLOATS if floats_only else _FAST) or current_trace() is not None or \
            lazy.active():
        return None
    with np.errstate(all="ignore"):
        return ConcreteArray(np.asarray(ufunc(xv, yv)), weak)   # 0-d results are scalars


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


def basic_index(x, index):
    """`x[index]` as a ConcreteArray viewing `x`'s value, or None where the index is
    not ints, slices of ints, None and Ellipsis (or an int is out of bounds: the
    general path clamps it, as JAX does, where NumPy raises)."""
    if type(x) is not ConcreteArray or x._value is None or current_trace() is not None:
        return None
    entries = index if type(index) is tuple else (index,)
    for entry in entries:
        kind = type(entry)
        if kind is slice:
            if not all(type(v) is int or v is None for v in (entry.start, entry.stop, entry.step)):
                return None
        elif kind is not int and entry is not None and entry is not Ellipsis:
            return None
    try:
        return ConcreteArray(np.asarray(x._value[index]), x.weak_type)
    except IndexError:
        return None
