"""Interpreter rules for data movement: constants, iota, tuples, copies,
bitcast, broadcast, reshape, transpose, reverse, slice, concatenate, pad.

None of these computes on element values, so every dtype (pred, integers,
narrow floats, complex) is handled the same way: NumPy moves the elements and
the result is a fresh array, never a view of an operand or of a constant's
literal, so no later rule can mutate another instruction's value.
"""

from __future__ import annotations

import numpy as np

from xlapy.errors import ExecutionError
from xlapy.hlo.evaluator.rules import rule
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape


def _deep_copy(value):
    """A copy of an array or (nested) tuple of arrays; tokens are returned as is."""
    if isinstance(value, tuple):
        return tuple(_deep_copy(v) for v in value)
    if isinstance(value, np.ndarray):
        return value.copy()
    return value


def _required(instruction: HloInstruction, key: str):
    value = instruction.attr(key)
    if value is None:
        raise ExecutionError(f"{instruction.name} ({instruction.opcode.value}) has no "
                             f"'{key}' attribute")
    return value


@rule(Opcode.CONSTANT)
def constant(instruction, operands, evaluator):
    """The literal, copied so that the module's constant is never mutated."""
    if instruction.literal is None:
        raise ExecutionError(f"constant {instruction.name} has no literal")
    if isinstance(instruction.literal, tuple):
        return _deep_copy(instruction.literal)
    return np.array(instruction.literal, copy=True)


@rule(Opcode.IOTA)
def iota(instruction, operands, evaluator):
    """0, 1, 2, ... along `iota_dimension`, converted from an integer iota as XLA
    defines it for floating point (and by the same conversion for other types)."""
    shape = instruction.shape
    dim = _required(instruction, "iota_dimension")
    count = shape.dimensions[dim]
    counter_shape = [1] * shape.rank
    counter_shape[dim] = count
    counter = np.arange(count, dtype=np.int64).reshape(counter_shape)
    if shape.element_type.is_pred:
        values = counter != 0
    elif shape.element_type.is_floating_or_complex:
        values = counter.astype(np.float64).astype(shape.dtype)  # exact up to 2**53
    else:
        values = counter.astype(shape.dtype)  # wraps modulo 2**bits, as convert does
    return np.broadcast_to(values, shape.dimensions).copy()


@rule(Opcode.TUPLE)
def tuple_(instruction, operands, evaluator):
    return tuple(operands)


@rule(Opcode.GET_TUPLE_ELEMENT)
def get_tuple_element(instruction, operands, evaluator):
    return operands[0][_required(instruction, "index")]


@rule(Opcode.COPY)
def copy(instruction, operands, evaluator):
    return _deep_copy(operands[0])


@rule(Opcode.COPY_START)
def copy_start(instruction, operands, evaluator):
    """`(destination, source, context)`: the copy is complete at once; the context
    (a u32 in XLA) is zero."""
    shape = instruction.shape
    if not shape.is_tuple or len(shape.tuple_shapes) < 2:
        raise ExecutionError(f"copy-start {instruction.name} must have a tuple shape "
                             f"(destination, source, ...), not {shape}")
    extras = tuple(np.zeros(s.dimensions, s.dtype) for s in shape.tuple_shapes[2:])
    return (_deep_copy(operands[0]), operands[0]) + extras


@rule(Opcode.COPY_DONE)
def copy_done(instruction, operands, evaluator):
    return operands[0][0]


@rule(Opcode.DOMAIN, Opcode.ADD_DEPENDENCY)
def passthrough(instruction, operands, evaluator):
    """The first operand unchanged (add-dependency's second operand orders only)."""
    return operands[0]


# -- bitcast ------------------------------------------------------------------------
def _physical_bytes(value: np.ndarray, shape: Shape) -> np.ndarray:
    """`value`'s elements in the order its layout stores them in memory."""
    return np.asarray(np.transpose(value, shape.major_to_minor())).reshape(-1, order="C")


def _from_physical(buffer: np.ndarray, shape: Shape) -> np.ndarray:
    """The array of `shape` whose memory under `shape`'s layout holds `buffer`."""
    order = shape.major_to_minor()
    stored = buffer.reshape([shape.dimensions[d] for d in order])
    return np.asarray(np.transpose(stored, np.argsort(order)), order="C")


@rule(Opcode.BITCAST)
def bitcast(instruction, operands, evaluator):
    """Reinterpret the operand's buffer under the result shape and layout.

    The operand's elements are read in its physical (layout) order and written
    in the result's; with equal row-major layouts this is a reshape. A bitcast
    may also change the element type when the byte sizes agree (XLA's
    simplifier turns same-width bitcast-converts into bitcasts).
    """
    value = operands[0]
    operand_shape = instruction.operands[0].shape
    result_shape = instruction.shape
    buffer = _physical_bytes(value, operand_shape)
    if buffer.dtype != result_shape.dtype:
        if buffer.nbytes != result_shape.element_count * result_shape.dtype.itemsize:
            raise ExecutionError(f"bitcast {instruction.name}: {operand_shape} and "
                                 f"{result_shape} differ in byte size")
        raw = buffer.view(np.uint8)
        buffer = raw != 0 if result_shape.element_type.is_pred else raw.view(result_shape.dtype)
    return _from_physical(buffer, result_shape)


# -- shape-changing movement --------------------------------------------------------
@rule(Opcode.BROADCAST)
def broadcast(instruction, operands, evaluator):
    """Operand dim i becomes result dim `dimensions[i]`; the others are replicated.

    Operand dims of size 1 broadcast too, as XLA's shape inference allows.
    """
    value = operands[0]
    shape = instruction.shape
    dims = tuple(instruction.attr("dimensions", ()))
    if len(dims) != value.ndim:
        raise ExecutionError(f"broadcast {instruction.name}: dimensions={list(dims)} does "
                             f"not name each of the operand's {value.ndim} dims")
    order = np.argsort(dims)  # operand dims in the order they appear in the result
    expanded_shape = [1] * shape.rank
    for i in order:
        expanded_shape[dims[i]] = value.shape[i]
    expanded = np.transpose(value, order).reshape(expanded_shape)
    return np.broadcast_to(expanded, shape.dimensions).copy()


@rule(Opcode.RESHAPE)
def reshape(instruction, operands, evaluator):
    """Row-major reinterpretation of the logical element order (layouts play no part)."""
    return np.reshape(operands[0], instruction.shape.dimensions).copy()


@rule(Opcode.TRANSPOSE)
def transpose(instruction, operands, evaluator):
    """Result dim i is operand dim `dimensions[i]`."""
    return np.transpose(operands[0], _required(instruction, "dimensions")).copy()


@rule(Opcode.REVERSE)
def reverse(instruction, operands, evaluator):
    dims = tuple(instruction.attr("dimensions", ()))
    return np.flip(operands[0], axis=dims).copy()


@rule(Opcode.SLICE)
def slice_(instruction, operands, evaluator):
    """`slice={[start:limit:stride], ...}`, one range per dimension."""
    ranges = _required(instruction, "slice")
    index = tuple(slice(r.start, r.limit, r.stride) for r in ranges)
    return operands[0][index].copy()


@rule(Opcode.CONCATENATE)
def concatenate(instruction, operands, evaluator):
    (dim,) = _required(instruction, "dimensions")
    return np.concatenate(operands, axis=dim)


@rule(Opcode.PAD)
def pad(instruction, operands, evaluator):
    """Interior padding first, then edge padding (negative edges remove elements).

    Operand element i of a dimension lands at `low + i * (interior + 1)` in the
    result; those that land outside the result were cut by negative padding.
    Every other result element is the padding value.
    """
    value, padding_value = operands
    shape = instruction.shape
    config = _required(instruction, "padding").dimensions
    result = np.full(shape.dimensions, padding_value, dtype=shape.dtype)
    kept_in, kept_out = [], []
    for size, out_size, dim in zip(value.shape, shape.dimensions, config):
        source = np.arange(size)
        target = dim.low + source * (dim.interior + 1)
        inside = (target >= 0) & (target < out_size)
        kept_in.append(source[inside])
        kept_out.append(target[inside])
    result[np.ix_(*kept_out)] = value[np.ix_(*kept_in)]
    return result


@rule(Opcode.GET_DIMENSION_SIZE)
def get_dimension_size(instruction, operands, evaluator):
    """The (static) size of dimension `dimensions[0]`, as the result type (s32)."""
    (dim,) = _required(instruction, "dimensions")
    return np.array(operands[0].shape[dim], dtype=instruction.shape.dtype)
