"""Large results reuse the buffer of a result the caller dropped, and never one
the caller still holds (directly or through a view)."""

from __future__ import annotations

import numpy as np

import xlapy
import xlapy.numpy as xnp
from xlapy.backends.cpu.output_recycler import MIN_BYTES, OutputRecycler

N = MIN_BYTES // 4 * 2   # float32 elements: 2 MB, over the recycling threshold


def test_a_dropped_buffer_is_reused_and_a_held_one_is_not():
    recycler = OutputRecycler()
    first = recycler.buffer(0, MIN_BYTES)
    address = first.ctypes.data
    second = recycler.buffer(0, MIN_BYTES)        # `first` is still held
    assert second.ctypes.data != address
    del first
    view = second[5:9]
    del second
    third = recycler.buffer(0, MIN_BYTES)         # `second` lives on in `view`
    assert third.ctypes.data != view.ctypes.data - 5
    kept = third.ctypes.data
    del third
    assert recycler.buffer(0, MIN_BYTES).ctypes.data == kept


def test_small_buffers_are_not_kept():
    recycler = OutputRecycler()
    recycler.buffer(0, 1024)
    assert 0 not in recycler._kept


def test_results_held_by_the_caller_keep_their_values():
    f = xlapy.jit(lambda x: x * 2.0 + 1.0, backend="cpu")
    x = np.arange(N, dtype=np.float32)
    held = f(x)
    part = f(x + 1)[100:200]          # the whole result is dropped, a view kept
    for k in range(3):
        fresh = f(x + k)
        np.testing.assert_array_equal(fresh, (x + k) * 2 + 1)
    np.testing.assert_array_equal(held, x * 2 + 1)
    np.testing.assert_array_equal(part, (x[100:200] + 1) * 2 + 1)


def test_tuple_results_recycle_each_output():
    f = xlapy.jit(lambda x: (x + 1.0, xnp.sum(x), x * 3.0), backend="cpu")
    x = np.ones(N, np.float32)
    kept = f(x)
    for _ in range(3):
        a, s, b = f(x)
        np.testing.assert_array_equal(a, 2.0)
        np.testing.assert_array_equal(b, 3.0)
        assert s == N
    np.testing.assert_array_equal(kept[0], 2.0)
    np.testing.assert_array_equal(kept[2], 3.0)
