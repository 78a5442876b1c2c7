"""Reductions over dimensions that are not adjacent become two reductions (XLA:GPU's
ReductionSplitter, pass name "reduction-splitter").

A bias gradient of attention's heads sums f32[batch, heads, seq, head_dim] over
batch and seq: the kept heads dimension lies between the reduced ones, so no
row or column kernel applies and every output walks its elements with large
strides (f32[8,4,128,64]: 121 us, as long as PyTorch's). Reducing the largest
group of adjacent reduced dimensions first (seq: a batch of column sums, one
per batch and head) and then the rest (batch: a column sum of what is left)
gives two kernels that read along rows.

Only single-output reductions whose reducer is associative and whose init is its
identity are split (the init is combined once, by the second); XLA leaves the
order of a reduction's combinations open, so float sums may change in their
last bits, as they do under `reduce_reduce`, whose inverse this is (so this pass
runs after the simplification group). Inputs under `MIN_ELEMENTS` are left alone.
"""

from __future__ import annotations

import math

from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.mutation import NameUniquer, replace_uses
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.passes.algsimp_core import is_identity, scalar_binary_op
from xlapy.passes.pass_interface import Pass

MIN_ELEMENTS = 1 << 12
"""Smaller inputs are reduced in one go: a second kernel would cost more."""
_ASSOCIATIVE = frozenset({Opcode.ADD, Opcode.MULTIPLY, Opcode.MAXIMUM, Opcode.MINIMUM,
                          Opcode.AND, Opcode.OR})


class ReductionSplitter(Pass):
    name = "reduction-splitter"

    def run(self, module: HloModule) -> bool:
        names = NameUniquer(module)
        reduces = [(c, i) for c in module.computations for i in c.instructions
                   if i.opcode is Opcode.REDUCE]
        return any([_split(c, i, names) for c, i in reduces])   # (every one, not the first)


def groups(shape: Shape, reduced) -> list[list[int]]:
    """The reduced dimensions in runs adjacent in memory (major to minor)."""
    runs: list[list[int]] = []
    previous = None
    for position, dim in enumerate(shape.major_to_minor()):
        if dim not in reduced:
            continue
        if previous is not None and position == previous + 1:
            runs[-1].append(dim)
        else:
            runs.append([dim])
        previous = position
    return runs


def _split(computation: HloComputation, reduce: HloInstruction, names: NameUniquer) -> bool:
    if len(reduce.operands) != 2 or reduce.shape.is_tuple:
        return False
    x, init = reduce.operands
    reducer = scalar_binary_op(reduce.attrs["to_apply"])
    if reducer is None or reducer[0] not in _ASSOCIATIVE or not is_identity(reducer[0], init):
        return False
    if x.shape.element_count < MIN_ELEMENTS:
        return False
    reduced = set(reduce.attrs["dimensions"])
    runs = groups(x.shape, reduced)
    if len(runs) < 2:
        return False
    first = max(runs, key=lambda run: _size(x.shape, run))
    kept = [d for d in range(x.shape.rank) if d not in first]
    partial_shape = Shape.array(x.shape.element_type,
                                [x.shape.dimensions[d] for d in kept]).with_default_layout()
    partial = HloInstruction(Opcode.REDUCE, partial_shape, [x, init],
                             {"dimensions": tuple(sorted(first)),
                              "to_apply": reduce.attrs["to_apply"]},
                             name=names(reduce.name))
    rest = tuple(kept.index(d) for d in sorted(reduced - set(first)))
    total = HloInstruction(Opcode.REDUCE, reduce.shape, [partial, init],
                           {"dimensions": rest, "to_apply": reduce.attrs["to_apply"]},
                           name=names(reduce.name))
    at = computation.instructions.index(reduce)
    for made in (partial, total):
        made.parent = computation
    computation.instructions[at:at] = [partial, total]
    replace_uses(computation, reduce, total)
    computation.instructions.remove(reduce)
    _split(computation, total, names)        # a third run: split again
    return True


def _size(shape: Shape, dims) -> int:
    return math.prod(shape.dimensions[d] for d in dims)
