"""Collectives: every one xlapy differentiates is linear in its operands, so
its JVP is the collective on the tangents and its VJP its transpose over the
same group, as JAX transposes its parallel primitives:

- all-reduce (sum) is its own transpose (psum's transpose is psum);
- all-gather <-> reduce-scatter (sum) along the same dimension;
- collective-permute -> the permutation reversed (targets send back to sources);
- all-to-all (array form) is its own transpose along its dimension.

A reduction other than a sum is not linear and is refused.
"""

from __future__ import annotations

from xlapy.autodiff.rules import jvp, vjp
from xlapy.autodiff.rules._util import instantiate, linear_jvp, rebind
from xlapy.core.trace import bind
from xlapy.errors import CompileError
from xlapy.hlo.opcode import Opcode as Op
from xlapy.lax import primitives as lax
from xlapy.lax.reductions import scalar_computation

_GROUP_ATTRS = ("replica_groups", "channel_id", "use_global_device_ids")


def _check_sums(node) -> None:
    """Only a collective whose reducer adds its two parameters is linear."""
    reducer = node.attr("to_apply")
    root = reducer.root_instruction
    params = {p.parameter_number for p in root.operands
              if p.opcode is Op.PARAMETER} if root.opcode is Op.ADD else set()
    if params != {0, 1}:
        raise CompileError(f"cannot differentiate {node.opcode.value} "
                           f"({node.instruction.name}): its reducer {reducer.name} is not an "
                           "add of its two parameters, so the result is not linear in the "
                           "operands")


def _group(node) -> dict:
    return {k: node.instruction.attrs[k] for k in _GROUP_ATTRS if k in node.instruction.attrs}


@jvp(Op.ALL_REDUCE, Op.REDUCE_SCATTER)
def _summing_jvp(node, tangents):
    _check_sums(node)
    return linear_jvp(node, tangents)


@jvp(Op.ALL_GATHER, Op.COLLECTIVE_PERMUTE, Op.ALL_TO_ALL)
def _linear_jvp(node, tangents):
    return linear_jvp(node, tangents)


@vjp(Op.ALL_REDUCE)
def _all_reduce_vjp(node, ct):
    _check_sums(node)
    if len(node.operands) == 1:
        return [rebind(node, [ct])]
    cts = rebind(node, [instantiate(c, o) for c, o in zip(ct, node.operands)])
    return [c if a else None for c, a in zip(cts, node.active)]


def _each(node, ct, fn):
    """Apply the per-operand transpose `fn(operand, its cotangent)` to every operand."""
    if len(node.operands) == 1:
        return [fn(node.operands[0], ct)]
    return [fn(o, instantiate(c, o)) if a else None
            for o, c, a in zip(node.operands, ct, node.active)]


@vjp(Op.ALL_GATHER)
def _all_gather_vjp(node, ct):
    """Each member's slice of the summed cotangent."""
    def transpose(operand, c):
        adder = scalar_computation(lax.add, [c.dtype] * 2, [c.dtype], "add", tuple_root=False)
        return bind(Op.REDUCE_SCATTER, [c], {**_group(node), "dimensions": node.attr("dimensions"),
                                             "to_apply": adder})
    return _each(node, ct, transpose)


@vjp(Op.REDUCE_SCATTER)
def _reduce_scatter_vjp(node, ct):
    """Every member's cotangent slice, gathered back to the operand's shape."""
    _check_sums(node)

    def transpose(operand, c):
        return bind(Op.ALL_GATHER, [c], {**_group(node), "dimensions": node.attr("dimensions")})
    return _each(node, ct, transpose)


@vjp(Op.COLLECTIVE_PERMUTE)
def _collective_permute_vjp(node, ct):
    pairs = tuple((target, source) for source, target in node.attr("source_target_pairs"))
    return [rebind(node, [ct], source_target_pairs=pairs)]


@vjp(Op.ALL_TO_ALL)
def _all_to_all_vjp(node, ct):
    if len(node.operands) != 1:
        raise CompileError(f"cannot differentiate the tuple form of all-to-all "
                           f"({node.instruction.name}); the array form (with dimensions) is "
                           "differentiable")
    return [rebind(node, [ct])]
