"""cost_analysis against hand counts, following XLA's HloCostAnalysis: 2 flops
per multiply-add in dot and convolution, one per elementwise element,
transcendentals apart, reducers applied once per folded element, bytes at a
fusion's boundary only."""

from __future__ import annotations

import pytest

from tests.analysis.test_buffer_assignment import SUM_XYZ
from tests.analysis.test_liveness import WHILE, by_name, module
from xlapy.analysis.cost_analysis import cost_analysis, instruction_costs
from xlapy.hlo import parse


def costs(body: str, extra: str = "") -> dict:
    return cost_analysis(parse(module(body, extra)))


def test_dot_is_two_flops_per_multiply_add():
    c = costs("""\
  a = f32[4,8] parameter(0)
  b = f32[8,16] parameter(1)
  ROOT d = f32[4,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}""")
    assert c["flops"] == 2 * 4 * 16 * 8
    assert c["transcendentals"] == 0
    assert c["bytes accessed"] == (32 + 128 + 64) * 4
    assert (c["bytes accessed0{}"], c["bytes accessed1{}"], c["bytes accessedout{}"]) == \
        (128, 512, 256)
    assert c["optimal_seconds"] == 0


def test_batched_dot():
    c = costs("""\
  a = f32[2,4,8] parameter(0)
  b = f32[2,8,3] parameter(1)
  ROOT d = f32[2,4,3] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, \
rhs_batch_dims={0}, rhs_contracting_dims={1}""")
    assert c["flops"] == 2 * (2 * 4 * 3) * 8


CONV = """\
  x = f32[1,5,5,{fin}] parameter(0)
  k = f32[3,3,{kin},4] parameter(1)
  ROOT c = f32[1,{o},{o},4] convolution(x, k), window={{{window}}}, dim_labels=b01f_01io->b01f\
{extra}"""


@pytest.mark.parametrize("fin, kin, o, window, extra, flops", [
    # 2 * output elements (3*3*4) * window (3*3) * input features (2)
    (2, 2, 3, "size=3x3", "", 2 * 36 * 9 * 2),
    # stride 2: 2x2 outputs, every window position lands on input
    (2, 2, 2, "size=3x3 stride=2x2", "", 2 * 16 * 9 * 2),
    # SAME padding: per spatial dim only 13 of the 15 (kernel, output) pairs read input
    (2, 2, 5, "size=3x3 pad=1_1x1_1", "", 2 * 2 * 4 * 13 * 13),
    # two feature groups: each output reads 4 / 2 input features
    (4, 2, 3, "size=3x3", ", feature_group_count=2", 2 * 36 * 9 * 2),
])
def test_convolution_flops(fin, kin, o, window, extra, flops):
    c = costs(CONV.format(fin=fin, kin=kin, o=o, window=window, extra=extra))
    assert c["flops"] == flops


@pytest.mark.parametrize("op, flops, transcendentals", [
    ("negate", 10, 0), ("exponential", 0, 10), ("tanh", 0, 10), ("sqrt", 0, 10),
    ("abs", 10, 0), ("log", 0, 10),
])
def test_elementwise_unary(op, flops, transcendentals):
    c = costs(f"  x = f32[10] parameter(0)\n  ROOT y = f32[10] {op}(x)")
    assert (c["flops"], c["transcendentals"], c["bytes accessed"]) == (flops, transcendentals, 80)


def test_elementwise_binary_compare_select_convert():
    c = costs("""\
  x = f32[10] parameter(0)
  y = f32[10] parameter(1)
  a = f32[10] add(x, y)
  p = pred[10] compare(a, y), direction=LT
  s = f32[10] select(p, a, x)
  ROOT v = s32[10] convert(s)""")
    assert c["flops"] == 40 and c["transcendentals"] == 0
    assert c["bytes accessed"] == 120 + (80 + 10) + (10 + 80 + 40) + 80


def test_reduce_applies_its_reducer_per_folded_element():
    c = costs("""\
  x = f32[4,8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(x, z), dimensions={1}, to_apply=add_f32""")
    assert c["flops"] == 32 - 4
    assert c["bytes accessed"] == 128 + 4 + 16  # the reducer's bytes do not count


def test_reduce_window_and_sort():
    c = costs("""\
  x = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[6] reduce-window(x, z), window={size=3}, to_apply=add_f32""")
    assert c["flops"] == (3 - 1) * 6
    c = costs("""\
  x = f32[8] parameter(0)
  ROOT s = f32[8] sort(x), dimensions={0}, to_apply=less""", """
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
""")
    assert c["flops"] == 8 * 3


def test_fusion_bytes_are_counted_at_the_boundary():
    fused = cost_analysis(parse(SUM_XYZ))
    assert fused["flops"] == 128 + 128 + 127
    assert fused["bytes accessed"] == 3 * 512 + 4
    unfused = costs("""\
  x = f32[8,16] parameter(0)
  y = f32[8,16] parameter(1)
  z = f32[8,16] parameter(2)
  m = f32[8,16] multiply(y, z)
  a = f32[8,16] add(x, m)
  c = f32[] constant(0)
  ROOT r = f32[] reduce(a, c), dimensions={0,1}, to_apply=add_f32""")
    assert unfused["flops"] == fused["flops"]
    assert unfused["bytes accessed"] == 3 * 512 + 3 * 512 + 512 + 4 + 4


def test_fused_parameter_reads():
    m = parse(module("""\
  x = f32[64] parameter(0)
  v = f32[16] parameter(1)
  ROOT f = f32[16] fusion(x, v), kind=kLoop, calls=fused""", """
fused {
  p0 = f32[64] parameter(0)
  p1 = f32[16] parameter(1)
  s = f32[16] slice(p0), slice={[0:16]}
  m = f32[16] multiply(s, p1)
  r = f32[4,4] reshape(p1)
  r2 = f32[16] reshape(r)
  ROOT a = f32[16] add(m, r2)
}
"""))
    c = instruction_costs(by_name(m, "f"))
    # the slice reads only its 16 elements; a reshape reads its operand again,
    # other readers (the multiply) share one read
    assert c["bytes accessed0{}"] == 64
    assert c["bytes accessed1{}"] == 64 + 64
    assert c["bytes accessed"] == 64 + 128 + 64
    assert c["flops"] == 32


def test_movement_and_pointer_ops():
    c = costs("""\
  x = f32[16] parameter(0)
  s = f32[4] slice(x), slice={[0:4]}
  t = (f32[4], f32[16]) tuple(s, x)
  ROOT g = f32[4] get-tuple-element(t), index=0""")
    assert c["bytes accessed"] == 2 * 16 + 2 * 8  # slice: read what it writes; tuple: pointers
    m = parse(module("""\
  x = f32[4,8] parameter(0)
  ROOT t = f32[8,4]{0,1} transpose(x), dimensions={1,0}"""))
    assert cost_analysis(m)["bytes accessed"] == 0  # a layout-only transpose is a bitcast
    c = costs("""\
  x = f32[64] parameter(0)
  u = f32[8] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[64] dynamic-update-slice(x, u, i)""")
    assert c["bytes accessed"] == 2 * 32 + 4


def test_control_flow_counts_one_iteration():
    c = cost_analysis(parse(WHILE))
    # entry: add + negate (64 each); body: add (1) + multiply (64) + exp; cond: compare
    assert c["flops"] == 64 + 64 + 1 + 64 + 1
    assert c["transcendentals"] == 64


def test_custom_calls_are_unknown():
    c = costs("""\
  x = f32[8] parameter(0)
  ROOT y = f32[8] custom-call(x), custom_call_target="foo\"""")
    assert c["flops"] == -1 and c["bytes accessed"] == -1 and c["optimal_seconds"] == -1


# -- XLA itself as the oracle, where JAX is installed ---------------------------------------
def _jax_cases():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    x, w = jnp.ones((8, 16), jnp.float32), jnp.ones((16, 32), jnp.float32)
    img, kernel = jnp.ones((2, 9, 9, 3)), jnp.ones((3, 3, 3, 5))

    def conv(stride, padding):
        return lambda a, k: jax.lax.conv_general_dilated(
            a, k, stride, padding, dimension_numbers=("NHWC", "HWIO", "NHWC"))

    return jax, [
        (lambda a, b: jnp.tanh(a @ b + 1.0), (x, w)),
        (lambda a: jnp.exp(a) * a + jnp.tanh(a) - jnp.sqrt(jnp.abs(a)), (x,)),
        (lambda a: jax.nn.softmax(a, axis=-1), (x,)),
        (conv((1, 1), "VALID"), (img, kernel)),
        (conv((2, 2), "SAME"), (img, kernel)),
        (lambda a: jnp.concatenate([a[1:], a[:1]]) * 2, (x,)),
        (lambda a: jnp.sort(a, axis=-1), (x,)),
        (lambda a: jnp.cumsum(a, axis=0), (x,)),
        (lambda a: jax.lax.fori_loop(0, 3, lambda i, c: jnp.tanh(c) + 1.0, a), (x,)),
        (lambda a: jax.lax.dynamic_update_slice(a, jnp.zeros((2, 16)), (3, 0)), (x,)),
        (lambda a: a[jnp.array([1, 3, 5])], (x,)),
        (lambda a, b, c: jnp.sum(a + b * c), (x, x, x)),
    ]


KEYS = ("flops", "transcendentals", "bytes accessed")


@pytest.mark.parametrize("stage", ["lowered", "compiled"])
def test_matches_xla_cost_analysis(stage):
    """XLA's HloCostAnalysis on JAX's module (and on XLA:CPU's fused one) gives
    the same three numbers as ours on the same text."""
    jax, cases = _jax_cases()
    for f, args in cases:
        lowered = jax.jit(f).lower(*args)
        target = lowered if stage == "lowered" else lowered.compile()
        expected = target.cost_analysis()
        expected = expected[0] if isinstance(expected, list) else expected
        text = lowered.as_text(dialect="hlo") if stage == "lowered" else target.as_text()
        ours = cost_analysis(parse(text))
        assert [ours[k] for k in KEYS] == [float(expected.get(k, 0.0)) for k in KEYS], text
