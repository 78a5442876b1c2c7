"""A one-line progress bar for training loops, with no dependency.

On a terminal the line is redrawn in place (at most ten times a second);
elsewhere (a log file, a test's captured output) only the finished line is
written, so logs stay readable.
"""

from __future__ import annotations

import sys
import time

_WIDTH = 24


class Progress:
    def __init__(self, label: str, total: int, stream=None, enabled: bool = True):
        self.label, self.total = label, total
        self.stream = stream if stream is not None else sys.stderr
        self.live = enabled and getattr(self.stream, "isatty", lambda: False)()
        self.enabled = enabled
        self.start = time.perf_counter()
        self._drawn = 0.0

    def update(self, done: int, loss: float | None = None) -> None:
        now = time.perf_counter()
        if self.live and (now - self._drawn >= 0.1 or done == self.total):
            self._drawn = now
            self.stream.write("\r" + self._line(done, loss, now))
            self.stream.flush()

    def close(self, loss: float | None = None) -> None:
        if not self.enabled:
            return
        line = self._line(self.total, loss, time.perf_counter())
        self.stream.write(("\r" if self.live else "") + line + "\n")
        self.stream.flush()

    def _line(self, done: int, loss: float | None, now: float) -> str:
        filled = _WIDTH * done // max(self.total, 1)
        bar = "#" * filled + "." * (_WIDTH - filled)
        rate = (now - self.start) / max(done, 1)
        text = f"  {self.label:<28} [{bar}] {done:>5}/{self.total}"
        if loss is not None:
            text += f"  loss {loss:7.4f}"
        return text + f"  {rate * 1e3:7.3f} ms/step"
