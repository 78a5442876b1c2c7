"""`xlapy.Array`: the array users hold, concrete or traced.

Both kinds share this class's operators and methods, which forward to
`xlapy.numpy`, so user code reads the same in eager mode and under `jit`.
`ConcreteArray` holds a NumPy value; `Tracer` (in trace.py) stands for a
value being traced into HLO.
"""

from __future__ import annotations

import numpy as np

from xlapy.core import pytree
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.shape import Shape

_numpy = None
"""The module behind Array's operators and methods: `xlapy.numpy`, which sits
above core, installs itself when imported (as JAX's numpy layer sets the
methods of its arrays)."""


def install_methods(module) -> None:
    """Make `module` (xlapy.numpy) the implementation of Array's operators."""
    global _numpy
    _numpy = module


def _xnp():
    if _numpy is None:
        raise RuntimeError("Array's operators are xlapy.numpy's: import xlapy first")
    return _numpy


class Array:
    """An n-dimensional array; `weak_type` marks values born of Python scalars."""

    __slots__ = ()
    __array_priority__ = 100  # NumPy defers its operators to ours
    __hash__ = None

    # subclasses define: shape, dtype, weak_type
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def hlo_shape(self) -> Shape:
        return Shape.array(PrimitiveType.from_numpy(self.dtype), self.shape)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    # -- operators --------------------------------------------------------------------
    def __add__(self, other): return _xnp().add(self, other)
    def __radd__(self, other): return _xnp().add(other, self)
    def __sub__(self, other): return _xnp().subtract(self, other)
    def __rsub__(self, other): return _xnp().subtract(other, self)
    def __mul__(self, other): return _xnp().multiply(self, other)
    def __rmul__(self, other): return _xnp().multiply(other, self)
    def __truediv__(self, other): return _xnp().true_divide(self, other)
    def __rtruediv__(self, other): return _xnp().true_divide(other, self)
    def __floordiv__(self, other): return _xnp().floor_divide(self, other)
    def __rfloordiv__(self, other): return _xnp().floor_divide(other, self)
    def __mod__(self, other): return _xnp().remainder(self, other)
    def __rmod__(self, other): return _xnp().remainder(other, self)
    def __divmod__(self, other): return _xnp().divmod(self, other)
    def __pow__(self, other): return _xnp().power(self, other)
    def __rpow__(self, other): return _xnp().power(other, self)
    def __matmul__(self, other): return _xnp().matmul(self, other)
    def __rmatmul__(self, other): return _xnp().matmul(other, self)
    def __and__(self, other): return _xnp().bitwise_and(self, other)
    def __rand__(self, other): return _xnp().bitwise_and(other, self)
    def __or__(self, other): return _xnp().bitwise_or(self, other)
    def __ror__(self, other): return _xnp().bitwise_or(other, self)
    def __xor__(self, other): return _xnp().bitwise_xor(self, other)
    def __rxor__(self, other): return _xnp().bitwise_xor(other, self)
    def __lshift__(self, other): return _xnp().left_shift(self, other)
    def __rlshift__(self, other): return _xnp().left_shift(other, self)
    def __rshift__(self, other): return _xnp().right_shift(self, other)
    def __rrshift__(self, other): return _xnp().right_shift(other, self)
    def __eq__(self, other): return _xnp().equal(self, other)  # noqa: E704
    def __ne__(self, other): return _xnp().not_equal(self, other)
    def __lt__(self, other): return _xnp().less(self, other)
    def __le__(self, other): return _xnp().less_equal(self, other)
    def __gt__(self, other): return _xnp().greater(self, other)
    def __ge__(self, other): return _xnp().greater_equal(self, other)
    def __neg__(self): return _xnp().negative(self)
    def __pos__(self): return _xnp().positive(self)
    def __abs__(self): return _xnp().abs(self)
    def __invert__(self): return _xnp().invert(self)
    def __getitem__(self, index): return _xnp().getitem(self, index)

    # -- methods ----------------------------------------------------------------------
    @property
    def T(self):  # noqa: N802 - NumPy's name
        return _xnp().transpose(self)

    @property
    def mT(self):  # noqa: N802 - NumPy's name
        return _xnp().matrix_transpose(self)

    @property
    def real(self): return _xnp().real(self)
    @property
    def imag(self): return _xnp().imag(self)

    @property
    def at(self):
        """JAX's functional updates: `x.at[idx].set(v)`, `.add`, `.mul`, `.min`, `.max`, `.get`."""
        return _xnp().IndexUpdateHelper(self)

    def astype(self, dtype): return _xnp().astype(self, dtype)
    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _xnp().reshape(self, shape, order=order)
    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return _xnp().transpose(self, axes or None)
    def swapaxes(self, a, b): return _xnp().swapaxes(self, a, b)
    def flatten(self, order="C"): return _xnp().ravel(self, order=order)
    def ravel(self, order="C"): return _xnp().ravel(self, order=order)
    def squeeze(self, axis=None): return _xnp().squeeze(self, axis)
    def sum(self, axis=None, dtype=None, keepdims=False, where=None):
        return _xnp().sum(self, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    def prod(self, axis=None, dtype=None, keepdims=False, where=None):
        return _xnp().prod(self, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    def mean(self, axis=None, dtype=None, keepdims=False, where=None):
        return _xnp().mean(self, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    def var(self, axis=None, ddof=0, keepdims=False):
        return _xnp().var(self, axis=axis, ddof=ddof, keepdims=keepdims)
    def std(self, axis=None, ddof=0, keepdims=False):
        return _xnp().std(self, axis=axis, ddof=ddof, keepdims=keepdims)
    def max(self, axis=None, keepdims=False): return _xnp().max(self, axis=axis, keepdims=keepdims)
    def min(self, axis=None, keepdims=False): return _xnp().min(self, axis=axis, keepdims=keepdims)
    def all(self, axis=None, keepdims=False): return _xnp().all(self, axis=axis, keepdims=keepdims)
    def any(self, axis=None, keepdims=False): return _xnp().any(self, axis=axis, keepdims=keepdims)
    def argmax(self, axis=None, keepdims=False): return _xnp().argmax(self, axis, keepdims=keepdims)
    def argmin(self, axis=None, keepdims=False): return _xnp().argmin(self, axis, keepdims=keepdims)
    def cumsum(self, axis=None, dtype=None): return _xnp().cumsum(self, axis, dtype=dtype)
    def clip(self, min=None, max=None): return _xnp().clip(self, min, max)  # noqa: A002
    def round(self, decimals=0): return _xnp().round(self, decimals)
    def conj(self): return _xnp().conjugate(self)
    def conjugate(self): return _xnp().conjugate(self)
    def dot(self, other): return _xnp().dot(self, other)
    def sort(self, axis=-1, *, stable=True, descending=False, kind=None, order=None):
        return _xnp().sort(self, axis, stable=stable, descending=descending, kind=kind,
                           order=order)
    def argsort(self, axis=-1, *, stable=True, descending=False, kind=None, order=None):
        return _xnp().argsort(self, axis, stable=stable, descending=descending, kind=kind,
                              order=order)
    def take(self, indices, axis=None, mode=None): return _xnp().take(self, indices, axis,
                                                                      mode=mode)
    def repeat(self, repeats, axis=None): return _xnp().repeat(self, repeats, axis)
    def diagonal(self, offset=0, axis1=0, axis2=1):
        return _xnp().diagonal(self, offset, axis1, axis2)
    def trace(self, offset=0, axis1=0, axis2=1): return _xnp().trace(self, offset, axis1, axis2)
    def nonzero(self, *, size=None): return _xnp().nonzero(self, size=size)
    def searchsorted(self, v, side="left"): return _xnp().searchsorted(self, v, side=side)
    def cumprod(self, axis=None, dtype=None): return _xnp().cumprod(self, axis, dtype=dtype)
    def copy(self): return _xnp().array(self, copy=True)
    def item(self, *index): return np.asarray(self).item(*index)
    def tolist(self): return np.asarray(self).tolist()

    def __bool__(self) -> bool: return bool(self._concrete("bool()"))
    def __int__(self) -> int: return int(self._concrete("int()"))
    def __float__(self) -> float: return float(self._concrete("float()"))
    def __complex__(self) -> complex: return complex(self._concrete("complex()"))
    def __index__(self) -> int:
        value = self._concrete("use as an index")
        if value.dtype.kind not in "iub":
            raise TypeError(f"only integer arrays can be used as an index, not {value.dtype}")
        return int(value)

    def _concrete(self, why: str) -> np.ndarray:
        raise NotImplementedError


class ConcreteArray(Array):
    """An array with a value, living in host memory as a NumPy array."""

    __slots__ = ("_value", "weak_type")

    def __init__(self, value: np.ndarray, weak_type: bool = False):
        self._value = value
        self.weak_type = weak_type

    @property
    def value(self) -> np.ndarray:
        if self._value is None:
            raise RuntimeError("this array was donated to a jit call and deleted; "
                               "its buffer may now hold the call's result")
        return self._value

    @property
    def shape(self) -> tuple[int, ...]:
        return self.value.shape

    @property
    def dtype(self) -> np.dtype:
        return self.value.dtype

    def delete(self) -> None:
        self._value = None

    def is_deleted(self) -> bool:
        return self._value is None

    def _concrete(self, why: str) -> np.ndarray:
        return self.value

    def __array__(self, dtype=None, copy=None):
        """The value for NumPy: read-only unless copied, because xlapy arrays are
        immutable (as in JAX)."""
        value = self.value
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return value.astype(dtype)
        if copy:
            return value.copy()
        view = value.view()
        view.flags.writeable = False
        return view

    def __repr__(self) -> str:
        body = np.array2string(self.value, separator=", ", prefix="Array(")
        weak = ", weak_type=True" if self.weak_type else ""
        return f"Array({body}, dtype={self.dtype}{weak})"

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(self.value.item() if not self.shape else self.value, spec)

    def __dlpack__(self, *args, **kwargs):
        return self.value.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self.value.__dlpack_device__()


def _register_leaf() -> None:
    pytree.LEAF_TYPES.add(ConcreteArray)


_register_leaf()
