"""The autodiff frontend: `grad`, `value_and_grad`, `vjp`, `jvp`, `jacfwd`,
`jacrev`, `hessian`, as in JAX.

Each records the function as HLO (record.py), then replays that computation
with the reverse or forward transform; the derivative's instructions go into
the current trace (so `jit(grad(f))` is one module, and `grad(grad(f))`
differentiates the first derivative's HLO), or run at once outside `jit`.

Integer and boolean inputs: `vjp` gives them `float0` zeros and `jvp` expects
`float0` tangents for them, as JAX; `grad` refuses them unless
`allow_int=True`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from xlapy import numpy as xnp
from xlapy.autodiff.forward import jvp_computation
from xlapy.autodiff.lazy_vjp import lazy_vjp
from xlapy.autodiff.record import record
from xlapy.autodiff.reverse import vjp_computation
from xlapy.autodiff.rules._util import zeros_like
from xlapy.autodiff.tape import is_differentiable_type
from xlapy.core import lazy
from xlapy.core.array import Array, ConcreteArray
from xlapy.core.dtypes import float0
from xlapy.core.pytree import tree_flatten, tree_unflatten
from xlapy.core.trace import as_array, current_trace, with_weak_type
from xlapy.errors import CompileError
from xlapy.lax import primitives as lax


def _wraps(fun: Callable):
    """`functools.wraps(fun)` without its exceptions: a loop that builds
    `grad(partial(loss, ...))` every step wraps a partial (no __name__), which
    cost functools 2 µs in caught AttributeErrors."""
    def named(wrapper):
        for attribute in functools.WRAPPER_ASSIGNMENTS:
            value = getattr(fun, attribute, _MISSING)
            if value is not _MISSING:
                setattr(wrapper, attribute, value)
        extra = getattr(fun, "__dict__", None)
        if extra:
            wrapper.__dict__.update(extra)
        wrapper.__wrapped__ = fun
        return wrapper
    return named


_MISSING = object()


def _float0_zeros(x):
    return np.zeros(tuple(x.shape), float0)


def _outputs(recording, outputs):
    outs = [with_weak_type(o, w) for o, w in zip(outputs, recording.out_weak)]
    return tree_unflatten(recording.out_tree, outs)


def _split_aux(recording, has_aux: bool):
    """(number of differentiated output leaves, main tree, aux tree)."""
    if not has_aux:
        return recording.out_tree.num_leaves, recording.out_tree, None
    tree = recording.out_tree
    if tree.node_type is not tuple or len(tree.children) != 2:
        raise TypeError("a function with has_aux=True must return a pair (output, aux), "
                        f"got {tree}")
    main, aux = tree.children
    return main.num_leaves, main, aux


def vjp(fun: Callable, *primals, has_aux: bool = False):
    """(fun(*primals), vjp_fn[, aux]); `vjp_fn(ct)` gives a tuple with one
    cotangent per primal, shaped like it."""
    flat, in_tree = tree_flatten(primals)
    return _vjp(fun, flat, in_tree, has_aux)


def _vjp(fun: Callable, flat: list, in_tree, has_aux: bool):
    """`vjp` of the primals flattened (`in_tree` the tree of the primals tuple)."""
    out, pull, aux = _vjp_parts(fun, flat, in_tree, has_aux)
    main_tree, main = pull.main_tree, pull.main

    def vjp_fn(cotangent):
        ct_leaves, ct_tree = tree_flatten(cotangent)
        if ct_tree != main_tree:
            raise ValueError(f"the cotangent's structure {ct_tree} does not match the "
                            f"output's {main_tree}")
        return pull([_cotangent(i, ct, o) for i, (ct, o) in enumerate(zip(ct_leaves, main))])

    return (out, vjp_fn) if not has_aux else (out, vjp_fn, aux)


def _vjp_parts(fun: Callable, flat: list, in_tree, has_aux: bool):
    """(the main output, its pullback from checked cotangents (`_Pull`), the aux
    output or None)."""
    name = f"vjp({getattr(fun, '__name__', 'fun')})"
    recording = record(fun, flat, in_tree, name)
    active = [is_differentiable_type(a.dtype) for a in recording.args]
    mask = active + [False] * len(recording.captures)
    outputs = None
    if recording.values is None and current_trace() is None and lazy.active():
        try:
            outputs, pullback = lazy_vjp(recording.computation, recording.operands, mask,
                                         recording.pending)
        except (CompileError, TypeError):   # needs known values (or has a token):
            # record concretely and replay, as outside lazy mode
            recording = record(fun, flat, in_tree, name, concrete=True)
            mask = active + [False] * len(recording.captures)
    if outputs is None:
        outputs, pullback = vjp_computation(recording.computation, recording.operands, mask,
                                            recording.values)
    outputs = list(outputs)
    num_main, main_tree, aux_tree = _split_aux(recording, has_aux)
    main = outputs[:num_main]
    pull = _Pull(pullback, recording.args, active, in_tree, main_tree, main,
                 len(outputs) - num_main)
    out = tree_unflatten(main_tree, [with_weak_type(o, w) for o, w in
                                     zip(main, recording.out_weak)])
    if not has_aux:
        return out, pull, None
    aux = tree_unflatten(aux_tree, [with_weak_type(o, w) for o, w in
                                    zip(outputs[num_main:], recording.out_weak[num_main:])])
    return out, pull, aux


class _Pull:
    """A vjp's pullback from cotangents already checked against the main outputs
    (`_cotangent`) to gradients shaped like the primals' tree."""

    __slots__ = ("pullback", "args", "active", "in_tree", "main_tree", "main", "unused")

    def __init__(self, pullback, args, active, in_tree, main_tree, main, unused):
        self.pullback = pullback
        self.args = args
        self.active = active   # (per argument: whether its type is differentiable)
        self.in_tree = in_tree
        self.main_tree = main_tree
        self.main = main
        self.unused = unused   # (aux outputs: no cotangent)

    def __call__(self, cts: list):
        grads = self.pullback(cts + [None] * self.unused)
        flat_grads = []
        for g, arg, active in zip(grads, self.args, self.active):
            if not active:
                flat_grads.append(_float0_zeros(arg))
            else:  # shaped and typed like the primal, weak type included (as JAX)
                g = zeros_like(arg) if g is None else g
                flat_grads.append(g if g.weak_type == arg.weak_type
                                  else with_weak_type(g, arg.weak_type))
        return tree_unflatten(self.in_tree, flat_grads)


def _cotangent(i: int, ct, out):
    """One output's cotangent as the pullback takes it: the output's shape and
    dtype (a weak-typed Python scalar converts), None for an integer output."""
    if not is_differentiable_type(out.dtype):
        return None
    ct = as_array(ct)
    if tuple(ct.shape) != tuple(out.shape):
        raise ValueError(f"cotangent {i} has shape {list(ct.shape)}, but the output has "
                         f"shape {list(out.shape)}")
    if ct.dtype != out.dtype:
        if not ct.weak_type:
            raise ValueError(f"cotangent {i} is {ct.dtype}, but the output is {out.dtype}")
        ct = lax.convert_element_type(ct, out.dtype)
    return ct


def _argnums(argnums, nargs: int, where: str) -> tuple[int, ...]:
    if type(argnums) is int and 0 <= argnums < nargs:   # (the commonest: every grad step)
        return (argnums,)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -nargs <= i < nargs:
            raise TypeError(f"{where}: argnums {argnums} needs at least {max(i, -i - 1) + 1} "
                            f"positional arguments, got {nargs}")
    return tuple(i % nargs for i in nums)


def _partial(fun, args, nums):
    def partial_fun(*diff):
        call = list(args)
        for i, value in zip(nums, diff):
            call[i] = value
        return fun(*call)
    partial_fun.__name__ = getattr(fun, "__name__", "fun")
    return partial_fun


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   allow_int: bool = False) -> Callable:
    """`fun` and its gradient: f(*args) -> (value, grad) (((value, aux), grad) with
    has_aux). `fun` must return a real scalar; the gradient is shaped like the
    argument(s) named by argnums."""

    @_wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        nums = _argnums(argnums, len(args), "value_and_grad")
        call = functools.partial(fun, **kwargs) if kwargs else fun
        flat, in_tree = tree_flatten(tuple(args[i] for i in nums))
        _check_inputs(flat, allow_int)
        value, pull, aux = _vjp_parts(_partial(call, args, nums), flat, in_tree, has_aux)
        value_array = as_array(value) if not isinstance(value, (tuple, list, dict)) else None
        if value_array is None or value_array.shape != () or \
                value_array.dtype.kind not in "fV":   # (bfloat16's kind is V)
            raise TypeError("grad requires a real scalar output, got "
                            + (f"{value_array.dtype}{list(value_array.shape)}"
                               if value_array is not None else type(value).__name__))
        grads = pull([_one(pull.main[0].dtype)])   # (the output's own type: checked as is)
        grads = grads[0] if isinstance(argnums, int) else tuple(grads)
        if has_aux:
            return (value, aux), grads
        return value, grads

    return value_and_grad_f


def _one(dtype) -> ConcreteArray:
    """The cotangent 1 of a scalar output (a constant, not a recorded broadcast)."""
    one = _ONES.get(dtype)
    if one is None:
        one = _ONES[dtype] = np.ones((), np.dtype(dtype))
    return ConcreteArray(one)


_ONES: dict = {}


def _check_inputs(leaves: list, allow_int: bool) -> None:
    for leaf in leaves:
        dtype = leaf.dtype if isinstance(leaf, (Array, np.ndarray)) else as_array(leaf).dtype
        if not is_differentiable_type(dtype) and not allow_int:
            dtype = np.dtype(as_array(leaf).dtype)   # (named as the type it takes)
            raise TypeError(f"grad requires real- or complex-valued inputs, but got {dtype}; "
                            "use vjp, or pass allow_int=True for float0 gradients")


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False,
         allow_int: bool = False) -> Callable:
    """The gradient of a scalar function, as jax.grad: a function returning
    d fun / d args[argnums] (a tuple for a tuple of argnums; (grad, aux) with
    has_aux). Works eagerly (Python control flow on values allowed) and under
    jit; nests to any order."""
    value_and_grad_f = value_and_grad(fun, argnums, has_aux, allow_int)

    @_wraps(fun)
    def grad_f(*args, **kwargs):
        (value_aux), grads = value_and_grad_f(*args, **kwargs)
        if has_aux:
            return grads, value_aux[1]
        return grads

    return grad_f


def jvp(fun: Callable, primals: Sequence, tangents: Sequence, has_aux: bool = False):
    """(fun(*primals), the derivative along `tangents`) — forward mode."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp takes primals and tangents as tuples or lists, one entry per "
                        "argument")
    flat, in_tree = tree_flatten(tuple(primals))
    t_flat, t_tree = tree_flatten(tuple(tangents))
    if t_tree != in_tree:
        raise TypeError(f"tangents' structure {t_tree} does not match primals' {in_tree}")
    recording = record(fun, flat, in_tree, f"jvp({getattr(fun, '__name__', 'fun')})")
    tangent_arrays = []
    for i, (t, p) in enumerate(zip(t_flat, recording.args)):
        tangent_arrays.append(_tangent(i, t, p))
    outputs, out_tangents = jvp_computation(
        recording.computation, recording.operands,
        tangent_arrays + [None] * len(recording.captures), recording.values)
    num_main, main_tree, aux_tree = _split_aux(recording, has_aux)
    outputs = [with_weak_type(o, w) for o, w in zip(outputs, recording.out_weak)]
    out_t = [(_float0_zeros(o) if not is_differentiable_type(o.dtype)
              else with_weak_type(zeros_like(o) if t is None else t, o.weak_type))
             for o, t in zip(outputs, out_tangents)]
    primal_out = tree_unflatten(main_tree, outputs[:num_main])
    tangent_out = tree_unflatten(main_tree, out_t[:num_main])
    if has_aux:
        return primal_out, tangent_out, tree_unflatten(aux_tree, outputs[num_main:])
    return primal_out, tangent_out


def _tangent(i: int, t, primal):
    """The tangent for one primal leaf, checked as JAX does: same shape, same
    dtype, and float0 for an integer or boolean primal (None is returned: zero)."""
    if not is_differentiable_type(primal.dtype):
        dtype = getattr(t, "dtype", None)
        if dtype is None or np.dtype(dtype) != float0:
            raise TypeError(f"tangent {i} is for an integer or boolean primal "
                            f"({primal.dtype}), so its dtype must be xlapy.float0, got {dtype}")
        if tuple(np.shape(t)) != tuple(primal.shape):
            raise ValueError(f"tangent {i} has shape {list(np.shape(t))} but its primal has "
                             f"shape {list(primal.shape)}")
        return None
    t = as_array(t)
    if tuple(t.shape) != tuple(primal.shape):
        raise ValueError(f"tangent {i} has shape {list(t.shape)} but its primal has shape "
                         f"{list(primal.shape)}")
    if t.dtype != primal.dtype:
        raise TypeError(f"tangent {i} is {t.dtype} but its primal is {primal.dtype}; "
                        "tangents must have their primal's dtype")
    return t


# -- Jacobians -----------------------------------------------------------------------------
def _basis(leaves, index: int, position: int):
    """The one-hot tangent: 1 at flat `position` of leaf `index`, zeros elsewhere."""
    out = []
    for i, leaf in enumerate(leaves):
        value = np.zeros(tuple(leaf.shape), np.dtype(leaf.dtype))
        if i == index:
            value.reshape(-1)[position] = 1
        out.append(ConcreteArray(value))
    return out


def _assemble(columns, out_shape, in_shape, dtype):
    """Stack per-basis results (each shaped like the output) into out_shape + in_shape."""
    size = int(np.prod(in_shape, dtype=np.int64))
    if size == 0:
        return xnp.zeros((*out_shape, *in_shape), dtype)
    stacked = xnp.stack(columns, axis=-1)
    return xnp.reshape(stacked, (*out_shape, *in_shape))


def jacfwd(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable:
    """The Jacobian by forward mode, one JVP per input element: for an output
    of shape O and an input of shape I, an array of shape O + I."""

    @_wraps(fun)
    def jacfun(*args):
        nums = _argnums(argnums, len(args), "jacfwd")
        diff = tuple(args[i] for i in nums)
        flat, in_tree = tree_flatten(diff)
        flat = [as_array(a) for a in flat]
        _check_inputs(flat, False)
        recording = record(_partial(fun, args, nums), flat, in_tree, "jacfwd")
        num_main, main_tree, aux_tree = _split_aux(recording, has_aux)
        outputs = None
        columns = [[[] for _ in flat] for _ in range(num_main)]
        for j, leaf in enumerate(flat):
            for position in range(int(np.prod(leaf.shape, dtype=np.int64))):
                tangents = _basis(flat, j, position) + [None] * len(recording.captures)
                outputs, out_t = jvp_computation(recording.computation, recording.operands,
                                                 tangents, recording.values)
                for k in range(num_main):
                    t = out_t[k]
                    columns[k][j].append(zeros_like(outputs[k]) if t is None else t)
        if outputs is None:
            outputs = jvp_computation(recording.computation, recording.operands,
                                      [None] * len(recording.operands), recording.values)[0]
        jac = _jacobian_tree(columns, outputs[:num_main], flat, main_tree, in_tree, nums,
                             argnums)
        if has_aux:
            return jac, tree_unflatten(aux_tree, list(outputs[num_main:]))
        return jac

    return jacfun


def _jacobian_tree(columns, outputs, flat, out_tree, in_tree, nums, argnums):
    rows = []
    for k, out in enumerate(outputs):
        blocks = [_assemble(columns[k][j], tuple(out.shape), tuple(leaf.shape), out.dtype)
                  for j, leaf in enumerate(flat)]
        tree = tree_unflatten(in_tree, blocks)
        rows.append(tree[0] if isinstance(argnums, int) else tree)
    return tree_unflatten(out_tree, rows)


def jacrev(fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable:
    """The Jacobian by reverse mode, one pullback per output element (the
    forward pass is replayed once): shape O + I, as jacfwd."""

    @_wraps(fun)
    def jacfun(*args):
        nums = _argnums(argnums, len(args), "jacrev")
        diff = tuple(args[i] for i in nums)
        flat, in_tree = tree_flatten(diff)
        flat = [as_array(a) for a in flat]
        _check_inputs(flat, False)
        recording = record(_partial(fun, args, nums), flat, in_tree, "jacrev")
        num_main, main_tree, aux_tree = _split_aux(recording, has_aux)
        active = [True] * len(flat) + [False] * len(recording.captures)
        outputs, pullback = vjp_computation(recording.computation, recording.operands,
                                            active, recording.values)
        outputs = list(outputs)
        rows = [[[] for _ in range(num_main)] for _ in flat]  # rows[j][k]: per output element
        for k in range(num_main):
            out = outputs[k]
            for position in range(int(np.prod(out.shape, dtype=np.int64))):
                seed = [None] * len(outputs)
                seed[k] = _basis(outputs, k, position)[k]
                grads = pullback(seed)
                for j, leaf in enumerate(flat):
                    rows[j][k].append(zeros_like(leaf) if grads[j] is None else grads[j])
        jac = []
        for k in range(num_main):
            blocks = [_stack_rows(rows[j][k], tuple(outputs[k].shape), tuple(leaf.shape),
                                  leaf.dtype) for j, leaf in enumerate(flat)]
            tree = tree_unflatten(in_tree, blocks)
            jac.append(tree[0] if isinstance(argnums, int) else tree)
        jac = tree_unflatten(main_tree, jac)
        if has_aux:
            return jac, tree_unflatten(aux_tree, outputs[num_main:])
        return jac

    return jacfun


def _stack_rows(rows, out_shape, in_shape, dtype):
    if not rows:
        return xnp.zeros((*out_shape, *in_shape), dtype)
    return xnp.reshape(xnp.stack(rows, axis=0), (*out_shape, *in_shape))


def hessian(fun: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """The Hessian, as jacfwd(jacrev(fun))."""
    return jacfwd(jacrev(fun, argnums), argnums)
