"""`xlapy demo` at a tiny size: both models train op by op, auto-clustered and
compiled, on MNIST IDX files the test writes and on scikit-learn's digits, and
the demo reports accuracy, speed, kernels, memory, dumps and a valid timeline."""

import json

import numpy as np
import pytest

from tests.datasets.test_mnist import fake_mnist
from xlapy.cli import main


def tiny_args(tmp_path, *extra):
    return ["demo", "--steps", "12", "--batch-size", "8", "--hidden", "8",
            "--out", str(tmp_path / "out"), "--no-progress", *extra]


def test_demo_on_idx_files(tmp_path, capsys):
    data = tmp_path / "mnist"
    data.mkdir()
    fake_mnist(data, n_train=40, n_test=10)
    assert main(tiny_args(tmp_path, "--data-dir", str(data))) == 0
    out = capsys.readouterr().out
    assert "40 train and 10 test images, 28x28" in out
    for model in ("softmax regression", "MLP 784-8-10"):
        assert f"{model}, compiled step:" in out
    assert out.count("op by op") >= 2 and out.count("compiled") >= 2
    assert out.count(" clustered ") == 2
    assert "clusters compiled after two warm-up steps: softmax regression 0, MLP 784-8-10 0" \
        in out
    assert "kernels, peak temporary memory" in out
    trace = json.loads((tmp_path / "out" / "timeline.ctf.json").read_text())
    kernels = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["cat"] != "call"]
    assert kernels and all(e["dur"] >= 0 for e in kernels)
    dumps = list((tmp_path / "out" / "dumps_0").iterdir())
    assert any(p.name.endswith("after_optimizations.txt") for p in dumps)


def test_demo_timeline_option_and_accuracy_on_digits(tmp_path, capsys):
    pytest.importorskip("sklearn")
    timeline = tmp_path / "t.json"
    args = ["demo", "--steps", "150", "--batch-size", "50", "--hidden", "32",
            "--out", str(tmp_path / "out"), "--no-progress", "--timeline", str(timeline)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "scikit-learn" in out
    assert json.loads(timeline.read_text())["traceEvents"]
    accuracies = [float(line.split("%")[0].split()[-1]) for line in out.splitlines()
                  if line.strip().startswith(("softmax", "MLP", "clustered", "compiled"))
                  and "%" in line]
    assert len(accuracies) == 6
    assert min(accuracies) > 80          # 150 small steps already classify most digits


def test_demo_missing_data_dir_is_a_message(tmp_path, capsys):
    assert main(tiny_args(tmp_path, "--data-dir", str(tmp_path / "nowhere"))) == 2
    err = capsys.readouterr().err
    assert "train-images-idx3-ubyte" in err


def test_demo_truncated_file_is_a_message(tmp_path, capsys):
    data = tmp_path / "mnist"
    data.mkdir()
    fake_mnist(data, n_train=40, n_test=10, gz=())
    path = data / "train-images-idx3-ubyte"
    path.write_bytes(path.read_bytes()[:1000])
    assert main(tiny_args(tmp_path, "--data-dir", str(data))) == 2
    assert "expected" in capsys.readouterr().err


def test_compiled_and_eager_agree(tmp_path, capsys):
    """The three modes (op by op, auto-clustered, compiled) train on the same batches,
    so they reach the same accuracy."""
    data = tmp_path / "mnist"
    data.mkdir()
    fake_mnist(data, n_train=40, n_test=10)
    assert main(tiny_args(tmp_path, "--data-dir", str(data))) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if "%" in line]
    accuracies = np.array([float(r.split("%")[0].split()[-1]) for r in rows])
    assert len(accuracies) == 6
    for model in accuracies.reshape(2, 3):
        assert model[0] == model[1] == model[2]
