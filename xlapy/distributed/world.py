"""The processes of an MPI job, as XLA's CPU collectives see them: one device
per process, device id = MPI rank.

MPI comes from mpi4py (the `distributed` extra, with the `mpich` wheel as the
MPI library), imported the first time a collective or `initialize()` needs it,
never by `import xlapy`. Every collective first meets its peers with a
bounded wait: each member tells the others it has arrived with a zero-byte
message and polls for theirs until `--xla_collective_timeout_s` passes; then
it fails with an error naming the collective, its group and the ranks that
never arrived. Only once all have arrived does MPI's own blocking collective
run. A process that timed out aborts the MPI job when it exits, so a hung
peer cannot keep `mpiexec` alive.
"""

from __future__ import annotations

import atexit
import os
import time

from xlapy.errors import ExecutionError
from xlapy.flags import debug_options, register_flag

register_flag("xla_collective_timeout_s", "int", 300,
              "seconds a collective waits for its peers before it fails naming the missing "
              "ranks")

LAUNCH_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS", "PMIX_SIZE")
"""Environment variables an MPI launcher sets: their presence means `mpiexec`."""

_SPIN_SECONDS = 0.002
"""How long a wait polls without yielding the CPU: peers that arrive within it
cost no scheduler latency; later polls yield between tests, so a process
waiting on a slow peer does not take the core it needs."""


class CollectiveTimeout(ExecutionError):
    """A collective's peers did not all arrive within `--xla_collective_timeout_s`."""


class World:
    """This process's view of the MPI job: rank, size, and a communicator per
    group of ranks (created the first time a collective uses the group)."""

    def __init__(self, mpi):
        self.mpi = mpi
        self.comm = mpi.COMM_WORLD.Dup()
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self._arrivals = self.comm.Dup()   # the zero-byte "I have arrived" messages
        self._groups: dict[tuple[int, ...], object] = {}
        self._sequence: dict[tuple[int, ...], int] = {}
        self.timed_out = False
        self.collective_seconds = 0.0
        """Time spent waiting in collectives (data exchange included), for reports."""
        self.collective_calls = 0

    # -- groups ---------------------------------------------------------------------------
    def communicator(self, group: tuple[int, ...], what: str):
        """The communicator of `group` (world ranks, in group order; this rank among
        them). Creating one is collective over the group, so the members first
        meet with a bounded wait."""
        if len(group) == self.size and group == tuple(range(self.size)):
            return self.comm
        comm = self._groups.get(group)
        if comm is None:
            self.meet(group, what)
            ranks = self.comm.Get_group().Incl(list(group))
            comm = self.comm.Create_group(ranks, tag=_CREATE_TAG)
            self._groups[group] = comm
        return comm

    # -- bounded waits --------------------------------------------------------------------
    def meet(self, group: tuple[int, ...], what: str) -> None:
        """A bounded rendezvous before each collective: tell the other members of
        `group` this rank has reached its next collective on the group, and wait
        (up to the timeout) until they all have. Afterwards MPI's own blocking
        collective, with its tuned algorithms and progress, cannot wait on an
        absent peer; and a timeout here knows exactly who is missing."""
        tag = self._sequence.get(group, 0) % _TAG_LIMIT + _FIRST_TAG
        self._sequence[group] = tag - _FIRST_TAG + 1
        peers = [p for p in group if p != self.rank]
        if not peers:
            return
        for peer in peers:
            self._arrivals.Isend([b"", self.mpi.BYTE], dest=peer, tag=tag).Free()
        arrivals = [self._arrivals.Irecv([bytearray(0), self.mpi.BYTE], source=p, tag=tag)
                    for p in peers]
        self.wait(arrivals, what, group,
                  lambda: [p for p, r in zip(peers, arrivals) if not r.Test()])

    def call(self, fn, what: str, group: tuple[int, ...]):
        """An MPI call; its failure an ExecutionError naming the collective."""
        try:
            return fn()
        except self.mpi.Exception as e:
            raise ExecutionError(f"{what}: MPI failed in the group "
                                 f"{{{','.join(map(str, group))}}} on rank {self.rank}: "
                                 f"{e}") from None

    def wait(self, requests: list, what: str, group: tuple[int, ...], missing) -> None:
        """Wait for `requests` until the timeout; then fail naming `missing()`."""
        timeout = debug_options().xla_collective_timeout_s
        start = time.monotonic()
        spin_until = start + _SPIN_SECONDS
        test = requests[0].Test if len(requests) == 1 else \
            (lambda: self.mpi.Request.Testall(requests))
        try:
            while not test():
                now = time.monotonic()
                if now - start > timeout:
                    self.timed_out = True
                    absent = missing()
                    raise CollectiveTimeout(
                        f"{what}: timed out after {timeout} s (--xla_collective_timeout_s) "
                        f"waiting for the group {{{','.join(map(str, group))}}}; rank "
                        f"{self.rank} is there, missing: "
                        f"{', '.join(map(str, absent)) if absent else 'none (a peer left)'}")
                if now > spin_until:
                    os.sched_yield()
        except self.mpi.Exception as e:
            raise ExecutionError(f"{what}: MPI failed in the group "
                                 f"{{{','.join(map(str, group))}}} on rank {self.rank}: "
                                 f"{e}") from None


_CREATE_TAG = 1
_FIRST_TAG = 16
_TAG_LIMIT = 30000
"""Announcement tags cycle below MPI's smallest guaranteed tag bound (32767)."""

_WORLD: World | None = None


def launched_by_mpi() -> bool:
    """Whether this process was started by an MPI launcher (`mpiexec`)."""
    return any(name in os.environ for name in LAUNCH_VARIABLES)


def initialize() -> World:
    """Start MPI (once) and return this process's World."""
    global _WORLD
    if _WORLD is None:
        try:
            from mpi4py import MPI  # optional: the `distributed` extra
        except ImportError as e:
            raise ExecutionError(
                "xlapy.distributed needs mpi4py and an MPI library: pip install "
                f"'xlapy[distributed]' ({e})") from None
        _WORLD = World(MPI)
        atexit.register(_abort_after_timeout)
    return _WORLD


def world() -> World | None:
    """The World once initialised, else None."""
    return _WORLD


def _abort_after_timeout() -> None:
    """After a timed-out collective MPI cannot finalize cleanly (a peer is gone or
    stuck): end the whole job instead of hanging at exit."""
    if _WORLD is not None and _WORLD.timed_out:
        _WORLD.comm.Abort(1)
