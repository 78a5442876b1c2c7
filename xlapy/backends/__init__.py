"""Backends by name. `interpreter` always exists; `cpu` and `gpu` register
themselves when their code is present and usable on this machine."""

from __future__ import annotations

from xlapy.backends.base import Backend, Executable
from xlapy.errors import CompileError

_FACTORIES = {}


def register_backend(name: str, factory) -> None:
    _FACTORIES[name] = factory


def _register_builtin() -> None:
    from xlapy.backends.interpreter import InterpreterBackend

    register_backend("interpreter", InterpreterBackend)


_register_builtin()
_INSTANCES: dict[str, Backend] = {}


def available_backends() -> list[str]:
    return list(_FACTORIES)


def default_backend() -> str:
    """`cpu` once it exists, else the interpreter."""
    for name in ("cpu", "interpreter"):
        if name in _FACTORIES:
            return name
    raise CompileError("no backend is available")


def get_backend(name: str | None = None) -> Backend:
    name = name or default_backend()
    if name not in _FACTORIES:
        raise CompileError(f"unknown or unavailable backend {name!r}; "
                           f"available: {', '.join(available_backends())}")
    if name not in _INSTANCES:
        _INSTANCES[name] = _FACTORIES[name]()
    return _INSTANCES[name]


__all__ = ["Backend", "Executable", "available_backends", "default_backend", "get_backend",
           "register_backend"]
