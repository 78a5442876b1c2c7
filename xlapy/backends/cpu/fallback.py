"""The interpreter fallback: an instruction without a native emitter is
evaluated by the interpreter on the buffers in place, called back from the
generated code. Correct for every op the interpreter knows; slow, and
unavailable ahead of time."""

from __future__ import annotations

import ctypes

import numpy as np

from xlapy.codegen.ir_array import minor_to_major
from xlapy.hlo.evaluator.evaluator import Evaluator
from xlapy.hlo.opcode import Opcode as Op


def _memory(address: int, shape) -> np.ndarray:
    """The array of `shape` at `address`, in logical order (a view)."""
    axes = list(reversed(minor_to_major(shape)))
    count = shape.element_count
    nbytes = count * shape.dtype.itemsize
    raw = (ctypes.c_char * max(nbytes, 1)).from_address(address)
    flat = np.frombuffer(raw, dtype=shape.dtype, count=count)
    physical = flat.reshape([shape.dimensions[a] for a in axes])
    return np.transpose(physical, np.argsort(axes))


def _address(executable, table_address: int, s) -> int:
    table = (ctypes.c_void_p * len(executable.assignment.allocations)).from_address(table_address)
    return int(table[s.allocation] or 0) + s.offset


def read_value(executable, table_address, instruction, index=()):
    shape = instruction.shape.subshape(index) if index else instruction.shape
    if shape.is_tuple:
        return tuple(read_value(executable, table_address, instruction, (*index, i))
                     for i in range(len(shape.tuple_shapes)))
    if shape.is_token:
        return None
    s = executable.assignment.slice_of(instruction, index)
    alloc = executable.assignment.allocations[s.allocation]
    if alloc.kind == "constant":
        literal = alloc.values[0].buffer.instruction.literal
        for i in index:
            literal = literal[i]
        return np.asarray(literal, dtype=shape.dtype)
    return _memory(_address(executable, table_address, s), shape).copy()


def write_value(executable, table_address, instruction, value, index=()):
    shape = instruction.shape.subshape(index) if index else instruction.shape
    if shape.is_tuple:
        for i, v in enumerate(value):
            write_value(executable, table_address, instruction, v, (*index, i))
        return
    if shape.is_token:
        return
    s = executable.assignment.slice_of(instruction, index)
    target = _memory(_address(executable, table_address, s), shape)
    target[...] = np.asarray(value, dtype=shape.dtype).reshape(shape.dimensions)


def run_fallback(executable, instruction, table_address: int) -> None:
    evaluator = getattr(executable, "_evaluator", None)
    if evaluator is None:
        evaluator = executable._evaluator = Evaluator()
    operands = [read_value(executable, table_address, o) for o in instruction.operands]
    if instruction.opcode is Op.FUSION:
        value = evaluator.call(instruction.attr("calls"), operands)
    else:
        value = evaluator.evaluate(instruction, operands)
    write_value(executable, table_address, instruction, value)
