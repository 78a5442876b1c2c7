"""`xlapy.config`: the switches a program flips at run time, as `jax.config`.

One switch so far, JAX's `jax_enable_x64`:

    xlapy.config.update("enable_x64", True)     # or "jax_enable_x64"
    xlapy.config.read("enable_x64")             # True
    xlapy.config.enable_x64.value               # the same
    with xlapy.config.enable_x64(False):        # this thread, this block
        ...

With x64 off (the default, as in JAX) Python scalars, `zeros`, `arange`,
`random.normal`... are 32-bit and 64-bit NumPy data entering the NumPy
frontend becomes 32-bit; with it on they are 64-bit. `xlapy.core.dtypes`
reads the switch; HLO-level entry points (`xlapy.execute`, parsed modules,
the framework frontends) keep exact types whatever it says.

A switch's value is, first to last: the innermost context manager active in
this thread, then `update`, then its `XLAPY_FLAGS` flag (`--xlapy_enable_x64`),
read when the value is first needed, as JAX reads `JAX_ENABLE_X64` once at
start-up; flip it later with `update` or the context manager.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from xlapy.flags import debug_options, register_flag

register_flag("xlapy_enable_x64", "bool", False,
              "64-bit defaults in the NumPy frontend (JAX's jax_enable_x64): Python floats "
              "and ints, zeros, arange, random... become float64/int64, and 64-bit NumPy "
              "inputs keep their width")


class _Override(threading.local):
    value: bool | None = None   # a class default: reading it never raises


class State:
    """One switch: `.value` reads it, `state(new_value)` sets it for a block
    (a context manager, this thread only), `update` sets it for the process."""

    def __init__(self, name: str, flag: str, help: str):  # noqa: A002
        self.name = name
        self.flag = flag
        self.__doc__ = help
        self._global: bool | None = None   # None: not set by update, follow the flag
        self._override = _Override()

    @property
    def value(self) -> bool:
        local = self._override.value
        if local is not None:
            return local
        if self._global is None:
            self._global = bool(getattr(debug_options(), self.flag))
        return self._global

    def set_global(self, value: bool | None) -> None:
        """Set the process-wide value; None goes back to the flag's."""
        self._global = None if value is None else _as_bool(self.name, value)

    @contextlib.contextmanager
    def __call__(self, new_value: bool = True) -> Iterator[None]:
        saved = self._override.value
        self._override.value = _as_bool(self.name, new_value)
        try:
            yield
        finally:
            self._override.value = saved

    def __bool__(self):
        raise TypeError(f"bool() of the switch {self.name} is ambiguous; read "
                        f"xlapy.config.{self.name}.value (or use it as a context manager)")

    def __repr__(self) -> str:
        return f"<xlapy.config.{self.name}: {self.value}>"


def _as_bool(name: str, value) -> bool:
    if isinstance(value, bool) or value in (0, 1):
        return bool(value)
    raise TypeError(f"xlapy.config: {name} takes True or False, got {value!r}")


enable_x64 = State("enable_x64", "xlapy_enable_x64",
                   "64-bit default dtypes (float64, int64, complex128), as jax_enable_x64.")

_STATES = {"enable_x64": enable_x64}
_ALIASES = {"jax_enable_x64": "enable_x64", "xlapy_enable_x64": "enable_x64"}


def _state(name: str) -> State:
    state = _STATES.get(_ALIASES.get(name, name))
    if state is None:
        raise AttributeError(f"xlapy.config has no option {name!r}; the options are "
                             f"{sorted(_STATES)}")
    return state


def update(name: str, value) -> None:
    """Set option `name` (JAX's spelling, `jax_enable_x64`, works too) for the
    whole process; None returns it to its `XLAPY_FLAGS` default."""
    _state(name).set_global(value)


def read(name: str) -> bool:
    """The current value of option `name`."""
    return _state(name).value


__all__ = ["State", "enable_x64", "read", "update"]
