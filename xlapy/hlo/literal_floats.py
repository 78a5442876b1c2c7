"""Float element types in XLA's text format: how each value is spelled, how a
parsed double is rounded to the type, and NaN bit patterns (sign and payload).

Spelling follows XLA's `RoundTripFpToString`: "%.6g" for f32 when that reads
back exactly, else "%.9g"; "%.15g"/"%.17g" for f64; max_digits10 significant
digits for the narrow types; `nan`, `-nan` and `nan(0x...)` for NaNs whose
payload is not the quiet bit alone. Rounding follows XLA's `static_cast` from
double (f16 and bf16 by way of float, as Eigen does).
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.lexer import NanValue

P = PrimitiveType
IEEE_LIKE = frozenset({P.F16, P.BF16, P.F32, P.F64, P.F8E5M2, P.F8E4M3, P.F8E3M4})
"""Float types with signalling NaNs, hence NaN payloads (XLA's NanPayloadBits > 0)."""
VIA_FLOAT32 = frozenset({P.F16, P.BF16})
"""Types XLA (Eigen) converts from double by way of float."""
DOUBLE_QUIET_NAN = 1 << 51
"""The payload of a plain `nan` as XLA's lexer reads it."""


def format_float(value, element_type: PrimitiveType) -> str:
    """XLA's spelling of one float (RoundTripFpToString; see the module docstring)."""
    return float_texts(np.asarray([value], element_type.numpy), element_type)[0]


def float_texts(flat: np.ndarray, element_type: PrimitiveType) -> list[str]:
    """XLA's spelling of each element: the short form where it reads back to the
    same bits, else the longer one (for narrow types, the exact double; ml_dtypes
    rounds some tiny values, e.g. of f8e8m0fnu, differently from the decimal)."""
    short, long = {P.F32: (6, 9), P.F64: (15, 17)}.get(
        element_type, (max_digits10(element_type), 17))
    with np.errstate(invalid="ignore"):  # signalling NaNs
        doubles = flat.astype(np.float64)
    values = doubles.tolist()
    texts = [f"{v:.{short}g}" for v in values]
    nan = np.isnan(doubles)
    back, _ = round_doubles(np.array(texts, dtype=np.float64), element_type)
    uint = uint_dtype(element_type)
    for i in np.flatnonzero((back.view(uint) != flat.view(uint)) & ~nan).tolist():
        texts[i] = f"{values[i]:.{long}g}"
    for i in np.flatnonzero(nan).tolist():
        texts[i] = nan_text(flat[i], element_type)
    return texts


def nan_text(value, element_type: PrimitiveType) -> str:
    """`nan`, `-nan`, or with the payload when it is not the quiet bit alone."""
    text = "-nan" if math.copysign(1.0, float(value)) < 0 else "nan"
    if element_type in IEEE_LIKE:
        payload = float_bits(value, element_type) & payload_mask(element_type)
        if payload != quiet_nan(element_type):
            text += f"(0x{payload:x})"
    return text


def round_doubles(doubles: np.ndarray, element_type: PrimitiveType):
    """Doubles rounded to `element_type` as XLA's static_cast does, and where a
    finite value overflowed (which XLA reports as out of range)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if element_type in VIA_FLOAT32:
            array = doubles.astype(np.float32).astype(element_type.numpy)
        else:
            array = doubles.astype(element_type.numpy)
        overflow = np.isfinite(doubles) & ~np.isfinite(array.astype(np.float64))
    return array, overflow


def store_nan(array: np.ndarray, i: int, nan: NanValue, element_type: PrimitiveType) -> str:
    """Set element `i` to the NaN `nan` spells; returns what is wrong, if anything."""
    payload = nan.payload if nan.payload != DOUBLE_QUIET_NAN else None
    if element_type not in IEEE_LIKE:
        if payload is not None:
            return f"{element_type.value} does not support NaN payloads"
        return ""  # the conversion already gave the type's NaN with the right sign
    if payload is None:
        payload = quiet_nan(element_type)
    if payload > payload_mask(element_type):
        return (f"NaN payload 0x{payload:x} is out of range for {element_type.value} "
                f"(at most 0x{payload_mask(element_type):x})")
    array.view(uint_dtype(element_type))[i] = nan_bits(element_type, nan.negative, payload)
    return ""


def uint_dtype(element_type: PrimitiveType):
    """The unsigned integer dtype as wide as the type's storage, to view its bits."""
    return np.dtype(f"<u{element_type.numpy.itemsize}")


def float_bits(value, element_type: PrimitiveType) -> int:
    """The bit pattern of `value` stored in `element_type`."""
    return int(np.asarray(value, element_type.numpy).view(uint_dtype(element_type)))


def mantissa_bits(element_type: PrimitiveType) -> int:
    """Explicit mantissa bits; also XLA's NanPayloadBits for the IEEE_LIKE types."""
    return int(ml_dtypes.finfo(element_type.numpy).nmant)


def payload_mask(element_type: PrimitiveType) -> int:
    return (1 << mantissa_bits(element_type)) - 1


def quiet_nan(element_type: PrimitiveType) -> int:
    return 1 << (mantissa_bits(element_type) - 1)


def max_digits10(element_type: PrimitiveType) -> int:
    """Significant decimal digits that always identify a value (numeric_limits)."""
    digits = mantissa_bits(element_type) + 1
    return 1 + math.ceil(digits * math.log10(2))


def nan_bits(element_type: PrimitiveType, negative: bool, payload: int) -> int:
    """An IEEE_LIKE NaN: the sign, an all-ones exponent, then the payload."""
    width = element_type.numpy.itemsize * 8
    exponent = ((1 << (width - 1)) - 1) & ~payload_mask(element_type)
    return (int(negative) << (width - 1)) | exponent | payload
