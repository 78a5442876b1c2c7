"""Differentiating whole HLO modules: the transform behind `xlapy.grad`,
applied to any module — traced, or parsed from text written by XLA.

`vjp_module(m)` is a module taking (m's parameters..., a cotangent per output
leaf) and returning (m's outputs..., a cotangent per differentiated
parameter); `jvp_module(m)` takes (parameters..., a tangent per
differentiated parameter) and returns (outputs..., their tangents). The
source module is copied, never changed.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence

from xlapy.autodiff.forward import jvp_computation
from xlapy.autodiff.reverse import vjp_computation
from xlapy.autodiff.rules._util import zeros_like
from xlapy.autodiff.tape import is_differentiable_type, leaves
from xlapy.core.trace import Trace
from xlapy.errors import CompileError
from xlapy.hlo.builder import ModuleBuilder
from xlapy.hlo.ir import HloModule
from xlapy.hlo.shape import Shape


def _wrt(module: HloModule, wrt: Sequence[int] | None) -> list[int]:
    params = module.entry_computation.parameters
    if wrt is None:
        return [p.parameter_number for p in params
                if not p.shape.is_tuple and is_differentiable_type(p.shape.dtype)]
    for i in wrt:
        if not 0 <= i < len(params):
            raise CompileError(f"module {module.name} has no parameter {i}")
        shape = params[i].shape
        if shape.is_tuple or not is_differentiable_type(shape.dtype):
            raise CompileError(f"parameter {i} of {module.name} is {shape.to_text()}: only "
                               "floating-point array parameters can be differentiated")
    return list(wrt)


def _start(module: HloModule, suffix: str):
    source = copy.deepcopy(module)
    builder_module = ModuleBuilder(f"{module.name}.{suffix}")
    numbers = [int(m) for c in source.computations for i in [c.name, *(x.name for x in c)]
               for m in re.findall(r"\.(\d+)$", i)]
    builder_module._next_id = max(numbers, default=0) + 1  # new names never collide
    builder = builder_module.computation(f"{suffix}_main")
    trace = Trace(builder, suffix)
    params = [p for p in sorted(source.entry_computation.parameters,
                                key=lambda p: p.parameter_number)]
    return source, builder_module, builder, trace, params


def _output_leaf_shapes(shape: Shape) -> list[Shape]:
    if shape.is_tuple:
        return [s for t in shape.tuple_shapes for s in _output_leaf_shapes(t)]
    return [shape]


def _finish(builder_module, builder, trace, results) -> HloModule:
    with trace:
        root = builder.tuple([trace.lift(r).instruction for r in results])
    return builder_module.build(builder.build(root))


def vjp_module(module: HloModule, wrt: Sequence[int] | None = None) -> HloModule:
    """The reverse-mode derivative of `module`'s entry as a new module."""
    wrt = _wrt(module, wrt)
    source, builder_module, builder, trace, params = _start(module, "vjp")
    out_shapes = _output_leaf_shapes(source.entry_computation.root_instruction.shape)
    with trace:
        args = [trace.parameter(p.shape.with_default_layout(), origin=f"parameter {i}")
                for i, p in enumerate(params)]
        cts = [trace.parameter(s.with_default_layout(), origin=f"cotangent {i}")
               for i, s in enumerate(out_shapes)]
        active = [i in wrt for i in range(len(params))]
        outputs, pullback = vjp_computation(source.entry_computation, args, active)
        out_leaves = leaves(outputs)
        seeds = [c if is_differentiable_type(o.dtype) else None
                 for c, o in zip(cts, out_leaves)]
        grads = pullback(_structure_like(outputs, seeds))
        results = out_leaves + [zeros_like(args[i]) if grads[i] is None else grads[i]
                                for i in wrt]
    return _finish(builder_module, builder, trace, results)


def jvp_module(module: HloModule, wrt: Sequence[int] | None = None) -> HloModule:
    """The forward-mode derivative of `module`'s entry as a new module."""
    wrt = _wrt(module, wrt)
    source, builder_module, builder, trace, params = _start(module, "jvp")
    with trace:
        args = [trace.parameter(p.shape.with_default_layout(), origin=f"parameter {i}")
                for i, p in enumerate(params)]
        tangents = [None] * len(params)
        for i in wrt:
            tangents[i] = trace.parameter(params[i].shape.with_default_layout(),
                                          origin=f"tangent of parameter {i}")
        outputs, out_tangents = jvp_computation(source.entry_computation, args, tangents)
        out_leaves = leaves(outputs)
        results = out_leaves + [zeros_like(o) if t is None else t
                                for o, t in zip(out_leaves, leaves(out_tangents))
                                if is_differentiable_type(o.dtype)]
    return _finish(builder_module, builder, trace, results)


def _structure_like(structure, flat: list):
    items = iter(flat)

    def build(x):
        if isinstance(x, tuple):
            return tuple(build(v) for v in x)
        return next(items)
    return build(structure)
