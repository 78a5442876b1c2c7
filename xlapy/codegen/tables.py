"""Which emitter computes each opcode: the tables the emitter modules fill.

An elemental emitter (`emits`) computes one element of an elementwise op from
its operands' elements; an element generator (`generates`) computes the value
of any instruction at an index, reading its operands through the generator.
Modules register into these tables when imported (`xlapy.codegen` imports the
target-independent ones; a backend imports its own kernels).
"""

from __future__ import annotations

EMITTERS: dict = {}
"""Opcode -> fn(builder, instruction, args, in_types) -> value."""

GENERATORS: dict = {}
"""Opcode -> fn(generator, instruction, index) -> value."""


def emits(*opcodes):
    def register(fn):
        for opcode in opcodes:
            EMITTERS[opcode] = fn
        return fn
    return register


def generates(*opcodes):
    def register(fn):
        for opcode in opcodes:
            GENERATORS[opcode] = fn
        return fn
    return register
