"""The LLVM GEMM kernel against NumPy: every dtype, shapes with 0/1 and ragged edges,
transposed, sliced and reversed operands, the blocked kernel with tiny blocks (so
every block loop and edge runs on small shapes), the threaded bands, and guard
pages around the operands (any out-of-bounds access faults)."""

import ctypes
import functools
import mmap

import llvmlite.ir as ir
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from xlapy.backends.cpu import llvm_target
from xlapy.backends.cpu.kernels import gemm
from xlapy.backends.cpu.kernels.gemm_blocked import blocked_gemm
from xlapy.backends.cpu.kernels.gemm_microkernel import Blocking, blocking, vector_bits
from xlapy.backends.cpu.kernels.gemm_simple import simple_gemm
from xlapy.codegen import ir_types
from xlapy.hlo.dtypes import PrimitiveType

FLOATS = [np.float32, np.float64]
OTHERS = [np.float16, ml_dtypes.bfloat16, np.int8, np.int16, np.int32, np.int64, np.uint8,
          np.uint16, np.uint32, np.uint64, np.bool_, np.complex64, np.complex128]
LAYOUTS = ["row", "col", "sliced", "reversed"]
_SIGNATURE = ctypes.CFUNCTYPE(None, *[ctypes.c_int64] * 3,
                              *[ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64] * 2,
                              ctypes.c_void_p, ctypes.c_int64)


class Kernel:
    """A compiled gemm callable on NumPy views (which must share the kernel's dtype)."""

    def __init__(self, emit, name: str):
        module = llvm_target.new_module(name)
        fn = emit(module)
        entry = ir.Function(module, fn.ftype, "gemm_entry")
        builder = ir.IRBuilder(entry.append_basic_block())
        builder.call(fn, entry.args)
        builder.ret_void()
        self._object = llvm_target.LoadedObject(llvm_target.compile_to_object(module))
        self._fn = _SIGNATURE(self._object.address("gemm_entry"))

    def __call__(self, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
        size = a.itemsize
        (m, k), n = a.shape, b.shape[1]
        assert c.strides[1] == size and b.shape[0] == k and c.shape == (m, n)
        self._fn(m, n, k, a.ctypes.data, a.strides[0] // size, a.strides[1] // size,
                 b.ctypes.data, b.strides[0] // size, b.strides[1] // size,
                 c.ctypes.data, c.strides[0] // size)


@functools.cache
def kernel(dtype) -> Kernel:
    """What the dot emitter gets on one thread."""
    return Kernel(lambda module: gemm.gemm_function(module, np.dtype(dtype), 1),
                  f"gemm_{np.dtype(dtype).name}")


@functools.cache
def threaded_kernel(dtype) -> Kernel:
    """Two threads from the first multiply-add on, so tiny products are cut in bands."""
    saved = gemm.MACS_PER_THREAD
    gemm.MACS_PER_THREAD = 1
    try:
        return Kernel(lambda module: gemm.gemm_function(module, np.dtype(dtype), 2),
                      f"gemm_threaded_{np.dtype(dtype).name}")
    finally:
        gemm.MACS_PER_THREAD = saved


@functools.cache
def tiny_block_kernel(dtype) -> Kernel:
    """The blocked kernel with blocks of a few elements: every loop of the nest runs."""
    ptype = PrimitiveType.from_numpy(dtype)
    element = ir_types.storage_type(ptype)

    def emit(module):
        lanes = blocking(np.dtype(dtype).itemsize, vector_bits(module)).lanes
        blk = Blocking(lanes=lanes, mr=3, nv=2, kc=5, mc=6, nc=4 * lanes)
        fallback = simple_gemm(module, ptype, "simple")
        return blocked_gemm(module, element, blk, "tiny_blocked", fallback)

    return Kernel(emit, f"gemm_tiny_{np.dtype(dtype).name}")


@functools.cache
def width_kernel(dtype, bits: int) -> Kernel:
    """The blocked kernel as another vector width (AVX2, SSE/NEON) would have it."""
    ptype = PrimitiveType.from_numpy(dtype)

    def emit(module):
        blk = blocking(np.dtype(dtype).itemsize, bits)
        fallback = simple_gemm(module, ptype, "simple")
        return blocked_gemm(module, ir_types.storage_type(ptype), blk, "blocked", fallback)

    return Kernel(emit, f"gemm_{bits}_{np.dtype(dtype).name}")


@functools.cache
def simple_kernel(dtype) -> Kernel:
    """The loop nest alone (for f32/f64 it is the blocked kernel's malloc-failure path)."""
    ptype = PrimitiveType.from_numpy(dtype)
    return Kernel(lambda module: simple_gemm(module, ptype, "simple"),
                  f"gemm_simple_{np.dtype(dtype).name}")


# -- operands and the reference --------------------------------------------------------
def random_values(rng: np.random.Generator, shape, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.3
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def operand(rng, rows: int, cols: int, dtype, layout: str) -> np.ndarray:
    """A rows x cols view of `layout`: row-major, column-major (a transpose),
    every other row and third column of a bigger array, or reversed both ways."""
    if layout == "row":
        return random_values(rng, (rows, cols), dtype)
    if layout == "col":
        return random_values(rng, (cols, rows), dtype).T
    if layout == "sliced":
        return random_values(rng, (2 * rows + 1, 3 * cols + 2), dtype)[1::2, 2::3]
    return random_values(rng, (rows, cols), dtype)[::-1, ::-1]


def reference(a: np.ndarray, b: np.ndarray, dtype) -> np.ndarray:
    """The interpreter's dot: exact (wrapping) integers, OR of ANDs for bool, floats in
    float64/complex128 (then compared with a tolerance)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return (a.astype(np.int64) @ b.astype(np.int64)) != 0
    if dtype.kind in "iu":
        wide = np.uint64 if dtype.kind == "u" else np.int64
        return (a.astype(wide) @ b.astype(wide)).astype(dtype)
    wide = np.complex128 if dtype.kind == "c" else np.float64
    return a.astype(wide) @ b.astype(wide)


def check(c: np.ndarray, a: np.ndarray, b: np.ndarray, dtype) -> None:
    dtype = np.dtype(dtype)
    expected = reference(a, b, dtype)
    if dtype.kind in "iub":
        np.testing.assert_array_equal(c, expected)
        return
    wide = np.complex128 if dtype.kind == "c" else np.float64
    magnitude = np.abs(a.astype(wide)) @ np.abs(b.astype(wide))
    k = a.shape[1]
    part = ml_dtypes.finfo(np.float32 if dtype.itemsize == 2 else dtype)
    accumulate = 4 * (k + 2) * float(part.eps) * magnitude
    rounding = float(ml_dtypes.finfo(dtype).eps) * np.abs(expected)
    error = np.abs(c.astype(wide) - expected)
    assert np.all(error <= accumulate + rounding + float(part.tiny)), np.max(error)


def run(kern: Kernel, a: np.ndarray, b: np.ndarray, dtype) -> np.ndarray:
    """C through the kernel, written into a view with a sentinel border and padded rows."""
    m, n = a.shape[0], b.shape[1]
    sentinel = random_values(np.random.default_rng(99), (m + 2, n + 5), dtype)
    out = sentinel.copy()
    c = out[1:m + 1, 2:n + 2]
    kern(a, b, c)
    border = np.ones(out.shape, bool)
    border[1:m + 1, 2:n + 2] = False
    np.testing.assert_array_equal(out[border], sentinel[border])
    return c


# -- tests -----------------------------------------------------------------------------
dims = st.one_of(st.integers(0, 3), st.integers(4, 70))


@given(dtype=st.sampled_from(FLOATS + OTHERS), m=dims, n=dims, k=dims,
       layouts=st.tuples(st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS)),
       seed=st.integers(0, 2**16))
def test_gemm_matches_numpy(dtype, m, n, k, layouts, seed):
    rng = np.random.default_rng(seed)
    a = operand(rng, m, k, dtype, layouts[0])
    b = operand(rng, k, n, dtype, layouts[1])
    check(run(kernel(dtype), a, b, dtype), a, b, dtype)


@given(dtype=st.sampled_from(FLOATS), m=dims, n=st.integers(0, 150), k=st.integers(0, 40),
       layouts=st.tuples(st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS)),
       seed=st.integers(0, 2**16))
def test_blocked_kernel_with_tiny_blocks(dtype, m, n, k, layouts, seed):
    rng = np.random.default_rng(seed)
    a = operand(rng, m, k, dtype, layouts[0])
    b = operand(rng, k, n, dtype, layouts[1])
    check(run(tiny_block_kernel(dtype), a, b, dtype), a, b, dtype)


@given(dtype=st.sampled_from(FLOATS + [np.int32, np.complex64]), m=dims,
       n=st.one_of(dims, st.integers(60, 200)), k=dims, seed=st.integers(0, 2**16))
def test_threaded_bands(dtype, m, n, k, seed):
    rng = np.random.default_rng(seed)
    a = operand(rng, m, k, dtype, "row")
    b = operand(rng, k, n, dtype, "sliced")
    check(run(threaded_kernel(dtype), a, b, dtype), a, b, dtype)


@given(dtype=st.sampled_from(FLOATS), m=st.integers(8, 100), n=st.integers(1, 16),
       k=st.integers(0, 40), b_layout=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**16))
def test_thin_products_over_a_column_major_a(dtype, m, n, k, b_layout, seed):
    # gemm_thin: A's rows adjacent (a transposed view), N <= 16: vectors along M.
    rng = np.random.default_rng(seed)
    a = operand(rng, m, k, dtype, "col")
    b = operand(rng, k, n, dtype, b_layout)
    check(run(kernel(dtype), a, b, dtype), a, b, dtype)


def test_thin_product_with_subnormals():
    # The weight gradient of a trained softmax: x.T @ g with subnormal g. Each of the
    # k roundings is at most half the smallest subnormal (2^-150) or a relative eps/2.
    rng = np.random.default_rng(3)
    x = rng.random((100, 784), dtype=np.float32)
    g = (rng.standard_normal((100, 10)) * 1e-39).astype(np.float32)
    exact = x.T.astype(np.float64) @ g.astype(np.float64)
    c = run(kernel(np.float32), x.T, g, np.float32)
    magnitude = x.T.astype(np.float64) @ np.abs(g.astype(np.float64))
    bound = 100 * (2.0 ** -150 + 2.0 ** -24 * magnitude)
    assert np.all(np.abs(c - exact) <= bound)
    assert np.count_nonzero(c) > 0


@pytest.mark.parametrize("dtype", FLOATS)
def test_thin_product_recomputes_unscaled_when_scaling_overflows(dtype):
    # B's subnormals make the kernel scale B up by 2^s; with a huge A the scaled sums
    # overflow, and the product must come out as computed unscaled (finite here).
    info = np.finfo(dtype)
    a = np.full((40, 3), info.max / 8, dtype).T.copy().T    # column-major, huge
    b = np.zeros((3, 2), dtype)
    b[0, 0] = info.smallest_subnormal * 4
    b[1, 1] = 1.0
    c = run(kernel(dtype), a, b, dtype)
    np.testing.assert_array_equal(c[:, 1], a[:, 1])
    assert np.all(np.isfinite(c))
    np.testing.assert_array_equal(c[:, 0], (a[:, 0].astype(np.float64) * float(b[0, 0]))
                                  .astype(dtype) if dtype is np.float32 else a[:, 0] * b[0, 0])


@pytest.mark.parametrize("dtype", FLOATS)
def test_thin_product_with_nan_in_b(dtype):
    rng = np.random.default_rng(4)
    a = operand(rng, 40, 5, dtype, "col")
    b = operand(rng, 5, 3, dtype, "row")
    b[0, 0] = np.finfo(dtype).smallest_subnormal
    b[2, 1] = np.nan
    c = run(kernel(dtype), a, b, dtype)
    assert np.all(np.isnan(c[:, 1]))
    check(c[:, [0, 2]], a, b[:, [0, 2]], dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_simple_path_of_floats(dtype):
    rng = np.random.default_rng(5)
    for m, n, k in [(0, 3, 2), (3, 0, 2), (4, 5, 0), (7, 9, 13), (1, 1, 1)]:
        a = operand(rng, m, k, dtype, "col")
        b = operand(rng, k, n, dtype, "reversed")
        check(run(simple_kernel(dtype), a, b, dtype), a, b, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("m, n, k", [(1600, 70, 9), (50, 800, 400), (100, 10, 784),
                                     (13, 40, 390), (100, 128, 784), (37, 200, 1170)])
def test_block_boundaries_of_the_real_blocking(dtype, m, n, k):
    """Shapes past MC, NC or KC with the production blocking, in every variant (K =
    784 and 1170 leave a thin last K block, shared out over the others)."""
    rng = np.random.default_rng(m + n + k)
    a = operand(rng, m, k, dtype, "row")
    b = operand(rng, k, n, dtype, "row")
    check(run(threaded_kernel(dtype), a, b, dtype), a, b, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [40, 100])
def test_short_tiles_for_the_last_rows(dtype, n):
    """Every count of last rows (M mod MR), each computed by the shortest tile
    that covers it (4, 8 or 12 rows of a 12-row panel on AVX-512), with A read
    in place (N = 40) and packed (N = 100); and threaded bands of M cut at 4
    rows, so each band ends in a short tile."""
    rng = np.random.default_rng(n)
    for m in range(1, 26):
        a = operand(rng, m, 19, dtype, "row")
        b = operand(rng, 19, n, dtype, "row")
        check(run(kernel(dtype), a, b, dtype), a, b, dtype)
        check(run(width_kernel(dtype, 256), a, b, dtype), a, b, dtype)
    for m in (1024, 1000, 260):
        a = operand(rng, m, 24, dtype, "row")
        b = operand(rng, 24, 64, dtype, "sliced")
        check(run(threaded_kernel(dtype), a, b, dtype), a, b, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("m, n, k", [(50, 96, 390), (13, 64, 33), (7, 100, 16), (20, 32, 15)])
def test_panels_transposed_in_registers(dtype, m, n, k):
    """A row-major A (every x @ W: rows of MR, fewer than a block's lanes) and a
    transposed B (a dense layer's input gradient, attention's q @ k^T): whole
    panels are transposed in registers a square block at a time, with the last
    k % lanes values and the last, partial panel copied one by one."""
    rng = np.random.default_rng(m * n + k)
    a = operand(rng, m, k, dtype, "row")
    b = operand(rng, k, n, dtype, "col")
    check(run(threaded_kernel(dtype), a, b, dtype), a, b, dtype)
    for bits in (128, 256):   # blocks of 4 and 8 lanes, A's rows 4 or 6
        check(run(width_kernel(dtype, bits), a, b, dtype), a, b, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("bits", [128, 256])
def test_narrower_vector_widths(dtype, bits):
    rng = np.random.default_rng(bits)
    for m, n, k, layout in [(13, 7, 5, "row"), (30, 45, 17, "col"), (9, 130, 33, "sliced")]:
        a = operand(rng, m, k, dtype, layout)
        b = operand(rng, k, n, dtype, layout)
        check(run(width_kernel(dtype, bits), a, b, dtype), a, b, dtype)


def test_special_values_propagate():
    a = np.array([[np.inf, 1.0], [np.nan, 0.0]], np.float32)
    b = np.array([[1.0, 0.0], [2.0, 3.0]], np.float32)
    c = run(kernel(np.float32), a, b, np.float32)
    np.testing.assert_array_equal(c, np.array([[np.inf, np.nan], [np.nan, np.nan]], np.float32))


def test_accumulates_like_the_interpreter():
    """f16 sums in f32 and rounds once; integers wrap; bool is OR of ANDs."""
    a = np.full((1, 4096), 1.0, np.float16)
    b = np.full((4096, 1), 1.0, np.float16)
    assert run(kernel(np.float16), a, b, np.float16)[0, 0] == 4096  # f16 steps would stick at 2048
    a8 = np.full((1, 3), 100, np.int8)
    assert run(kernel(np.int8), a8, a8.T.copy(), np.int8)[0, 0] == 30000 % 256  # 48
    p = np.array([[True, False]])
    assert run(kernel(np.bool_), p, np.array([[False], [True]]), np.bool_)[0, 0] == False  # noqa: E712


# -- guard pages -----------------------------------------------------------------------
_libc = ctypes.CDLL(None)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_PAGE = mmap.PAGESIZE


class Guarded:
    """An array whose data touches a PROT_NONE page on one side: a read or write one
    element past it (`after`) or before it faults."""

    def __init__(self, shape, dtype, after: bool):
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape)) * dtype.itemsize
        pages = -(-nbytes // _PAGE) + 2
        self._map = mmap.mmap(-1, pages * _PAGE)
        base = ctypes.addressof(ctypes.c_char.from_buffer(self._map))
        for page in (0, pages - 1):
            assert _libc.mprotect(base + page * _PAGE, _PAGE, 0) == 0  # PROT_NONE
        start = (pages - 1) * _PAGE - nbytes if after else _PAGE
        self.array = np.frombuffer(self._map, dtype, int(np.prod(shape)), start).reshape(shape)

    def release(self):
        base = ctypes.addressof(ctypes.c_char.from_buffer(self._map))
        _libc.mprotect(base, len(self._map), 3)  # back to read/write so munmap is clean
        del self.array


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.complex64])
@pytest.mark.parametrize("after", [True, False])
@pytest.mark.parametrize("transposed", ["", "a", "b", "ab"])
@pytest.mark.parametrize("m, n, k", [(13, 37, 5), (25, 10, 3), (5, 70, 17), (1, 1, 1),
                                     (1, 37, 70), (70, 1, 37), (1, 100, 3), (40, 1, 1)])
def test_no_access_outside_the_operands(dtype, after, transposed, m, n, k):
    """Operands against guard pages; the M = 1 and N = 1 shapes take the
    matrix-vector kernels in both of their forms."""
    rng = np.random.default_rng(3)
    a_shape = (k, m) if "a" in transposed else (m, k)
    b_shape = (n, k) if "b" in transposed else (k, n)
    guards = [Guarded(a_shape, dtype, after), Guarded(b_shape, dtype, after),
              Guarded((m, n), dtype, after)]
    try:
        a, b, c = (g.array for g in guards)
        a[...] = random_values(rng, a.shape, dtype)
        b[...] = random_values(rng, b.shape, dtype)
        a = a.T if "a" in transposed else a
        b = b.T if "b" in transposed else b
        for kern in (kernel(dtype), threaded_kernel(dtype)):
            c[...] = 0
            kern(a, b, c)
            check(c, a, b, dtype)
    finally:
        for g in guards:
            g.release()
