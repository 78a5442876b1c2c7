"""Liveness: logical buffers per array leaf, forwarding ops aliasing their
operand, fusion bodies holding nothing, control flow sharing as documented,
and live ranges [first write, last read] over the schedule."""

from __future__ import annotations

from xlapy.analysis.liveness import BufferKind, Liveness, sequence_memory
from xlapy.hlo import parse

ADD = """
add_f32 {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  ROOT sum = f32[] add(lhs, rhs)
}
"""


def module(body: str, extra: str = "") -> str:
    return f"HloModule m\n{ADD}{extra}\nENTRY main {{\n{body}\n}}\n"


def by_name(m, name):
    for computation in m.computations:
        for instruction in computation.instructions:
            if instruction.name == name:
                return instruction
    raise KeyError(name)


def test_a_chain_has_known_lifetimes():
    m = parse(module("""\
  x = f32[16] parameter(0)
  a = f32[16] exponential(x)
  b = f32[16] negate(a)
  c = f32[16] add(a, b)
  ROOT d = f32[16] sqrt(c)"""))
    live = Liveness(m)
    ranges = {b.instruction.name: (b.start, b.end, b.kind) for b in live.buffers}
    assert ranges == {
        "x": (0, 1, BufferKind.PARAMETER),
        "a": (1, 3, BufferKind.TEMP),        # last read by c at t=3
        "b": (2, 3, BufferKind.TEMP),
        "c": (3, 4, BufferKind.TEMP),
        "d": (4, 5, BufferKind.OUTPUT),      # read by the caller at end_time
    }
    assert live.end_time == 5
    assert [b.size for b in live.buffers] == [64] * 5
    assert live.buffer_at(by_name(m, "d")).live_out


def test_an_unread_value_lives_for_its_instant():
    m = parse(module("""\
  x = f32[8] parameter(0)
  dead = f32[8] negate(x)
  ROOT y = f32[8] exponential(x)"""))
    dead = Liveness(m).buffer_at(by_name(m, "dead"))
    assert (dead.start, dead.end) == (1, 1)


def test_tuple_leaves_are_separate_and_forwarding_ops_alias():
    m = parse(module("""\
  x = f32[4,4] parameter(0)
  y = f32[16] parameter(1)
  e = f32[4,4] exponential(x)
  n = f32[16] negate(y)
  t = (f32[4,4], f32[16]) tuple(e, n)
  g0 = f32[4,4] get-tuple-element(t), index=0
  g1 = f32[16] get-tuple-element(t), index=1
  bc = f32[16] bitcast(g0)
  r = f32[16] reshape(g0)
  ROOT s = f32[16] add(bc, g1)"""))
    live = Liveness(m)
    e, n = live.buffer_at(by_name(m, "e")), live.buffer_at(by_name(m, "n"))
    assert e is not n
    assert live.buffer_at(by_name(m, "t"), (0,)) is e
    assert live.buffer_at(by_name(m, "t"), (1,)) is n
    assert live.buffer_at(by_name(m, "t"), ()) is None  # a tuple is not memory
    assert live.buffer_at(by_name(m, "g0")) is e
    assert live.buffer_at(by_name(m, "bc")) is e
    assert live.buffer_at(by_name(m, "r")) is e  # a row-major reshape is a bitcast
    assert live.buffer_at(by_name(m, "g1")) is n
    assert {b.instruction.name for b in live.buffers} == {"x", "y", "e", "n", "s"}
    assert sorted(i.name for i, _ in e.positions) == ["bc", "e", "g0", "r", "t"]
    # e is read through bc by s, the last instruction before the end
    assert e.end == live.times(by_name(m, "s"))[0]


def test_reshape_aliasing_can_be_turned_off_and_needs_row_major_layouts():
    text = module("""\
  x = f32[4,4] parameter(0)
  e = f32[4,4] exponential(x)
  ROOT r = f32[16] reshape(e)""")
    m = parse(text)
    live = Liveness(m)
    assert live.buffer_at(by_name(m, "r")) is live.buffer_at(by_name(m, "e"))
    live = Liveness(m, bitcast_reshapes=False)
    assert live.buffer_at(by_name(m, "r")) is not live.buffer_at(by_name(m, "e"))
    transposed = parse(module("""\
  x = f32[4,4] parameter(0)
  e = f32[4,4]{0,1} exponential(x)
  ROOT r = f32[16] reshape(e)"""))
    live = Liveness(transposed)
    assert live.buffer_at(by_name(transposed, "r")) is not \
        live.buffer_at(by_name(transposed, "e"))


def test_parameters_and_constants_have_their_own_kinds():
    m = parse(module("""\
  x = (f32[4], s32[]) parameter(0)
  g = f32[4] get-tuple-element(x), index=0
  c = f32[4] constant({1, 2, 3, 4})
  ROOT a = f32[4] add(g, c)"""))
    live = Liveness(m)
    param_leaves = [b for b in live.buffers if b.kind is BufferKind.PARAMETER]
    assert [b.parameter for b in param_leaves] == [(0, (0,)), (0, (1,))]
    assert live.buffer_at(by_name(m, "g")) is param_leaves[0]
    assert live.buffer_at(by_name(m, "c")).kind is BufferKind.CONSTANT


def test_fusion_bodies_hold_no_buffers():
    m = parse(module("""\
  x = f32[8,4] parameter(0)
  y = f32[8,4] parameter(1)
  ROOT f = (f32[8], f32[8,4]) fusion(x, y), kind=kInput, calls=fused""", """
fused {
  p0 = f32[8,4] parameter(0)
  p1 = f32[8,4] parameter(1)
  m = f32[8,4] multiply(p0, p1)
  z = f32[] constant(0)
  r = f32[8] reduce(m, z), dimensions={1}, to_apply=add_f32
  ROOT t = (f32[8], f32[8,4]) tuple(r, m)
}
"""))
    live = Liveness(m)
    fusion = by_name(m, "f")
    assert {b.instruction.name for b in live.buffers} == {"x", "y", "f"}
    assert [(i, b.size) for i, b in live.leaf_buffers(fusion)] == [((0,), 32), ((1,), 128)]
    assert not live.holds_buffers(fusion.attr("calls"))
    assert live.end_time == 3


WHILE = module("""\
  x = f32[64] parameter(0)
  zero = s32[] constant(0)
  x2 = f32[64] add(x, x)
  init = (s32[], f32[64]) tuple(zero, x2)
  w = (s32[], f32[64]) while(init), condition=cond, body=body
  r = f32[64] get-tuple-element(w), index=1
  ROOT o = f32[64] negate(r)""", """
cond {
  cp = (s32[], f32[64]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(ci, n), direction=LT
}

body {
  bp = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  v = f32[64] get-tuple-element(bp), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  e = f32[64] exponential(v)
  v1 = f32[64] multiply(e, v)
  ROOT t = (s32[], f32[64]) tuple(i1, v1)
}
""")


def test_while_state_is_shared_by_the_loop_its_body_and_its_condition():
    m = parse(WHILE)
    live = Liveness(m)
    loop = by_name(m, "w")
    start, end = live.times(loop)
    state = live.buffer_at(loop, (1,))
    assert state.instruction is loop and state.kind is BufferKind.TEMP
    for name, index in [("bp", (1,)), ("cp", (1,)), ("v", ()), ("r", ())]:
        assert live.buffer_at(by_name(m, name), index) is state
    assert live.buffer_at(by_name(m, "ci")) is live.buffer_at(loop, (0,))
    # the state lives from the loop's start to the last read of its result
    assert state.start == start and state.end == live.times(by_name(m, "o"))[0]
    # the body runs between the loop's start and end; its temporaries live in there
    e = live.buffer_at(by_name(m, "e"))
    assert start < e.start <= e.end < end
    # the body root is a copy: its own buffer, read as the body ends
    v1 = live.buffer_at(by_name(m, "v1"))
    assert v1 is not state and v1.end < end
    # the init value is copied in at the loop's start
    assert live.buffer_at(by_name(m, "x2")).end == start
    assert live.sequence[start] is loop and live.sequence[end] is loop


def test_call_results_and_parameters_alias_the_callee():
    m = parse(module("""\
  x = f32[32] parameter(0)
  a = f32[32] exponential(x)
  c = f32[32] call(a), to_apply=callee
  ROOT o = f32[32] negate(c)""", """
callee {
  p = f32[32] parameter(0)
  ROOT q = f32[32] sqrt(p)
}
"""))
    live = Liveness(m)
    assert live.buffer_at(by_name(m, "p")) is live.buffer_at(by_name(m, "a"))
    assert live.buffer_at(by_name(m, "c")) is live.buffer_at(by_name(m, "q"))
    a = live.buffer_at(by_name(m, "a"))
    assert a.end >= live.times(by_name(m, "q"))[0]


def test_conditional_branches_read_their_operands_and_copy_out():
    m = parse(module("""\
  p = pred[] parameter(0)
  x = f32[8] parameter(1)
  a = f32[8] exponential(x)
  b = f32[8] negate(x)
  ROOT c = f32[8] conditional(p, a, b), true_computation=on_true, false_computation=on_false""",
                     """
on_true {
  tp = f32[8] parameter(0)
  ROOT tr = f32[8] sqrt(tp)
}

on_false {
  fp = f32[8] parameter(0)
  ROOT fr = f32[8] abs(fp)
}
"""))
    live = Liveness(m)
    c = by_name(m, "c")
    assert live.buffer_at(by_name(m, "tp")) is live.buffer_at(by_name(m, "a"))
    assert live.buffer_at(by_name(m, "fp")) is live.buffer_at(by_name(m, "b"))
    out = live.buffer_at(c)
    assert out.instruction is c and out.kind is BufferKind.OUTPUT
    assert out not in (live.buffer_at(by_name(m, "tr")), live.buffer_at(by_name(m, "fr")))
    # both operands stay live until the conditional ends
    assert live.buffer_at(by_name(m, "a")).end == live.times(c)[1]


def test_a_computation_called_twice_gets_copies():
    m = parse(module("""\
  x = f32[8] parameter(0)
  c1 = f32[8] call(x), to_apply=callee
  c2 = f32[8] call(c1), to_apply=callee
  ROOT o = f32[8] add(c1, c2)""", """
callee {
  p = f32[8] parameter(0)
  ROOT q = f32[8] sqrt(p)
}
"""))
    live = Liveness(m)
    assert live.buffer_at(by_name(m, "c1")) is not live.buffer_at(by_name(m, "c2"))
    assert live.buffer_at(by_name(m, "p")).kind is BufferKind.TEMP


def test_peak_live_bytes_and_sequence_memory():
    text = module("""\
  x = f32[256] parameter(0)
  a = f32[256] exponential(x)
  b = f32[256] sqrt(x)
  z = f32[] constant(0)
  ra = f32[] reduce(a, z), dimensions={0}, to_apply=add_f32
  rb = f32[] reduce(b, z), dimensions={0}, to_apply=add_f32
  ROOT s = f32[] add(ra, rb)""")
    m = parse(text)
    live = Liveness(m)
    assert live.peak_live_bytes() == 2 * 1024 + 4  # a and b together, then ra with b
    entry = m.entry_computation
    program = list(entry.instructions)
    assert sequence_memory(entry, program) == 2 * 1024 + 4
    names = ["x", "a", "z", "ra", "b", "rb", "s"]
    better = [by_name(m, n) for n in names]
    assert sequence_memory(entry, better) == 1024 + 4 + 4
