"""The backend interface: compile an HLO module once, execute it many times.

Every backend (interpreter, cpu) implements these two small classes;
`xlapy.compile` and `xlapy.execute` pick one by name.
"""

from __future__ import annotations

import abc
import copy
from collections.abc import Sequence

import numpy as np

from xlapy.errors import ExecutionError
from xlapy.flags import DebugOptions, debug_options
from xlapy.hlo.ir import HloModule
from xlapy.hlo.shape import Shape
from xlapy.passes.default_pipeline import optimize
from xlapy.passes.dump import ModuleDumper, dumper_for


class Executable(abc.ABC):
    """A compiled module. `execute` takes one array per entry parameter (a tuple
    of arrays for a tuple parameter) and returns the root's value as a list:
    the elements of a tuple root, or a single array."""

    def __init__(self, module: HloModule, backend: str):
        self.module = module
        self.backend = backend

    @abc.abstractmethod
    def execute(self, *arrays) -> list:
        ...

    def run(self, args: list) -> list:
        """Execute on arguments already of the parameters' exact shapes and dtypes
        (what `jit` has checked through its cache key); backends may skip checks."""
        return self.execute(*args)

    def check_arguments(self, arrays: Sequence) -> list:
        """Arguments as NumPy values of the parameters' exact shapes and dtypes.

        Python scalars and lists are converted; an ndarray of the wrong dtype or
        dimensions is an error naming the parameter, never a silent cast.
        """
        params = self.module.entry_computation.parameters
        if len(arrays) != len(params):
            raise ExecutionError(
                f"{self.module.name} takes {len(params)} argument(s), got {len(arrays)}")
        return [check_value(a, p.shape, f"argument {p.parameter_number} ({p.name})")
                for a, p in zip(arrays, params)]

    def as_text(self) -> str:
        return self.module.to_text()


def check_value(value, shape: Shape, where: str):
    if shape.is_tuple:
        if not isinstance(value, (tuple, list)) or len(value) != len(shape.tuple_shapes):
            raise ExecutionError(f"{where}: expected a tuple of {len(shape.tuple_shapes)} "
                                 f"values for shape {shape}")
        return tuple(check_value(v, s, f"{where}[{i}]")
                     for i, (v, s) in enumerate(zip(value, shape.tuple_shapes)))
    if shape.is_token:
        return value
    if not isinstance(value, np.ndarray) and hasattr(value, "__array__"):
        value = np.asarray(value)
    if isinstance(value, np.ndarray | np.generic):
        array = np.asarray(value)
        if array.dtype != shape.dtype:
            raise ExecutionError(f"{where}: expected {shape.to_text(False)}, got an array of "
                                 f"dtype {array.dtype}")
    else:
        try:
            array = np.asarray(value, dtype=shape.dtype)
        except (TypeError, ValueError) as e:
            raise ExecutionError(f"{where}: cannot convert to {shape.to_text(False)}: {e}") from e
    if array.shape != shape.dimensions:
        raise ExecutionError(f"{where}: expected {shape.to_text(False)}, got an array of "
                             f"shape {list(array.shape)}")
    return array


class Backend(abc.ABC):
    name: str

    @abc.abstractmethod
    def compile(self, module: HloModule, optimize: bool = False) -> Executable:
        """An executable for `module`; with `optimize`, of a copy that went through
        the optimisation pipeline (the caller's module is never changed)."""


def optimized_copy(module: HloModule, extra_passes=(), dump_prefix: str = "",
                   flags: DebugOptions | None = None,
                   pipeline=None) -> tuple[HloModule, ModuleDumper | None]:
    """A deep copy of `module` after `pipeline` (default: the default pipeline and
    `extra_passes`),
    dumped as `flags` (default XLAPY_FLAGS) ask, and the dumper, through which the
    backend dumps what it makes next (its buffer assignment) under the same number."""
    module = copy.deepcopy(module)
    flags = flags if flags is not None else debug_options()
    dumper = dumper_for(module, flags)
    optimize(module, pipeline, extra_passes=extra_passes, flags=flags, dumper=dumper,
             dump_prefix=dump_prefix)
    return module, dumper


def dump_buffer_assignment(dumper: ModuleDumper | None, assignment, dump_prefix: str) -> None:
    if dumper is not None:
        dumper.dump_text(f"{dump_prefix}after_optimizations-buffer-assignment.txt",
                         assignment.to_text())
