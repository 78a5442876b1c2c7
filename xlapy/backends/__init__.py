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
        backend.compile = _instrumented(backend.compile, name)
        _INSTANCES[name] = backend
    return _INSTANCES[name]


_COMPILE_HOOKS: list = []


def add_compile_hook(hook) -> None:
    """Call `hook(module, backend name)` after every compilation (the compile
    report registers one; layers above the backends cannot be imported here)."""
    _COMPILE_HOOKS.append(hook)


def _instrumented(compile_fn, name: str):
    """A backend's `compile` that records executions (--xla_dump_hlo_snapshots) and
    runs the compile hooks."""
    recording = snapshots.recording(compile_fn)

    def compile(module, *args, **kwargs):
        executable = recording(module, *args, **kwargs)
        for hook in _COMPILE_HOOKS:
            hook(module, name)
        return executable
    compile.__doc__ = compile_fn.__doc__
    return compile


__all__ = ["Backend", "Executable", "add_compile_hook", "available_backends", "default_backend",
           "get_backend", "register_backend", "runnable_backends"]
