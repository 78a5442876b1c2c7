"""Tracing a Python function into a called computation (a loop body, a
branch, a reducer), closures included.

`trace_function` traces `fn` on abstract arguments into its own computation
of the current module (or of a throwaway module in eager mode). Values the
function closes over become constants (concrete) or captured parameters
(Tracers of an enclosing trace), listed in `captures` so the caller can pass
them in. XLA's `while` and `conditional` take one tuple parameter;
`pack_parameters` rewrites the flat parameters into elements of one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from xlapy.core.pytree import TreeDef, tree_flatten
from xlapy.core.trace import Trace, Tracer, as_array, current_trace, element_type
from xlapy.hlo.builder import ModuleBuilder
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape


@dataclass(frozen=True)
class ShapedArray:
    """An abstract value: what tracing knows of an array."""

    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool = False

    @staticmethod
    def of(value) -> ShapedArray:
        array = as_array(value)
        return ShapedArray(tuple(array.shape), np.dtype(array.dtype), array.weak_type)

    @property
    def hlo_shape(self) -> Shape:
        return Shape.array(element_type(self.dtype), self.shape)

    def __str__(self) -> str:
        return self.hlo_shape.to_text(print_layout=False) + (" (weak)" if self.weak_type else "")


@dataclass
class TracedFunction:
    computation: HloComputation
    num_args: int                 # parameters 0..num_args-1 are the arguments
    captures: list                # outer values for the parameters after them
    out_tree: TreeDef
    out_avals: list[ShapedArray]


def trace_function(fn: Callable, args: list[ShapedArray], name: str, *,
                   tuple_root: bool = True, allow_captures: bool = True) -> TracedFunction:
    """Trace `fn(*args)` (args abstract, flat) into a new computation.

    The root is a tuple of the flattened outputs with `tuple_root`, else the
    single output. Raises ConcretizationError for a closure over a traced
    value when `allow_captures` is False (reducers and comparators).
    """
    parent = current_trace()
    module = parent.module_builder if parent is not None else ModuleBuilder("eager")
    builder = module.computation(name)
    name_stack = parent.name_stack if parent is not None else "eager"
    trace = Trace(builder, name_stack, parent=parent, allow_captures=allow_captures)
    with trace:
        params = [trace.parameter(a.hlo_shape, a.weak_type, origin=f"argument {i} of {name}")
                  for i, a in enumerate(args)]
        out = fn(*params)
        leaves, out_tree = tree_flatten(out)
        outs = [trace.lift(as_array(leaf)) for leaf in leaves]
        if tuple_root:
            builder.set_op_metadata(trace.metadata("tuple"))
            root = builder.tuple([o.instruction for o in outs])
            builder.set_op_metadata(None)
        else:
            if len(outs) != 1:
                raise TypeError(f"{name} must return one array, got {out_tree}")
            root = outs[0].instruction
    avals = [ShapedArray(o.shape, np.dtype(o.dtype), o.weak_type) for o in outs]
    return TracedFunction(builder.build(root), len(args), trace.captures, out_tree, avals)


def pack_parameters(traced: TracedFunction, tuple_shape: Shape,
                    positions: list[int], module: ModuleBuilder, metadata=None) -> None:
    """Make `traced.computation` take one tuple parameter of `tuple_shape`:
    flat parameter i becomes element `positions[i]` of it (in place); the new
    get-tuple-elements carry `metadata` (the calling op's)."""
    computation = traced.computation
    param = HloInstruction(Opcode.PARAMETER, tuple_shape.with_default_layout(),
                           name=module.unique_name("param"), parameter_number=0)
    param.parent = computation
    for old in computation.parameters:
        old.opcode = Opcode.GET_TUPLE_ELEMENT
        old.name = module.unique_name("get-tuple-element")
        old.operands = [param]
        old.attrs = {"index": positions[old.parameter_number]}
        if metadata is not None:
            old.attrs["metadata"] = metadata
        old.parameter_number = None
    computation.instructions.insert(0, param)


def element_of(computation: HloComputation, index: int,
               module: ModuleBuilder, metadata=None) -> HloInstruction:
    """A `get-tuple-element` of `computation`'s tuple parameter, appended before its
    root (used to pass loop-invariant captures through a body)."""
    param = computation.parameter(0)
    shape = param.shape.tuple_shapes[index]
    attrs = {"index": index} if metadata is None else {"index": index, "metadata": metadata}
    gte = HloInstruction(Opcode.GET_TUPLE_ELEMENT, shape, [param], attrs,
                         name=module.unique_name("get-tuple-element"))
    gte.parent = computation
    computation.instructions.insert(computation.instructions.index(param) + 1, gte)
    return gte


def is_tracer(value) -> bool:
    return isinstance(value, Tracer)


__all__ = ["ShapedArray", "TracedFunction", "Trace", "element_of", "is_tracer",
           "pack_parameters", "trace_function"]
