"""Meshes and partition specs, as `jax.sharding`: a `Mesh` names the axes of an
array of devices (one per process here), and a `PartitionSpec` says which mesh
axes each dimension of an array is split over (None: not split)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from xlapy import distributed


class PartitionSpec(tuple):
    """One entry per array dimension: None, a mesh axis name, or a tuple of names
    (the dimension split over their product, the first name major)."""

    def __new__(cls, *entries):
        return super().__new__(cls, entries)

    def __repr__(self) -> str:
        return f"PartitionSpec{tuple.__repr__(self)}"

    def axes_of(self, dimension: int) -> tuple[str, ...]:
        """The mesh axes dimension `dimension` is split over (() when not split)."""
        if dimension >= len(self) or self[dimension] is None:
            return ()
        entry = self[dimension]
        return tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)


P = PartitionSpec


class Mesh:
    """Devices in an array whose axes have names: `Mesh(devices, ("x", "y"))`."""

    def __init__(self, devices, axis_names: Sequence[str]):
        ids = np.vectorize(lambda d: getattr(d, "id", d), otypes=[np.int64])(np.asarray(
            devices, dtype=object))
        axis_names = tuple(axis_names)
        if ids.ndim != len(axis_names):
            raise ValueError(f"Mesh: {len(axis_names)} axis names for a device array of "
                             f"rank {ids.ndim}")
        if len(set(axis_names)) != len(axis_names):
            raise ValueError(f"Mesh: axis names repeat: {axis_names}")
        if sorted(ids.reshape(-1).tolist()) != list(range(ids.size)):
            raise ValueError(f"Mesh: the devices must be ids 0..{ids.size - 1}, each once; "
                             f"got {ids.reshape(-1).tolist()}")
        if ids.reshape(-1).tolist() != list(range(ids.size)):
            raise ValueError("Mesh: xlapy lays devices out in rank order (device i at "
                             "row-major position i): reshape xlapy.distributed.devices()")
        self.device_ids = ids
        self.axis_names = axis_names

    @property
    def shape(self) -> dict[str, int]:
        return dict(zip(self.axis_names, self.device_ids.shape))

    @property
    def size(self) -> int:
        return int(self.device_ids.size)

    def __repr__(self) -> str:
        axes = ", ".join(f"'{n}': {s}" for n, s in self.shape.items())
        return f"Mesh({axes})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Mesh) and self.axis_names == other.axis_names and \
            self.device_ids.shape == other.device_ids.shape

    def __hash__(self) -> int:
        return hash((self.axis_names, self.device_ids.shape))


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[str]) -> Mesh:
    """A mesh of this job's devices (`xlapy.distributed.devices()`) in that shape."""
    devices = distributed.devices()
    if int(np.prod(axis_shapes)) != len(devices):
        raise ValueError(f"make_mesh: a {tuple(axis_shapes)} mesh needs "
                         f"{int(np.prod(axis_shapes))} devices; this job has {len(devices)} "
                         "(one per MPI process)")
    return Mesh(np.array(devices, dtype=object).reshape(tuple(axis_shapes)), axis_names)


__all__ = ["Mesh", "P", "PartitionSpec", "make_mesh"]
