"""`vjp` in lazy mode: the recorded function and its derivative each become one
recorded `call`, instead of a replay of every forward and backward op through
Python. The derivative (`vjp_module` of the recording) is built once per
structure of the recorded computation and reused, so an eager training loop
pays for tracing its loss, not for differentiating it again every step; the
cluster's pipeline inlines both calls, and CSE merges the forward pass the
two share.
"""

from __future__ import annotations

from collections import OrderedDict

from xlapy.autodiff.module import vjp_module
from xlapy.autodiff.rules._util import zeros_like
from xlapy.core import lazy
from xlapy.core.lazy_call import call_template
from xlapy.core.lazy_graph import computation_signature
from xlapy.core.trace import bind, current_trace
from xlapy.errors import CompileError
from xlapy.hlo.builder import ModuleBuilder
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import Opcode

_DERIVATIVES: OrderedDict[tuple, HloInstruction] = OrderedDict()
_SIZE = 128


def _derivative(computation: HloComputation, active: list[bool]) -> HloInstruction:
    """The `call` of the derivative (a template every pullback's node shares).
    Raises CompileError for an output that is not an array."""
    last = _LAST.get(id(computation))   # (a loop's step: the same computation again)
    if last is not None and last[0] is computation and last[1] == active:
        return last[2]
    root = computation.root_instruction.shape
    if any(not s.is_array for s in (root.tuple_shapes if root.is_tuple else (root,))):
        raise CompileError(f"{computation.name}: an output that is not an array")
    key = (computation_signature(computation), tuple(active))
    hit = _DERIVATIVES.get(key)
    if hit is None:
        module = ModuleBuilder(computation.name).build(computation, verify=False)
        hit = call_template(vjp_module(module, [i for i, a in enumerate(active) if a])
                            .entry_computation)
        _DERIVATIVES[key] = hit
        if len(_DERIVATIVES) > _SIZE:
            _DERIVATIVES.popitem(last=False)
    else:
        _DERIVATIVES.move_to_end(key)
    if len(_LAST) > _SIZE:
        _LAST.clear()
    _LAST[id(computation)] = (computation, list(active), hit)
    return hit


_LAST: dict[int, tuple] = {}
"""id(computation) -> (computation, active, derivative) of the latest asked."""


def lazy_vjp(computation: HloComputation, operands: list, active: list[bool],
             outputs: list | None = None):
    """(outputs, pullback) as `reverse.vjp_computation` gives them, recorded as
    calls; `outputs` are the forward results where they are already pending.
    Raises CompileError where the recording cannot be differentiated as a whole
    (a rule needs a value only a concrete recording knows; a token output): the
    caller then records concretely and replays."""
    derivative = _derivative(computation, active)
    if outputs is None:
        outputs = bind(Opcode.CALL, list(operands), {"to_apply": computation})
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)

    def pullback(cotangents):
        cts = [zeros_like(o) if c is None else c for c, o in zip(cotangents, outputs)]
        arguments = [*operands, *cts]
        if current_trace() is None and lazy.active():   # the template, as it is: no
            results = lazy.record(derivative, arguments,   # shape inference every step
                                  all(a.weak_type for a in arguments))
        else:
            results = bind(Opcode.CALL, arguments, dict(derivative.attrs))
        grads = iter(results[len(outputs):])
        return [next(grads) if a else None for a in active]

    return outputs, pullback
