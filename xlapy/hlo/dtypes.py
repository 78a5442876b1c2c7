"""Element types (XLA's PrimitiveType) and their NumPy counterparts.

The enum value is the lowercase spelling of XLA's text format. Narrow floats
(bf16, the f8/f6/f4 family) and sub-byte integers come from `ml_dtypes`, the
same package JAX uses, so NumPy arrays of every HLO type exist.
"""

from __future__ import annotations

import enum

import ml_dtypes
import numpy as np


class PrimitiveType(enum.Enum):
    """An HLO element type; `value` is its text spelling."""

    PRED = "pred"
    S1 = "s1"
    S2 = "s2"
    S4 = "s4"
    S8 = "s8"
    S16 = "s16"
    S32 = "s32"
    S64 = "s64"
    U1 = "u1"
    U2 = "u2"
    U4 = "u4"
    U8 = "u8"
    U16 = "u16"
    U32 = "u32"
    U64 = "u64"
    F16 = "f16"
    BF16 = "bf16"
    F32 = "f32"
    F64 = "f64"
    F8E5M2 = "f8e5m2"
    F8E4M3 = "f8e4m3"
    F8E4M3FN = "f8e4m3fn"
    F8E4M3B11FNUZ = "f8e4m3b11fnuz"
    F8E3M4 = "f8e3m4"
    F8E5M2FNUZ = "f8e5m2fnuz"
    F8E4M3FNUZ = "f8e4m3fnuz"
    F8E8M0FNU = "f8e8m0fnu"
    F4E2M1FN = "f4e2m1fn"
    F6E2M3FN = "f6e2m3fn"
    F6E3M2FN = "f6e3m2fn"
    C64 = "c64"
    C128 = "c128"
    TUPLE = "tuple"
    TOKEN = "token"
    OPAQUE = "opaque"

    __hash__ = object.__hash__  # singletons: identity hash at C speed

    @classmethod
    def from_text(cls, text: str) -> PrimitiveType:
        """The type spelled `text`; raises KeyError for an unknown spelling."""
        return _BY_TEXT[text]

    @classmethod
    def from_numpy(cls, dtype) -> PrimitiveType:
        """The HLO type of a NumPy dtype (or anything np.dtype accepts)."""
        try:
            return _FROM_NUMPY[np.dtype(dtype)]
        except KeyError:
            raise TypeError(f"no HLO element type for NumPy dtype {np.dtype(dtype)}") from None

    @property
    def numpy(self) -> np.dtype:
        """The NumPy dtype that holds this type's values."""
        try:
            return _TO_NUMPY[self]
        except KeyError:
            raise TypeError(f"{self.value} has no NumPy dtype") from None

    @property
    def is_array_type(self) -> bool:
        return self not in (PrimitiveType.TUPLE, PrimitiveType.TOKEN, PrimitiveType.OPAQUE)

    @property
    def is_pred(self) -> bool:
        return self is PrimitiveType.PRED

    @property
    def is_signed_int(self) -> bool:
        return self in _SIGNED

    @property
    def is_unsigned_int(self) -> bool:
        return self in _UNSIGNED

    @property
    def is_integral(self) -> bool:
        """Signed or unsigned integers (not pred)."""
        return self in _SIGNED or self in _UNSIGNED

    @property
    def is_float(self) -> bool:
        """Real floating point, narrow floats included."""
        return self in _FLOATS

    @property
    def is_complex(self) -> bool:
        return self in (PrimitiveType.C64, PrimitiveType.C128)

    @property
    def is_floating_or_complex(self) -> bool:
        return self.is_float or self.is_complex

    @property
    def bit_width(self) -> int:
        """Bits per element (pred counts as 8, as XLA stores it)."""
        if self is PrimitiveType.PRED:
            return 8
        if self in _SUB_BYTE:
            return _SUB_BYTE[self]
        return self.numpy.itemsize * 8

    @property
    def byte_size(self) -> int:
        """Bytes per element in a dense buffer (sub-byte types take one byte each)."""
        return max(1, self.bit_width // 8)

    @property
    def component_type(self) -> PrimitiveType:
        """The real type of a complex type's parts; itself otherwise."""
        return {PrimitiveType.C64: PrimitiveType.F32,
                PrimitiveType.C128: PrimitiveType.F64}.get(self, self)

    def __str__(self) -> str:
        return self.value


P = PrimitiveType
_BY_TEXT = {t.value: t for t in PrimitiveType}
_SIGNED = frozenset({P.S1, P.S2, P.S4, P.S8, P.S16, P.S32, P.S64})
_UNSIGNED = frozenset({P.U1, P.U2, P.U4, P.U8, P.U16, P.U32, P.U64})
_FLOATS = frozenset({
    P.F16, P.BF16, P.F32, P.F64, P.F8E5M2, P.F8E4M3, P.F8E4M3FN, P.F8E4M3B11FNUZ,
    P.F8E3M4, P.F8E5M2FNUZ, P.F8E4M3FNUZ, P.F8E8M0FNU, P.F4E2M1FN, P.F6E2M3FN, P.F6E3M2FN,
})
_SUB_BYTE = {P.S1: 1, P.U1: 1, P.S2: 2, P.U2: 2, P.S4: 4, P.U4: 4, P.F4E2M1FN: 4,
             P.F6E2M3FN: 6, P.F6E3M2FN: 6}
_TO_NUMPY = {
    P.PRED: np.dtype(np.bool_),
    P.S1: np.dtype(ml_dtypes.int1), P.S2: np.dtype(ml_dtypes.int2),
    P.S4: np.dtype(ml_dtypes.int4), P.S8: np.dtype(np.int8), P.S16: np.dtype(np.int16),
    P.S32: np.dtype(np.int32), P.S64: np.dtype(np.int64),
    P.U1: np.dtype(ml_dtypes.uint1), P.U2: np.dtype(ml_dtypes.uint2),
    P.U4: np.dtype(ml_dtypes.uint4), P.U8: np.dtype(np.uint8), P.U16: np.dtype(np.uint16),
    P.U32: np.dtype(np.uint32), P.U64: np.dtype(np.uint64),
    P.F16: np.dtype(np.float16), P.BF16: np.dtype(ml_dtypes.bfloat16),
    P.F32: np.dtype(np.float32), P.F64: np.dtype(np.float64),
    P.F8E5M2: np.dtype(ml_dtypes.float8_e5m2), P.F8E4M3: np.dtype(ml_dtypes.float8_e4m3),
    P.F8E4M3FN: np.dtype(ml_dtypes.float8_e4m3fn),
    P.F8E4M3B11FNUZ: np.dtype(ml_dtypes.float8_e4m3b11fnuz),
    P.F8E3M4: np.dtype(ml_dtypes.float8_e3m4),
    P.F8E5M2FNUZ: np.dtype(ml_dtypes.float8_e5m2fnuz),
    P.F8E4M3FNUZ: np.dtype(ml_dtypes.float8_e4m3fnuz),
    P.F8E8M0FNU: np.dtype(ml_dtypes.float8_e8m0fnu),
    P.F4E2M1FN: np.dtype(ml_dtypes.float4_e2m1fn),
    P.F6E2M3FN: np.dtype(ml_dtypes.float6_e2m3fn),
    P.F6E3M2FN: np.dtype(ml_dtypes.float6_e3m2fn),
    P.C64: np.dtype(np.complex64), P.C128: np.dtype(np.complex128),
}
_FROM_NUMPY = {dtype: t for t, dtype in _TO_NUMPY.items()}
del P
