"""Structured control flow: `while_loop`, `fori_loop`, `scan`, `cond`, `switch`.

Under a trace each becomes one HLO `while` or `conditional` whose bodies are
traced Python functions; values the bodies close over travel in the loop
state (or the branch operand) as extra tuple elements. In eager mode they run
as plain Python control flow on concrete values, as `jax.disable_jit()` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from xlapy.core.pytree import tree_flatten, tree_unflatten
from xlapy.core.subtrace import (
    ShapedArray,
    element_of,
    pack_parameters,
    trace_function,
)
from xlapy.core.trace import as_array, bind, current_trace, with_weak_type
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.lax.elementwise import add, clamp, convert_element_type, lt, sub
from xlapy.lax.indexing import dynamic_index_in_dim, dynamic_update_index_in_dim
from xlapy.lax.reshaping import concatenate, expand_dims, full, index_in_dim


def _check_same(where: str, expected: list[ShapedArray], got: list[ShapedArray], tree, out_tree):
    if out_tree != tree:
        raise TypeError(f"{where} must return the structure {tree}, got {out_tree}")
    for i, (a, b) in enumerate(zip(expected, got)):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise TypeError(f"{where}: output {i} is {b} but the loop carries {a}; "
                            "the carry's shapes and dtypes must stay the same")


def while_loop(cond_fun: Callable, body_fun: Callable, init_val):
    """Repeat `val = body_fun(val)` while `cond_fun(val)`; returns the final val."""
    if current_trace() is None:
        val = init_val
        while bool(cond_fun(val)):
            val = body_fun(val)
        return val
    leaves, tree = tree_flatten(init_val)
    init = [as_array(x) for x in leaves]
    avals = [ShapedArray.of(x) for x in init]

    def cond_flat(*xs):
        return cond_fun(tree_unflatten(tree, xs))

    def body_flat(*xs):
        return body_fun(tree_unflatten(tree, xs))

    cond = trace_function(cond_flat, avals, "region_cond", tuple_root=False)
    if cond.out_avals[0].shape != () or cond.out_avals[0].dtype != np.bool_:
        raise TypeError(f"while_loop's cond_fun must return a bool scalar, got {cond.out_avals[0]}")
    body = trace_function(body_flat, avals, "region_body")
    _check_same("while_loop's body_fun", avals, body.out_avals, tree, body.out_tree)

    n, c1, c2 = len(init), len(cond.captures), len(body.captures)
    state_shapes = [a.hlo_shape for a in avals] + [x.hlo_shape for x in
                                                     cond.captures + body.captures]
    state = Shape.tuple(state_shapes).with_default_layout()
    module = current_trace().module_builder
    meta = current_trace().metadata("while")
    pack_parameters(cond, state, list(range(n)) + list(range(n, n + c1)), module, meta)
    pack_parameters(body, state, list(range(n)) + list(range(n + c1, n + c1 + c2)), module, meta)
    root = body.computation.root_instruction
    root.operands += [element_of(body.computation, i, module, meta)
                      for i in range(n, n + c1 + c2)]
    root.shape = state
    outs = bind(Opcode.WHILE, [tuple(init + cond.captures + body.captures)],
                {"condition": cond.computation, "body": body.computation}, name="while")
    outs = [with_weak_type(o, a.weak_type) for o, a in zip(outs[:n], avals)]
    return tree_unflatten(tree, outs)


def fori_loop(lower, upper, body_fun: Callable, init_val):
    """`for i in range(lower, upper): val = body_fun(i, val)`, as one HLO while.
    `i` has the bounds' dtype (the default int for Python ints)."""
    lower, upper = as_array(lower), as_array(upper)
    index_dtype = lower.dtype if not lower.weak_type else upper.dtype
    if current_trace() is None:
        val = init_val
        for i in range(int(lower), int(upper)):
            val = body_fun(as_array(i, index_dtype), val)
        return val
    lower = convert_element_type(lower, index_dtype)
    upper = convert_element_type(upper, index_dtype)

    def cond(carry):
        return lt(carry[0], carry[1])

    def body(carry):
        i, n, val = carry
        return add(i, as_array(1, index_dtype)), n, body_fun(i, val)

    return while_loop(cond, body, (lower, upper, init_val))[2]


def scan(f: Callable, init, xs=None, length: int | None = None, reverse: bool = False):
    """`carry, y = f(carry, x)` over the leading axis of `xs`; returns
    (final carry, stacked ys), like jax.lax.scan."""
    x_leaves, x_tree = tree_flatten(xs)
    x_arrays = [as_array(x) for x in x_leaves]
    lengths = {x.shape[0] for x in x_arrays if x.shape}
    if length is None:
        if len(lengths) != 1:
            raise ValueError(f"scan needs xs with one leading length or length=, got {lengths}")
        length = lengths.pop()
    if any(x.shape[:1] != (length,) for x in x_arrays):
        raise ValueError(f"scan: every xs leaf needs leading dimension {length}")

    def x_at(i):
        """Step i's slice of every xs leaf (i a Python int eagerly, traced in a loop)."""
        if isinstance(i, int):
            return tree_unflatten(x_tree, [index_in_dim(x, i, keepdims=False)
                                           for x in x_arrays])
        return tree_unflatten(x_tree, [dynamic_index_in_dim(x, i, keepdims=False)
                                       for x in x_arrays])

    if current_trace() is None:
        carry, ys = init, []
        order = range(length - 1, -1, -1) if reverse else range(length)
        for i in order:
            carry, y = f(carry, x_at(i))
            ys.append(y)
        if reverse:
            ys.reverse()
        return carry, _stack_trees(ys, length, f, init, x_at)

    y_avals, y_tree = _y_shapes(f, init, x_at)
    ys0 = [full(a.shape_with(length), 0, a.dtype) for a in y_avals]

    def body(i, state):
        carry, ys = state
        step = sub(as_array(length - 1, i.dtype), i) if reverse else i
        carry, y = f(carry, x_at(step))
        y_leaves, _ = tree_flatten(y)
        ys = [dynamic_update_index_in_dim(buf, as_array(v), step, 0)
              for buf, v in zip(ys, y_leaves)]
        return carry, ys

    carry, ys = fori_loop(np.int32(0), np.int32(length), body, (init, ys0))   # an s32 index
    return carry, tree_unflatten(y_tree, ys)


class _YAval(ShapedArray):
    def shape_with(self, length: int) -> tuple[int, ...]:
        return (length, *self.shape)


def _y_shapes(f, init, x_at):
    """The per-step outputs' shapes, from tracing one step abstractly."""
    carry_leaves, carry_tree = tree_flatten(init)
    avals = [ShapedArray.of(c) for c in carry_leaves]
    holder = {}

    def one_step(*carry):
        _, y = f(tree_unflatten(carry_tree, carry), x_at(convert_element_type(0, np.int32)))
        leaves, holder["tree"] = tree_flatten(y)
        return leaves

    traced = trace_function(one_step, avals, "scan_shapes")
    return [_YAval(a.shape, a.dtype, a.weak_type) for a in traced.out_avals], holder["tree"]


def _stack_trees(ys, length, f, init, x_at):
    if not ys:
        y_avals, y_tree = _y_shapes(f, init, x_at)
        return tree_unflatten(y_tree, [full((0, *a.shape), 0, a.dtype) for a in y_avals])
    leaves = [tree_flatten(y)[0] for y in ys]
    _, tree = tree_flatten(ys[0])
    return tree_unflatten(tree, [concatenate([expand_dims(as_array(v), (0,)) for v in column], 0)
                                 for column in zip(*leaves)])


def cond(pred, true_fun: Callable, false_fun: Callable, *operands):
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`, as one HLO
    conditional (both branches are traced; their outputs must agree)."""
    pred = as_array(pred)
    if pred.shape != () or pred.dtype != np.bool_:
        raise TypeError("cond's predicate must be a bool scalar, got "
                        f"{pred.dtype}{list(pred.shape)}")
    if current_trace() is None:
        return (true_fun if bool(pred) else false_fun)(*operands)
    return _conditional(pred, [false_fun, true_fun], operands, by_pred=True)


def switch(index, branches: Sequence[Callable], *operands):
    """`branches[index](*operands)`, the index clamped into range (as JAX does)."""
    if not branches:
        raise ValueError("switch needs at least one branch")
    index = convert_element_type(as_array(index), np.int32)
    index = clamp(np.int32(0), index, np.int32(len(branches) - 1))
    if current_trace() is None:
        return branches[int(index)](*operands)
    return _conditional(index, list(branches), operands, by_pred=False)


def _conditional(index, branches, operands, by_pred: bool):
    leaves, tree = tree_flatten(operands)
    args = [as_array(x) for x in leaves]
    avals = [ShapedArray.of(x) for x in args]
    traced = []
    for i, branch in enumerate(branches):
        def flat(*xs, branch=branch):
            return branch(*tree_unflatten(tree, xs))

        traced.append(trace_function(flat, avals, f"region_branch_{i}"))
    first = traced[0]
    for other in traced[1:]:
        _check_same("cond/switch branches", first.out_avals, other.out_avals, first.out_tree,
                    other.out_tree)
    module = current_trace().module_builder
    meta = current_trace().metadata("cond")
    branch_operands = []
    for t in traced:
        shapes = [a.hlo_shape for a in avals] + [c.hlo_shape for c in t.captures]
        pack_parameters(t, Shape.tuple(shapes), list(range(len(shapes))), module, meta)
        branch_operands.append(tuple(args + t.captures))
    if by_pred:  # XLA's operand order: pred, true operand, false operand
        branch_operands.reverse()
        attrs = {"true_computation": traced[1].computation,
                 "false_computation": traced[0].computation}
    else:
        attrs = {"branch_computations": tuple(t.computation for t in traced)}
    outs = bind(Opcode.CONDITIONAL, [index, *branch_operands], attrs, name="cond")
    weak = [all(t.out_avals[i].weak_type for t in traced) for i in range(len(outs))]
    return tree_unflatten(first.out_tree,
                          [with_weak_type(o, w) for o, w in zip(outs, weak)])


def optimization_barrier(operand):
    """The same values, but XLA may not move computation across this point."""
    leaves, tree = tree_flatten(operand)
    arrays = [as_array(x) for x in leaves]
    if current_trace() is None:
        return operand
    outs = bind(Opcode.OPTIMIZATION_BARRIER, [tuple(arrays)], name="optimization_barrier")
    return tree_unflatten(tree, [with_weak_type(o, a.weak_type) for o, a in zip(outs, arrays)])


__all__ = ["cond", "fori_loop", "optimization_barrier", "scan", "switch", "while_loop"]
