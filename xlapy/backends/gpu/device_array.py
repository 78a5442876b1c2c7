"""Results that stay on the GPU, and the two ways other libraries read them in place.

A DeviceArray owns a DeviceBuffer and says what it holds (shape, dtype). It
copies to the host only when asked (`np.asarray`), and exports itself without
a copy through `__cuda_array_interface__` (CuPy, Numba, PyTorch) and DLPack
(`torch.from_dlpack`, `cupy.from_dlpack`, JAX).

DLPack's capsule is built here with ctypes. The layout is DLPack's unversioned
`DLManagedTensor`: a DLTensor, a manager context and a deleter. The capsule
keeps its buffer alive until the consumer calls the deleter, or, if no consumer
ever took it (its name is still "dltensor"), until the capsule itself dies;
that destructor is a few JIT-compiled instructions, not Python (see
`_capsule_destructor` for why).
`dlpack_capsule` takes the device type as a parameter so tests can export host
memory and read it back with `np.from_dlpack` on a machine without a GPU.
"""

from __future__ import annotations

import ctypes
import functools
import threading

import llvmlite.ir as ir
import ml_dtypes
import numpy as np

from xlapy.backends.cpu import llvm_target
from xlapy.backends.gpu import driver
from xlapy.backends.gpu.memory import CachingAllocator

KDL_CPU = 1
KDL_CUDA = 2
CUDA_DEVICE = (KDL_CUDA, 0)

# DLDataTypeCode
_KDL_INT, _KDL_UINT, _KDL_FLOAT, _KDL_BFLOAT, _KDL_COMPLEX, _KDL_BOOL = 0, 1, 2, 4, 5, 6
_CODE_BY_KIND = {"i": _KDL_INT, "u": _KDL_UINT, "f": _KDL_FLOAT, "c": _KDL_COMPLEX,
                 "b": _KDL_BOOL}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


def dlpack_dtype(dtype) -> tuple[int, int, int]:
    """(type code, bits, lanes) for a NumPy dtype; BufferError for one DLPack cannot carry."""
    dtype = np.dtype(dtype)
    if dtype == np.dtype(ml_dtypes.bfloat16):
        return _KDL_BFLOAT, 16, 1
    code = _CODE_BY_KIND.get(dtype.kind)
    if code is None or not dtype.isnative:
        raise BufferError(f"DLPack has no type code for {dtype}")
    return code, dtype.itemsize * 8, 1


# The tensor's deleter is a C callback into Python that drops the export's
# entry in `_EXPORTED`, which keeps the tensor's arrays and owner (the buffer)
# alive. It is safe to call from any thread: ctypes takes the GIL.
_EXPORTED: dict[int, tuple] = {}
_CAPSULE_NAME = ctypes.create_string_buffer(b"dltensor")  # must outlive every capsule


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _delete_managed(address):
    _EXPORTED.pop(address, None)


_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_void_p,
                                 ctypes.c_void_p)(("PyCapsule_New", ctypes.pythonapi))


def _c_address(function) -> int:
    return ctypes.cast(function, ctypes.c_void_p).value


@functools.cache
def _capsule_destructor() -> int:
    """The address of a machine-code capsule destructor, JIT-compiled once.

    It must be C, not a ctypes callback: a consumer that rejects the tensor
    (NumPy refusing bfloat16, say) drops the capsule with its exception still
    pending, and Python code run at that moment would replace that exception
    with a SystemError. So, like a C producer, it checks the name ("dltensor":
    nobody consumed it), and only then saves the pending error, calls the
    tensor's deleter and restores the error.
    """
    i8p, i32, i64 = ir.IntType(8).as_pointer(), ir.IntType(32), ir.IntType(64)
    module = llvm_target.new_module("xlapy_dlpack_capsule")
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), [i8p]),
                           name="xlapy_dltensor_capsule_destructor")
    entry, release, done = (function.append_basic_block(n) for n in ("entry", "release", "done"))
    b = ir.IRBuilder(entry)
    saved = [b.alloca(i8p) for _ in range(3)]

    def c_function(address: int, result, *arguments):
        kind = ir.FunctionType(result, list(arguments)).as_pointer()
        return b.inttoptr(ir.Constant(i64, address), kind)

    api = ctypes.pythonapi
    capsule = function.args[0]
    name = b.inttoptr(ir.Constant(i64, ctypes.addressof(_CAPSULE_NAME)), i8p)
    is_valid = c_function(_c_address(api.PyCapsule_IsValid), i32, i8p, i8p)
    unconsumed = b.icmp_unsigned("!=", b.call(is_valid, [capsule, name]), ir.Constant(i32, 0))
    b.cbranch(unconsumed, release, done)
    b.position_at_end(release)
    b.call(c_function(_c_address(api.PyErr_Fetch), ir.VoidType(), *[i8p.as_pointer()] * 3),
           saved)
    managed = b.call(c_function(_c_address(api.PyCapsule_GetPointer), i8p, i8p, i8p),
                     [capsule, name])
    deleter_type = ir.FunctionType(ir.VoidType(), [i8p]).as_pointer()
    deleter_slot = b.gep(managed, [ir.Constant(i64, DLManagedTensor.deleter.offset)])
    b.call(b.load(b.bitcast(deleter_slot, deleter_type.as_pointer())), [managed])
    b.call(c_function(_c_address(api.PyErr_Restore), ir.VoidType(), i8p, i8p, i8p),
           [b.load(error_part) for error_part in saved])
    b.branch(done)
    b.position_at_end(done)
    b.ret_void()
    loaded = llvm_target.LoadedObject(llvm_target.compile_to_object(module, opt_level=1),
                                      check_symbols=False)
    _JIT_OBJECTS.append(loaded)  # its machine code must live as long as the process
    return loaded.address("xlapy_dltensor_capsule_destructor")


_JIT_OBJECTS: list = []


def dlpack_capsule(ptr: int, shape: tuple[int, ...], dtype, owner, *,
                   device_type: int = KDL_CUDA, device_id: int = 0):
    """A "dltensor" capsule describing C-contiguous memory at `ptr`, keeping `owner` alive.

    Strides are given explicitly (in elements, as DLPack counts them) so that
    consumers that require them need not assume row-major order.
    """
    code, bits, lanes = dlpack_dtype(dtype)
    ndim = len(shape)
    sizes = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides = (ctypes.c_int64 * max(ndim, 1))(*_row_major_strides(shape))
    managed = DLManagedTensor()
    tensor = managed.dl_tensor
    tensor.data = ptr or None
    tensor.device = DLDevice(device_type, device_id)
    tensor.ndim = ndim
    tensor.dtype = DLDataType(code, bits, lanes)
    tensor.shape = ctypes.cast(sizes, ctypes.POINTER(ctypes.c_int64))
    tensor.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
    tensor.byte_offset = 0
    address = ctypes.addressof(managed)
    managed.manager_ctx = address
    managed.deleter = _c_address(_delete_managed)
    _EXPORTED[address] = (managed, sizes, strides, owner)
    return _capsule_new(address, ctypes.addressof(_CAPSULE_NAME), _capsule_destructor())


def _row_major_strides(shape: tuple[int, ...]) -> list[int]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return strides[::-1]


def exported_count() -> int:
    """How many DLPack exports are still alive (for tests and leak checks)."""
    return len(_EXPORTED)


class DeviceArray:
    """A C-contiguous array in device memory: the GPU backend's result type.

    `buffer` needs `ptr` and `nbytes`; `context` (default: the process's GPU
    context) does the copies and names the stream the data is ordered on.
    """

    def __init__(self, buffer, shape, dtype, context=None):
        self.buffer = buffer
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.nbytes = self.size * self.dtype.itemsize
        if self.nbytes > buffer.nbytes:
            raise ValueError(f"a {self.nbytes}-byte array does not fit its "
                             f"{buffer.nbytes}-byte buffer")
        self._context = context

    @property
    def context(self):
        if self._context is None:
            self._context = driver.context()
        return self._context

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def ptr(self) -> int:
        return self.buffer.ptr

    def __repr__(self) -> str:
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype.name}, on the GPU)"

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        if copy is False:
            raise ValueError("a DeviceArray lives on the GPU: reading it always copies")
        host = np.empty(self.shape, self.dtype)
        self.context.copy_to_host(host, self.ptr)
        return host if dtype is None else host.astype(dtype, copy=False)

    def copy(self) -> DeviceArray:
        """A new DeviceArray with the same contents (a device-to-device copy)."""
        buffer = self.buffer.allocator.allocate(self.nbytes)
        self.context.copy_device(buffer.ptr, self.ptr, self.nbytes)
        return DeviceArray(buffer, self.shape, self.dtype, self._context)

    @property
    def __cuda_array_interface__(self) -> dict:
        # stream 0 is ambiguous in the protocol; 1 names the legacy default stream
        stream = int(self.context.stream) or 1
        return {"version": 3, "shape": self.shape, "typestr": self.dtype.str,
                "data": (self.ptr if self.size else 0, False), "strides": None,
                "stream": stream}

    def __dlpack_device__(self) -> tuple[int, int]:
        return CUDA_DEVICE

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """An unversioned "dltensor" capsule (allowed for any `max_version`).

        `stream` is the consumer's: unless it is -1 ("do not synchronise"),
        our stream is drained first so the consumer sees finished data.
        """
        if dl_device is not None and tuple(dl_device) != CUDA_DEVICE:
            raise BufferError(f"a DeviceArray lives on CUDA device 0, not {dl_device}")
        source = self.copy() if copy else self
        if stream != -1:
            self.context.synchronize()
        return dlpack_capsule(source.ptr if source.size else 0, source.shape, source.dtype,
                              source, device_type=KDL_CUDA, device_id=0)


_ALLOCATOR: CachingAllocator | None = None
_ALLOCATOR_LOCK = threading.Lock()


def default_allocator() -> CachingAllocator:
    """The process's allocator over the GPU context (GpuUnavailable without a GPU)."""
    global _ALLOCATOR
    with _ALLOCATOR_LOCK:
        if _ALLOCATOR is None:
            _ALLOCATOR = CachingAllocator(driver.context())
        return _ALLOCATOR


def device_put(x, device: str = "gpu") -> DeviceArray:
    """Copy a NumPy-convertible value to the GPU (a DeviceArray is returned as it is)."""
    if device not in ("gpu", "cuda"):
        raise ValueError(f"device_put: device must be 'gpu' or 'cuda', got {device!r}")
    if isinstance(x, DeviceArray):
        return x
    ctx = driver.context()
    host = np.asarray(x, order="C")
    if host.dtype == object:
        raise TypeError(f"device_put: cannot place {type(x).__name__} of Python objects on the GPU")
    buffer = default_allocator().allocate(host.nbytes)
    ctx.copy_to_device(buffer.ptr, host)
    return DeviceArray(buffer, host.shape, host.dtype, ctx)
