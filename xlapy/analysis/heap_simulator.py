"""Packing buffers with known live ranges into one arena: XLA's heap simulator.

XLA's buffer assigner hands every temporary to a heap simulator running
`GlobalDecreasingSizeBestFitHeap`: buffers are sorted (largest first, or
longest-lived first), and each is placed in the tightest free gap of the
arena over its live range — the smallest hole between the chunks of buffers
live at the same time that still fits it, else on top. Buffers whose lives
do not overlap may share bytes; that reuse is what makes the arena smaller
than the sum of its buffers. Offsets are aligned (64 bytes, XLA:CPU's
alignment for vectorised loads); sizes are kept exact.

We run both sort orders and keep the smaller arena, as XLA's
`ChooseBestHeapAlgorithm` does. The result is plain data: an offset per
interval id and the arena's size.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

ALIGNMENT = 64
"""XLA:CPU's minimum buffer alignment (cpu_function_runtime::MinAlign)."""


@dataclass(frozen=True)
class BufferInterval:
    """A buffer of `size` bytes live over the times [start, end], inclusive."""

    id: int
    size: int
    start: int
    end: int

    def overlaps(self, other: BufferInterval) -> bool:
        return self.start <= other.end and other.start <= self.end


@dataclass(frozen=True)
class HeapResult:
    """`offsets[id]` for every interval; `heap_size` the arena's bytes (the
    highest end of any chunk); `order` the sort that produced it."""

    offsets: dict[int, int]
    heap_size: int
    order: str


def align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def best_fit_heap(intervals: Iterable[BufferInterval], *,
                  alignment: int = ALIGNMENT) -> HeapResult:
    """The smaller of the spatial (largest first) and temporal (longest-lived first)
    best-fit packings; spatial wins ties, as XLA's default sort."""
    intervals = list(intervals)
    spatial = pack(intervals, alignment=alignment, order="spatial")
    temporal = pack(intervals, alignment=alignment, order="temporal")
    return temporal if temporal.heap_size < spatial.heap_size else spatial


def pack(intervals: Iterable[BufferInterval], *, alignment: int = ALIGNMENT,
         order: str = "spatial") -> HeapResult:
    """Place each interval, in `order`, into the tightest hole that fits it.

    "spatial": by size, largest first, then longer lives first;
    "temporal": by live-range length, longest first, then size. Ids break ties
    so the result is deterministic. Zero-sized intervals take offset 0.
    """
    if order not in _SORT_KEYS:
        raise ValueError(f"unknown heap order {order!r}; expected one of {sorted(_SORT_KEYS)}")
    placed: list[tuple[BufferInterval, int]] = []
    offsets: dict[int, int] = {}
    heap_size = 0
    for interval in sorted(intervals, key=_SORT_KEYS[order]):
        if interval.size == 0:
            offsets[interval.id] = 0
            continue
        offset = _best_fit(interval, placed, alignment)
        offsets[interval.id] = offset
        placed.append((interval, offset))
        heap_size = max(heap_size, offset + interval.size)
    return HeapResult(offsets, heap_size, order)


_SORT_KEYS = {
    "spatial": lambda b: (-b.size, b.start - b.end, b.id),
    "temporal": lambda b: (b.start - b.end, -b.size, b.id),
}


def _best_fit(interval: BufferInterval, placed, alignment: int) -> int:
    """The aligned offset in the smallest free hole that fits, else the top of the
    chunks live at the same time (the unbounded hole)."""
    busy = sorted((offset, offset + other.size) for other, offset in placed
                  if other.overlaps(interval))
    best: tuple[int, int] | None = None  # (hole size, offset)
    cursor = 0
    for low, high in busy:
        if low > cursor:
            best = _tighter(best, cursor, low, interval.size, alignment)
        cursor = max(cursor, high)
    if best is not None:
        return best[1]
    return align_up(cursor, alignment)


def _tighter(best, low: int, high: int, size: int, alignment: int):
    offset = align_up(low, alignment)
    if offset + size > high:
        return best
    candidate = (high - low, offset)
    return candidate if best is None or candidate < best else best


def peak_live_bytes(intervals: Iterable[BufferInterval]) -> int:
    """The most bytes live at one time: the lower bound any packing must meet."""
    events: dict[int, int] = {}
    for interval in intervals:
        events[interval.start] = events.get(interval.start, 0) + interval.size
        events[interval.end + 1] = events.get(interval.end + 1, 0) - interval.size
    peak = live = 0
    for time in sorted(events):
        live += events[time]
        peak = max(peak, live)
    return peak
