"""Shape rules of data movement: broadcast, reshape, bitcast, iota, transpose,
reverse, slice, dynamic-slice, dynamic-update-slice, concatenate and pad.

broadcast, reshape, dynamic-reshape, bitcast and iota carry their result
dimensions only in the declared shape; their rules check that shape against
the operands (XLA's HloVerifier does the same, there being no inference).
"""

from __future__ import annotations

from xlapy.hlo.attributes import PaddingConfig, SliceRange
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.hlo.shape_inference.query import Query, array, braces, rule, text

Op = Opcode
_INT32_MAX = 2**31 - 1


def check_dimension(q: Query, dim: int, rank: int, what: str) -> None:
    if not 0 <= dim < rank:
        q.fail(f"{what} {dim} is out of range for rank {rank}")


def check_unique(q: Query, dims, name: str) -> None:
    if len(set(dims)) != len(dims):
        q.fail(f"{name}={braces(dims)} repeats a dimension")


@rule(Op.BROADCAST, declared=True)
def _broadcast(q: Query) -> Shape:
    """`dimensions[i]` is the result dimension operand dimension i becomes; sizes match."""
    q.count(1)
    operand = q.array(0)
    result = q.declared_array("the result dimensions of a broadcast are")
    dims = q.integers("dimensions")
    if len(dims) != operand.rank:
        q.fail(f"dimensions={braces(dims)} has {len(dims)} entries but the operand "
               f"{text(operand)} has rank {operand.rank}")
    for i, d in enumerate(dims):
        if not 0 <= d < result.rank:
            q.fail(f"dimensions={braces(dims)} maps operand dim {i} to result dim {d} "
                   f"but the result has rank {result.rank}")
        if operand.dimensions[i] != result.dimensions[d]:
            q.fail(f"operand dim {i} has size {operand.dimensions[i]} but result dim {d} it "
                   f"maps to has size {result.dimensions[d]}")
    check_unique(q, dims, "dimensions")
    return array(operand.element_type, result.dimensions, result.dynamic_dimensions)


@rule(Op.RESHAPE, declared=True)
def _reshape(q: Query) -> Shape:
    q.count(1)
    operand = q.array(0)
    result = q.declared_array("the result dimensions of a reshape are")
    if result.element_count != operand.element_count:
        q.fail(f"cannot reshape {text(operand)} ({operand.element_count} elements) to "
               f"{text(result)} ({result.element_count} elements)")
    return array(operand.element_type, result.dimensions, result.dynamic_dimensions)


@rule(Op.DYNAMIC_RESHAPE, declared=True)
def _dynamic_reshape(q: Query) -> Shape:
    """Operand, then one s32[] size per result dimension; dims are the bounds."""
    q.count_at_least(1)
    operand = q.array(0)
    result = q.declared_array("the result bounds of a dynamic-reshape are")
    if len(q.operands) != result.rank + 1:
        q.fail(f"a rank-{result.rank} result needs {result.rank} size operands, "
               f"got {len(q.operands) - 1}")
    for i in range(1, len(q.operands)):
        size = q.scalar(i, f"size operand {i}")
        if size.element_type is not PrimitiveType.S32:
            q.fail(f"size operand {i} must be s32[], got {text(size)}")
    if result.element_count != operand.element_count:
        q.fail(f"cannot reshape {text(operand)} to bounds {text(result)}: element counts "
               f"{operand.element_count} and {result.element_count} differ")
    return array(operand.element_type, result.dimensions, result.dynamic_dimensions)


@rule(Op.BITCAST, declared=True)
def _bitcast(q: Query) -> Shape:
    """Reinterprets the buffer: any shape of the same byte size."""
    q.count(1)
    operand = q.array(0)
    result = q.declared_array("a bitcast's result shape is")
    if result.byte_size != operand.byte_size:
        q.fail(f"cannot bitcast {text(operand)} ({operand.byte_size} bytes) to "
               f"{text(result)} ({result.byte_size} bytes)")
    return result.without_layout()


@rule(Op.IOTA, declared=True)
def _iota(q: Query) -> Shape:
    q.count(0)
    result = q.declared_array("the shape of an iota is")
    if not result.rank:
        q.fail("the result must have rank >= 1, not be a scalar")
    check_dimension(q, q.integer("iota_dimension"), result.rank, "iota_dimension")
    element = result.element_type
    if not (element.is_integral or element.is_floating_or_complex):
        q.fail(f"cannot count in {element.value}; iota needs an integral, floating-point or "
               f"complex element type")
    return result.without_layout()


@rule(Op.TRANSPOSE)
def _transpose(q: Query) -> Shape:
    """Result dimension i is operand dimension `dimensions[i]`."""
    q.count(1)
    operand = q.array(0)
    perm = q.integers("dimensions")
    if sorted(perm) != list(range(operand.rank)):
        q.fail(f"dimensions={braces(perm)} is not a permutation of the operand's "
               f"{operand.rank} dimensions ({text(operand)})")
    dynamic = operand.dynamic_dimensions or (False,) * operand.rank
    return array(operand.element_type, [operand.dimensions[p] for p in perm],
                 [dynamic[p] for p in perm])


@rule(Op.REVERSE)
def _reverse(q: Query) -> Shape:
    q.count(1)
    operand = q.array(0)
    dims = q.integers("dimensions")
    for d in dims:
        check_dimension(q, d, operand.rank, "reverse dimension")
    check_unique(q, dims, "dimensions")
    return operand.without_layout()


@rule(Op.SLICE)
def _slice(q: Query) -> Shape:
    q.count(1)
    operand = q.array(0)
    ranges = q.typed("slice", tuple)
    if len(ranges) != operand.rank or not all(isinstance(r, SliceRange) for r in ranges):
        q.fail(f"slice needs one [start:limit:stride] range per dimension of "
               f"{text(operand)}, got {len(ranges)}")
    sizes = []
    for d, (r, size) in enumerate(zip(ranges, operand.dimensions)):
        if r.stride <= 0:
            q.fail(f"dimension {d}: stride {r.stride} must be positive")
        if not 0 <= r.start <= r.limit <= size:
            q.fail(f"dimension {d}: range [{r.start}:{r.limit}] must satisfy "
                   f"0 <= start <= limit <= {size} (the operand dimension)")
        sizes.append((r.limit - r.start + r.stride - 1) // r.stride)
    return array(operand.element_type, sizes)


def _check_indices(q: Query, first: int, rank: int) -> None:
    """Operands first.. are `rank` integral scalars of one type (the start indices)."""
    count = len(q.operands) - first
    if count != rank:
        q.fail(f"needs one start index operand per operand dimension ({rank}), got {count}")
    for i in range(first, len(q.operands)):
        index = q.scalar(i, f"start index (operand {i})")
        if not index.element_type.is_integral:
            q.fail(f"start index (operand {i}) must be an integer, got {text(index)}")
        if index.element_type is not q.operands[first].element_type:
            q.fail(f"start indices must share one type: operand {i} is {text(index)}, "
                   f"operand {first} is {text(q.operands[first])}")


@rule(Op.DYNAMIC_SLICE)
def _dynamic_slice(q: Query) -> Shape:
    q.count_at_least(1)
    operand = q.array(0)
    _check_indices(q, 1, operand.rank)
    sizes = q.integers("dynamic_slice_sizes")
    if len(sizes) != operand.rank:
        q.fail(f"dynamic_slice_sizes={braces(sizes)} needs one size per dimension of "
               f"{text(operand)}")
    for d, (size, bound) in enumerate(zip(sizes, operand.dimensions)):
        if not 0 <= size <= bound:
            q.fail(f"slice size {size} of dimension {d} must be within [0, {bound}]")
    return array(operand.element_type, sizes)


@rule(Op.DYNAMIC_UPDATE_SLICE)
def _dynamic_update_slice(q: Query) -> Shape:
    q.count_at_least(2)
    operand = q.array(0)
    update = q.array(1, "the update (operand 1)")
    _check_indices(q, 2, operand.rank)
    if update.rank != operand.rank:
        q.fail(f"the update {text(update)} must have the operand's rank {operand.rank}")
    if update.element_type is not operand.element_type:
        q.fail(f"the update has element type {update.element_type.value} but the operand "
               f"has {operand.element_type.value}")
    for d, (size, bound) in enumerate(zip(update.dimensions, operand.dimensions)):
        if size > bound:
            q.fail(f"update dimension {d} has size {size}, larger than the operand's {bound}")
    return operand.without_layout()


@rule(Op.CONCATENATE)
def _concatenate(q: Query) -> Shape:
    q.count_at_least(1)
    operands = q.arrays()
    first = operands[0]
    dim = q.single_dimension()
    check_dimension(q, dim, first.rank, "concatenate dimension")
    for i, shape in enumerate(operands[1:], 1):
        if shape.element_type is not first.element_type:
            q.fail(f"operand {i} has element type {shape.element_type.value} but operand 0 "
                   f"has {first.element_type.value}")
        if shape.rank != first.rank:
            q.fail(f"operand {i} has rank {shape.rank} ({text(shape)}) but operand 0 has "
                   f"rank {first.rank} ({text(first)})")
        for d in range(first.rank):
            if d != dim and shape.dimensions[d] != first.dimensions[d]:
                q.fail(f"operand {i} {text(shape)} and operand 0 {text(first)} differ in "
                       f"dimension {d}, which is not the concatenate dimension {dim}")
    dims = list(first.dimensions)
    dims[dim] = sum(shape.dimensions[dim] for shape in operands)
    return array(first.element_type, dims)


@rule(Op.PAD)
def _pad(q: Query) -> Shape:
    """Each dimension grows by low + high (either may be negative) plus interior
    padding between elements."""
    q.count(2)
    operand = q.array(0)
    value = q.scalar(1, "the padding value (operand 1)")
    if value.element_type is not operand.element_type:
        q.fail(f"the padding value has element type {value.element_type.value} but the "
               f"operand has {operand.element_type.value}")
    config = q.typed("padding", PaddingConfig)
    if len(config.dimensions) != operand.rank:
        q.fail(f"padding={config.to_text()} has {len(config.dimensions)} dimensions but the "
               f"operand {text(operand)} has rank {operand.rank}")
    dims = []
    for d, (p, size) in enumerate(zip(config.dimensions, operand.dimensions)):
        if p.interior < 0:
            q.fail(f"dimension {d}: interior padding {p.interior} must not be negative")
        padded = p.low + size + p.high + max(size - 1, 0) * p.interior
        if padded < 0:
            q.fail(f"dimension {d}: padding {p.low}_{p.high}_{p.interior} of size {size} "
                   f"gives a negative size {padded}")
        dims.append(padded)
    return array(operand.element_type, dims)


@rule(Op.GET_DIMENSION_SIZE)
def _get_dimension_size(q: Query) -> Shape:
    q.count(1)
    operand = q.array(0)
    dim = q.single_dimension()
    check_dimension(q, dim, operand.rank, "dimension")
    if operand.dimensions[dim] > _INT32_MAX:
        q.fail(f"dimension {dim} of {text(operand)} does not fit in s32")
    return array(PrimitiveType.S32, ())


@rule(Op.SET_DIMENSION_SIZE)
def _set_dimension_size(q: Query) -> Shape:
    q.count(2)
    operand = q.array(0)
    size = q.scalar(1, "the size (operand 1)")
    if size.element_type is not PrimitiveType.S32:
        q.fail(f"the size (operand 1) must be s32[], got {text(size)}")
    dim = q.single_dimension()
    check_dimension(q, dim, operand.rank, "dimension")
    dynamic = list(operand.dynamic_dimensions or (False,) * operand.rank)
    dynamic[dim] = True
    return array(operand.element_type, operand.dimensions, dynamic)
