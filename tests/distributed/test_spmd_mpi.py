"""pmap and shard_map across 2 and 4 processes (tests/distributed/scripts/spmd_programs.py):
the lax collectives, axis_index, gradients through them, 1-D and 2-D meshes."""

from __future__ import annotations

import pytest

from tests.distributed.launch import check_passed, needs_mpi, run_mpi

pytestmark = needs_mpi


@pytest.mark.parametrize("n", [2, 4])
def test_pmap_and_shard_map_across_processes(n):
    check_passed(run_mpi("spmd_programs.py", n), n)
