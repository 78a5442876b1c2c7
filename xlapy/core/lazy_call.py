"""A learned `xnp` call's several nodes recorded as one `call` node.

`xnp.mean` records a reduce, a divide and a reshape; a broadcasting add records
a broadcast and the add. Every recorded node costs Python each step — made,
walked when the cluster is cut, spelled into its structure key — while what
the cluster's pipeline compiles is the same whether the nodes come one by one
or inside a `call` it inlines. So a recipe of several steps becomes one node
calling a computation built once from its steps: its parameters are the
call's array arguments and its scalar operands (a learning rate stays an
operand, so a schedule changing it does not change the cluster's structure);
a reduction's initial value or a pad value is a constant inside, as a trace
makes it.
"""

from __future__ import annotations

import itertools

from xlapy.core.lazy_cluster import INITIAL_VALUE_OPS
from xlapy.core.lazy_graph import array_shape
from xlapy.hlo.builder import ModuleBuilder
from xlapy.hlo.ir import HloComputation, HloInstruction
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape

_NUMBER = itertools.count()


def as_call(steps: list, results: list, avals: list, name: str):
    """(steps, results) of a recipe, its nodes fused into one `call` step; the
    recipe unchanged where it has fewer than two steps.

    `steps` are (instruction, operand specs, weak type) and `results` the
    recipe's result specs (see lazy_replay._Recipe); `avals` the (shape,
    dtype) of each array argument."""
    if len(steps) < 2:
        return steps, results
    builder = ModuleBuilder(name).computation(f"{name}.{next(_NUMBER)}")
    call_operands: list = []
    parameters: dict = {}
    built: list[HloInstruction] = []

    def parameter(key, shape: Shape, spec):
        if key not in parameters:
            parameters[key] = builder.parameter(len(call_operands), shape)
            call_operands.append(spec)
        return parameters[key]

    def operand(spec, opcode: Opcode):
        kind = spec[0]
        if kind == "a":
            return parameter(spec, array_shape(*avals[spec[1]]), spec)
        if kind == "n":
            made = built[spec[1]]
            return made if spec[2] is None else builder.get_tuple_element(made, spec[2])
        if kind == "c":
            value = spec[1]
            if opcode in INITIAL_VALUE_OPS:
                return builder.constant(value)
            return parameter(("c", id(value)), array_shape(value.shape, value.dtype), spec)
        return builder.tuple([operand(s, opcode) for s in spec[1]])

    for instruction, specs, _ in steps:
        built.append(builder.add_instruction(
            instruction.opcode, [operand(s, instruction.opcode) for s in specs],
            shape=instruction.shape, **instruction.attrs))
    outputs = sorted({(r[1], r[2]) for r in results if r[0] == "n"})
    roots = [built[j] if index is None else builder.get_tuple_element(built[j], index)
             for j, index in outputs]
    single = len(roots) == 1
    computation = builder.build(roots[0] if single else builder.tuple(roots))
    template = call_template(computation)
    place = {output: None if single else k for k, output in enumerate(outputs)}
    fused_results = [r if r[0] == "a" else ("n", 0, place[(r[1], r[2])], r[3]) for r in results]
    return [(template, call_operands, False)], fused_results


def call_template(computation: HloComputation) -> HloInstruction:
    """The `call` instruction every replay's node shares (its operands are placeholders:
    a node holds its own)."""
    placeholders = [HloInstruction(Opcode.PARAMETER, p.shape, name=f"operand.{p.parameter_number}",
                                   parameter_number=p.parameter_number)
                    for p in computation.parameters]
    return HloInstruction(Opcode.CALL, computation.root_instruction.shape, placeholders,
                          {"to_apply": computation}, name="call")

