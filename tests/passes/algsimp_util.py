"""Helpers for the algebraic simplifier's tests: run the pass on HLO text,
verify, compare the result with expected HLO text, and compare interpreter
results before and after on random inputs.

Expected text is compared by structure: both modules are reduced to their
live instructions in post order and renamed by position, so the test states
which graph comes out, not which names the pass happened to pick.
"""

from __future__ import annotations

import numpy as np

import xlapy
from xlapy.hlo import parse, verify
from xlapy.hlo.ir import HloComputation, HloModule
from xlapy.hlo.opcode import Opcode
from xlapy.passes.algebraic_simplifier import AlgebraicSimplifier


def _live_post_order(computation: HloComputation) -> list:
    """Instructions reachable from the root, operands first, plus every parameter."""
    order, seen = [], set()
    stack = [(computation.root_instruction, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((op, False) for op in reversed(node.operands))
    params = [i for i in computation.parameters if id(i) not in seen]
    return params + order


def canonical(module: HloModule) -> str:
    """`module` as text with dead instructions dropped and the others in post
    order, named by opcode and position (parameters keep their names)."""
    copy = parse(module.to_text())
    for c, computation in enumerate(copy.computations):
        live = _live_post_order(computation)
        computation.instructions = live
        for n, instruction in enumerate(live):
            if instruction.opcode is not Opcode.PARAMETER:
                instruction.name = f"{instruction.opcode.value}.{c}.{n}"
    return copy.to_text()


def random_inputs(module: HloModule, seed: int = 0) -> list[np.ndarray]:
    """Arguments for the entry parameters: normal floats, small integers, bools."""
    rng = np.random.default_rng(seed)
    arrays = []
    for param in module.entry_computation.parameters:
        shape = param.shape
        dims, element_type = shape.dimensions, shape.element_type
        if element_type.is_pred:
            value = rng.random(dims) < 0.5
        elif element_type.is_unsigned_int:
            value = rng.integers(0, 40, dims)
        elif element_type.is_integral:
            value = rng.integers(-20, 20, dims)
        elif element_type.is_complex:
            value = rng.standard_normal(dims) + 1j * rng.standard_normal(dims)
        else:
            value = rng.standard_normal(dims) * 3
        arrays.append(np.asarray(value).astype(shape.dtype))
    return arrays


def run_pass(text: str) -> tuple[HloModule, bool]:
    """Parse, verify, simplify, verify again."""
    module = parse(text)
    verify(module)
    changed = AlgebraicSimplifier().run(module)
    verify(module)
    return module, changed


def assert_same_results(before: HloModule, after: HloModule, inputs=None, *,
                        rtol: float | None = None, seeds=(0, 1)) -> None:
    """The interpreter gives equal results (NaN equals NaN), or results within
    `rtol` where the rewrite may round differently."""
    for seed in seeds:
        args = inputs if inputs is not None else random_inputs(before, seed)
        expected = xlapy.execute(before, args, backend="interpreter")
        actual = xlapy.execute(after, args, backend="interpreter")
        assert len(expected) == len(actual)
        for e, a in zip(expected, actual):
            assert e.dtype == a.dtype and e.shape == a.shape
            if rtol is None:
                assert np.array_equal(e, a, equal_nan=e.dtype.kind in "fc"), (e, a)
            else:
                np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64),
                                           rtol=rtol, atol=rtol)
        if inputs is not None:
            return


def check(before: str, after: str, inputs=None, *, rtol: float | None = None) -> HloModule:
    """The pass turns `before` into `after` (structurally) and keeps results."""
    module, changed = run_pass(before)
    assert changed, "the pass reported no change"
    expected = parse(after)
    verify(expected)
    assert canonical(module) == canonical(expected), (
        f"got:\n{canonical(module)}\nexpected:\n{canonical(expected)}")
    assert_same_results(parse(before), module, inputs, rtol=rtol)
    return module


def check_unchanged(text: str) -> None:
    """No rule applies: the pass reports no change and the module is as it was."""
    module, changed = run_pass(text)
    assert not changed
    assert module == parse(text)


def hlo(body: str, *, extra: str = "") -> str:
    """A module whose entry computation is `body` (instruction lines), after
    the computations in `extra` (reducers)."""
    return f"HloModule m\n{extra}\nENTRY e {{\n{body}\n}}\n"
