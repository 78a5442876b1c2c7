"""Numerics bisection: which instruction makes a compiled module differ from
the interpreter, and the smallest module that still shows it.

`find_first_mismatch` compiles the module with every intermediate value of
its entry computation as an extra output (a tuple root of the original root
and one probe per instruction), runs it on the tested backend and on the
reference, and returns the first instruction in schedule order whose value
leaves the tolerance, with the fused kernel it was compiled into, its
operands' values and the error. `minimize` then shrinks the module around
it: the module cut at that instruction, then, one instruction at a time,
each value replaced by a parameter fed the reference's value, kept where the
mismatch stays. What remains is written as HLO text plus an .npz of its
inputs, which `xlapy run-hlo FILE --inputs NPZ` replays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xlapy.backends import get_backend
from xlapy.hlo import parse
from xlapy.hlo.ir import HloInstruction, HloModule
from xlapy.hlo.mutation import replace_uses
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.passes.dce import remove_unreachable_computations
from xlapy.passes.default_pipeline import optimize
from xlapy.report.collect import kernel_label
from xlapy.tools.compare import ErrorReport, compare, output_errors

_NOT_PROBED = (Opcode.PARAMETER, Opcode.CONSTANT)
_MAX_TRIES = 200
"""Compilations `minimize` may spend trying to shrink a module."""


@dataclass
class Finding:
    """The first instruction whose compiled value is wrong."""

    instruction: str          # its HLO text
    name: str
    position: int             # in schedule order, 1-based, among the entry's instructions
    total: int
    report: ErrorReport
    kernel: str               # the fused kernel (or instruction) it was compiled into
    operands: list[tuple[str, str]]   # (name, a short rendering of the reference's value)
    values: dict              # instruction name -> the reference's value (for minimize)

    def __str__(self) -> str:
        lines = [f"first mismatch in schedule order: instruction {self.position} of "
                 f"{self.total}", f"  {self.instruction}",
                 f"  compiled into: {self.kernel}", f"  error: {self.report}"]
        lines += [f"  operand {name}: {value}" for name, value in self.operands]
        return "\n".join(lines)


def find_first_mismatch(text: str, arguments: list, backend: str | None, reference: str,
                        atol: float, rtol: float, optimize_first: bool = True) -> Finding | None:
    """The first wrong instruction, or None when every probed value agrees."""
    probed, probes = _probe_module(text)
    expected = get_backend(reference).compile(probed).execute(*arguments)
    tested, _ = _probe_module(text)
    if optimize_first:
        optimize(tested)
    results = get_backend(backend).compile(tested).execute(*arguments)
    values = {p.name: np.asarray(v) for p, v in zip(probes, expected[1:])}
    order = [i.name for i in parse(text).entry_computation.instructions]
    for probe, got, want in zip(probes, results[1:], expected[1:]):
        report = output_errors(got, want, atol, rtol)
        if report.close:
            continue
        return Finding(probe.to_text(), probe.name, order.index(probe.name) + 1, len(order),
                       report, _kernel_of(tested, probe.name),
                       [(o.name, _render(values.get(o.name), o, arguments))
                        for o in dict.fromkeys(probe.operands)], values)
    return None


def _probe_module(text: str) -> tuple[HloModule, list[HloInstruction]]:
    """The module with a tuple root of (its root, every probed instruction)."""
    module = parse(text)
    _drop_layout_attributes(module)
    entry = module.entry_computation
    probes = [i for i in entry.instructions
              if i.shape.is_array and i.opcode not in _NOT_PROBED]
    root = entry.root_instruction
    outputs = [root, *probes]
    entry.add_instruction(HloInstruction(Opcode.TUPLE, Shape.tuple([o.shape for o in outputs]),
                                         outputs, {}, name="bisect.probes"))
    return module, probes


def _drop_layout_attributes(module: HloModule) -> None:
    for name in ("entry_computation_layout", "input_output_alias", "is_scheduled"):
        module.attributes.pop(name, None)


def _kernel_of(module: HloModule, name: str) -> str:
    """`fusion.3 (kLoop: exponential, multiply, tanh)` holding `name` after optimisation."""
    for computation in module.computations:
        if not any(i.name == name for i in computation.instructions):
            continue
        if computation is module.entry_computation:
            return f"{name} (not fused)"
        for caller in module.computations:
            for instruction in caller.instructions:
                if computation in instruction.called_computations:
                    return f"{instruction.name} ({kernel_label(instruction)})"
    return f"{name} (optimised away)"


def _render(value, operand: HloInstruction, arguments: list) -> str:
    if value is None and operand.opcode is Opcode.PARAMETER:
        value = arguments[operand.parameter_number]
    if value is None:
        return operand.to_text()
    array = np.asarray(value)
    body = np.array2string(array.ravel()[:6], precision=6, separator=", ")
    return f"{operand.shape.to_text(False)} {body}{' ...' if array.size > 6 else ''}"


# -- minimisation -------------------------------------------------------------------------------
def minimize(text: str, arguments: list, finding: Finding, backend: str | None,
             reference: str, atol: float, rtol: float,
             optimize_first: bool = True) -> tuple[str, dict[str, np.ndarray]]:
    """(HLO text, inputs by parameter name) of the smallest module found that
    still mismatches: the module cut at the finding, operands replaced by
    parameters where the mismatch stays."""
    original = parse(text).entry_computation
    by_name = {i.name: i for i in original.instructions}
    replaced: list[str] = []
    tries = 0
    for instruction in original.instructions:
        name = instruction.name
        if name == finding.name or instruction.opcode in _NOT_PROBED or \
                name not in finding.values or tries >= _MAX_TRIES:
            continue
        if name not in _cone(by_name[finding.name], stop=set(replaced)):
            continue   # not needed, or already cut off by an earlier replacement
        tries += 1
        module, inputs = _cut(text, finding.name, replaced + [name], arguments, finding.values)
        if _mismatches(module, inputs, backend, reference, atol, rtol, optimize_first):
            replaced.append(name)
    module, inputs = _cut(text, finding.name, replaced, arguments, finding.values)
    return module.to_text(), inputs


def _cone(instruction: HloInstruction, stop: set[str] = frozenset()) -> set[str]:
    """The names of `instruction` and what it depends on, not looking past `stop`."""
    seen: set[str] = set()
    stack = [instruction]
    while stack:
        i = stack.pop()
        if i.name not in seen:
            seen.add(i.name)
            if i.name not in stop:
                stack.extend(i.operands)
    return seen


def _cut(text: str, root: str, replaced: list[str], arguments: list, values: dict):
    """The entry cut at `root`, each `replaced` instruction a new parameter fed its
    value from `values`; and the inputs by parameter name."""
    module = parse(text)
    _drop_layout_attributes(module)
    entry = module.entry_computation
    by_name = {i.name: i for i in entry.instructions}
    for name in replaced:
        old = by_name[name]
        new = HloInstruction(Opcode.PARAMETER, old.shape, [], {}, name=name, parameter_number=0)
        new.parent = entry
        entry.instructions[entry.instructions.index(old)] = new
        replace_uses(entry, old, new)
        by_name[name] = new
    keep = _cone(by_name[root])
    entry.instructions = [i for i in entry.instructions if i.name in keep]
    entry.root_instruction = by_name[root]
    inputs: dict[str, np.ndarray] = {}
    for number, parameter in enumerate(i for i in entry.instructions
                                       if i.opcode is Opcode.PARAMETER):
        inputs[parameter.name] = values[parameter.name] if parameter.name in replaced \
            else np.asarray(arguments[parameter.parameter_number])
        parameter.parameter_number = number
    remove_unreachable_computations(module)
    return module, inputs


def _mismatches(module: HloModule, inputs: dict, backend, reference, atol, rtol,
                optimize_first: bool) -> bool:
    text = module.to_text()
    arguments = list(inputs.values())
    expected = get_backend(reference).compile(parse(text)).execute(*arguments)
    tested = parse(text)
    if optimize_first:
        optimize(tested)
    got = get_backend(backend).compile(tested).execute(*arguments)
    return not compare(got, expected, atol, rtol)
