"""While bodies writing their loop state in place: a root leaf produced by an
in-place op (dynamic-update-slice, elementwise, loop fusion) over the body
parameter's leaf at the same index lives in the state's memory, so the copy back
is a no-op; whenever the old state is still read after that op, or the value is
returned twice, the copy stays. Every assignment goes through the schedule
simulation of test_buffer_assignment, which fails when a live value is clobbered."""

from __future__ import annotations

import random

import numpy as np
import pytest

import xlapy
import xlapy.numpy as xnp
from tests.analysis.test_buffer_assignment import assign, slice_of
from tests.analysis.test_liveness import by_name, module
from xlapy import lax
from xlapy.analysis.buffer_assignment import assign_buffers
from xlapy.analysis.liveness import Liveness
from xlapy.hlo import parse

STATE = "(s32[], f32[64,8], f32[8])"


def scan(body: str, entry_tail: str = "ROOT r = f32[64,8] get-tuple-element(w), index=1",
         extra: str = "") -> str:
    """A 64-step loop over (counter, [64,8] array, [8] row) whose body is `body`,
    after `bp`, the counter `i` and the parameter leaves `acc` and `row`."""
    return module(f"""\
  a = f32[64,8] parameter(0)
  x = f32[8] parameter(1)
  zero = s32[] constant(0)
  init = {STATE} tuple(zero, a, x)
  w = {STATE} while(init), condition=cond, body=body
  {entry_tail}""", f"""{extra}
cond {{
  cp = {STATE} parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(64)
  ROOT lt = pred[] compare(ci, n), direction=LT
}}

body {{
  bp = {STATE} parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  acc = f32[64,8] get-tuple-element(bp), index=1
  row = f32[8] get-tuple-element(bp), index=2
{body}
}}
""")


SCAN = scan("""\
  r2 = f32[1,8] reshape(row)
  c0 = s32[] constant(0)
  acc2 = f32[64,8] dynamic-update-slice(acc, r2, i, c0)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[64,8], f32[8]) tuple(i2, acc2, row)""")


def in_state(ba) -> list[str]:
    return [i.name for i, out, _ in ba.shared if out.id in ba.in_loop_state]


# -- sharing --------------------------------------------------------------------------------
def test_a_scan_writes_its_row_straight_into_the_loop_state():
    ba = assign(SCAN)
    assert slice_of(ba, "acc2") == slice_of(ba, "acc") == slice_of(ba, "w", (1,))
    assert slice_of(ba, "i2") == slice_of(ba, "w", (0,))  # the counter too
    assert sorted(in_state(ba)) == ["acc2", "i2"]
    # the state is the entry's result: the body's value lives in the output allocation
    out = ba.allocations[ba.outputs[()].allocation]
    assert out.kind == "output"
    assert {v.buffer.instruction.name for v in out.values} == {"w", "acc2"}
    text = ba.to_text()
    assert " value: <" in text and "acc2> (size=2048,offset=0): f32[64,8]{1,0}" in text
    assert any(line.startswith(" acc2: ") and line.endswith("(loop state)")
               for line in text.splitlines())


def test_a_temporary_state_shares_its_arena_slot_and_liveness_is_unchanged():
    text = scan(SCAN.split("row = f32[8] get-tuple-element(bp), index=2\n")[1]
                .split("\n}\n")[0], "g = f32[64,8] get-tuple-element(w), index=1\n"
                "  z = f32[] constant(0)\n  ROOT s = f32[] reduce(g, z), dimensions={0,1}, "
                "to_apply=add_f32")
    ba = assign(text)
    state = slice_of(ba, "w", (1,))
    assert state.allocation == ba.temp_allocation.index
    assert slice_of(ba, "acc2") == state
    # the body value is still its own logical buffer, live within the body
    acc2 = ba.liveness.buffer_at(by_name(ba.module, "acc2"))
    loop = ba.liveness.buffer_at(by_name(ba.module, "w"), (1,))
    assert acc2 is not loop and loop.start < acc2.start <= acc2.end < loop.end
    # one 2 KiB array in the arena, not two
    assert ba.temp_size < 2 * 2048


def test_through_bitcast_reshapes_and_a_loop_fusion():
    ba = assign(scan("""\
  flat = f32[512] reshape(acc)
  f = f32[512] fusion(flat), kind=kLoop, calls=fused
  back = f32[64,8] reshape(f)
  ROOT t = (s32[], f32[64,8], f32[8]) tuple(i, back, row)""", extra="""
fused {
  p0 = f32[512] parameter(0)
  h = f32[] constant(0.5)
  hb = f32[512] broadcast(h), dimensions={}
  ROOT m = f32[512] multiply(p0, hb)
}
"""))
    assert in_state(ba) == ["f"]
    assert slice_of(ba, "f") == slice_of(ba, "w", (1,))


def test_a_loop_over_one_array_updates_it_in_place():
    ba = assign(module("""\
  a = f32[64] parameter(0)
  w = f32[64] while(a), condition=cond, body=body
  ROOT o = f32[64] negate(w)""", """
cond {
  cp = f32[64] parameter(0)
  c0 = s32[] constant(0)
  e = f32[1] dynamic-slice(cp, c0), dynamic_slice_sizes={1}
  e0 = f32[] reshape(e)
  lim = f32[] constant(100)
  ROOT lt = pred[] compare(e0, lim), direction=LT
}

body {
  bp = f32[64] parameter(0)
  head = f32[4] slice(bp), slice={[0:4]}
  one = f32[4] constant({1, 1, 1, 1})
  up = f32[4] add(head, one)
  c0 = s32[] constant(0)
  ROOT d = f32[64] dynamic-update-slice(bp, up, c0)
}
"""))
    assert in_state(ba) == ["d"]
    assert slice_of(ba, "d") == slice_of(ba, "w")


def test_a_donated_parameter_holding_the_state_holds_the_body_value_too():
    text = SCAN.replace("HloModule m", "HloModule m, input_output_alias={ {}: (0, {}, may-alias) }")
    text = text.replace("tuple(zero, a, x)", "tuple(zero, a2, x)").replace(
        "  zero = s32[] constant(0)\n", "  zero = s32[] constant(0)\n  a2 = f32[64,8] negate(a)\n")
    ba = assign(text)
    assert [d.how for d in ba.donations] == ["in-place"]
    assert slice_of(ba, "acc2") == slice_of(ba, "w", (1,)) == slice_of(ba, "a")
    assert "acc2" in in_state(ba)


# -- no sharing -----------------------------------------------------------------------------
NOT_SHARED = {
    "a later instruction reads the old array": """\
  c0 = s32[] constant(0)
  r2 = f32[1,8] reshape(row)
  acc2 = f32[64,8] dynamic-update-slice(acc, r2, i, c0)
  z = f32[] constant(0)
  s = f32[8] reduce(acc, z), dimensions={0}, to_apply=add_f32
  ROOT t = (s32[], f32[64,8], f32[8]) tuple(i, acc2, s)
""",
    "a later instruction reads the old array through a bitcast": """\
  c0 = s32[] constant(0)
  r2 = f32[1,8] reshape(row)
  acc2 = f32[64,8] dynamic-update-slice(acc, r2, i, c0)
  flat = f32[512] reshape(acc)
  sl = f32[8] slice(flat), slice={[0:8]}
  ROOT t = (s32[], f32[64,8], f32[8]) tuple(i, acc2, sl)
""",
}


@pytest.mark.parametrize("why", NOT_SHARED)
def test_the_copy_stays_when_the_old_value_is_needed(why):
    ba = assign(scan(NOT_SHARED[why]))
    assert "acc2" not in in_state(ba), why
    assert slice_of(ba, "acc2") != slice_of(ba, "w", (1,))


def four_leaves(text: str, root: str) -> str:
    """`text` with a fourth state leaf, a copy of the array's initial value."""
    return text.replace(STATE, "(s32[], f32[64,8], f32[8], f32[64,8])").replace(
        "tuple(zero, a, x)", "tuple(zero, a, x, a)").replace("tuple(i, acc, n)", root)


def test_the_copy_stays_when_the_root_also_returns_the_old_value():
    ba = assign(four_leaves(scan("""\
  r2 = f32[1,8] reshape(row)
  c0 = s32[] constant(0)
  acc2 = f32[64,8] dynamic-update-slice(acc, r2, i, c0)
  ROOT t = (s32[], f32[64,8], f32[8]) tuple(i, acc, n)"""), "tuple(i, acc2, row, acc)"))
    assert in_state(ba) == []
    assert slice_of(ba, "acc2") != slice_of(ba, "w", (1,))


def test_the_copy_stays_when_the_value_is_returned_twice():
    ba = assign(four_leaves(scan("""\
  n = f32[64,8] negate(acc)
  ROOT t = (s32[], f32[64,8], f32[8]) tuple(i, acc, n)"""), "tuple(i, n, row, n)"))
    assert in_state(ba) == []
    assert slice_of(ba, "n") not in (slice_of(ba, "w", (1,)), slice_of(ba, "w", (3,)))


def test_a_swap_keeps_its_copies():
    pair = "(f32[8], f32[8])"
    ba = assign(module(f"""\
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  init = {pair} tuple(a, b)
  w = {pair} while(init), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=0""", f"""
cond {{
  cp = {pair} parameter(0)
  c = f32[8] get-tuple-element(cp), index=0
  z = f32[] constant(0)
  s = f32[] reduce(c, z), dimensions={{0}}, to_apply=add_f32
  lim = f32[] constant(100)
  ROOT lt = pred[] compare(s, lim), direction=LT
}}

body {{
  bp = {pair} parameter(0)
  x = f32[8] get-tuple-element(bp), index=0
  y = f32[8] get-tuple-element(bp), index=1
  nx = f32[8] negate(x)
  ny = f32[8] negate(y)
  ROOT t = {pair} tuple(ny, nx)
}}
"""))
    # each new value overwrites the other leaf's old one: never the state's own memory
    assert in_state(ba) == []


def test_an_op_over_temporaries_is_not_written_into_the_state():
    ba = assign(scan("""\
  neg = f32[64,8] negate(acc)
  ab = f32[64,8] abs(acc)
  diff = f32[64,8] subtract(neg, ab)
  ROOT t = (s32[], f32[64,8], f32[8]) tuple(i, diff, row)"""))
    assert in_state(ba) == []


def test_the_counter_read_after_its_increment_keeps_its_copy():
    ba = assign(scan("""\
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  c0 = s32[] constant(0)
  r2 = f32[1,8] reshape(row)
  acc2 = f32[64,8] dynamic-update-slice(acc, r2, i, c0)
  ROOT t = (s32[], f32[64,8], f32[8]) tuple(i2, acc2, row)"""))
    assert in_state(ba) == ["acc2"]  # i is read by the update after i2 is computed


def test_in_place_off_keeps_every_copy():
    ba = assign(SCAN, in_place=False)
    assert in_state(ba) == [] and not ba.shared
    assert slice_of(ba, "acc2") != slice_of(ba, "w", (1,))


def test_a_body_run_by_two_loops_keeps_its_copies():
    text = SCAN.replace("  ROOT r = f32[64,8] get-tuple-element(w), index=1", """\
  w2 = (s32[], f32[64,8], f32[8]) while(w), condition=cond, body=body
  ROOT r = f32[64,8] get-tuple-element(w2), index=1""")
    ba = assign(text)
    assert in_state(ba) == []


def test_read_times_skip_forwarding_ops_and_see_callee_roots():
    m = parse(SCAN)
    live = Liveness(m)
    body = by_name(m, "t").parent
    acc = live.buffer_at(by_name(m, "acc"))
    dus, _ = live.times(by_name(m, "acc2"))
    start, _ = live.times(by_name(m, "bp"))
    # only the update reads acc's bytes: the parameter and get-tuple-elements forward it
    assert live.read_times(acc, start, live.last_time(body)) == [dus]
    row = live.buffer_at(by_name(m, "row"))
    # row's reshape is a bitcast: the update reads row, and the body's end (a root leaf)
    assert live.read_times(row, start, live.last_time(body)) == [dus, live.last_time(body)]


# -- random bodies --------------------------------------------------------------------------
def random_body(seed: int) -> str:
    """Random ops over the parameter leaves, in a random order; the root takes any
    array of the right shape for each leaf (old values, new ones, repeats)."""
    rnd = random.Random(seed)
    big, small = ["acc"], ["row"]
    lines = []
    for n in range(rnd.randint(1, 6)):
        kind = rnd.choice(["dus", "un", "bin", "red", "gte", "gte_row"])
        name = f"v{n}"
        if kind == "dus":
            lines.append(f"  up{n} = f32[1,8] reshape({rnd.choice(small)})")
            lines.append(f"  k{n} = s32[] constant(0)")
            lines.append(f"  {name} = f32[64,8] dynamic-update-slice({rnd.choice(big)}, up{n}, "
                         f"i, k{n})")
            big.append(name)
        elif kind == "un":
            pool, shape = rnd.choice([(big, "f32[64,8]"), (small, "f32[8]")])
            op = rnd.choice(["negate", "abs", "exponential"])
            lines.append(f"  {name} = {shape} {op}({rnd.choice(pool)})")
            pool.append(name)
        elif kind == "bin":
            pool, shape = rnd.choice([(big, "f32[64,8]"), (small, "f32[8]")])
            lines.append(f"  {name} = {shape} add({rnd.choice(pool)}, {rnd.choice(pool)})")
            pool.append(name)
        elif kind == "red":
            lines.append(f"  zero{n} = f32[] constant(0)")
            lines.append(f"  {name} = f32[8] reduce({rnd.choice(big)}, zero{n}), dimensions={{0}}, "
                         "to_apply=add_f32")
            small.append(name)
        elif kind == "gte":
            lines.append(f"  {name} = f32[64,8] get-tuple-element(bp), index=1")
            big.append(name)
        else:
            lines.append(f"  {name} = f32[8] get-tuple-element(bp), index=2")
            small.append(name)
    one = "  one = s32[] constant(1)\n  i2 = s32[] add(i, one)"
    counter = rnd.choice(["i", "i2"])
    at = rnd.randint(0, len(lines))
    lines.insert(at, one)
    lines.append(f"  ROOT t = {STATE} tuple({counter}, {rnd.choice(big)}, {rnd.choice(small)})")
    return "\n".join(lines)


@pytest.mark.parametrize("seed", range(40))
def test_random_bodies_never_clobber_a_live_value(seed):
    assign(scan(random_body(seed)))


def test_random_bodies_share_sometimes():
    shared = sum(bool(in_state(assign_buffers(parse(scan(random_body(s)))))) for s in range(40))
    assert 5 < shared < 40


# -- end to end -----------------------------------------------------------------------------
def test_cpu_scan_matches_the_interpreter():
    def f(a, xs):
        def body(i, st):
            acc, c = st
            c = c * 0.5 + xs[i]
            return lax.dynamic_update_slice(acc, c[None, :], (i, 0)), c
        return lax.fori_loop(0, xs.shape[0], body, (a, xnp.zeros_like(xs[0])))

    rng = np.random.default_rng(1)
    a = rng.standard_normal((24, 8)).astype(np.float32)
    xs = rng.standard_normal((24, 8)).astype(np.float32)
    compiled = xlapy.jit(f, backend="cpu").lower(a, xs).compile()
    assert "dynamic-update-slice" in " ".join(
        i.name for i, out, _ in compiled.executable.assignment.shared
        if out.id in compiled.executable.assignment.in_loop_state)
    got = compiled(a, xs)
    want = xlapy.jit(f, backend="interpreter")(a, xs)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
