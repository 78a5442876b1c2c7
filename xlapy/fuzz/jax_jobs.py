"""The JAX campaign's own work, run in a sandboxed worker like every execution.

Drawing a program runs JAX op by op, and lowering it compiles and runs it with
XLA: XLA itself can crash doing so (program 8234: its compiler died of SIGFPE
on an integer remainder), which in the campaign's process would end the
campaign. Here a crash is the worker's, and the campaign counts it.
"""

from __future__ import annotations

from xlapy.fuzz.jax_programs import JaxProgram, eager_expected, generate, lower


def draw(number: int) -> tuple[JaxProgram, dict]:
    """Program `number` and its lowered forms with JAX's expected results."""
    program = generate(number)
    return program, lower(program)


def op_by_op(program: JaxProgram) -> list:
    """JAX's results for `program` with each operation compiled alone."""
    return eager_expected(program)
