"""TopK as a sort (XLA's TopkDecomposer, pass name "topk-decomposer").

`topk(x), k=K` becomes a stable sort of (x, iota) along the last dimension,
largest first (smallest first with `largest=false`), and the first K of
each: the values and their s32 indices. Floats compare in total order
(+NaN above +inf, -0 below +0), as XLA's TopK does; equal keys keep their
order, so ties go to the lower index. Backends then need only a sort.

XLA's CPU pipeline writes top-k as `custom-call(x), custom_call_target="TopK"`
with its comparator in `called_computations` (on the values alone, or on
values and indices): it becomes the same stable sort under that comparator.
"""

from __future__ import annotations

from xlapy.hlo.attributes import ComparisonDirection, ComparisonType, SliceRange
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.mutation import NameUniquer, clone_computation, replace_uses
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
                    comparator = _comparator(module, instruction.operands[0].shape.element_type,
                                             instruction.attr("largest", True), names)
                elif _is_topk_custom_call(instruction):
                    comparator = _with_indices(module, instruction.called_computations[0],
                                               names)
                else:
                    continue
                _decompose(computation, instruction, comparator, names)
                changed = True
        return changed


def _is_topk_custom_call(instruction: HloInstruction) -> bool:
    return (instruction.opcode is Opcode.CUSTOM_CALL
            and instruction.attr("custom_call_target") == "TopK"
            and len(instruction.called_computations) == 1
            and instruction.called_computations[0].num_parameters in (2, 4)
            and len(instruction.operands) == 1 and instruction.shape.is_tuple)


def _decompose(computation: HloComputation, topk: HloInstruction,
               comparator: HloComputation, names: NameUniquer) -> None:
    x = topk.operands[0]
    k = topk.shape.tuple_shapes[0].dimensions[-1]
    dims = x.shape.dimensions
    last = len(dims) - 1
    index_shape = Shape.array(PrimitiveType.S32, dims)
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


def _with_indices(module: HloModule, comparator: HloComputation,
                  names: NameUniquer) -> HloComputation:
    """`comparator` itself when it already takes (a, b, index a, index b); else a copy
    that takes the indices too and ignores them."""
    if comparator.num_parameters == 4:
        return comparator
    index = Shape.scalar(PrimitiveType.S32)
    extra = [HloInstruction(Opcode.PARAMETER, index, name=names("topk_index"),
                            parameter_number=n) for n in (2, 3)]
    computation = clone_computation(comparator, names, extra)
    module.computations.insert(0, computation)
    computation.parent = module
    return computation
