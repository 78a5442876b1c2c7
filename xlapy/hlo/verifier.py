"""The HLO verifier: checks a module's structure and every instruction's contract
and shape, and raises a VerifierError naming the first instruction that is wrong.

What is checked, in order:
- the module: an entry computation that belongs to it, unique computation names,
  callees listed before their callers, no recursion, an `entry_computation_layout`
  that matches the entry's signature;
- each computation: a root among its instructions, parameters numbered 0..n-1,
  instruction names unique across the module, operands defined earlier in the same
  computation (so the order is valid and there are no cycles);
- each instruction (`check_instruction`): a well-formed shape and layout, the
  operand count, required attributes with the Python types of `attributes.py`,
  a constant's literal, called computations that belong to the module, and the
  result shape against `shape_inference.check_shape`, whose rules also check
  each called computation's signature against its call site.

The builder runs the per-instruction checks as each instruction is added, so a
bad program is reported at the call that made it.
"""

from __future__ import annotations

from xlapy.errors import VerifierError
from xlapy.hlo.attributes import ComputationLayout
from xlapy.hlo.ir import HloComputation, HloInstruction, HloModule
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.hlo.verifier_rules import (
    check_attributes,
    check_operand_count,
    check_result_shape,
    shape_problem,
)

__all__ = ["check_contract", "check_instruction", "verify"]


def verify(module: HloModule) -> None:
    """Raise VerifierError for the first broken rule in `module`; return None if valid.

    An error about an instruction the parser read names its line and column; one
    about no instruction in a parsed module, the module's header."""
    if not isinstance(module, HloModule):
        raise VerifierError(f"expected an HloModule, got {type(module).__name__}")
    try:
        _verify(module)
    except VerifierError as error:
        position = getattr(module, "source_position", None)
        if error.instruction is None and not error.line and position:
            error.line, error.column = position
        raise


def _verify(module: HloModule) -> None:
    _check_module(module)
    names: dict[str, HloInstruction] = {}
    for computation in module.computations:
        _check_computation(computation, names)
    members = {id(c) for c in module.computations}
    for computation in module.computations:
        for instruction in computation.instructions:
            check_instruction(instruction, members)


def check_instruction(instruction: HloInstruction, module_members: set[int] | None = None) -> None:
    """Every per-instruction check. `module_members` (ids of the module's computations),
    when given, is where each called computation must be."""
    check_contract(instruction)
    if module_members is not None:
        for callee in instruction.called_computations:
            if id(callee) not in module_members:
                raise VerifierError(f"calls computation {callee.name}, which is not in the "
                                    "module", instruction)
    check_result_shape(instruction)


def check_contract(instruction: HloInstruction) -> None:
    """What must hold before any shape rule can run: a well-formed declared shape,
    operands that are instructions, the operand count, the attributes, a constant's
    literal and a parameter's number."""
    if not isinstance(instruction.opcode, Opcode):
        raise VerifierError(f"instruction {instruction.name} has opcode "
                            f"{instruction.opcode!r}, not an Opcode")
    problem = shape_problem(instruction.shape)
    if problem:
        raise VerifierError(f"result shape {_show(instruction.shape)}: {problem}", instruction)
    for i, operand in enumerate(instruction.operands):
        if not isinstance(operand, HloInstruction):
            raise VerifierError(f"operand {i} is a {type(operand).__name__}, not an "
                                "HloInstruction", instruction)
    check_operand_count(instruction)
    check_attributes(instruction)
    if instruction.opcode is Opcode.CONSTANT:
        _check_literal(instruction)
    if instruction.opcode is Opcode.PARAMETER:
        number = instruction.parameter_number
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            raise VerifierError(f"parameter number must be an int >= 0, got {number!r}",
                                instruction)


# -- module ------------------------------------------------------------------------------
def _check_module(module: HloModule) -> None:
    where = f"module {module.name}"
    seen: dict[str, HloComputation] = {}
    for computation in module.computations:
        if not isinstance(computation, HloComputation):
            raise VerifierError(f"{where}: computations holds a {type(computation).__name__}")
        if computation.name in seen:
            raise VerifierError(f"{where}: two computations are named {computation.name}")
        seen[computation.name] = computation
    entry = module.entry_computation
    if entry is None:
        raise VerifierError(f"{where}: no entry computation")
    if not any(c is entry for c in module.computations):
        raise VerifierError(f"{where}: entry computation {entry.name} is not one of the "
                            "module's computations")
    _check_call_graph(module)
    _check_entry_layout(module, entry)


def _check_call_graph(module: HloModule) -> None:
    """Callees come before their callers in `module.computations` (the print order the
    parser needs), which also rules out recursion; a cycle is reported as such.
    Only an out-of-order edge pays for the cycle search."""
    position = {id(c): i for i, c in enumerate(module.computations)}
    for computation in module.computations:
        for instruction in computation.instructions:
            for callee in _callees(instruction):
                if id(callee) not in position:
                    continue  # reported by check_instruction, which names the caller
                if position[id(callee)] < position[id(computation)]:
                    continue
                cycle = _find_cycle(callee, computation)
                if cycle:
                    raise VerifierError(f"module {module.name}: computation {computation.name} "
                                        "calls itself (" + " -> ".join(cycle) + ")")
                raise VerifierError(
                    f"called computation {callee.name} comes after its caller "
                    f"{computation.name} in module.computations; callees must come first",
                    instruction)


def _find_cycle(start: HloComputation, target: HloComputation) -> list[str]:
    """The names along a call path from `target` through `start` back to `target`."""
    stack = [(start, [target.name, start.name])]
    seen: set[int] = set()
    while stack:
        computation, path = stack.pop()
        if computation is target:
            return path
        if id(computation) in seen:
            continue
        seen.add(id(computation))
        for instruction in computation.instructions:
            stack.extend((c, path + [c.name]) for c in _callees(instruction))
    return []


def _callees(instruction) -> list[HloComputation]:
    """Called computations of a possibly malformed instruction (whose own checks,
    which run later, report what is wrong with it)."""
    if not isinstance(instruction, HloInstruction) or not isinstance(instruction.attrs, dict):
        return []
    return instruction.called_computations


def _check_entry_layout(module: HloModule, entry: HloComputation) -> None:
    layout = module.attributes.get("entry_computation_layout")
    if layout is None:
        return
    where = f"module {module.name}: entry_computation_layout"
    if not isinstance(layout, ComputationLayout):
        raise VerifierError(f"{where} is a {type(layout).__name__}, not a ComputationLayout")
    params = [p for p in entry.instructions
              if isinstance(p, HloInstruction) and p.opcode is Opcode.PARAMETER]
    params.sort(key=lambda p: p.parameter_number if isinstance(p.parameter_number, int) else -1)
    if len(layout.parameter_shapes) != len(params):
        raise VerifierError(f"{where} has {len(layout.parameter_shapes)} parameters but entry "
                            f"computation {entry.name} has {len(params)}")
    for i, shape in enumerate((*layout.parameter_shapes, layout.result_shape)):
        problem = shape_problem(shape)
        if problem:
            part = f"parameter {i}" if i < len(params) else "result"
            raise VerifierError(f"{where} {part} {_show(shape)}: {problem}")
    for i, (expected, param) in enumerate(zip(layout.parameter_shapes, params)):
        problem = _layout_mismatch(expected, param.shape)
        if problem:
            raise VerifierError(f"{where} parameter {i} is {_show(expected)} but parameter "
                                f"{param.name} is {_show(param.shape)} ({problem})")
    root = entry.root_instruction
    if root is not None:
        problem = _layout_mismatch(layout.result_shape, root.shape)
        if problem:
            raise VerifierError(f"{where} result is {_show(layout.result_shape)} but the root "
                                f"{root.name} is {_show(root.shape)} ({problem})")


def _layout_mismatch(expected, actual) -> str:
    """Why two shapes disagree (types/dims, or layouts where both have one), or ''."""
    if not isinstance(expected, Shape) or not isinstance(actual, Shape):
        return "not a Shape"
    if not expected.compatible(actual):
        return "element types or dimensions differ"
    if expected.is_tuple:
        for a, b in zip(expected.tuple_shapes, actual.tuple_shapes):
            problem = _layout_mismatch(a, b)
            if problem:
                return problem
        return ""
    if expected.layout is not None and actual.layout is not None and \
            expected.layout.minor_to_major != actual.layout.minor_to_major:
        return "layouts differ"
    return ""


# -- computation -------------------------------------------------------------------------
def _check_computation(computation: HloComputation, names: dict[str, HloInstruction]) -> None:
    """Root, parameter numbering, unique names and operand order; `names` collects the
    module's instruction names across computations."""
    where = f"computation {computation.name}"
    position: dict[int, int] = {}
    for index, instruction in enumerate(computation.instructions):
        if not isinstance(instruction, HloInstruction):
            raise VerifierError(f"{where}: instructions holds a {type(instruction).__name__}")
        if not isinstance(instruction.opcode, Opcode):
            raise VerifierError(f"{where}: instruction {instruction.name} has opcode "
                                f"{instruction.opcode!r}, not an Opcode")
        if id(instruction) in position:
            raise VerifierError(f"{where}: instruction {instruction.name} is listed twice")
        if instruction.parent is not computation:
            owner = instruction.parent.name if instruction.parent is not None else "none"
            raise VerifierError(f"{where}: instruction {instruction.name} is listed here but its "
                                f"parent is computation {owner}")
        if instruction.name in names:
            raise VerifierError(f"instruction name {instruction.name} is used twice in the "
                                "module (names must be unique across computations)", instruction)
        names[instruction.name] = instruction
        position[id(instruction)] = index
        _check_operand_order(instruction, index, position)
    root = computation.root_instruction
    if root is None:
        raise VerifierError(f"{where} has no root instruction")
    if id(root) not in position:
        raise VerifierError(f"{where}: root {getattr(root, 'name', root)!r} is not one of its "
                            "instructions")
    _check_parameter_numbers(computation)


def _check_operand_order(instruction: HloInstruction, index: int,
                         position: dict[int, int]) -> None:
    for i, operand in enumerate(instruction.operands):
        if not isinstance(operand, HloInstruction):
            raise VerifierError(f"operand {i} is a {type(operand).__name__}, not an "
                                "HloInstruction", instruction)
        if id(operand) in position and position[id(operand)] < index:
            continue
        if operand is instruction:
            raise VerifierError(f"operand {i} is the instruction itself (a cycle)", instruction)
        parent = operand.parent
        if parent is not instruction.parent:
            owner = f"computation {parent.name}" if parent is not None else "no computation"
            raise VerifierError(f"operand {i} ({operand.name}) belongs to {owner}; operands "
                                "must be in the same computation", instruction)
        raise VerifierError(f"operand {i} ({operand.name}) comes later in the instruction list; "
                            "operands must be defined before their users (no cycles)", instruction)


def _check_parameter_numbers(computation: HloComputation) -> None:
    by_number: dict[int, HloInstruction] = {}
    for instruction in computation.instructions:
        if instruction.opcode is not Opcode.PARAMETER:
            continue
        number = instruction.parameter_number
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            raise VerifierError(f"parameter number must be an int >= 0, got {number!r}",
                                instruction)
        if number in by_number:
            raise VerifierError(f"parameter number {number} is also used by "
                                f"{by_number[number].name}; each number appears once",
                                instruction)
        by_number[number] = instruction
    expected = set(range(len(by_number)))
    if set(by_number) != expected:
        missing = sorted(expected - set(by_number))
        numbers = sorted(by_number)
        raise VerifierError(f"computation {computation.name}: parameter numbers {numbers} are "
                            f"not 0..{len(by_number) - 1} (missing {missing})")


# -- instruction details -----------------------------------------------------------------
def _check_literal(instruction: HloInstruction) -> None:
    problem = _literal_problem(instruction.literal, instruction.shape)
    if problem:
        raise VerifierError(f"literal does not match shape {_show(instruction.shape)}: {problem}",
                            instruction)


def _literal_problem(literal, shape: Shape, index: tuple[int, ...] = ()) -> str:
    at = f" at tuple index {list(index)}" if index else ""
    if shape.is_tuple:
        if not isinstance(literal, tuple) or len(literal) != len(shape.tuple_shapes):
            return f"expected a tuple of {len(shape.tuple_shapes)} values{at}, " \
                   f"got {type(literal).__name__}"
        for i, (value, sub) in enumerate(zip(literal, shape.tuple_shapes)):
            problem = _literal_problem(value, sub, index + (i,))
            if problem:
                return problem
        return ""
    if not shape.is_array:
        return f"a constant cannot have shape {shape}"
    if not hasattr(literal, "dtype") or not hasattr(literal, "shape"):
        return f"expected a NumPy array{at}, got {type(literal).__name__}"
    if literal.dtype != shape.dtype:
        return f"literal dtype {literal.dtype}{at} is not {shape.element_type.value} " \
               f"({shape.dtype})"
    if tuple(literal.shape) != shape.dimensions:
        return f"literal dimensions {list(literal.shape)}{at} are not {list(shape.dimensions)}"
    return ""


def _show(shape) -> str:
    """A shape's text, or a placeholder for something malformed posing as one."""
    try:
        return shape.to_text()
    except Exception:  # a malformed shape is being reported; never crash on it
        return f"<malformed {type(shape).__name__}>"
