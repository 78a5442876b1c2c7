"""Constant literals as the bytes the generated code reads."""

from __future__ import annotations

import numpy as np

from xlapy.codegen.ir_array import minor_to_major
from xlapy.hlo.shape import Shape


def literal_bytes(literal, shape: Shape) -> bytes:
    """The literal's elements in the shape's physical (layout) order."""
    array = np.asarray(literal, dtype=shape.dtype).reshape(shape.dimensions)
    physical = np.transpose(array, list(reversed(minor_to_major(shape))))
    if shape.element_type.value == "pred":
        physical = physical.astype(np.uint8)
    return np.ascontiguousarray(physical).tobytes()
