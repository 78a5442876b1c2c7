"""The reducer keeps what the failure needs and drops the rest."""

import numpy as np

from xlapy.fuzz.reduce import reduce_module
from xlapy.hlo import parse

MODULE = """HloModule big
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
helper {
  h = f32[4] parameter(0)
  ROOT n = f32[4] negate(h)
}
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  s = f32[4] add(x, y)
  m = f32[4] multiply(s, x)
  c = f32[4] call(m), to_apply=helper
  e = f32[4] exponential(c)
  t = f32[4] tanh(e)
  z = f32[] constant(0)
  r = f32[] reduce(t, z), dimensions={0}, to_apply=add
  ROOT out = (f32[4], f32[]) tuple(m, r)
}
"""


def test_a_failure_tied_to_one_op_reduces_to_that_op():
    """The 'bug' is any module with an exponential: the result is a module whose
    entry is little more than the exponential, its operand a parameter."""
    seen = []

    def is_bad(text: str, args: list) -> bool:
        seen.append(text)
        return " exponential(" in text

    args = [np.ones(4, np.float32), np.full(4, 2.0, np.float32)]
    text, small_args = reduce_module(MODULE, args, is_bad)
    module = parse(text)
    ops = [i.opcode.value for i in module.entry_computation.instructions]
    assert "exponential" in ops and len(ops) <= 3, ops
    assert len(small_args) == len(module.entry_computation.parameters)
    assert len(seen) > 3


def test_operands_become_parameters_with_the_interpreter_values():
    """When the failure needs the values reaching the op, isolation keeps them."""
    def is_bad(text: str, args: list) -> bool:
        values = [a for a in args if a.shape == (4,)]
        return " exponential(" in text and any(np.allclose(v, -3.0) for v in values)

    args = [np.ones(4, np.float32), np.full(4, 2.0, np.float32)]
    text, small_args = reduce_module(MODULE, args, is_bad)
    assert any(np.allclose(a, -3.0) for a in small_args)   # -(x + y) * x, from the interpreter
    assert " multiply(" not in text and " call(" not in text
