"""topk-decomposer: topk as a stable sort and slices, the same values and indices."""

import numpy as np
import pytest

import xlapy
from xlapy.hlo import parse
from xlapy.hlo.opcode import Opcode
from xlapy.hlo.verifier import verify
from xlapy.passes.topk_decomposer import TopkDecomposer


def _module(element: str, dims: tuple, k: int, largest: bool) -> str:
    shape = f"{element}[{','.join(map(str, dims))}]"
    out = dims[:-1] + (k,)
    values, indices = f"{element}[{','.join(map(str, out))}]", f"s32[{','.join(map(str, out))}]"
    return f"""HloModule topk
ENTRY main {{
  x = {shape} parameter(0)
  ROOT t = ({values}, {indices}) topk(x), k={k}, largest={'true' if largest else 'false'}
}}"""


CASES = [("f32", np.float32), ("f16", np.float16), ("s32", np.int32), ("u8", np.uint8),
         ("f64", np.float64), ("pred", np.bool_)]


@pytest.mark.parametrize("element, dtype", CASES)
@pytest.mark.parametrize("largest", [True, False])
def test_decomposed_topk_matches_the_interpreter(element, dtype, largest):
    rng = np.random.default_rng(0)
    dims = (3, 17)
    if dtype == np.bool_:
        x = rng.random(dims) < 0.5
    elif np.dtype(dtype).kind == "f":
        x = rng.integers(-3, 4, size=dims).astype(dtype)   # many ties
        x.flat[[0, 5, 9, 20, 33]] = [np.nan, -np.nan, -0.0, np.inf, -np.inf]
    else:
        x = rng.integers(0, 5, size=dims).astype(dtype)
    text = _module(element, dims, 5, largest)
    expected = xlapy.execute(text, [x], backend="interpreter")
    module = parse(text)
    assert TopkDecomposer().run(module)
    verify(module)
    assert all(i.opcode is not Opcode.TOPK for c in module.computations for i in c.instructions)
    for backend in ("interpreter", "cpu"):
        actual = xlapy.execute(module, [x], backend=backend)
        for e, a in zip(expected, actual):
            np.testing.assert_array_equal(np.asarray(a).view(np.uint8),
                                          np.asarray(e).view(np.uint8))


def test_no_topk_no_change():
    module = parse("HloModule m\nENTRY e {\n  ROOT x = f32[2] parameter(0)\n}")
    assert not TopkDecomposer().run(module)


# XLA:CPU's form: a custom call with the comparator XLA writes (a total order built
# from bitcasts and xor), on the values alone
CUSTOM_CALL_TOPK = """HloModule custom_topk
greater {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  zero = s32[] constant(0)
  max = s32[] constant(2147483647)
  lb = s32[] bitcast(lhs)
  rb = s32[] bitcast(rhs)
  lx = s32[] xor(max, lb)
  ln = pred[] compare(lb, zero), direction=LT
  rx = s32[] xor(max, rb)
  rn = pred[] compare(rb, zero), direction=LT
  lk = s32[] select(ln, lx, lb)
  rk = s32[] select(rn, rx, rb)
  ROOT gt = pred[] compare(lk, rk), direction=GT
}
ENTRY main {
  x = f32[3,9] parameter(0)
  ROOT t = (f32[3,4], s32[3,4]) custom-call(x), custom_call_target="TopK",
    called_computations={greater}
}
"""


def test_xla_cpu_topk_custom_call_becomes_a_sort():
    rng = np.random.default_rng(1)
    x = rng.integers(-3, 4, size=(3, 9)).astype(np.float32)
    x.flat[[0, 4, 11]] = [np.nan, -0.0, np.inf]
    expected = xlapy.execute(CUSTOM_CALL_TOPK, [x], backend="interpreter")
    module = parse(CUSTOM_CALL_TOPK)
    assert TopkDecomposer().run(module)
    verify(module)
    assert all(i.opcode is not Opcode.CUSTOM_CALL for i in module.entry_computation.instructions)
    executable = xlapy.compile(parse(CUSTOM_CALL_TOPK), backend="cpu")
    assert not executable.fallbacks
    for actual in (xlapy.execute(module, [x], backend="interpreter"), executable.execute(x)):
        for e, a in zip(expected, actual):
            np.testing.assert_array_equal(np.asarray(a).view(np.uint8),
                                          np.asarray(e).view(np.uint8))
