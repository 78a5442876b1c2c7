"""`--xlapy_compile_profile`: where one compilation's time went.

With the flag on, a backend's `compile` opens a `CompileProfile` (`begin`),
marks its phases (`phase("LLVM optimisation")`: phases nest, so a runtime
library built while emitting a kernel shows inside that phase), and the
pass pipeline reports each pass through `pass_hook`; at the end (`finish`)
the table is printed to stderr and kept as `last_compile_profile()`. With
the flag off nothing is timed: `begin` returns None and `phase` is a
context manager that does nothing.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from dataclasses import dataclass, field

from xlapy.flags import debug_options, register_flag
from xlapy.passes.pipeline import PIPELINE_START, PassEvent, PassGroup

register_flag("xlapy_compile_profile", "bool", False,
              "xlapy: after each compilation, print to stderr the time each HLO pass and "
              "each backend phase (LLVM IR emission, optimisation, object code, loading) "
              "took, and whether the disk cache hit")


@dataclass
class CompileProfile:
    module: str
    start: float = field(default_factory=time.perf_counter)
    seconds: float = 0.0
    """The whole compilation, set by `finish`."""
    phases: list[tuple[int, str, float]] = field(default_factory=list)
    """(nesting depth, name, seconds), in the order the phases began."""
    passes: dict[str, list] = field(default_factory=dict)
    """pass name -> [seconds, runs] (a fixed-point group runs its passes repeatedly)."""
    cache: str = ""
    """'hit', 'miss' or 'off': the on-disk cache's answer, where the backend asked it."""
    _depth: int = 0
    _last_event: float | None = None

    def table(self) -> str:
        lines = [f"compile profile of {self.module}: {self.seconds * 1e3:.1f} ms"
                 + (f", disk cache {self.cache}" if self.cache else "")]
        lines.append(f"  {'phase':<40} {'ms':>9} {'share':>6}")
        for depth, name, seconds in self.phases:
            lines.append(f"  {'  ' * depth + name:<40} {seconds * 1e3:>9.2f} "
                         f"{self._share(seconds):>6}")
        if self.passes:
            lines.append(f"  {'HLO pass':<40} {'ms':>9} {'share':>6} {'runs':>5}")
            for name, (seconds, runs) in sorted(self.passes.items(), key=lambda p: -p[1][0]):
                lines.append(f"  {name:<40} {seconds * 1e3:>9.2f} {self._share(seconds):>6} "
                             f"{runs:>5}")
        return "\n".join(lines)

    def _share(self, seconds: float) -> str:
        return f"{100 * seconds / self.seconds:.0f}%" if self.seconds else ""

    def pass_seconds(self) -> float:
        return sum(seconds for seconds, _ in self.passes.values())


class _Current(threading.local):
    profile: CompileProfile | None = None


_CURRENT = _Current()
_LAST: list[CompileProfile | None] = [None]


def begin(module_name: str) -> CompileProfile | None:
    """A profile for the compilation starting now (the outermost one only), or None
    when --xlapy_compile_profile is off or a compilation is already profiled."""
    if _CURRENT.profile is not None or not debug_options().xlapy_compile_profile:
        return None
    _CURRENT.profile = CompileProfile(module_name)
    return _CURRENT.profile


def finish(profile: CompileProfile | None) -> None:
    """Close `profile` (from `begin`): print its table to stderr and keep it."""
    if profile is None:
        return
    profile.seconds = time.perf_counter() - profile.start
    _CURRENT.profile = None
    _LAST[0] = profile
    print(profile.table(), file=sys.stderr, flush=True)


def current() -> CompileProfile | None:
    return _CURRENT.profile


def last_compile_profile() -> CompileProfile | None:
    """The profile of the last compilation profiled in this process."""
    return _LAST[0]


@contextlib.contextmanager
def phase(name: str):
    """Time the block as phase `name` of the compilation being profiled, if any."""
    profile = _CURRENT.profile
    if profile is None:
        yield
        return
    depth = profile._depth
    profile._depth += 1
    slot = len(profile.phases)
    profile.phases.append((depth, name, 0.0))   # listed before the phases inside it
    start = time.perf_counter()
    try:
        yield
    finally:
        profile._depth = depth
        profile.phases[slot] = (depth, name, time.perf_counter() - start)


def note_cache(answer: str) -> None:
    if _CURRENT.profile is not None:
        _CURRENT.profile.cache = answer


def pass_hook(event: PassEvent) -> None:
    """A pipeline hook: each pass's time is the time since the previous event."""
    profile = _CURRENT.profile
    if profile is None:
        return
    now = time.perf_counter()
    if event.after != PIPELINE_START and not isinstance(event.pass_, PassGroup) \
            and profile._last_event is not None:
        entry = profile.passes.setdefault(event.after, [0.0, 0])
        entry[0] += now - profile._last_event
        entry[1] += 1
    profile._last_event = now
