"""`--xlapy_cpu_guard_pages`: every buffer an execution uses sits against an
inaccessible page, so a kernel reading or writing out of bounds faults.

The out-of-bounds kernels are written by hand in LLVM IR (off-by-one copy
loops) and run through the real CpuExecutable on a module's real buffer
assignment, in a child process: under the flag the child dies of SIGSEGV, in
the normal mode the same bug goes unnoticed. Ordinary programs give the same
results under the flag (a slice of the random-program campaign, each in a
sandbox so a fault names its seed), and the caller's arrays stay untouched.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xlapy
from xlapy.analysis import assign_buffers
from xlapy.flags import flags_set
from xlapy.fuzz.compare import assert_matches
from xlapy.hlo import parse

ROOT = Path(__file__).resolve().parents[3]
N = 1024
"""Elements per buffer: 4 KiB of f32, a whole page, so an underrun meets the guard too."""

MODULE = f"""
HloModule overrun
ENTRY main {{
  p = f32[{N}] parameter(0)
  t1 = f32[{N}] negate(p)
  t2 = f32[{N}] abs(p)
  ROOT out = f32[{2 * N}] concatenate(t1, t2), dimensions={{0}}
}}
"""

# copy loops: (destination, first element written, source, source shift, count):
# dst[start + i] = src[shift + i] for i in [0, count). The correct program is
# t2 = p; t1 = p; out = t1 ++ t2; each bug replaces one of its loops.
CORRECT = [("t2", 0, "p", 0, N), ("t1", 0, "p", 0, N), ("out", 0, "t1", 0, N),
           ("out", N, "t2", 0, N)]
BUGS = {
    "read past a parameter": (1, ("t1", 0, "p", 1, N)),
    "read before a parameter": (1, ("t1", 0, "p", -1, N)),
    "write past a temporary": (1, ("t1", 1, "p", 0, N)),
    "write past an output": (3, ("out", N + 1, "t2", 0, N)),
}


def _entry_ir(assignment, module, loops) -> str:
    """`xlapy_entry(i8** allocations, i8* fallback)` running the copy loops."""
    entry = module.entry_computation
    lines = ["define void @xlapy_entry(i8** %table, i8* %fallback) {", "entry:"]

    def pointer(name: str, tag: str) -> str:
        s = assignment.slice_of(entry.instruction(name))
        lines.extend([f"  %{tag}.slot = getelementptr i8*, i8** %table, i64 {s.allocation}",
                      f"  %{tag}.base = load i8*, i8** %{tag}.slot",
                      f"  %{tag}.at = getelementptr i8, i8* %{tag}.base, i64 {s.offset}",
                      f"  %{tag} = bitcast i8* %{tag}.at to float*"])
        return f"%{tag}"

    for k, (dst, start, src, shift, count) in enumerate(loops):
        d, s = pointer(dst, f"d{k}"), pointer(src, f"s{k}")
        lines += [f"  br label %loop{k}", f"loop{k}:",
                  f"  %i{k} = phi i64 [0, %{'entry' if k == 0 else f'done{k - 1}'}], "
                  f"[%next{k}, %loop{k}]",
                  f"  %from{k} = add i64 %i{k}, {shift}",
                  f"  %to{k} = add i64 %i{k}, {start}",
                  f"  %sp{k} = getelementptr float, float* {s}, i64 %from{k}",
                  f"  %dp{k} = getelementptr float, float* {d}, i64 %to{k}",
                  f"  %v{k} = load volatile float, float* %sp{k}",
                  f"  store volatile float %v{k}, float* %dp{k}",
                  f"  %next{k} = add i64 %i{k}, 1",
                  f"  %end{k} = icmp eq i64 %next{k}, {count}",
                  f"  br i1 %end{k}, label %done{k}, label %loop{k}", f"done{k}:"]
    lines += ["  ret void", "}"]
    return "\n".join(lines)


def _executable(loops, guard: bool, separate_temps: bool):
    """A CpuExecutable of MODULE whose code is the hand-written copy loops."""
    import llvmlite.binding as llvm

    from xlapy.backends.cpu.executable import CpuExecutable
    from xlapy.backends.cpu.llvm_target import LoadedObject, emit_object, target_machine

    module = parse(MODULE)
    assignment = assign_buffers(module, separate_temps=separate_temps)
    tm = target_machine()
    text = f'target triple = "{tm.triple}"\ntarget datalayout = "{tm.target_data}"\n' \
        + _entry_ir(assignment, module, loops)
    obj = emit_object(llvm.parse_assembly(text), tm)
    return CpuExecutable(module, assignment, LoadedObject(obj), [], guard_pages=guard)


def child(bug: str, guard: bool, separate_temps: bool) -> None:
    """In a child process: run MODULE with `bug` in place of one loop, print the sum."""
    loops = list(CORRECT)
    number, loop = BUGS[bug]
    loops[number] = loop
    p = np.arange(N, dtype=np.float32)
    out = _executable(loops, guard, separate_temps).execute(p)[0]
    print(float(out.sum()))


def _run_child(bug: str, guard: bool, separate_temps: bool = True) -> subprocess.CompletedProcess:
    code = (f"from tests.backends.cpu.test_guard_pages import child; "
            f"child({bug!r}, {guard}, {separate_temps})")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


FAULTS = (-signal.SIGSEGV, -signal.SIGBUS)


def test_the_hand_written_program_is_right_with_and_without_guards():
    p = np.arange(N, dtype=np.float32)
    for guard in (False, True):
        out = _executable(CORRECT, guard, separate_temps=guard).execute(p)[0]
        np.testing.assert_array_equal(out, np.concatenate([p, p]))


@pytest.mark.parametrize("bug", list(BUGS))
def test_an_out_of_bounds_access_faults_under_guard_pages(bug):
    result = _run_child(bug, guard=True)
    assert result.returncode in FAULTS, \
        f"{bug}: exit status {result.returncode}\n{result.stdout}\n{result.stderr}"


@pytest.mark.parametrize("bug", ["read past a parameter", "write past a temporary"])
def test_the_same_bug_goes_unnoticed_without_guard_pages(bug):
    """(Why the mode exists: the read gets a neighbour's bytes, the write lands in
    the next temporary of the arena.)"""
    result = _run_child(bug, guard=False, separate_temps=False)
    assert result.returncode == 0, result.stderr


def test_an_overrun_from_one_temporary_into_the_next_needs_separate_temps():
    """With the temporaries in one arena, the guards fence the arena only: t1's
    overrun writes into t2 (allocation order puts t2 right after t1 or the other
    way round; either way the arena's last temporary is fenced)."""
    assignment = assign_buffers(parse(MODULE))
    assert len(assignment.allocations_of("temp")) == 1
    separate = assign_buffers(parse(MODULE), separate_temps=True)
    temps = separate.allocations_of("temp")
    assert [a.size for a in temps] == [4 * N, 4 * N]
    assert separate.temp_size == 8 * N


# -- ordinary programs under the flag -----------------------------------------------------------
def test_jit_results_and_arguments_under_guard_pages():
    import xlapy.numpy as xnp

    def f(x, w, b):
        h = xnp.tanh(x @ w + b)
        return xnp.sum(h * h, axis=1), h.T

    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((7, 33), (33, 5), (5,))]
    copies = [a.copy() for a in args]
    expected = xlapy.jit(f, backend="interpreter")(*args)
    with flags_set("--xlapy_cpu_guard_pages"):
        compiled = xlapy.jit(f, backend="cpu")
        got = compiled(*args)
        assert compiled.lower(*args).compile().executable.guard_pages
        again = compiled(*args)
    for e, g, a in zip(expected, got, again):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(np.asarray(a), np.asarray(g))
    for a, c in zip(args, copies):
        np.testing.assert_array_equal(a, c)


def test_a_donated_argument_under_guard_pages():
    def step(x, y):
        return x * 2.0 + y

    x, y = np.arange(6, dtype=np.float32), np.ones(6, np.float32)
    with flags_set("--xlapy_cpu_guard_pages"):
        out = xlapy.jit(step, donate_argnums=0, backend="cpu")(x.copy(), y)
    np.testing.assert_array_equal(np.asarray(out), x * 2 + 1)


TWO_TEMPS = """
HloModule two_temps
ENTRY main {
  x = f32[32,32] parameter(0)
  t1 = f32[32,32] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t2 = f32[32,32] dot(t1, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t3 = f32[32,32] dot(t2, t1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT out = f32[32,32] dot(t3, t2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""
"""Three temporaries live at once once optimised (the arena holds two, the result's
allocation hosts the third)."""


STRUCTURE = """
HloModule structure
ENTRY main {
  p = ((f32[2,3]{0,1}, s32[3]), f64[]) parameter(0)
  q = f32[3,2]{0,1} parameter(1)
  i = (f32[2,3]{0,1}, s32[3]) get-tuple-element(p), index=0
  a = f32[2,3]{0,1} get-tuple-element(i), index=0
  b = s32[3] get-tuple-element(i), index=1
  s = f64[] get-tuple-element(p), index=1
  d = f32[2,2]{0,1} dot(a, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[3] constant({7, 8, 9})
  ROOT t = (f32[2,2]{0,1}, s32[3], f64[], f32[3]{0}, f32[3,2]{0,1}) tuple(d, b, s, c, q)
}
"""


def test_tuple_parameters_layouts_and_pass_through_results_under_guard_pages():
    module = parse(STRUCTURE)
    rng = np.random.default_rng(1)
    args = [((rng.standard_normal((2, 3)).astype(np.float32), np.int32([4, 5, 6])),
             np.float64(2.5)), rng.standard_normal((3, 2)).astype(np.float32)]
    expected = xlapy.execute(module, args, backend="interpreter")
    with flags_set("--xlapy_cpu_guard_pages"):
        executable = xlapy.compile(module, backend="cpu")
    assert executable.guard_pages
    assert_matches(expected, executable.execute(*args))


def test_the_compiler_gives_each_temporary_its_own_allocation_under_the_flag():
    with flags_set("--xlapy_cpu_guard_pages"):
        executable = xlapy.compile(parse(TWO_TEMPS), backend="cpu")
    temps = executable.assignment.allocations_of("temp")
    assert executable.guard_pages and len(temps) == 3
    assert all(len(a.values) == 1 for a in temps)


PROGRAMS = range(0, 600, 4)
"""The CI slice of the random-program campaign run under guard pages."""


def guarded_programs(seeds) -> dict[int, str]:
    """In a sandbox: each seed's program compiled under guard pages, each temporary
    fenced on its own, against the interpreter; seed -> mismatch for those that differ."""
    from xlapy.fuzz.compare import mismatch
    from xlapy.fuzz.hlo_programs import arguments, random_program

    problems = {}
    for seed in seeds:
        module = parse(random_program(seed))
        args = arguments(module, seed)
        expected = xlapy.execute(module, args, backend="interpreter")
        executable = xlapy.compile(module, backend="cpu")
        assert executable.guard_pages and not executable.fallbacks
        problem = mismatch(expected, executable.execute(*args))
        if problem:
            problems[seed] = problem
    return problems


def test_random_programs_agree_with_the_interpreter_under_guard_pages():
    from xlapy.fuzz.sandbox import Sandbox

    environment = {"XLAPY_FLAGS": "--xlapy_cpu_guard_pages", "PYTHONPATH": str(ROOT)}
    seeds = list(PROGRAMS)
    with Sandbox(environment) as sandbox:
        for chunk in (seeds[i:i + 25] for i in range(0, len(seeds), 25)):
            outcome = sandbox.run(guarded_programs, chunk, timeout=120)
            if outcome.status == "crash":   # find the seed that faulted
                for seed in chunk:
                    alone = sandbox.run(guarded_programs, [seed], timeout=60)
                    assert alone.ok, f"seed {seed}: {alone.status} {alone.error}"
            assert outcome.ok, f"{outcome.status}: {outcome.error}\n{outcome.detail}"
            assert outcome.value == {}, outcome.value
