"""Shape rules of collectives: all-reduce, all-gather, reduce-scatter,
all-to-all, collective-permute, collective-broadcast, ragged-all-to-all, their
async start/done halves, and replica-id / partition-id.

all-gather and reduce-scatter scale one dimension by the group size. With
explicit replica_groups that is the size of a group; with none it is the
module's replica (or partition) count, which a lone instruction cannot see:
like XLA's verifier, the rule then reads it off the declared shape when given,
and otherwise assumes a single replica (XLA's default replica_count=1). So it
does with a channel_id and no use_global_device_ids, where each replica in a
group stands for all the module's partitions.
"""

from __future__ import annotations

from xlapy.hlo.attributes import IotaReplicaGroups
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.hlo.shape_inference.movement import check_dimension
from xlapy.hlo.shape_inference.query import Query, array, rule, text
from xlapy.hlo.shape_inference.reductions import check_reducer

Op = Opcode


def _groups(q: Query) -> tuple[tuple[int, ...], ...]:
    """The replica groups, each non-empty and no id repeated; () when absent."""
    value = q.attrs.get("replica_groups")
    if value is None:
        return ()
    if isinstance(value, IotaReplicaGroups):
        value = value.groups()
    if not isinstance(value, (tuple, list)) or not all(
            isinstance(g, (tuple, list)) and all(isinstance(i, int) for i in g) for g in value):
        q.fail(f"replica_groups must be a list of groups of ids, got {value!r}")
    ids = [i for g in value for i in g]
    if len(set(ids)) != len(ids):
        q.fail("replica_groups names a replica more than once")
    if any(not g for g in value):
        q.fail("replica_groups holds an empty group")
    return tuple(tuple(g) for g in value)


def _group_size(q: Query) -> int | None:
    """The size every replica group shares, or None when there are no groups."""
    groups = _groups(q)
    if not groups:
        return None
    if len({len(g) for g in groups}) != 1:
        q.fail(f"replica groups must all have the same size, got sizes "
               f"{[len(g) for g in groups]}")
    return len(groups[0])


def _single_or_tuple(shapes: list[Shape]) -> Shape:
    return shapes[0] if len(shapes) == 1 else Shape.tuple(shapes)


def _declared_output(q: Query, start: bool) -> Shape | None:
    """The declared shape of the first gathered/scattered output, if readable."""
    shape = q.declared
    if shape is None:
        return None
    if start:
        if not shape.is_tuple or len(shape.tuple_shapes) != 2:
            return None
        shape = shape.tuple_shapes[1]
    if len(q.operands) > 1:
        if not shape.is_tuple or not shape.tuple_shapes:
            return None
        shape = shape.tuple_shapes[0]
    return shape if shape.is_array else None


def _shard_count(q: Query, dim: int, start: bool, gather: bool) -> int:
    size = _group_size(q)
    spans_partitions = q.attrs.get("channel_id") is not None and \
        not q.attrs.get("use_global_device_ids")
    if size is not None and not spans_partitions:
        return size
    output = _declared_output(q, start)
    operand = q.operands[0]
    if output is None or output.rank <= dim:
        return 1
    big, small = ((output, operand) if gather else (operand, output))
    if small.dimensions[dim] == 0:
        return 1
    return max(1, -(-big.dimensions[dim] // small.dimensions[dim]))


def _check_reducer(q: Query, operands: list[Shape]) -> None:
    """to_apply is a scalar (T, T) -> T reducer for every operand's type T."""
    (element,) = check_reducer(q, "to_apply", [operands[0].element_type])
    for i, shape in enumerate(operands):
        if shape.element_type is not element:
            q.fail(f"operand {i} has element type {shape.element_type.value} but the reducer "
                   f"reduces {element.value}")


@rule(Op.ALL_REDUCE, Op.ALL_REDUCE_START)
def _all_reduce(q: Query) -> Shape:
    q.count_at_least(1)
    operands = q.arrays()
    _groups(q)
    _check_reducer(q, operands)
    return _single_or_tuple([s.without_layout() for s in operands])


@rule(Op.ALL_REDUCE_DONE)
def _all_reduce_done(q: Query) -> Shape:
    q.count(1)
    return q.operands[0].without_layout()


def _gathered(q: Query, start: bool) -> tuple[list[Shape], list[Shape]]:
    q.count_at_least(1)
    operands = q.arrays()
    dim = q.single_dimension()
    for shape in operands:
        check_dimension(q, dim, shape.rank, "all-gather dimension")
    count = _shard_count(q, dim, start, gather=True)
    outputs = []
    for shape in operands:
        dims = list(shape.dimensions)
        dims[dim] *= count
        outputs.append(array(shape.element_type, dims))
    return operands, outputs


@rule(Op.ALL_GATHER)
def _all_gather(q: Query) -> Shape:
    """Concatenates every group member's operand along `dimensions={d}`."""
    return _single_or_tuple(_gathered(q, start=False)[1])


@rule(Op.ALL_GATHER_START)
def _all_gather_start(q: Query) -> Shape:
    """(the operand(s), the gathered result(s))."""
    operands, outputs = _gathered(q, start=True)
    return Shape.tuple([_single_or_tuple([s.without_layout() for s in operands]),
                        _single_or_tuple(outputs)])


@rule(Op.ALL_GATHER_DONE, Op.COLLECTIVE_PERMUTE_DONE)
def _second_of_state(q: Query) -> Shape:
    """The result part of a (input, output, ...) async state."""
    q.count(1)
    return q.tuple_operand(0, 2).tuple_shapes[1].without_layout()


@rule(Op.REDUCE_SCATTER)
def _reduce_scatter(q: Query) -> Shape:
    """Reduces across the group, then each member keeps 1/size of `dimensions={d}`."""
    q.count_at_least(1)
    operands = q.arrays()
    dim = q.single_dimension()
    for shape in operands:
        check_dimension(q, dim, shape.rank, "scatter dimension")
    _check_reducer(q, operands)
    count = _shard_count(q, dim, start=False, gather=False)
    outputs = []
    for i, shape in enumerate(operands):
        dims = list(shape.dimensions)
        if dims[dim] % count:
            q.fail(f"operand {i} dimension {dim} (size {dims[dim]}) is not divisible by the "
                   f"group size {count}")
        dims[dim] //= count
        outputs.append(array(shape.element_type, dims))
    return _single_or_tuple(outputs)


@rule(Op.ALL_TO_ALL)
def _all_to_all(q: Query) -> Shape:
    """Array form (`dimensions={d}`): one operand, split and re-concatenated along d,
    shape unchanged. Tuple form: one operand per group member, a tuple back."""
    q.count_at_least(1)
    operands = q.arrays()
    size = _group_size(q)
    if "dimensions" in q.attrs or "split_dimension" in q.attrs:
        q.count(1)
        dim = (q.single_dimension() if "dimensions" in q.attrs
               else q.integer("split_dimension"))
        check_dimension(q, dim, operands[0].rank, "split dimension")
        if size is not None and operands[0].dimensions[dim] % size:
            q.fail(f"split dimension {dim} (size {operands[0].dimensions[dim]}) is not "
                   f"divisible by the group size {size}")
        return operands[0].without_layout()
    for i, shape in enumerate(operands):
        if not shape.compatible(operands[0]):
            q.fail(f"operand {i} has shape {text(shape)} but operand 0 has "
                   f"{text(operands[0])}; tuple all-to-all needs equal shapes")
    if size is not None and len(operands) != size:
        q.fail(f"tuple all-to-all needs one operand per group member ({size}), "
               f"got {len(operands)}")
    return Shape.tuple(s.without_layout() for s in operands)


def _in_place(q: Query) -> bool:
    """The 4-operand form (input, output, input offsets, output offsets)."""
    return len(q.operands) == 4 and q.operands[2].is_tuple


def _check_pairs(q: Query) -> None:
    """source_target_pairs: non-negative ids, no source or target twice."""
    pairs = q.attrs.get("source_target_pairs", ())
    if not isinstance(pairs, (tuple, list)) or not all(
            isinstance(p, (tuple, list)) and len(p) == 2 and all(isinstance(i, int) for i in p)
            for p in pairs):
        q.fail(f"source_target_pairs must be a list of {{source,target}} pairs, got {pairs!r}")
    if any(i < 0 for p in pairs for i in p):
        q.fail("source_target_pairs holds a negative id")
    if _in_place(q):
        return
    for k, role in ((0, "source"), (1, "target")):
        ids = [p[k] for p in pairs]
        if len(set(ids)) != len(ids):
            q.fail(f"{role} {next(i for i in ids if ids.count(i) > 1)} appears more than once "
                   f"in source_target_pairs")


@rule(Op.COLLECTIVE_PERMUTE)
def _collective_permute(q: Query) -> Shape:
    q.count_at_least(1)
    _check_pairs(q)
    if _in_place(q):
        return q.operands[1].without_layout()
    operands = q.arrays()
    return _single_or_tuple([s.without_layout() for s in operands])


@rule(Op.COLLECTIVE_PERMUTE_START, declared=True)
def _collective_permute_start(q: Query) -> Shape:
    """(input, output, context...): the context part is only declared."""
    declared = q.declared_shape("the context part of collective-permute-start is given by")
    if not declared.is_tuple or len(declared.tuple_shapes) < 2:
        q.fail(f"the result must be a tuple (input, output, context...), "
               f"declared {text(declared)}")
    q.count_at_least(1)
    _check_pairs(q)
    first, second = ((q.operands[0], q.operands[1]) if _in_place(q)
                     else (q.operands[0], q.operands[0]))
    if len(q.operands) in (1, 4):
        for k, want in enumerate((first, second)):
            if not declared.tuple_shapes[k].compatible(want):
                q.fail(f"element {k} of the declared shape is "
                       f"{text(declared.tuple_shapes[k])}, expected {text(want)}")
    return declared.without_layout()


@rule(Op.COLLECTIVE_BROADCAST)
def _collective_broadcast(q: Query) -> Shape:
    q.count_at_least(1)
    return _single_or_tuple([s.without_layout() for s in q.arrays()])


@rule(Op.RAGGED_ALL_TO_ALL)
def _ragged_all_to_all(q: Query) -> Shape:
    """(input, output, input_offsets, send_sizes, output_offsets, recv_sizes) -> output."""
    q.count(6)
    q.array(0, "the input (operand 0)")
    output = q.array(1, "the output (operand 1)")
    first = q.array(2, "input_offsets (operand 2)")
    for i in range(2, 6):
        shape = q.array(i)
        if shape.rank not in (1, 2) or not shape.element_type.is_integral:
            q.fail(f"operand {i} (offsets or sizes) must be an integral array of rank 1 or 2, "
                   f"got {text(shape)}")
        if not shape.compatible(first):
            q.fail(f"offset and size operands must share one shape: operand {i} is "
                   f"{text(shape)}, operand 2 is {text(first)}")
    return output.without_layout()


@rule(Op.REPLICA_ID, Op.PARTITION_ID)
def _id(q: Query) -> Shape:
    q.count(0)
    return array(PrimitiveType.U32, ())
