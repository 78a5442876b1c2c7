"""`reduce-window` and `select-and-scatter`.

- reduce-window sum: linear; its transpose pads the cotangent (strides become
  interior padding) and sums it with the same window, JAX's
  _reduce_window_sum_transpose_rule.
- reduce-window max/min: reverse mode is XLA's max-pool gradient, a
  select-and-scatter (GE for max, LE for min: the first extreme element in
  window order) adding the cotangent; forward mode takes the tangent of that
  same element ("select and gather"), so both modes agree at ties. A
  non-identity init value wins where it beats every element of the window.
- other reducers (product, logaddexp, variadic): the generic forward rule of
  reductions.py; no reverse rule.
- select-and-scatter (with an add scatter): linear in source and init value;
  the operand only chooses positions (derivative zero). The source's
  cotangent gathers the cotangent at each window's selected element.

"Select and gather" is one variadic reduce-window over (operand, payload,
valid) triples whose body follows select-and-scatter's scan exactly: the
first valid element starts the selection, a later one replaces it where
select(selected, current) is false; padding and base-dilation holes are
never valid. So the gather is the transpose of the scatter, ties included.
"""

from __future__ import annotations

import weakref

import numpy as np

from xlapy.autodiff.rules import jvp, vjp
from xlapy.autodiff.rules._util import instantiate, linear_jvp, rebind, zeros_like
from xlapy.autodiff.rules.reductions import (
    generic_jvp,
    is_identity,
    monoid,
    reducer_of,
    unsupported_reducer,
)
from xlapy.autodiff.tape import evaluate
from xlapy.core.array import ConcreteArray
from xlapy.core.trace import bind
from xlapy.errors import CompileError
from xlapy.hlo.attributes import Window
from xlapy.hlo.opcode import Opcode
from xlapy.lax import primitives as lax
from xlapy.lax.reductions import max_identity, min_identity, scalar_computation

Op = Opcode
_CHOOSERS = {Op.MAXIMUM: (lax.ge, max_identity), Op.MINIMUM: (lax.le, min_identity)}
_GATHERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""select_and_gather's bodies -> (select, key): its reverse rule is a select-and-scatter."""


def _scalar(value, dtype):
    return ConcreteArray(np.array(value, dtype=np.dtype(dtype)))


def _total(ct):
    return ct if ct.ndim == 0 else lax.reduce_sum(ct, tuple(range(ct.ndim)))


# -- select and gather --------------------------------------------------------------------

def select_and_gather(operand, payload, window: Window, select, key):
    """(selected value, payload at the selected element, whether any element was
    valid) per window placement; `select(a, b)` true keeps a."""
    dv, dp = np.dtype(operand.dtype), np.dtype(payload.dtype)
    body = scalar_computation(_gather_body(select), [dv, dp, np.bool_] * 2,
                              [dv, dp, np.bool_], "select_and_gather", tuple_root=True,
                              key=("xlapy.autodiff.select_and_gather", key))
    _GATHERS[body] = (select, key)
    valid = lax.broadcast_in_dim(_scalar(True, np.bool_), operand.shape, ())
    inits = [_scalar(0, dv), _scalar(0, dp), _scalar(False, np.bool_)]
    return bind(Op.REDUCE_WINDOW, [operand, payload, valid, *inits],
                {"window": window, "to_apply": body}, weak_type=False)


def _gather_body(select):
    def select_and_gather(va, pa, fa, vb, pb, fb):
        keep_a = select(va, vb)
        take_b = lax.and_(fb, lax.or_(lax.not_(fa), lax.not_(keep_a)))
        return [lax.select(take_b, vb, va), lax.select(take_b, pb, pa), lax.or_(fa, fb)]
    return select_and_gather


def _select_fn(computation):
    """A select computation as a function of two scalar Arrays."""
    def select(a, b):
        return evaluate(computation, [a, b])
    return select


def _select_and_scatter_add(operand, source, window: Window, select, key=None):
    """XLA's max-pool gradient: `source` added at each window's selected element."""
    dtype = np.dtype(operand.dtype)
    select_fn = scalar_computation(select, [dtype] * 2, [np.bool_], "select", tuple_root=False,
                                   key=key)
    scatter_fn = scalar_computation(lax.add, [dtype] * 2, [dtype], "scatter", tuple_root=False)
    return bind(Op.SELECT_AND_SCATTER, [operand, source, _scalar(0, dtype)],
                {"window": window, "select": select_fn, "scatter": scatter_fn},
                weak_type=False)


# -- reduce-window ------------------------------------------------------------------------

def _dilate(size: int, dilation: int) -> int:
    return 0 if size == 0 else 1 + dilation * (size - 1)


def _sum_transpose(ct, in_shape, window: Window):
    """The cotangent of a reduce-window sum's operand (JAX's transpose rule)."""
    config, sizes, strides, dilations = [], [], [], []
    for w, size, out in zip(window.dimensions, in_shape, ct.shape):
        before = _dilate(w.size, w.window_dilation) - w.padding_low - 1
        after = (_dilate(size, w.base_dilation) + _dilate(w.size, w.window_dilation) - 1
                 - _dilate(out, w.stride) - before)
        config.append((before, after, w.stride - 1))
        sizes.append(w.size)
        strides.append(w.base_dilation)
        dilations.append(w.window_dilation)
    padded = lax.pad(ct, _scalar(0, ct.dtype), config)
    result = lax.reduce_window_sum(padded, sizes, strides, [(0, 0)] * len(sizes),
                                   window_dilation=dilations)
    if tuple(result.shape) != tuple(in_shape):
        raise CompileError(f"reduce-window sum transpose gave {list(result.shape)}, "
                           f"expected {list(in_shape)}")
    return result


def _chooser_picks_element(node, select, identity):
    """Where the window's extreme element beats a non-identity init value."""
    x, init = node.operands
    best = rebind(node, [x, _scalar(identity(np.dtype(x.dtype)), x.dtype)])
    init_b = lax.broadcast_in_dim(init, best.shape, ())
    return lax.not_(select(init_b, best))


@vjp(Op.REDUCE_WINDOW)
def _reduce_window_vjp(node, ct):
    op = reducer_of(node)
    x, init = node.operands[0], node.operands[-1]
    window = node.attr("window")
    if op is Op.ADD:
        if 0 in (*ct.shape, *x.shape):
            return [zeros_like(x), _total(ct) if node.active[1] else None]
        return [_sum_transpose(ct, x.shape, window), _total(ct) if node.active[1] else None]
    if node.attr("to_apply") in _GATHERS:
        return _select_and_gather_vjp(node, ct)
    if op not in _CHOOSERS:
        raise unsupported_reducer(
            node, "only sum, max and min reduce-windows have a reverse rule (a product, "
            "logaddexp or variadic window has only a forward rule)")
    select, identity = _CHOOSERS[op]
    ct_init = None
    if not is_identity(init, op):
        picked = _chooser_picks_element(node, select, identity)
        zero = zeros_like(ct)
        ct, ct_init = lax.select(picked, ct, zero), _total(lax.select(picked, zero, ct))
    ct_x = _select_and_scatter_add(x, ct, window, select)
    return [ct_x, ct_init if node.active[1] else None]


def _select_and_gather_vjp(node, ct):
    """The transpose of select and gather (both its outputs read the selected
    element): a select-and-scatter of each output's cotangent."""
    select, key = _GATHERS[node.attr("to_apply")]
    operand, window = node.operands[0], node.attr("window")
    cts = [None] * len(node.operands)
    for i in (0, 1):
        if ct[i] is not None and node.active[i]:
            cts[i] = _select_and_scatter_add(operand, ct[i], window, select, key)
    return cts


@jvp(Op.REDUCE_WINDOW)
def _reduce_window_jvp(node, tangents):
    op = reducer_of(node)
    if op is Op.ADD:
        return linear_jvp(node, tangents)
    if op not in _CHOOSERS:
        return generic_jvp(node, tangents)
    select, identity = _CHOOSERS[op]
    x, init = node.operands
    tx, tinit = tangents
    _, t, _ = select_and_gather(x, instantiate(tx, x), node.attr("window"), select,
                                select.__name__)
    if tinit is None and is_identity(init, op):
        return t
    picked = _chooser_picks_element(node, select, identity)
    return lax.select(picked, t, lax.broadcast_in_dim(instantiate(tinit, init), t.shape, ()))


# -- select-and-scatter -------------------------------------------------------------------

def _check_add_scatter(node) -> None:
    if monoid(node.attr("scatter")) is not Op.ADD:
        raise CompileError(f"cannot differentiate {node.opcode.value} "
                           f"({node.instruction.name}): only an add scatter is linear in "
                           "the source")


@jvp(Op.SELECT_AND_SCATTER)
def _select_and_scatter_jvp(node, tangents):
    _check_add_scatter(node)
    operand, source, init = node.operands
    return rebind(node, [operand, instantiate(tangents[1], source),
                         instantiate(tangents[2], init)])


@vjp(Op.SELECT_AND_SCATTER)
def _select_and_scatter_vjp(node, ct):
    _check_add_scatter(node)
    operand, source, init = node.operands
    ct_source = ct_init = None
    if node.active[1]:
        select = node.attr("select")
        _, ct_source, _ = select_and_gather(operand, ct, node.attr("window"),
                                            _select_fn(select), select)
    if node.active[2]:
        ct_init = _total(ct)
    return [None, ct_source, ct_init]


__all__ = ["select_and_gather"]
