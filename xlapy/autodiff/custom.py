"""`stop_gradient`, `custom_vjp` and `custom_jvp`: user-defined derivatives.

Each leaves a mark in the HLO so the transform, which sees only HLO, finds
it: stop_gradient is a `copy` with `frontend_attributes={xlapy_stop_gradient=
"true"}`, and a custom-derivative function is a `call` of its traced body
whose `frontend_attributes` name the Python rule in this process's registry.
Without the registry (a module read from text elsewhere) the transform
differentiates the body itself.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from xlapy.autodiff import api
from xlapy.autodiff.rules._util import instantiate, zeros_like
from xlapy.autodiff.tape import CUSTOM_JVP, CUSTOM_VJP, STOP_GRADIENT, evaluate, frontend_attributes
from xlapy.core import lazy, lazy_capture
from xlapy.core.pytree import tree_flatten, tree_map, tree_unflatten
from xlapy.core.subtrace import ShapedArray, trace_function
from xlapy.core.trace import as_array, bind, current_trace
from xlapy.hlo.opcode import Opcode

_REGISTRY: dict[str, object] = {}


def stop_gradient(x):
    """`x`, as a constant to differentiation: its cotangent and tangent are zero."""
    def stop(leaf):
        leaf = as_array(leaf)
        if current_trace() is None and not lazy.active():
            return leaf     # (lazily, the marked copy is recorded: grad may cut it out)
        return bind(Opcode.COPY, [leaf],
                    {"frontend_attributes": frontend_attributes(**{STOP_GRADIENT: "true"})},
                    name="stop_gradient")
    return tree_map(stop, x)


class _CustomFunction:
    """What custom_vjp and custom_jvp share: calling the function leaves a marked
    `call` in the trace; with no trace it is just called."""

    kind = ""

    def __init__(self, fun: Callable, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)

    def __call__(self, *args):
        if current_trace() is None:
            lazy_capture.taint()   # its rule is only kept in a trace: grad traces instead
            return self.fun(*args)
        static = {i: args[i] for i in self.nondiff_argnums}
        dynamic = tuple(a for i, a in enumerate(args) if i not in static)
        flat, in_tree = tree_flatten(dynamic)
        flat = [as_array(a) for a in flat]

        def body(*leaves):
            return self.fun(*_merge(static, tree_unflatten(in_tree, leaves), len(args)))

        traced = trace_function(body, [ShapedArray.of(a) for a in flat],
                                f"{self.kind}_{getattr(self.fun, '__name__', 'f')}")
        key = f"{self.kind}.{id(self)}.{len(_REGISTRY)}"
        _REGISTRY[key] = _Instance(self, static, in_tree, traced.out_tree, len(flat), len(args))
        marker = CUSTOM_VJP if self.kind == "custom_vjp" else CUSTOM_JVP
        outs = bind(Opcode.CALL, [*flat, *traced.captures],
                    {"to_apply": traced.computation,
                     "frontend_attributes": frontend_attributes(**{marker: key})},
                    name=self.kind)
        return tree_unflatten(traced.out_tree, list(outs))


def _match(ct, tree, flat: list, name: str) -> None:
    if ct is None:
        flat.extend([None] * tree.num_leaves)
    elif tree.node_type is None:
        flat.append(as_array(ct))
    else:
        children, ct_tree = tree_flatten(ct, is_leaf=lambda x: x is not ct)
        if ct_tree.node_type is not tree.node_type or len(children) != len(tree.children):
            raise TypeError(f"custom_vjp bwd of {name} returned a cotangent structured as "
                            f"{tree_flatten(ct)[1]} for an argument structured as {tree}")
        for child, child_tree in zip(children, tree.children):
            _match(child, child_tree, flat, name)


def _merge(static: dict, dynamic, count: int) -> list:
    dynamic = iter(dynamic)
    return [static[i] if i in static else next(dynamic) for i in range(count)]


class _Instance:
    """One traced call of a custom function: how to rebuild its arguments."""

    def __init__(self, function, static, in_tree, out_tree, num_flat, num_args):
        self.function = function
        self.static = static
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.num_flat = num_flat
        self.num_args = num_args

    def arguments(self, flat) -> list:
        return _merge(self.static, tree_unflatten(self.in_tree, list(flat)), self.num_args)

    def dynamic_args(self, flat) -> tuple:
        return tree_unflatten(self.in_tree, list(flat))

    def static_args(self) -> list:
        """The nondiff_argnums values in order: JAX passes them first to bwd and to
        a custom_jvp rule."""
        return [self.static[i] for i in sorted(self.static)]

    def jvp_rule(self, primal_leaves, tangent_leaves):
        """The custom_jvp rule on the dynamic arguments: (out, tangent_out)."""
        fn = self.function
        if not hasattr(fn, "rule"):
            raise TypeError(f"custom_jvp function {fn.__name__} has no rule: call defjvp")
        return fn.rule(*self.static_args(), self.dynamic_args(primal_leaves),
                       self.dynamic_args(tangent_leaves))

    def cotangent_leaves(self, cts) -> list:
        """bwd's output flattened like the dynamic arguments; None (a zero) may
        stand for a whole argument or any subtree of one, as in JAX."""
        name = self.function.__name__
        if not isinstance(cts, tuple):
            raise TypeError(f"custom_vjp bwd of {name} must return a tuple with one "
                            f"cotangent per argument, got {type(cts).__name__}")
        if len(cts) != len(self.in_tree.children):
            raise TypeError(f"custom_vjp bwd of {name} returned {len(cts)} cotangents for "
                            f"{len(self.in_tree.children)} differentiable arguments")
        flat: list = []
        _match(cts, self.in_tree, flat, name)
        return flat


class custom_vjp(_CustomFunction):  # noqa: N801 (JAX's name)
    """A function with a hand-written reverse-mode rule, as jax.custom_vjp:

        f = custom_vjp(f); f.defvjp(fwd, bwd)
        fwd(*args) -> (out, residuals);  bwd(residuals, ct_out) -> tuple of ct per arg

    With nondiff_argnums, bwd takes those arguments first and returns cotangents
    for the others only; None in bwd's output is a zero for that (sub)tree.

    Forward mode through it is refused, as in JAX. Values it closes over get no
    cotangent."""

    kind = "custom_vjp"

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        self.fwd, self.bwd = fwd, bwd


class custom_jvp(_CustomFunction):  # noqa: N801 (JAX's name)
    """A function with a hand-written forward-mode rule, as jax.custom_jvp:

        f = custom_jvp(f); f.defjvp(rule)   rule(primals, tangents) -> (out, tangent_out)

    With nondiff_argnums the rule takes those arguments first, and primals and
    tangents hold the others only (as JAX).

    Reverse mode transposes the rule (it must be linear in the tangents)."""

    kind = "custom_jvp"

    def defjvp(self, rule: Callable) -> Callable:
        self.rule = rule
        return rule

    def defjvps(self, *per_argument: Callable | None) -> None:
        """One function per argument: `fn(tangent, primal_out, *primals)`."""
        if self.nondiff_argnums:
            raise TypeError("can't use defjvps with nondiff_argnums; use defjvp")

        def rule(primals, tangents):
            out = self.fun(*primals)
            total = None
            for fn, t in zip(per_argument, tangents):
                if fn is None:
                    continue
                term = fn(t, out, *primals)
                total = term if total is None else tree_map(lambda a, b: a + b, total, term)
            if total is None:
                total = tree_map(lambda o: zeros_like(as_array(o)), out)
            return out, total
        self.rule = rule


class _VjpRule:
    def __init__(self, instance: _Instance):
        self.instance = instance

    def forward(self, node):
        instance = self.instance
        fn = instance.function
        if not hasattr(fn, "fwd"):
            raise TypeError(f"custom_vjp function {fn.__name__} has no rule: call defvjp")
        out, residuals = fn.fwd(*instance.arguments(node.operands[:instance.num_flat]))
        leaves, _ = tree_flatten(out)
        return tuple(as_array(x) for x in leaves), residuals

    def backward(self, node, ct):
        instance = self.instance
        ct = instantiate(ct, node.result)
        cts = instance.function.bwd(*instance.static_args(), node.residuals,
                                    tree_unflatten(instance.out_tree, list(ct)))
        flat = instance.cotangent_leaves(cts)
        return flat + [None] * (len(node.operands) - instance.num_flat)


class _JvpAsVjpRule:
    """Reverse mode of a custom_jvp function: the transpose of its (linear in the
    tangents) rule, found by differentiating the rule in reverse at zero tangents."""

    def __init__(self, instance: _Instance):
        self.instance = instance

    def forward(self, node):
        result = evaluate(node.instruction.called_computations[0], node.operands)
        return result, None

    def backward(self, node, ct):
        instance = self.instance
        primals = node.operands[:instance.num_flat]

        def linear(*tangent_leaves):
            _, out = instance.jvp_rule(primals, tangent_leaves)
            return tuple(tree_flatten(out)[0])

        _, pullback = api.vjp(linear, *zeros_like(tuple(primals)))
        cts = pullback(tuple(instantiate(ct, node.result)))
        return list(cts) + [None] * (len(node.operands) - instance.num_flat)


def custom_vjp_rule(key: str | None):
    instance = _REGISTRY.get(key) if key else None
    return None if instance is None else _VjpRule(instance)


def custom_jvp_as_vjp_rule(key: str | None):
    instance = _REGISTRY.get(key) if key else None
    return None if instance is None else _JvpAsVjpRule(instance)


def custom_jvp_rule(key: str | None):
    instance = _REGISTRY.get(key) if key else None
    if instance is None:
        return None

    def rule(operands, tangents):
        primals = operands[:instance.num_flat]
        tangent_leaves = instantiate(tuple(tangents[:instance.num_flat]), tuple(primals))
        out, tangent = instance.jvp_rule(primals, tangent_leaves)
        out_leaves = tuple(as_array(x) for x in tree_flatten(out)[0])
        tangent_leaves = tuple(as_array(x) for x in tree_flatten(tangent)[0])
        return out_leaves, tangent_leaves

    return rule
