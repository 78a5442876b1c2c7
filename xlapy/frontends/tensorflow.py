"""`xlapy.frontends.tensorflow.function(f)`: a `tf.function` compiled and run by xlapy.

TensorFlow's own bridge lowers the function to HLO, the module XLA would get
under `jit_compile=True` (`f.experimental_get_compiler_ir(*args)(stage="hlo")`);
xlapy parses it, compiles it once per input signature and runs it. Tensors go
in and come out; variables the function reads are passed as arguments and
those it writes are assigned the module's updated values after each call, so
a training step written with `tf.GradientTape` and `assign_sub` trains:

    step = xlapy.frontends.tensorflow.function(train_step)   # a tf.function
    loss = step(images, labels)                                # compiled here, run by xlapy

The bridge's module takes the function's tensor arguments first, then what it
captures (variables' values, captured constants), and returns its outputs
followed by each written variable's new value, which `input_output_alias`
pairs with the variable's parameter. xlapy never writes into TensorFlow's
memory: the aliasing is read for the pairing and dropped from the module.
Results cross back through DLPack (no copy) where TensorFlow takes the buffer.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from xlapy.backends import Executable
from xlapy.errors import CompileError
from xlapy.hlo import parse
from xlapy.hlo.ir import HloModule
from xlapy.runtime import compile as compile_module

__all__ = ["TensorFlowFunction", "function"]


def _tf():
    import tensorflow as tf  # optional: the TensorFlow frontend needs it only when used

    return tf


@dataclass
class _Entry:
    """One compiled signature."""

    module: HloModule
    executable: Executable
    captured: list          # per captured input: ("variable", tf.Variable) or ("value", array)
    updates: list           # (output number, tf.Variable) for each variable the function writes
    structured_outputs: Any  # the function's output structure (tensor leaves are results)
    results: int            # how many of the module's outputs are the function's own


class TensorFlowFunction:
    """A `tf.function` whose calls run xlapy's compile of TensorFlow's HLO.
    `.hlo_module(*args)` is the parsed module for those arguments."""

    def __init__(self, fn: Callable, backend: str | None = None):
        tf = _tf()
        python_function = getattr(fn, "python_function", fn)
        functools.update_wrapper(self, python_function)
        options = {}
        if getattr(fn, "input_signature", None) is not None:
            options["input_signature"] = fn.input_signature
        self._tf_function = tf.function(python_function, jit_compile=True, **options)
        self._signature = inspect.signature(python_function)
        self.backend = backend
        self._cache: dict[tuple, _Entry] = {}
        self.compiles = 0

    def __call__(self, *args, **kwargs):
        tf = _tf()
        arguments = self._bind(args, kwargs)
        flat = tf.nest.flatten(arguments)
        key = (repr(tf.nest.map_structure(lambda _: None, arguments)),
               tuple(_spec(value, tf) for value in flat))
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache[key] = self._compile(arguments, flat)
        tensors = [_as_numpy(v) for v in flat if _is_tensor(v, tf)]
        captured = [v.numpy() if kind == "variable" else v for kind, v in entry.captured]
        outputs = entry.executable.execute(*tensors, *captured)
        for number, variable in entry.updates:
            variable.assign(_as_tensor(outputs[number], tf))
        results = iter(outputs[:entry.results])
        leaves = [_as_tensor(next(results), tf) if isinstance(leaf, tf.Tensor) else leaf
                  for leaf in tf.nest.flatten(entry.structured_outputs)]
        return tf.nest.pack_sequence_as(entry.structured_outputs, leaves)

    def hlo_module(self, *args, **kwargs) -> HloModule:
        """TensorFlow's HLO for these arguments, as xlapy parsed it."""
        tf = _tf()
        arguments = self._bind(args, kwargs)
        leaves = tf.nest.flatten(arguments)
        return self._compile(arguments, leaves).module

    # -- compiling one signature -------------------------------------------------------------
    def _bind(self, args, kwargs) -> dict:
        """The call's arguments by parameter name, defaults applied (TensorFlow's
        compiler-IR entry does not apply defaults itself)."""
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"{self.__name__}: {error}") from None
        bound.apply_defaults()
        return dict(bound.arguments)

    def _call_arguments(self, arguments: dict) -> tuple[list, dict]:
        args, kwargs = [], {}
        for name, parameter in self._signature.parameters.items():
            value = arguments[name]
            if parameter.kind is parameter.VAR_POSITIONAL:
                args.extend(value)
            elif parameter.kind is parameter.VAR_KEYWORD:
                kwargs.update(value)
            elif parameter.kind is parameter.KEYWORD_ONLY:
                kwargs[name] = value
            else:
                args.append(value)
        return args, kwargs

    def _compile(self, arguments: dict, leaves: list) -> _Entry:
        tf = _tf()
        args, kwargs = self._call_arguments(arguments)
        name = self.__name__
        try:
            text = self._tf_function.experimental_get_compiler_ir(*args, **kwargs)(stage="hlo")
            concrete = self._tf_function.get_concrete_function(*args, **kwargs)
        except (tf.errors.OpError, ValueError, TypeError, NotImplementedError) as error:
            raise CompileError(f"{name}: TensorFlow could not lower the function to HLO: "
                               f"{str(error).strip().splitlines()[0]}") from error
        module = parse(text)
        _check_static(name, module)
        captured_inputs = list(concrete.captured_inputs)
        explicit = concrete.inputs[:len(concrete.inputs) - len(captured_inputs)]
        tensors = [v for v in leaves if _is_tensor(v, tf)]
        _check_inputs(name, explicit, tensors, len(captured_inputs), module)
        variables = {id(v.handle): v for v in concrete.variables}
        captured = []
        for tensor in captured_inputs:
            if tensor.dtype == tf.resource:
                variable = variables.get(id(tensor))
                if variable is None:
                    raise CompileError(f"{name}: a captured resource that is not a variable "
                                       f"({tensor}) cannot be passed to xlapy")
                captured.append(("variable", variable))
            else:
                captured.append(("value", tensor.numpy()))
        aliases = module.attributes.pop("input_output_alias", ()) or ()
        updates = []
        for alias in aliases:
            number = alias.parameter_number - len(explicit)
            if not 0 <= number < len(captured) or captured[number][0] != "variable":
                raise CompileError(f"{name}: output {alias.output_index} updates parameter "
                                   f"{alias.parameter_number}, which is not a captured variable")
            updates.append((alias.output_index[0], captured[number][1]))
        results = sum(isinstance(leaf, tf.Tensor) for leaf in
                      tf.nest.flatten(concrete.structured_outputs))
        _check_outputs(name, module, results, updates)
        self.compiles += 1
        return _Entry(module, compile_module(module, self.backend), captured, updates,
                      concrete.structured_outputs, results)


def function(fn: Callable | None = None, *, backend: str | None = None):
    """`fn` (a `tf.function` or a plain function of tensors) compiled by xlapy:
    TensorFlow lowers it to HLO per input signature, xlapy compiles and runs it.
    Usable as a decorator, with or without `backend=`."""
    if fn is None:
        return lambda f: TensorFlowFunction(f, backend)
    return TensorFlowFunction(fn, backend)


# -- tensors in and out ------------------------------------------------------------------------
def _is_tensor(value, tf) -> bool:
    return isinstance(value, (tf.Tensor, np.ndarray, tf.Variable))


def _spec(value, tf) -> tuple:
    """What TensorFlow traces on: a tensor's shape and dtype, any other value itself."""
    if _is_tensor(value, tf):
        return ("tensor", tuple(value.shape), tf.as_dtype(value.dtype).as_numpy_dtype)
    try:
        hash(value)
    except TypeError:
        return ("value", type(value), repr(value))
    return ("value", type(value), value)


def _as_numpy(value) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    return value.numpy()   # a CPU tensor's buffer, not a copy


def _as_tensor(array: np.ndarray, tf):
    """A tf.Tensor over `array`'s buffer (DLPack), or a copy where TF refuses it."""
    try:
        return tf.experimental.dlpack.from_dlpack(array.__dlpack__())
    except (TypeError, ValueError, BufferError, AttributeError, tf.errors.OpError):
        return tf.convert_to_tensor(array)


def _check_inputs(name: str, explicit, tensors: list, captures: int,
                  module: HloModule) -> None:
    """The bridge's parameters must be the tensors in order (then the captures)."""
    if len(explicit) != len(tensors):
        raise CompileError(f"{name}: TensorFlow's function takes {len(explicit)} tensors, "
                           f"the call has {len(tensors)}")
    for number, (placeholder, value) in enumerate(zip(explicit, tensors)):
        if tuple(placeholder.shape) != tuple(value.shape):
            raise CompileError(f"{name}: tensor argument {number} has shape "
                               f"{tuple(value.shape)}, TensorFlow's input "
                               f"{placeholder.name} {tuple(placeholder.shape)}")
    parameters = len(module.entry_computation.parameters)
    if parameters != len(explicit) + captures:
        raise CompileError(f"{name}: TensorFlow's HLO has {parameters} parameters for "
                           f"{len(explicit)} tensors and {captures} captured values")


def _check_static(name: str, module: HloModule) -> None:
    """TF lowers data-dependent shapes (`tf.unique`, `tf.where`) to bounded dynamic
    ones; xlapy compiles static shapes only, so such a function is refused here."""
    for computation in module.computations:
        for instruction in computation.instructions:
            shapes = instruction.shape.tuple_shapes if instruction.shape.is_tuple else (
                instruction.shape,)
            if any(s.is_array and s.is_dynamic for s in shapes):
                raise CompileError(f"{name}: TensorFlow's HLO has a data-dependent shape "
                                   f"({instruction.name} = {instruction.shape.to_text()} "
                                   f"{instruction.opcode.value}); xlapy compiles static "
                                   f"shapes only")


def _check_outputs(name: str, module: HloModule, results: int, updates: list) -> None:
    root = module.entry_computation.root_instruction.shape
    count = len(root.tuple_shapes) if root.is_tuple else 1
    if count != results + len(updates):
        raise CompileError(f"{name}: TensorFlow's HLO returns {count} values; the function "
                           f"has {results} outputs and writes {len(updates)} variables")
