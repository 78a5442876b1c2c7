"""How the GPU backend lowers each opcode, or why it cannot: one table, as the
CPU's (`backends/cpu/lowering.py`), without a fallback column: an opcode the
GPU does not compute is a `CompileError` naming it and the reason, never a
silent trip to the host.
"""

from __future__ import annotations

from xlapy.backends.cpu import lowering as cpu_lowering
from xlapy.backends.gpu import library_kernels
from xlapy.hlo.evaluator.rules import NOT_INTERPRETED
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode as Op

NO_CODE = cpu_lowering.NO_CODE
CONTROL_FLOW = cpu_lowering.CONTROL_FLOW
KERNEL_OPS = frozenset(cpu_lowering.LOOP_OPS | {Op.FUSION, Op.GATHER, Op.CONVOLUTION,
                                                Op.REDUCE_WINDOW})
"""Ops compiled as one kernel over their output, from their element generators
(a `dot` of GEMM shape runs through cuBLAS where the device has it)."""

_COLLECTIVE = ("a collective: the GPU backend runs one device (no NCCL yet); the CPU backend "
               "runs collectives across processes over MPI")
_NOT_YET = "no GPU emitter yet"
REFUSED: dict[Op, str] = {
    **{op: _COLLECTIVE for op in (
        Op.ALL_GATHER, Op.ALL_GATHER_START, Op.ALL_GATHER_DONE, Op.ALL_REDUCE,
        Op.ALL_REDUCE_START, Op.ALL_REDUCE_DONE, Op.ALL_TO_ALL, Op.COLLECTIVE_BROADCAST,
        Op.COLLECTIVE_PERMUTE, Op.COLLECTIVE_PERMUTE_START, Op.COLLECTIVE_PERMUTE_DONE,
        Op.REDUCE_SCATTER, Op.PARTITION_ID, Op.REPLICA_ID)},
    **{op: "batch normalisation is expanded into elementwise ops and reductions before "
           "code generation by XLA; xlapy's pipeline keeps it, and no GPU emitter takes it"
       for op in (Op.BATCH_NORM_GRAD, Op.BATCH_NORM_INFERENCE, Op.BATCH_NORM_TRAINING)},
    Op.CHOLESKY: f"{_NOT_YET}: XLA:GPU calls cuSOLVER",
    Op.TRIANGULAR_SOLVE: f"{_NOT_YET}: XLA:GPU calls cuBLAS trsm",
    Op.CUSTOM_CALL: "a custom call's target is host code (the evaluator's)",
    Op.FFT: f"{_NOT_YET}: XLA:GPU calls cuFFT",
    Op.RNG: "the stateful `rng` op has no GPU emitter (rng-bit-generator is XLA's way)",
    Op.GET_DIMENSION_SIZE: "a static dimension size: the CPU evaluator returns it; no GPU "
                           "emitter",
    Op.COPY_START: "an asynchronous copy pair: no GPU emitter",
    Op.COPY_DONE: "an asynchronous copy pair: no GPU emitter",
    Op.TOPK: "the topk-decomposer pass rewrites it into a sort before code generation",
}


def refusal(instruction: HloInstruction) -> str:
    """Why the GPU backend cannot compile `instruction`, or "" when it can."""
    op = instruction.opcode
    if op in NOT_INTERPRETED:
        return NOT_INTERPRETED[op]
    if op in REFUSED:
        return REFUSED[op]
    if op in KERNEL_OPS or op in library_kernels.EMITTERS or op in NO_CODE or \
            op in CONTROL_FLOW:
        return ""
    return _NOT_YET


TABLE: dict[Op, str] = {op: (
    "no code" if op in NO_CODE else
    "control flow: thunks the host runs" if op in CONTROL_FLOW else
    "library kernel" if op in library_kernels.EMITTERS else
    "loop, row or column reduction kernel from the element generators" if op in KERNEL_OPS
    else "") for op in Op}
"""Each opcode's native GPU lowering ("" where `REFUSED` or `refusal` says why not)."""
