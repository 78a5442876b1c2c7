"""The GPU runtime on a real device: copies, the allocator, a hand-written PTX
kernel, exports to PyTorch and CuPy, and cuBLAS against NumPy. Skipped without
an NVIDIA GPU and its driver."""

import gc
import threading

import ml_dtypes
import numpy as np
import pytest

from xlapy.backends.gpu import blas, driver
from xlapy.backends.gpu.device_array import DeviceArray, default_allocator, device_put
from xlapy.errors import CompileError

pytestmark = pytest.mark.skipif(not driver.available(),
                                reason="needs an NVIDIA GPU and its driver")

# out[i] = in[i] + 1.0f for i = ctaid.x * ntid.x + tid.x; the launch covers the
# array exactly, so there is no bounds check. Written by hand for PTX ISA 7.0.
ADD_ONE_PTX = """
.version 7.0
.target sm_50
.address_size 64

.visible .entry add_one(
    .param .u64 add_one_src,
    .param .u64 add_one_dst
)
{
    .reg .f32 %f<3>;
    .reg .b32 %r<5>;
    .reg .b64 %rd<8>;

    ld.param.u64 %rd1, [add_one_src];
    ld.param.u64 %rd2, [add_one_dst];
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.s32 %r4, %r1, %r2, %r3;
    mul.wide.s32 %rd5, %r4, 4;
    add.s64 %rd6, %rd3, %rd5;
    add.s64 %rd7, %rd4, %rd5;
    ld.global.f32 %f1, [%rd6];
    add.f32 %f2, %f1, 0f3F800000;
    st.global.f32 [%rd7], %f2;
    ret;
}
"""


def test_context_describes_the_device():
    ctx = driver.context()
    assert ctx is driver.context()
    assert ctx.name and ctx.arch == "sm_{}{}".format(*ctx.compute_capability)
    assert isinstance(ctx.stream, int) and ctx.stream != 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16,
                                   np.int8, np.int32, np.int64, np.uint8, np.bool_])
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 129)])
def test_round_trip(dtype, shape):
    values = np.asarray(np.random.default_rng(0).normal(size=shape) * 10).astype(dtype)
    on_gpu = device_put(values)
    assert isinstance(on_gpu, DeviceArray)
    assert on_gpu.shape == values.shape and on_gpu.dtype == values.dtype
    back = np.asarray(on_gpu)
    assert back.dtype == values.dtype
    np.testing.assert_array_equal(back.view(np.uint8), values.view(np.uint8))


def test_allocator_reuses_freed_buffers():
    allocator = default_allocator()
    first = device_put(np.ones(1000, np.float32))
    ptr = first.ptr
    del first
    gc.collect()
    again = device_put(np.zeros(900, np.float32))  # the same 4 KiB bin
    assert again.ptr == ptr
    assert allocator.stats()["bytes_in_use"] >= 4096


def test_memset_and_device_copy():
    ctx = driver.context()
    src = device_put(np.zeros(64, np.uint8))
    dst = device_put(np.zeros(64, np.uint8))
    ctx.memset(src.ptr, 0xAB, 64)
    ctx.copy_device(dst.ptr, src.ptr, 64)
    assert (np.asarray(dst) == 0xAB).all()


def test_hand_written_ptx_kernel():
    ctx = driver.context()
    module = ctx.load_ptx(ADD_ONE_PTX)
    assert module.name == "add_one" and module.cubin and len(module.cubin) > 100
    values = np.arange(1024, dtype=np.float32)
    src, dst = device_put(values), device_put(np.zeros_like(values))
    ctx.launch(module.function("add_one"), (4, 1, 1), (256, 1, 1), 0, [src.ptr, dst.ptr])
    np.testing.assert_array_equal(np.asarray(dst), values + 1)
    # the linked cubin loads again without the PTX
    reloaded = ctx.load_cubin(module.cubin)
    ctx.launch(reloaded.function("add_one"), (4, 1, 1), (256, 1, 1), 0, [dst.ptr, dst.ptr])
    np.testing.assert_array_equal(np.asarray(dst), values + 2)


def test_bad_ptx_is_a_compile_error_with_the_log():
    broken = ADD_ONE_PTX.replace("add.f32 %f2, %f1, 0f3F800000;", "add.f32 %f2, %f9, nonsense;")
    with pytest.raises(CompileError, match="add_one"):
        driver.context().load_ptx(broken)


def test_context_in_another_thread():
    results = []

    def work():
        results.append(np.asarray(device_put(np.arange(5, dtype=np.int32))))

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    np.testing.assert_array_equal(results[0], np.arange(5, dtype=np.int32))


def test_torch_reads_device_arrays():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    tensor = torch.from_dlpack(device_put(values))
    assert tensor.device.type == "cuda" and tuple(tensor.shape) == (3, 4)
    np.testing.assert_array_equal(tensor.cpu().numpy(), values)
    halves = torch.from_dlpack(device_put(values.astype(ml_dtypes.bfloat16)))
    assert halves.dtype == torch.bfloat16
    via_interface = torch.as_tensor(device_put(values), device="cuda")
    np.testing.assert_array_equal(via_interface.cpu().numpy(), values)


def test_cupy_reads_device_arrays():
    cupy = pytest.importorskip("cupy")
    values = np.arange(10, dtype=np.float64)
    np.testing.assert_array_equal(cupy.asnumpy(cupy.asarray(device_put(values))), values)
    np.testing.assert_array_equal(cupy.asnumpy(cupy.from_dlpack(device_put(values))), values)


def _gemm(dtype, m, n, k, trans_a, trans_b, batch=1):
    rng = np.random.default_rng(1)
    a_shape = (batch, k, m) if trans_a else (batch, m, k)
    b_shape = (batch, n, k) if trans_b else (batch, k, n)
    a = rng.normal(size=a_shape).astype(dtype)
    b = rng.normal(size=b_shape).astype(dtype)
    a_gpu, b_gpu = device_put(a), device_put(b)
    c_gpu = device_put(np.zeros((batch, m, n), dtype))
    blas.gemm(driver.context(), m=m, n=n, k=k, a=a_gpu.ptr, b=b_gpu.ptr, c=c_gpu.ptr,
              dtype=dtype, trans_a=trans_a, trans_b=trans_b, batch=batch,
              stride_a=m * k, stride_b=k * n, stride_c=m * n)
    op_a = a.astype(np.float64).transpose(0, 2, 1) if trans_a else a.astype(np.float64)
    op_b = b.astype(np.float64).transpose(0, 2, 1) if trans_b else b.astype(np.float64)
    return np.asarray(c_gpu).astype(np.float64), op_a @ op_b


@pytest.mark.skipif(not blas.gemm_available(), reason="needs nvmath-python and cuBLAS")
@pytest.mark.parametrize("dtype, tolerance", [(np.float32, 1e-4), (np.float64, 1e-12),
                                              (np.float16, 2e-2), (ml_dtypes.bfloat16, 1e-1)])
@pytest.mark.parametrize("trans_a, trans_b", [(False, False), (True, False), (False, True),
                                              (True, True)])
def test_gemm_matches_numpy(dtype, tolerance, trans_a, trans_b):
    got, want = _gemm(dtype, m=33, n=17, k=65, trans_a=trans_a, trans_b=trans_b, batch=2)
    scale = np.abs(want).max()
    np.testing.assert_allclose(got, want, atol=tolerance * scale, rtol=tolerance)
