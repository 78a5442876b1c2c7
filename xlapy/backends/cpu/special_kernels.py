"""Kernels that are not one loop over the output: they come first, and say
whether they took the instruction (False: the generic loop kernel runs).

Each family lives in `kernels/` and registers itself with `@special(...)`;
`_FAMILIES` lists the modules to import.
"""

from __future__ import annotations

import functools
import importlib

_SPECIAL = {}
_FAMILIES = ("dot", "in_place", "sort", "gather_scatter", "convolution", "windows", "rng",
             "linalg", "reductions")


def special(*opcodes):
    def register(fn):
        for opcode in opcodes:
            _SPECIAL[opcode] = fn
        return fn
    return register


@functools.cache
def _load_families() -> None:
    for name in _FAMILIES:
        try:
            importlib.import_module(f"xlapy.backends.cpu.kernels.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"xlapy.backends.cpu.kernels.{name}":
                raise


def emit_special(cg, instruction) -> bool:
    _load_families()
    fn = _SPECIAL.get(instruction.opcode)
    return bool(fn and fn(cg, instruction))
