"""The GPU runtime on a machine without a GPU: failures that say what is missing,
the caching allocator over a fake device, and the DLPack / CUDA array interface
exports checked against host memory (NumPy reads a kDLCPU capsule we build)."""

import ctypes
import enum
import gc
import types

import ml_dtypes
import numpy as np
import pytest

from xlapy.backends.gpu import blas, device_array, driver
from xlapy.backends.gpu.device_array import DeviceArray, device_put, dlpack_capsule
from xlapy.backends.gpu.memory import CachingAllocator, bin_size
from xlapy.errors import CompileError, ExecutionError

no_gpu = pytest.mark.skipif(driver.available(), reason="this machine has a GPU")


# --- what is missing ------------------------------------------------------------------------


@no_gpu
def test_unavailable_names_what_is_missing():
    assert driver.available() is False
    reason = driver.problem()
    assert "libcuda" in reason or "cuda-bindings" in reason
    with pytest.raises(driver.GpuUnavailable, match="no GPU available") as caught:
        driver.context()
    assert reason in str(caught.value)
    assert isinstance(caught.value, ExecutionError)


@no_gpu
def test_device_put_and_gemm_say_unavailable():
    with pytest.raises(driver.GpuUnavailable):
        device_put(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="'gpu' or 'cuda'"):
        device_put(np.ones(3), device="tpu")
    assert blas.gemm_available() is False


class Result(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_OUT_OF_MEMORY = 2
    CUDA_ERROR_NO_DEVICE = 100
    CUDA_ERROR_INVALID_PTX = 218


def fake_driver(**calls):
    """A stand-in for cuda.bindings.driver that answers only what a test needs."""
    names = {code: (code.name.encode(), b"what the driver says") for code in Result}
    return types.SimpleNamespace(
        CUresult=Result,
        cuGetErrorName=lambda code: (Result.CUDA_SUCCESS, names[code][0]),
        cuGetErrorString=lambda code: (Result.CUDA_SUCCESS, names[code][1]),
        **calls)


@pytest.fixture
def fresh_probe():
    driver._probe.cache_clear()
    yield
    driver._probe.cache_clear()


def _without_package():
    raise ImportError("No module named 'cuda'")


def test_missing_package_says_how_to_install(monkeypatch, fresh_probe):
    monkeypatch.setattr(driver, "_driver_module", _without_package)
    assert "cuda-bindings" in driver.problem()
    assert "pip install 'xlapy[gpu]'" in driver.problem()
    assert not driver.available()


def test_missing_device_names_the_driver_error(monkeypatch, fresh_probe):
    fake = fake_driver(cuInit=lambda flags: (Result.CUDA_ERROR_NO_DEVICE,))
    monkeypatch.setattr(driver, "_driver_module", lambda: fake)
    assert driver.problem() == \
        "no usable CUDA device: cuInit failed: CUDA_ERROR_NO_DEVICE: what the driver says"
    with pytest.raises(driver.GpuUnavailable, match="CUDA_ERROR_NO_DEVICE"):
        driver.context()


def test_zero_devices(monkeypatch, fresh_probe):
    fake = fake_driver(cuInit=lambda flags: (Result.CUDA_SUCCESS,),
                       cuDeviceGetCount=lambda: (Result.CUDA_SUCCESS, 0))
    monkeypatch.setattr(driver, "_driver_module", lambda: fake)
    assert "found 0 devices" in driver.problem()


def bare_context(monkeypatch, **calls) -> driver.Context:
    """A Context over a fake driver, built without touching a device."""
    monkeypatch.setattr(driver, "_driver_module", lambda: fake_driver(**calls))
    ctx = object.__new__(driver.Context)
    ctx.name, ctx.arch, ctx._stream, ctx.stream = "Fake GPU", "sm_90", "stream", 7
    return ctx


def test_failed_calls_name_the_call_and_the_error(monkeypatch):
    ctx = bare_context(monkeypatch, cuMemFree=lambda ptr: (Result.CUDA_ERROR_NO_DEVICE,))
    with pytest.raises(ExecutionError, match=r"cuMemFree failed: CUDA_ERROR_NO_DEVICE: what"):
        ctx.free(0x1000)


def test_out_of_memory_is_memory_error_with_the_size(monkeypatch):
    ctx = bare_context(monkeypatch,
                       cuMemAlloc=lambda n: (Result.CUDA_ERROR_OUT_OF_MEMORY, 0))
    with pytest.raises(MemoryError, match="12345 bytes"):
        ctx.alloc(12345)


def test_ptx_link_error_carries_the_log(monkeypatch):
    def link_create(count, keys, values):
        values[0][:24] = b"ptxas: syntax error\0...."  # the driver writes the error log
        return Result.CUDA_SUCCESS, "state"

    ctx = bare_context(
        monkeypatch, CUjit_option=types.SimpleNamespace(
            CU_JIT_ERROR_LOG_BUFFER=5, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES=6,
            CU_JIT_INFO_LOG_BUFFER=3, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES=4),
        CUjitInputType=types.SimpleNamespace(CU_JIT_INPUT_PTX=1),
        cuLinkCreate=link_create,
        cuLinkAddData=lambda *args: (Result.CUDA_ERROR_INVALID_PTX,),
        cuLinkDestroy=lambda state: (Result.CUDA_SUCCESS,))
    with pytest.raises(CompileError) as caught:
        ctx.load_ptx(".visible .entry fused_add(\n.param .u64 p)\n{ bad; }")
    message = str(caught.value)
    assert "fused_add" in message and "sm_90" in message
    assert "CUDA_ERROR_INVALID_PTX" in message and "ptxas: syntax error" in message


def test_launch_passes_every_parameter_as_a_pointer(monkeypatch):
    seen = []
    ctx = bare_context(monkeypatch, cuLaunchKernel=lambda *args: seen.append(args)
                       or (Result.CUDA_SUCCESS,))
    ctx.launch("kernel", (4, 1, 1), (256, 1, 1), 0, [0x10, 0x20])
    assert seen == [("kernel", 4, 1, 1, 256, 1, 1, 0, "stream",
                     ((0x10, 0x20), (ctypes.c_void_p, ctypes.c_void_p)), 0)]


# --- the caching allocator over a fake device ---------------------------------------------


class FakeMemory:
    """alloc/free over a byte budget, recording every call."""

    def __init__(self, capacity=1 << 40):
        self.capacity, self.used, self.next = capacity, 0, 0x1000
        self.sizes, self.allocs, self.frees = {}, 0, []

    def alloc(self, nbytes):
        if self.used + nbytes > self.capacity:
            raise MemoryError(f"fake device full ({nbytes} bytes)")
        ptr, self.next = self.next, self.next + nbytes
        self.sizes[ptr] = nbytes
        self.used += nbytes
        self.allocs += 1
        return ptr

    def free(self, ptr):
        assert ptr in self.sizes, f"double or foreign free of 0x{ptr:x}"
        self.used -= self.sizes.pop(ptr)
        self.frees.append(ptr)


@pytest.mark.parametrize("request_size, expected", [
    (0, 512), (1, 512), (512, 512), (513, 1024), (1 << 20, 1 << 20),
    ((1 << 20) + 1, 5 << 18), ((3 << 20) + 1, 7 << 19), (1 << 30, 1 << 30)])
def test_bins(request_size, expected):
    assert bin_size(request_size) == expected


def test_freed_buffers_are_reused_within_their_bin():
    fake = FakeMemory()
    allocator = CachingAllocator(fake)
    first, other = allocator.allocate(100), allocator.allocate(5000)
    ptr = first.ptr
    del first, other  # given back when collected
    gc.collect()
    assert allocator.stats()["bytes_cached"] == 512 + 5120
    again = allocator.allocate(400)  # same 512-byte bin
    assert again.ptr == ptr and again.nbytes == 400 and fake.allocs == 2
    bigger = allocator.allocate(600)  # another bin: a fresh block
    assert bigger.ptr != ptr and fake.allocs == 3
    assert allocator.stats() == {"bytes_in_use": 1536, "bytes_cached": 5120,
                                 "buffers_in_use": 2, "buffers_cached": 1}


def test_empty_cache_frees_only_cached_blocks():
    fake = FakeMemory()
    allocator = CachingAllocator(fake)
    kept, dropped = allocator.allocate(10), allocator.allocate(10)
    dropped.free()
    allocator.empty_cache()
    assert fake.frees == [dropped.ptr]
    assert allocator.stats()["bytes_in_use"] == 512 and kept.alive


def test_memory_error_empties_the_cache_and_retries_once():
    fake = FakeMemory(capacity=2048)
    allocator = CachingAllocator(fake)
    parked = [allocator.allocate(512) for _ in range(3)]
    for buffer in parked:
        buffer.free()
    assert allocator.stats()["bytes_cached"] == 1536
    big = allocator.allocate(2048)  # does not fit beside the cache: it is emptied first
    assert big.nbytes == 2048 and len(fake.frees) == 3
    with pytest.raises(MemoryError, match="fake device full"):
        allocator.allocate(4096)  # does not fit even in an empty device


def test_no_double_free():
    fake = FakeMemory()
    allocator = CachingAllocator(fake)
    buffer = allocator.allocate(64)
    ptr = buffer.ptr
    buffer.free()
    buffer.free()
    allocator.release(ptr)  # a stray second release is ignored too
    del buffer
    gc.collect()
    assert allocator.stats()["buffers_cached"] == 1
    allocator.empty_cache()
    allocator.empty_cache()
    assert fake.frees == [ptr]


# --- DLPack, checked on host memory -----------------------------------------------------------


class HostExport:
    """Exports a NumPy array through our capsule builder with device type kDLCPU."""

    def __init__(self, array):
        self.array = array

    def __dlpack_device__(self):
        return device_array.KDL_CPU, 0

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        a = self.array
        return dlpack_capsule(a.ctypes.data, a.shape, a.dtype, a,
                              device_type=device_array.KDL_CPU)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.bool_, np.uint8])
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3, 4)])
def test_numpy_reads_our_capsule(dtype, shape):
    values = np.asarray(np.arange(int(np.prod(shape))).reshape(shape) % 3, dtype)
    read = np.from_dlpack(HostExport(values))
    assert read.dtype == values.dtype and read.shape == values.shape
    np.testing.assert_array_equal(read, values)
    if values.size:
        assert read.ctypes.data == values.ctypes.data  # no copy


def test_capsule_keeps_memory_alive_until_the_consumer_lets_go():
    before = device_array.exported_count()
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    read = np.from_dlpack(HostExport(values))
    del values
    gc.collect()
    np.testing.assert_array_equal(read, np.arange(12, dtype=np.float32).reshape(3, 4))
    assert device_array.exported_count() == before + 1
    del read
    gc.collect()
    assert device_array.exported_count() == before


def test_unconsumed_capsule_releases_its_tensor():
    before = device_array.exported_count()
    capsule = HostExport(np.ones(4)).__dlpack__()
    assert device_array.exported_count() == before + 1
    del capsule
    gc.collect()
    assert device_array.exported_count() == before


def test_rejected_capsule_keeps_the_consumers_error():
    # NumPy refuses bfloat16 and drops the capsule while its error is pending:
    # the error must survive the capsule's destructor, and the export be released.
    before = device_array.exported_count()
    with pytest.raises(RuntimeError, match="Unsupported dtype"):
        np.from_dlpack(HostExport(np.zeros(3, ml_dtypes.bfloat16)))
    gc.collect()
    assert device_array.exported_count() == before


def test_dtype_codes():
    assert device_array.dlpack_dtype(ml_dtypes.bfloat16) == (4, 16, 1)
    assert device_array.dlpack_dtype(np.float16) == (2, 16, 1)
    assert device_array.dlpack_dtype(np.bool_) == (6, 8, 1)
    assert device_array.dlpack_dtype(np.int64) == (0, 64, 1)
    with pytest.raises(BufferError):
        device_array.dlpack_dtype(ml_dtypes.float8_e4m3fn)


# --- DeviceArray over a fake buffer and context ----------------------------------------------


class FakeContext:
    """'Device' memory that is host memory, so copies are memmoves."""

    def __init__(self, stream=0xABC):
        self.stream, self.syncs, self.copies = stream, 0, 0

    def synchronize(self):
        self.syncs += 1

    def copy_to_host(self, host, ptr):
        self.copies += 1
        ctypes.memmove(host.ctypes.data, ptr, host.nbytes)


def fake_array(values, stream=0xABC):
    buffer = types.SimpleNamespace(ptr=values.ctypes.data, nbytes=values.nbytes, keep=values)
    return DeviceArray(buffer, values.shape, values.dtype, FakeContext(stream))


def test_device_array_describes_itself_without_copying():
    array = fake_array(np.zeros((2, 3), np.float32))
    assert (array.shape, array.ndim, array.size, array.nbytes) == ((2, 3), 2, 6, 24)
    assert repr(array) == "DeviceArray(shape=(2, 3), dtype=float32, on the GPU)"
    assert array.context.copies == 0


def test_asarray_copies_on_request():
    values = np.arange(6, dtype=np.int32).reshape(2, 3)
    array = fake_array(values)
    np.testing.assert_array_equal(np.asarray(array), values)
    assert np.asarray(array, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="always copies"):
        np.asarray(array, copy=False)


def test_cuda_array_interface():
    values = np.zeros((4, 5), np.float16)
    assert fake_array(values).__cuda_array_interface__ == {
        "version": 3, "shape": (4, 5), "typestr": "<f2", "data": (values.ctypes.data, False),
        "strides": None, "stream": 0xABC}
    # the legacy default stream is 1 in the protocol (0 is not allowed)
    assert fake_array(values, stream=0).__cuda_array_interface__["stream"] == 1


def test_dlpack_export_of_a_device_array():
    before = device_array.exported_count()
    array = fake_array(np.ones(8, np.float32))
    assert array.__dlpack_device__() == (2, 0)
    with pytest.raises(BufferError):
        array.__dlpack__(dl_device=(1, 0))
    capsule = array.__dlpack__(stream=None)
    assert array.context.syncs == 1
    array.__dlpack__(stream=-1)  # -1: the consumer asked for no synchronisation
    assert array.context.syncs == 1
    assert device_array.exported_count() == before + 1  # the second was dropped at once
    del capsule
    gc.collect()
    assert device_array.exported_count() == before


def test_buffer_too_small_is_refused():
    buffer = types.SimpleNamespace(ptr=0x1000, nbytes=16)
    with pytest.raises(ValueError, match="does not fit"):
        DeviceArray(buffer, (5,), np.float32, FakeContext())


# --- cuBLAS's row-major swap, against a column-major GEMM emulated on the host ----------------


def column_major(ptr, rows, cols, ld, dtype):
    """The column-major matrix at host address `ptr` (leading dimension `ld`) as a view."""
    itemsize = np.dtype(dtype).itemsize
    raw = (ctypes.c_char * (((cols - 1) * ld + rows) * itemsize)).from_address(ptr)
    return np.ndarray((rows, cols), dtype, buffer=raw, strides=(itemsize, ld * itemsize))


def emulated_cublas(dtype):
    """cublasGemmStridedBatchedEx with host pointers, column-major as cuBLAS is."""
    item = np.dtype(dtype).itemsize
    N, T = 0, 1

    def gemm_strided_batched_ex(handle, transa, transb, m, n, k, alpha, a, atype, lda, stride_a,
                                b, btype, ldb, stride_b, beta, c, ctype, ldc, stride_c, batch,
                                compute, algo):
        for i in range(batch):
            op_a = column_major(a + i * stride_a * item, *((m, k) if transa == N else (k, m)),
                                lda, dtype)
            op_b = column_major(b + i * stride_b * item, *((k, n) if transb == N else (n, k)),
                                ldb, dtype)
            out = column_major(c + i * stride_c * item, m, n, ldc, dtype)
            out[...] = (op_a if transa == N else op_a.T) @ (op_b if transb == N else op_b.T)

    return types.SimpleNamespace(
        Operation=types.SimpleNamespace(N=N, T=T),
        ComputeType=types.SimpleNamespace(COMPUTE_32F=68, COMPUTE_32F_FAST_TF32=77,
                                          COMPUTE_64F=70),
        GemmAlgo=types.SimpleNamespace(DFALT=-1), create=lambda: 1,
        set_stream=lambda handle, stream: None,
        gemm_strided_batched_ex=gemm_strided_batched_ex)


class StreamOnly:
    stream = 0  # blas keeps one handle per context, in a weak dictionary


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_gemm_row_major_swap(monkeypatch, trans_a, trans_b):
    monkeypatch.setattr(blas, "_cublas", lambda: emulated_cublas(np.float64))
    monkeypatch.setattr(blas, "_data_types", lambda: {np.dtype(np.float64): 1})
    m, n, k, batch = 3, 5, 4, 2
    rng = np.random.default_rng(0)
    a = rng.normal(size=(batch, k, m) if trans_a else (batch, m, k))
    b = rng.normal(size=(batch, n, k) if trans_b else (batch, k, n))
    c = np.zeros((batch, m, n))
    blas.gemm(StreamOnly(), m=m, n=n, k=k, a=a.ctypes.data, b=b.ctypes.data,
              c=c.ctypes.data, dtype=np.float64, trans_a=trans_a, trans_b=trans_b, batch=batch,
              stride_a=m * k, stride_b=k * n, stride_c=m * n)
    want = (a.transpose(0, 2, 1) if trans_a else a) @ (b.transpose(0, 2, 1) if trans_b else b)
    np.testing.assert_allclose(c, want, rtol=1e-12)


def test_gemm_refuses_other_types(monkeypatch):
    monkeypatch.setattr(blas, "_data_types", lambda: {np.dtype(np.float64): 1})
    with pytest.raises(ExecutionError, match="unsupported element type int32"):
        blas.gemm(None, m=1, n=1, k=1, a=0, b=0, c=0, dtype=np.int32, trans_a=False,
                  trans_b=False)
