"""Small helpers the rules share: zeros, re-applying an op to other operands,
and the generic JVPs of linear and bilinear ops."""

from __future__ import annotations

import numpy as np

from xlapy.autodiff.tape import Node, is_differentiable_type
from xlapy.core.array import ConcreteArray
from xlapy.core.trace import bind
from xlapy.lax import primitives as lax


def zeros_like(x):
    if isinstance(x, (tuple, list)):
        return tuple(zeros_like(v) for v in x)
    return full(x.shape, 0, x.dtype)


def full(shape, value, dtype):
    """A scalar constant of `dtype` broadcast to `shape` (no convert in the HLO)."""
    scalar = ConcreteArray(np.array(value, dtype=np.dtype(dtype)))
    return lax.broadcast_in_dim(scalar, tuple(shape), ())


def instantiate(t, like):
    """`t`, or zeros shaped like `like` where `t` is None (symbolic zero)."""
    if isinstance(like, (tuple, list)):
        t = t if t is not None else (None,) * len(like)
        return tuple(instantiate(a, b) for a, b in zip(t, like))
    return zeros_like(like) if t is None else t


def constant(value, like):
    """The scalar `value` broadcast to `like`'s shape and dtype."""
    return full(like.shape, value, like.dtype)


def rebind(node: Node, operands, shape=None, **attrs):
    """`node`'s op (its attributes, overridden by `attrs`) applied to `operands`."""
    merged = {k: v for k, v in node.instruction.attrs.items() if k != "metadata"}
    merged.update(attrs)
    return bind(node.opcode, list(operands), merged,
                shape=node.shape if shape is None else shape, weak_type=False)


def linear_jvp(node: Node, tangents):
    """For ops linear in their floating-point operands (slice, pad, concatenate,
    gather, transpose...): the same op on the tangents; integer operands (indices)
    keep their values."""
    operands = []
    for operand, tangent in zip(node.operands, tangents):
        if _differentiable(operand):
            operands.append(instantiate(tangent, operand))
        else:
            operands.append(operand)
    return rebind(node, operands)


def bilinear_jvp(node: Node, tangents, add=None):
    """For ops linear in each operand separately (multiply, dot, convolution):
    the sum over operands of the op with that operand replaced by its tangent."""
    total = None
    for i, tangent in enumerate(tangents):
        if tangent is None:
            continue
        operands = list(node.operands)
        operands[i] = tangent
        term = rebind(node, operands)
        total = term if total is None else lax.add(total, term)
    return total


def _differentiable(x) -> bool:
    if isinstance(x, (tuple, list)):
        return all(_differentiable(v) for v in x)
    return is_differentiable_type(x.dtype)


def sum_to_shape(x, shape):
    """Sum `x` down to `shape` (a scalar operand broadcast by clamp or select)."""
    shape = tuple(shape)
    if tuple(x.shape) == shape:
        return x
    if shape == ():
        return lax.reduce_sum(x, tuple(range(len(x.shape))))
    raise ValueError(f"cannot sum a cotangent of shape {list(x.shape)} to {list(shape)}")


def dtype_of(x) -> np.dtype:
    return np.dtype(x.dtype)
