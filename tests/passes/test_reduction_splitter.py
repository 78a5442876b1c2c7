"""ReductionSplitter: a reduction over dimensions that are not adjacent becomes
two, the largest run of adjacent reduced dimensions first; results as the
interpreter's (exactly for integers, to rounding for float sums, whose order
XLA leaves open), and reductions that need no split are left alone."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy
from tests.passes.test_fusion import module, random_inputs, reasons
from xlapy.hlo import Opcode, parse, verify
from xlapy.passes.fusion import InstructionFusion
from xlapy.passes.reduction_splitter import ReductionSplitter, groups


def split(text: str):
    """The module after the pass, whether it changed, and its results against the
    unsplit module's."""
    m = parse(text)
    args = random_inputs(m)
    before = xlapy.execute(m, args, backend="interpreter")
    changed = ReductionSplitter().run(m)
    verify(m)
    verify(parse(m.to_text()))
    after = xlapy.execute(m, args, backend="interpreter")
    for a, b in zip(before, after):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-4)
    return m, changed


def reduces(m) -> list[tuple[tuple, tuple]]:
    """(operand dims, reduced dims) of each reduce, in order."""
    return [(i.operands[0].shape.dimensions, tuple(i.attrs["dimensions"]))
            for i in m.entry_computation.instructions if i.opcode is Opcode.REDUCE]


def test_heads_bias_gradient_is_two_reductions_largest_run_first():
    """The sum over batch and seq of f32[batch, heads, seq, head_dim]: seq (128) first,
    a batch of column sums, then batch (8)."""
    m, changed = split(module("""\
  x = f32[8,4,128,64] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[4,64] reduce(x, zero), dimensions={0,2}, to_apply=add_f32"""))
    assert changed
    assert reduces(m) == [((8, 4, 128, 64), (2,)), ((8, 4, 64), (0,))]


def test_three_runs_split_twice():
    m, changed = split(module("""\
  x = f32[16,3,64,5,32] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[3,5] reduce(x, zero), dimensions={0,2,4}, to_apply=add_f32"""))
    assert changed
    assert reduces(m) == [((16, 3, 64, 5, 32), (2,)), ((16, 3, 5, 32), (3,)),
                          ((16, 3, 5), (0,))]


@pytest.mark.parametrize("body", [
    # adjacent dims: a row or column kernel already applies
    """  x = f32[8,4,128,64] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[128,64] reduce(x, zero), dimensions={0,1}, to_apply=add_f32""",
    # small: one kernel costs less than two
    """  x = f32[2,3,4,5] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[3,5] reduce(x, zero), dimensions={0,2}, to_apply=add_f32""",
    # the init is not add's identity: it must be combined once
    """  x = f32[8,4,128,64] parameter(0)
  one = f32[] constant(1)
  ROOT r = f32[4,64] reduce(x, one), dimensions={0,2}, to_apply=add_f32""",
])
def test_reductions_that_need_no_split_are_left_alone(body):
    m, changed = split(module(body))
    assert not changed and len(reduces(m)) == 1


def test_groups_follow_the_layout():
    """Adjacency is in memory order: with a column-major layout, dims 1 and 0 are
    neighbours (minor to major: 0, 1, 2; major first: 2, 1, 0)."""
    row_major = parse(module("""\
  ROOT x = f32[2,3,4] parameter(0)""")).entry_computation.root_instruction.shape
    assert groups(row_major, {0, 2}) == [[0], [2]]
    assert groups(row_major, {1, 2}) == [[1, 2]]
    column_major = parse("HloModule m\nENTRY e {\n  ROOT x = f32[2,3,4]{0,1,2} parameter(0)\n}\n"
                         ).entry_computation.root_instruction.shape
    assert groups(column_major, {0, 1}) == [[1, 0]]
    assert groups(column_major, {0, 2}) == [[2], [0]]


def test_the_two_reductions_keep_their_own_kernels():
    """Fused, the second would compute each element of the first where it reads it,
    walking the input with strides: the fusion pass keeps them apart."""
    m = parse(module("""\
  x = f32[8,4,128,64] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[4,64] reduce(x, zero), dimensions={0,2}, to_apply=add_f32"""))
    ReductionSplitter().run(m)
    fusion = InstructionFusion()
    fusion.run(m)
    assert reduces(m) == [((8, 4, 128, 64), (2,)), ((8, 4, 64), (0,))]
    first, second = (i.name for i in m.entry_computation.instructions
                     if i.opcode is Opcode.REDUCE)
    assert reasons(fusion, first, second) == [
        f"not fused: {first} is what {second} reduces: each keeps the kernel its own "
        "dimensions give it (a reduction computed per element of another walks its "
        "input with strides)"]
