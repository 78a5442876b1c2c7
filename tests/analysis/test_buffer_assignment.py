"""Buffer assignment: allocations for parameters, constants, outputs and one
temporary arena; dead temporaries reused; outputs written over dead operands;
donated parameters holding their outputs. Every assignment is checked by
simulating the schedule on its memory: each read must find the value last
written there."""

from __future__ import annotations

import pytest

from tests.analysis.test_liveness import WHILE, by_name, module
from xlapy.analysis.buffer_assignment import BufferAssignment, assign_buffers
from xlapy.analysis.liveness import BufferKind, forwards
from xlapy.hlo import Opcode, parse


# -- the checker ----------------------------------------------------------------------------
def check_assignment(ba: BufferAssignment) -> None:
    """Run the schedule on the assignment's memory, tagging bytes with the buffer
    last written there: a read must find its buffer intact; values live at once
    never share bytes unless one was written over the other in place."""
    live = ba.liveness
    memory: dict[int, list[tuple[int, int, int]]] = {}

    def write(buffer):
        s = ba.buffer_slices[buffer.id]
        kept = [c for c in memory.get(s.allocation, [])
                if c[1] <= s.offset or c[0] >= s.offset + s.size]
        memory[s.allocation] = kept + [(s.offset, s.offset + s.size, buffer.id)]

    def read(buffer, where):
        s = ba.buffer_slices[buffer.id]
        if s.size:
            assert (s.offset, s.offset + s.size, buffer.id) in memory.get(s.allocation, []), \
                f"{where} reads {buffer} but its bytes were overwritten"

    def read_all(instruction, where):
        for _, buffer in live.leaf_buffers(instruction):
            read(buffer, where)

    for buffer in live.buffers:
        if buffer.kind in (BufferKind.PARAMETER, BufferKind.CONSTANT):
            write(buffer)
    for time, instruction in enumerate(live.sequence):
        start, end = live.times(instruction)
        own = [b for _, b in live.leaf_buffers(instruction) if b.instruction is instruction]
        if instruction.opcode is Opcode.WHILE:
            if time == start:
                read_all(instruction.operands[0], instruction.name)
            else:
                read_all(instruction.attr("body").root_instruction, instruction.name)
            for buffer in own:
                write(buffer)
            continue
        if instruction.opcode in (Opcode.CALL, Opcode.CONDITIONAL):
            for buffer in own:
                write(buffer)
            continue
        if not forwards(instruction, live.bitcast_reshapes):  # those pass memory on, unread
            for operand in instruction.operands:
                read_all(operand, instruction.name)
        for buffer in own:
            if buffer.start == time:
                write(buffer)
        computation = instruction.parent
        if computation is not ba.module.entry_computation \
                and live.last_time(computation) == time:
            read_all(computation.root_instruction, computation.name + " (its root)")
    copied = {tuple(d.alias.output_index) for d in ba.donations if d.how == "copy"}
    root = ba.module.entry_computation.root_instruction
    for index, buffer in live.leaf_buffers(root):
        if index not in copied:
            read(buffer, "the caller")
    _check_static(ba)


def _check_static(ba: BufferAssignment) -> None:
    shared = {(out.id, old.id) for _, out, old in ba.shared}
    values = [(v, a) for a in ba.allocations for v in a.values]
    for alloc in ba.allocations:
        assert all(v.offset + v.size <= alloc.size for v in alloc.values)
        if alloc.kind == "temp":
            assert all(v.offset % ba.alignment == 0 for v in alloc.values)
    for i, (a, alloc_a) in enumerate(values):
        for b, alloc_b in values[i + 1:]:
            if alloc_a is not alloc_b or not a.size or not b.size:
                continue
            if b.offset >= a.offset + a.size or a.offset >= b.offset + b.size:
                continue
            x, y = a.buffer, b.buffer
            if alloc_a.kind == "parameter" or not x.overlaps(y):
                continue
            assert (x.id, y.id) in shared or (y.id, x.id) in shared, (x, y)


def assign(text: str, **options) -> BufferAssignment:
    ba = assign_buffers(parse(text), **options)
    check_assignment(ba)
    return ba


def slice_of(ba, name, index=()):
    return ba.slice_of(by_name(ba.module, name), index)


# -- reuse ----------------------------------------------------------------------------------
def test_a_dead_temporary_is_reused():
    ba = assign(module("""\
  x = f32[4] parameter(0)
  b1 = f32[64,4] broadcast(x), dimensions={1}
  z = f32[] constant(0)
  r1 = f32[4] reduce(b1, z), dimensions={0}, to_apply=add_f32
  b2 = f32[64,4] broadcast(r1), dimensions={1}
  r2 = f32[4] reduce(b2, z), dimensions={0}, to_apply=add_f32
  ROOT o = f32[4] add(r1, r2)"""))
    temp = ba.temp_allocation
    assert slice_of(ba, "b1") == slice_of(ba, "b2")  # b2 reuses b1's bytes
    assert slice_of(ba, "b1").allocation == temp.index
    assert slice_of(ba, "r2").offset == 1024
    assert ba.temp_size == 1040
    # the result o is written over r1, which therefore lives in o's allocation
    assert slice_of(ba, "r1") == slice_of(ba, "o") == ba.outputs[()]
    assert [(i.name, old.instruction.name) for i, _, old in ba.shared] == [("o", "r1")]


def test_alignment_of_temporaries():
    text = module("""\
  x = f32[4] parameter(0)
  a = f32[4] exponential(x)
  b = f32[4] negate(x)
  ROOT c = f32[8] concatenate(a, b), dimensions={0}""")
    ba = assign(text)
    # a and b are live together: b sits 64 bytes up, not 16
    assert sorted(v.offset for v in ba.temp_allocation.values) == [0, 64]
    assert ba.temp_size == 80
    assert assign(text, alignment=16).temp_size == 32


def test_elementwise_chain_runs_in_place():
    ba = assign(module("""\
  x = f32[256] parameter(0)
  a = f32[256] exponential(x)
  b = f32[256] negate(a)
  c = f32[256] sqrt(b)
  z = f32[] constant(0)
  ROOT d = f32[] reduce(c, z), dimensions={0}, to_apply=add_f32"""))
    assert slice_of(ba, "a") == slice_of(ba, "b") == slice_of(ba, "c")
    assert ba.temp_size == 1024
    assert [(i.name, old.instruction.name) for i, _, old in ba.shared] == [("b", "a"),
                                                                          ("c", "b")]
    # the parameter is never written over
    assert slice_of(ba, "a").allocation != slice_of(ba, "x").allocation


@pytest.mark.parametrize("body, why", [
    ("""\
  a = f32[256] exponential(x)
  b = f32[256] negate(a)
  ROOT c = f32[256] add(a, b)""", "a is still read after b"),
    ("""\
  a = f32[256] exponential(x)
  b = f16[256] convert(a)
  ROOT c = f16[256] negate(b)""", "sizes differ"),
    ("""\
  a = f32[16,16] reshape(x)
  e = f32[16,16] exponential(a)
  b = f32[16,16]{0,1} negate(e)
  ROOT c = f32[16,16]{0,1} sqrt(b)""", "layouts differ"),
    ("""\
  a = f32[16,16] reshape(x)
  e = f32[16,16] exponential(a)
  b = f32[16,16] transpose(e), dimensions={1,0}
  ROOT c = f32[16,16] negate(b)""", "a transpose is not elementwise"),
])
def test_no_in_place_write_when_unsafe(body, why):
    ba = assign(module("  x = f32[256] parameter(0)\n" + body))
    assert all(i.name != "b" for i, _, _ in ba.shared), why


def test_loop_fusion_reading_elementwise_runs_in_place_but_not_through_a_broadcast():
    ba = assign(module("""\
  x = f32[8,8] parameter(0)
  v = f32[8] parameter(1)
  a = f32[8,8] exponential(x)
  f = f32[8,8] fusion(a, v), kind=kLoop, calls=fused
  ROOT n = f32[8,8] negate(f)""", """
fused {
  p0 = f32[8,8] parameter(0)
  p1 = f32[8] parameter(1)
  bc = f32[8,8] broadcast(p1), dimensions={0}
  ROOT m = f32[8,8] multiply(p0, bc)
}
"""))
    assert slice_of(ba, "f") == slice_of(ba, "a")
    transposing = assign(module("""\
  x = f32[8,8] parameter(0)
  a = f32[8,8] exponential(x)
  f = f32[8,8] fusion(a), kind=kLoop, calls=fused
  ROOT n = f32[8,8] negate(f)""", """
fused {
  p0 = f32[8,8] parameter(0)
  t = f32[8,8] transpose(p0), dimensions={1,0}
  ROOT m = f32[8,8] add(p0, t)
}
"""))
    assert slice_of(transposing, "f") != slice_of(transposing, "a")


def test_dynamic_update_slice_writes_over_its_dead_operand():
    ba = assign(module("""\
  x = f32[64] parameter(0)
  u = f32[8] parameter(1)
  i = s32[] parameter(2)
  a = f32[64] exponential(x)
  d = f32[64] dynamic-update-slice(a, u, i)
  ROOT n = f32[64] negate(d)"""))
    assert slice_of(ba, "d") == slice_of(ba, "a")


# -- allocations ----------------------------------------------------------------------------
def test_parameters_constants_and_outputs_get_their_own_allocations():
    ba = assign(module("""\
  x = f32[16] parameter(0)
  y = (f32[4], s32[2]) parameter(1)
  c = f32[16] constant({1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16})
  e = f32[16] add(x, c)
  g = s32[2] get-tuple-element(y), index=1
  ROOT t = (f32[16], s32[2], f32[16]) tuple(e, g, x)"""))
    kinds = [(a.kind, a.size, a.parameter_number, a.parameter_index)
             for a in ba.allocations]
    assert kinds == [("parameter", 64, 0, ()), ("parameter", 16, 1, (0,)),
                     ("parameter", 8, 1, (1,)), ("constant", 64, None, ()),
                     ("output", 64, None, ())]
    assert ba.temp_allocation is None and ba.temp_size == 0
    assert ba.outputs == {(0,): slice_of(ba, "e"), (1,): slice_of(ba, "g"),
                          (2,): slice_of(ba, "x")}
    assert ba.allocations[0].output_indices == [(2,)]
    assert ba.allocations[2].output_indices == [(1,)]
    assert slice_of(ba, "t") is None  # a tuple is pointers, not memory
    assert slice_of(ba, "t", (1,)) == slice_of(ba, "g")


def test_tuple_outputs_are_separate_allocations_and_a_repeated_one_is_one():
    ba = assign(module("""\
  x = f32[16] parameter(0)
  a = f32[16] exponential(x)
  b = f32[16] negate(x)
  ROOT t = (f32[16], f32[16], f32[16]) tuple(a, b, a)"""))
    outputs = ba.allocations_of("output")
    assert [a.output_indices for a in outputs] == [[(0,), (2,)], [(1,)]]
    assert ba.outputs[(0,)] == ba.outputs[(2,)] != ba.outputs[(1,)]


def test_fusion_internals_get_no_slices_and_multi_output_leaves_do():
    ba = assign(module("""\
  x = f32[8,4] parameter(0)
  f = (f32[8], f32[8,4]) fusion(x), kind=kInput, calls=fused
  r = f32[8] get-tuple-element(f), index=0
  m = f32[8,4] get-tuple-element(f), index=1
  z = f32[] constant(0)
  s = f32[8] reduce(m, z), dimensions={1}, to_apply=add_f32
  ROOT o = f32[8] add(r, s)""", """
fused {
  p0 = f32[8,4] parameter(0)
  mm = f32[8,4] exponential(p0)
  z0 = f32[] constant(0)
  rr = f32[8] reduce(mm, z0), dimensions={1}, to_apply=add_f32
  ROOT t = (f32[8], f32[8,4]) tuple(rr, mm)
}
"""))
    fused = by_name(ba.module, "mm")
    assert ba.slice_of(fused) is None
    assert slice_of(ba, "r") == slice_of(ba, "f", (0,))
    assert slice_of(ba, "m") == slice_of(ba, "f", (1,))
    assert slice_of(ba, "r").size == 32 and slice_of(ba, "m").size == 128


def test_while_state_starts_in_the_init_value_and_body_temporaries_share_the_arena():
    ba = assign(WHILE)
    assert slice_of(ba, "w", (1,)) == slice_of(ba, "x2") == slice_of(ba, "v")
    assert any(i.name == "w" for i, _, _ in ba.shared)
    assert slice_of(ba, "e").allocation == ba.temp_allocation.index
    assert slice_of(ba, "e") != slice_of(ba, "w", (1,))


def test_conditional_branches_write_their_result_only_at_their_end():
    ba = assign(module("""\
  p = pred[] parameter(0)
  x = f32[64] parameter(1)
  a = f32[64] exponential(x)
  b = f32[64] negate(x)
  c = f32[64] conditional(p, a, b), true_computation=on_true, false_computation=on_false
  ROOT o = f32[64] add(c, x)""", """
on_true {
  tp = f32[64] parameter(0)
  t1 = f32[64] sqrt(tp)
  ROOT t2 = f32[64] negate(t1)
}

on_false {
  fp = f32[64] parameter(0)
  f1 = f32[64] abs(fp)
  ROOT f2 = f32[64] exponential(f1)
}
"""))
    # the branches never run together: their temporaries share bytes
    assert slice_of(ba, "t1") == slice_of(ba, "f1")
    assert slice_of(ba, "c") not in (slice_of(ba, "a"), slice_of(ba, "b"), slice_of(ba, "t2"))


def test_call_results_live_in_the_callee_root():
    ba = assign(module("""\
  x = f32[64] parameter(0)
  a = f32[64] exponential(x)
  c = f32[64] call(a), to_apply=callee
  ROOT o = f32[64] negate(c)""", """
callee {
  cp = f32[64] parameter(0)
  q = f32[64] sqrt(cp)
  ROOT r = f32[64] add(q, cp)
}
"""))
    assert slice_of(ba, "c") == slice_of(ba, "r")
    assert slice_of(ba, "cp") == slice_of(ba, "a")


# -- donation -------------------------------------------------------------------------------
DONATED = """HloModule d, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY main {
  x = f32[256] parameter(0)
  y = f32[256] parameter(1)
%s
}
"""


def test_a_donated_parameter_holds_its_output():
    ba = assign(DONATED % "  a = f32[256] multiply(x, y)\n  ROOT o = f32[256] add(a, y)")
    param = ba.allocations[0]
    assert param.kind == "parameter" and param.output_indices == [()]
    assert slice_of(ba, "o") == slice_of(ba, "x") == ba.outputs[()]
    assert not ba.allocations_of("output")
    assert [d.how for d in ba.donations] == ["in-place"]


def test_a_donated_parameter_read_by_its_output_elementwise_is_written_in_place():
    ba = assign(DONATED % "  ROOT o = f32[256] add(x, y)")
    assert slice_of(ba, "o") == slice_of(ba, "x")


def test_a_donated_parameter_still_read_gets_a_copy_at_the_end():
    text = """HloModule d, input_output_alias={ {0}: (0, {}, may-alias) }
ENTRY main {
  x = f32[256] parameter(0)
  y = f32[256] parameter(1)
  e = f32[256] exponential(y)
  s = f32[256] add(x, e)
  ROOT t = (f32[256], f32[256]) tuple(e, s)
}
"""
    ba = assign(text)
    assert [d.how for d in ba.donations] == ["copy"]
    e = slice_of(ba, "e")
    assert e.allocation == ba.temp_allocation.index  # computed in a temporary...
    assert ba.outputs[(0,)] == slice_of(ba, "x")     # ...and copied over x at the end
    assert ba.temp_size == 1024


# -- fused modules and printing -------------------------------------------------------------
SUM_XYZ = module("""\
  x = f32[8,16] parameter(0)
  y = f32[8,16] parameter(1)
  z = f32[8,16] parameter(2)
  ROOT f = f32[] fusion(x, y, z), kind=kInput, calls=fused""", """
fused {
  p0 = f32[8,16] parameter(0)
  p1 = f32[8,16] parameter(1)
  p2 = f32[8,16] parameter(2)
  m = f32[8,16] multiply(p1, p2)
  a = f32[8,16] add(p0, m)
  c = f32[] constant(0)
  ROOT r = f32[] reduce(a, c), dimensions={0,1}, to_apply=add_f32
}
""")

SOFTMAX_TWO_FUSIONS = module("""\
  x = f32[8,16] parameter(0)
  mx = f32[8] fusion(x), kind=kInput, calls=row_max
  ROOT out = f32[8,16] fusion(x, mx), kind=kInput, calls=normalise""", """
max_f32 {
  l = f32[] parameter(0)
  r = f32[] parameter(1)
  ROOT m = f32[] maximum(l, r)
}

row_max {
  q0 = f32[8,16] parameter(0)
  ninf = f32[] constant(-inf)
  ROOT rm = f32[8] reduce(q0, ninf), dimensions={1}, to_apply=max_f32
}

normalise {
  n0 = f32[8,16] parameter(0)
  n1 = f32[8] parameter(1)
  b = f32[8,16] broadcast(n1), dimensions={0}
  d = f32[8,16] subtract(n0, b)
  e = f32[8,16] exponential(d)
  zero = f32[] constant(0)
  s = f32[8] reduce(e, zero), dimensions={1}, to_apply=add_f32
  bs = f32[8,16] broadcast(s), dimensions={0}
  ROOT o = f32[8,16] divide(e, bs)
}
""")


def test_a_fused_reduction_needs_no_temporaries():
    ba = assign(SUM_XYZ)
    assert ba.temp_size == 0
    assert [a.kind for a in ba.allocations] == ["parameter"] * 3 + ["output"]


def test_softmax_temporaries_are_one_row_vector():
    ba = assign(SOFTMAX_TWO_FUSIONS)
    assert ba.temp_size == 8 * 4


def test_to_text_reads_like_xlas_dump():
    ba = assign(DONATED % "  a = f32[256] multiply(x, y)\n  ROOT o = f32[256] add(a, y)")
    text = ba.to_text()
    print(text)
    lines = text.splitlines()
    assert lines[1] == ("allocation 0: size 1024, parameter 0, shape |f32[256]| at ShapeIndex "
                        "{}, maybe-live-out, output {}:")
    assert " value: <0 x> (size=1024,offset=0): f32[256]{0} live=[0,2]" in lines
    assert "allocation 2: size 1024, preallocated-temp:" in lines
    assert "Total bytes used: 3072 (3.00KiB)" in lines
    assert "Donated: output {} <- parameter 0 (in-place)" in lines
    assert "Used values:" in lines


def test_in_place_can_be_turned_off():
    text = module("""\
  x = f32[256] parameter(0)
  a = f32[256] exponential(x)
  b = f32[256] negate(a)
  ROOT c = f32[256] sqrt(b)""")
    ba = assign(text)
    assert ba.temp_size == 0  # the whole chain runs in the result's memory
    assert slice_of(ba, "a") == slice_of(ba, "b") == slice_of(ba, "c")
    # without in-place writes, b overlaps both a and c; a, dead before c is written,
    # still goes into c's allocation, as XLA reuses result allocations
    off = assign(text, in_place=False)
    assert off.temp_size == 1024 and not off.shared
    assert slice_of(off, "a") == slice_of(off, "c") != slice_of(off, "b")


# -- random programs ------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(30))
def test_random_programs_never_clobber_a_live_value(seed):
    from tests.passes.test_fusion import random_program
    from xlapy.passes.fusion import InstructionFusion
    from xlapy.passes.multi_output_fusion import MultiOutputFusion
    from xlapy.passes.scheduler import HloMemoryScheduler

    text = random_program(seed)
    check_assignment(assign_buffers(parse(text)))
    m = parse(text)
    for p in (InstructionFusion(), MultiOutputFusion(), HloMemoryScheduler()):
        p.run(m)
    ba = assign_buffers(m)
    check_assignment(ba)
    assert ba.temp_size <= sum(b.size for b in ba.liveness.buffers
                               if b.kind is BufferKind.TEMP) + 64 * len(ba.liveness.buffers)


def test_deterministic():
    texts = {assign_buffers(parse(WHILE)).to_text() for _ in range(3)}
    assert len(texts) == 1
