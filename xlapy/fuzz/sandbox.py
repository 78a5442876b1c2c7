"""Running untrusted work in a child process, so a hang or a crash is a result.

A fuzzing campaign compiles and runs thousands of programs; one that loops
forever or faults in generated code must be counted, not stop the campaign.
A `Sandbox` owns one worker process (a fresh interpreter running this
module, so it inherits no threads and none of the parent's imported
libraries: a symbol that resolves only because the parent loaded, say, JAX's
C++ runtime is not found there either). Jobs run one at a time; a job that
outlives its timeout gets the worker killed and is reported as a hang, one
that kills the worker as a crash with its signal. A fresh worker replaces a
dead one on the next job.

Jobs are module-level functions and picklable arguments; their return value
comes back as `Outcome.value`, an exception as `Outcome.error` (type and
message) with its traceback in `Outcome.detail`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any


@dataclass
class Outcome:
    """What one job came to: status is 'ok', 'error', 'hang' or 'crash'."""

    status: str
    value: Any = None
    error: str = ""
    detail: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _worker(connection) -> None:
    while True:
        try:
            job = connection.recv()
        except EOFError:
            return
        except Exception as e:  # noqa: BLE001 - a job that does not unpickle here
            connection.send(("error", None, f"{type(e).__name__}: {e}", traceback.format_exc()))
            continue
        if job is None:
            return
        fn, args = job
        try:
            result = ("ok", fn(*args), "", "")
        except BaseException as e:  # noqa: BLE001 - every failure is a result to report
            result = ("error", None, f"{type(e).__name__}: {e}", traceback.format_exc())
        try:
            connection.send(result)
        except Exception as e:  # noqa: BLE001 - a result that does not pickle
            connection.send(("error", None, f"result not sendable: {e}", ""))


class Sandbox:
    """One worker process running jobs with a timeout; see the module docstring.

    `environment` is added to the worker's `os.environ` before any job runs
    (`XLAPY_FLAGS` for the compilations in it, say)."""

    def __init__(self, environment: dict[str, str] | None = None):
        self.environment = dict(environment or {})
        self._process = None
        self._connection = None
        self.restarts = 0
        """Workers replaced after a hang or a crash."""

    def run(self, fn, *args, timeout: float = 60.0) -> Outcome:
        """`fn(*args)` in the worker; waits at most `timeout` seconds of its run."""
        self._ensure_worker()
        start = time.perf_counter()
        try:
            self._connection.send((fn, args))
        except (BrokenPipeError, OSError):
            return self._dead(start)
        if not self._connection.poll(timeout):
            if self._process.poll() is None:
                self._kill()
                return Outcome("hang", error=f"no result after {timeout:g} s",
                               seconds=time.perf_counter() - start)
            return self._dead(start)
        try:
            status, value, error, detail = self._connection.recv()
        except (EOFError, OSError):
            return self._dead(start)
        return Outcome(status, value, error, detail, time.perf_counter() - start)

    def close(self) -> None:
        if self._process is None:
            return
        try:
            self._connection.send(None)
        except (BrokenPipeError, OSError):
            pass
        try:
            self._process.wait(5)
        except subprocess.TimeoutExpired:
            self._kill()
        self._connection.close()
        self._process = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- the worker's life ---------------------------------------------------------------
    def _ensure_worker(self) -> None:
        if self._process is not None and self._process.poll() is None:
            return
        child_reads, parent_writes = os.pipe()
        parent_reads, child_writes = os.pipe()
        environment = {**os.environ, **self.environment}
        self._process = subprocess.Popen(
            [sys.executable, "-m", "xlapy.fuzz.sandbox", str(child_reads), str(child_writes)],
            pass_fds=(child_reads, child_writes), env=environment, stdin=subprocess.DEVNULL)
        os.close(child_reads)
        os.close(child_writes)
        self._connection = _Duplex(Connection(parent_reads, writable=False),
                                   Connection(parent_writes, readable=False))

    def _dead(self, start: float) -> Outcome:
        try:
            code = self._process.wait(5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            code = self._process.wait()
        self._connection.close()
        self._process = None
        self.restarts += 1
        if code is not None and code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ \
                else str(-code)
            error = f"worker killed by {name}"
        else:
            error = f"worker exited with status {code}"
        return Outcome("crash", error=error, seconds=time.perf_counter() - start)

    def _kill(self) -> None:
        self._process.kill()
        self._process.wait()
        self._connection.close()
        self._process = None
        self.restarts += 1


class _Duplex:
    """Two one-way pipes used as one connection."""

    def __init__(self, incoming: Connection, outgoing: Connection):
        self.incoming, self.outgoing = incoming, outgoing

    def send(self, obj) -> None:
        self.outgoing.send(obj)

    def recv(self):
        return self.incoming.recv()

    def poll(self, timeout: float) -> bool:
        return self.incoming.poll(timeout)

    def close(self) -> None:
        self.incoming.close()
        self.outgoing.close()


if __name__ == "__main__":
    _worker(_Duplex(Connection(int(sys.argv[1]), writable=False),
                    Connection(int(sys.argv[2]), readable=False)))
