"""gather and scatter: each is the other's transpose, as in JAX.

XLA's bounds rules shape the rules here:
- gather clamps every start index so its whole window is in bounds, so its
  VJP clamps the indices itself before the scatter-add (which would instead
  drop a window out of bounds): every cotangent lands where its value came from.
- scatter skips a window any part of which is out of bounds, and the gather
  that reads a scatter's cotangent back would clamp, so the updates' cotangents
  are masked to zero for the skipped windows.

Scatter combiners (the `to_apply` root):
- add / subtract: linear in operand and updates.
- overwrite (the root is the update parameter): JAX's scheme with unique ids.
  A scatter of one positive id per update window shows which update landed on
  each element (XLA applies updates in order; with repeated indices the last
  one wins in the interpreter, and the ids scatter follows the same order);
  only that update gets the element's cotangent, and the operand keeps it
  where no update landed.
- multiply: linear in the operand; the updates' derivative needs
  `unique_indices=true`, as in JAX (else CompileError).
- min / max: the element's derivative is shared equally among every value
  that attains the result (the operand and each landed update), as JAX's
  scatter_min/max JVP (and the elementwise max's half at ties).
Other combiners and variadic scatters raise CompileError.
"""

from __future__ import annotations

import numpy as np

from xlapy.autodiff.rules import jvp, vjp
from xlapy.autodiff.rules._util import constant, instantiate, linear_jvp, rebind, zeros_like
from xlapy.core import dtypes
from xlapy.core.array import ConcreteArray
from xlapy.core.trace import bind
from xlapy.errors import CompileError
from xlapy.hlo.opcode import Opcode
from xlapy.lax import elementwise as ew
from xlapy.lax import primitives as lax
from xlapy.lax.gather_scatter import _combiner, _replace

Op = Opcode
_ID_DTYPE = np.dtype(np.int32)


# -- index arithmetic ---------------------------------------------------------------------
def _index_constant(values, indices, index_vector_dim: int):
    """Per index-vector component `values`, broadcast to `indices`' shape (in its
    dtype, capped at the dtype's maximum so a large bound stays a bound)."""
    top = dtypes.iinfo(indices.dtype).max
    values = np.asarray([min(int(v), top) for v in values], dtype=indices.dtype)
    if index_vector_dim == indices.ndim:  # one implicit component
        return lax.broadcast_in_dim(ConcreteArray(values.reshape(())), indices.shape, ())
    return lax.broadcast_in_dim(ConcreteArray(values), indices.shape, (index_vector_dim,))


def _clamp_starts(indices, index_vector_dim: int, upper):
    """`indices` clamped to [0, upper] per component, as gather clamps them."""
    lo = _index_constant([0] * len(upper), indices, index_vector_dim)
    hi = _index_constant(upper, indices, index_vector_dim)
    return lax.clamp(lo, indices, hi)


def _starts_in_bounds(indices, index_vector_dim: int, upper):
    """bool over the indices' batch dims: whether each index vector starts a window
    wholly in bounds (0 <= start <= upper in every component)."""
    lo = _index_constant([0] * len(upper), indices, index_vector_dim)
    hi = _index_constant(upper, indices, index_vector_dim)
    ok = lax.bitwise_and(lax.ge(indices, lo), lax.le(indices, hi))
    if index_vector_dim == indices.ndim:
        return ok
    return lax.reduce_and(ok, (index_vector_dim,))


def _gather_upper(node) -> list[int]:
    operand = node.operands[0]
    sizes = node.attr("slice_sizes")
    return [operand.shape[d] - sizes[d] for d in node.attr("start_index_map", ())]


def _scatter_window(node) -> list[int]:
    """The size along each operand dim of one update window."""
    operand, _, updates = node.operands
    skipped = set(node.attr("inserted_window_dims", ())) | \
        set(node.attr("input_batching_dims", ()))
    window = iter(updates.shape[d] for d in node.attr("update_window_dims", ()))
    return [1 if d in skipped else next(window) for d in range(operand.ndim)]


def _scatter_upper(node) -> list[int]:
    window = _scatter_window(node)
    operand = node.operands[0]
    return [operand.shape[d] - window[d] for d in node.attr("scatter_dims_to_operand_dims", ())]


def _update_scatter_dims(node) -> tuple[int, ...]:
    window_dims = set(node.attr("update_window_dims", ()))
    return tuple(d for d in range(node.operands[2].ndim) if d not in window_dims)


# -- the two ops in terms of each other -------------------------------------------------------
def _scatter_add_attrs(gather_node, dtype) -> dict:
    """The scatter-add that transposes `gather_node` (JAX's _gather_transpose_rule)."""
    attrs = {"update_window_dims": tuple(gather_node.attr("offset_dims", ())),
             "inserted_window_dims": tuple(gather_node.attr("collapsed_slice_dims", ())),
             "scatter_dims_to_operand_dims": tuple(gather_node.attr("start_index_map", ()))}
    if gather_node.attr("operand_batching_dims"):
        attrs["input_batching_dims"] = tuple(gather_node.attr("operand_batching_dims"))
        attrs["scatter_indices_batching_dims"] = tuple(
            gather_node.attr("start_indices_batching_dims", ()))
    attrs["index_vector_dim"] = gather_node.attr("index_vector_dim")
    if gather_node.attr("indices_are_sorted"):
        attrs["indices_are_sorted"] = True
    attrs["to_apply"] = _combiner(ew.add, dtype, "scatter_add")
    return attrs


def _gather_attrs(scatter_node) -> dict:
    """The gather that reads back, for every update element, the operand element
    it lands on (clamping where the scatter would skip)."""
    attrs = {"offset_dims": tuple(scatter_node.attr("update_window_dims", ())),
             "collapsed_slice_dims": tuple(scatter_node.attr("inserted_window_dims", ())),
             "start_index_map": tuple(scatter_node.attr("scatter_dims_to_operand_dims", ()))}
    if scatter_node.attr("input_batching_dims"):
        attrs["operand_batching_dims"] = tuple(scatter_node.attr("input_batching_dims"))
        attrs["start_indices_batching_dims"] = tuple(
            scatter_node.attr("scatter_indices_batching_dims", ()))
    attrs["index_vector_dim"] = scatter_node.attr("index_vector_dim")
    attrs["slice_sizes"] = tuple(_scatter_window(scatter_node))
    if scatter_node.attr("indices_are_sorted"):
        attrs["indices_are_sorted"] = True
    return attrs


def _scatter_with(node, operand, updates, combine):
    """`node`'s scatter (its indices and dimension numbers) of `updates` into
    `operand` under another combiner."""
    attrs = {k: v for k, v in node.instruction.attrs.items() if k != "metadata"}
    attrs["to_apply"] = _combiner(combine, operand.dtype, "scatter")
    return bind(Op.SCATTER, [operand, node.operands[1], updates], attrs, weak_type=False,
                name="scatter")


def _gather_back(node, x):
    """For every update element of `node`, the element of `x` (operand-shaped) it
    lands on; zero for the windows the scatter skips."""
    _, indices, updates = node.operands
    gathered = bind(Op.GATHER, [x, indices], _gather_attrs(node), weak_type=False,
                    name="gather")
    return _mask_skipped(node, gathered)


def _windows_applied(node):
    """bool[updates]: whether each update element's window is applied (in bounds)."""
    _, indices, updates = node.operands
    ok = _starts_in_bounds(indices, node.attr("index_vector_dim"), _scatter_upper(node))
    return lax.broadcast_in_dim(ok, updates.shape, _update_scatter_dims(node))


def _mask_skipped(node, x):
    """`x` (updates-shaped) with the windows the scatter skips set to zero."""
    return lax.select(_windows_applied(node), x, zeros_like(x))


# -- gather -----------------------------------------------------------------------------------
@jvp(Op.GATHER)
def _gather_jvp(node, tangents):
    return linear_jvp(node, tangents)


@vjp(Op.GATHER)
def _gather_vjp(node, ct):
    operand, indices = node.operands
    index_vector_dim = node.attr("index_vector_dim")
    clamped = _clamp_starts(indices, index_vector_dim, _gather_upper(node))
    out = bind(Op.SCATTER, [zeros_like(operand), clamped, ct],
               _scatter_add_attrs(node, operand.dtype), weak_type=False, name="scatter_add")
    return [out, None]


# -- scatter ----------------------------------------------------------------------------------
def _combiner_kind(node) -> str:
    """'add', 'sub', 'mul', 'min', 'max' or 'set' from the to_apply root."""
    if len(node.operands) != 3:
        raise CompileError(f"cannot differentiate the variadic scatter {node.instruction.name}"
                           " (as JAX, only single-operand scatters have derivatives)")
    computation = node.attr("to_apply")
    root = computation.root_instruction
    current, update = computation.parameter(0), computation.parameter(1)
    if root is update:
        return "set"
    kinds = {Op.ADD: "add", Op.SUBTRACT: "sub", Op.MULTIPLY: "mul", Op.MINIMUM: "min",
             Op.MAXIMUM: "max"}
    kind = kinds.get(root.opcode)
    commutes = kind in ("add", "mul", "min", "max")
    if kind is not None and (root.operands == [current, update]
                             or (commutes and root.operands == [update, current])):
        return kind
    raise CompileError(f"cannot differentiate scatter {node.instruction.name}: its combiner "
                       f"{computation.name} is not add, subtract, multiply, min, max or an "
                       "overwrite")


def _landed(node):
    """(operand keeps its value: bool[operand], update landed: bool[updates]) for an
    overwriting scatter, from a scatter of per-window ids (JAX's _scatter_jvp)."""
    operand, indices, updates = node.operands
    scatter_dims = _update_scatter_dims(node)
    ids_shape = tuple(updates.shape[d] for d in scatter_dims)
    count = int(np.prod(ids_shape, dtype=np.int64))
    if count + 1 > np.iinfo(_ID_DTYPE).max:
        raise CompileError(f"scatter {node.instruction.name}: too many updates to number")
    ids = lax.add(lax.reshape(lax.iota(_ID_DTYPE, count), ids_shape),
                  ConcreteArray(np.ones(ids_shape, _ID_DTYPE)))
    ids = lax.broadcast_in_dim(ids, updates.shape, scatter_dims)
    zero_ids = lax.broadcast_in_dim(ConcreteArray(np.zeros((), _ID_DTYPE)), operand.shape, ())
    scattered = _scatter_with(node, zero_ids, ids, _replace)
    back = bind(Op.GATHER, [scattered, indices], _gather_attrs(node), weak_type=False,
                name="gather")
    return lax.eq(scattered, zero_ids), lax.eq(ids, back)


def _extremal_shares(node):
    """(operand share, update share, 1/count) for a min/max scatter: which values
    attain each result element, and how many share its derivative."""
    operand, _, updates = node.operands
    out = node.result
    retained = lax.eq(operand, out)
    gathered = bind(Op.GATHER, [out, node.operands[1]], _gather_attrs(node), weak_type=False,
                    name="gather")
    landed = lax.bitwise_and(lax.eq(updates, gathered), _windows_applied(node))
    one, zero = constant(1, operand), zeros_like(operand)
    hits = _scatter_with(node, lax.select(retained, one, zero),
                         lax.select(landed, constant(1, updates), zeros_like(updates)), ew.add)
    inverse = lax.div(one, lax.max(hits, one))  # NaN results: no value attains them
    return retained, landed, inverse


def _require_unique(node, what: str) -> None:
    if not node.attr("unique_indices"):
        raise CompileError(f"cannot differentiate scatter {node.instruction.name} with respect "
                           f"to its updates: {what} gradients need unique_indices=true "
                           "(as JAX's scatter_mul)")


@vjp(Op.SCATTER)
def _scatter_vjp(node, ct):
    kind = _combiner_kind(node)
    operand, _, updates = node.operands
    active_updates = node.active[2]
    if kind in ("add", "sub"):
        ct_updates = _gather_back(node, ct) if active_updates else None
        if kind == "sub" and ct_updates is not None:
            ct_updates = lax.neg(ct_updates)
        return [ct, None, ct_updates]
    if kind == "set":
        keeps, landed = _landed(node)
        ct_operand = lax.select(keeps, ct, zeros_like(ct))
        ct_updates = None
        if active_updates:
            ct_updates = lax.select(landed, _gather_back(node, ct), zeros_like(updates))
        return [ct_operand, None, ct_updates]
    if kind == "mul":
        ct_operand = rebind(node, [ct, node.operands[1], updates])
        ct_updates = None
        if active_updates:
            _require_unique(node, "multiply")
            ct_updates = _gather_back(node, lax.mul(ct, operand))
        return [ct_operand, None, ct_updates]
    retained, landed, inverse = _extremal_shares(node)
    shared = lax.mul(ct, inverse)
    ct_updates = None
    if active_updates:
        ct_updates = lax.select(landed, _gather_back(node, shared), zeros_like(updates))
    return [lax.select(retained, shared, zeros_like(ct)), None, ct_updates]


@jvp(Op.SCATTER)
def _scatter_jvp(node, tangents):
    kind = _combiner_kind(node)
    operand, indices, updates = node.operands
    if kind in ("add", "sub"):
        return linear_jvp(node, tangents)
    t_operand, _, t_updates = tangents
    if kind == "mul":
        out = None
        if t_operand is not None:
            out = rebind(node, [t_operand, indices, updates])
        if t_updates is not None:
            _require_unique(node, "multiply")
            spread = _scatter_with(node, zeros_like(operand), t_updates, ew.add)
            term = lax.mul(operand, spread)
            out = term if out is None else lax.add(out, term)
        return out
    t_operand, t_updates = instantiate(t_operand, operand), instantiate(t_updates, updates)
    if kind == "set":
        keeps, landed = _landed(node)
        return _scatter_with(node, lax.select(keeps, t_operand, zeros_like(operand)),
                             lax.select(landed, t_updates, zeros_like(updates)), ew.add)
    retained, landed, inverse = _extremal_shares(node)
    total = _scatter_with(node, lax.select(retained, t_operand, zeros_like(operand)),
                          lax.select(landed, t_updates, zeros_like(updates)), ew.add)
    return lax.mul(total, inverse)
