"""`xlapy.jit`: trace a Python function to HLO once per argument signature,
compile it, and call the compiled executable from then on.

Must-compile semantics, as `tf.function(jit_compile=True)` promises: the
whole function becomes one module or `CompileError` says which operation
cannot, why, and where in the user's code.

A compiled executable is cached per cache key (`JitFunction._cache`), whose
components are: the dynamic arguments' pytree structure; each array leaf's
shape, dtype (NumPy data canonicalized as it enters: 64-bit becomes 32-bit
without x64) and weak type; the static arguments' values; and the x64 mode
(`xlapy.config.enable_x64`), since it decides the dtypes the function makes.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from xlapy import config
from xlapy.analysis import cost_analysis, memory_analysis
from xlapy.backends import Executable, get_backend
from xlapy.core import compile_hook
from xlapy.core.array import Array, ConcreteArray
from xlapy.core.dtypes import canonicalize, dtype_and_weak, float0, without_x64
from xlapy.core.errors import where
from xlapy.core.pytree import TreeDef, tree_flatten, tree_unflatten
from xlapy.core.subtrace import ShapedArray
from xlapy.core.trace import Trace, Tracer, as_array
from xlapy.errors import CompileError
from xlapy.flags import debug_options, register_flag
from xlapy.hlo.attributes import InputOutputAlias
from xlapy.hlo.builder import ModuleBuilder
from xlapy.hlo.ir import HloModule

log = logging.getLogger("xlapy.jit")
_PACKAGE = os.path.dirname(os.path.abspath(__file__))

register_flag("xlapy_explain_cache_misses", "bool", False,
              "warn at every jit cache miss with its reason (JAX's jax_explain_cache_misses)")

RECOMPILE_WARNING_AT = 5
"""A jitted function warns once, listing its cache misses, when it compiles this often."""


class RecompileWarning(UserWarning):
    """A jitted function compiled again for a new argument signature."""


def _stack_level() -> int:
    """The stack level of the first frame outside xlapy (the user's call)."""
    frame, level = inspect.currentframe().f_back, 1   # (level 1: who calls warnings.warn)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


@dataclass(frozen=True)
class Signature:
    """What a compiled executable is specialised on: the dynamic arguments'
    pytree structure and abstract values, the static arguments' values, and
    the x64 mode."""

    tree: TreeDef
    avals: tuple[ShapedArray, ...]
    static: tuple
    x64: bool = False

    def differences(self, other: Signature, names: Sequence[str],
                    static_names: Sequence[str] = ()) -> list[str]:
        """Each way `self` (a new call) differs from `other` (a compiled signature),
        as XLA and JAX explain a cache miss: the argument, then old -> new."""
        found = []
        if self.x64 != other.x64:
            found.append(f"x64 mode (xlapy.config.enable_x64) changed: {other.x64} -> "
                         f"{self.x64}")
        if self.tree != other.tree:
            found.append(f"argument structure changed: {other.tree} -> {self.tree}")
        else:
            for i, (a, b) in enumerate(zip(self.avals, other.avals)):
                if a != b:
                    found.append(f"{names[i] if i < len(names) else f'leaf {i}'}: {b} -> {a}")
        if self.static != other.static:
            if len(self.static) != len(other.static):
                found.append(f"static arguments changed: {other.static} -> {self.static}")
            for i, (a, b) in enumerate(zip(self.static, other.static)):
                if a != b:
                    if i < len(static_names):     # positional, in order
                        name = static_names[i]
                    else:                         # by keyword: (name, value)
                        name, a, b = a[0], a[1], b[1]
                    found.append(f"static argument {name}: {b!r} -> {a!r}")
        return found

    def explain_difference(self, other: Signature, names: Sequence[str],
                           static_names: Sequence[str] = ()) -> str:
        """Why `self` (a new call) missed a cache entry compiled for `other`."""
        return "; ".join(self.differences(other, names, static_names)) or "no difference"


@dataclass
class _Entry:
    executable: Executable
    out_tree: TreeDef
    out_weak: tuple  # per output leaf: its weak-type flag, or a _Float0
    donated: tuple[int, ...]
    plain: bool = True  # no float0 leaves: results map one to one onto outputs

    def __post_init__(self):
        # the function returns one array (not a container): no unflattening per call
        self.leaf_output = self.out_tree.node_type is None and len(self.out_weak) == 1


class JitFunction:
    """A jitted function: call it like the original; `.lower(*args)` stages it."""

    def __init__(self, fn: Callable, static_argnums=(), static_argnames=(),
                 donate_argnums=(), backend: str | None = None, warn_recompiles: bool = True):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.warn_recompiles = warn_recompiles
        """False for xlapy's own compiled functions (a sampler compiles once per shape
        asked for, as it should): their recompiles are logged, never warned."""
        self.static_argnums = _as_tuple(static_argnums)
        self.static_argnames = _as_tuple(static_argnames)
        self.donate_argnums = _as_tuple(donate_argnums)
        self.backend = backend
        self._cache: dict[tuple, _Entry] = {}  # (tree, leaf keys, static, x64) -> entry
        self._fast: dict[tuple, _Entry] = {}   # (x64, leaf keys) -> entry, positional arrays
        self._signatures: list[Signature] = []  # in compile order, to explain misses
        self.compile_count = 0
        self.cache_misses: list[str] = []
        """One line per compilation after the first: which argument changed."""
        self._warned = False
        try:
            self._parameters = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            self._parameters = []
        self.__name__ = getattr(fn, "__name__", "fn")

    # -- the per-call path ----------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if not kwargs and not self.static_argnums:   # the hot path: positional arrays
            try:
                entry = self._fast.get((config.enable_x64.value, tuple([
                    (x.shape, x.dtype, False) if type(x) is np.ndarray else
                    (x._value.shape, x._value.dtype, x.weak_type) if type(x) is ConcreteArray
                    else _not_an_array() for x in args])))
            except (_NotAnArray, AttributeError):   # a scalar, a deleted array: general path
                entry = None
            if entry is not None:
                results = entry.executable.run(
                    [x.value if type(x) is ConcreteArray else x for x in args])
                if entry.leaf_output:
                    return ConcreteArray(results[0], entry.out_weak[0])
                return tree_unflatten(entry.out_tree, [
                    ConcreteArray(r, w) for r, w in zip(results, entry.out_weak)])
        return self._call(args, kwargs)

    def _call(self, args, kwargs):
        if kwargs or self.static_argnums:
            dynamic, static = self._split(args, kwargs)
            leaves, tree = tree_flatten(dynamic)
        elif all(type(a) in _FAST_LEAVES for a in args):   # positional arrays: no walk
            leaves, static = args, ()
            tree = _flat_tree(len(args))
        else:   # positional pytrees: `_split` would give (args, {}) and no statics
            leaves, tree = tree_flatten((args, {}))
            static = ()
        x64 = config.enable_x64.value
        leaf_keys, values = _keys_and_values(leaves, x64)
        if leaf_keys is None:  # called inside another trace: inline
            return self.fn(*args, **kwargs)
        key = (tree, leaf_keys, static, x64)
        entry = self._cache.get(key)
        if entry is None:
            signature = Signature(tree, tuple(_aval(x) for x in leaves), static, x64)
            entry = self._compile(signature, key, args, kwargs)
            if not kwargs and not self.static_argnums and tree is _flat_tree(len(args)) \
                    and entry.plain and not entry.donated:
                self._fast[(x64, key[1])] = entry
        results = entry.executable.run(values)
        for i in entry.donated:
            if isinstance(leaves[i], ConcreteArray):
                leaves[i].delete()
        if entry.plain:
            outs = [ConcreteArray(r, w) for r, w in zip(results, entry.out_weak)]
        else:
            outs = _outputs(results, entry.out_weak)
        return tree_unflatten(entry.out_tree, outs)

    def signature_key(self, args, kwargs) -> tuple | None:
        """What decides whether two calls share a compile: the dynamic arguments'
        structure and (shape, dtype, weak type) each, the static values, the x64
        mode; None inside a trace. (`random._eager` compiles a signature at its
        second call.)"""
        dynamic, static = self._split(args, kwargs)
        leaves, tree = tree_flatten(dynamic)
        x64 = config.enable_x64.value
        keys, _ = _keys_and_values(leaves, x64)
        return None if keys is None else (tree, keys, static, x64)

    def _split(self, args, kwargs):
        """(dynamic pytree, static values) of a call."""
        static_nums = {i if i >= 0 else i + len(args) for i in self.static_argnums}
        dynamic_args, static = [], []
        for i, a in enumerate(args):
            (static if i in static_nums else dynamic_args).append(a)
        dynamic_kwargs = {}
        for k in sorted(kwargs):
            if k in self.static_argnames or self._static_position(k) in static_nums:
                static.append((k, kwargs[k]))
            else:
                dynamic_kwargs[k] = kwargs[k]
        try:
            hash(tuple(static))
        except TypeError as e:
            raise TypeError(f"static arguments of {self.__name__} must be hashable: {e}") from None
        return (tuple(dynamic_args), dynamic_kwargs), tuple(static)

    def _static_position(self, name: str) -> int | None:
        return self._parameters.index(name) if name in self._parameters else None

    # -- staging --------------------------------------------------------------------------
    def lower(self, *args, **kwargs) -> Lowered:
        """Trace for these arguments' signature: the module before optimisation."""
        module, out_tree, out_weak, donated = self._trace(args, kwargs)
        return Lowered(module, self.backend, out_tree, out_weak)

    def _compile(self, signature: Signature, key: tuple, args, kwargs) -> _Entry:
        if self._signatures:
            self._explain_miss(signature)
        module, out_tree, out_weak, donated = self._trace(args, kwargs)
        executable = get_backend(self.backend).compile(module, optimize=True)
        self.compile_count += 1
        plain = not any(isinstance(w, _Float0) for w in out_weak)
        entry = _Entry(executable, out_tree, out_weak, donated, plain)
        self._cache[key] = entry
        self._signatures.append(signature)
        return entry

    def _explain_miss(self, signature: Signature) -> None:
        """Record why this call compiles again, against the closest signature
        compiled before; warn at every miss with --xlapy_explain_cache_misses
        (JAX's jax_explain_cache_misses), and once at the fifth compile."""
        names, static_names = self._leaf_names(signature), self._static_names()
        closest = min(self._signatures, key=lambda seen: (
            len(signature.differences(seen, names, static_names)),
            -self._signatures.index(seen)))
        reason = signature.explain_difference(closest, names, static_names)
        self.cache_misses.append(reason)
        log.info("recompiling %s: %s", self.__name__, reason)
        if not self.warn_recompiles:
            return
        compiles = self.compile_count + 1
        location = where()
        at = f" at {location}" if location else ""
        if debug_options().xlapy_explain_cache_misses:
            warnings.warn(f"xlapy.jit: {self.__name__}{self._defined_at()} compiles again "
                          f"(compile {compiles}){at} because {reason}", RecompileWarning,
                          stacklevel=_stack_level())
        elif compiles == RECOMPILE_WARNING_AT and not self._warned:
            self._warned = True
            misses = "\n".join(f"  {i + 2}. {m}" for i, m in enumerate(self.cache_misses))
            warnings.warn(
                f"xlapy.jit: {self.__name__}{self._defined_at()} has compiled "
                f"{compiles} times{at}; each call with a new signature compiles again:\n"
                f"{misses}\nArguments whose shape changes could be padded to a few sizes; "
                "a static argument should take few values; --xlapy_explain_cache_misses "
                "warns at every miss.", RecompileWarning, stacklevel=_stack_level())

    def _defined_at(self) -> str:
        code = getattr(inspect.unwrap(self.fn), "__code__", None)
        if code is None:
            return ""
        return f" (defined at {code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno})"

    def _static_names(self) -> list[str]:
        return [self._parameters[i] if 0 <= i < len(self._parameters) else str(i)
                for i in sorted(self.static_argnums)]

    def _leaf_names(self, signature: Signature) -> list[str]:
        return [f"argument {name}" for name in self._leaf_names_of(signature.tree)]

    def _leaf_names_of(self, tree: TreeDef) -> list[str]:
        """A readable name per dynamic leaf: `x`, `params[1]`, or the leaf number."""
        positional, keywords = tree.children
        static = {i for i in self.static_argnums if i >= 0}
        dynamic_params = [p for i, p in enumerate(self._parameters) if i not in static]
        names = []
        for k, child in enumerate(positional.children):
            base = dynamic_params[k] if k < len(dynamic_params) else f"{k}"
            names += [base] if child.num_leaves == 1 else \
                [f"{base}[{j}]" for j in range(child.num_leaves)]
        for key, child in zip(keywords.aux or (), keywords.children):
            names += [key] if child.num_leaves == 1 else \
                [f"{key}[{j}]" for j in range(child.num_leaves)]
        return names

    def _trace(self, args, kwargs):
        dynamic, _ = self._split(args, kwargs)
        leaves, tree = tree_flatten(dynamic)
        module_builder = ModuleBuilder("jit_" + re.sub(r"[^A-Za-z0-9_.-]", "_", self.__name__))
        builder = module_builder.computation("main")
        trace = Trace(builder, f"jit({self.__name__})")
        with trace:
            tracers = []
            names = self._leaf_names_of(tree)
            for i, leaf in enumerate(leaves):
                aval = _aval(leaf)
                tracers.append(trace.parameter(aval.hlo_shape, aval.weak_type, name=f"Arg_{i}",
                                               origin=f"argument {names[i]} of {self.__name__}"))
            dyn_args, dyn_kwargs = tree_unflatten(tree, tracers)
            call_args, call_kwargs = self._merge(args, kwargs, dyn_args, dyn_kwargs)
            out = self.traced_call(call_args, call_kwargs)
            out_leaves, out_tree = tree_flatten(out)
            float0_shapes = {i: x.shape for i, x in enumerate(out_leaves) if _is_float0(x)}
            try:
                outs = [trace.lift(as_array(x)) for i, x in enumerate(out_leaves)
                        if i not in float0_shapes]
            except TypeError as e:
                raise CompileError(f"{self.__name__} returned a value that is not an array: "
                                   f"{e}") from None
            if out_tree.node_type is None and len(outs) == 1:
                root = outs[0].instruction
            else:
                builder.set_op_metadata(trace.metadata("tuple"))
                root = builder.tuple([o.instruction for o in outs])
                builder.set_op_metadata(None)
        module = module_builder.build(builder.build(root))
        module.attributes.update(self.module_attributes())
        donated = self._donate(module, leaves, tree, outs)
        weak = iter(o.weak_type for o in outs)
        specs = tuple(_Float0(float0_shapes[i]) if i in float0_shapes else next(weak)
                      for i in range(len(out_leaves)))
        return module, out_tree, specs, donated

    def traced_call(self, args, kwargs):
        """Call the function on tracers (subclasses bind axis names around it)."""
        return self.fn(*args, **kwargs)

    def module_attributes(self) -> dict:
        """Module attributes of the traced module (pmap sets replica_count)."""
        return {}

    def _merge(self, args, kwargs, dyn_args, dyn_kwargs):
        static_nums = {i if i >= 0 else i + len(args) for i in self.static_argnums}
        it = iter(dyn_args)
        call_args = [a if i in static_nums else next(it) for i, a in enumerate(args)]
        call_kwargs = {k: dyn_kwargs.get(k, v) for k, v in kwargs.items()}
        return call_args, call_kwargs

    def _donate(self, module: HloModule, leaves, tree: TreeDef, outs) -> tuple[int, ...]:
        """Alias each donated argument leaf to an output of the same shape and dtype."""
        if not self.donate_argnums:
            return ()
        positional = tree.children[0].children if tree.children else ()
        donated_leaves, start = [], 0
        for i, child in enumerate(positional):
            if i in self.donate_argnums:
                donated_leaves += range(start, start + child.num_leaves)
            start += child.num_leaves
        out_shapes = [o.hlo_shape for o in outs]
        taken: set[int] = set()
        aliases, honoured = [], []
        for leaf in donated_leaves:
            shape = _aval(leaves[leaf]).hlo_shape
            match = next((j for j, s in enumerate(out_shapes)
                          if j not in taken and s.compatible(shape)), None)
            if match is None:
                warnings.warn(f"{self.__name__}: donated argument leaf {leaf} "
                              f"({shape.to_text(False)}) was not used: no output has that shape "
                              "and dtype", stacklevel=4)
                continue
            taken.add(match)
            honoured.append(leaf)
            index = (match,) if len(outs) > 1 or tree_is_tuple(module) else ()
            aliases.append(InputOutputAlias(index, leaf, (), "may-alias"))
        if aliases:
            module.attributes["input_output_alias"] = tuple(aliases)
        return tuple(honoured)


@dataclass(frozen=True)
class _Float0:
    """An output leaf of dtype float0 (an integer input's gradient): it has no
    bytes, so it is not part of the module and is made on the way out."""

    shape: tuple[int, ...]


def _is_float0(x) -> bool:
    return isinstance(x, np.ndarray) and x.dtype == float0


def _outputs(results, specs) -> list:
    """Result arrays for the output leaves: `specs` holds each leaf's weak-type
    flag, or a _Float0 for leaves made here."""
    results = iter(results)
    return [np.zeros(spec.shape, float0) if isinstance(spec, _Float0)
            else ConcreteArray(next(results), spec) for spec in specs]


def tree_is_tuple(module: HloModule) -> bool:
    return module.entry_computation.root_instruction.shape.is_tuple


class Lowered:
    """A traced module, before optimisation: `as_text()`, `compile()`."""

    def __init__(self, module: HloModule, backend: str | None, out_tree, out_weak):
        self.module = module
        self.backend = backend
        self._out_tree = out_tree
        self._out_weak = out_weak

    def as_text(self) -> str:
        """The module in XLA's text format, as jax's `lower(...).as_text(dialect='hlo')`."""
        return self.module.to_text(short=True)

    def compile(self) -> Compiled:
        executable = get_backend(self.backend).compile(self.module, optimize=True)
        return Compiled(executable, self._out_tree, self._out_weak)


class Compiled:
    """A compiled module: call it with the lowered signature's arguments."""

    def __init__(self, executable: Executable, out_tree, out_weak):
        self.executable = executable
        self._out_tree = out_tree
        self._out_weak = out_weak

    def as_text(self) -> str:
        """The optimised module the backend runs."""
        return self.executable.as_text()

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost keys for the optimised module: "flops", "transcendentals",
        "bytes accessed" (and per-operand "bytes accessed{i}{}")."""
        return cost_analysis(self.executable.module)

    def memory_analysis(self):
        """JAX's fields: argument/output/alias/temp size in bytes (plus the peak),
        from the optimised module's buffer assignment."""
        return memory_analysis(self.executable.module)

    def __call__(self, *args):
        leaves, _ = tree_flatten(args)
        results = self.executable.execute(*[np.asarray(x) for x in leaves])
        return tree_unflatten(self._out_tree, _outputs(results, self._out_weak))


def jit(fn: Callable | None = None, *, static_argnums=(), static_argnames=(),
        donate_argnums=(), backend: str | None = None):
    """Compile `fn` with XLA semantics: once per argument signature, then reuse.

    Usable as `jit(f)`, `@jit` or `@jit(static_argnums=1)`."""
    if fn is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames,
                             donate_argnums=donate_argnums, backend=backend)
    return JitFunction(fn, static_argnums, static_argnames, donate_argnums, backend)


compile_hook.JIT = lambda fn, static_argnums: JitFunction(fn, static_argnums,
                                                         warn_recompiles=False)


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _aval(leaf) -> ShapedArray:
    """The abstract value of an argument leaf (arrays, NumPy values, Python scalars)."""
    if isinstance(leaf, Array):
        return ShapedArray(tuple(leaf.shape), np.dtype(leaf.dtype), leaf.weak_type)
    if isinstance(leaf, np.ndarray):
        return ShapedArray(leaf.shape, canonicalize(leaf.dtype), False)
    try:
        dtype, weak = dtype_and_weak(leaf)
    except TypeError:
        raise TypeError(f"jit arguments must be arrays or scalars, got {type(leaf).__name__}; "
                        "mark it static with static_argnums") from None
    return ShapedArray(np.shape(leaf), dtype, weak)


_FAST_LEAVES = (ConcreteArray, np.ndarray)


@functools.cache
def _flat_tree(n: int) -> TreeDef:
    """The structure of `n` positional array arguments and no keywords."""
    return tree_flatten((tuple(range(n)), {}))[1]


class _NotAnArray(Exception):
    pass


def _not_an_array():
    raise _NotAnArray


def _keys_and_values(leaves: list, x64: bool) -> tuple[tuple | None, list]:
    """(each leaf's part of the cache key, the NumPy values the executable takes), in
    one pass over the leaves of a call; (None, []) when a leaf is a Tracer."""
    keys, values = [], []
    for leaf in leaves:
        kind = type(leaf)
        if kind is ConcreteArray:
            value = leaf.value
            keys.append((value.shape, value.dtype, leaf.weak_type))
        elif kind is np.ndarray:
            dtype = leaf.dtype if x64 else without_x64(leaf.dtype)
            keys.append((leaf.shape, dtype, False))
            value = leaf if leaf.dtype == dtype else np.asarray(leaf, dtype=dtype)
        elif isinstance(leaf, Tracer):
            return None, []
        else:
            k = _key(leaf)
            keys.append(k)
            value = _host_value(leaf, k[1])
        values.append(value)
    return tuple(keys), values


def _key(leaf) -> tuple:
    """A leaf's part of the cache key: (shape, dtype, weak), cheaply."""
    kind = type(leaf)
    if kind is ConcreteArray:
        value = leaf.value
        return value.shape, value.dtype, leaf.weak_type
    if kind is np.ndarray:
        return leaf.shape, canonicalize(leaf.dtype), False
    aval = _aval(leaf)
    return aval.shape, aval.dtype, aval.weak_type


def _host_value(leaf, dtype) -> np.ndarray:
    if isinstance(leaf, ConcreteArray):
        return leaf.value
    if isinstance(leaf, np.ndarray) and leaf.dtype == dtype:
        return leaf
    return np.asarray(leaf, dtype=dtype)
