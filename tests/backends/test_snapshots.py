"""Execution snapshots (`--xla_dump_hlo_snapshots`) and their replay
(`xlapy run-hlo --snapshot`), as XLA's replay_computation: the MNIST step and
the encoder layer recorded on the CPU replay on the CPU and the interpreter to
the recorded results; a wrong recorded result is a mismatch, a damaged file a
message."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy
from xlapy import models
from xlapy.backends import snapshots
from xlapy.cli import main
from xlapy.flags import flags_set
from xlapy.models import lib


def _recorded(tmp_path, fn, *args, calls=2):
    with flags_set(f"--xla_dump_to={tmp_path} --xla_dump_hlo_snapshots"):
        jitted = xlapy.jit(fn, backend="cpu")
        for _ in range(calls):
            out = jitted(*args)
    return sorted(tmp_path.glob("*.snapshot.*.npz")), out


def _mnist_step():
    rng = np.random.default_rng(0)
    x, labels = models.data.clusters(rng, 32)
    params = models.softmax_regression.init(rng)
    return models.softmax_regression.train_step, params, (x / 4, lib.one_hot(labels, 10))


def test_each_execution_is_a_snapshot_named_as_xla_names_it(tmp_path):
    step, params, batch = _mnist_step()
    files, _ = _recorded(tmp_path, step, params, batch)
    assert [f.name.rsplit(".", 3)[-3:] for f in files] == [["snapshot", "0", "npz"],
                                                           ["snapshot", "1", "npz"]]
    number = files[0].name.split(".")[0]          # module_NNNN, as the module's other dumps
    assert (tmp_path / f"{number}.jit_train_step.before_optimizations.txt").exists()
    recorded = snapshots.read(str(files[0]))
    assert recorded.backend == "cpu" and "HloModule jit_train_step" in recorded.hlo_text
    assert len(recorded.results) == 3 and len(recorded.arguments) == 4


@pytest.mark.parametrize("backend", ["cpu", "interpreter"])
def test_the_mnist_step_and_the_encoder_replay_on_both_backends(tmp_path, capsys, backend):
    step, params, batch = _mnist_step()
    mnist, _ = _recorded(tmp_path / "mnist", step, params, batch)
    rng = np.random.default_rng(1)
    enc = models.encoder.init(rng, d_model=32, heads=4, ff=64)
    x = rng.standard_normal((2, 8, 32)).astype(np.float32)
    encoder, _ = _recorded(tmp_path / "encoder", models.encoder.apply, enc, x, calls=1)
    for path in (mnist[-1], encoder[0]):
        assert main(["run-hlo", "--snapshot", str(path), "--backend", backend,
                     "--abs-error-bound", "1e-5", "--rel-error-bound", "1e-4"]) == 0
        out = capsys.readouterr().out
        assert f"recorded on cpu, replayed on {backend}" in out and "close enough" in out


def test_a_changed_result_is_a_mismatch_and_a_damaged_file_a_message(tmp_path, capsys):
    files, _ = _recorded(tmp_path, lambda a: xlapy.numpy.tanh(a) * 2.0,
                         np.linspace(-1, 1, 6, dtype=np.float32), calls=1)
    recorded = snapshots.read(str(files[0]))
    recorded.results[0] = recorded.results[0] + 0.5
    wrong = tmp_path / "wrong.npz"
    snapshots.write(str(wrong), recorded)
    assert main(["run-hlo", "--snapshot", str(wrong)]) == 1
    assert "MISMATCH" in capsys.readouterr().out
    damaged = tmp_path / "damaged.npz"
    damaged.write_bytes(files[0].read_bytes()[:100])
    assert main(["run-hlo", "--snapshot", str(damaged)]) == 2
    assert "not a readable snapshot" in capsys.readouterr().err


def test_no_snapshots_unless_asked(tmp_path):
    with flags_set(f"--xla_dump_to={tmp_path}"):
        xlapy.jit(lambda a: a + 1.0)(np.ones(3, np.float32))
    assert not list(tmp_path.glob("*.snapshot.*"))
    assert list(tmp_path.glob("*.before_optimizations.txt"))
