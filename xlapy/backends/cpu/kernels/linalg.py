"""`cholesky` and `triangular-solve` as plain loop nests, one matrix at a time.

Both follow the interpreter (`hlo/evaluator/linalg.py`): they compute
in double (complex: pairs of doubles) whatever the element type and round
once when storing, with the interpreter's operation order per element
(sums may associate differently from NumPy's, so results agree to a few
ULP, not bit for bit). The kernels honour [begin, end) over the batch, so
batches of matrices run on threads; each call mallocs its double-precision
scratch once.

cholesky: the left-looking column algorithm; `lower=false` factors the
transpose and transposes back, as the interpreter does. A NaN on the
diagonal (not positive definite, or NaN input) makes the whole matrix NaN
(NaN + 0i for complex), as XLA's expander; the unused triangle is zero.

triangular-solve: every attribute combination is reduced to one forward or
back substitution T Y = C, where T(i, k) reads a(i, k) or a(k, i),
conjugated for ADJOINT, with a unit diagonal when asked, and C and the
result are b and x, transposed for `left_side=false`.
"""

from __future__ import annotations

import math

import llvmlite.ir as ir

from xlapy.backends.cpu.kernels.heap import libc
from xlapy.backends.cpu.kernels.in_place import discarded_on_error, new_kernel
from xlapy.backends.cpu.special_kernels import special
from xlapy.codegen import ir_types as T
from xlapy.codegen.elemental_complex import divide, multiply
from xlapy.codegen.elemental_extra import f64_to_narrow
from xlapy.codegen.intrinsics import intrinsic
from xlapy.codegen.ir_array import IrArray
from xlapy.codegen.loops import for_range
from xlapy.hlo.attributes import TriangularSolveTranspose
from xlapy.hlo.dtypes import PrimitiveType as P
from xlapy.hlo.opcode import Opcode as Op

_TYPES = (P.F16, P.BF16, P.F32, P.F64, P.C64, P.C128)


def _i64(value: int) -> ir.Constant:
    return ir.Constant(T.I64, value)


def _f64(value: float) -> ir.Constant:
    return ir.Constant(T.F64, value)


# -- numbers in double: (x,) real or (re, im) complex -----------------------------------------
class _Numbers:
    """Arithmetic on values of one element type computed in double precision."""

    def __init__(self, ptype: P):
        self.ptype = ptype
        self.complex = ptype in (P.C64, P.C128)
        self.parts = 2 if self.complex else 1

    def zero(self):
        return (_f64(0.0),) * self.parts

    def add(self, b, x, y):
        return tuple(b.fadd(p, q) for p, q in zip(x, y))

    def sub(self, b, x, y):
        return tuple(b.fsub(p, q) for p, q in zip(x, y))

    def mul(self, b, x, y):
        return multiply(b, x, y) if self.complex else (b.fmul(x[0], y[0]),)

    def div(self, b, x, y):
        """NumPy's division: Smith's for complex (also by a real divisor, which
        NumPy turns into (d, 0))."""
        return divide(b, x, y) if self.complex else (b.fdiv(x[0], y[0]),)

    def conj(self, b, x):
        return (x[0], b.fneg(x[1])) if self.complex else x

    def real(self, x):
        return (x[0], _f64(0.0)) if self.complex else x

    def load(self, b, array: IrArray, index):
        value = array.load(b, index)
        parts = value if self.complex else (value,)
        return tuple(p if str(p.type) == "double" else b.fpext(p, T.F64) for p in parts)

    def store(self, b, array: IrArray, index, value) -> None:
        """Round once as NumPy's astype does (bf16 via f32, as ml_dtypes does)."""
        t = self.ptype
        if t in (P.F64, P.C128):
            out = value
        elif t is P.F16:
            out = (f64_to_narrow(b, value[0], t),)
        else:
            out = tuple(b.fptrunc(p, T.F32) for p in value)
        array.store(b, out if self.complex else out[0], index)

    # scratch: parts doubles per element, element e at [parts * e]
    def scratch_load(self, b, base, element):
        first = b.mul(element, _i64(self.parts))
        return tuple(b.load(b.gep(base, [b.add(first, _i64(p))])) for p in range(self.parts))

    def scratch_store(self, b, base, element, value) -> None:
        first = b.mul(element, _i64(self.parts))
        for p, part in enumerate(value):
            b.store(part, b.gep(base, [b.add(first, _i64(p))]))


class _Slot:
    """A mutable value (a tuple of doubles or one i1) kept in stack slots."""

    def __init__(self, b, initial):
        self._b = b
        entry = b.function.entry_basic_block
        with b.goto_block(entry):
            b.position_at_start(entry)
            self._ptrs = [b.alloca(v.type) for v in initial]
        self.set(initial)

    def get(self):
        return tuple(self._b.load(p) for p in self._ptrs)

    def set(self, value) -> None:
        for p, v in zip(self._ptrs, value):
            self._b.store(v, p)


def _batch_index(b, number, dims) -> list:
    """Row-major batch `number` as an index over the batch dimensions."""
    index = []
    for d in reversed(dims):
        index.append(b.urem(number, _i64(d)))
        number = b.udiv(number, _i64(d))
    return list(reversed(index))


def _malloc(b, count: int) -> ir.Value:
    raw = b.call(libc(b.module, "malloc", T.I8P, [T.I64]), [_i64(max(count, 1) * 8)])
    return b.bitcast(raw, T.F64.as_pointer())


def _free(b, pointer) -> None:
    b.call(libc(b.module, "free", ir.VoidType(), [T.I8P]), [b.bitcast(pointer, T.I8P)])


# -- cholesky ---------------------------------------------------------------------------------
@special(Op.CHOLESKY)
def cholesky(cg, instruction) -> bool:
    shape = instruction.shape
    if shape.is_tuple or shape.element_type not in _TYPES or shape.rank < 2:
        return False
    n = shape.dimensions[-1]
    batches = math.prod(shape.dimensions[:-2])
    if shape.element_count == 0:
        return True
    slices = [cg.slice_of(instruction.operands[0]), cg.slice_of(instruction)]
    fn, b, pointers, begin, end = new_kernel(cg, instruction, "cholesky", slices, 1)
    with discarded_on_error(cg.llmod, fn):
        _emit_cholesky(b, instruction, pointers, begin, end, n)
    cg.call_kernel(fn, slices, batches, batches * (n ** 3 // 3 + n * n))
    return True


def _emit_cholesky(b, instruction, pointers, begin, end, n: int) -> None:
    shape = instruction.shape
    num = _Numbers(shape.element_type)
    a = IrArray(b, pointers[0], instruction.operands[0].shape)
    out = IrArray(b, pointers[1], shape)
    lower = bool(instruction.attr("lower", False))
    scratch = _malloc(b, n * n * num.parts)
    failed = _Slot(b, (ir.Constant(T.I1, 0),))
    with for_range(b, begin, end, name="batch") as q:
        batch = _batch_index(b, q, shape.dimensions[:-2])

        def a_at(i, j):   # the matrix factored: a, or a's transpose for lower=false
            return num.load(b, a, batch + ([i, j] if lower else [j, i]))

        def l_at(i, k):
            return num.scratch_load(b, scratch, b.add(b.mul(i, _i64(n)), k))

        failed.set((ir.Constant(T.I1, 0),))
        with for_range(b, 0, n, name="j") as j:
            _cholesky_column(b, num, a_at, l_at, scratch, failed, j, n)
        _store_factor(b, num, out, batch, l_at, failed.get()[0], n, lower)
    _free(b, scratch)
    b.ret_void()


def _cholesky_column(b, num, a_at, l_at, scratch, failed, j, n: int) -> None:
    """Column j of L: the pivot from row j so far, then the entries below it."""
    squares = _Slot(b, (_f64(0.0),))
    with for_range(b, 0, j, name="k") as k:
        v = l_at(j, k)   # |v|^2 as NumPy's (v * conj(v)).real: re*re - im*(-im)
        norm = b.fmul(v[0], v[0])
        if num.complex:
            norm = b.fsub(norm, b.fmul(v[1], b.fneg(v[1])))
        squares.set((b.fadd(squares.get()[0], norm),))
    pivot = b.fsub(a_at(j, j)[0], squares.get()[0])
    diagonal = intrinsic(b, "sqrt", [pivot])
    failed.set((b.or_(failed.get()[0], b.fcmp_unordered("uno", diagonal, diagonal)),))
    num.scratch_store(b, scratch, b.add(b.mul(j, _i64(n)), j), num.real((diagonal,)))
    with for_range(b, b.add(j, _i64(1)), _i64(n), name="i") as i:
        total = _Slot(b, num.zero())
        with for_range(b, 0, j, name="k") as k:
            product = num.mul(b, l_at(i, k), num.conj(b, l_at(j, k)))
            total.set(num.add(b, total.get(), product))
        below = num.div(b, num.sub(b, a_at(i, j), total.get()), num.real((diagonal,)))
        num.scratch_store(b, scratch, b.add(b.mul(i, _i64(n)), j), below)


def _store_factor(b, num, out, batch, l_at, failed, n: int, lower: bool) -> None:
    """out = L (lower) or L^T (upper), zero across the diagonal, all NaN if failed."""
    nan = (_f64(float("nan")),) + ((_f64(0.0),) if num.complex else ())
    with for_range(b, 0, n, name="si") as i:
        with for_range(b, 0, n, name="sj") as j:
            inside = b.icmp_signed(">=", i, j)
            k = b.select(inside, j, i)          # an in-bounds read either way
            value = l_at(i, k)
            value = tuple(b.select(inside, v, _f64(0.0)) for v in value)
            value = tuple(b.select(failed, p, v) for p, v in zip(nan, value))
            num.store(b, out, batch + ([i, j] if lower else [j, i]), value)


# -- triangular-solve -------------------------------------------------------------------------
@special(Op.TRIANGULAR_SOLVE)
def triangular_solve(cg, instruction) -> bool:
    a, rhs = instruction.operands
    shape = instruction.shape
    if shape.is_tuple or shape.element_type not in _TYPES or shape.rank < 2:
        return False
    if a.shape.dimensions[:-2] != rhs.shape.dimensions[:-2]:
        return False      # XLA requires equal batch dimensions
    batches = math.prod(shape.dimensions[:-2])
    if shape.element_count == 0:
        return True
    m = a.shape.dimensions[-1]
    columns = shape.element_count // (batches * max(m, 1))
    slices = [cg.slice_of(a), cg.slice_of(rhs), cg.slice_of(instruction)]
    fn, b, pointers, begin, end = new_kernel(cg, instruction, "trsm", slices, 2)
    with discarded_on_error(cg.llmod, fn):
        _emit_solve(b, instruction, pointers, begin, end, m, columns)
    cg.call_kernel(fn, slices, batches, batches * (m * m * columns + m * columns))
    return True


def _emit_solve(b, instruction, pointers, begin, end, m: int, columns: int) -> None:
    a_op, b_op = instruction.operands
    num = _Numbers(instruction.shape.element_type)
    a = IrArray(b, pointers[0], a_op.shape)
    rhs = IrArray(b, pointers[1], b_op.shape)
    out = IrArray(b, pointers[2], instruction.shape)
    lower = bool(instruction.attr("lower", False))
    left = bool(instruction.attr("left_side", False))
    unit = bool(instruction.attr("unit_diagonal", False))
    transpose = instruction.attr("transpose_a", TriangularSolveTranspose.NO_TRANSPOSE)
    transposed = transpose is not TriangularSolveTranspose.NO_TRANSPOSE
    swap = transposed != (not left)          # T(i, k) reads a(k, i)
    conjugate = transpose is TriangularSolveTranspose.ADJOINT
    forward = (lower != transposed) != (not left)   # substitution runs down T
    y = _malloc(b, m * columns * num.parts)
    known = _malloc(b, columns * num.parts)
    with for_range(b, begin, end, name="batch") as q:
        batch = _batch_index(b, q, instruction.shape.dimensions[:-2])

        def t_at(i, k):
            value = num.load(b, a, batch + ([k, i] if swap else [i, k]))
            return num.conj(b, value) if conjugate else value

        def c_at(i, j):
            return num.load(b, rhs, batch + ([i, j] if left else [j, i]))

        with for_range(b, 0, m, name="step") as step:
            i = step if forward else b.sub(_i64(m - 1), step)
            solved = (_i64(0), i) if forward else (b.add(i, _i64(1)), _i64(m))
            _solve_row(b, num, t_at, c_at, y, known, i, solved, columns, unit)
        # stored after the last read of a and b, which may share the output's buffer
        with for_range(b, 0, m, name="oi") as i:
            with for_range(b, 0, columns, name="oj") as j:
                value = num.scratch_load(b, y, b.add(b.mul(i, _i64(columns)), j))
                num.store(b, out, batch + ([i, j] if left else [j, i]), value)
    _free(b, y)
    _free(b, known)
    b.ret_void()


def _solve_row(b, num, t_at, c_at, y, known, i, solved, columns: int, unit: bool) -> None:
    """y[i, :] = (c[i, :] - sum over solved k of T(i, k) y[k, :]) / T(i, i)."""
    with for_range(b, 0, columns, name="zj") as j:
        num.scratch_store(b, known, j, num.zero())
    with for_range(b, solved[0], solved[1], name="k") as k:
        tik = t_at(i, k)
        with for_range(b, 0, columns, name="kj") as j:
            product = num.mul(b, tik, num.scratch_load(b, y, b.add(b.mul(k, _i64(columns)), j)))
            num.scratch_store(b, known, j, num.add(b, num.scratch_load(b, known, j), product))
    diagonal = num.real((_f64(1.0),)) if unit else t_at(i, i)
    with for_range(b, 0, columns, name="dj") as j:
        value = num.div(b, num.sub(b, c_at(i, j), num.scratch_load(b, known, j)), diagonal)
        num.scratch_store(b, y, b.add(b.mul(i, _i64(columns)), j), value)
