"""SPMD programs as JAX users write them: `pmap` (one replica per process) and
`shard_map` (a function of per-device blocks over a mesh of processes).

Both are `jit` with axis names bound while the function is traced, so the
collectives of `xlapy.lax` (psum, all_gather, ppermute, ...) know their groups,
and with the module marked for several devices (`replica_count` for pmap,
`num_partitions` for shard_map). Each of N MPI processes compiles the same
module and runs it as its own device; `mpiexec -n N python prog.py` launches
them. In one process both work as on a single device.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xlapy import distributed
from xlapy.core.pytree import tree_flatten, tree_unflatten
from xlapy.core.trace import as_array
from xlapy.jit import JitFunction
from xlapy.lax import parallel
from xlapy.lax.indexing import dynamic_slice
from xlapy.lax.reshaping import reshape
from xlapy.sharding import Mesh, PartitionSpec


class PmapFunction(JitFunction):
    """A pmapped function: each process is one replica of `axis_name`, and passes
    arrays whose leading axis is its one local device (size 1), as in JAX's
    multi-process pmap; results come back with that axis."""

    def __init__(self, fn: Callable, axis_name, in_axes, static_broadcasted_argnums,
                 donate_argnums, backend):
        super().__init__(fn, static_argnums=static_broadcasted_argnums,
                         donate_argnums=donate_argnums, backend=backend)
        self.axis_name = axis_name
        self.in_axes = in_axes
        self.replicas = distributed.process_count()

    def module_attributes(self) -> dict:
        return {"replica_count": self.replicas} if self.replicas > 1 else {}

    def traced_call(self, args, kwargs):
        frame = parallel.AxisFrame((self.axis_name,), (self.replicas,), partitioned=False)
        static = {i % max(len(args), 1) for i in self.static_argnums}
        mapped = [a if i in static or not self._maps(i) else _map_leaves(a, self.__name__, i)
                  for i, a in enumerate(args)]
        with parallel.axis_frame(frame):
            out = self.fn(*mapped, **kwargs)
        leaves, tree = tree_flatten(out)
        return tree_unflatten(tree, [reshape(as_array(x), (1, *as_array(x).shape))
                                     for x in leaves])

    def _maps(self, position: int) -> bool:
        axes = self.in_axes
        if isinstance(axes, (tuple, list)):
            axes = axes[position] if position < len(axes) else 0
        if axes not in (0, None):
            raise ValueError(f"pmap of {self.__name__}: in_axes must be 0 or None, got {axes!r}")
        return axes == 0


def _map_leaves(arg, name: str, position: int):
    leaves, tree = tree_flatten(arg)
    out = []
    for x in leaves:
        x = as_array(x)
        if x.ndim == 0 or x.shape[0] != 1:
            raise ValueError(
                f"pmap of {name}: argument {position} has shape {tuple(x.shape)}; its leading "
                "axis must be this process's one local device (size 1): pass x[None]")
        out.append(reshape(x, x.shape[1:]))
    return tree_unflatten(tree, out)


def pmap(fn: Callable | None = None, axis_name=None, *, in_axes=0, out_axes=0,
         static_broadcasted_argnums=(), donate_argnums=(), backend: str | None = None):
    """JAX's pmap with one device per process: the function runs as replica
    `xlapy.distributed.process_index()` of `process_count()`."""
    if out_axes != 0:
        raise ValueError("pmap: only out_axes=0 is supported")
    if fn is None:
        return lambda f: pmap(f, axis_name, in_axes=in_axes,
                              static_broadcasted_argnums=static_broadcasted_argnums,
                              donate_argnums=donate_argnums, backend=backend)
    return PmapFunction(fn, axis_name, in_axes, static_broadcasted_argnums, donate_argnums,
                        backend)


class ShardMapFunction(JitFunction):
    """`shard_map(f, mesh, in_specs, out_specs)` called on global arrays (the same in
    every process): each process takes its block of every argument, runs `f` on the
    blocks, and the output blocks are gathered back into global arrays."""

    def __init__(self, fn: Callable, mesh: Mesh, in_specs, out_specs):
        super().__init__(fn)
        if mesh.size != distributed.process_count() and mesh.size > 1:
            raise ValueError(f"shard_map of {self.__name__}: the mesh {mesh} has {mesh.size} "
                             f"devices but the job has {distributed.process_count()} processes")
        self.mesh = mesh
        self.in_specs = in_specs
        self.out_specs = out_specs
        self.frame = parallel.AxisFrame(mesh.axis_names, tuple(mesh.shape.values()),
                                        partitioned=True)

    def module_attributes(self) -> dict:
        return {"num_partitions": self.mesh.size} if self.mesh.size > 1 else {}

    def traced_call(self, args, kwargs):
        if kwargs:
            raise TypeError(f"shard_map of {self.__name__}: pass arguments by position")
        specs = _specs_for(self.in_specs, args, "in_specs", self.__name__)
        with parallel.axis_frame(self.frame):
            blocks = tree_unflatten(tree_flatten(args)[1], [
                self._block(as_array(x), spec) for x, spec in
                zip(tree_flatten(args)[0], specs)])
            out = self.fn(*blocks)
            leaves, tree = tree_flatten(out)
            out_specs = _specs_for(self.out_specs, out, "out_specs", self.__name__)
            return tree_unflatten(tree, [self._gather(as_array(x), spec)
                                         for x, spec in zip(leaves, out_specs)])

    def _block(self, x, spec: PartitionSpec):
        starts, sizes = [], []
        for d, n in enumerate(x.shape):
            axes = spec.axes_of(d)
            count = 1
            for a in axes:
                count *= self.frame.size(a)
            if n % count:
                raise ValueError(f"shard_map of {self.__name__}: dimension {d} (size {n}) "
                                 f"does not split over {axes} ({count} devices)")
            index = None
            for a in axes:   # the first axis major
                position = parallel.axis_index(a)
                index = position if index is None else index * self.frame.size(a) + position
            sizes.append(n // count)
            starts.append(index * (n // count) if axes else 0)
        return dynamic_slice(x, starts, sizes) if any(spec.axes_of(d) for d in
                                                       range(x.ndim)) else x

    def _gather(self, x, spec: PartitionSpec):
        for d in range(x.ndim):
            axes = spec.axes_of(d)
            if axes:
                x = parallel.all_gather(x, axes, axis=d, tiled=True)
        return x


def _specs_for(specs, tree, what: str, name: str) -> list[PartitionSpec]:
    """One spec per leaf of `tree`: a single spec applies to every leaf; a tuple or
    list gives one per positional argument (or output element)."""
    if isinstance(specs, PartitionSpec) or specs is None:
        return [specs or PartitionSpec()] * len(tree_flatten(tree)[0])
    if not isinstance(tree, (tuple, list)) or len(specs) != len(tree):
        raise ValueError(f"shard_map of {name}: {what} has {len(specs)} entries for "
                         f"{len(tree) if isinstance(tree, (tuple, list)) else 1} values")
    out = []
    for spec, sub in zip(specs, tree):
        out += _specs_for(spec, sub, what, name) if not isinstance(spec, PartitionSpec) \
            else [spec] * len(tree_flatten(sub)[0])
    return out


def shard_map(fn: Callable, mesh: Mesh, in_specs, out_specs) -> ShardMapFunction:
    """JAX's shard_map over a mesh with one device per process, jitted."""
    return ShardMapFunction(fn, mesh, in_specs, out_specs)


__all__: Sequence[str] = ["pmap", "shard_map"]
