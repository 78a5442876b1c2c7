"""Random programs with collectives (`xlapy.fuzz.collective_programs`), run in every
process on the interpreter (the oracle) and the CPU backend with this device's
inputs; results must agree as in the single-process random-program tests
(`xlapy.fuzz.compare`: integers and booleans exact, floats to a rounding budget).

    mpiexec -n N python random_collective_programs.py FIRST:END [SKIP,SKIP,...]
    mpiexec -n N python random_collective_programs.py SEED,SEED,...

runs seeds FIRST..END-1 except the SKIPped ones, or the seeds listed. Every process builds the
same program for a seed (it depends only on the seed and N), so they all reach
the same collectives. A mismatch is printed with its seed and rank and the run
goes on; after each program the processes compare notes, and if an error left
them at different points of the program (their collectives may be out of step)
the run stops there rather than hang. Exits non-zero on any failure, else prints
`PASS <rank>`.
"""

from __future__ import annotations

import sys
import time
import traceback

import xlapy
from xlapy import distributed
from xlapy.fuzz.collective_programs import collective_program
from xlapy.fuzz.compare import mismatch

distributed.initialize()
RANK, N = distributed.process_index(), distributed.process_count()
SKIP = {int(s) for s in sys.argv[2].split(",") if s} if len(sys.argv) > 2 else set()
if ":" in sys.argv[1]:
    FIRST, END = map(int, sys.argv[1].split(":"))
    SEEDS = [s for s in range(FIRST, END) if s not in SKIP]
else:
    SEEDS = [int(s) for s in sys.argv[1].split(",")]

from mpi4py import MPI  # noqa: E402  (after initialize: xlapy starts MPI)

NOTES = MPI.COMM_WORLD.Dup()
"""Where the processes compare notes after each program (apart from xlapy's own)."""


def run_one(seed: int) -> tuple[str, str]:
    """(phase, problem): ("ok", "") or where program `seed` failed on this device."""
    phase = "generate"
    try:
        text, inputs_for = collective_program(seed, N)
        inputs = inputs_for(RANK)
        phase = "interpreter"
        expected = xlapy.execute(text, inputs, backend="interpreter")
        phase = "compile"
        executable = xlapy.compile(text, backend="cpu")
        phase = "cpu"
        actual = executable.execute(*inputs)
    except Exception as e:   # noqa: BLE001  (every failure is a finding: report, go on)
        return phase, f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=-4)}"
    if executable.fallbacks:
        return "fallback", f"interpreter fallback for " \
                           f"{[i.opcode.value for i in executable.fallbacks]}"
    problem = mismatch(expected, actual)
    return ("mismatch", problem) if problem else ("ok", "")


def main() -> int:
    failures: list[int] = []
    start = time.monotonic()
    slowest = (0.0, -1)
    for seed in SEEDS:
        began = time.monotonic()
        phase, problem = run_one(seed)
        slowest = max(slowest, (time.monotonic() - began, seed))
        notes = NOTES.allgather((phase, problem.split("\n")[0]))
        if phase != "ok":
            failures.append(seed)
            print(f"FAIL seed {seed} rank {RANK} of {N} ({phase}): {problem}", flush=True)
        failing = [r for r, (ph, _) in enumerate(notes) if ph != "ok"]
        if failing:   # the program once, after every rank's FAIL line, before the next
            NOTES.Barrier()
            if RANK == failing[0]:
                print(f"--- program {seed} for {N} devices ---\n"
                      f"{collective_program(seed, N)[0]}", flush=True)
            NOTES.Barrier()
        erred = {note for note in notes if note[0] in ("generate", "interpreter", "cpu")}
        if erred and (len(erred) > 1 or len(failing) != N):
            print(f"rank {RANK}: the processes failed differently on seed {seed} "
                  f"({sorted(erred)}); their collectives may be out of step: stopping",
                  flush=True)
            break
    elapsed = time.monotonic() - start
    print(f"rank {RANK}: {len(SEEDS)} seeds on {N} processes in {elapsed:.1f} s (slowest: "
          f"seed {slowest[1]}, {slowest[0]:.2f} s); failed: {failures}", file=sys.stderr,
          flush=True)
    if failures:
        return 1
    print(f"PASS {RANK}", flush=True)
    return 0


sys.exit(main())
