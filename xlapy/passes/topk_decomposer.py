"""TopK as a sort (XLA's TopkDecomposer, pass name "topk-decomposer").

`topk(x), k=K` becomes a stable sort of (x, iota) along the last dimension,
largest first (smallest first with `largest=false`), and the first K of
each: the values and their s32 indices. Floats compare in total order
(+NaN above +inf, -0 below +0), as XLA's TopK does; equal keys keep their
order, so ties go to the lower index. Backends then need only a sort.
"""

from __future__ import annotations

from xlapy.hlo.attributes import ComparisonDirection, ComparisonType, SliceRange
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.mutation import NameUniquer, replace_uses
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.passes.pass_interface import Pass


class TopkDecomposer(Pass):
    name = "topk-decomposer"

    def run(self, module: HloModule) -> bool:
        names = NameUniquer(module)
        changed = False
        for computation in list(module.computations):
            for instruction in list(computation.instructions):
                if instruction.opcode is Opcode.TOPK:
                    _decompose(module, computation, instruction, names)
                    changed = True
        return changed


def _decompose(module: HloModule, computation: HloComputation, topk: HloInstruction,
               names: NameUniquer) -> None:
    x = topk.operands[0]
    k = topk.attr("k")
    element = x.shape.element_type
    dims = x.shape.dimensions
    last = len(dims) - 1
    index_shape = Shape.array(PrimitiveType.S32, dims)
    comparator = _comparator(module, element, topk.attr("largest", True), names)
    made = []

    def add(opcode, shape, operands=(), **attrs):
        instruction = HloInstruction(opcode, shape, operands, attrs, name=names(topk.name))
        made.append(instruction)
        return instruction

    iota = add(Opcode.IOTA, index_shape, iota_dimension=last)
    pair = Shape.tuple([x.shape.with_default_layout(), index_shape])
    sort = add(Opcode.SORT, pair, [x, iota], dimensions=(last,), is_stable=True,
               to_apply=comparator)
    ranges = tuple(SliceRange(0, d) for d in dims[:-1]) + (SliceRange(0, k),)
    parts = []
    for i, shape in enumerate(topk.shape.tuple_shapes):
        whole = add(Opcode.GET_TUPLE_ELEMENT, pair.tuple_shapes[i], [sort], index=i)
        parts.append(add(Opcode.SLICE, shape, [whole], slice=ranges))
    result = add(Opcode.TUPLE, topk.shape, parts)
    at = computation.instructions.index(topk)
    for instruction in made:
        instruction.parent = computation
    computation.instructions[at:at] = made
    replace_uses(computation, topk, result)
    computation.instructions.remove(topk)


def _comparator(module: HloModule, element: PrimitiveType, largest: bool,
                names: NameUniquer) -> HloComputation:
    """(a, b, index a, index b) -> a before b: a > b (a < b for the smallest)."""
    scalar, index = Shape.scalar(element), Shape.scalar(PrimitiveType.S32)
    params = [HloInstruction(Opcode.PARAMETER, s, name=names("topk_compare_p"),
                             parameter_number=n)
              for n, s in enumerate((scalar, scalar, index, index))]
    attrs = {"direction": ComparisonDirection.GT if largest else ComparisonDirection.LT}
    if element.is_float:
        attrs["type"] = ComparisonType.TOTALORDER
    compare = HloInstruction(Opcode.COMPARE, Shape.scalar(PrimitiveType.PRED),
                             params[:2], attrs, name=names("topk_compare"))
    computation = HloComputation(names("topk_comparator"), [*params, compare], root=compare)
    module.computations.insert(0, computation)
    computation.parent = module
    return computation
