"""Collective primitives over named axes, as JAX's `lax.psum` and friends:
`psum`, `pmean`, `pmax`, `pmin`, `all_gather`, `psum_scatter`, `ppermute`,
`all_to_all` and `axis_index`.

An axis name is bound by `xlapy.pmap` (one replica per process) or
`xlapy.shard_map` (a mesh of partitions). Each primitive becomes one HLO
collective whose groups are the devices that differ only along the named
axes: replica groups without a channel under pmap, flattened device ids with a
channel under shard_map (XLA's SPMD form). Used outside either, a name is
unbound and the call raises NameError, as in JAX.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from xlapy.core.pytree import tree_flatten, tree_unflatten
from xlapy.core.trace import Array, as_array, bind, current_trace
from xlapy.hlo.opcode import Opcode
from xlapy.lax import elementwise as ew
from xlapy.lax.reductions import scalar_computation
from xlapy.lax.reshaping import reshape, transpose


@dataclass(frozen=True)
class AxisFrame:
    """Named axes over the devices of one module: device id = row-major position in
    `sizes`. `partitioned` (shard_map) ids are partition ids, else replica ids."""

    names: tuple[str, ...]
    sizes: tuple[int, ...]
    partitioned: bool

    def size(self, name: str) -> int:
        return self.sizes[self.names.index(name)]

    def groups(self, axes: Sequence[str]) -> tuple[tuple[int, ...], ...]:
        """Device ids grouped so that each group varies only along `axes`."""
        ids = np.arange(int(np.prod(self.sizes))).reshape(self.sizes)
        along = [self.names.index(a) for a in axes]
        rest = [i for i in range(len(self.names)) if i not in along]
        moved = np.transpose(ids, rest + along).reshape(-1, int(np.prod(
            [self.sizes[i] for i in along], dtype=np.int64)))
        return tuple(tuple(int(i) for i in row) for row in moved)


_FRAMES: list[AxisFrame] = []
_CHANNELS = itertools.count(1)


@contextlib.contextmanager
def axis_frame(frame: AxisFrame):
    """Bind `frame`'s axis names while a pmap or shard_map body is traced."""
    _FRAMES.append(frame)
    try:
        yield frame
    finally:
        _FRAMES.pop()


def _frame(axis_name, what: str) -> tuple[AxisFrame, tuple[str, ...]]:
    axes = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for frame in reversed(_FRAMES):
        if all(a in frame.names for a in axes):
            if current_trace() is None:
                break
            return frame, axes
    raise NameError(f"{what}: unbound axis name {axis_name!r}: collectives run inside "
                    "xlapy.pmap or xlapy.shard_map, over an axis name they bind")


def _attrs(frame: AxisFrame, axes) -> dict:
    attrs = {"replica_groups": frame.groups(axes)}
    if frame.partitioned:
        attrs["channel_id"] = next(_CHANNELS)
        attrs["use_global_device_ids"] = True
    return attrs


def _reducer(dtype, fn, name):
    return scalar_computation(fn, [dtype, dtype], [dtype], name, tuple_root=False)


def _all_reduce(tree, axis_name, fn, name):
    """One all-reduce per dtype for all the leaves of `tree` (a variadic all-reduce,
    as XLA's all-reduce combiner would make: one exchange instead of one per leaf)."""
    frame, axes = _frame(axis_name, name)
    leaves, treedef = tree_flatten(tree)
    leaves = [as_array(x) for x in leaves]
    out: list = [None] * len(leaves)
    for dtype in dict.fromkeys(x.dtype for x in leaves):
        which = [i for i, x in enumerate(leaves) if x.dtype == dtype]
        reduced = bind(Opcode.ALL_REDUCE, [leaves[i] for i in which], {
            **_attrs(frame, axes), "to_apply": _reducer(dtype, fn, name)})
        for i, value in zip(which, reduced if len(which) > 1 else [reduced]):
            out[i] = value
    return tree_unflatten(treedef, out)


def psum(x, axis_name):
    """The sum of `x` (an array or a pytree of them) over the devices along
    `axis_name` (a name or a tuple of names)."""
    return _all_reduce(x, axis_name, ew.add, "psum")


def pmax(x, axis_name):
    return _all_reduce(x, axis_name, ew.max, "pmax")


def pmin(x, axis_name):
    return _all_reduce(x, axis_name, ew.min, "pmin")


def pmean(x, axis_name):
    """The mean of `x` (an array or a pytree) over the devices along `axis_name`."""
    frame, axes = _frame(axis_name, "pmean")
    count = int(np.prod([frame.size(a) for a in axes]))
    leaves, treedef = tree_flatten(psum(x, axis_name))
    return tree_unflatten(treedef, [ew.div(t, ew.convert_element_type(np.asarray(count), t.dtype))
                                    for t in leaves])


def axis_size(axis_name) -> int:
    frame, axes = _frame(axis_name, "axis_size")
    return int(np.prod([frame.size(a) for a in axes]))


def axis_index(axis_name) -> Array:
    """This device's position along `axis_name`, as int32."""
    frame, (axis,) = _frame(axis_name, "axis_index")
    opcode = Opcode.PARTITION_ID if frame.partitioned else Opcode.REPLICA_ID
    device = ew.convert_element_type(bind(opcode, []), np.int32)
    k = frame.names.index(axis)
    stride = int(np.prod(frame.sizes[k + 1:], dtype=np.int64))
    position = ew.div(device, np.int32(stride)) if stride > 1 else device
    return ew.rem(position, np.int32(frame.sizes[k])) if k > 0 else position


def all_gather(x, axis_name, *, axis: int = 0, tiled: bool = False) -> Array:
    """Every device's `x` along `axis_name`, stacked at `axis` (concatenated there
    when `tiled`)."""
    frame, axes = _frame(axis_name, "all_gather")
    x = as_array(x)
    axis = axis % (x.ndim + (0 if tiled else 1))
    if not tiled:
        x = reshape(x, x.shape[:axis] + (1,) + x.shape[axis:])
    return bind(Opcode.ALL_GATHER, [x], {**_attrs(frame, axes), "dimensions": (axis,)})


def psum_scatter(x, axis_name, *, scatter_dimension: int = 0, tiled: bool = False) -> Array:
    """This device's block of `psum(x)` split along `scatter_dimension` (without
    `tiled` that dimension must equal the axis size and is dropped)."""
    frame, axes = _frame(axis_name, "psum_scatter")
    x = as_array(x)
    d = scatter_dimension % x.ndim
    count = int(np.prod([frame.size(a) for a in axes]))
    if not tiled and x.shape[d] != count:
        raise ValueError(f"psum_scatter: dimension {d} has size {x.shape[d]}, but the axis "
                         f"{axis_name!r} has {count} devices (pass tiled=True to split it)")
    out = bind(Opcode.REDUCE_SCATTER, [x], {**_attrs(frame, axes), "dimensions": (d,),
                                             "to_apply": _reducer(x.dtype, ew.add, "psum")})
    if not tiled:
        out = reshape(out, out.shape[:d] + out.shape[d + 1:])
    return out


def ppermute(x, axis_name, perm: Sequence[tuple[int, int]]) -> Array:
    """Send `x` from position i to position j along `axis_name` for each (i, j) in
    `perm`; a device nobody sends to gets zeros."""
    frame, (axis,) = _frame(axis_name, "ppermute")
    x = as_array(x)
    pairs = []
    for group in frame.groups((axis,)):
        pairs += [(group[i], group[j]) for i, j in perm]
    attrs = {"source_target_pairs": tuple(pairs)}
    if frame.partitioned:
        attrs["channel_id"] = next(_CHANNELS)
    return bind(Opcode.COLLECTIVE_PERMUTE, [x], attrs)


def all_to_all(x, axis_name, split_axis: int, concat_axis: int, *, tiled: bool = False):
    """JAX's all_to_all: split `x` along `split_axis` into one block per device,
    send block i to device i, and put what arrives along `concat_axis` (without
    `tiled`, split_axis must equal the axis size: it goes, and a new axis of that
    size appears at concat_axis)."""
    frame, axes = _frame(axis_name, "all_to_all")
    x = as_array(x)
    count = int(np.prod([frame.size(a) for a in axes]))
    s = split_axis % x.ndim
    if x.shape[s] % count or (not tiled and x.shape[s] != count):
        raise ValueError(f"all_to_all: split axis {s} has size {x.shape[s]}, which the "
                         f"{count} devices of {axis_name!r} do not split"
                         f"{'' if tiled else ' one each'}")
    # the blocks on a new leading axis, exchanged along it: z[j] came from device j
    split = x.shape[:s] + (count, x.shape[s] // count) + x.shape[s + 1:]
    z = _moveaxis(reshape(x, split), s, 0)
    z = bind(Opcode.ALL_TO_ALL, [z], {**_attrs(frame, axes), "dimensions": (0,)})
    if not tiled:
        rest = z.shape[1:s + 1] + z.shape[s + 2:]
        return _moveaxis(reshape(z, (count, *rest)), 0, concat_axis % (len(rest) + 1))
    c = concat_axis % (z.ndim - 1)
    z = _moveaxis(z, 0, c)
    return reshape(z, z.shape[:c] + (z.shape[c] * z.shape[c + 1],) + z.shape[c + 2:])


def _moveaxis(x: Array, source: int, destination: int) -> Array:
    order = [i for i in range(x.ndim) if i != source]
    order.insert(destination, source)
    return transpose(x, order) if order != list(range(x.ndim)) else x


__all__ = ["all_gather", "all_to_all", "axis_index", "axis_size", "pmax", "pmean", "pmin",
           "ppermute", "psum", "psum_scatter"]
