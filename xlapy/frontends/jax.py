"""`xlapy.frontends.jax.jit(f)`: a JAX function compiled and run by xlapy.

JAX traces and lowers `f` (`jax.jit(f).lower(*args).as_text(dialect="hlo")`),
xlapy parses that HLO text, compiles it once per input signature and runs it;
arguments and results are JAX arrays (any pytree of them, as `jax.jit` takes).

    f = xlapy.frontends.jax.jit(lambda x, y: jnp.tanh(x @ y))
    f(jnp.ones((2, 3)), jnp.ones((3, 4)))        # compiled here, run by xlapy

The cache key is (the pytree structure of the dynamic arguments, each leaf's
shape, dtype and weak type, the static arguments' values). A CPU JAX array
crosses into xlapy without a copy (`np.asarray` views its buffer); results
come back through DLPack where JAX accepts the buffer, else by one copy.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from xlapy.backends import Executable
from xlapy.hlo import parse
from xlapy.hlo.ir import HloModule
from xlapy.runtime import compile as compile_module

__all__ = ["JaxFunction", "jit"]

_SCALARS = (bool, int, float, complex, np.generic)


def _jax():
    import jax  # optional: the JAX frontend needs JAX only when it is used

    return jax


@dataclass
class _Entry:
    """One compiled signature: the module, its executable and the output pytree."""

    module: HloModule
    executable: Executable
    out_tree: Any
    dtypes: tuple[np.dtype, ...]  # each parameter's dtype, for Python scalars


class JaxFunction:
    """A JAX function compiled by xlapy: call it like `jax.jit(f)`; `.lower(*args)`
    returns JAX's Lowered object and `.hlo_module(*args)` the parsed module."""

    def __init__(self, fn: Callable, static_argnums: int | Sequence[int] = (),
                 static_argnames: str | Sequence[str] = (), backend: str | None = None):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.static_argnums = _as_tuple(static_argnums)
        self.static_argnames = _as_tuple(static_argnames)
        self.backend = backend
        self.compile_count = 0
        self._cache: dict[tuple, _Entry] = {}
        self._jitted = None
        try:
            self._parameters = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            self._parameters = []

    def __call__(self, *args, **kwargs):
        jax = _jax()
        leaves, key = self._signature(jax, args, kwargs)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._compile(jax, args, kwargs)
            self._cache[key] = entry
        arrays = [_host(leaf, dtype) for leaf, dtype in zip(leaves, entry.dtypes)]
        results = entry.executable.execute(*arrays)
        return jax.tree_util.tree_unflatten(entry.out_tree, [_to_jax(jax, r) for r in results])

    def lower(self, *args, **kwargs):
        """JAX's Lowered object for these arguments (unused arguments kept)."""
        return self._jax_jit(_jax()).lower(*args, **kwargs)

    def hlo_module(self, *args, **kwargs) -> HloModule:
        """The HLO module xlapy compiles for these arguments (parsed, not optimised)."""
        return parse(self.lower(*args, **kwargs).as_text(dialect="hlo"))

    # -- helpers --------------------------------------------------------------------------
    def _jax_jit(self, jax):
        if self._jitted is None:  # keep_unused: the module's parameters are every leaf
            self._jitted = jax.jit(self.fn, static_argnums=self.static_argnums,
                                   static_argnames=self.static_argnames, keep_unused=True)
        return self._jitted

    def _compile(self, jax, args, kwargs) -> _Entry:
        lowered = self.lower(*args, **kwargs)
        module = parse(lowered.as_text(dialect="hlo"))
        executable = compile_module(module, self.backend)
        self.compile_count += 1
        dtypes = tuple(p.shape.dtype for p in module.entry_computation.parameters)
        return _Entry(module, executable, lowered.out_tree, dtypes)

    def _signature(self, jax, args, kwargs) -> tuple[list, tuple]:
        """(the dynamic leaves in the module's parameter order, the cache key)."""
        dynamic_args, static_args = [], []
        for i, a in enumerate(args):
            (static_args if i in self._static_positions(len(args)) else dynamic_args).append(
                (i, a))
        dynamic_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        static_kwargs = tuple(sorted((k, v) for k, v in kwargs.items()
                                     if k in self.static_argnames))
        flat, tree = jax.tree_util.tree_flatten_with_path(
            (tuple(a for _, a in dynamic_args), dynamic_kwargs))
        leaves, keys = [], []
        for path, leaf in flat:
            keys.append(self._leaf_key(jax, leaf, path, dynamic_args))
            leaves.append(leaf)
        try:
            key = (tree, tuple(keys), tuple(static_args), static_kwargs)
            hash(key)
        except TypeError as e:
            raise TypeError(f"{self.__name__}: static arguments must be hashable: {e}") from e
        return leaves, key

    def _static_positions(self, count: int) -> set[int]:
        positions = {i % count for i in self.static_argnums if -count <= i < count}
        for name in self.static_argnames:
            if name in self._parameters:
                positions.add(self._parameters.index(name))
        return positions

    def _leaf_key(self, jax, leaf, path, dynamic_args) -> tuple:
        if isinstance(leaf, jax.Array | np.ndarray):
            return leaf.shape, np.dtype(leaf.dtype), bool(getattr(leaf, "weak_type", False))
        if isinstance(leaf, _SCALARS):
            return (), type(leaf), not isinstance(leaf, np.generic)
        where = _describe_path(jax, path, dynamic_args, self._parameters)
        raise TypeError(
            f"{self.__name__}: argument {where} is a {type(leaf).__name__}, not an array or "
            "a scalar; pass arrays (jax, NumPy) or mark the argument static with "
            "static_argnums / static_argnames")


def jit(fn: Callable | None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (), backend: str | None = None):
    """`fn` compiled by xlapy from JAX's HLO, like `jax.jit(fn)`; usable as a decorator
    with or without arguments. `backend` is an xlapy backend ("cpu" by default)."""
    if fn is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, backend=backend)
    return JaxFunction(fn, static_argnums, static_argnames, backend)


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    return tuple(x) if isinstance(x, list | tuple) else (x,)


def _host(leaf, dtype: np.dtype) -> np.ndarray:
    """A leaf as a NumPy array of the parameter's dtype: a view of a CPU JAX array's
    buffer (no copy), a Python scalar converted as JAX converted it."""
    array = np.asarray(leaf)
    return array if array.dtype == dtype else array.astype(dtype)


def _to_jax(jax, array: np.ndarray):
    """An xlapy result as a JAX array: DLPack hands JAX the buffer where it can take it."""
    array = np.asarray(array)
    if array.flags.c_contiguous and array.flags.writeable and array.dtype.kind in "biufc":
        try:
            return jax.dlpack.from_dlpack(array)
        except (TypeError, ValueError, RuntimeError, BufferError):
            pass  # e.g. a buffer JAX cannot alias: fall back to one copy
    return jax.numpy.asarray(array)


def _describe_path(jax, path, dynamic_args, parameters) -> str:
    """`0 (x)['w']` or `'lr'`: where a leaf sits in the call's arguments."""
    if not path:
        return "?"
    first, rest = path[0], path[1:]
    where = ""
    if getattr(first, "idx", None) == 0 and rest:  # inside the positional arguments
        position = dynamic_args[rest[0].idx][0]
        name = parameters[position] if position < len(parameters) else None
        where = f"{position}" + (f" ({name})" if name else "")
        rest = rest[1:]
    elif rest:  # inside the keyword arguments
        where = repr(getattr(rest[0], "key", rest[0]))
        rest = rest[1:]
    return where + jax.tree_util.keystr(tuple(rest))
