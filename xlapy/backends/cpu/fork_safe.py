"""Locks that a forked child gets back unlocked.

The CPU backend serialises LLVM (not thread-safe) and the runtime library's
one-time builds behind module locks. A process that forks while another of
its threads holds one would hand the child a lock nobody will release: the
child's first compilation would wait forever. These locks are replaced by
fresh ones in the child (`os.register_at_fork`).
"""

from __future__ import annotations

import os
import threading
import weakref

_LOCKS: weakref.WeakSet = weakref.WeakSet()


class ForkSafeLock:
    """A `threading.Lock` (or RLock with `reentrant`) used as a context manager."""

    def __init__(self, reentrant: bool = False):
        self._factory = threading.RLock if reentrant else threading.Lock
        self._lock = self._factory()
        _LOCKS.add(self)

    def __enter__(self):
        return self._lock.__enter__()

    def __exit__(self, *exc):
        return self._lock.__exit__(*exc)

    def _reset(self) -> None:
        self._lock = self._factory()


def _after_fork_in_child() -> None:
    for lock in list(_LOCKS):
        lock._reset()


os.register_at_fork(after_in_child=_after_fork_in_child)
