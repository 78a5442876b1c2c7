"""How many kernels a module launches: the count XLA's dumps and profiles report.

Instructions that only name memory (parameters, constants, tuples, their
elements, bitcasts) launch nothing; each other instruction of the entry
computation is one kernel — a fusion, a GEMM, a sort. Control flow counts
the kernels of the computations it calls, once each (not per iteration).
"""

from __future__ import annotations

from xlapy.hlo.ir import HloComputation, HloModule
from xlapy.hlo.opcode import Opcode

NOT_KERNELS = frozenset({Opcode.PARAMETER, Opcode.CONSTANT, Opcode.TUPLE,
                         Opcode.GET_TUPLE_ELEMENT, Opcode.BITCAST, Opcode.AFTER_ALL,
                         Opcode.ADD_DEPENDENCY, Opcode.OPTIMIZATION_BARRIER})
_CONTROL_FLOW = frozenset({Opcode.WHILE, Opcode.CONDITIONAL, Opcode.CALL})


def kernel_count(module: HloModule) -> int:
    """Kernels of the entry computation, those of loop bodies and branches included."""
    return _count(module.entry_computation)


def _count(computation: HloComputation) -> int:
    total = 0
    for instruction in computation.instructions:
        if instruction.opcode in _CONTROL_FLOW:
            total += sum(_count(c) for c in instruction.called_computations)
        elif instruction.opcode not in NOT_KERNELS:
            total += 1
    return total
