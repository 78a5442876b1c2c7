"""Backends by name: `interpreter`, `cpu` and `gpu` are built in (llvmlite is a
dependency; the GPU compiles anywhere, runs where CUDA is); `register_backend` adds
others."""

from __future__ import annotations

import os

from xlapy.backends import snapshots
from xlapy.backends.base import Backend, Executable
from xlapy.backends.cpu import CpuBackend
from xlapy.backends.gpu import GpuBackend, device_available
from xlapy.backends.interpreter import InterpreterBackend
from xlapy.errors import CompileError

_FACTORIES = {}


def register_backend(name: str, factory) -> None:
    _FACTORIES[name] = factory


register_backend("interpreter", InterpreterBackend)
register_backend("cpu", CpuBackend)
register_backend("gpu", GpuBackend)
_INSTANCES: dict[str, Backend] = {}


def available_backends() -> list[str]:
    return list(_FACTORIES)


def runnable_backends() -> list[str]:
    """The backends that can run here: `gpu` only where a CUDA device is present."""
    return [n for n in _FACTORIES if n != "gpu" or device_available()]


def default_backend() -> str:
    """`$XLAPY_DEFAULT_BACKEND` when set, else `cpu` where LLVM is available, else
    the interpreter."""
    chosen = os.environ.get("XLAPY_DEFAULT_BACKEND")
    if chosen:
        return chosen
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
        backend = _FACTORIES[name]()
        backend.compile = snapshots.recording(backend.compile)   # --xla_dump_hlo_snapshots
        _INSTANCES[name] = backend
    return _INSTANCES[name]


__all__ = ["Backend", "Executable", "available_backends", "default_backend", "get_backend",
           "register_backend", "runnable_backends"]
