"""`dot` as an element generator: one output element is a loop over the
contracting dimensions. Correct for every dtype and dimension numbering,
and what a dot reads inside a fusion; the tiled GEMM kernel
(`kernels/gemm.py`) takes over for the big ones."""

from __future__ import annotations

from xlapy.codegen import ir_types as T
from xlapy.codegen.elemental import convert, emit_elementwise
from xlapy.codegen.generator import Generator
from xlapy.codegen.scope import depth_of
from xlapy.codegen.tables import generates
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.opcode import Opcode as Op
from xlapy.hlo.shape import Shape

_FLOATS = (P.F16, P.BF16, P.F32, P.F64)


def dot_dims(instruction):
    lhs, rhs = instruction.operands
    lb = list(instruction.attr("lhs_batch_dims") or ())
    rb = list(instruction.attr("rhs_batch_dims") or ())
    lc = list(instruction.attr("lhs_contracting_dims") or ())
    rc = list(instruction.attr("rhs_contracting_dims") or ())
    lf = [d for d in range(lhs.shape.rank) if d not in lb and d not in lc]
    rf = [d for d in range(rhs.shape.rank) if d not in rb and d not in rc]
    return lb, rb, lc, rc, lf, rf


class _Mul:
    opcode = Op.MULTIPLY

    def __init__(self, shape):
        self.shape = shape
        self.name = "dot.multiply"


@generates(Op.DOT)
def dot_element(g: Generator, instruction, index):
    lhs, rhs = instruction.operands
    lb, rb, lc, rc, lf, rf = dot_dims(instruction)
    out_type = instruction.shape.element_type
    depth = depth_of(index)
    pos = 0
    lhs_index, rhs_index = [None] * lhs.shape.rank, [None] * rhs.shape.rank
    for a, c in zip(lb, rb):
        lhs_index[a] = rhs_index[c] = index[pos]
        pos += 1
    for d in lf:
        lhs_index[d] = index[pos]
        pos += 1
    for d in rf:
        rhs_index[d] = index[pos]
        pos += 1
    scope = g.scope
    acc_type = P.F32 if out_type in (P.F16, P.BF16) else out_type
    zero = T.constant(acc_type, 0)
    with scope.at(depth):
        slot = (tuple(scope.alloca(z.type) for z in zero) if isinstance(zero, tuple)
                else scope.alloca(zero.type))
        _store(g.b, slot, zero)
        sizes = lhs.shape.dimensions

        def nest(k):
            if k == len(lc):
                x = _as(g, g.value(lhs, tuple(lhs_index)), lhs.shape.element_type, acc_type)
                y = _as(g, g.value(rhs, tuple(rhs_index)), rhs.shape.element_type, acc_type)
                product = emit_elementwise(g.b, _Mul(_shape(acc_type)), [x, y],
                                           [acc_type, acc_type])
                acc = _load(g.b, slot)
                add = _Add(_shape(acc_type))
                if acc_type in _FLOATS:
                    _store(g.b, slot, g.b.fadd(acc, product, flags=("reassoc",)))
                else:
                    _store(g.b, slot, emit_elementwise(g.b, add, [acc, product],
                                                       [acc_type, acc_type]))
                return
            with scope.loop(scope.depth, 0, sizes[lc[k]], name="k") as iv:
                lhs_index[lc[k]] = iv
                rhs_index[rc[k]] = iv
                nest(k + 1)

        nest(0)
        value = _load(g.b, slot)
        if acc_type is not out_type:
            value = T.round_to(g.b, value, out_type)
    return value, depth


class _Add(_Mul):
    opcode = Op.ADD


def _shape(ptype):
    return Shape.scalar(ptype)


def _as(g, value, source, target):
    if source is target or (source in (P.F16, P.BF16) and target is P.F32):
        return value
    return convert(g.b, value, source, target)


def _store(b, slot, value):
    if isinstance(slot, tuple):
        for s, v in zip(slot, value):
            b.store(v, s)
    else:
        b.store(value, slot)


def _load(b, slot):
    return tuple(b.load(s) for s in slot) if isinstance(slot, tuple) else b.load(slot)
