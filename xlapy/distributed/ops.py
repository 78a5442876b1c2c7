"""Collectives on NumPy arrays among a group of ranks, over MPI.

The HLO semantics (which ranks form the group, which reduction, which
dimension) are decided above this layer (`xlapy.hlo.collective_plan`); here a
group is a tuple of world ranks in XLA's participant order, and every call
is one of MPI's blocking collectives on the group's communicator, once the
members have met with the world's bounded wait. A group of one is answered
locally, without MPI.

Reductions MPI computes natively (sums and products of its numeric types,
integer min/max, logical and bitwise and/or) run as `Iallreduce`; the rest
(16-bit and 8-bit floats, float min/max, which must propagate NaN as XLA's
do) gather every member's data and fold it in group order, so every member
computes bit-identical results either way.
"""

from __future__ import annotations

import time

import numpy as np

from xlapy.distributed.world import World

FOLDS = {
    "sum": np.add, "product": np.multiply, "min": np.minimum, "max": np.maximum,
    "and": np.bitwise_and, "or": np.bitwise_or,
}
"""Each reduction as the NumPy ufunc that folds two members' values (bitwise
and/or are logical on booleans)."""

_MPI_TYPES = {
    "bool": "C_BOOL", "int8": "INT8_T", "int16": "INT16_T", "int32": "INT32_T",
    "int64": "INT64_T", "uint8": "UINT8_T", "uint16": "UINT16_T", "uint32": "UINT32_T",
    "uint64": "UINT64_T", "float32": "FLOAT", "float64": "DOUBLE",
    "complex64": "C_FLOAT_COMPLEX", "complex128": "C_DOUBLE_COMPLEX",
}


def _mpi_op(world: World, dtype: np.dtype, reduction: str):
    """The MPI (datatype, op) computing `reduction` on `dtype`, or None to fold."""
    key = (dtype, reduction)
    if key not in _NATIVE:
        _NATIVE[key] = _find_mpi_op(world, dtype, reduction)
    return _NATIVE[key]


_NATIVE: dict = {}


def _find_mpi_op(world: World, dtype: np.dtype, reduction: str):
    name = _MPI_TYPES.get(dtype.name)
    if name is None:
        return None
    kind = dtype.kind
    mpi = world.mpi
    if reduction in ("sum", "product") and kind != "b":
        return getattr(mpi, name), mpi.SUM if reduction == "sum" else mpi.PROD
    if reduction in ("min", "max") and kind in "iu":
        return getattr(mpi, name), mpi.MIN if reduction == "min" else mpi.MAX
    if reduction in ("and", "or") and kind == "b":
        return getattr(mpi, name), mpi.LAND if reduction == "and" else mpi.LOR
    if reduction in ("and", "or") and kind in "iu":
        return getattr(mpi, name), mpi.BAND if reduction == "and" else mpi.BOR
    return None


def _bytes(array: np.ndarray) -> np.ndarray:
    """`array`'s bytes, contiguous, as a flat uint8 array (a view when possible)."""
    return np.ascontiguousarray(array).reshape(-1).view(np.uint8)


def _run(world: World, group: tuple[int, ...], what: str, call) -> None:
    """Meet the group's other members (a bounded wait), then `call(comm)`: MPI's
    blocking collective on the group's communicator."""
    began = time.perf_counter()
    comm = world.communicator(group, what)
    world.meet(group, what)
    world.call(lambda: call(comm), what, group)
    world.collective_seconds += time.perf_counter() - began
    world.collective_calls += 1


def all_reduce(world: World, group: tuple[int, ...], array: np.ndarray, reduction: str,
               what: str, out: np.ndarray | None = None) -> np.ndarray:
    """The elementwise `reduction` of every member's `array` (into `out` if given)."""
    if out is None:
        out = np.empty_like(array)
    if len(group) == 1:
        np.copyto(out, array)
        return out
    native = _mpi_op(world, array.dtype, reduction)
    if native is None or not out.flags.c_contiguous:
        gathered = gather_all(world, group, array, what)
        np.copyto(out, fold(gathered, reduction))
        return out
    datatype, op = native
    send = np.ascontiguousarray(array)
    _run(world, group, what, lambda comm: comm.Allreduce(
        [send, datatype], [out, datatype], op))
    return out


def fold(values: np.ndarray, reduction: str) -> np.ndarray:
    """values[0] op values[1] op ... in group order."""
    ufunc = FOLDS[reduction]
    result = values[0].copy()
    for value in values[1:]:
        result = ufunc(result, value)
    return result


def gather_all(world: World, group: tuple[int, ...], array: np.ndarray,
               what: str) -> np.ndarray:
    """Every member's `array`, stacked in group order: shape (members, *array.shape)."""
    out = np.empty((len(group), *array.shape), array.dtype)
    if len(group) == 1:
        out[0] = array
        return out
    send = _bytes(array)
    receive = out.reshape(-1).view(np.uint8)
    byte = world.mpi.BYTE
    _run(world, group, what, lambda comm: comm.Allgather([send, byte], [receive, byte]))
    return out


def all_gather(world: World, group: tuple[int, ...], array: np.ndarray, axis: int,
               what: str) -> np.ndarray:
    """The members' arrays concatenated along `axis`, in group order."""
    stacked = gather_all(world, group, array, what)
    return np.concatenate(list(stacked), axis=axis)


def reduce_scatter(world: World, group: tuple[int, ...], index: int, array: np.ndarray,
                   axis: int, reduction: str, what: str) -> np.ndarray:
    """Member `index`'s block (along `axis`, split into as many blocks as members)
    of the elementwise reduction of every member's `array`."""
    count = len(group)
    blocks = np.stack(np.split(array, count, axis=axis))   # (members, *block)
    if count == 1:
        return blocks[0]
    native = _mpi_op(world, array.dtype, reduction)
    if native is None:
        gathered = gather_all(world, group, blocks, what)   # (members, members, *block)
        return fold(gathered[:, index], reduction)
    datatype, op = native
    out = np.empty(blocks.shape[1:], array.dtype)
    _run(world, group, what, lambda comm: comm.Reduce_scatter_block(
        [blocks, datatype], [out, datatype], op))
    return out


def all_to_all(world: World, group: tuple[int, ...], chunks: list[np.ndarray],
               what: str) -> list[np.ndarray]:
    """Send chunks[i] to member i; return the chunk each member sent here, in
    group order. Every chunk has the same shape and dtype."""
    if len(group) == 1:
        return [chunk.copy() for chunk in chunks]
    send = np.ascontiguousarray(np.stack(chunks))
    receive = np.empty_like(send)
    byte = world.mpi.BYTE
    _run(world, group, what, lambda comm: comm.Alltoall(
        [send.reshape(-1).view(np.uint8), byte], [receive.reshape(-1).view(np.uint8), byte]))
    return list(receive)


def permute(world: World, group: tuple[int, ...], array: np.ndarray, targets: list[int],
            source: int | None, what: str) -> np.ndarray:
    """Send `array` to the members at positions `targets`; return what the member at
    position `source` sent here (zeros when nobody sends here)."""
    out = np.zeros_like(array)
    if len(group) == 1:
        if source == 0:
            np.copyto(out, array)
        return out
    me = group.index(world.rank)
    send = _bytes(array)
    receive = out.reshape(-1).view(np.uint8)
    byte = world.mpi.BYTE

    def exchange(comm):
        requests = [comm.Isend([send, byte], dest=t, tag=_PERMUTE_TAG) for t in targets
                    if t != me]
        if source is not None and source != me:
            requests.append(comm.Irecv([receive, byte], source=source, tag=_PERMUTE_TAG))
        world.mpi.Request.Waitall(requests)

    _run(world, group, what, exchange)
    if source == me:
        np.copyto(out, array)
    return out


def broadcast(world: World, group: tuple[int, ...], array: np.ndarray, root: int,
              what: str) -> np.ndarray:
    """Member `root`'s array, on every member."""
    out = np.array(array, order="C", copy=True)
    if len(group) == 1:
        return out
    buffer = out.reshape(-1).view(np.uint8)
    byte = world.mpi.BYTE
    _run(world, group, what, lambda comm: comm.Bcast([buffer, byte], root=root))
    return out


_PERMUTE_TAG = 7
