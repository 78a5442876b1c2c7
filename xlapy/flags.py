"""`XLAPY_FLAGS`: the one place debug and tuning flags are declared and parsed.

Flags take XLA's own names (`--xla_dump_to=DIR`, `--xla_dump_hlo_pass_re=.*`,
`--xla_disable_hlo_passes=cse,dce`, ...), so a command line that works in
`XLA_FLAGS` works here. The few flags xlapy adds that XLA lacks start with
`xlapy_`. Backends declare their own flags with `register_flag` (XLA keeps
per-backend flags such as `--xla_cpu_*` in the same table).

The syntax is tsl's: flags separated by whitespace (shell quoting allowed),
`--name=value`, and a bare `--name` for a boolean meaning true. An unknown
flag or a bad value raises FlagError naming the flag: a typo must never be
silently ignored, or a user would debug with dumps that never appear.

    options = debug_options()          # XLAPY_FLAGS, parsed once per value
    options.xla_dump_to                # '' unless set
    parse_flags("--xla_dump_to=/tmp/d --xla_dump_hlo_as_dot")
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from xlapy.errors import XlapyError

ENVIRONMENT_VARIABLE = "XLAPY_FLAGS"


class FlagError(XlapyError, ValueError):
    """A flag in XLAPY_FLAGS (or given to `parse_flags`) is unknown or has a bad value."""


@dataclass(frozen=True)
class Flag:
    """One declared flag: its name (without `--`), value kind, default and help."""

    name: str
    kind: str  # "bool" | "int" | "string" | "regex" | "list"
    default: Any
    help: str


def _bool(name: str, text: str) -> bool:
    lowered = text.lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise FlagError(f"--{name} expects true or false, got {text!r}")


def _int(name: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise FlagError(f"--{name} expects an integer, got {text!r}") from None


def _regex(name: str, text: str) -> str:
    try:
        re.compile(text)
    except re.error as e:
        raise FlagError(f"--{name}: {text!r} is not a valid regular expression ({e})") from None
    return text


def _list(name: str, text: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in text.split(",") if item.strip())


_CONVERTERS: dict[str, Callable[[str, str], Any]] = {
    "bool": _bool,
    "int": _int,
    "string": lambda name, text: text,
    "regex": _regex,
    "list": _list,
}

_FLAGS: dict[str, Flag] = {}


def register_flag(name: str, kind: str, default: Any, help: str) -> Flag:  # noqa: A002
    """Declare a flag (backends call this for their own, e.g. `xla_cpu_...`).

    Declaring the same name twice with a different kind or default is an
    error: two owners of one flag would disagree about what it means.
    """
    if kind not in _CONVERTERS:
        raise ValueError(f"flag kind must be one of {sorted(_CONVERTERS)}, got {kind!r}")
    flag = Flag(name, kind, default, help)
    existing = _FLAGS.get(name)
    if existing is not None and (existing.kind, existing.default) != (kind, default):
        raise ValueError(f"flag --{name} is already declared as {existing.kind} "
                         f"with default {existing.default!r}")
    _FLAGS[name] = flag
    _CACHE.clear()  # a cached parse predates this flag
    return flag


def known_flags() -> dict[str, Flag]:
    """Every declared flag by name, in declaration order."""
    return dict(_FLAGS)


class DebugOptions:
    """Parsed flag values; read them as attributes (`options.xla_dump_to`).

    Immutable: `replace(**values)` gives a changed copy, which is how tests and
    tools override a flag without touching the environment.
    """

    __slots__ = ("_values",)

    def __init__(self, values: dict[str, Any] | None = None):
        merged = {name: flag.default for name, flag in _FLAGS.items()}
        for name, value in (values or {}).items():
            if name not in _FLAGS:
                raise FlagError(_unknown_message(name))
            merged[name] = value
        object.__setattr__(self, "_values", merged)

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        if name in _FLAGS:  # declared after these options were made
            return _FLAGS[name].default
        raise AttributeError(f"no flag named {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("DebugOptions is immutable; use replace()")

    def replace(self, **values: Any) -> DebugOptions:
        return DebugOptions({**self._values, **values})

    def non_default(self) -> dict[str, Any]:
        """The flags whose value differs from the default (what a dump records)."""
        return {name: value for name, value in self._values.items()
                if name in _FLAGS and value != _FLAGS[name].default}

    def to_text(self) -> str:
        """The non-default flags as a flag string that `parse_flags` reads back."""
        parts = []
        for name, value in self.non_default().items():
            if isinstance(value, bool):
                text = "true" if value else "false"
            elif isinstance(value, tuple):
                text = ",".join(value)
            else:
                text = str(value)
            parts.append(shlex.quote(f"--{name}={text}"))
        return " ".join(parts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DebugOptions) and self._values == other._values

    __hash__ = None

    def __repr__(self) -> str:
        return f"DebugOptions({self.to_text()!r})"


def _unknown_message(name: str) -> str:
    close = difflib.get_close_matches(name, list(_FLAGS), n=1)
    hint = f"; did you mean --{close[0]}?" if close else ""
    return f"unknown flag --{name} in {ENVIRONMENT_VARIABLE}{hint}"


def parse_flags(text: str) -> DebugOptions:
    """Parse a flag string; FlagError names the first unknown or malformed flag."""
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise FlagError(f"{ENVIRONMENT_VARIABLE} cannot be split into flags: {e}") from None
    values: dict[str, Any] = {}
    for word in words:
        if not word.startswith("-") or word.strip("-") == "":
            raise FlagError(f"{ENVIRONMENT_VARIABLE}: {word!r} is not a flag (flags look "
                            "like --name=value)")
        name, has_value, raw = word.lstrip("-").partition("=")
        flag = _FLAGS.get(name)
        if flag is None:
            raise FlagError(_unknown_message(name))
        if not has_value:
            if flag.kind != "bool":
                raise FlagError(f"--{name} needs a value (--{name}=...)")
            raw = "true"
        values[name] = _CONVERTERS[flag.kind](name, raw)
    return DebugOptions(values)


_CACHE: dict[str, DebugOptions] = {}


def debug_options() -> DebugOptions:
    """The options `XLAPY_FLAGS` sets, parsed once for each distinct value of it."""
    text = os.environ.get(ENVIRONMENT_VARIABLE, "")
    options = _CACHE.get(text)
    if options is None:
        options = parse_flags(text)
        _CACHE.clear()
        _CACHE[text] = options
    return options


# -- the flags ---------------------------------------------------------------------------
# XLA's names and defaults (xla/debug_options_flags.cc), limited to what xlapy acts on.
register_flag("xla_dump_to", "string", "",
              "directory for dumps; '-' writes text to stdout")
register_flag("xla_hlo_profile", "bool", False,
              "time each top-level instruction of every execution (read back with "
              "xlapy.profiler; ~40 ns per instruction)")
register_flag("xla_dump_hlo_as_text", "bool", False, "dump HLO modules as text (.txt)")
register_flag("xla_dump_hlo_as_long_text", "bool", True,
              "dump text in the long form (operand shapes inline); false for the short form")
register_flag("xla_dump_hlo_as_dot", "bool", False,
              "dump HLO graphs as Graphviz (.dot), fusions drawn as clusters")
register_flag("xla_dump_hlo_as_html", "bool", False, "dump HLO graphs as HTML pages (.html)")
register_flag("xla_dump_hlo_module_re", "regex", "",
              "dump only modules whose name this regular expression partially matches")
register_flag("xla_dump_hlo_pass_re", "regex", "",
              "dump the module after every pass whose name this matches ('.*': every "
              "pass that changed it)")
register_flag("xla_dump_hlo_pipeline_re", "regex", "",
              "with --xla_dump_hlo_pass_re, dump only in pipelines whose name this matches")
register_flag("xla_disable_hlo_passes", "list", (),
              "comma-separated names of passes (or pipelines) to skip")
register_flag("xla_enable_hlo_passes_only", "list", (),
              "comma-separated names of the only passes to run (pipelines always run)")
register_flag("xla_disable_all_hlo_passes", "bool", False, "run no HLO pass at all")
# xlapy's own.
register_flag("xlapy_verify_hlo_passes", "bool", False,
              "run the HLO verifier before a pipeline and after every pass that changed "
              "the module (debug mode; the tests turn it on)")


@contextlib.contextmanager
def flags_set(text: str) -> Iterator[DebugOptions]:
    """Run a block with `text` appended to `XLAPY_FLAGS` (later flags win), as a
    tool does for the compilations it starts; checked before the block runs."""
    saved = os.environ.get(ENVIRONMENT_VARIABLE)
    combined = f"{saved or ''} {text}".strip()
    options = parse_flags(combined)
    os.environ[ENVIRONMENT_VARIABLE] = combined
    try:
        yield options
    finally:
        if saved is None:
            os.environ.pop(ENVIRONMENT_VARIABLE, None)
        else:
            os.environ[ENVIRONMENT_VARIABLE] = saved
