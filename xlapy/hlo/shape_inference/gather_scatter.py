"""Shape rules of gather and (variadic) scatter with general dimension numbers,
batching dimensions included (StableHLO's constraints C1-C25, which XLA
enforces too).

Both ops see the start indices as if a trailing dimension of size 1 were
appended when `index_vector_dim == rank(indices)`; that "expanded" shape is
what the batch (gather) or scatter (scatter) dimensions come from.
"""

from __future__ import annotations

from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.hlo.shape_inference.query import Query, array, braces, rule, text
from xlapy.hlo.shape_inference.reductions import check_reducer


def _sorted_unique(q: Query, dims, name: str, bound: int, bound_what: str) -> None:
    if list(dims) != sorted(set(dims)):
        q.fail(f"{name}={braces(dims)} must be sorted and must not repeat")
    _in_range(q, dims, name, bound, bound_what)


def _in_range(q: Query, dims, name: str, bound: int, bound_what: str) -> None:
    for d in dims:
        if not 0 <= d < bound:
            q.fail(f"{name}={braces(dims)} holds {d}, outside [0, {bound}) ({bound_what})")


def _disjoint(q: Query, a, a_name: str, b, b_name: str) -> None:
    common = sorted(set(a) & set(b))
    if common:
        q.fail(f"{a_name}={braces(a)} and {b_name}={braces(b)} share dimension {common[0]}")


def _expanded_indices(q: Query, indices: Shape, index_vector_dim: int) -> list[int]:
    if not indices.element_type.is_integral:
        q.fail(f"the indices must be integers, got {text(indices)}")
    if not 0 <= index_vector_dim <= indices.rank:
        q.fail(f"index_vector_dim={index_vector_dim} must be within [0, {indices.rank}] "
               f"for indices {text(indices)}")
    dims = list(indices.dimensions)
    if index_vector_dim == indices.rank:
        dims.append(1)
    return dims


def _check_batching(q: Query, operand: Shape, indices: Shape, index_vector_dim: int,
                    operand_dims, operand_name: str, indices_dims, indices_name: str) -> None:
    """Batching dims pair operand dimensions with indices dimensions of equal size."""
    _sorted_unique(q, operand_dims, operand_name, operand.rank, "the operand's rank")
    check_unique = len(set(indices_dims)) == len(indices_dims)
    if not check_unique:
        q.fail(f"{indices_name}={braces(indices_dims)} repeats a dimension")
    _in_range(q, indices_dims, indices_name, indices.rank, "the indices' rank")
    if index_vector_dim in indices_dims:
        q.fail(f"{indices_name}={braces(indices_dims)} must not hold "
               f"index_vector_dim={index_vector_dim}")
    if len(operand_dims) != len(indices_dims):
        q.fail(f"{operand_name}={braces(operand_dims)} and {indices_name}="
               f"{braces(indices_dims)} must have equal lengths")
    for a, b in zip(operand_dims, indices_dims):
        if operand.dimensions[a] != indices.dimensions[b]:
            q.fail(f"batching operand dimension {a} (size {operand.dimensions[a]}) does not "
                   f"match indices dimension {b} (size {indices.dimensions[b]})")


def _check_index_map(q: Query, index_map, name: str, expanded, index_vector_dim: int,
                     operand: Shape, batching, batching_name: str) -> None:
    if len(index_map) != expanded[index_vector_dim]:
        q.fail(f"{name}={braces(index_map)} has {len(index_map)} entries but the index "
               f"vectors (dimension {index_vector_dim} of the indices) have "
               f"{expanded[index_vector_dim]} components")
    _in_range(q, index_map, name, operand.rank, "the operand's rank")
    if len(set(index_map)) != len(index_map):
        q.fail(f"{name}={braces(index_map)} repeats a dimension")
    _disjoint(q, index_map, name, batching, batching_name)


@rule(Opcode.GATHER)
def _gather(q: Query) -> Shape:
    q.count(2)
    operand = q.array(0)
    indices = q.array(1, "the start indices (operand 1)")
    offset_dims = q.integers("offset_dims")
    collapsed = q.integers("collapsed_slice_dims", ())
    index_map = q.integers("start_index_map")
    operand_batching = q.integers("operand_batching_dims", ())
    indices_batching = q.integers("start_indices_batching_dims", ())
    index_vector_dim = q.integer("index_vector_dim")
    slice_sizes = q.integers("slice_sizes")

    expanded = _expanded_indices(q, indices, index_vector_dim)
    result_rank = len(offset_dims) + len(expanded) - 1
    _sorted_unique(q, offset_dims, "offset_dims", result_rank, "the result's rank")
    _sorted_unique(q, collapsed, "collapsed_slice_dims", operand.rank, "the operand's rank")
    _disjoint(q, collapsed, "collapsed_slice_dims", operand_batching, "operand_batching_dims")
    _check_batching(q, operand, indices, index_vector_dim, operand_batching,
                    "operand_batching_dims", indices_batching, "start_indices_batching_dims")
    _check_index_map(q, index_map, "start_index_map", expanded, index_vector_dim, operand,
                     operand_batching, "operand_batching_dims")
    if len(offset_dims) + len(collapsed) + len(operand_batching) != operand.rank:
        q.fail(f"offset_dims={braces(offset_dims)}, collapsed_slice_dims={braces(collapsed)} "
               f"and operand_batching_dims={braces(operand_batching)} must together count "
               f"the operand's rank {operand.rank}")
    if len(slice_sizes) != operand.rank:
        q.fail(f"slice_sizes={braces(slice_sizes)} needs one size per dimension of "
               f"{text(operand)}")
    for d, (size, bound) in enumerate(zip(slice_sizes, operand.dimensions)):
        if not 0 <= size <= bound:
            q.fail(f"slice size {size} of operand dimension {d} must be within [0, {bound}]")
    for d in collapsed + operand_batching:
        if slice_sizes[d] > 1:
            q.fail(f"slice size {slice_sizes[d]} of collapsed or batching dimension {d} "
                   f"must be at most 1")

    window = [s for d, s in enumerate(slice_sizes) if d not in collapsed + operand_batching]
    batch = [s for d, s in enumerate(expanded) if d != index_vector_dim]
    window_iter, batch_iter = iter(window), iter(batch)
    dims = [next(window_iter) if i in offset_dims else next(batch_iter)
            for i in range(result_rank)]
    return array(operand.element_type, dims)


@rule(Opcode.SCATTER)
def _scatter(q: Query) -> Shape:
    """Operands: n inputs, the indices, n updates; result: the inputs' shape(s)."""
    if len(q.operands) < 3 or len(q.operands) % 2 == 0:
        q.fail(f"expects n inputs, the indices and n updates (an odd count >= 3), "
               f"got {len(q.operands)} operands")
    n = len(q.operands) // 2
    inputs = q.arrays(0, n)
    indices = q.array(n, f"the scatter indices (operand {n})")
    updates = q.arrays(n + 1)
    operand, update = inputs[0], updates[0]
    for i in range(1, n):
        if inputs[i].dimensions != operand.dimensions:
            q.fail(f"input {i} {text(inputs[i])} and input 0 {text(operand)} differ in shape")
        if updates[i].dimensions != update.dimensions:
            q.fail(f"update {i} {text(updates[i])} and update 0 {text(update)} differ in shape")
    for i in range(n):
        if updates[i].element_type is not inputs[i].element_type:
            q.fail(f"update {i} has element type {updates[i].element_type.value} but input "
                   f"{i} has {inputs[i].element_type.value}")

    window_dims = q.integers("update_window_dims")
    inserted = q.integers("inserted_window_dims", ())
    index_map = q.integers("scatter_dims_to_operand_dims")
    input_batching = q.integers("input_batching_dims", ())
    indices_batching = q.integers("scatter_indices_batching_dims", ())
    index_vector_dim = q.integer("index_vector_dim")

    expanded = _expanded_indices(q, indices, index_vector_dim)
    expected_rank = len(expanded) - 1 + len(window_dims)
    if update.rank != expected_rank:
        q.fail(f"the updates {text(update)} must have rank {expected_rank} (scatter dims of "
               f"the indices plus update_window_dims={braces(window_dims)})")
    _sorted_unique(q, window_dims, "update_window_dims", update.rank, "the updates' rank")
    _sorted_unique(q, inserted, "inserted_window_dims", operand.rank, "the operand's rank")
    _disjoint(q, inserted, "inserted_window_dims", input_batching, "input_batching_dims")
    _check_batching(q, operand, indices, index_vector_dim, input_batching,
                    "input_batching_dims", indices_batching, "scatter_indices_batching_dims")
    if len(window_dims) + len(inserted) + len(input_batching) != operand.rank:
        q.fail(f"update_window_dims={braces(window_dims)}, inserted_window_dims="
               f"{braces(inserted)} and input_batching_dims={braces(input_batching)} must "
               f"together count the operand's rank {operand.rank}")
    _check_index_map(q, index_map, "scatter_dims_to_operand_dims", expanded, index_vector_dim,
                     operand, input_batching, "input_batching_dims")

    window_bounds = [s for d, s in enumerate(operand.dimensions)
                     if d not in inserted + input_batching]
    for d, bound in zip(window_dims, window_bounds):
        if update.dimensions[d] > bound:
            q.fail(f"update window dimension {d} has size {update.dimensions[d]}, larger than "
                   f"the operand's corresponding bound {bound}")
    scatter_bounds = iter(s for d, s in enumerate(expanded) if d != index_vector_dim)
    for d in range(update.rank):
        if d in window_dims:
            continue
        bound = next(scatter_bounds)
        if update.dimensions[d] != bound:
            q.fail(f"update scatter dimension {d} has size {update.dimensions[d]} but the "
                   f"matching indices dimension has size {bound}")

    check_reducer(q, "to_apply", [s.element_type for s in inputs])
    if n == 1:
        return operand.without_layout()
    return Shape.tuple(s.without_layout() for s in inputs)
