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

from xlapy.autodiff.tape import CUSTOM_JVP, CUSTOM_VJP, STOP_GRADIENT, frontend_attributes
from xlapy.core.pytree import tree_flatten, tree_map, tree_unflatten
from xlapy.core.subtrace import ShapedArray, trace_function
from xlapy.core.trace import as_array, bind, current_trace
from xlapy.hlo.opcode import Opcode

_REGISTRY: dict[str, object] = {}


def stop_gradient(x):
    """`x`, as a constant to differentiation: its cotangent and tangent are zero."""
    def stop(leaf):
        leaf = as_array(leaf)
        if current_trace() is None:
            return leaf
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


class custom_vjp(_CustomFunction):  # noqa: N801 (JAX's name)
    """A function with a hand-written reverse-mode rule, as jax.custom_vjp:

        f = custom_vjp(f); f.defvjp(fwd, bwd)
        fwd(*args) -> (out, residuals);  bwd(residuals, ct_out) -> tuple of ct per arg

    Forward mode through it is refused, as in JAX. Values it closes over get no
    cotangent."""

    kind = "custom_vjp"

    def defvjp(self, fwd: Callable, bwd: Callable) -> None:
        self.fwd, self.bwd = fwd, bwd


class custom_jvp(_CustomFunction):  # noqa: N801 (JAX's name)
    """A function with a hand-written forward-mode rule, as jax.custom_jvp:

        f = custom_jvp(f); f.defjvp(rule)   rule(primals, tangents) -> (out, tangent_out)

    Reverse mode transposes the rule (it must be linear in the tangents)."""

    kind = "custom_jvp"

    def defjvp(self, rule: Callable) -> Callable:
        self.rule = rule
        return rule

    def defjvps(self, *per_argument: Callable | None) -> None:
        """One function per argument: `fn(tangent, primal_out, *primals)`."""
        def rule(primals, tangents):
            out = self.fun(*primals)
            total = None
            for fn, t in zip(per_argument, tangents):
                if fn is None:
                    continue
                term = fn(t, out, *primals)
                total = term if total is None else tree_map(lambda a, b: a + b, total, term)
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
        from xlapy.autodiff.rules._util import instantiate

        instance = self.instance
        ct = instantiate(ct, node.result)
        cts = instance.function.bwd(node.residuals, tree_unflatten(instance.out_tree, list(ct)))
        if not isinstance(cts, tuple):
            raise TypeError(f"custom_vjp bwd of {instance.function.__name__} must return a "
                            f"tuple with one cotangent per argument, got {type(cts).__name__}")
        leaves, _ = tree_flatten(cts)
        flat = [None if x is None else as_array(x) for x in leaves]
        if len(flat) != instance.num_flat:
            raise TypeError(f"custom_vjp bwd of {instance.function.__name__} returned "
                            f"{len(flat)} cotangents for {instance.num_flat} array arguments")
        return flat + [None] * (len(node.operands) - instance.num_flat)


class _JvpAsVjpRule:
    """Reverse mode of a custom_jvp function: the transpose of its (linear in the
    tangents) rule, found by differentiating the rule in reverse at zero tangents."""

    def __init__(self, instance: _Instance):
        self.instance = instance

    def forward(self, node):
        from xlapy.autodiff.tape import evaluate

        result = evaluate(node.instruction.called_computations()[0], node.operands)
        return result, None

    def backward(self, node, ct):
        from xlapy.autodiff.api import vjp
        from xlapy.autodiff.rules._util import instantiate, zeros_like

        instance = self.instance
        primals = node.operands[:instance.num_flat]
        args = instance.dynamic_args(primals)

        def linear(*tangent_leaves):
            tangents = tree_unflatten(instance.in_tree, list(tangent_leaves))
            _, out = instance.function.rule(instance.arguments(primals), tangents)
            return tuple(tree_flatten(out)[0])

        del args
        _, pullback = vjp(linear, *zeros_like(tuple(primals)))
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
        from xlapy.autodiff.rules._util import instantiate

        primals = operands[:instance.num_flat]
        tangent_leaves = instantiate(tuple(tangents[:instance.num_flat]), tuple(primals))
        fn = instance.function
        if not hasattr(fn, "rule"):
            raise TypeError(f"custom_jvp function {fn.__name__} has no rule: call defjvp")
        out, tangent = fn.rule(instance.arguments(primals),
                               instance.dynamic_args(tangent_leaves))
        out_leaves = tuple(as_array(x) for x in tree_flatten(out)[0])
        tangent_leaves = tuple(as_array(x) for x in tree_flatten(tangent)[0])
        return out_leaves, tangent_leaves

    return rule
