"""cuBLAS for `dot`: a row-major, strided-batched GEMM on device pointers.

XLA's GPU backend hands most dots to cuBLAS rather than emitting them, because
a hand-written kernel rarely matches a vendor GEMM. We reach cuBLAS through
nvmath-python's low-level bindings (`nvmath.bindings.cublas`), imported late
because it is part of the optional gpu extra.

cuBLAS is column-major. A row-major M x N matrix is the column-major N x M
matrix with the same bytes, so row-major C = op(A) @ op(B) is computed as the
column-major C^T = op(B)^T @ op(A)^T: the operands swap places, m and n swap,
and no data moves.

Accumulation is f32 for f32/f16/bf16 inputs (CUBLAS_COMPUTE_32F) and f64 for
f64. TF32 tensor cores change f32 results in the 4th digit, so they are used
only when the caller asks (`allow_tf32`).
"""

from __future__ import annotations

import functools
import threading
import weakref

import ml_dtypes
import numpy as np

from xlapy.backends.gpu import driver
from xlapy.errors import ExecutionError

# cudaDataType_t member names, by element type (cuda.bindings.runtime has the enum).
_DATA_TYPE = {np.dtype(np.float32): "CUDA_R_32F", np.dtype(np.float64): "CUDA_R_64F",
              np.dtype(np.float16): "CUDA_R_16F", np.dtype(ml_dtypes.bfloat16): "CUDA_R_16BF"}


def _cublas():
    # optional dependency: the gpu extra (nvmath-python and the cuBLAS wheel)
    from nvmath.bindings import cublas

    return cublas


def _data_types() -> dict:
    # optional dependency: the gpu extra (cuda-bindings names cudaDataType_t)
    from cuda.bindings import runtime

    return {dtype: int(getattr(runtime.cudaDataType, name)) for dtype, name in _DATA_TYPE.items()}


@functools.cache
def _gemm_problem() -> str:
    """Why cuBLAS cannot be used, or ''. Loads libcublas without touching the GPU."""
    if not driver.available():
        return driver.problem()
    try:
        cublas = _cublas()
    except ImportError as error:
        return f"nvmath-python is not installed ({error}); install it with {driver.INSTALL_HINT}"
    try:
        cublas.get_property(0)  # libraryPropertyType MAJOR_VERSION: forces libcublas to load
    except Exception as error:
        return f"libcublas cannot be loaded ({type(error).__name__}: {error})"
    return ""


def gemm_available() -> bool:
    """True iff a GPU, nvmath-python and libcublas are all present. Never raises; cached."""
    try:
        return _gemm_problem() == ""
    except Exception:
        return False


_HANDLES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_HANDLES_LOCK = threading.Lock()


def _handle(ctx) -> int:
    """The context's cuBLAS handle, created once and bound to the context's stream."""
    with _HANDLES_LOCK:
        handle = _HANDLES.get(ctx)
        if handle is None:
            cublas = _cublas()
            try:
                handle = cublas.create()
                cublas.set_stream(handle, ctx.stream)
            except Exception as error:  # nvmath raises its own cuBLASError
                raise ExecutionError(f"cuBLAS handle for {ctx}: {error}") from error
            _HANDLES[ctx] = handle
        return handle


def gemm(ctx, *, m: int, n: int, k: int, a: int, b: int, c: int, dtype, trans_a: bool,
         trans_b: bool, batch: int = 1, stride_a: int = 0, stride_b: int = 0,
         stride_c: int = 0, allow_tf32: bool = False) -> None:
    """Queue row-major C[m, n] = op(A)[m, k] @ op(B)[k, n] for `batch` matrices on ctx's stream.

    `a`, `b`, `c` are device pointers; A is stored [k, m] when `trans_a`
    (else [m, k]), B is stored [n, k] when `trans_b` (else [k, n]). Strides are
    in elements between one matrix of the batch and the next (0 repeats the
    same matrix). A, B and C share `dtype`: f32, f16, bf16 or f64.
    """
    dtype = np.dtype(dtype)
    data_types = _data_types()
    if dtype not in data_types:
        raise ExecutionError(f"cuBLAS gemm: unsupported element type {dtype} "
                             f"(f32, f16, bf16 and f64 are)")
    if min(m, n, batch) <= 0:
        return
    cublas = _cublas()
    compute, scalar = _compute_type(cublas, dtype, allow_tf32)
    alpha, beta = np.ones((), scalar), np.zeros((), scalar)  # host scalars, read at the call
    op = {False: cublas.Operation.N, True: cublas.Operation.T}
    element = data_types[dtype]
    ld_b = max(1, k if trans_b else n)
    ld_a = max(1, m if trans_a else k)
    handle = _handle(ctx)
    # column-major C^T[n, m] = op(B)^T[n, k] @ op(A)^T[k, m]
    try:
        cublas.gemm_strided_batched_ex(
            handle, op[trans_b], op[trans_a], n, m, k,
            alpha.ctypes.data, b, element, ld_b, stride_b,
            a, element, ld_a, stride_a,
            beta.ctypes.data, c, element, n, stride_c,
            batch, compute, cublas.GemmAlgo.DFALT)
    except Exception as error:  # nvmath raises its own cuBLASError
        raise ExecutionError(f"cublasGemmStridedBatchedEx ({m}x{k} @ {k}x{n}, {dtype}, "
                             f"batch {batch}) failed: {error}") from error


def _compute_type(cublas, dtype: np.dtype, allow_tf32: bool):
    """(cublasComputeType_t, the NumPy type of alpha and beta) for `dtype`."""
    if dtype == np.float64:
        return cublas.ComputeType.COMPUTE_64F, np.float64
    if dtype == np.float32 and allow_tf32:
        return cublas.ComputeType.COMPUTE_32F_FAST_TF32, np.float32
    return cublas.ComputeType.COMPUTE_32F, np.float32
