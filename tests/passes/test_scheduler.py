"""The memory scheduler: HLO text in, a scheduled module out. It lowers peak
live bytes where program order is bad, never breaks a dependence (operands,
control predecessors, side-effect order), leaves results unchanged, marks the
module scheduled, and is deterministic."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy
from tests.analysis.test_liveness import WHILE, module
from xlapy.analysis import assign_buffers
from xlapy.analysis.liveness import sequence_memory
from xlapy.hlo import parse, verify
from xlapy.passes.scheduler import HloMemoryScheduler

# Four large values made first and each reduced late: program order keeps all
# four alive at once; a good schedule reduces each right after making it.
BAD_ORDER = module("""\
  x = f32[1024] parameter(0)
  a1 = f32[1024] exponential(x)
  a2 = f32[1024] sqrt(x)
  a3 = f32[1024] negate(x)
  a4 = f32[1024] tanh(x)
  z = f32[] constant(0)
  r1 = f32[] reduce(a1, z), dimensions={0}, to_apply=add_f32
  r2 = f32[] reduce(a2, z), dimensions={0}, to_apply=add_f32
  r3 = f32[] reduce(a3, z), dimensions={0}, to_apply=add_f32
  r4 = f32[] reduce(a4, z), dimensions={0}, to_apply=add_f32
  p12 = f32[] add(r1, r2)
  p34 = f32[] add(r3, r4)
  ROOT s = f32[] add(p12, p34)""")


def peak(m) -> int:
    entry = m.entry_computation
    return sequence_memory(entry, entry.instructions)


def schedule(text: str, algorithm: str = "default", seed: int = 0):
    """Parse, schedule, verify (also after a print/parse round trip), and check the
    interpreter gives identical results before and after."""
    m = parse(text)
    verify(m)
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(p.shape.dimensions).astype(p.shape.dtype)
            for p in m.entry_computation.parameters]
    before = xlapy.execute(m, args, backend="interpreter")
    scheduler = HloMemoryScheduler(algorithm)
    scheduler.run(m)
    verify(m)
    verify(parse(m.to_text()))
    after = xlapy.execute(m, args, backend="interpreter")
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a, b)
    return m, scheduler


def test_a_bad_program_order_is_fixed():
    original = parse(BAD_ORDER)
    m, scheduler = schedule(BAD_ORDER)
    assert peak(original) == 4 * 4096 + 4
    assert peak(m) == 4096 + 3 * 4
    assert scheduler.peak_bytes["main"] == peak(m)
    assert assign_buffers(m).temp_size < assign_buffers(original).temp_size
    names = [i.name for i in m.entry_computation.instructions]
    for k in "1234":
        assert names.index(f"r{k}") == names.index(f"a{k}") + 1, names


@pytest.mark.parametrize("algorithm", ["list", "dfs", "post-order"])
def test_every_algorithm_gives_a_valid_order(algorithm):
    m, scheduler = schedule(BAD_ORDER, algorithm)
    assert scheduler.chosen["main"] == algorithm
    assert peak(m) <= peak(parse(BAD_ORDER))


def test_the_module_is_marked_scheduled():
    m, _ = schedule(BAD_ORDER)
    assert m.attributes["is_scheduled"] is True
    assert m.to_text().startswith("HloModule m, is_scheduled=true\n")
    assert parse(m.to_text()).attributes["is_scheduled"] is True


def test_never_worse_than_program_order():
    good = module("""\
  x = f32[1024] parameter(0)
  a = f32[1024] exponential(x)
  z = f32[] constant(0)
  r = f32[] reduce(a, z), dimensions={0}, to_apply=add_f32
  b = f32[1024] negate(x)
  q = f32[] reduce(b, z), dimensions={0}, to_apply=add_f32
  ROOT s = f32[] add(r, q)""")
    m, _ = schedule(good)
    assert peak(m) <= peak(parse(good))


def test_parameters_lead_in_their_order():
    m, _ = schedule(BAD_ORDER.replace("  x = f32[1024] parameter(0)\n",
                                      "  y = f32[4] parameter(1)\n  x = f32[1024] parameter(0)\n"))
    names = [i.name for i in m.entry_computation.instructions]
    assert names[:2] == ["y", "x"]


def test_side_effects_and_control_predecessors_keep_their_order():
    text = module("""\
  x = f32[64] parameter(0)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  big = f32[64] exponential(x)
  rnd1 = f32[64] rng(lo, hi), distribution=rng_uniform
  rnd2 = f32[64] rng(lo, hi), distribution=rng_uniform
  n = f32[64] negate(x), control-predecessors={big}
  a = f32[64] add(rnd2, big)
  ROOT s = f32[64] add(a, rnd1)""")
    m = parse(text)
    HloMemoryScheduler().run(m)
    verify(m)
    names = [i.name for i in m.entry_computation.instructions]
    assert names.index("rnd1") < names.index("rnd2")
    assert names.index("big") < names.index("n")


def test_while_bodies_and_conditions_are_scheduled_too():
    m, scheduler = schedule(WHILE)
    assert set(scheduler.peak_bytes) == {"cond", "body", "main"}
    assert m.computation("body").root_instruction.name == "t"


def test_fusion_bodies_are_left_alone():
    from tests.analysis.test_buffer_assignment import SOFTMAX_TWO_FUSIONS

    m, scheduler = schedule(SOFTMAX_TWO_FUSIONS)
    assert set(scheduler.peak_bytes) == {"main"}
    original = parse(SOFTMAX_TWO_FUSIONS)
    for name in ("normalise", "row_max"):
        assert [i.name for i in m.computation(name).instructions] == \
            [i.name for i in original.computation(name).instructions]


def test_deterministic():
    texts = []
    for _ in range(2):
        m = parse(BAD_ORDER)
        HloMemoryScheduler().run(m)
        texts.append(m.to_text())
    assert texts[0] == texts[1]


def test_reports_whether_it_changed_anything():
    m = parse(BAD_ORDER)
    assert HloMemoryScheduler().run(m) is True
    assert HloMemoryScheduler().run(m) is False  # already scheduled, already best


def test_unknown_algorithm_is_refused():
    with pytest.raises(ValueError, match="unknown scheduler"):
        HloMemoryScheduler("random")


@pytest.mark.parametrize("seed", range(25))
def test_random_programs_keep_their_results(seed):
    from tests.passes.test_fusion import random_program
    from xlapy.passes.fusion import InstructionFusion

    text = random_program(seed)
    m, _ = schedule(text, seed=seed)
    assert peak(m) <= peak(parse(text))
    fused = parse(text)
    InstructionFusion().run(fused)
    schedule(fused.to_text(), seed=seed)


def test_a_control_dependence_cycle_is_reported():
    from xlapy.hlo import RawAttribute

    m = parse(module("""\
  x = f32[4] parameter(0)
  a = f32[4] negate(x)
  ROOT b = f32[4] exponential(a)"""))
    m.entry_computation.instruction("a").attrs["control-predecessors"] = RawAttribute("{%b}")
    with pytest.raises(ValueError, match="cycle through a, b"):
        HloMemoryScheduler("list").run(m)
