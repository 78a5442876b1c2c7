"""argmax / argmin as two vectorised passes over a row.

`lax.argmax` (and JAX's HLO for `jnp.argmax`) is a variadic reduce of the
values and an iota along the axis, whose reducer picks the greater value,
the first NaN, and the lower index among equals. Emitted as that reducer,
element by element, it is a chain of compares and selects through two
accumulators that no vectoriser can break: a row argmax of 2048x2048 took
28x NumPy's time. The same result in two passes that vectorise:

    m   = max(init, row)                 (NaN-blind, with "a NaN went by")
    hit = min { i : x[i] == m }          (or the first NaN, when there is one)

The reducer is recognised by what it computes, not by how it is spelled:
`arg_kind` evaluates it on every pair drawn from NaN, ±inf, ±0, ±1 and three
indices, in both orders, and accepts it only where it agrees with argmax's
(or argmin's) rule on all of them; the index operand must be an iota along
the one reduced dimension and the initial values the identity and index 0.
"""

from __future__ import annotations

import itertools

import llvmlite.ir as ir
import numpy as np

from xlapy.codegen import ir_types as T
from xlapy.codegen.intrinsics import intrinsic
from xlapy.codegen.scope import Ix, depth_of
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.evaluator.evaluator import Evaluator
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode as Op

_FLOATS = (P.F16, P.BF16, P.F32, P.F64)
_INTS = (P.S8, P.S16, P.S32, P.S64, P.U8, P.U16, P.U32, P.U64)
_KINDS: dict[tuple, str | None] = {}   # (reducer structure, types) -> kind or None


def arg_kind(reduce: HloInstruction) -> str | None:
    """"max" or "min" when `reduce` is an argmax/argmin along one dimension that
    the two-pass form computes exactly; else None."""
    if reduce.opcode is not Op.REDUCE or len(reduce.operands) != 4:
        return None
    x, index, x_init, index_init = reduce.operands
    dims = reduce.attr("dimensions") or ()
    xt, it = x.shape.element_type, index.shape.element_type
    if len(dims) != 1 or xt not in _FLOATS + _INTS or it not in _INTS or \
            x.shape.dimensions[dims[0]] == 0:
        return None
    if index.opcode is not Op.IOTA or index.attr("iota_dimension") != dims[0]:
        return None
    kind = _reducer_kind(reduce.attr("to_apply"), xt, it)
    if kind is None or _constant(index_init) != 0:
        return None
    identity = _identity(kind, xt)
    init = _constant(x_init)
    return kind if init is not None and init == identity else None


def _constant(instruction: HloInstruction):
    if instruction.opcode is not Op.CONSTANT or instruction.literal is None:
        return None
    value = np.asarray(instruction.literal)
    return value.item() if value.size == 1 else None


def _identity(kind: str, t: P):
    if t in _FLOATS:
        return -np.inf if kind == "max" else np.inf
    info = np.iinfo(t.numpy)
    return info.min if kind == "max" else info.max


def _reducer_kind(reducer, xt: P, it: P) -> str | None:
    """The kind, remembered per reducer structure (every trace makes a new reducer
    computation; evaluating one on the test pairs takes ~10 ms)."""
    key = (_structure(reducer), xt, it)
    kind = _KINDS.get(key, _UNKNOWN)
    if kind is _UNKNOWN:
        if len(_KINDS) > 1024:
            _KINDS.clear()
        kind = _KINDS[key] = next((k for k in ("max", "min")
                                   if _behaves_as(reducer, k, xt, it)), None)
    return kind


_UNKNOWN = object()


def _structure(computation) -> tuple:
    """What the reducer computes, without its names: per instruction its opcode,
    shape, operands (by position), parameter number, literal and attributes."""
    position = {id(i): k for k, i in enumerate(computation.instructions)}
    return tuple((i.opcode, i.shape.to_text(), tuple(position[id(o)] for o in i.operands),
                  i.parameter_number,
                  None if i.literal is None else np.asarray(i.literal).tobytes(),
                  tuple((k, repr(v)) for k, v in sorted(i.attrs.items())
                        if k != "metadata"))
                 for i in computation.instructions) + (
        position[id(computation.root_instruction)],)


def _behaves_as(reducer, kind: str, xt: P, it: P) -> bool:
    if reducer.num_parameters != 4:
        return False
    dtype, index_type = xt.numpy, it.numpy
    floats = xt in _FLOATS
    values = [np.nan, -np.inf, -1.0, -0.0, 0.0, 1.0, np.inf] if floats else [-3, 0, 2]
    evaluator = Evaluator()
    try:
        for (a, ia), (b, ib) in itertools.product(itertools.product(values, (0, 1, 2)),
                                                  repeat=2):
            args = [np.asarray(a, dtype), np.asarray(ia, index_type),
                    np.asarray(b, dtype), np.asarray(ib, index_type)]
            got = evaluator.call(reducer, args)
            want = _rule(kind, a, ia, b, ib)
            if not (isinstance(got, tuple) and len(got) == 2):
                return False
            value, index = float(np.asarray(got[0])), int(np.asarray(got[1]))
            if index != want[1] or not (value == want[0] or (value != value and
                                                              want[0] != want[0])):
                return False
    except Exception:   # a reducer the interpreter cannot run here is not recognised
        return False
    return True


def _rule(kind: str, a, ia, b, ib):
    """What argmax's reducer keeps of (a, ia) and (b, ib): a NaN first, then the
    greater (argmin: lesser) value, and among equals the lower index."""
    a_nan, b_nan = a != a, b != b
    if a_nan or b_nan:
        if a_nan and b_nan:
            return (a, ia) if ia < ib else (b, ib)
        return (a, ia) if a_nan else (b, ib)
    if a == b:
        return (a, ia) if ia < ib else (b, ib)
    better = a > b if kind == "max" else a < b
    return (a, ia) if better else (b, ib)


def emit_arg_reduce(g, instruction: HloInstruction, kind: str, index):
    """(value, index) of the argmax/argmin at output `index`, and its depth."""
    x, _, x_init, _ = instruction.operands
    axis = instruction.attr("dimensions")[0]
    n = x.shape.dimensions[axis]
    xt = x.shape.element_type
    it = instruction.shape.tuple_shapes[1].element_type
    depth = depth_of(index)
    scope = g.scope
    floats = xt in _FLOATS
    with scope.at(depth):
        b = g.b
        init = g.value(x_init, ())
        best = scope.alloca(init.type)
        b.store(init, best)
        nan_seen = scope.alloca(T.I1)
        b.store(ir.Constant(T.I1, 0), nan_seen)
        first = scope.alloca(T.I64)
        b.store(ir.Constant(T.I64, n), first)

    def row(iv: Ix):
        full = list(index)
        full.insert(axis, iv)
        return g.value(x, tuple(full))

    with scope.loop(depth, 0, n, name="amax") as iv:
        b = g.b
        value = row(iv)
        if floats:
            b.store(b.or_(b.load(nan_seen), b.fcmp_unordered("uno", value, value)), nan_seen)
            name = "maxnum" if kind == "max" else "minnum"
            b.store(intrinsic(b, name, [b.load(best), value], fastmath=("nnan", "nsz")), best)
        else:
            name = ("smax" if kind == "max" else "smin") if xt.numpy.kind == "i" else \
                ("umax" if kind == "max" else "umin")
            b.store(intrinsic(b, name, [b.load(best), value]), best)
    with scope.at(depth):
        b = g.b
        found = b.load(best)
        nan = b.load(nan_seen) if floats else None
        if floats:
            found = b.select(nan, ir.Constant(found.type, float("nan")), found)
    with scope.loop(depth, 0, n, name="aidx") as iv:
        b = g.b
        value = row(iv)
        if floats:
            match = b.select(nan, b.fcmp_unordered("uno", value, value),
                             b.fcmp_ordered("==", value, found))
        else:
            match = b.icmp_signed("==", value, found)
        candidate = b.select(match, iv.value, ir.Constant(T.I64, n))
        b.store(intrinsic(b, "umin", [b.load(first), candidate]), first)
    with scope.at(depth):
        b = g.b
        position = b.load(first)
        missing = b.icmp_unsigned("==", position, ir.Constant(T.I64, n))
        position = b.select(missing, ir.Constant(T.I64, 0), position)   # the init index, 0
        found = b.select(missing, init, found)
        index_type = T.compute_type(it)
        position = b.trunc(position, index_type) if index_type.width < 64 else position
    return (found, position), depth


__all__ = ["arg_kind", "emit_arg_reduce"]
