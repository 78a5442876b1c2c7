"""`xnp`'s dtype vocabulary: scalar type constructors, dtype queries, constants.

`xnp.float32` is both a dtype (`np.dtype(xnp.float32)`, `dtype=xnp.float32`)
and a constructor giving a strongly typed 0-d array, as `jnp.float32` is:
`xnp.float16(1) + 1.0` stays float16. Queries (`result_type`,
`promote_types`, `issubdtype`...) follow JAX, which knows bfloat16 is a
float where NumPy does not.
"""

from __future__ import annotations

import builtins

import ml_dtypes
import numpy as np

from xlapy.core import dtypes
from xlapy.core.trace import Array, as_array


class _ScalarMeta(type):
    """The metaclass of the scalar type constructors."""

    dtype: np.dtype

    @property
    def __numpy_dtype__(cls) -> np.dtype:  # NumPy >= 2.4's protocol
        return cls.dtype

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __eq__(cls, other) -> bool:
        return cls is other or cls.dtype.type == other or cls.dtype == other

    def __ne__(cls, other) -> bool:
        return not cls == other

    def __call__(cls, x) -> Array:
        return as_array(_unwrap(x), dtypes.canonicalize_user_dtype(cls.dtype, "asarray"))

    def __instancecheck__(cls, instance) -> bool:
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls) -> str:
        return f"<class 'xlapy.numpy.{cls.__name__}'>"


def _unwrap(x):
    return x if isinstance(x, Array) or not hasattr(x, "__array__") else np.asarray(x)


def _scalar_type(name: str, dtype: np.dtype) -> _ScalarMeta:
    doc = (f"The {dtype.name} scalar type: a dtype, and a constructor of strongly typed "
           f"{dtype.name} arrays.")
    return _ScalarMeta(name, (object,), {"dtype": np.dtype(dtype), "__doc__": doc,
                                         "__module__": "xlapy.numpy"})


bool_ = _scalar_type("bool_", dtypes.bool_)
int8 = _scalar_type("int8", dtypes.int8)
int16 = _scalar_type("int16", dtypes.int16)
int32 = _scalar_type("int32", dtypes.int32)
int64 = _scalar_type("int64", dtypes.int64)
uint8 = _scalar_type("uint8", dtypes.uint8)
uint16 = _scalar_type("uint16", dtypes.uint16)
uint32 = _scalar_type("uint32", dtypes.uint32)
uint64 = _scalar_type("uint64", dtypes.uint64)
float16 = _scalar_type("float16", dtypes.float16)
bfloat16 = _scalar_type("bfloat16", dtypes.bfloat16)
float32 = _scalar_type("float32", dtypes.float32)
float64 = _scalar_type("float64", dtypes.float64)
complex64 = _scalar_type("complex64", dtypes.complex64)
complex128 = _scalar_type("complex128", dtypes.complex128)
float8_e4m3fn = _scalar_type("float8_e4m3fn", np.dtype(ml_dtypes.float8_e4m3fn))
float8_e5m2 = _scalar_type("float8_e5m2", np.dtype(ml_dtypes.float8_e5m2))
# NumPy's names for the 64-bit types, as in jax.numpy: without x64, asking for
# them truncates to 32 bits with a warning, like asking for float64.
int_ = _scalar_type("int_", dtypes.int64)
uint = _scalar_type("uint", dtypes.uint64)
float_ = _scalar_type("float_", dtypes.float64)
complex_ = _scalar_type("complex_", dtypes.complex128)
single, double = float32, float64
csingle, cdouble = complex64, complex128
half = float16

# The abstract hierarchy, for issubdtype.
generic, number, inexact, floating = np.generic, np.number, np.inexact, np.floating
complexfloating, integer = np.complexfloating, np.integer
signedinteger, unsignedinteger = np.signedinteger, np.unsignedinteger
character, flexible = np.character, np.flexible

dtype = np.dtype
inf, nan, pi, e, euler_gamma = np.inf, np.nan, np.pi, np.e, np.euler_gamma
newaxis = None

_ML_FLOATS = {np.dtype(t) for t in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
                                    ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3b11fnuz,
                                    ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2fnuz)}


def _dtype_of(x) -> np.dtype:
    """The dtype an argument denotes: a dtype-like, or an array's dtype."""
    if isinstance(x, (Array, np.ndarray, np.generic)):
        return np.dtype(x.dtype)
    if isinstance(x, builtins.bool):
        return dtypes.bool_
    if isinstance(x, (int, float, complex)):
        return dtypes.dtype_and_weak(x)[0]
    if x is int:
        return dtypes.default_int()
    if x is float:
        return dtypes.default_float()
    if x is complex:
        return dtypes.default_complex()
    return np.dtype(x)


def result_type(*args) -> np.dtype:
    """The dtype `args` (arrays, scalars, dtypes) promote to under JAX's rules;
    a result made only of weak scalars is the default type of its kind."""
    return dtypes.result_type(*(_typed(a) for a in args))


def _typed(x):
    if x is int or x is float or x is complex:
        return x(0)  # Python types act as weak scalars, as in JAX
    if isinstance(x, _ScalarMeta):
        x = x.dtype
    if isinstance(x, (str, type, np.dtype)):  # a dtype asked for: truncated with a warning
        return dtypes.canonicalize_user_dtype(x, "dtype")
    return x


def promote_types(a, b) -> np.dtype:
    """The dtype two (strong) dtypes promote to under JAX's lattice (which,
    unlike NumPy's, never widens int32 + float32 to float64)."""
    return dtypes.promote_types((_dtype_of(a), False), (_dtype_of(b), False))[0]


def issubdtype(arg1, arg2) -> bool:
    """NumPy's `issubdtype`, knowing bfloat16 and the float8 types are floats."""
    a = _dtype_of(arg1)
    if isinstance(arg2, type) and issubclass(arg2, np.generic) and arg2 in _ABSTRACT:
        if a in _ML_FLOATS:
            return arg2 in (np.floating, np.inexact, np.number, np.generic)
        return np.issubdtype(a, arg2)
    return a == _dtype_of(arg2)


_ABSTRACT = (np.generic, np.number, np.inexact, np.floating, np.complexfloating, np.integer,
             np.signedinteger, np.unsignedinteger, np.character, np.flexible, np.bool_)

_KINDS = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": dtypes.is_float,
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iuc" or dtypes.is_float(d),
}


def isdtype(dtype, kind) -> bool:
    """The array API's `isdtype`: is `dtype` of `kind` (a kind name such as
    'real floating', a dtype, or a tuple of those)."""
    d = np.dtype(dtype)
    if isinstance(kind, tuple):
        return builtins.any(isdtype(d, k) for k in kind)
    if isinstance(kind, str) and kind in _KINDS:
        return builtins.bool(_KINDS[kind](d))
    if isinstance(kind, str):
        raise ValueError(f"unknown dtype kind {kind!r}; expected one of {sorted(_KINDS)}")
    return d == np.dtype(kind)


def can_cast(from_, to, casting: str = "safe") -> bool:
    """NumPy's `can_cast` on dtypes (arrays stand for their dtype)."""
    return builtins.bool(np.can_cast(_dtype_of(from_), _dtype_of(to), casting=casting))


def finfo(dtype) -> ml_dtypes.finfo:
    """Machine limits of a float dtype (bf16 and f8 included; complex gives its
    component's)."""
    d = _dtype_of(dtype)
    if d.kind == "c":
        d = np.dtype(np.float32 if d.itemsize == 8 else np.float64)
    return ml_dtypes.finfo(d)


def iinfo(dtype) -> ml_dtypes.iinfo:
    """Machine limits of an integer dtype."""
    return ml_dtypes.iinfo(_dtype_of(dtype))


bool = bool_  # noqa: A001 - jnp.bool, NumPy 2's name

__all__ = [
    "bfloat16", "bool", "bool_", "can_cast", "cdouble", "character", "complex128", "complex64",
    "complex_", "complexfloating", "csingle", "double", "dtype", "e", "euler_gamma", "finfo",
    "flexible", "float16", "float32", "float64", "float8_e4m3fn", "float8_e5m2", "float_",
    "floating", "generic", "half", "iinfo", "inexact", "inf", "int16", "int32", "int64", "int8",
    "int_", "integer", "isdtype", "issubdtype", "nan", "newaxis", "number", "pi",
    "promote_types", "result_type", "signedinteger", "single", "uint", "uint16", "uint32",
    "uint64", "uint8", "unsignedinteger",
]
