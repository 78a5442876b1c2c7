"""Shrinking a failing module to a small reproducer (what creduce does for C).

A campaign's failures are modules of hundreds of instructions; a regression
test wants the few that matter. `reduce_module` takes a module, its
arguments and a predicate `is_bad(text, args)` (run in a sandbox: the
failure may be a hang or a crash) and applies moves while the failure stays:

0. inline: calls are inlined, so the entry holds the work;
1. cut: the entry's root becomes a tuple of the first k instructions, the
   smallest k found by bisection; then the last of them alone;
2. isolate: an entry instruction's operands become parameters, fed with the
   values the interpreter computes for them, so the instruction stands alone;
   a tuple root then keeps only the elements the failure needs;
3. simplify: any instruction, in any computation, becomes one of its
   operands of the same shape or a constant zero of its shape;

each followed by dead-code elimination, and each candidate checked by the
verifier before the predicate sees it. Moves 1 and 2 keep the values that
reach the failing instruction, so a loop's trip count or an index stays as
it was; move 3 does not, and only stays if the predicate still holds.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np

from xlapy.errors import XlapyError
from xlapy.hlo import parse
from xlapy.hlo.evaluator.evaluator import Evaluator
from xlapy.hlo.ir import HloInstruction, HloModule
from xlapy.hlo.mutation import NameUniquer, replace_uses
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.shape import Shape
from xlapy.hlo.verifier import verify
from xlapy.passes.call_inliner import CallInliner
from xlapy.passes.dce import HloDCE

Predicate = Callable[[str, list], bool]


class Reducer:
    """Applies the moves of the module docstring; `log` sees one line per step."""

    def __init__(self, is_bad: Predicate, log: Callable[[str], None] = lambda s: None,
                 max_checks: int = 400):
        self.is_bad = is_bad
        self.log = log
        self.max_checks = max_checks
        self.checks = 0

    def reduce(self, text: str, args: list) -> tuple[str, list]:
        module = parse(text)
        best = (module, list(args))
        for move in (self._inline, self._cut, self._isolate, self._prune_root,
                     self._simplify):
            if self.checks >= self.max_checks:
                break
            best = move(*best)
        return _text(best[0]), best[1]

    # -- the predicate ----------------------------------------------------------------
    def _bad(self, module: HloModule, args: list) -> bool:
        if self.checks >= self.max_checks:
            return False
        try:
            _dce(module)
            verify(module)
        except (XlapyError, ValueError, KeyError):
            return False
        self.checks += 1
        return bool(self.is_bad(_text(module), args))

    # -- move 0: calls inlined, so the entry holds the work -----------------------------
    def _inline(self, module: HloModule, args: list):
        candidate = copy.deepcopy(module)
        if CallInliner().run(candidate) and self._bad(candidate, args):
            self.log("inline: calls inlined")
            return candidate, args
        return module, args

    # -- move 1: cut the entry after its first k instructions ---------------------------
    def _cut(self, module: HloModule, args: list):
        body = _cuttable(module)
        if len(body) <= 1:
            return module, args

        def prefix(k: int) -> HloModule:
            candidate = copy.deepcopy(module)
            chosen = _cuttable(candidate)[:k]
            _set_root(candidate, chosen[0] if k == 1 else _tuple_of(candidate, chosen))
            return candidate

        low, high = 0, len(body)   # prefix(high) is bad (the whole module, as a tuple) or not
        if not self._bad(prefix(high), args):
            self.log("cut: the entry as a tuple of all its values no longer fails")
            return self._cut_single(module, args)
        while high - low > 1:
            mid = (low + high) // 2
            if self._bad(prefix(mid), args):
                high = mid
            else:
                low = mid
        self.log(f"cut: the first {high} of {len(body)} entry instructions fail")
        single = prefix(1) if high == 1 else None
        if single is None:
            candidate = copy.deepcopy(module)
            _set_root(candidate, _cuttable(candidate)[high - 1])
            if self._bad(candidate, args):
                single = candidate
        return (single, args) if single is not None else (prefix(high), args)

    def _cut_single(self, module: HloModule, args: list):
        """Without bisection: the earliest entry instruction that fails as the root."""
        for k in range(len(_cuttable(module))):
            candidate = copy.deepcopy(module)
            _set_root(candidate, _cuttable(candidate)[k])
            if self._bad(candidate, args):
                self.log(f"cut: entry instruction {k} fails as the root")
                return candidate, args
        return module, args

    # -- move 2: operands of the entry's instructions become parameters ----------------
    def _isolate(self, module: HloModule, args: list):
        values = _entry_values(module, args)
        if values is None:
            return module, args
        progress = True
        while progress and self.checks < self.max_checks:
            progress = False
            for name in [i.name for i in reversed(_cuttable(module))]:
                candidate = copy.deepcopy(module)
                entry = candidate.entry_computation
                try:
                    target = entry.instruction(name)
                except KeyError:
                    continue
                value = values.get(name)
                if value is None or target is entry.root_instruction or \
                        target.opcode is Opcode.PARAMETER:
                    continue
                new_args = args + [value]
                _to_parameter(candidate, target, len(args))
                if self._bad(candidate, new_args):
                    module, args = _drop_unused_parameters(candidate, new_args)
                    self.log(f"isolate: {name} is now a parameter "
                             f"({len(_cuttable(module))} instructions left)")
                    progress = True
                    break
        return module, args

    # -- move 2b: a tuple root keeps only the elements the failure needs ---------------
    def _prune_root(self, module: HloModule, args: list):
        """Chunks of the root tuple's elements dropped (halves, then quarters, ...,
        then single elements), each drop kept when the failure stays."""
        root = module.entry_computation.root_instruction
        if root.opcode is not Opcode.TUPLE:
            return module, args
        kept = list(range(len(root.operands)))
        chunk = max(1, len(kept) // 2)
        while chunk >= 1 and len(kept) > 1 and self.checks < self.max_checks:
            start = 0
            while start < len(kept) and len(kept) > 1:
                trial = kept[:start] + kept[start + chunk:]
                candidate = _keep_root_elements(module, trial)
                if trial and self._bad(candidate, args):
                    kept = trial
                else:
                    start += chunk
            chunk //= 2
        if len(kept) < len(root.operands):
            self.log(f"prune: {len(kept)} of {len(root.operands)} root elements kept")
            return _drop_unused_parameters(_keep_root_elements(module, kept), args)
        return module, args

    # -- move 3: simplify anywhere --------------------------------------------------------
    def _simplify(self, module: HloModule, args: list):
        """Sweeps over every instruction, each replacement kept when the failure
        stays; sweeps again while one made progress."""
        progress = True
        while progress and self.checks < self.max_checks:
            progress = False
            for comp_name, name in _all_instructions(module):
                for replacement in ("operand", "zero"):
                    candidate = copy.deepcopy(module)
                    try:
                        if not _replace(candidate, comp_name, name, replacement):
                            continue
                    except KeyError:   # removed by an earlier step of this sweep
                        break
                    if self._bad(candidate, args):
                        module, args = _drop_unused_parameters(candidate, args)
                        self.log(f"simplify: {name} in {comp_name} -> {replacement}")
                        progress = True
                        break
        return module, args


def reduce_module(text: str, args: list, is_bad: Predicate, log=lambda s: None,
                  max_checks: int = 400) -> tuple[str, list]:
    """The smallest failing (module text, arguments) the moves reach."""
    return Reducer(is_bad, log, max_checks).reduce(text, args)


# -- helpers ------------------------------------------------------------------------------
def _text(module: HloModule) -> str:
    return module.to_text()


def _dce(module: HloModule) -> None:
    HloDCE().run(module)


def _cuttable(module: HloModule) -> list[HloInstruction]:
    """Entry instructions that may become (part of) the root, in order."""
    return [i for i in module.entry_computation.instructions
            if i.opcode is not Opcode.PARAMETER and not i.shape.is_token
            and not _has_token(i.shape)]


def _has_token(shape: Shape) -> bool:
    if shape.is_tuple:
        return any(_has_token(s) for s in shape.tuple_shapes)
    return shape.is_token


def _forget_layout(module: HloModule) -> None:
    """The header's entry layout and aliasing describe the old signature."""
    for key in ("entry_computation_layout", "input_output_alias", "buffer_donor"):
        module.attributes.pop(key, None)


def _set_root(module: HloModule, root: HloInstruction) -> None:
    module.entry_computation.root_instruction = root
    _forget_layout(module)


def _tuple_of(module: HloModule, values: list[HloInstruction]) -> HloInstruction:
    entry = module.entry_computation
    shape = Shape.tuple([v.shape for v in values])
    t = HloInstruction(Opcode.TUPLE, shape, values, name=NameUniquer(module)("cut"))
    entry.add_instruction(t)
    return t


def _keep_root_elements(module: HloModule, kept: list[int]) -> HloModule:
    """A copy whose root tuple holds only the elements at `kept` (one: that element)."""
    candidate = copy.deepcopy(module)
    entry = candidate.entry_computation
    elements = [entry.root_instruction.operands[i] for i in kept]
    _set_root(candidate, elements[0] if len(elements) == 1 else _tuple_of(candidate, elements))
    return candidate


def _entry_values(module: HloModule, args: list) -> dict[str, object] | None:
    """Every entry instruction's value under the interpreter (None if it fails)."""
    evaluator = Evaluator()
    values: dict[str, object] = {}
    try:
        for instruction in module.entry_computation.post_order():
            if instruction.opcode is Opcode.PARAMETER:
                values[instruction.name] = args[instruction.parameter_number]
            else:
                values[instruction.name] = evaluator.evaluate(
                    instruction, [values[o.name] for o in instruction.operands])
    except XlapyError:
        return None
    return {k: v for k, v in values.items() if isinstance(v, np.ndarray)}


def _to_parameter(module: HloModule, target: HloInstruction, number: int) -> None:
    entry = module.entry_computation
    parameter = HloInstruction(Opcode.PARAMETER, target.shape, name=f"{target.name}.value",
                               parameter_number=number)
    parameter.parent = entry
    entry.instructions.insert(0, parameter)
    replace_uses(entry, target, parameter)
    _forget_layout(module)


def _drop_unused_parameters(module: HloModule, args: list) -> tuple[HloModule, list]:
    """Parameters nothing reads are removed and the rest renumbered."""
    _dce(module)
    entry = module.entry_computation
    used = {id(o) for i in entry.instructions for o in i.operands}
    used.add(id(entry.root_instruction))
    keep, new_args = [], []
    for parameter in entry.parameters:
        if id(parameter) in used:
            keep.append(parameter)
            new_args.append(args[parameter.parameter_number])
    entry.instructions = [i for i in entry.instructions
                          if i.opcode is not Opcode.PARAMETER or i in keep]
    for number, parameter in enumerate(keep):
        parameter.parameter_number = number
    _forget_layout(module)
    return module, new_args


def _all_instructions(module: HloModule) -> list[tuple[str, str]]:
    return [(c.name, i.name) for c in module.computations for i in c.instructions
            if i.opcode is not Opcode.PARAMETER and not _has_token(i.shape)]


def _replace(module: HloModule, comp_name: str, name: str, how: str) -> bool:
    """Replace instruction `name` by a same-shaped operand or by zeros; False if no
    such replacement exists."""
    computation = module.computation(comp_name)
    target = computation.instruction(name)
    if how == "operand":
        same = [o for o in target.operands if o.shape == target.shape]
        if not same:
            return False
        replace_uses(computation, target, same[0])
        return True
    if target.shape.is_tuple or target.opcode is Opcode.CONSTANT:
        return False
    zero = np.zeros(target.shape.dimensions, target.shape.dtype)
    constant = HloInstruction(Opcode.CONSTANT, target.shape, name=f"{name}.zero",
                              literal=zero)
    constant.parent = computation
    computation.instructions.insert(computation.instructions.index(target), constant)
    replace_uses(computation, target, constant)
    return True
