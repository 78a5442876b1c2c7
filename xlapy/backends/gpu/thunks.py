"""What a GPU executable does, step by step, on the host side: thunks, as XLA:GPU
calls them. A kernel launch, a cuBLAS call, a copy between buffers, or control
flow whose predicate is read back from the device. Buffers are named by their
buffer-assignment slices; the runner (`executable.py`) turns slices into
addresses, so one thunk sequence runs on a device or in the host emulation.

`to_json` / `from_json` write a thunk program as plain JSON values and read it
back, for the disk cache: each thunk, launch and slice an object naming its
type, read back only as one of the types here (never arbitrary objects).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass

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


def to_json(value):
    """Thunks (or any value inside one) as JSON values: a thunk, Launch or Slice is an
    object {"type": its class name, field: value...}; a tuple is {"tuple": [...]}."""
    if is_dataclass(value):
        return {"type": type(value).__name__,
                **{f.name: to_json(getattr(value, f.name)) for f in fields(value)}}
    if isinstance(value, list):
        return [to_json(v) for v in value]
    if isinstance(value, tuple):
        return {"tuple": [to_json(v) for v in value]}
    if isinstance(value, (bool, int, str)):
        return value
    raise TypeError(f"a thunk holds a {type(value).__name__}, which has no JSON form")


def from_json(data):
    """What `to_json` wrote; ValueError or TypeError for anything it could not have."""
    if isinstance(data, list):
        return [from_json(v) for v in data]
    if isinstance(data, dict):
        if set(data) == {"tuple"}:
            return tuple(from_json(v) for v in data["tuple"])
        cls = _TYPES.get(data.get("type"))
        if cls is None:
            raise ValueError(f"not a thunk type: {data.get('type')!r}")
        return cls(**{k: from_json(v) for k, v in data.items() if k != "type"})
    if isinstance(data, (bool, int, str)):
        return data
    raise ValueError(f"unexpected {type(data).__name__} in a thunk record")


def slices_of(value) -> list[Slice]:
    """Every buffer slice `value` (thunks, nested) names."""
    if isinstance(value, Slice):
        return [value]
    if is_dataclass(value):
        value = [getattr(value, f.name) for f in fields(value)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in slices_of(v)]
    return []


_TYPES = {cls.__name__: cls for cls in (KernelThunk, GemmThunk, CopyThunk, WhileThunk,
                                        ConditionalThunk, Launch, Slice)}
