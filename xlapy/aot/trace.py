"""The module of a Python function for `xlapy aot module:function --arg f32[2,3]`.

Arguments are given by shape; `constants` (e.g. the arrays of an .npz file)
bind the function's parameters of those names to fixed values, which the
trace turns into constants of the module — an inference model with its
weights baked in is then one object.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from xlapy.errors import CompileError
from xlapy.hlo import mutation
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloInstruction, HloModule
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.verifier import verify
from xlapy.jit import jit

_SHAPE = re.compile(r"\s*([a-z]+[0-9]*)\s*\[\s*([0-9,\s]*)\]\s*")


def parse_shape(text: str) -> tuple[np.dtype, tuple[int, ...]]:
    """'f32[100,784]' -> (float32, (100, 784)); 'f32[]' is a scalar."""
    match = _SHAPE.fullmatch(text)
    if not match:
        raise ValueError(f"not a shape: {text!r} (write e.g. f32[100,784] or s32[])")
    try:
        element = PrimitiveType[match.group(1).upper()]
        dtype = np.dtype(element.numpy) if hasattr(element, "numpy") else None
    except KeyError:
        raise ValueError(f"unknown element type {match.group(1)!r} in {text!r}") from None
    if dtype is None:
        raise ValueError(f"element type {match.group(1)!r} has no NumPy dtype")
    dims = tuple(int(d) for d in match.group(2).replace(" ", "").split(",") if d)
    return dtype, dims


def load_function(spec: str) -> Callable:
    """'package.module:function' (or 'path/file.py:function') -> the function."""
    if ":" not in spec:
        raise ValueError(f"{spec!r}: write module:function (or file.py:function)")
    where, name = spec.rsplit(":", 1)
    try:
        if where.endswith(".py"):
            path = Path(where).resolve()
            module_spec = importlib.util.spec_from_file_location(path.stem, path)
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
        else:
            if "" not in sys.path:
                sys.path.insert(0, "")
            module = importlib.import_module(where)
    except (ImportError, OSError, SyntaxError) as e:
        raise ValueError(f"cannot import {where!r}: {e}") from e
    fn = getattr(module, name, None)
    if not callable(fn):
        raise ValueError(f"{where!r} has no function {name!r}")
    return fn


def trace(fn: Callable, shapes: list[str], constants: dict | None = None) -> HloModule:
    """The HLO module of `fn` on arguments of `shapes` (in order of its parameters
    not bound by `constants`)."""
    constants = dict(constants or {})
    try:
        parameters = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        parameters = []
    unknown = [k for k in constants if parameters and k not in parameters]
    if unknown:
        raise CompileError(f"{getattr(fn, '__name__', fn)} has no parameter(s) "
                           f"{', '.join(unknown)} to bind from the constants "
                           f"(its parameters: {', '.join(parameters)})")
    free = [p for p in parameters if p not in constants]
    if parameters and len(shapes) != len(free):
        raise CompileError(f"{fn.__name__} takes {len(free)} argument(s) besides the "
                           f"constants ({', '.join(free)}), got {len(shapes)} --arg shape(s)")
    examples = [np.zeros(dims, dtype) for dtype, dims in map(parse_shape, shapes)]

    def bound(*args):
        return fn(*args, **constants) if not parameters else \
            fn(**dict(zip(free, args)), **constants)
    bound.__name__ = getattr(fn, "__name__", "fn")
    return jit(bound).lower(*examples).module


def bind_constants(module: HloModule, constants: dict) -> HloModule:
    """A copy of `module` whose entry parameters named in `constants` (by the
    parameter's name, or `argN` / `paramN` for parameter N) are constants of
    those values; the other parameters are renumbered in order."""
    module = copy.deepcopy(module)
    entry = module.entry_computation
    params = entry.parameters
    by_name = {}
    for p in params:
        for key in (p.name, f"arg{p.parameter_number}", f"param{p.parameter_number}"):
            by_name[key] = p
    unknown = [k for k in constants if k not in by_name]
    if unknown:
        raise CompileError(f"the module has no parameter(s) {', '.join(unknown)}; its "
                           "parameters: " + ", ".join(f"{p.name} (arg{p.parameter_number})"
                                                      for p in params))
    uniquer = mutation.NameUniquer(module)
    bound = set()
    for key, value in constants.items():
        p = by_name[key]
        value = np.asarray(value)
        if value.shape != tuple(p.shape.dimensions) or value.dtype != p.shape.dtype:
            raise CompileError(f"constant {key!r} is {value.dtype}{list(value.shape)}, but "
                               f"parameter {p.name} is {p.shape}")
        constant = HloInstruction(Opcode.CONSTANT, p.shape, literal=value.copy())
        constant.name = uniquer(f"constant_{p.name}")
        mutation.add_before(entry, p, constant)
        mutation.replace_uses(entry, p, constant)
        bound.add(id(p))
    mutation.remove(entry, [p for p in params if id(p) in bound])
    for number, p in enumerate(entry.parameters):
        p.parameter_number = number
    module.attributes.pop("entry_computation_layout", None)
    verify(module)
    return module
