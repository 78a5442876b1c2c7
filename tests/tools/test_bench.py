"""`xlapy bench` at the tests' sizes: every workload builds and runs with every
installed peer, peers compute the same values, and the table, JSON and
memory fit come out whole."""

import argparse
import json
import time

import numpy as np
import pytest

from benchmarks.harness import Result, Timing, table, time_in_turns
from benchmarks.workloads import NO_TORCH, TORCH_PEERS, WORKLOADS, Built, Workload
from xlapy.cli import main
from xlapy.tools.bench import parse_bytes


def test_tiny_suite_writes_table_and_json(tmp_path, capsys):
    path = tmp_path / "r.json"
    assert main(["bench", "--tiny", "sum", "mnist", "encoder_train", "memory",
                 "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "machine:" in out and "GB/s" in out and "GFLOP/s" in out
    assert "sum(x + y*z)" in out and "compile cold" in out and "floor" in out
    assert "largest batch" in out
    report = json.loads(path.read_text())
    assert [w["name"] for w in report["workloads"]] == ["sum", "mnist", "encoder_train"]
    for w in report["workloads"]:
        jit = next(t for t in w["timings"] if t["peer"] == "xlapy jit")
        assert jit["seconds"] > 0
        assert w["floor_seconds"] > 0 and w["compile_cold"] > 0
    encoder = report["workloads"][2]
    assert encoder["ratios_over"] == "xlapy eager"       # NumPy cannot differentiate
    if TORCH_PEERS[1] in report["workloads"][0]["peer_compile"]:     # PyTorch installed
        assert "torch.compile" in out and "torch.compile" in encoder["speedups"]
        assert all(w["peer_compile"]["torch.compile"] > 0 for w in report["workloads"])
    fits = report["memory"]["fits"]
    assert [f["mode"] for f in fits] == ["op by op", "compiled"]
    assert all(f["per_example"] > 0 for f in fits)


def test_lazy_suite_shows_three_modes_and_no_compile_after_warm_up(capsys):
    """`xlapy bench --lazy`: per workload op by op, lazy and jit with their ratios
    and the clusters compiled after the warm-up (none); the lazy step's recording
    (operations, µs, µs per operation); then recording's cost per op untaped and
    common calls' in a taped step beside eager's; then eager code as users write
    it, one cluster a step and no compile after warm-up."""
    assert main(["bench", "--lazy", "--tiny"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines()
            if line.startswith(("softmax regression", "MLP", "encoder forward"))]
    assert len(rows) == 6 and all(row[-1] == "0" for row in rows[:3]), out
    recorded = [[float(v) for v in row[-4:]] for row in rows[3:]]
    assert all(ops >= 10 and each > 0 and record > 0 and read > 0
               for ops, record, each, read in recorded), out
    costs = {line.split()[0]: line.split()[1:] for line in out.splitlines()
             if line.split()[:1] in (["add"], ["exp"], ["matmul"], ["sum"])}
    assert len(costs) == 4 and all(float(v) > 0 for pair in costs.values() for v in pair)
    taped = [line.rsplit(None, 2) for line in out.splitlines()
             if line.startswith(("x + 1.0", "x[:, None]", "x.at[", "xnp.", "nn.", "lax."))]
    assert len(taped) == 10 and all(float(e) == float(e) and float(lz) == float(lz)
                                    for _, e, lz in taped), out   # (each a number)
    patterns = [line.rsplit(None, 3) for line in out.splitlines()
                if line.startswith(("same batch", "decaying rate", "batches X[j:j + 100]",
                                    "random noise", "RNN forward"))]
    assert len(patterns) == 5, out   # one cluster a step, nothing compiled after the warm-up
    assert all(float(ms) > 0 and clusters == "1.00" and compiles == "0"
               for _, ms, clusters, compiles in patterns), out


def test_every_workload_builds_and_peers_agree():
    """At tiny sizes each runnable peer returns the same values as xlapy's jit."""
    for workload in WORKLOADS:
        built = workload.build(True)
        assert callable(built.peers["xlapy jit"])
        expected = _leaves(built.peers["xlapy jit"]())
        for peer, fn in built.peers.items():
            if not callable(fn):
                assert fn, f"{workload.name}: {peer} skipped without a note"
                continue
            got = _leaves(fn())
            assert len(got) == len(expected), (workload.name, peer)
            for a, b in zip(got, expected):
                np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-5,
                                           err_msg=f"{workload.name}: {peer}")


def test_pytorch_runs_every_workload_eagerly_and_compiled():
    """Every workload has a PyTorch version (its values: the test above)."""
    pytest.importorskip("torch")
    for workload in WORKLOADS:
        built = workload.build(True)
        for peer in TORCH_PEERS:
            assert callable(built.peers[peer]), (workload.name, peer, built.peers[peer])


def test_without_pytorch_its_peers_are_skipped_with_a_note(monkeypatch):
    from benchmarks import torch_peers

    monkeypatch.setattr(torch_peers, "torch", None)
    for workload in WORKLOADS:
        built = workload.build(True)
        assert all(built.peers[p] == NO_TORCH for p in TORCH_PEERS), workload.name
        assert callable(built.peers["xlapy jit"])


def _leaves(value):
    if isinstance(value, dict):
        return [x for k in sorted(value) for x in _leaves(value[k])]
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _leaves(v)]
    return [np.asarray(value, np.float64)]


def test_unknown_workload_is_an_error(capsys):
    assert main(["bench", "--tiny", "nonsense"]) == 2
    assert "unknown workload" in capsys.readouterr().err


def test_list(capsys):
    assert main(["bench", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(w.name in out for w in WORKLOADS) and "memory" in out


def test_time_in_turns_medians():
    calls = {"a": 0, "b": 0}

    def a():
        calls["a"] += 1

    def b():
        calls["b"] += 1
    rounds: dict = {}
    times = time_in_turns({"a": a, "b": b}, min_time=0.001, rounds=3, budget=0.1,
                          rounds_out=rounds)
    assert set(times) == {"a", "b"} and all(t > 0 for t in times.values())
    assert calls["a"] > 3 and calls["b"] > 3
    assert set(rounds) == {"a", "b"} and len(rounds["a"]) == len(rounds["b"]) >= 3
    assert sorted(rounds["a"])[len(rounds["a"]) // 2] == times["a"]


def test_table_gives_the_ratio_to_the_best_peer_round_by_round():
    r = Result("w", "a workload", "call",
               [Timing("xlapy jit", 1.0e-3), Timing("torch.compile", 1.0e-3)],
               rounds={"xlapy jit": [1.0e-3, 1.2e-3, 0.9e-3, 1.1e-3],
                       "torch.compile": [1.0e-3, 1.0e-3, 1.0e-3, 1.0e-3]})
    assert r.round_ratios("xlapy jit", "torch.compile") == pytest.approx([1.0, 1.2, 0.9, 1.1])
    text = table([r])
    assert ("xlapy jit at 1.00x the time of the best peer (torch.compile); "
            "round by round 1.10x (0.90-1.20x over 4)") in text
    r.rounds = {}
    assert "round by round" not in table([r])


def test_table_shows_ratios_and_skips():
    r = Result("w", "a workload", "call",
               [Timing("numpy", 2e-3), Timing("xlapy jit", 1e-3),
                Timing("torch eager", None, "PyTorch not installed")],
               floor_seconds=5e-4, floor_note="1 MB at 2 GB/s")
    text = table([r])
    assert "2.00x" in text and "50% of it" in text and "PyTorch not installed" in text
    assert "xlapy jit at 0.50x the time of the best peer (numpy)" in text


def test_table_gives_the_compiling_peers_compile_times():
    r = Result("w", "a workload", "call", [Timing("xlapy jit", 1e-3), Timing("jax jit", 4e-3),
                                           Timing("torch.compile", 2e-3)],
               compile_cold=0.5, compile_cached=0.1,
               peer_compile={"jax jit": 0.25, "torch.compile": 1.5})
    text = table([r])
    assert "best peer (torch.compile)" in text
    assert "compile cold 500.00 ms, from disk cache 100.00 ms; peers cold: jax jit 250.00 ms, " \
           "torch.compile 1.50 s; xlapy at 2.0x JAX's" in text


def test_peer_compile_is_the_first_call_less_a_timed_one(monkeypatch):
    from benchmarks import suite

    def built(tiny):
        calls = []

        def compiling():
            time.sleep(0.2 if not calls else 0.001)     # the first call compiles
            calls.append(1)
        return Built({"numpy": lambda: None, "jax jit": compiling}, lambda x: x + 1,
                     (np.ones(2, np.float32),))
    result = suite.run_workload(Workload("w", "a workload", "call", built), None, tiny=True,
                                budget=0.05, min_time=0.001)
    assert set(result.peer_compile) == {"jax jit"}
    assert 0.15 < result.peer_compile["jax jit"] < 0.4


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    from benchmarks.harness import plot

    r = Result("w", "a workload", "call", [Timing("numpy", 2e-3), Timing("xlapy jit", 1e-3)])
    plot([r], str(tmp_path / "p.png"))
    assert (tmp_path / "p.png").stat().st_size > 1000


@pytest.mark.parametrize("text, expected", [("1GiB", 2 ** 30), ("512MiB", 512 * 2 ** 20),
                                            ("2g", 2 * 2 ** 30), ("1000", 1000)])
def test_parse_bytes(text, expected):
    assert parse_bytes(text) == expected


def test_parse_bytes_rejects_nonsense():
    with pytest.raises(argparse.ArgumentTypeError):
        parse_bytes("lots")


def test_memory_fit_is_checked_at_the_batch_it_predicts(monkeypatch):
    from benchmarks import memory_budget

    # memory that grows more slowly at large batches than the two small ones say
    bytes_at = {"op by op": lambda b: 1000 + 100 * b,
                "compiled": lambda b: 1000 + 100 * min(b, 4) + 50 * max(b - 4, 0)}
    monkeypatch.setattr(memory_budget, "_measure", lambda mode, batch, tiny: bytes_at[mode](batch))
    monkeypatch.setattr(memory_budget, "MAX_CHECKED_BATCH", 10_000)
    eager, compiled = memory_budget.largest_batches(11_000, tiny=False)
    assert eager.largest_batch == 100 and eager.measured_at_largest == 11_000
    assert compiled.largest_batch == 196 and compiled.measured_at_largest == 11_000
    text = memory_budget.report([eager, compiled], 11_000)
    assert "measured there" in text and "fits 2.0x the batch" in text
