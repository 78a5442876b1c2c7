"""Random programs compiled for the CPU backend agree with the interpreter.

Each seed is one program from `random_programs` (several element types,
reductions and their diamonds, dots, data movement, dynamic slices, tuples)
run on both backends with the same inputs; none may go through the
interpreter fallback. Seeds that hit an open bug are strict xfails naming
it, so they flip when it is fixed; each bug found has a minimal reproducer
below, kept as a regression test once fixed."""

import re

import numpy as np
import pytest

import xlapy
from xlapy.fuzz.compare import assert_matches
from xlapy.fuzz.hlo_programs import arguments, random_program
from xlapy.hlo import parse

PROGRAMS = 600

# -- known bugs: a minimal reproducer each ----------------------------------------------------
VARIADIC_REDUCE = """
HloModule variadic_reduce
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  v = f32[] select(gt, av, bv)
  i = s32[] select(gt, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
ENTRY main {
  p = f32[4,3] parameter(0)
  idx = s32[4,3] iota(), iota_dimension=1
  lo = f32[] constant(-inf)
  z = s32[] constant(0)
  ROOT out = (f32[4], s32[4]) reduce(p, idx, lo, z), dimensions={1}, to_apply=argmax
}
"""

PAD_OF_REDUCTION = """
HloModule pad_of_reduction
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  p = f32[2,5] parameter(0)
  z = f32[] constant(0)
  r = f32[2] reduce(p, z), dimensions={1}, to_apply=add
  bc = f32[2,5] broadcast(r), dimensions={0}
  ROOT pd = f32[3,5] pad(bc, z), padding=1_0x0_0
}
"""

EMPTY_CONCATENATE = """
HloModule empty_concatenate
ENTRY main {
  p = f32[2,0] parameter(0)
  ROOT c = f32[4,0] concatenate(p, p), dimensions={0}
}
"""

INF_SUM = """
HloModule inf_sum
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY main {
  p = f32[3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
}
"""
INF_SUM_ARGUMENTS = [np.float32([1, np.inf, 0])]

COMPLEX_COLUMN_SUM = """
HloModule complex_column_sum
add_c64 {
  a = c64[] parameter(0)
  b = c64[] parameter(1)
  ROOT c = c64[] add(a, b)
}
ENTRY main {
  p = c64[3,2] parameter(0)
  z = c64[] constant((0, 0))
  ROOT r = c64[2] reduce(p, z), dimensions={0}, to_apply=add_c64
}
"""

COMPLEX_IOTA = """
HloModule complex_iota
ENTRY main {
  p = c128[3,4] parameter(0)
  i = c128[3,4] iota(), iota_dimension=1
  ROOT m = c128[3,4] multiply(p, i)
}
"""

MAP = """
HloModule map
body {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ab = f32[] multiply(a, b)
  ROOT r = s32[] convert(ab)
}
ENTRY main {
  p = f32[3,4] parameter(0)
  q = f32[3,4] parameter(1)
  ROOT m = s32[3,4] map(p, q), dimensions={0,1}, to_apply=body
}
"""
MAP_ARGUMENTS = [np.arange(12, dtype=np.float32).reshape(3, 4) / 3,
                 np.full((3, 4), 7.5, np.float32)]

LAYOUT_IN_TUPLE = """
HloModule layout_in_tuple
ENTRY main {
  p = f32[3,33] parameter(0)
  c = f32[3,33]{0,1} copy(p)
  ROOT out = (f32[3,33]) tuple(c)
}
"""

U64_START = """
HloModule u64_start
ENTRY main {
  x = f32[5,4] parameter(0)
  i = u64[] parameter(1)
  j = u64[] parameter(2)
  s = f32[3,2] dynamic-slice(x, i, j), dynamic_slice_sizes={3,2}
  u = f32[5,4] dynamic-update-slice(x, s, j, i)
  ROOT t = (f32[3,2], f32[5,4]) tuple(s, u)
}
"""
U64_START_ARGUMENTS = [np.arange(20, dtype=np.float32).reshape(5, 4),
                       np.uint64(14740134424647878673), np.uint64(1)]

TRUNCATED_REMAINDER = """
HloModule truncated_remainder
ENTRY main {
  p = u64[20,9] parameter(0)
  ROOT c = u32[20,9] convert(p)
}
"""

BUGS = {
    "variadic_reduce": "(fixed) a variadic reduce (argmax) as a loop kernel crashed in the "
                       "store: 'tuple' object has no attribute 'type' (VARIADIC_REDUCE)",
    "pad_of_reduction": "(fixed) pad of a broadcast reduction in one fusion: invalid LLVM "
                        "IR, 'Instruction does not dominate all uses' (PAD_OF_REDUCTION)",
    "empty_concatenate": "(fixed) algsimp's concatenate_empty rule replaced f32[4,0] with "
                         "an operand f32[2,0] (EMPTY_CONCATENATE)",
    "inf_sum": "(fixed) an f32 sum with an infinity among its terms was NaN, not inf (the "
               "compensated sum's correction is inf - inf) (INF_SUM with [1, inf, 0])",
    "nested_tuple_root": "(fixed) CPU results of a nested tuple root came back flat "
                         "(test_structure.NESTED_ROOT)",
    "reshaped_parameter": "(fixed) a result aliasing a parameter through a reshape had the "
                          "parameter's shape (test_structure.RESHAPED_PARAMETER)",
    "complex_column_sum": "(fixed) a reduce of c64/c128 failed to compile ('Instruction' object "
                          "is not iterable) and ran in the interpreter fallback: the reducer's "
                          "complex (re, im) pair was taken for a variadic reducer's tuple "
                          "(COMPLEX_COLUMN_SUM)",
    "complex_iota": "(fixed) an iota of c64/c128 ran in the interpreter fallback: the "
                    "generator converted the index with the real-only convert (COMPLEX_IOTA)",
    "map": "(fixed) map had no CPU code and ran in the interpreter fallback; it is now an "
           "element generator applying its computation inline (MAP)",
    "u64_start": "(fixed) a u64 dynamic-slice/dynamic-update-slice start past 2^63 was "
                 "taken as negative and clamped to 0, not to the last position (U64_START, "
                 "seed 81057)",
    "truncated_remainder": "(fixed) LLVM 22 stored a one-lane masked remainder of an i64 -> "
                           "i32 truncation as a whole i64, 4 bytes past a [n, 9] result: heap "
                           "corruption, a fault under guard pages; tail folding is off "
                           "(llvm_workarounds) (TRUNCATED_REMAINDER, seed 100637 with wide "
                           "shapes)",
    "layout_in_tuple": "(fixed) a buffer passed on uncopied under another declared layout "
                       "(a tuple element, a loop state, a branch operand or result) was read "
                       "transposed; layout-agreement makes each buffer's readers agree with "
                       "its writer (LAYOUT_IN_TUPLE; tests/passes/test_layout_agreement.py)",
}
"""Bugs the random programs found: an open one marks its seeds (KNOWN_FAILURES)
and its reproducer (OPEN) as strict xfails; a fixed one keeps its reproducer."""

KNOWN_FAILURES: dict[str, set[int]] = {}
"""bug -> seeds that fail because of it (a seed may hit several)."""


def _seed(seed: int):
    bugs = [bug for bug, seeds in KNOWN_FAILURES.items() if seed in seeds]
    if bugs:
        reason = "; ".join(BUGS[b] for b in bugs)
        return pytest.param(seed, marks=pytest.mark.xfail(strict=True, reason=reason))
    return seed


@pytest.mark.parametrize("seed", [_seed(s) for s in range(PROGRAMS)])
def test_random_program_agrees_with_the_interpreter(seed):
    text = random_program(seed)
    module = parse(text)
    args = arguments(module, seed)
    expected = xlapy.execute(module, args, backend="interpreter")
    executable = xlapy.compile(module, backend="cpu")
    assert not executable.fallbacks, f"seed {seed}: interpreter fallback for " \
        f"{[i.opcode.value for i in executable.fallbacks]}"
    assert_matches(expected, executable.execute(*args), f"seed {seed}:\n{text}")


REQUIRED = ("f32[", "f64[", "s32[", "pred[", "bf16[", "f16[", "u8[", "u32[", "s64[", "s8[",
            "s16[", "u16[", "u64[", "c64[", "c128[",
            " add(", " multiply(", " maximum(", " compare(", " select(", " convert(",
            " broadcast(", " reduce(",
            "to_apply=max_", "to_apply=min_", "to_apply=mul_", "to_apply=argmax_",
            " dot(", "lhs_batch_dims", " slice(", ":2]", " pad(", "_1x", "-1_",
            " concatenate(", " transpose(", " reshape(", " reverse(", " iota(",
            " dynamic-slice(", " dynamic-update-slice(", " tuple(", "get-tuple-element(",
            "ROOT out = ((", " exponential(", " divide(", " rsqrt(", " shift-left(",
            " remainder(", " clamp(",
            # control flow
            " while(", " conditional(", "branch_computations=", "true_computation=", " call(",
            # side effects without collectives or infeed
            " rng-bit-generator(", "algorithm=rng_default", "algorithm=rng_three_fry",
            "algorithm=rng_philox", " opt-barrier(", " add-dependency(",
            # every dtype
            " complex(", " real(", " imag(", " count-leading-zeros(", " popcnt(", " atan2(",
            # more ops
            " sort(", "type=TOTALORDER", " gather(", " scatter(", " reduce-window(",
            " select-and-scatter(", " convolution(", "feature_group_count=", "rhs_dilate=",
            " map(", " reduce-precision(", " bitcast-convert(")
SHAPES_REQUIRED = {
    "a loop in a loop": r"body\d+_\d+ = .* while\(",
    "a loop in a branch": r"branch\d+_\d+ = .* while\(",
    "a conditional in a loop": r"body\d+_\d+ = .* conditional\(",
    "a loop state of several types": r"= \(s32\[\], s32\[\], [a-z]+\d*\[[\d,]*\], (?!s32\[)",
    "a loop state holding one value twice": r"tuple\(v\d+, v\d+, (v\d+), \1\)",
    "a trip count from an enclosing counter": r"clamp\(body\d+_\d+, body\d+_1, ",
    "a copy into another layout": r"\]\{[\d,]+\} copy\(",
    "a parameter in another layout": r"\]\{[\d,]+\} parameter\(",
    "a u64[3] random state": r"\(u64\[3\], [a-z0-9]+\[",
    "boolean arithmetic": r"pred\[[\d,]*\] (multiply|maximum|minimum)\(",
    "an iota of complex numbers": r"c(64|128)\[[\d,]+\] iota\(",
    "a conversion to complex": r"c(64|128)\[[\d,]*\] convert\(",
    "a conversion to f16": r" f16\[[\d,]*\] convert\(",
    "a conversion to bf16": r"bf16\[[\d,]*\] convert\(",
    "a multi-operand sort": r"\) sort\(v\d+, v\d+",
}
"""Constructs that need a pattern to be seen (a regular expression each)."""


def test_the_programs_cover_the_issue_list():
    """Every construct the issue names appears in at least five programs."""
    texts = [random_program(seed) for seed in range(PROGRAMS)]
    counts = {needle: sum(needle in t for t in texts) for needle in REQUIRED}
    counts.update({name: sum(bool(re.search(pattern, t)) for t in texts)
                   for name, pattern in SHAPES_REQUIRED.items()})
    assert {k: v for k, v in counts.items() if v < 5} == {}


# -- the reproducers ------------------------------------------------------------------------
REPRODUCERS = {"variadic_reduce": (VARIADIC_REDUCE, None),
               "pad_of_reduction": (PAD_OF_REDUCTION, None),
               "empty_concatenate": (EMPTY_CONCATENATE, None),
               "inf_sum": (INF_SUM, INF_SUM_ARGUMENTS),
               "complex_column_sum": (COMPLEX_COLUMN_SUM, None),
               "complex_iota": (COMPLEX_IOTA, None),
               "map": (MAP, MAP_ARGUMENTS),
               "layout_in_tuple": (LAYOUT_IN_TUPLE, None),
               "u64_start": (U64_START, U64_START_ARGUMENTS)}
"""bug -> (module text, arguments or None for `arguments(module, 0)`)."""
OPEN: set[str] = set()
"""Bugs not fixed yet; the others' reproducers stay as regression tests."""


def _reproducer(name: str):
    marks = [pytest.mark.xfail(strict=True, reason=BUGS[name])] if name in OPEN else []
    return pytest.param(*REPRODUCERS[name], id=name, marks=marks)


@pytest.mark.parametrize("text, args", [_reproducer(name) for name in REPRODUCERS])
def test_bug_reproducer(text, args):
    module = parse(text)
    args = arguments(module, 0) if args is None else args
    expected = xlapy.execute(module, args, backend="interpreter")
    executable = xlapy.compile(module, backend="cpu")
    assert not executable.fallbacks, [i.opcode.value for i in executable.fallbacks]
    assert_matches(expected, executable.execute(*args))


GUARDED = {"truncated_remainder": TRUNCATED_REMAINDER}
"""Reproducers of out-of-bounds accesses: run under --xlapy_cpu_guard_pages, where
one faults, in a sandbox."""


def guarded_run(text: str) -> str | None:
    """In a sandbox under guard pages: `text` compiled and run; why it differs from the
    interpreter, or None."""
    from xlapy.fuzz.compare import mismatch

    module = parse(text)
    args = arguments(module, 0)
    expected = xlapy.execute(module, args, backend="interpreter")
    executable = xlapy.compile(module, backend="cpu")
    assert executable.guard_pages and not executable.fallbacks
    return mismatch(expected, executable.execute(*args))


@pytest.mark.parametrize("name", list(GUARDED))
def test_bug_reproducer_stays_in_bounds(name):
    from pathlib import Path

    from xlapy.fuzz.sandbox import Sandbox

    root = Path(__file__).resolve().parents[3]
    environment = {"XLAPY_FLAGS": "--xlapy_cpu_guard_pages --xlapy_cpu_cache_dir=off",
                   "PYTHONPATH": str(root)}
    with Sandbox(environment) as sandbox:
        outcome = sandbox.run(guarded_run, GUARDED[name], timeout=120)
    assert outcome.ok, f"{BUGS[name]}: {outcome.status} {outcome.error}"
    assert outcome.value is None, outcome.value


def test_assert_matches_is_strict_where_it_should_be():
    """The comparison itself: integers exact, floats to rounding, NaN and inf placed."""
    a = np.array([1.0, np.nan, np.inf], np.float32)
    assert_matches([a], [a.copy()])
    for bad in ([1.0, np.nan, -np.inf], [1.0, 0.0, np.inf], [1.01, np.nan, np.inf]):
        with pytest.raises(AssertionError):
            assert_matches([a], [np.array(bad, np.float32)])
    with pytest.raises(AssertionError):
        assert_matches([np.int32([1, 2])], [np.int32([1, 3])])
    with pytest.raises(AssertionError):
        assert_matches([np.int32([1, 2])], [np.int64([1, 2])])
