"""Launch a test script under `mpiexec -n N` (MPICH from the `mpich` wheel, as
the test extra installs it) and check that every rank passed.

Each script prints `PASS <rank>` when all its checks held; anything else (an
assertion, a hang past the timeout) fails the test with the job's output.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPTS = pathlib.Path(__file__).resolve().parent / "scripts"
MPIEXEC = shutil.which("mpiexec") or str(pathlib.Path(sys.executable).parent / "mpiexec")
AVAILABLE = importlib.util.find_spec("mpi4py") is not None and os.path.exists(MPIEXEC)

needs_mpi = pytest.mark.skipif(not AVAILABLE, reason="needs mpi4py and mpiexec: pip install "
                                                     "-e '.[test]' (the distributed extra)")


def run_mpi(script: str, n: int, *args: str, timeout: float = 600, flags: str = "",
            launcher_args=()) -> subprocess.CompletedProcess:
    """Run tests/distributed/scripts/`script` in `n` processes; returns the job."""
    return launch(n, [str(SCRIPTS / script), *args], timeout, flags, launcher_args)


def launch(n: int, python_args: list[str], timeout: float = 600, flags: str = "",
           launcher_args=()) -> subprocess.CompletedProcess:
    """`mpiexec -n n python *python_args` from the repository root; returns the job."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["XLAPY_FLAGS"] = f"{env.get('XLAPY_FLAGS', '')} {flags}".strip()
    command = [MPIEXEC, "-n", str(n), *launcher_args, sys.executable, *python_args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=ROOT)


def check_passed(job: subprocess.CompletedProcess, n: int) -> None:
    output = job.stdout + job.stderr
    assert job.returncode == 0, f"mpiexec exited with {job.returncode}:\n{output[-6000:]}"
    passed = {int(rank) for rank in re.findall(r"PASS (\d+)", job.stdout)}
    missing = sorted(set(range(n)) - passed)
    assert not missing, f"ranks {missing} did not pass:\n{output[-6000:]}"
