"""Tracing: how every primitive reaches HLO, or runs at once.

`bind(opcode, operands, attrs)` is the only door. Under a trace (inside
`jit`, or while a loop body or reducer is being traced) it adds an
instruction to the trace's ComputationBuilder and returns a Tracer. With no
trace it evaluates the instruction at once with the interpreter's rule for
that opcode: eager mode is op by op with exactly the semantics of the
compiled code, and no compilation at all.

A Tracer of an enclosing trace that turns up in an inner one (a loop body
closing over a jit argument) is *captured*: the inner computation gets an
extra parameter for it, and whoever emits the loop passes the outer value in.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from xlapy.core import dtypes, lazy
from xlapy.core.array import Array, ConcreteArray
from xlapy.core.errors import ConcretizationError, user_frame
from xlapy.hlo import shape_inference
from xlapy.hlo.attributes import OpMetadata
from xlapy.hlo.builder import ComputationBuilder, ModuleBuilder
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.evaluator.evaluator import Evaluator
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

_state = threading.local()


def _stack() -> list:
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    return stack


def current_trace() -> Trace | None:
    stack = _stack()
    return stack[-1] if stack else None


class Trace:
    """One computation being traced: its builder, where op names come from, and
    the outer values it captured."""

    def __init__(self, builder: ComputationBuilder, name_stack: str,
                 parent: Trace | None = None, allow_captures: bool = True,
                 concrete: bool = False):
        self.builder = builder
        self.concrete = concrete
        """Evaluate every instruction as it is traced, so Python control flow on the
        values works (what `grad` outside `jit` needs); `values` keeps them."""
        self.values: dict[int, Any] = {}        # id(instruction) -> its value, when concrete
        self.name_stack = name_stack
        self.parent = parent
        self.allow_captures = allow_captures
        self.captures: list[Array] = []        # outer values, in parameter order
        self._captured: dict[int, Tracer] = {}  # id(outer) -> its parameter here
        self._constants: dict[int, tuple[Array, Tracer]] = {}  # keeps the value alive
        self._next_parameter = 0

    @property
    def module_builder(self) -> ModuleBuilder:
        return self.builder.module

    def __enter__(self) -> Trace:
        _stack().append(self)
        lazy.STATE.traces += 1
        return self

    def __exit__(self, *exc) -> None:
        _stack().pop()
        lazy.STATE.traces -= 1

    # -- values entering this trace ----------------------------------------------------
    def parameter(self, shape: Shape, weak_type: bool = False, name: str | None = None,
                  origin: str = "", value=None) -> Tracer:
        number = self._next_parameter
        self._next_parameter += 1
        instruction = self.builder.parameter(number, shape, name=name)
        return self.tracer(instruction, weak_type, origin or f"parameter {number}", value)

    def tracer(self, instruction: HloInstruction, weak_type: bool, origin: str,
               value=None) -> Tracer:
        """A Tracer of `instruction`; in a concrete trace it knows `value`."""
        if self.concrete:
            if value is None:
                raise ConcretizationError(
                    f"{origin} has no value in a trace that evaluates as it goes")
            self.values[id(instruction)] = value
        return Tracer(self, instruction, weak_type, origin, value)

    def lift(self, value: Array) -> Tracer:
        """`value` as a Tracer of this trace: constants for concrete values,
        captured parameters for Tracers of enclosing traces."""
        if isinstance(value, Tracer):
            if value.trace is self:
                return value
            return self._capture(value)
        cached = self._constants.get(id(value))
        if cached is None:
            literal = np.asarray(value.value)
            instruction = self.builder.constant(literal)
            cached = (value, self.tracer(instruction, value.weak_type, "a constant", literal))
            self._constants[id(value)] = cached
        return cached[1]

    def _capture(self, outer: Tracer) -> Tracer:
        if not _is_ancestor(outer.trace, self):
            raise ConcretizationError(
                f"a traced value ({outer.describe()}) escaped the function that traced it; "
                "return it from that function instead of storing it")
        if not self.allow_captures:
            raise ConcretizationError(
                f"this function may not close over the traced value {outer.describe()}: "
                "reducers, comparators and scatter combiners must use only their arguments")
        tracer = self._captured.get(id(outer))
        if tracer is None:
            tracer = self.parameter(outer.hlo_shape, outer.weak_type,
                                    origin=f"captured {outer.describe()}",
                                    value=outer.known if self.concrete else None)
            self._captured[id(outer)] = tracer
            self.captures.append(outer)
        return tracer

    def metadata(self, name: str) -> OpMetadata:
        items: list[tuple[str, Any]] = [("op_name", f"{self.name_stack}/{name}")]
        frame = user_frame()
        if frame is not None:
            items += [("source_file", frame[0]), ("source_line", frame[1])]
        return OpMetadata(tuple(items))


def _is_ancestor(trace: Trace, of: Trace) -> bool:
    node = of.parent
    while node is not None:
        if node is trace:
            return True
        node = node.parent
    return False


class Tracer(Array):
    """A value being traced: an instruction of a trace's computation."""

    __slots__ = ("trace", "instruction", "weak_type", "origin", "known")

    def __init__(self, trace: Trace, instruction: HloInstruction, weak_type: bool = False,
                 origin: str = "", known=None):
        self.trace = trace
        self.instruction = instruction
        self.weak_type = weak_type
        self.origin = origin
        self.known = known
        """The value, in a concrete trace (grad outside jit); None while abstract."""

    @property
    def shape(self) -> tuple[int, ...]:
        return self.instruction.shape.dimensions

    @property
    def dtype(self) -> np.dtype:
        return self.instruction.shape.dtype

    def describe(self) -> str:
        text = self.instruction.shape.to_text(print_layout=False)
        return f"{text} from {self.origin}" if self.origin else text

    def _concrete(self, why: str):
        if self.known is not None:
            return self.known
        raise ConcretizationError(
            f"{why} needs the value of a traced array ({self.describe()}), which is unknown "
            "while tracing for jit. Use xlapy.lax.cond or xnp.where instead of `if`, "
            "xlapy.lax.while_loop or fori_loop instead of `while`, or mark the argument "
            "static with static_argnums.")

    def __array__(self, dtype=None, copy=None):
        value = self._concrete("converting to a NumPy array")
        return value if dtype is None else value.astype(dtype)

    def __repr__(self) -> str:
        return f"Tracer<{self.describe()}>"


# -- values in, values out ---------------------------------------------------------------
def as_array(value, dtype=None) -> Array:
    """Any array-like as an xlapy Array (Python scalars become weak-typed)."""
    if isinstance(value, Array) and dtype is None:
        return value
    if isinstance(value, Array):
        return convert(value, dtype)
    if type(value) is np.ndarray and dtype is None:   # the commonest input: no conversion
        target = dtypes.canonicalize(value.dtype)
        if target == value.dtype and value.dtype.kind in "biufc":
            return ConcreteArray(value, False)
    weak = (isinstance(value, (int, float, complex)) and not isinstance(value, (bool, np.generic))
            and dtype is None)
    target = np.dtype(dtype) if dtype is not None else dtypes.default_dtype_of(value)
    array = np.asarray(value)
    if array.dtype.kind in "OUSM" or (array.dtype.kind == "V" and array.dtype.names):
        raise TypeError(f"cannot make an array of {type(value).__name__} {value!r}")
    with np.errstate(all="ignore"):
        return ConcreteArray(array.astype(target, copy=False), weak)


def _operand_values(operands) -> list:
    values = []
    for operand in operands:
        if isinstance(operand, (tuple, list)):
            values.append(tuple(_operand_values(operand)))
        else:
            values.append(operand.value)
    return values


def _shape_of(operand) -> Shape:
    if isinstance(operand, (tuple, list)):
        return Shape.tuple(_shape_of(o) for o in operand)
    return operand.hlo_shape


def _all_weak(operands) -> bool:
    if not operands:
        return False
    return all(o.weak_type if isinstance(o, Array) else _all_weak(o) for o in operands)


def _flat(operands):
    for operand in operands:
        if isinstance(operand, (tuple, list)):
            yield from _flat(operand)
        else:
            yield operand


def bind(opcode: Opcode, operands: Sequence, attrs: dict | None = None, *,
         shape: Shape | None = None, weak_type: bool | None = None,
         name: str | None = None):
    """Apply `opcode` to `operands` (Arrays, or tuples of Arrays for tuple-shaped
    operands) with XLA attributes `attrs` (typed as in hlo.attributes).

    `shape` is the result shape where the op needs one declared (convert,
    broadcast, reshape, iota, rng-bit-generator...). Returns an Array, or a
    tuple of Arrays when the result is a tuple. `weak_type` defaults to "all
    operands weak"; `name` is the op name recorded in metadata.
    """
    attrs = attrs or {}
    if weak_type is None:
        weak_type = _all_weak(operands)
    trace = current_trace()
    if trace is None:
        for operand in _flat(operands):
            if type(operand) is not ConcreteArray and isinstance(operand, Tracer):
                raise ConcretizationError(
                    f"a traced value ({operand.describe()}) was used outside the function "
                    "that traced it")
        return _eager(opcode, operands, attrs, shape, weak_type)
    return _emit(trace, opcode, operands, attrs, shape, weak_type, name)


def _emit(trace: Trace, opcode, operands, attrs, shape, weak_type, name):
    builder = trace.builder

    def handle(operand):
        if isinstance(operand, (tuple, list)):
            return builder.tuple([handle(o) for o in operand])
        return trace.lift(operand).instruction

    metadata = trace.metadata(name or opcode.value)
    origin = f"{name or opcode.value}"
    if metadata.get("source_file"):
        origin += f" at {metadata.get('source_file')}:{metadata.get('source_line')}"
    builder.set_op_metadata(metadata)  # every instruction this op adds points at the user
    try:
        handles = [handle(o) for o in operands]
        instruction = builder.add_instruction(opcode, handles, shape, **attrs)
        value = None
        if trace.concrete:
            value = _evaluator().evaluate(instruction, _known_values(trace, operands))
        return _wrap_traced(trace, instruction, weak_type, origin, value)
    finally:
        builder.set_op_metadata(None)


def _known_values(trace: Trace, operands) -> list:
    """Operand values in a concrete trace (every operand of it has one)."""
    values = []
    for operand in operands:
        if isinstance(operand, (tuple, list)):
            values.append(tuple(_known_values(trace, operand)))
        else:
            values.append(trace.lift(operand).known)
    return values


def _wrap_traced(trace: Trace, instruction: HloInstruction, weak_type: bool, origin: str,
                 value=None):
    if not instruction.shape.is_tuple:
        return trace.tracer(instruction, weak_type, origin, value)
    if trace.concrete:
        trace.values[id(instruction)] = value
    parts = []
    for i in range(len(instruction.shape.tuple_shapes)):
        element = trace.builder.get_tuple_element(instruction, i)
        parts.append(_wrap_traced(trace, element, weak_type, f"output {i} of {origin}",
                                  None if value is None else value[i]))
    return tuple(parts)


_EAGER_CACHE: dict[tuple, HloInstruction] = {}
_EAGER_CACHE_SIZE = 4096
_EVALUATOR = None


def _eager(opcode, operands, attrs, shape, weak_type):
    """Evaluate one op now with the interpreter's rule. The instruction for an
    (opcode, operand types, attributes) signature is built and shape-checked
    once, then reused: eager mode pays for shape inference once per signature."""
    try:
        key = (opcode, tuple(_type_key(o) for o in operands), tuple(attrs.items()), shape)
        instruction = _EAGER_CACHE.get(key)
    except TypeError:  # an unhashable attribute value: build every time
        key, instruction = None, None
    if instruction is None:
        instruction = _eager_instruction(opcode, operands, attrs, shape)
        if key is not None:
            if len(_EAGER_CACHE) >= _EAGER_CACHE_SIZE:
                _EAGER_CACHE.clear()
            _EAGER_CACHE[key] = instruction
    if lazy.active() and lazy.recordable(instruction):
        return lazy.record(instruction, operands, weak_type)
    value = _evaluator().evaluate(instruction, _operand_values(operands))
    return _wrap_concrete(value, weak_type)


def _evaluator():
    global _EVALUATOR
    if _EVALUATOR is None:
        _EVALUATOR = Evaluator()
    return _EVALUATOR


def _type_key(operand):
    if isinstance(operand, (tuple, list)):
        return tuple(_type_key(o) for o in operand)
    if isinstance(operand, lazy.LazyArray):
        return operand.shape, operand.dtype   # not .value: a lazy operand stays pending
    value = operand.value
    return getattr(value, "shape", None), getattr(value, "dtype", type(value))   # or a token


def _eager_instruction(opcode, operands, attrs, shape) -> HloInstruction:
    operand_shapes = [_shape_of(o) for o in operands]
    result_shape = shape_inference.infer_shape(opcode, operand_shapes, attrs, shape)
    if shape is not None:
        result_shape = shape
    params = [HloInstruction(Opcode.PARAMETER, s, name=f"operand.{i}", parameter_number=i)
              for i, s in enumerate(operand_shapes)]
    return HloInstruction(opcode, result_shape, params, dict(attrs), name=opcode.value)


def _wrap_concrete(value, weak_type: bool):
    if isinstance(value, tuple):
        return tuple(_wrap_concrete(v, weak_type) for v in value)
    return ConcreteArray(value, weak_type)


def convert(x: Array, dtype) -> Array:
    """`x` converted to `dtype` with XLA's semantics, strongly typed: what
    `lax.convert_element_type` and `as_array(x, dtype)` both do."""
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return with_weak_type(x, False)
    return bind(Opcode.CONVERT, [x], shape=Shape.array(element_type(dtype), x.shape),
                weak_type=False, name="convert_element_type")


def with_weak_type(x: Array, weak_type: bool) -> Array:
    """The same value with `weak_type` set as given."""
    if x.weak_type == weak_type:
        return x
    if isinstance(x, Tracer):
        return Tracer(x.trace, x.instruction, weak_type, x.origin, x.known)
    if isinstance(x, lazy.LazyArray):
        return x.with_weak_type(weak_type)
    return ConcreteArray(x.value, weak_type)


def element_type(dtype) -> PrimitiveType:
    return PrimitiveType.from_numpy(np.dtype(dtype))
