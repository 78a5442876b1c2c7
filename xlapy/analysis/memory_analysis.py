"""Memory totals of a compiled module, under JAX's names, and the no-reuse baseline.

`memory_analysis` sums a buffer assignment the way JAX's
`Compiled.memory_analysis()` reports XLA's (`CompiledMemoryStats`):

* `argument_size_in_bytes`: every entry parameter leaf;
* `output_size_in_bytes`: every leaf of the entry's result, donated or not;
* `alias_size_in_bytes`: the outputs that live in a donated parameter's
  memory (so arguments + outputs - aliases is what the caller holds);
* `temp_size_in_bytes`: the temporary arena, after reuse;
* `generated_code_size_in_bytes`: 0, nothing is generated at this level;
* `peak_memory_in_bytes`: every allocation at once — arguments, constants,
  outputs not living in a parameter, and the arena. An upper bound on what
  runs at one time, since each allocation is live for the whole run.

`no_reuse_bytes` is the baseline buffer assignment is judged against: what
running the entry computation op by op would allocate if nothing were ever
freed or reused.
"""

from __future__ import annotations

from dataclasses import dataclass

from xlapy.analysis.buffer_assignment import BufferAssignment, assign_buffers
from xlapy.analysis.liveness import forwards, has_storage
from xlapy.hlo.ir import HloModule
from xlapy.hlo.opcode import Opcode


@dataclass(frozen=True)
class MemoryAnalysis:
    """Byte totals with JAX's CompiledMemoryStats field names."""

    argument_size_in_bytes: int
    output_size_in_bytes: int
    alias_size_in_bytes: int
    temp_size_in_bytes: int
    generated_code_size_in_bytes: int
    peak_memory_in_bytes: int


def memory_analysis(module: HloModule,
                    assignment: BufferAssignment | None = None) -> MemoryAnalysis:
    """The totals of `assignment` (computed from `module` when not given)."""
    assignment = assignment if assignment is not None else assign_buffers(module)
    entry = module.entry_computation
    arguments = sum(p.shape.byte_size for p in entry.parameters)
    result = entry.root_instruction.shape
    outputs = sum(leaf.byte_size for _, leaf in result.leaves() if has_storage(leaf))
    aliases = sum(result.subshape(d.alias.output_index).byte_size
                  for d in assignment.donations)
    temps = assignment.temp_size
    peak = sum(a.size for a in assignment.allocations)
    return MemoryAnalysis(argument_size_in_bytes=arguments, output_size_in_bytes=outputs,
                          alias_size_in_bytes=aliases, temp_size_in_bytes=temps,
                          generated_code_size_in_bytes=0, peak_memory_in_bytes=peak)


def no_reuse_bytes(module: HloModule, *, bitcast_reshapes: bool = False) -> int:
    """Bytes allocated by running the entry computation op by op with no reuse.

    The sum of the array outputs of its instructions, except parameters and
    constants (they exist before the run) and the ops that only forward an
    operand's memory (get-tuple-element, tuple, bitcast, ...). A fusion counts
    once, at its outputs; what it computes inside never exists. Reshapes count
    unless `bitcast_reshapes` (an op-by-op executor copies them).
    """
    total = 0
    for instruction in module.entry_computation.instructions:
        if instruction.opcode in (Opcode.PARAMETER, Opcode.CONSTANT):
            continue
        if forwards(instruction, bitcast_reshapes):
            continue
        total += sum(leaf.byte_size for _, leaf in instruction.shape.leaves()
                     if has_storage(leaf))
    return total
