"""Interpreter rules for control flow and the ops that call or wrap
computations: while, conditional, call, fusion, custom-call, plus the
ordering and identity ops (opt-barrier, after-all, add-dependency, domain),
batch normalisation and `rng`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from xlapy.errors import ExecutionError
from xlapy.hlo.attributes import RandomDistribution
from xlapy.hlo.evaluator.reductions import topk_custom_call
from xlapy.hlo.evaluator.rules import TOKEN, rule
from xlapy.hlo.opcode import Opcode

# -- calls and loops ----------------------------------------------------------------------


@rule(Opcode.WHILE)
def _while(instruction, operands, evaluator):
    condition = instruction.attrs["condition"]
    body = instruction.attrs["body"]
    state = operands[0]
    while bool(evaluator.call(condition, [state])):
        state = evaluator.call(body, [state])
    return state


@rule(Opcode.CONDITIONAL)
def _conditional(instruction, operands, evaluator):
    """A pred picks true/false_computation; an s32 index picks
    branch_computations[i], and an index outside [0, N) runs the last branch."""
    selector = operands[0]
    branches = instruction.attrs.get("branch_computations")
    if selector.dtype == np.bool_:
        index = 0 if bool(selector) else 1
        if branches is None:
            branches = (instruction.attrs["true_computation"],
                        instruction.attrs["false_computation"])
    else:
        index = int(selector)
        if branches is None:
            raise ExecutionError(f"{instruction.name}: an indexed conditional needs "
                                 "branch_computations")
        if not 0 <= index < len(branches):
            index = len(branches) - 1
    return evaluator.call(branches[index], [operands[1 + index]])


@rule(Opcode.CALL)
def _call(instruction, operands, evaluator):
    return evaluator.call(instruction.attrs["to_apply"], operands)


@rule(Opcode.FUSION)
def _fusion(instruction, operands, evaluator):
    return evaluator.call(instruction.attrs["calls"], operands)


# -- custom calls -------------------------------------------------------------------------

CustomCallRule = Callable[..., object]


def _pass_through(instruction, operands, evaluator):
    return operands[0]


CUSTOM_CALL_TARGETS: dict[str, CustomCallRule] = {
    "TopK": topk_custom_call,
    # Sharding annotations: with one device the shard is the whole array.
    "Sharding": _pass_through,
    "SPMDFullToShardShape": _pass_through,
    "SPMDShardToFullShape": _pass_through,
}
"""custom_call_target -> rule(instruction, operands, evaluator) for the targets
the interpreter knows; anything else is an ExecutionError."""


def register_custom_call(target: str, fn: CustomCallRule) -> None:
    """Teach the interpreter a custom-call target (once per target)."""
    if target in CUSTOM_CALL_TARGETS:
        raise ValueError(f"custom-call target {target!r} already has an interpreter rule")
    CUSTOM_CALL_TARGETS[target] = fn


@rule(Opcode.CUSTOM_CALL)
def _custom_call(instruction, operands, evaluator):
    target = instruction.attrs.get("custom_call_target", "")
    fn = CUSTOM_CALL_TARGETS.get(target)
    if fn is None:
        known = ", ".join(sorted(CUSTOM_CALL_TARGETS))
        raise ExecutionError(f"{instruction.name}: the interpreter has no custom-call target "
                             f"{target!r} (known: {known})")
    return fn(instruction, operands, evaluator)


# -- ordering and identities --------------------------------------------------------------


@rule(Opcode.OPTIMIZATION_BARRIER)
def _opt_barrier(instruction, operands, evaluator):
    return operands[0]


@rule(Opcode.AFTER_ALL)
def _after_all(instruction, operands, evaluator):
    return TOKEN


# -- batch normalisation ------------------------------------------------------------------
# XLA's definitions (operation_semantics.md), computed in float64 and rounded once.
# epsilon is an f32 attribute in XLA, so it is rounded to f32 before use.


def _feature_view(vector: np.ndarray, rank: int, feature: int) -> np.ndarray:
    """A per-feature vector shaped to broadcast against the operand."""
    shape = [1] * rank
    shape[feature] = -1
    return vector.astype(np.float64).reshape(shape)


def _batch_norm_setup(instruction, x: np.ndarray):
    feature = instruction.attrs["feature_index"]
    epsilon = float(np.float32(instruction.attrs["epsilon"]))
    axes = tuple(d for d in range(x.ndim) if d != feature)
    return feature, epsilon, axes


@rule(Opcode.BATCH_NORM_TRAINING)
def _batch_norm_training(instruction, operands, evaluator):
    x, scale, offset = operands
    feature, epsilon, axes = _batch_norm_setup(instruction, x)
    wide = x.astype(np.float64)
    with np.errstate(all="ignore"):
        mean = wide.mean(axis=axes, keepdims=True)
        var = ((wide - mean) ** 2).mean(axis=axes, keepdims=True)
        y = ((wide - mean) / np.sqrt(var + epsilon) * _feature_view(scale, x.ndim, feature)
             + _feature_view(offset, x.ndim, feature))
    return y.astype(x.dtype), mean.reshape(-1).astype(x.dtype), var.reshape(-1).astype(x.dtype)


@rule(Opcode.BATCH_NORM_INFERENCE)
def _batch_norm_inference(instruction, operands, evaluator):
    x, scale, offset, mean, var = operands
    feature, epsilon, _ = _batch_norm_setup(instruction, x)

    def per_feature(v):
        return _feature_view(v, x.ndim, feature)

    with np.errstate(all="ignore"):
        y = ((x.astype(np.float64) - per_feature(mean)) / np.sqrt(per_feature(var) + epsilon)
             * per_feature(scale) + per_feature(offset))
    return y.astype(x.dtype)


@rule(Opcode.BATCH_NORM_GRAD)
def _batch_norm_grad(instruction, operands, evaluator):
    x, scale, mean, var, grad_out = operands
    feature, epsilon, axes = _batch_norm_setup(instruction, x)

    def per_feature(v):
        return _feature_view(v, x.ndim, feature)

    with np.errstate(all="ignore"):
        centred = x.astype(np.float64) - per_feature(mean)
        dy = grad_out.astype(np.float64)
        var_eps = per_feature(var) + epsilon
        c = (dy * centred / var_eps).mean(axis=axes, keepdims=True)
        d = dy.mean(axis=axes, keepdims=True)
        grad_x = per_feature(scale) / np.sqrt(var_eps) * (dy - d - c * centred)
        grad_scale = (dy * centred / np.sqrt(var_eps)).sum(axis=axes)
        grad_offset = dy.sum(axis=axes)
    return grad_x.astype(x.dtype), grad_scale.astype(x.dtype), grad_offset.astype(x.dtype)


# -- rng ----------------------------------------------------------------------------------

_GENERATOR = np.random.default_rng()
"""`rng` is nondeterministic by definition; one OS-seeded generator serves all."""


@rule(Opcode.RNG)
def _rng(instruction, operands, evaluator):
    """rng_uniform over [a, b) (floats, integers, pred) or rng_normal(mu, sigma)
    (floats). Where b <= a, XLA leaves the result undefined; this gives a."""
    a, b = operands
    shape = instruction.shape
    element, dims = shape.element_type, shape.dimensions
    distribution = instruction.attrs.get("distribution", RandomDistribution.UNIFORM)
    if distribution is RandomDistribution.NORMAL:
        if not element.is_float:
            raise ExecutionError(f"{instruction.name}: rng_normal needs a float type, "
                                 f"not {element.value}")
        sample = float(a) + float(b) * _GENERATOR.standard_normal(dims)
        return sample.astype(shape.dtype)
    if element.is_float:
        low, high = float(a), float(b)
        with np.errstate(all="ignore"):
            sample = (low + (high - low) * _GENERATOR.random(dims)).astype(shape.dtype)
        # Rounding to a narrow type can reach b itself: keep the interval half-open.
        return np.where(sample.astype(np.float64) < high, sample, a).astype(shape.dtype)
    if element.is_integral or element.is_pred:
        low, high = int(a), int(b)
        if high <= low:
            return np.full(dims, a, dtype=shape.dtype)
        wide = np.uint64 if low >= 0 else np.int64
        return _GENERATOR.integers(low, high, size=dims, dtype=wide).astype(shape.dtype)
    raise ExecutionError(f"{instruction.name}: rng does not take {element.value}")
