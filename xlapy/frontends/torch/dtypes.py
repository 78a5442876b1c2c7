"""PyTorch dtypes as HLO element types, and tensors across the boundary without copies.

A contiguous CPU tensor crosses into xlapy as a NumPy view of its storage
(`Tensor.numpy()`), and xlapy's NumPy results come back as tensors sharing their
memory (`torch.from_numpy`); bfloat16, which NumPy lacks, travels as its bits
viewed as ml_dtypes' bfloat16.
"""

from __future__ import annotations

import numpy as np
import torch

from xlapy.frontends.torch.registry import Unsupported
from xlapy.hlo.dtypes import PrimitiveType

_TYPES = {
    torch.bool: PrimitiveType.PRED,
    torch.int8: PrimitiveType.S8, torch.int16: PrimitiveType.S16,
    torch.int32: PrimitiveType.S32, torch.int64: PrimitiveType.S64,
    torch.uint8: PrimitiveType.U8, torch.uint16: PrimitiveType.U16,
    torch.uint32: PrimitiveType.U32, torch.uint64: PrimitiveType.U64,
    torch.float16: PrimitiveType.F16, torch.bfloat16: PrimitiveType.BF16,
    torch.float32: PrimitiveType.F32, torch.float64: PrimitiveType.F64,
    torch.complex64: PrimitiveType.C64, torch.complex128: PrimitiveType.C128,
}


def primitive_type(dtype: torch.dtype, where: str = "") -> PrimitiveType:
    """The HLO element type of a torch dtype."""
    try:
        return _TYPES[dtype]
    except KeyError:
        raise Unsupported(where or "dtype", f"dtype {dtype} has no HLO element type") from None


def to_numpy(tensor: torch.Tensor) -> np.ndarray:
    """A CPU tensor's data as a NumPy array: a view of its storage when contiguous."""
    t = tensor.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if not t.is_contiguous():
        t = t.contiguous()
    if t.is_conj() or t.is_neg():
        t = t.resolve_conj().resolve_neg()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(PrimitiveType.BF16.numpy)
    return t.numpy()


def from_numpy(array: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    """An xlapy result as a tensor sharing its memory (copied only when read-only)."""
    if not isinstance(array, np.ndarray):
        array = np.asarray(array)
    if not array.flags.writeable:
        array = array.copy()
    if dtype == torch.bfloat16:
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)


_DTYPES = {element_type: dtype for dtype, element_type in _TYPES.items()}


def torch_dtype(element_type: PrimitiveType) -> torch.dtype:
    """The torch dtype of an HLO element type (the inverse of primitive_type)."""
    return _DTYPES[element_type]
