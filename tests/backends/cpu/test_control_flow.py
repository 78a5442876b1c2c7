"""Control flow on the CPU backend against the interpreter: `while` (counter
loops, tuple-carrying loops, swapped state elements, nested loops, loops
that never run, loops inside conditionals), `conditional` (pred and index
forms, out-of-range indices, branches returning parameters or constants),
`call`; then jit'ed `lax.fori_loop`, `scan`, `cond`, `switch` and
`while_loop` against NumPy."""

import numpy as np
import pytest

import xlapy
from xlapy import lax
from xlapy import numpy as xnp
from xlapy.fuzz.compare import assert_matches
from xlapy.hlo import parse

ADD = """
add {
  add_a = f32[] parameter(0)
  add_b = f32[] parameter(1)
  ROOT add_c = f32[] add(add_a, add_b)
}
"""

COUNTER = """
HloModule counter
cond {
  c_state = (s32[], f32[4]) parameter(0)
  c_i = s32[] get-tuple-element(c_state), index=0
  c_n = s32[] constant(10)
  ROOT c_lt = pred[] compare(c_i, c_n), direction=LT
}
body {
  b_state = (s32[], f32[4]) parameter(0)
  b_i = s32[] get-tuple-element(b_state), index=0
  b_x = f32[4] get-tuple-element(b_state), index=1
  b_one = s32[] constant(1)
  b_next = s32[] add(b_i, b_one)
  b_c = f32[] constant(1.5)
  b_cs = f32[4] broadcast(b_c), dimensions={}
  b_y = f32[4] multiply(b_x, b_cs)
  b_f = f32[4] convert(b_cs)
  b_z = f32[4] subtract(b_y, b_f)
  ROOT b_out = (s32[], f32[4]) tuple(b_next, b_z)
}
ENTRY main {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, x)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  i = s32[] get-tuple-element(w), index=0
  y = f32[4] get-tuple-element(w), index=1
  ROOT out = (s32[], f32[4], f32[4]) tuple(i, y, x)
}
"""

SWAP = """
HloModule swap
cond {
  c_state = (s32[], f32[3], f32[3], s32[2]) parameter(0)
  c_i = s32[] get-tuple-element(c_state), index=0
  c_n = s32[] constant(5)
  ROOT c_lt = pred[] compare(c_i, c_n), direction=LT
}
body {
  b_state = (s32[], f32[3], f32[3], s32[2]) parameter(0)
  b_i = s32[] get-tuple-element(b_state), index=0
  b_a = f32[3] get-tuple-element(b_state), index=1
  b_b = f32[3] get-tuple-element(b_state), index=2
  b_k = s32[2] get-tuple-element(b_state), index=3
  b_one = s32[] constant(1)
  b_next = s32[] add(b_i, b_one)
  b_r = s32[2] reverse(b_k), dimensions={0}
  ROOT b_out = (s32[], f32[3], f32[3], s32[2]) tuple(b_next, b_b, b_a, b_r)
}
ENTRY main {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  k = s32[2] parameter(2)
  zero = s32[] constant(0)
  init = (s32[], f32[3], f32[3], s32[2]) tuple(zero, a, b, k)
  w = (s32[], f32[3], f32[3], s32[2]) while(init), condition=cond, body=body
  wa = f32[3] get-tuple-element(w), index=1
  wb = f32[3] get-tuple-element(w), index=2
  wk = s32[2] get-tuple-element(w), index=3
  ROOT out = (f32[3], f32[3], s32[2], f32[3]) tuple(wa, wb, wk, a)
}
"""

# The state carries a nested tuple, and the loop runs until a reduction of
# the state passes a bound (a data-dependent trip count).
NESTED_STATE = f"""
HloModule nested_state
{ADD}
cond {{
  c_state = (f32[], (f32[2,3], s32[])) parameter(0)
  c_inner = (f32[2,3], s32[]) get-tuple-element(c_state), index=1
  c_x = f32[2,3] get-tuple-element(c_inner), index=0
  c_z = f32[] constant(0)
  c_sum = f32[] reduce(c_x, c_z), dimensions={{0,1}}, to_apply=add
  c_bound = f32[] constant(1000)
  ROOT c_lt = pred[] compare(c_sum, c_bound), direction=LT
}}
body {{
  b_state = (f32[], (f32[2,3], s32[])) parameter(0)
  b_s = f32[] get-tuple-element(b_state), index=0
  b_inner = (f32[2,3], s32[]) get-tuple-element(b_state), index=1
  b_x = f32[2,3] get-tuple-element(b_inner), index=0
  b_n = s32[] get-tuple-element(b_inner), index=1
  b_sb = f32[2,3] broadcast(b_s), dimensions={{}}
  b_y = f32[2,3] add(b_x, b_sb)
  b_two = f32[] constant(2)
  b_s2 = f32[] multiply(b_s, b_two)
  b_one = s32[] constant(1)
  b_n2 = s32[] add(b_n, b_one)
  b_in = (f32[2,3], s32[]) tuple(b_y, b_n2)
  ROOT b_out = (f32[], (f32[2,3], s32[])) tuple(b_s2, b_in)
}}
ENTRY main {{
  s = f32[] parameter(0)
  x = f32[2,3] parameter(1)
  zero = s32[] constant(0)
  inner = (f32[2,3], s32[]) tuple(x, zero)
  init = (f32[], (f32[2,3], s32[])) tuple(s, inner)
  w = (f32[], (f32[2,3], s32[])) while(init), condition=cond, body=body
  ws = f32[] get-tuple-element(w), index=0
  wi = (f32[2,3], s32[]) get-tuple-element(w), index=1
  wx = f32[2,3] get-tuple-element(wi), index=0
  wn = s32[] get-tuple-element(wi), index=1
  ROOT out = (f32[], f32[2,3], s32[]) tuple(ws, wx, wn)
}}
"""

# An outer loop of 3 whose body runs an inner loop of (outer counter + 2)
# steps, accumulating into a matrix row chosen by the outer counter.
NESTED_WHILE = """
HloModule nested_while
inner_cond {
  ic_state = (s32[], s32[], f32[4]) parameter(0)
  ic_j = s32[] get-tuple-element(ic_state), index=0
  ic_n = s32[] get-tuple-element(ic_state), index=1
  ROOT ic_lt = pred[] compare(ic_j, ic_n), direction=LT
}
inner_body {
  ib_state = (s32[], s32[], f32[4]) parameter(0)
  ib_j = s32[] get-tuple-element(ib_state), index=0
  ib_n = s32[] get-tuple-element(ib_state), index=1
  ib_v = f32[4] get-tuple-element(ib_state), index=2
  ib_one = s32[] constant(1)
  ib_j2 = s32[] add(ib_j, ib_one)
  ib_jf = f32[] convert(ib_j2)
  ib_jb = f32[4] broadcast(ib_jf), dimensions={}
  ib_v2 = f32[4] add(ib_v, ib_jb)
  ROOT ib_out = (s32[], s32[], f32[4]) tuple(ib_j2, ib_n, ib_v2)
}
outer_cond {
  oc_state = (s32[], f32[3,4]) parameter(0)
  oc_i = s32[] get-tuple-element(oc_state), index=0
  oc_n = s32[] constant(3)
  ROOT oc_lt = pred[] compare(oc_i, oc_n), direction=LT
}
outer_body {
  ob_state = (s32[], f32[3,4]) parameter(0)
  ob_i = s32[] get-tuple-element(ob_state), index=0
  ob_m = f32[3,4] get-tuple-element(ob_state), index=1
  ob_zero = s32[] constant(0)
  ob_two = s32[] constant(2)
  ob_n = s32[] add(ob_i, ob_two)
  ob_row = f32[1,4] dynamic-slice(ob_m, ob_i, ob_zero), dynamic_slice_sizes={1,4}
  ob_v = f32[4] reshape(ob_row)
  ob_init = (s32[], s32[], f32[4]) tuple(ob_zero, ob_n, ob_v)
  ob_w = (s32[], s32[], f32[4]) while(ob_init), condition=inner_cond, body=inner_body
  ob_v2 = f32[4] get-tuple-element(ob_w), index=2
  ob_row2 = f32[1,4] reshape(ob_v2)
  ob_m2 = f32[3,4] dynamic-update-slice(ob_m, ob_row2, ob_i, ob_zero)
  ob_one = s32[] constant(1)
  ob_i2 = s32[] add(ob_i, ob_one)
  ROOT ob_out = (s32[], f32[3,4]) tuple(ob_i2, ob_m2)
}
ENTRY main {
  m = f32[3,4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[3,4]) tuple(zero, m)
  w = (s32[], f32[3,4]) while(init), condition=outer_cond, body=outer_body
  ROOT out = f32[3,4] get-tuple-element(w), index=1
}
"""

# The loop's condition is false at once: the result is the init value.
NEVER_RUNS = """
HloModule never_runs
cond {
  c_state = (s32[], f32[5]) parameter(0)
  ROOT c_f = pred[] constant(false)
}
body {
  b_state = (s32[], f32[5]) parameter(0)
  b_i = s32[] get-tuple-element(b_state), index=0
  b_x = f32[5] get-tuple-element(b_state), index=1
  b_y = f32[5] negate(b_x)
  ROOT b_out = (s32[], f32[5]) tuple(b_i, b_y)
}
ENTRY main {
  x = f32[5] parameter(0)
  seven = s32[] constant(7)
  init = (s32[], f32[5]) tuple(seven, x)
  w = (s32[], f32[5]) while(init), condition=cond, body=body
  ROOT out = f32[5] get-tuple-element(w), index=1
}
"""

# A conditional whose true branch runs a loop (x doubled n times) and whose
# false branch returns its operand unchanged.
WHILE_IN_CONDITIONAL = """
HloModule while_in_conditional
cond {
  c_state = (s32[], s32[], f32[3]) parameter(0)
  c_i = s32[] get-tuple-element(c_state), index=0
  c_n = s32[] get-tuple-element(c_state), index=1
  ROOT c_lt = pred[] compare(c_i, c_n), direction=LT
}
body {
  b_state = (s32[], s32[], f32[3]) parameter(0)
  b_i = s32[] get-tuple-element(b_state), index=0
  b_n = s32[] get-tuple-element(b_state), index=1
  b_x = f32[3] get-tuple-element(b_state), index=2
  b_one = s32[] constant(1)
  b_i2 = s32[] add(b_i, b_one)
  b_y = f32[3] add(b_x, b_x)
  ROOT b_out = (s32[], s32[], f32[3]) tuple(b_i2, b_n, b_y)
}
on_true {
  t_arg = (s32[], f32[3]) parameter(0)
  t_n = s32[] get-tuple-element(t_arg), index=0
  t_x = f32[3] get-tuple-element(t_arg), index=1
  t_zero = s32[] constant(0)
  t_init = (s32[], s32[], f32[3]) tuple(t_zero, t_n, t_x)
  t_w = (s32[], s32[], f32[3]) while(t_init), condition=cond, body=body
  ROOT t_out = f32[3] get-tuple-element(t_w), index=2
}
on_false {
  f_arg = (s32[], f32[3]) parameter(0)
  ROOT f_x = f32[3] get-tuple-element(f_arg), index=1
}
ENTRY main {
  p = pred[] parameter(0)
  n = s32[] parameter(1)
  x = f32[3] parameter(2)
  arg = (s32[], f32[3]) tuple(n, x)
  ROOT c = f32[3] conditional(p, arg, arg), true_computation=on_true, false_computation=on_false
}
"""

# The init tuple holds one parameter twice and a constant; the body changes
# only the first copy, so the loop state must not share their buffers.
ALIASED_INIT = """
HloModule aliased_init
or {
  o_a = pred[] parameter(0)
  o_b = pred[] parameter(1)
  ROOT o_c = pred[] or(o_a, o_b)
}
cond {
  c_state = (f32[4], f32[4], f32[4]) parameter(0)
  c_x = f32[4] get-tuple-element(c_state), index=0
  c_k = f32[4] get-tuple-element(c_state), index=2
  c_lt = pred[4] compare(c_x, c_k), direction=LT
  c_f = pred[] constant(false)
  ROOT c_any = pred[] reduce(c_lt, c_f), dimensions={0}, to_apply=or
}
body {
  b_state = (f32[4], f32[4], f32[4]) parameter(0)
  b_x = f32[4] get-tuple-element(b_state), index=0
  b_y = f32[4] get-tuple-element(b_state), index=1
  b_k = f32[4] get-tuple-element(b_state), index=2
  b_z = f32[4] add(b_x, b_y)
  ROOT b_out = (f32[4], f32[4], f32[4]) tuple(b_z, b_y, b_k)
}
ENTRY main {
  x = f32[4] parameter(0)
  k = f32[4] constant({10, 20, 30, 40})
  init = (f32[4], f32[4], f32[4]) tuple(x, x, k)
  w = (f32[4], f32[4], f32[4]) while(init), condition=cond, body=body
  w0 = f32[4] get-tuple-element(w), index=0
  w1 = f32[4] get-tuple-element(w), index=1
  w2 = f32[4] get-tuple-element(w), index=2
  ROOT out = (f32[4], f32[4], f32[4], f32[4]) tuple(w0, w1, w2, x)
}
"""

# A loop whose body picks a branch by the counter's parity.
CONDITIONAL_IN_LOOP = """
HloModule conditional_in_loop
double {
  d_x = f32[3] parameter(0)
  ROOT d_y = f32[3] add(d_x, d_x)
}
decrement {
  m_x = f32[3] parameter(0)
  m_one = f32[] constant(1)
  m_b = f32[3] broadcast(m_one), dimensions={}
  ROOT m_y = f32[3] subtract(m_x, m_b)
}
cond {
  c_state = (s32[], f32[3]) parameter(0)
  c_i = s32[] get-tuple-element(c_state), index=0
  c_n = s32[] constant(6)
  ROOT c_lt = pred[] compare(c_i, c_n), direction=LT
}
body {
  b_state = (s32[], f32[3]) parameter(0)
  b_i = s32[] get-tuple-element(b_state), index=0
  b_x = f32[3] get-tuple-element(b_state), index=1
  b_two = s32[] constant(2)
  b_parity = s32[] remainder(b_i, b_two)
  b_y = f32[3] conditional(b_parity, b_x, b_x), branch_computations={double, decrement}
  b_one = s32[] constant(1)
  b_next = s32[] add(b_i, b_one)
  ROOT b_out = (s32[], f32[3]) tuple(b_next, b_y)
}
ENTRY main {
  x = f32[3] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[3]) tuple(zero, x)
  w = (s32[], f32[3]) while(init), condition=cond, body=body
  ROOT out = f32[3] get-tuple-element(w), index=1
}
"""

# Three branches by index: a computed value, the operand itself, a constant.
# XLA runs the last branch for an index out of [0, 3).
INDEXED = """
HloModule indexed
negate_branch {
  n_x = f32[2,3] parameter(0)
  ROOT n_y = f32[2,3] negate(n_x)
}
identity_branch {
  ROOT i_x = f32[2,3] parameter(0)
}
constant_branch {
  k_x = f32[2,3] parameter(0)
  ROOT k_c = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
}
ENTRY main {
  i = s32[] parameter(0)
  x = f32[2,3] parameter(1)
  ROOT c = f32[2,3] conditional(i, x, x, x),
    branch_computations={negate_branch, identity_branch, constant_branch}
}
"""

# Branches take different operands and return tuples; one sums rows.
PRED_TUPLES = f"""
HloModule pred_tuples
{ADD}
on_true {{
  t_x = f32[3,4] parameter(0)
  t_z = f32[] constant(0)
  t_r = f32[3] reduce(t_x, t_z), dimensions={{1}}, to_apply=add
  t_e = f32[3,4] exponential(t_x)
  ROOT t_out = (f32[3], f32[3,4]) tuple(t_r, t_e)
}}
on_false {{
  f_arg = (f32[3], f32[3,4]) parameter(0)
  f_a = f32[3] get-tuple-element(f_arg), index=0
  f_b = f32[3,4] get-tuple-element(f_arg), index=1
  f_n = f32[3] negate(f_a)
  ROOT f_out = (f32[3], f32[3,4]) tuple(f_n, f_b)
}}
ENTRY main {{
  p = pred[] parameter(0)
  x = f32[3,4] parameter(1)
  v = f32[3] parameter(2)
  arg = (f32[3], f32[3,4]) tuple(v, x)
  c = (f32[3], f32[3,4]) conditional(p, x, arg), true_computation=on_true,
    false_computation=on_false
  c0 = f32[3] get-tuple-element(c), index=0
  c1 = f32[3,4] get-tuple-element(c), index=1
  ROOT out = (f32[3], f32[3,4], f32[3,4]) tuple(c0, c1, x)
}}
"""

CALL = """
HloModule call
helper {
  h_x = f32[4] parameter(0)
  h_y = f32[4] parameter(1)
  h_m = f32[4] multiply(h_x, h_y)
  ROOT h_out = (f32[4], f32[4]) tuple(h_m, h_x)
}
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  c = (f32[4], f32[4]) call(x, y), to_apply=helper
  c0 = f32[4] get-tuple-element(c), index=0
  c1 = f32[4] get-tuple-element(c), index=1
  ROOT out = f32[4] add(c0, c1)
}
"""


def check(text: str, *args) -> list:
    """Interpreter and CPU agree on `text` with `args`; the CPU results."""
    module = parse(text)
    expected = xlapy.execute(module, list(args), backend="interpreter")
    executable = xlapy.compile(module, backend="cpu")
    assert not executable.fallbacks, [i.name for i in executable.fallbacks]
    actual = executable.execute(*args)
    assert_matches(expected, actual, module.name)
    return actual


def normal(*dims, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(dims).astype(np.float32)


# -- while ----------------------------------------------------------------------------------
def test_counter_loop_keeps_its_init_operand():
    x = normal(4)
    i, y, same = check(COUNTER, x)
    assert i == 10
    np.testing.assert_array_equal(same, x)  # the state buffer is not the parameter's


def test_loop_swapping_state_elements():
    a, b, k = normal(3), normal(3, seed=1), np.array([7, 9], np.int32)
    wa, wb, wk, same = check(SWAP, a, b, k)
    np.testing.assert_array_equal(wa, b)  # five swaps
    np.testing.assert_array_equal(wb, a)
    np.testing.assert_array_equal(wk, [9, 7])
    np.testing.assert_array_equal(same, a)


def test_loop_carrying_a_nested_tuple_with_a_data_dependent_trip_count():
    s, x = np.float32(1), np.ones((2, 3), np.float32)
    _, _, n = check(NESTED_STATE, s, x)
    assert n == 8  # sums 6, 12, 24, ..., 6 * (2**8 - 1) >= 1000


def test_nested_while():
    m = np.zeros((3, 4), np.float32)
    (out,) = check(NESTED_WHILE, m)
    np.testing.assert_array_equal(out[:, 0], [3, 6, 10])  # 1+2, 1+2+3, 1+2+3+4


def test_loop_that_never_runs():
    x = normal(5)
    (out,) = check(NEVER_RUNS, x)
    np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize("p, n", [(True, 3), (True, 0), (False, 3)])
def test_while_inside_a_conditional(p, n):
    x = normal(3)
    (out,) = check(WHILE_IN_CONDITIONAL, np.bool_(p), np.int32(n), x)
    np.testing.assert_array_equal(out, x * 2 ** n if p else x)


def test_loop_whose_init_repeats_a_parameter():
    x = np.float32([1, 2, 3, 4])
    w0, w1, w2, same = check(ALIASED_INIT, x)
    np.testing.assert_array_equal(w0, [10, 20, 30, 40])  # x * 10 after 9 steps
    np.testing.assert_array_equal(w1, x)
    np.testing.assert_array_equal(same, x)


def test_conditional_inside_a_loop():
    x = np.float32([1, 2, 3])
    (out,) = check(CONDITIONAL_IN_LOOP, x)
    expected = x
    for _ in range(3):
        expected = expected * 2 - 1
    np.testing.assert_array_equal(out, expected)


# -- conditional and call ---------------------------------------------------------------------
@pytest.mark.parametrize("index", [0, 1, 2, 3, -1, 100, -2**31])
def test_indexed_conditional_runs_the_last_branch_out_of_range(index):
    x = normal(2, 3)
    (out,) = check(INDEXED, np.int32(index), x)
    branch = index if index in (0, 1, 2) else 2
    expected = [-x, x, np.arange(1, 7, dtype=np.float32).reshape(2, 3)][branch]
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("p", [True, False])
def test_pred_conditional_with_tuple_operands_and_results(p):
    x, v = normal(3, 4), normal(3, seed=2)
    c0, c1, same = check(PRED_TUPLES, np.bool_(p), x, v)
    np.testing.assert_allclose(c0, x.sum(1) if p else -v, rtol=1e-6)
    np.testing.assert_array_equal(same, x)


def test_call():
    x, y = normal(4), normal(4, seed=3)
    (out,) = check(CALL, x, y)
    np.testing.assert_array_equal(out, x * y + x)


# -- through the frontend -------------------------------------------------------------------
def cpu_jit(fn):
    return xlapy.jit(fn, backend="cpu")


def test_jit_fori_loop():
    def f(x):
        return lax.fori_loop(0, 6, lambda i, v: v * 0.5 + i.astype(np.float32), x)

    x = normal(8)
    expected = x.copy()
    for i in range(6):
        expected = expected * np.float32(0.5) + np.float32(i)
    np.testing.assert_allclose(np.asarray(cpu_jit(f)(x)), expected, rtol=1e-6)


def test_jit_scan_cumulative_sum_and_products():
    def f(xs):
        def step(carry, x):
            total, prod = carry
            return (total + x, prod * x), total + x
        return lax.scan(step, (np.float32(0), np.float32(1)), xs)

    xs = normal(7) + 1
    (total, prod), ys = cpu_jit(f)(xs)
    np.testing.assert_allclose(np.asarray(ys), np.cumsum(xs), rtol=1e-5)
    np.testing.assert_allclose(float(total), xs.sum(), rtol=1e-5)
    np.testing.assert_allclose(float(prod), np.prod(xs), rtol=1e-5)


def test_jit_reverse_scan_over_matrix_rows():
    def f(h, xs, w):
        def step(h, x):
            new = xnp.tanh(h @ w + x)
            return new, new
        return lax.scan(step, h, xs, reverse=True)

    h, xs, w = normal(3), normal(5, 3, seed=1), normal(3, 3, seed=2) * 0.5
    carry, ys = cpu_jit(f)(h, xs, w)
    expected, rows = h, []
    for x in xs[::-1]:
        expected = np.tanh(expected @ w + x)
        rows.append(expected)
    np.testing.assert_allclose(np.asarray(carry), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(ys), np.stack(rows[::-1]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("p", [True, False])
def test_jit_cond(p):
    def f(p, x):
        return lax.cond(p, lambda x: x.sum() * 2, lambda x: x.max(), x)

    x = normal(4, 4)
    out = float(cpu_jit(f)(np.bool_(p), x))
    np.testing.assert_allclose(out, x.sum() * 2 if p else x.max(), rtol=1e-5)


@pytest.mark.parametrize("index", [-5, 0, 1, 2, 9])
def test_jit_switch_clamps_its_index(index):
    branches = [lambda x: x + 1, lambda x: x * 3, lambda x: -x]

    def f(i, x):
        return lax.switch(i, branches, x)

    x = normal(5)
    out = np.asarray(cpu_jit(f)(np.int32(index), x))
    np.testing.assert_array_equal(out, branches[min(max(index, 0), 2)](x))


def test_jit_while_loop_collatz_steps():
    def f(n):
        def body(state):
            n, steps = state
            n = lax.select(n % 2 == 0, n // 2, 3 * n + 1)
            return n, steps + 1
        return lax.while_loop(lambda s: s[0] != 1, body, (n, np.int32(0)))[1]

    assert int(cpu_jit(f)(np.int32(27))) == 111
