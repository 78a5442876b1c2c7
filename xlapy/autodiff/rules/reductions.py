"""`reduce`: sum, product, max and min reducers, and a generic forward rule.

Conventions, as JAX's:
- sum: linear; the cotangent is broadcast back over the reduced dimensions.
- max/min: ties split the derivative equally among all elements equal to the
  result (JVP: sum(t * mask) / count; VJP: ct * mask / count). A non-identity
  init value takes part in the tie like an element.
- product: ∂/∂xᵢ is the product of the others, exact with zeros in the input
  (no zero: p / xᵢ; one zero: p of the non-zeros at the zero, 0 elsewhere;
  several zeros: 0), without a division by zero anywhere so that second
  derivatives stay finite.

Any other reducer (argmax's (value, index) pairs, logaddexp, ...) gets the
generic forward rule: the same reduce over (values, tangents) with the
reducer's own JVP as body, which is exact because the dual-number extension
of an associative reducer is associative. Reverse mode refuses such reducers
when a floating-point output needs a cotangent; an argmax's index output never
does, so argmax under grad works.
"""

from __future__ import annotations

import numpy as np

from xlapy.autodiff import forward
from xlapy.autodiff.rules import jvp, vjp
from xlapy.autodiff.rules._util import constant, instantiate, linear_jvp, zeros_like
from xlapy.autodiff.tape import is_differentiable_type, known_value
from xlapy.core.trace import bind
from xlapy.errors import CompileError
from xlapy.hlo.ir import HloComputation
from xlapy.hlo.opcode import Opcode
from xlapy.lax import primitives as lax
from xlapy.lax.reductions import max_identity, min_identity, scalar_computation

Op = Opcode
MONOIDS = (Op.ADD, Op.MULTIPLY, Op.MAXIMUM, Op.MINIMUM)


# -- shared with windows.py ---------------------------------------------------------------

def monoid(computation: HloComputation) -> Opcode | None:
    """add/multiply/maximum/minimum when `computation` is that op of its two
    scalar parameters (either order); None for any other reducer."""
    root = computation.root_instruction
    params = computation.parameters
    if root is None or root.opcode not in MONOIDS or len(params) != 2:
        return None
    if root.shape.is_tuple or len(root.operands) != 2:
        return None
    if sorted(map(id, root.operands)) != sorted(map(id, params)):
        return None
    return root.opcode


def reducer_of(node) -> Opcode | None:
    """The monoid of a single-operand reduce / reduce-window node, else None."""
    if len(node.operands) != 2 or node.shape.is_tuple:
        return None
    return monoid(node.attr("to_apply"))


def is_identity(init, op: Opcode) -> bool:
    """`init` is known to be `op`'s identity (0, 1, -inf, +inf), so it never
    changes the result and can be left out of the derivative."""
    value = known_value(init)
    if value is None:
        return False
    dtype = np.dtype(init.dtype)
    target = {Op.ADD: 0, Op.MULTIPLY: 1, Op.MAXIMUM: max_identity(dtype),
              Op.MINIMUM: min_identity(dtype)}[op]
    return bool(np.all(np.asarray(value) == target))


def unsupported_reducer(node, why: str) -> CompileError:
    return CompileError(f"cannot differentiate {node.opcode.value} ({node.instruction.name}) "
                        f"in reverse mode: {why}")


def generic_jvp(node, tangents):
    """Tangents of a reduce / reduce-window with any reducer: the same op over
    (values..., tangents...) whose body is the reducer's JVP; init tangents
    (zero unless given) fold in like init values."""
    n = len(node.operands) // 2
    xs, inits = node.operands[:n], node.operands[n:]
    diff = tuple(i for i in range(n) if is_differentiable_type(xs[i].dtype))
    computation = node.attr("to_apply")
    dtypes = [np.dtype(x.dtype) for x in xs] + [np.dtype(xs[i].dtype) for i in diff]
    body = scalar_computation(_jvp_body(computation, n, diff), dtypes * 2, dtypes, "jvp",
                              tuple_root=True, key=("xlapy.autodiff.jvp_body", computation,
                                                    diff))
    operands = [*xs, *(instantiate(tangents[i], xs[i]) for i in diff),
                *inits, *(instantiate(tangents[n + i], inits[i]) for i in diff)]
    attrs = {k: v for k, v in node.instruction.attrs.items() if k != "metadata"}
    attrs["to_apply"] = body
    results = bind(node.opcode, operands, attrs, weak_type=False)
    out_tangents = [None] * n
    for k, i in enumerate(diff):
        out_tangents[i] = results[n + k]
    return tuple(out_tangents) if isinstance(node.result, tuple) else out_tangents[0]


def _jvp_body(computation: HloComputation, n: int, diff: tuple[int, ...]):
    """fn(acc..., acc_t..., x..., x_t...) -> (reducer(acc, x)..., its tangents...)."""
    m = len(diff)

    def body(*args):
        accs, xs = args[:n + m], args[n + m:]
        tangents = [None] * (2 * n)
        for k, i in enumerate(diff):
            tangents[i], tangents[n + i] = accs[n + k], xs[n + k]
        outs, outs_t = forward.jvp_computation(computation, [*accs[:n], *xs[:n]], tangents)
        outs = outs if isinstance(outs, tuple) else (outs,)
        outs_t = outs_t if isinstance(outs_t, tuple) else (outs_t,)
        return [*outs, *(instantiate(outs_t[i], outs[i]) for i in diff)]

    body.__name__ = "reducer_jvp"
    return body


# -- reduce -------------------------------------------------------------------------------

def _layout(node):
    """(x, init, reduced dims, kept dims) of a single-operand reduce."""
    x, init = node.operands
    dims = tuple(node.attr("dimensions", ()))
    kept = tuple(d for d in range(x.ndim) if d not in dims)
    return x, init, dims, kept


def _expand(y, x, kept):
    """A reduce result broadcast back over the reduced dimensions of `x`."""
    return lax.broadcast_in_dim(y, x.shape, kept)


def _total(ct):
    return ct if ct.ndim == 0 else lax.reduce_sum(ct, tuple(range(ct.ndim)))


def _scalar_like(init, y):
    return lax.broadcast_in_dim(init, y.shape, ())


def _chooser_masks(node):
    """(mask of x, mask of init or None, count): where x (init) equals the result,
    and how many do, at least 1 so that empty reductions give 0, not NaN."""
    x, init, dims, kept = _layout(node)
    y = node.result
    mask = lax.eq(x, _expand(y, x, kept))
    count = lax.reduce_sum(lax.convert_element_type(mask, x.dtype), dims)
    init_mask = None
    if not is_identity(init, reducer_of(node)):
        init_mask = lax.eq(_scalar_like(init, y), y)
        count = lax.add(count, lax.convert_element_type(init_mask, x.dtype))
    return mask, init_mask, lax.max(count, constant(1, count))


def _product_partials(node, want_init: bool):
    """(∂y/∂x, ∂y/∂init or None), exact with zeros (see the module docstring)."""
    x, init, dims, kept = _layout(node)
    y = node.result
    is_zero = lax.eq(x, zeros_like(x))
    nonzero = lax.select(is_zero, constant(1, x), x)
    zeros = lax.reduce_sum(lax.convert_element_type(is_zero, np.int32), dims)
    product = lax.reduce_prod(nonzero, dims)  # of the non-zero elements
    init_zero = safe_init = None
    if want_init or not is_identity(init, Op.MULTIPLY):
        init_b = _scalar_like(init, y)
        init_zero = lax.eq(init_b, zeros_like(init_b))
        safe_init = lax.select(init_zero, constant(1, init_b), init_b)
        zeros = lax.add(zeros, lax.convert_element_type(init_zero, np.int32))
        product = lax.mul(product, safe_init)
    none = lax.eq(zeros, constant(0, zeros))
    one = lax.eq(zeros, constant(1, zeros))

    def partial(is_zero_here, safe_here, product_here, none_here, one_here):
        only_zero = lax.and_(one_here, is_zero_here)
        inner = lax.select(only_zero, product_here, zeros_like(product_here))
        return lax.select(none_here, lax.div(product_here, safe_here), inner)

    px = partial(is_zero, nonzero, _expand(product, x, kept), _expand(none, x, kept),
                 _expand(one, x, kept))
    pinit = partial(init_zero, safe_init, product, none, one) if want_init else None
    return px, pinit


@vjp(Op.REDUCE)
def _reduce_vjp(node, ct):
    op = reducer_of(node)
    if op is None:
        raise unsupported_reducer(
            node, "only sum, product, max and min reducers of one operand have a reverse "
            "rule; a variadic reduce (such as argmax's (value, index) pairs) can be "
            "differentiated only through its integer outputs")
    x, init, dims, kept = _layout(node)
    want_init = node.active[1]
    if op is Op.ADD:
        return [_expand(ct, x, kept), _total(ct) if want_init else None]
    if op is Op.MULTIPLY:
        px, pinit = _product_partials(node, want_init)
        return [lax.mul(_expand(ct, x, kept), px),
                _total(lax.mul(ct, pinit)) if want_init else None]
    mask, init_mask, count = _chooser_masks(node)
    share = lax.div(ct, count)
    ct_x = lax.select(mask, _expand(share, x, kept), zeros_like(x))
    ct_init = None
    if want_init and init_mask is not None:
        ct_init = _total(lax.select(init_mask, share, zeros_like(share)))
    return [ct_x, ct_init]


@jvp(Op.REDUCE)
def _reduce_jvp(node, tangents):
    op = reducer_of(node)
    if op is None:
        return generic_jvp(node, tangents)
    x, init, dims, kept = _layout(node)
    tx, tinit = tangents
    if op is Op.ADD:
        return linear_jvp(node, tangents)
    if op is Op.MULTIPLY:
        px, pinit = _product_partials(node, tinit is not None)
        total = lax.reduce_sum(lax.mul(instantiate(tx, x), px), dims)
        return total if tinit is None else lax.add(total, lax.mul(_scalar_like(tinit, total),
                                                                  pinit))
    mask, init_mask, count = _chooser_masks(node)
    total = lax.reduce_sum(lax.select(mask, instantiate(tx, x), zeros_like(x)), dims)
    if tinit is not None and init_mask is not None:
        t_init = _scalar_like(tinit, total)
        total = lax.add(total, lax.select(init_mask, t_init, zeros_like(t_init)))
    return lax.div(total, count)


__all__ = ["generic_jvp", "is_identity", "monoid", "reducer_of"]
