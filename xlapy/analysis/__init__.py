"""Analyses of HLO modules: liveness, buffer assignment (with XLA's heap
simulator), memory totals and cost analysis.

Each is plain data computed from a module, read by backends, dumps and
`Compiled.memory_analysis()` / `Compiled.cost_analysis()`.
"""

from xlapy.analysis.buffer_assignment import (
    Allocation,
    BufferAssignment,
    Slice,
    assign_buffers,
)
from xlapy.analysis.cost_analysis import cost_analysis
from xlapy.analysis.heap_simulator import BufferInterval, HeapResult, best_fit_heap
from xlapy.analysis.kernels import kernel_count
from xlapy.analysis.liveness import BufferKind, Liveness, LogicalBuffer
from xlapy.analysis.memory_analysis import MemoryAnalysis, memory_analysis, no_reuse_bytes

__all__ = [
    "Allocation", "BufferAssignment", "BufferInterval", "BufferKind", "HeapResult", "Liveness",
    "LogicalBuffer", "MemoryAnalysis", "Slice", "assign_buffers", "best_fit_heap",
    "cost_analysis", "kernel_count", "memory_analysis", "no_reuse_bytes",
]
