"""The heap simulator: best-fit packing of live intervals into one arena, with
alignment, reuse of dead bytes, and both of XLA's sort orders."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xlapy.analysis.heap_simulator import (
    BufferInterval,
    align_up,
    best_fit_heap,
    pack,
    peak_live_bytes,
)


def iv(id_, size, start, end):
    return BufferInterval(id_, size, start, end)


def test_dead_bytes_are_reused():
    # a lives [0,1], b [2,3]: b takes a's bytes once a is dead
    result = best_fit_heap([iv(0, 256, 0, 1), iv(1, 256, 2, 3)])
    assert result.offsets == {0: 0, 1: 0}
    assert result.heap_size == 256


def test_overlapping_lives_get_disjoint_aligned_chunks():
    result = best_fit_heap([iv(0, 10, 0, 2), iv(1, 10, 1, 3)])
    assert sorted(result.offsets.values()) == [0, 64]
    assert result.heap_size == 74


def test_alignment_is_a_parameter():
    result = best_fit_heap([iv(0, 10, 0, 2), iv(1, 10, 1, 3)], alignment=1)
    assert sorted(result.offsets.values()) == [0, 10]
    assert result.heap_size == 20
    assert align_up(65, 64) == 128 and align_up(64, 64) == 64 and align_up(0, 64) == 0


def test_an_instant_of_overlap_is_overlap():
    # an instruction's operand (ends at t) and output (starts at t) are live together
    result = best_fit_heap([iv(0, 64, 0, 5), iv(1, 64, 5, 9)])
    assert result.offsets[0] != result.offsets[1]


def test_best_fit_takes_the_tightest_hole():
    # Placed largest first. After t=3 the short-lived b and d leave holes of 192
    # bytes ([256,448]) and 128 bytes ([576,704]); f (32 bytes, t=5..9) goes in the
    # tighter one, where first-fit would have taken offset 256.
    intervals = [iv(0, 256, 0, 9), iv(1, 192, 0, 3), iv(2, 128, 0, 9), iv(3, 96, 0, 3),
                 iv(4, 64, 0, 9), iv(5, 32, 5, 9)]
    result = pack(intervals, order="spatial")
    assert [result.offsets[i] for i in range(5)] == [0, 256, 448, 576, 704]
    assert result.offsets[5] == 576
    assert result.heap_size == 768


def test_no_hole_fits_goes_on_top():
    intervals = [iv(0, 128, 0, 9), iv(1, 64, 0, 3), iv(2, 128, 0, 9), iv(3, 100, 5, 9)]
    result = pack(intervals, order="spatial")
    # the 64-byte hole left by interval 1 is too small for 100 bytes
    assert result.offsets[3] == 256
    assert result.heap_size == 356


def test_zero_sized_intervals_take_no_space():
    result = best_fit_heap([iv(0, 0, 0, 9), iv(1, 64, 0, 9)])
    assert result.offsets == {0: 0, 1: 0}
    assert result.heap_size == 64


def test_the_smaller_of_the_two_orders_is_kept():
    intervals = [iv(0, 100, 0, 0), iv(1, 60, 0, 10), iv(2, 100, 5, 10), iv(3, 40, 1, 4)]
    spatial, temporal = pack(intervals, order="spatial"), pack(intervals, order="temporal")
    best = best_fit_heap(intervals)
    assert best.heap_size == min(spatial.heap_size, temporal.heap_size)
    assert best.order == ("temporal" if temporal.heap_size < spatial.heap_size else "spatial")


def test_unknown_order_is_refused():
    with pytest.raises(ValueError, match="unknown heap order"):
        pack([], order="random")


def test_deterministic():
    intervals = [iv(i, 64 * (i % 3 + 1), i % 4, i % 4 + 3) for i in range(12)]
    assert best_fit_heap(intervals) == best_fit_heap(list(reversed(intervals)))


@given(st.lists(st.tuples(st.integers(0, 300), st.integers(0, 20), st.integers(0, 6)),
                max_size=25),
       st.sampled_from([1, 8, 64]))
def test_packing_is_valid_and_above_the_lower_bound(specs, alignment):
    intervals = [iv(i, size, start, start + length) for i, (size, start, length) in
                 enumerate(specs)]
    result = best_fit_heap(intervals, alignment=alignment)
    for a in intervals:
        assert result.offsets[a.id] % alignment == 0
        assert result.offsets[a.id] + a.size <= result.heap_size
        for b in intervals:
            if a.id < b.id and a.size and b.size and a.overlaps(b):
                lo_a, lo_b = result.offsets[a.id], result.offsets[b.id]
                assert lo_a + a.size <= lo_b or lo_b + b.size <= lo_a, (a, b)
    assert result.heap_size >= peak_live_bytes(intervals)
    assert result.heap_size <= sum(align_up(a.size, alignment) for a in intervals)
