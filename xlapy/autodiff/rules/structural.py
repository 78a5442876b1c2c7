"""Data-movement ops: broadcast, reshape, transpose, reverse, slice, pad,
concatenate, dynamic slices, copies and conversions, and map.

Every op here but map is linear in its floating-point operands, so its JVP is
the op itself on the tangents (`linear_jvp`) and its VJP is the exact
transpose: slice <-> pad with zeros (strides as interior padding), broadcast
<-> sum over the broadcast dimensions, dynamic-slice <-> dynamic-update-slice
of zeros (both clamp their start indices the same way, so the windows agree).
Index operands are integers and get no cotangent. Conventions as JAX's:
convert's cotangent is converted back (complex -> real keeps the real part),
and a bitcast that changes the element type reinterprets bits, so it carries
no derivative (as bitcast-convert).
"""

from __future__ import annotations

import numpy as np

from xlapy.autodiff import forward, reverse
from xlapy.autodiff.rules import jvp, vjp
from xlapy.autodiff.rules._util import full, instantiate, linear_jvp, zeros_like
from xlapy.autodiff.rules.nondifferentiable import unsupported
from xlapy.autodiff.tape import is_differentiable_type
from xlapy.core.trace import bind
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.lax import primitives as lax
from xlapy.lax.reductions import scalar_computation

Op = Opcode

unsupported(
    "dynamic shapes are not modelled (the interpreter cannot evaluate them either)",
    Op.DYNAMIC_RESHAPE, Op.SET_DIMENSION_SIZE)


# -- linear ops: the op itself on the tangents --------------------------------------------
@jvp(Op.BROADCAST, Op.RESHAPE, Op.TRANSPOSE, Op.REVERSE, Op.SLICE, Op.PAD, Op.CONCATENATE,
     Op.DYNAMIC_SLICE, Op.DYNAMIC_UPDATE_SLICE)
def _linear_jvp(node, tangents):
    return linear_jvp(node, tangents)


@jvp(Op.COPY, Op.DOMAIN, Op.ADD_DEPENDENCY)
def _identity_jvp(node, tangents):
    """Values pass through unchanged (add-dependency's token only orders)."""
    return instantiate(tangents[0], node.operands[0])


@vjp(Op.COPY, Op.DOMAIN, Op.ADD_DEPENDENCY)
def _identity_vjp(node, ct):
    return [ct] + [None] * (len(node.operands) - 1)


# -- shape changes ------------------------------------------------------------------------
@vjp(Op.BROADCAST)
def _broadcast_vjp(node, ct):
    """Sum over the result dimensions no operand dimension maps to, then put the
    kept dimensions in operand order (XLA allows unsorted `dimensions`)."""
    (operand,) = node.operands
    dims = tuple(node.attr("dimensions", ()))
    summed = tuple(d for d in range(len(ct.shape)) if d not in dims)
    x = lax.reduce_sum(ct, summed) if summed else ct
    kept = sorted(dims)
    x = lax.transpose(x, [kept.index(d) for d in dims])
    unit = tuple(i for i, (a, b) in enumerate(zip(operand.shape, x.shape)) if a == 1 != b)
    if unit:  # size-1 operand dimensions stretched (StableHLO-style broadcast_in_dim)
        x = lax.reshape(lax.reduce_sum(x, unit), operand.shape)
    return [x]


@vjp(Op.RESHAPE)
def _reshape_vjp(node, ct):
    return [lax.reshape(ct, node.operands[0].shape)]


@vjp(Op.TRANSPOSE)
def _transpose_vjp(node, ct):
    perm = node.attr("dimensions")
    return [lax.transpose(ct, tuple(int(i) for i in np.argsort(perm)))]


@vjp(Op.REVERSE)
def _reverse_vjp(node, ct):
    return [lax.rev(ct, node.attr("dimensions"))]


# -- bitcast: a reshape, or a permutation of elements when layouts differ ------------------
def _bitcast_moves(x, source: Shape, target: Shape):
    """What bitcast does to an `source`-shaped value, as transpose/reshape/transpose:
    read `x` in `source`'s memory order, lay it out in `target`'s."""
    src, dst = source.major_to_minor(), target.major_to_minor()
    physical = lax.reshape(lax.transpose(x, src), [target.dimensions[d] for d in dst])
    return lax.transpose(physical, tuple(int(i) for i in np.argsort(dst)))


def _bitcast_shapes(node) -> tuple[Shape, Shape] | None:
    """(operand shape, result shape), or None for a bitcast that reinterprets bits."""
    source, target = node.instruction.operands[0].shape, node.shape
    if source.element_type is not target.element_type:
        return None
    return source, target


@jvp(Op.BITCAST)
def _bitcast_jvp(node, tangents):
    shapes = _bitcast_shapes(node)
    if shapes is None or tangents[0] is None:
        return None
    return _bitcast_moves(tangents[0], *shapes)


@vjp(Op.BITCAST)
def _bitcast_vjp(node, ct):
    shapes = _bitcast_shapes(node)
    if shapes is None:
        return [None]
    source, target = shapes
    return [_bitcast_moves(ct, target, source)]


# -- convert ------------------------------------------------------------------------------
@jvp(Op.CONVERT)
def _convert_jvp(node, tangents):
    """Zero for integer or boolean results (JAX gives float0 there)."""
    if not is_differentiable_type(node.result.dtype) or tangents[0] is None:
        return None
    return lax.convert_element_type(tangents[0], node.result.dtype)


@vjp(Op.CONVERT)
def _convert_vjp(node, ct):
    (operand,) = node.operands
    if not is_differentiable_type(operand.dtype):
        return [None]
    return [lax.convert_element_type(ct, operand.dtype)]


# -- slicing and padding ------------------------------------------------------------------
@vjp(Op.SLICE)
def _slice_vjp(node, ct):
    """Zeros around and between the sliced elements: pad with interior stride - 1."""
    (operand,) = node.operands
    config = []
    for r, size, out in zip(node.attr("slice"), operand.shape, ct.shape):
        last = r.start + ((out - 1) * r.stride + 1 if out else 0)
        config.append((r.start, size - last, r.stride - 1))
    return [lax.pad(ct, _zero(ct), config)]


@vjp(Op.PAD)
def _pad_vjp(node, ct):
    """The operand's ct: undo low/high (negative padding pads back zeros), then
    step over the interior; the padding value's: everything else, summed."""
    operand, padding_value = node.operands
    config = node.attr("padding").dimensions
    unpadded = lax.pad(ct, _zero(ct), [(-d.low, -d.high, 0) for d in config])
    operand_ct = lax.slice(unpadded, [0] * len(config), unpadded.shape,
                           [d.interior + 1 for d in config])
    value_ct = None
    if node.active[1]:
        every = tuple(range(len(ct.shape)))
        value_ct = lax.sub(lax.reduce_sum(ct, every), lax.reduce_sum(operand_ct, every))
    return [operand_ct if node.active[0] else None, value_ct]


def _zero(like):
    return full((), 0, like.dtype)


@vjp(Op.CONCATENATE)
def _concatenate_vjp(node, ct):
    (dim,) = node.attr("dimensions")
    cts, start = [], 0
    for operand, active in zip(node.operands, node.active):
        stop = start + operand.shape[dim]
        cts.append(lax.slice_in_dim(ct, start, stop, 1, dim) if active else None)
        start = stop
    return cts


# -- dynamic slices: the same clamped window both ways -------------------------------------
def _dynamic_slice(x, indices, sizes):
    return bind(Op.DYNAMIC_SLICE, [x, *indices], {"dynamic_slice_sizes": tuple(sizes)},
                weak_type=False)


def _dynamic_update_slice(x, update, indices):
    return bind(Op.DYNAMIC_UPDATE_SLICE, [x, update, *indices], weak_type=False)


@vjp(Op.DYNAMIC_SLICE)
def _dynamic_slice_vjp(node, ct):
    operand, *indices = node.operands
    return [_dynamic_update_slice(zeros_like(operand), ct, indices)] + [None] * len(indices)


@vjp(Op.DYNAMIC_UPDATE_SLICE)
def _dynamic_update_slice_vjp(node, ct):
    operand, update, *indices = node.operands
    operand_ct = update_ct = None
    if node.active[0]:
        operand_ct = _dynamic_update_slice(ct, zeros_like(update), indices)
    if node.active[1]:
        update_ct = _dynamic_slice(ct, indices, update.shape)
    return [operand_ct, update_ct] + [None] * len(indices)


# -- map: the scalar computation differentiated, mapped -----------------------------------
def _map_of(node, scalar_fn, extra, out_dtype, name):
    """map(scalar_fn) over the node's operands followed by `extra` arrays."""
    operands = [*node.operands, *extra]
    dtypes = [o.dtype for o in operands]
    computation = scalar_computation(scalar_fn, dtypes, [out_dtype], name, tuple_root=False)
    dimensions = node.attr("dimensions", tuple(range(len(node.result.shape))))
    return bind(Op.MAP, operands, {"dimensions": tuple(dimensions), "to_apply": computation},
                weak_type=False)


@jvp(Op.MAP)
def _map_jvp(node, tangents):
    """map of the mapped computation's JVP, taking each active tangent's element."""
    if not is_differentiable_type(node.result.dtype):
        return None
    computation = node.attr("to_apply")
    n = len(node.operands)
    active = [i for i, t in enumerate(tangents) if t is not None]

    def scalar_jvp(*args):
        ts = [None] * n
        for i, t in zip(active, args[n:]):
            ts[i] = t
        out, tangent = forward.jvp_computation(computation, list(args[:n]), ts)
        return tangent if tangent is not None else zeros_like(out)

    return _map_of(node, scalar_jvp, [tangents[i] for i in active], node.result.dtype,
                   "map_jvp")


@vjp(Op.MAP)
def _map_vjp(node, ct):
    """One map per active operand of ct * ∂f/∂x_i, from the computation's VJP."""
    computation = node.attr("to_apply")
    n = len(node.operands)
    return [_map_vjp_one(node, computation, i, ct, n) if active else None
            for i, active in enumerate(node.active)]


def _map_vjp_one(node, computation, i, ct, n):
    wrt = [j == i for j in range(n)]

    def scalar_vjp(*args):
        _, pullback = reverse.vjp_computation(computation, list(args[:n]), wrt)
        g = pullback([args[n]])[i]
        return g if g is not None else zeros_like(args[i])

    return _map_of(node, scalar_vjp, [ct], node.operands[i].dtype, "map_vjp")
