"""Collective modules written by real JAX/XLA (tests/distributed/jax_modules/, made by
make_jax_modules.py: pmap and shard_map programs, SPMD-partitioned by XLA, with
JAX's per-device inputs and outputs): each runs under `mpiexec -n 2` and `-n 4`
on the interpreter and the CPU backend and must give JAX's results on every
device; in one process each parses, verifies, matches its recorded arrays and
refuses to run, naming mpiexec."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import xlapy
from tests.distributed.launch import check_passed, needs_mpi, run_mpi

FIXTURES = sorted((pathlib.Path(__file__).resolve().parent / "jax_modules").glob("*.hlo"))


def arrays(path: pathlib.Path, kind: str, device: int) -> list[np.ndarray]:
    data = np.load(path.with_suffix(".npz"))
    count = sum(1 for key in data.files if key.startswith(f"{kind}{device}_"))
    return [data[f"{kind}{device}_{k}"] for k in range(count)]


def devices_of(module) -> int:
    return module.attributes.get("replica_count", 1) * module.attributes.get("num_partitions", 1)


def test_fixtures_cover_both_job_sizes_and_forms():
    names = {p.stem for p in FIXTURES}
    for n in (2, 4):
        for form in ("pmap", "shmap"):
            for program in ("psum", "pmean", "pmax", "pmin", "all_gather", "all_gather_tiled",
                            "psum_scatter", "psum_scatter_tiled", "ppermute_ring",
                            "all_to_all", "axis_index", "train_step"):
                assert f"{form}_{program}_n{n}" in names
    assert {"mesh2x2_psum_a_n4", "mesh2x2_psum_b_n4"} <= names


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_fixture_parses_verifies_and_matches_its_arrays(path):
    module = xlapy.hlo.parse(path.read_text())
    xlapy.hlo.verify(module)
    n = int(path.stem.rsplit("_n", 1)[1])
    assert devices_of(module) == n
    parameters, result = module.entry_computation.program_shape()
    results = [leaf for _, leaf in result.leaves()]
    for device in range(n):
        for declared, held in ((parameters, arrays(path, "in", device)),
                               (results, arrays(path, "out", device))):
            assert [(s.dtype, s.dimensions) for s in declared] == \
                [(a.dtype, a.shape) for a in held], (path.stem, device)


@pytest.mark.parametrize("backend", ["interpreter", "cpu"])
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_a_fixture_in_one_process_asks_for_mpiexec(path, backend):
    with pytest.raises(xlapy.ExecutionError, match="mpiexec"):
        xlapy.execute(path.read_text(), arrays(path, "in", 0), backend=backend)


@needs_mpi
@pytest.mark.parametrize("n", [2, 4])
def test_jax_modules_give_jax_results_on_every_device(n):
    check_passed(run_mpi("jax_modules.py", n), n)
