"""A thin, checked layer over the CUDA driver API (`cuda.bindings.driver`).

Everything the GPU backend asks of the device goes through here, so that one
module decides what a failure looks like: a CUresult other than CUDA_SUCCESS
becomes an ExecutionError naming the call and the driver's own words, an
out-of-memory becomes MemoryError naming the byte count, and a machine without
the package, the driver library or a device gets GpuUnavailable saying which.

`cuda.bindings` is imported inside functions: importing xlapy must never need
CUDA. One process-wide Context holds device 0's primary context (the one the
runtime API, cuBLAS, CuPy and PyTorch share) and one stream that every copy,
memset, launch and cuBLAS call is ordered on.
"""

from __future__ import annotations

import ctypes
import functools
import re
import threading
import weakref

import numpy as np

from xlapy.errors import CompileError, ExecutionError

INSTALL_HINT = "pip install 'xlapy[gpu]'"
_LOG_BYTES = 1 << 16


class GpuUnavailable(ExecutionError):
    """No usable GPU: the message says what is missing (package, driver, device) and why."""


def _driver_module():
    # optional dependency: the gpu extra
    from cuda.bindings import driver

    return driver


def _error_text(driver, code) -> str:
    """'CUDA_ERROR_X: the driver's sentence' for a CUresult, never raising."""
    try:
        _, name = driver.cuGetErrorName(code)
        _, text = driver.cuGetErrorString(code)
        return f"{name.decode()}: {text.decode()}"
    except Exception:  # the error lookup itself failed: keep the number
        return f"CUresult {int(code)}"


def _check(call: str, result):
    """Raise for a failed CUresult; return the call's outputs (None, one value or a tuple)."""
    driver = _driver_module()
    code, outputs = result[0], tuple(result[1:])
    if code != driver.CUresult.CUDA_SUCCESS:
        raise ExecutionError(f"{call} failed: {_error_text(driver, code)}")
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else outputs


@functools.cache
def _probe() -> str:
    """Why the GPU cannot be used, or '' when it can. Runs once per process."""
    try:
        driver = _driver_module()
    except ImportError as error:
        return f"the cuda-bindings package is not installed ({error}); install it with " \
               f"{INSTALL_HINT}"
    try:
        code = driver.cuInit(0)[0]
    except Exception as error:  # cuda.pathfinder cannot find or open libcuda
        return f"the NVIDIA driver library libcuda cannot be loaded " \
               f"({type(error).__name__}: {error}); install the NVIDIA driver"
    if code != driver.CUresult.CUDA_SUCCESS:
        return f"no usable CUDA device: cuInit failed: {_error_text(driver, code)}"
    code, count = driver.cuDeviceGetCount()
    if code != driver.CUresult.CUDA_SUCCESS:
        return f"no usable CUDA device: cuDeviceGetCount failed: {_error_text(driver, code)}"
    if count < 1:
        return "no CUDA device: cuDeviceGetCount found 0 devices"
    return ""


def problem() -> str:
    """'' when a GPU is usable, else the reason GpuUnavailable would give."""
    try:
        return _probe()
    except Exception as error:  # never raise from a question
        return f"the CUDA driver could not be queried ({type(error).__name__}: {error})"


def available() -> bool:
    """True iff the driver initialises and sees at least one device. Never raises; cached."""
    return problem() == ""


class LoadedModule:
    """A module loaded into the context; `cubin` is the linked image when PTX was linked."""

    def __init__(self, handle, name: str, cubin: bytes | None):
        self.handle = handle
        self.name = name
        self.cubin = cubin
        self._functions: dict[str, object] = {}
        self._unload = weakref.finalize(self, _unload_module, handle)
        self._unload.atexit = False  # the driver tears modules down with the process

    def function(self, name: str):
        """The CUfunction `name` of this module (looked up once)."""
        found = self._functions.get(name)
        if found is None:
            found = _check(f"cuModuleGetFunction({name!r}) in module {self.name}",
                           _driver_module().cuModuleGetFunction(self.handle, name.encode()))
            self._functions[name] = found
        return found


def _unload_module(handle) -> None:
    # Kernels of the module may still be queued: let them finish first. Where the
    # context is not current (a finalizer in another thread) both calls fail and
    # the module stays loaded, which is harmless.
    try:
        driver = _driver_module()
        if driver.cuCtxSynchronize()[0] == driver.CUresult.CUDA_SUCCESS:
            driver.cuModuleUnload(handle)
    except Exception:  # a finalizer must not raise; the context may already be gone
        pass


def _log_text(buffer: bytearray) -> str:
    return bytes(buffer).split(b"\0", 1)[0].decode(errors="replace").strip()


class Context:
    """Device 0's primary context and its one stream.

    Copies to the host and `synchronize` block; everything else is queued on
    `stream` in order, so a caller never needs its own events between kernels.
    """

    def __init__(self):
        driver = _driver_module()
        self.device = _check("cuDeviceGet(0)", driver.cuDeviceGet(0))
        self.handle = _check("cuDevicePrimaryCtxRetain",
                             driver.cuDevicePrimaryCtxRetain(self.device))
        self.make_current()
        raw_name = _check("cuDeviceGetName", driver.cuDeviceGetName(256, self.device))
        self.name = raw_name.split(b"\0", 1)[0].decode(errors="replace")
        major = self._attribute("COMPUTE_CAPABILITY_MAJOR")
        minor = self._attribute("COMPUTE_CAPABILITY_MINOR")
        self.compute_capability = (major, minor)
        self.arch = f"sm_{major}{minor}"
        self._stream = _check("cuStreamCreate", driver.cuStreamCreate(
            driver.CUstream_flags.CU_STREAM_NON_BLOCKING))
        self.stream = int(self._stream)

    def __repr__(self) -> str:
        return f"Context({self.name!r}, {self.arch})"

    def _attribute(self, name: str) -> int:
        driver = _driver_module()
        which = getattr(driver.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}")
        return int(_check(f"cuDeviceGetAttribute({name})",
                          driver.cuDeviceGetAttribute(which, self.device)))

    def make_current(self) -> None:
        """Bind this context to the calling thread (the driver's binding is per thread)."""
        _check("cuCtxSetCurrent", _driver_module().cuCtxSetCurrent(self.handle))

    def synchronize(self) -> None:
        """Wait until everything queued on the stream has finished."""
        _check("cuStreamSynchronize", _driver_module().cuStreamSynchronize(self._stream))

    def alloc(self, nbytes: int) -> int:
        """A fresh device allocation of `nbytes` (at least 1); MemoryError when the GPU is full."""
        driver = _driver_module()
        code, pointer = driver.cuMemAlloc(max(1, int(nbytes)))
        if code == driver.CUresult.CUDA_ERROR_OUT_OF_MEMORY:
            raise MemoryError(f"cuMemAlloc: out of GPU memory allocating {nbytes} bytes "
                              f"on {self.name}")
        _check(f"cuMemAlloc({nbytes})", (code,))
        return int(pointer)

    def free(self, ptr: int) -> None:
        _check("cuMemFree", _driver_module().cuMemFree(ptr))

    def copy_to_device(self, ptr: int, host: np.ndarray) -> None:
        """Copy a C-contiguous host array to `ptr`; returns when `host` may be reused."""
        host = _contiguous(host, "copy_to_device")
        if host.nbytes:
            _check("cuMemcpyHtoDAsync", _driver_module().cuMemcpyHtoDAsync(
                ptr, host.ctypes.data, host.nbytes, self._stream))
            self.synchronize()  # a pinned source would otherwise still be read after return

    def copy_to_host(self, host: np.ndarray, ptr: int) -> None:
        """Fill a writable C-contiguous host array from `ptr`, after all queued work."""
        if not (host.flags.c_contiguous and host.flags.writeable):
            raise ExecutionError("copy_to_host needs a writable C-contiguous host array")
        if host.nbytes:
            _check("cuMemcpyDtoHAsync", _driver_module().cuMemcpyDtoHAsync(
                host.ctypes.data, ptr, host.nbytes, self._stream))
        self.synchronize()

    def copy_device(self, dst: int, src: int, nbytes: int) -> None:
        """Queue a device-to-device copy."""
        if nbytes:
            _check("cuMemcpyDtoDAsync", _driver_module().cuMemcpyDtoDAsync(
                dst, src, nbytes, self._stream))

    def memset(self, ptr: int, byte: int, nbytes: int) -> None:
        """Queue filling `nbytes` at `ptr` with `byte`."""
        if nbytes:
            _check("cuMemsetD8Async", _driver_module().cuMemsetD8Async(
                ptr, byte & 0xFF, nbytes, self._stream))

    def load_cubin(self, data: bytes, name: str = "cubin") -> LoadedModule:
        """Load a cubin (or fatbin) image."""
        handle = _check(f"cuModuleLoadData (module {name})",
                        _driver_module().cuModuleLoadData(bytes(data)))
        return LoadedModule(handle, name, None)

    def load_ptx(self, ptx: str, name: str = "") -> LoadedModule:
        """Link PTX for this device with the driver's linker and load the cubin.

        Linking (rather than cuModuleLoadData on the PTX) yields the cubin, which
        the caller can keep on disk and load next time without ptxas. A PTX
        error raises CompileError with ptxas's log.
        """
        name = name or _module_name(ptx)
        cubin = self.link(ptx, name)
        module = self.load_cubin(cubin, name)
        module.cubin = cubin
        return module

    def link(self, ptx: str, name: str = "") -> bytes:
        """The cubin of `ptx` for this device (cuLinkCreate/AddData/Complete): what
        cuModuleLoadData would build from the PTX, kept by the GPU disk cache."""
        name = name or _module_name(ptx)
        driver = _driver_module()
        errors, info = bytearray(_LOG_BYTES), bytearray(_LOG_BYTES)
        option = driver.CUjit_option
        keys = [option.CU_JIT_ERROR_LOG_BUFFER, option.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                option.CU_JIT_INFO_LOG_BUFFER, option.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES]
        values = [errors, _LOG_BYTES, info, _LOG_BYTES]
        state = _check("cuLinkCreate", driver.cuLinkCreate(len(keys), keys, values))
        try:
            source = ptx.encode() + b"\0"
            code = driver.cuLinkAddData(state, driver.CUjitInputType.CU_JIT_INPUT_PTX, source,
                                        len(source), f"{name}.ptx".encode(), 0, None, None)[0]
            if code == driver.CUresult.CUDA_SUCCESS:
                code, image, size = driver.cuLinkComplete(state)
            if code != driver.CUresult.CUDA_SUCCESS:
                log = _log_text(errors) or _log_text(info) or "(no log)"
                raise CompileError(f"PTX of kernel module {name} does not assemble for "
                                   f"{self.arch}: {_error_text(driver, code)}\n{log}")
            return ctypes.string_at(int(image), int(size))  # owned by `state`: copy first
        finally:
            driver.cuLinkDestroy(state)

    def launch(self, function, grid: tuple[int, int, int], block: tuple[int, int, int],
               shared_bytes: int, pointers: list[int]) -> None:
        """Queue `function` on the stream; every parameter is a 64-bit device pointer."""
        values = tuple(int(p) for p in pointers)
        params = (values, (ctypes.c_void_p,) * len(values)) if values else None
        _check("cuLaunchKernel", _driver_module().cuLaunchKernel(
            function, *grid, *block, shared_bytes, self._stream, params, 0))


def _contiguous(host, what: str) -> np.ndarray:
    if not isinstance(host, np.ndarray) or not host.flags.c_contiguous:
        raise ExecutionError(f"{what} needs a C-contiguous NumPy array, got {type(host).__name__}")
    return host


def _module_name(ptx: str) -> str:
    """The first kernel's name, so a failing module is named in messages."""
    found = re.search(r"\.entry\s+([A-Za-z_$][\w$]*)", ptx)
    return found.group(1) if found else "ptx"


_CONTEXT: Context | None = None
_CONTEXT_LOCK = threading.Lock()
_THREAD = threading.local()


def context() -> Context:
    """The process-wide Context, current on the calling thread; GpuUnavailable without a GPU."""
    global _CONTEXT
    if _CONTEXT is None:
        reason = problem()
        if reason:
            raise GpuUnavailable(f"no GPU available: {reason}")
        with _CONTEXT_LOCK:
            if _CONTEXT is None:
                _CONTEXT = Context()
                _THREAD.bound = True
    if not getattr(_THREAD, "bound", False):
        _CONTEXT.make_current()
        _THREAD.bound = True
    return _CONTEXT
