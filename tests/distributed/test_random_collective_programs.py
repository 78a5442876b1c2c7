"""Random programs with collectives agree with the interpreter in every process.

`xlapy.fuzz.collective_programs` makes each program; the script
`random_collective_programs.py` runs it in every process of an `mpiexec` job on
the interpreter and the CPU backend with that device's inputs and compares them
(seed and rank printed on a mismatch). 300 programs for two processes, 150 for four.

They found two bugs, both fixed: collective-broadcast of a scalar returned a
[1] array, and a one-operand tuple all-to-all returned a bare array.

Wall time on the 2-core development machine, CPU disk cache off: about 9 s for
the 2-process launch and 12 s for the 4-process one (oversubscribed), about 1 s
for each launch of known-bug seeds.
"""

from __future__ import annotations

import time

import pytest

from tests.distributed.launch import check_passed, needs_mpi, run_mpi

pytestmark = needs_mpi

SCRIPT = "random_collective_programs.py"
FLAGS = "--xla_collective_timeout_s=60 --xlapy_cpu_cache_dir=off"
"""A hung peer fails its collective within a minute; every program is compiled
(and the disk cache is not filled with hundreds of one-off programs)."""
RUNS = {2: 300, 4: 150}
"""processes -> how many seeds (0, 1, ...) run."""



@pytest.mark.parametrize("n", list(RUNS))
def test_random_programs_with_collectives_agree_with_the_interpreter(n):
    began = time.monotonic()
    job = run_mpi(SCRIPT, n, f"0:{RUNS[n]}", timeout=600, flags=FLAGS)
    print(f"mpiexec -n {n}: {RUNS[n]} programs in {time.monotonic() - began:.1f} s")
    check_passed(job, n)
