"""The pass manager: pipelines of passes run in order, and fixed-point groups.

A `Pipeline` is a named literal list of passes, so a compiler's pipeline reads
like a table of contents (XLA's HloPassPipeline). A `FixedPoint` repeats a
sub-list until a round changes nothing, with an iteration cap (XLA's
HloPassFix, capped at 25). Both are passes themselves, so they nest.

How a run is configured is plain data, `RunOptions`, handed down to nested
groups: debug verification, disabled passes (XLA's `--xla_disable_hlo_passes`,
`--xla_enable_hlo_passes_only`, `--xla_disable_all_hlo_passes`) and hooks. By
default it comes from `XLAPY_FLAGS`. With `verify` on, the HLO verifier runs
before the first pass and after every pass that reported a change, and its
error names the pass to blame. Hooks see each step as a `PassEvent` (the
pipeline, the pass just run, the next one, whether it changed the module);
the dumper (`xlapy.passes.dump`) is one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from xlapy.errors import VerifierError
from xlapy.flags import debug_options
from xlapy.hlo.ir import HloModule
from xlapy.hlo.verifier import verify
from xlapy.passes.pass_interface import Pass

PIPELINE_START = "pipeline-start"
PIPELINE_END = "pipeline-end"
FIXED_POINT_ITERATION_LIMIT = 25
"""XLA's HloPassFix default: a group still changing after 25 rounds is cycling."""

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PassEvent:
    """One step of a pipeline, as hooks see it (XLA's names: the dump after pass
    `after` and before pass `before`; `pipeline-start`/`pipeline-end` at the ends)."""

    pipeline: str
    after: str
    before: str
    module: HloModule
    changed: bool
    pass_: Pass | None  # the pass just run; None at pipeline-start


PassHook = Callable[[PassEvent], None]


@dataclass(frozen=True)
class RunOptions:
    """How a pipeline runs. `disabled` and `enabled_only` hold pass or group names;
    a disabled group is skipped whole, while `enabled_only` filters leaf passes
    only (groups are always entered), as XLA does."""

    verify: bool = False
    disabled: frozenset[str] = frozenset()
    enabled_only: frozenset[str] = frozenset()
    disable_all: bool = False
    hooks: tuple[PassHook, ...] = ()

    @staticmethod
    def from_flags(options=None, *, hooks: Iterable[PassHook] = (),
                   verify: bool | None = None) -> RunOptions:
        """Options from parsed flags (`XLAPY_FLAGS` when `options` is None);
        `verify`, when given, overrides `--xlapy_verify_hlo_passes`."""
        flags = options if options is not None else debug_options()
        if flags.xla_disable_hlo_passes and flags.xla_enable_hlo_passes_only:
            raise ValueError("--xla_disable_hlo_passes and --xla_enable_hlo_passes_only "
                             "cannot both be set")
        return RunOptions(
            verify=flags.xlapy_verify_hlo_passes if verify is None else verify,
            disabled=frozenset(flags.xla_disable_hlo_passes),
            enabled_only=frozenset(flags.xla_enable_hlo_passes_only),
            disable_all=flags.xla_disable_all_hlo_passes,
            hooks=tuple(hooks))

    def skips(self, p: Pass) -> bool:
        if p.name in self.disabled:
            return True
        return bool(self.enabled_only) and not isinstance(p, PassGroup) \
            and p.name not in self.enabled_only


class PassGroup(Pass):
    """A pass made of passes; runs with the options of the pipeline around it."""

    def __init__(self, name: str, passes: Iterable[Pass] = (), options: RunOptions | None = None):
        self.name = name
        self.passes: list[Pass] = list(passes)
        self.options = options

    def run(self, module: HloModule) -> bool:
        """Run with this group's own options, or those `XLAPY_FLAGS` sets."""
        return self.run_with(module, self.options or RunOptions.from_flags())

    def run_with(self, module: HloModule, options: RunOptions) -> bool:
        raise NotImplementedError

    def append(self, p: Pass) -> PassGroup:
        """Add a pass at the end (how a backend extends a pipeline); returns self."""
        if not isinstance(p, Pass):
            raise TypeError(f"a pipeline holds Pass objects, got {type(p).__name__}")
        self.passes.append(p)
        return self

    def extend(self, passes: Iterable[Pass]) -> PassGroup:
        for p in passes:
            self.append(p)
        return self

    def walk(self) -> Iterator[tuple[int, Pass]]:
        """(depth, pass) for every pass and group inside, depth-first, in order."""
        for p in self.passes:
            yield 0, p
            if isinstance(p, PassGroup):
                for depth, inner in p.walk():
                    yield depth + 1, inner

    def describe(self) -> str:
        """The table of contents as indented text, one pass per line."""
        lines = [f"{self.name} ({self._kind()})"]
        for depth, p in self.walk():
            kind = f" ({p._kind()})" if isinstance(p, PassGroup) else ""
            lines.append("  " * (depth + 1) + p.name + kind)
        return "\n".join(lines)

    def _kind(self) -> str:
        return "pipeline"


class Pipeline(PassGroup):
    """Passes run once each, in order; changed when any of them changed the module."""

    def run_with(self, module: HloModule, options: RunOptions) -> bool:
        if options.disable_all:
            return False
        if options.verify:
            _verify(module, self.name, PIPELINE_START)
        first = self.passes[0].name if self.passes else PIPELINE_END
        _notify(options, PassEvent(self.name, PIPELINE_START, first, module, False, None))
        changed = False
        for i, p in enumerate(self.passes):
            if options.skips(p):
                continue
            pass_changed = _run_one(p, module, options, self.name)
            following = self.passes[i + 1].name if i + 1 < len(self.passes) else PIPELINE_END
            _notify(options, PassEvent(self.name, p.name, following, module, pass_changed, p))
            if pass_changed and options.verify:
                _verify(module, self.name, p.name)
            changed |= pass_changed
        return changed


class FixedPoint(PassGroup):
    """Its passes, as one pipeline, repeated until a round changes nothing.

    Stops after `max_iterations` rounds even if still changing (two rewrites
    undoing each other would otherwise loop forever) and logs a warning.
    """

    def __init__(self, name: str, passes: Iterable[Pass] = (),
                 max_iterations: int = FIXED_POINT_ITERATION_LIMIT,
                 options: RunOptions | None = None):
        super().__init__(name, passes, options)
        if max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1, got {max_iterations}")
        self.max_iterations = max_iterations
        self.iterations = 0  # rounds the last run took

    def run_with(self, module: HloModule, options: RunOptions) -> bool:
        body = Pipeline(self.name, self.passes)
        changed = False
        for iteration in range(1, self.max_iterations + 1):
            self.iterations = iteration
            if not body.run_with(module, options):
                return changed
            changed = True
        _log.warning("fixed-point group %s still changed module %s after %d iterations; "
                     "stopping", self.name, module.name, self.max_iterations)
        return changed

    def _kind(self) -> str:
        return f"fixed point, at most {self.max_iterations} rounds"


def _run_one(p: Pass, module: HloModule, options: RunOptions, pipeline: str) -> bool:
    try:
        if isinstance(p, PassGroup):
            return bool(p.run_with(module, options))
        return bool(p.run(module))
    except Exception as e:
        if hasattr(e, "add_note") and not isinstance(p, PassGroup):
            e.add_note(f"while running pass {p.name} in pipeline {pipeline} "
                       f"on module {module.name}")
        raise


def _notify(options: RunOptions, event: PassEvent) -> None:
    for hook in options.hooks:
        hook(event)


def _verify(module: HloModule, pipeline: str, after: str) -> None:
    try:
        verify(module)
    except VerifierError as e:
        where = "before the first pass" if after == PIPELINE_START else f"after pass {after}"
        raise VerifierError(f"{e}\n\nfailed {where} in pipeline {pipeline}") from e
