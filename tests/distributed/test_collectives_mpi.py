"""Collectives across real processes: `mpiexec -n 2` and `-n 4` (oversubscribed on
small machines), every opcode in every group mode and layout, on the
interpreter and the CPU backend, against NumPy; and a peer that never arrives
(hung, or gone) makes the collective fail with the missing rank named."""

from __future__ import annotations

import pytest

from tests.distributed.launch import check_passed, needs_mpi, run_mpi

pytestmark = needs_mpi


@pytest.mark.parametrize("n", [2, 4])
def test_every_collective_against_numpy(n):
    check_passed(run_mpi("collectives_vs_numpy.py", n), n)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("how, launcher", [("hang", ()), ("exit", ("-disable-auto-cleanup",))])
def test_a_peer_that_never_arrives_times_out_naming_it(backend, how, launcher):
    job = run_mpi("peer_never_arrives.py", 2, backend, how, timeout=120,
                  flags="--xla_collective_timeout_s=3", launcher_args=launcher)
    output = job.stdout + job.stderr
    assert "TIMEOUT after 3" in job.stdout, output
    assert "r (all-reduce): timed out after 3 s" in job.stdout, output
    assert "waiting for the group {0,1}; rank 0 is there, missing: 1" in job.stdout, output
    assert job.returncode != 0   # the job is aborted, not left hanging
