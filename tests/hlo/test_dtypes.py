"""Element types: spellings, NumPy counterparts, classification, widths."""

import ml_dtypes
import numpy as np
import pytest

from xlapy.hlo.dtypes import PrimitiveType as P

ARRAY_TYPES = [t for t in P if t.is_array_type]


@pytest.mark.parametrize("t", ARRAY_TYPES, ids=str)
def test_numpy_round_trip(t):
    assert P.from_numpy(t.numpy) is t
    assert P.from_text(t.value) is t


def test_numpy_dtypes():
    assert P.BF16.numpy == np.dtype(ml_dtypes.bfloat16)
    assert P.PRED.numpy == np.bool_
    assert P.C64.numpy == np.complex64


def test_classification():
    assert P.S8.is_signed_int and P.U64.is_unsigned_int and P.U64.is_integral
    assert not P.PRED.is_integral and P.PRED.is_pred
    assert P.F8E4M3FN.is_float and not P.C64.is_float and P.C128.is_complex
    assert P.C64.component_type is P.F32 and P.F32.component_type is P.F32
    assert not P.TUPLE.is_array_type and not P.TOKEN.is_array_type


def test_widths():
    assert [P.PRED.bit_width, P.S4.bit_width, P.BF16.bit_width, P.C128.bit_width] == [8, 4, 16, 128]
    assert P.S4.byte_size == 1 and P.F64.byte_size == 8


def test_errors():
    with pytest.raises(TypeError, match="no HLO element type"):
        P.from_numpy(np.dtype("U3"))
    with pytest.raises(TypeError):
        _ = P.TUPLE.numpy
