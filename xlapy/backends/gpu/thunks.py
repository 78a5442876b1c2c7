"""What a GPU executable does, step by step, on the host side: thunks, as XLA:GPU
calls them. A kernel launch, a cuBLAS call, a copy between buffers, or control
flow whose predicate is read back from the device. Buffers are named by their
buffer-assignment slices; the runner (`executable.py`) turns slices into
addresses, so one thunk sequence runs on a device or in the host emulation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xlapy.analysis.buffer_assignment import Slice


@dataclass(frozen=True)
class Launch:
    """A launch configuration. `barriers`: the kernel synchronises its block
    (the host emulation then runs one thread per block)."""

    grid: int
    block: int
    barriers: bool = False


@dataclass
class KernelThunk:
    kernel: str
    """The kernel's symbol in the module's PTX."""
    arguments: list[Slice]
    launch: Launch
    instruction: str = ""


@dataclass
class GemmThunk:
    """A `dot` as one (batched) row-major GEMM, C = op(A) @ op(B): cuBLAS on the device
    where it is available, else the generated kernel `fallback`, which computes the
    same instruction (the host emulation always runs it)."""

    lhs: Slice
    rhs: Slice
    out: Slice
    m: int
    n: int
    k: int
    batch: int
    trans_a: bool
    trans_b: bool
    dtype: str
    fallback: KernelThunk
    instruction: str = ""


@dataclass
class CopyThunk:
    """Device-to-device copies, made as one: sources that are also targets are
    staged through `scratch` first (a slice of the temporary arena)."""

    moves: list[tuple[Slice, Slice]]
    """(source, target) pairs."""
    staged: bool = False


@dataclass
class WhileThunk:
    condition: list
    predicate: Slice
    body: list
    instruction: str = ""


@dataclass
class ConditionalThunk:
    selector: Slice
    selector_type: str
    """The selector's NumPy dtype name: "bool" picks branch 0 on true, else the index
    (out of range: the last branch), as XLA defines it."""
    branches: list[list] = field(default_factory=list)
    instruction: str = ""


def kernels_of(thunks: list) -> list[KernelThunk]:
    """Every kernel launch in `thunks`, nested control flow included."""
    found = []
    for thunk in thunks:
        if isinstance(thunk, KernelThunk):
            found.append(thunk)
        elif isinstance(thunk, GemmThunk):
            found.append(thunk.fallback)
        elif isinstance(thunk, WhileThunk):
            found += kernels_of(thunk.condition) + kernels_of(thunk.body)
        elif isinstance(thunk, ConditionalThunk):
            for branch in thunk.branches:
                found += kernels_of(branch)
    return found
