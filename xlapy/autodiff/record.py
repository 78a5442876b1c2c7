"""Recording a Python function as the HloComputation that autodiff transforms.

Under `jit` (an abstract trace) the function is traced like a loop body:
values are unknown, so Python control flow on them is an error. Outside
`jit`, or inside a `grad` that is itself outside `jit`, the recording trace is
*concrete*: every instruction is evaluated as it is added, Tracers know their
values, and `if x > 0:` works as in JAX. The values are kept so the replay
need not compute the forward pass again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from xlapy.autodiff.tape import known_value
from xlapy.core import lazy, lazy_capture
from xlapy.core.array import Array, ConcreteArray
from xlapy.core.errors import ConcretizationError
from xlapy.core.pytree import TreeDef, tree_flatten, tree_unflatten
from xlapy.core.trace import Trace, as_array, current_trace, element_type
from xlapy.errors import CompileError
from xlapy.hlo.builder import ModuleBuilder
from xlapy.hlo.ir import HloComputation
from xlapy.hlo.shape import Shape


@dataclass
class Recording:
    computation: HloComputation
    args: list[Array]             # the flat arguments, as given
    captures: list[Array]         # outer values the function closed over (parameters after args)
    out_tree: TreeDef
    out_weak: list[bool]
    values: dict[int, Any] | None  # recorded values (concrete recordings only)
    pending: list | None = None    # the outputs, still pending (recordings taken lazily)

    @property
    def operands(self) -> list[Array]:
        return list(self.args) + list(self.captures)


def record(fun: Callable, flat_args: list, in_tree: TreeDef, name: str,
           concrete: bool | None = None) -> Recording:
    """Trace `fun(*tree_unflatten(in_tree, flat_args))` into a new computation.

    In lazy mode (outside jit) the function's operations are recorded into the
    pending graph and cut out of it (`lazy_capture`), so the derivative joins
    the pending graph instead of cutting it; where that cannot stand for the
    function it is traced abstractly, and only a function that needs its
    values (Python control flow on them), or `concrete=True`, is recorded
    concretely."""
    parent = current_trace()
    if concrete:
        return _record(fun, flat_args, in_tree, name, concrete=parent is None or parent.concrete)
    if parent is None and lazy.active():
        args = [as_array(a) for a in flat_args]
        captured = lazy_capture.capture(fun, args, in_tree, name)
        if captured is not None:
            return Recording(captured.computation, args, captured.captures, captured.out_tree,
                             [o.weak_type for o in captured.outputs], None, captured.outputs)
        try:
            recording = _record(fun, flat_args, in_tree, name, concrete=False)
            if not any(i.shape.is_token for i in recording.computation.instructions):
                return recording   # (tokens exist only under a trace: replayed concretely)
        except ConcretizationError:
            pass
    return _record(fun, flat_args, in_tree, name,
                   concrete=parent is None or parent.concrete)


def _record(fun: Callable, flat_args: list, in_tree: TreeDef, name: str,
            concrete: bool) -> Recording:
    args = [as_array(a) for a in flat_args]
    parent = current_trace()
    module = parent.module_builder if parent is not None else ModuleBuilder(name)
    builder = module.computation(name)
    name_stack = f"{parent.name_stack}/{name}" if parent is not None else name
    trace = Trace(builder, name_stack, parent=parent, concrete=concrete)
    with trace:
        params = []
        for i, arg in enumerate(args):
            shape = Shape.array(element_type(arg.dtype), tuple(arg.shape))
            value = (np.asarray(arg.value if isinstance(arg, ConcreteArray) else
                                known_value(arg)) if concrete else None)
            params.append(trace.parameter(shape, arg.weak_type, origin=f"argument {i} of {name}",
                                          value=value))
        out = fun(*tree_unflatten(in_tree, params))
        out_leaves, out_tree = tree_flatten(out)
        try:
            outs = [trace.lift(as_array(x)) for x in out_leaves]
        except TypeError as e:
            raise CompileError(f"{name}: the function returned a value that is not an array: "
                               f"{e}") from None
        builder.set_op_metadata(trace.metadata("tuple"))
        root = builder.tuple([o.instruction for o in outs])
        builder.set_op_metadata(None)
    computation = builder.build(root)
    return Recording(computation, args, list(trace.captures), out_tree,
                     [o.weak_type for o in outs], trace.values if concrete else None)
