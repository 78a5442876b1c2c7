"""`xlapy train`: data-parallel training over 2 processes prints the losses one
process prints on the global batch, step by step, within float rounding."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.distributed.launch import ROOT, launch, needs_mpi
from xlapy.cli import main


def _losses(text: str) -> list[float]:
    return [float(v) for v in re.findall(r"step +\d+ +loss ([-\d.e]+)", text)]


@needs_mpi
@pytest.mark.parametrize("model, extra", [("mlp", ["--synthetic", "--batch-size", "64"]),
                                          ("encoder", ["--batch-size", "8"])])
def test_two_processes_train_as_one_on_the_global_batch(model, extra):
    args = ["train", "--model", model, "--steps", "6", *extra]
    alone = subprocess.run([sys.executable, "-m", "xlapy.cli", *args], capture_output=True,
                           text=True, cwd=ROOT, timeout=600)
    assert alone.returncode == 0, alone.stderr
    job = launch(2, ["-m", "xlapy.cli", *args])
    assert job.returncode == 0, job.stdout + job.stderr
    one, two = _losses(alone.stdout), _losses(job.stdout)
    assert len(one) == len(two) == 6, (alone.stdout, job.stdout)
    assert two == pytest.approx(one, rel=1e-5), (one, two)
    assert "over 2 process(es) (" in job.stdout and "in collectives" in job.stdout
    assert one[-1] < one[0]


def test_one_process_trains_alone(capsys):
    assert main(["train", "--synthetic", "--steps", "2", "--batch-size", "5"]) == 0
    out = capsys.readouterr().out
    assert "over 1 process(es)" in out and len(_losses(out)) == 2
