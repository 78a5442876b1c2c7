"""`xlapy.distributed`: several processes, one device each, as XLA runs a
module on several devices (JAX's `jax.distributed`).

Launch N processes with `mpiexec -n N python prog.py`; each calls
`initialize()` (or runs a module for N devices, which initialises MPI), and a
module with `replica_count * num_partitions == N` runs as device number
`process_index()` of N, its collectives computed over MPI. mpi4py is imported
only here, on first use: `import xlapy` never needs MPI.
"""

from __future__ import annotations

from dataclasses import dataclass

from xlapy.distributed import world as _world


@dataclass(frozen=True)
class Device:
    """One process's CPU device: its id (the process's rank) and process."""

    id: int
    process_index: int
    platform: str = "cpu"

    def __repr__(self) -> str:
        return f"CpuDevice(id={self.id}, process_index={self.process_index})"


def initialize() -> None:
    """Start MPI (idempotent): this process becomes device `process_index()`."""
    _world.initialize()


def is_initialized() -> bool:
    return _world.world() is not None


def _started():
    """The World: MPI starts by itself in a process `mpiexec` launched."""
    w = _world.world()
    if w is None and _world.launched_by_mpi():
        w = _world.initialize()
    return w


def process_index() -> int:
    """This process's rank (0 in a process not launched by mpiexec)."""
    w = _started()
    return w.rank if w is not None else 0


def process_count() -> int:
    """How many processes the job has (1 in a process not launched by mpiexec)."""
    w = _started()
    return w.size if w is not None else 1


def collective_seconds() -> float:
    """Time this process has spent in collectives (waiting and exchanging data)."""
    w = _world.world()
    return w.collective_seconds if w is not None else 0.0


def devices() -> list[Device]:
    """Every process's CPU device, in rank order."""
    return [Device(i, i) for i in range(process_count())]


def local_devices() -> list[Device]:
    """This process's device."""
    return [Device(process_index(), process_index())]


__all__ = ["Device", "collective_seconds", "devices", "initialize", "is_initialized",
           "local_devices", "process_count", "process_index"]
