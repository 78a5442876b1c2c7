"""Lazy mode's recording of one `xnp` call, learned once and replayed.

An eager loop calls the same `xnp` functions with the same shapes every
iteration; each call spends 5-30 µs of Python (promotion, broadcasting,
shape checks) to record the same few nodes again. `replayed(fn)` learns what
a call records, per signature (the function, each array argument's shape,
dtype and weak type, every other argument's value): the first call runs on
stand-ins of its array arguments (so nothing it records can depend on their
values: reading one runs a cluster, and then nothing is learned), and the
nodes it made become a recipe (several nodes become one `call`: lazy_call).
That call and later ones of the signature add the recipe's nodes directly, so
every call of a signature records the same nodes, and a wrong recipe shows
at its first use. A call whose result is not made of its own pending
nodes (a concrete value, a shape, an index found by reading data) is never
replayed; neither is one inside a trace.
"""

from __future__ import annotations

import functools
import weakref
from collections import OrderedDict
from types import FunctionType

import numpy as np

from xlapy import config
from xlapy.core import lazy, lazy_plan_code, lazy_state, lazy_steps
from xlapy.core.array import ConcreteArray
from xlapy.core.lazy import LazyArray
from xlapy.core.lazy_call import as_call
from xlapy.core.lazy_graph import Node, is_ref, refs
from xlapy.core.lazy_tape import SCALARS as _SCALARS
from xlapy.core.lazy_tape import noted_arguments, signed_zero
from xlapy.core.trace import as_array, current_trace, with_weak_type

_SIZE = 4096
_CACHE: OrderedDict[tuple, _Recipe | None] = OrderedDict()
_MISSING = object()


class _State:
    learning = 0   # a call is being learned: the xnp calls inside it just run


_STATE = _State()


class _Recipe:
    """The nodes one call made: (instruction, operand specs, weak type) each,
    operands ("a", i) for array argument i, ("n", j, index) for node j, ("c",
    value) for a scalar constant, ("t", specs) for a tuple; and the result
    leaves, ("a", i, weak) or ("n", j, index, weak), alone or in a container
    (what makes it from the list of leaves: tuple, list, a named tuple's _make)."""

    __slots__ = ("steps", "results", "container", "direct", "single", "spread")

    def __init__(self, steps, results, container):
        self.steps = steps
        self.results = results
        self.container = container
        self.direct = False   # NumPy arguments are operands as they are
        self.single = False   # one step, whose one result is the call's, as made
        self.spread = False   # one step, its results the container's, in order, as made


def replayed(fn, scalar_operands: tuple = (), unless=None, home: str | None = None):
    """`fn`, whose calls in lazy mode are learned once per signature and replayed
    (a call for which `unless(args)` is true just runs; `unless` may read only
    what a tape's plan checks pin, the arguments' types and scalars and static
    indices, since a call its step's tape has a plan for skips it). `home` is the module
    users reach it from (`xlapy.numpy`): the wrapper is named as living there,
    so pickle finds it by name (as `fn`'s own module it is another object).

    With `scalar_operands` (Python types, of float and int), `fn(x, y)` is
    binary arithmetic, and a scalar of those types beside an xlapy array of a
    floating dtype becomes a weak 0-d array of that dtype first. It converts
    exactly as promotion would (a weak scalar takes the array's dtype,
    directly), and is then an operand like any array: a learning rate or a
    step number that changes every step is a new leaf value, not a new
    signature (it was: each step learned its calls again and never matched its
    tape, an MLP step with a decaying learning rate ran 3.6 times slower)."""
    kinds = scalar_operands

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        state = _LAZY
        run = state.tape
        taped = run is not None and not state.traces   # (no tape while learning or off)
        if kinds and len(args) == 2 and (type(args[0]) in kinds) is not (
                type(args[1]) in kinds) and (taped or lazy_state.active()):
            x, y = args   # (a step on its tape is lazy and traces nothing: not asked again)
            args = ((_scalar_operand(x, y, taped), y) if type(x) in kinds
                    else (x, _scalar_operand(y, x, taped)))
        if taped:
            made = _taped(run, fn, args, kwargs)
            if made is not None:
                return made
        if unless is not None and unless(args):
            return fn(*args, **kwargs)
        if _STATE.learning or not lazy.active() or current_trace() is not None:
            return fn(*args, **kwargs)
        arrays: list = []
        try:
            key = (fn, _ENVIRON_GET(_KEY), _X64.value, _specs(args, arrays),
                   (tuple(kwargs), _specs(tuple(kwargs.values()), arrays))
                   if kwargs else None)
            recipe = _CACHE.get(key, _MISSING)
        except _Unknown:
            return fn(*args, **kwargs)
        if recipe is _MISSING:
            return _learn(fn, key, args, kwargs, arrays)
        if recipe is None:
            return fn(*args, **kwargs)
        out = _replay(recipe, arrays)
        if (recipe.single or recipe.spread) and state.steplog is not None:
            state.stepcalls[(out if recipe.single else out[0])._node.order] = (
                fn, noted_arguments((*args, *kwargs.values()), recipe), recipe, key[1], key[2],
                tuple(kwargs))
        return out

    wrapper.__wrapped_for_lazy__ = fn
    if home is not None:
        wrapper.__module__, wrapper.__qualname__ = home, fn.__name__
    return wrapper


def replay_in(namespace: dict, names, home: str) -> None:
    """The functions `namespace` holds under `names` wrapped with `replayed`, in
    place: each function once, every name of it bound to that one wrapper (an
    alias, nn.swish of silu, stays the same object, which pickle finds under
    the function's own name in `home`); other values (classes, enums) stay."""
    wrapped: dict[int, object] = {}
    for name in names:
        value = namespace.get(name)
        if isinstance(value, FunctionType):
            if id(value) not in wrapped:
                wrapped[id(value)] = replayed(value, home=home)
            namespace[name] = wrapped[id(value)]


_LAZY = lazy_state.STATE
_ENVIRON_GET = lazy_state.ENVIRON.get
_KEY = lazy_state.KEY
_X64 = config.enable_x64
_ORDER = lazy_state.ORDER
"""(What every call reads, bound once: the hot path's lookups.)"""


def _scalar_operand(scalar, array, untraced: bool = False):
    """`scalar` as a weak 0-d array of `array`'s floating dtype (the same object for
    the same value, so a literal constant stays one leaf), or as it is (in a
    trace: `untraced` says none is open)."""
    if type(array) is not LazyArray and type(array) is not ConcreteArray:
        return scalar
    dtype = array.dtype
    if dtype.kind != "f" or not untraced and current_trace() is not None:
        return scalar
    key = (dtype, scalar if scalar else repr(scalar))   # (0.0 and -0.0 are equal keys)
    made = _SCALAR_OPERANDS.get(key)
    if made is None:
        try:
            made = with_weak_type(as_array(scalar, dtype), True)
        except (TypeError, OverflowError):   # (an int NumPy cannot hold: the call says so)
            return scalar
        if len(_SCALAR_OPERANDS) >= _SIZE:
            _SCALAR_OPERANDS.clear()
        _SCALAR_OPERANDS[key] = made
    return made


_SCALAR_OPERANDS: dict[tuple, ConcreteArray] = {}


class _Unknown(Exception):
    """An argument the signature cannot spell: the call just runs."""


def _specs(values, arrays: list) -> tuple:
    """The hashable signature of each argument: (shape, dtype, weak type) of an
    xlapy array, ("N", shape, dtype) of a NumPy one, (type, value) of a scalar,
    (type, parts) of a tuple, named tuple or list; arrays are appended to `arrays`. (Every
    replayed call spells its arguments: the common cases come first.)"""
    spelled = []
    for value in values:
        kind = type(value)
        if kind is LazyArray:
            arrays.append(value)
            spelled.append((value._shape, value._dtype, value.weak_type))
        elif kind is ConcreteArray:
            arrays.append(value)
            array = value.value
            spelled.append((array.shape, array.dtype, value.weak_type))
        elif kind is np.ndarray:
            arrays.append(value)
            spelled.append(("N", value.shape, value.dtype))
        elif kind is tuple or kind is list or isinstance(value, tuple) and hasattr(kind, "_make"):
            spelled.append((kind, _specs(value, arrays)))   # (named tuples: dimension numbers)
        elif isinstance(value, _SCALARS):
            spelled.append((kind, repr(value)) if signed_zero(value) else (kind, value))
        elif kind is slice and all(type(v) is int or v is None
                                   for v in (value.start, value.stop, value.step)):
            spelled.append((kind, value.start, value.stop, value.step))   # (x[:, :16])
        elif value is Ellipsis:
            spelled.append((kind,))
        else:
            raise _Unknown
    return tuple(spelled)


def _rebuild(value, stand_ins):
    """The arguments with each array replaced by its stand-in, in `_spec`'s order."""
    kind = type(value)
    if kind is lazy.LazyArray or kind is ConcreteArray or kind is np.ndarray:
        return next(stand_ins)
    if kind is tuple or kind is list:
        return kind(_rebuild(v, stand_ins) for v in value)
    if isinstance(value, tuple):   # (a named tuple: `_specs` spelled only those)
        return kind._make(_rebuild(v, stand_ins) for v in value)
    return value


def _learn(fn, key, args, kwargs, arrays):
    with lazy_steps.untaped():
        return _learned(fn, key, args, kwargs, arrays)


def _learned(fn, key, args, kwargs, arrays):
    converted = [as_array(a) for a in arrays]
    stand_ins = [lazy.stand_in(a) for a in converted]
    copies = [s._node for s in stand_ins]
    clusters = lazy.STATS.clusters
    recipe = None
    lazy.STATE.cuts_held += 1
    _STATE.learning += 1
    try:
        with lazy.logged() as log:
            try:
                it = iter(stand_ins)
                out = fn(*_rebuild(args, it),
                         **{k: _rebuild(v, it) for k, v in kwargs.items()})
                if lazy.STATS.clusters == clusters and all(c is not None for c in copies):
                    recipe = _recipe(out, log, {c.order: i for i, c in enumerate(copies)})
                if recipe is not None:
                    recipe.steps, recipe.results = as_call(
                        recipe.steps, recipe.results, [(a.shape, a.dtype) for a in converted],
                        getattr(fn, "__name__", "xnp"))
            finally:
                lazy.unmark(copies, log if recipe is None else [])
                if recipe is not None:   # the replay stands for what learning recorded:
                    for node in log:     # every call of a signature records the same nodes
                        lazy.PENDING.pop(node.order, None)
                    log.clear()
    finally:
        _STATE.learning -= 1
        lazy.STATE.cuts_held -= 1
    if recipe is not None:   # NumPy arguments go in as they are (no conversion)
        recipe.direct = all(c.value is a for c, a in zip(converted, arrays)
                            if type(a) is np.ndarray)
        results = recipe.results
        one = recipe.steps[0] if len(recipe.steps) == 1 else None
        recipe.single = (one is not None and recipe.container is None
                         and results[0][0] == "n" and results[0][3] == one[2])
        recipe.spread = (one is not None and recipe.container is not None   # (split's)
                         and one[0].shape.is_tuple and results == [
                             ("n", 0, k, one[2]) for k in range(len(one[0].shape.tuple_shapes))])
    _CACHE[key] = recipe
    if len(_CACHE) > _SIZE:
        _CACHE.popitem(last=False)
    if recipe is None:
        return out
    return _replay(recipe, arrays)


def _recipe(out, log: list, marks: dict) -> _Recipe | None:
    """The recipe of a learned call, or None where it cannot be replayed."""
    if isinstance(out, (tuple, list)):   # (a named tuple, such as slogdet's, by its _make)
        kind = type(out)
        container = kind if kind is tuple or kind is list else getattr(kind, "_make", None)
        if container is None:
            return None
        leaves = list(out)
    else:
        container, leaves = None, [out]
    made = [n for n in log if n.order not in marks]
    position = {n.order: j for j, n in enumerate(made)}
    results = []
    for leaf in leaves:
        if type(leaf) is not lazy.LazyArray or leaf._value is not None or leaf._node is None:
            return None
        order = leaf._node.order
        if order in marks:
            results.append(("a", marks[order], leaf.weak_type))
        elif order in position:
            results.append(("n", position[order], leaf._index, leaf.weak_type))
        else:
            return None
    needed = _needed(made, results, position)
    keep = {j: k for k, j in enumerate(sorted(needed))}

    def spell(operand):
        if is_ref(operand):
            node, index = operand
            if node.order in marks:
                return ("a", marks[node.order])
            j = position.get(node.order)
            if j is None or j not in keep:
                raise _Unknown
            return ("n", keep[j], index)
        if isinstance(operand, tuple):
            return ("t", tuple(spell(o) for o in operand))
        if isinstance(operand, np.ndarray) and operand.ndim == 0:
            return ("c", operand)
        raise _Unknown   # a value from elsewhere: it may differ next time

    try:
        steps = [(made[j].instruction, [spell(o) for o in made[j].operands], made[j].weak_type)
                 for j in sorted(needed)]
    except _Unknown:
        return None
    results = [r if r[0] == "a" else ("n", keep[r[1]], r[2], r[3]) for r in results]
    return _Recipe(steps, results, container)


def _needed(made, results, position) -> set[int]:
    """The nodes the results depend on (what the call made and dropped is not replayed)."""
    needed: set[int] = set()
    stack = [r[1] for r in results if r[0] == "n"]
    while stack:
        j = stack.pop()
        if j in needed:
            continue
        needed.add(j)
        stack.extend(position[ref[0].order] for ref in refs(made[j].operands)
                     if ref[0].order in position)
    return needed


def _taped(run, fn, args, kwargs):
    """The call's result as its tape has it (see lazy_tape.CallPlan): made
    without spelling a signature or looking up a recipe, where this call is
    the tape's next and its arguments come from where they came from then;
    else None."""
    nodes = run.nodes
    k = len(nodes)
    plan = run.tape.calls[k]
    if plan is None or plan.fn is not fn:
        return None
    if kwargs or plan.keywords:
        if tuple(kwargs) != plan.keywords:
            return None
        args = (*args, *kwargs.values())
    if _ENVIRON_GET(_KEY) is not plan.env or _X64.value is not plan.x64:
        return None
    fast = plan.fast
    if type(fast) is int:   # (calls so far: compiled once the plan has proved itself)
        fast = plan.fast = (fast + 1 if fast < lazy_plan_code.USES_BEFORE_COMPILING
                            else lazy_plan_code.compiled(plan))
    if fast is not None and type(fast) is not int:
        return fast(args, run)
    given = run.arguments(args, plan.checks)
    if given is None:
        return None
    if plan.plain:
        operands = given
    elif plan.pick is not None:
        operands = list(plan.pick(given + plan.constants))
    else:
        operands = [_operand(s, given, ()) for s in plan.specs]
    result = plan.result
    if result is not None:   # (the commonest node, made here as lazy._new_node makes it:
        weak = plan.weak     # every call of a taped step pays for this path)
        node = Node(plan.instruction, operands, weak, next(_ORDER))
        made = LazyArray(node, None, result[0], result[1], weak)
        node.outputs.append(weakref.ref(made))
    else:
        node, made = lazy._new_node(plan.instruction, operands, plan.weak)
    run.position[node.order] = k   # (TapeRun.add)
    nodes.append(node)
    log = _LAZY.log
    if log is not None:
        log.append(node)
    if plan.container is not None:
        return plan.container(list(made))
    return made if plan.index is None else made[plan.index]


def _operand(spec, given: list, nodes: list):
    # (a module function: a recursive closure would be a reference cycle holding values)
    kind = spec[0]
    if kind == "a":
        return given[spec[1]]
    if kind == "n":
        return (nodes[spec[1]], spec[2])
    if kind == "c":
        return spec[1]
    return tuple(_operand(s, given, nodes) for s in spec[1])


def _replay(recipe: _Recipe, arrays: list):
    args = arrays if recipe.direct else [as_array(a) if type(a) is np.ndarray else a
                                         for a in arrays]
    given = [(a._node, a._index) if type(a) is LazyArray and a._value is None else
             a if type(a) is np.ndarray else a.value for a in args]
    if recipe.single:   # one node (an op, or the call of several), its one result as made
        instruction, specs, weak = recipe.steps[0]
        made = lazy.add_node(instruction, [given[s[1]] if s[0] == "a" else s[1] if s[0] == "c"
                                           else _operand(s, given, ()) for s in specs], weak)[1]
        index = recipe.results[0][2]
        return made if index is None else made[index]
    if recipe.spread:   # one node of several results, the call's in their order
        instruction, specs, weak = recipe.steps[0]
        return recipe.container(list(lazy.add_node(
            instruction, [_operand(s, given, ()) for s in specs], weak)[1]))
    nodes: list = []
    handles: list = []
    for instruction, specs, weak in recipe.steps:
        node, arrays_made = lazy.add_node(instruction, [_operand(s, given, nodes)
                                                        for s in specs], weak)
        nodes.append(node)
        handles.append(arrays_made)
    leaves = []
    for result in recipe.results:
        if result[0] == "a":
            leaves.append(with_weak_type(as_array(args[result[1]]), result[2]))
            continue
        _, j, index, weak = result
        made = handles[j] if index is None else handles[j][index]
        leaves.append(made if made.weak_type == weak else with_weak_type(made, weak))
    if recipe.container is None:
        return leaves[0]
    return recipe.container(leaves)
