"""Kernels that are not one loop over the output: they come first, and say
whether they took the instruction (False: the generic loop kernel runs).

Each family lives in `kernels/` and registers itself with `@special(...)`;
`kernels/__init__.py` imports every family.
"""

from __future__ import annotations

SPECIAL: dict = {}
"""Opcode -> fn(codegen, instruction) -> whether it emitted the instruction."""


def special(*opcodes):
    def register(fn):
        for opcode in opcodes:
            SPECIAL[opcode] = fn
        return fn
    return register


def emit_special(cg, instruction) -> bool:
    fn = SPECIAL.get(instruction.opcode)
    return bool(fn and fn(cg, instruction))
