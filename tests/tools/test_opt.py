"""`xlapy opt` and the upgraded `xlapy run-hlo` end to end, errors as messages."""

import numpy as np
import pytest

from xlapy.cli import main
from xlapy.hlo import parse
from xlapy.tools.run_hlo import compare, load_inputs, output_errors

MODULE = """
HloModule m
square {
  p = f32[4] parameter(0)
  ROOT s = f32[4] multiply(p, p)
}
ENTRY main {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  a = f32[4] add(x, y)
  b = f32[4] add(y, x)
  dead = f32[4] negate(x)
  c = f32[4] call(a), to_apply=square
  ROOT r = f32[4] subtract(c, b)
}
"""


@pytest.fixture
def hlo_file(tmp_path):
    path = tmp_path / "m.hlo"
    path.write_text(MODULE)
    return path


def test_opt_prints_the_optimised_module(hlo_file, capsys):
    assert main(["opt", str(hlo_file)]) == 0
    out = capsys.readouterr().out
    module = parse(out)
    ops = [i.opcode.value for i in module.entry_computation.instructions]
    assert "call" not in ops and "negate" not in ops and "square" not in out
    assert out.startswith("HloModule m")


def test_opt_runs_the_passes_asked_for_in_order(hlo_file, capsys):
    assert main(["opt", str(hlo_file), "--passes", "dce"]) == 0
    out = capsys.readouterr().out
    assert "negate" not in out and "call(" in out
    assert main(["opt", str(hlo_file), "--passes", "cse,dce", "--short"]) == 0
    out = capsys.readouterr().out
    assert "b = " not in out and "%" not in out


def test_opt_writes_a_file(hlo_file, tmp_path):
    target = tmp_path / "out.hlo"
    assert main(["opt", str(hlo_file), "--passes", "call-inliner", "-o", str(target)]) == 0
    assert "call(" not in target.read_text()


def test_opt_lists_passes(capsys):
    assert main(["opt", "--list-passes"]) == 0
    out = capsys.readouterr().out
    for name in ("call-inliner", "dce", "cse", "constant_folding", "tuple-simplifier"):
        assert f"  {name} " in out
    assert "default pipeline:\noptimization (pipeline)" in out


@pytest.mark.parametrize("argv, message", [
    (["opt", "MISSING", "--passes", "dce"], "No such file"),
    (["opt", "FILE", "--passes", "dce,nope"], "unknown pass 'nope'"),
    (["opt"], "give an HLO file"),
])
def test_opt_errors_are_messages(argv, message, hlo_file, capsys):
    argv = [str(hlo_file) if a == "FILE" else a for a in argv]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_opt_honours_xlapy_flags(hlo_file, tmp_path, monkeypatch, capsys):
    dump = tmp_path / "dump"
    monkeypatch.setenv("XLAPY_FLAGS", f"--xla_dump_to={dump} --xla_dump_hlo_pass_re=dce")
    assert main(["opt", str(hlo_file)]) == 0
    names = sorted(p.name for p in dump.iterdir())
    assert any(n.endswith(".m.before_optimizations.txt") for n in names)
    assert any(".optimization.after_call-inliner.before_dce.txt" in n for n in names)
    monkeypatch.setenv("XLAPY_FLAGS", "--xla_dump_tooo=1")
    assert main(["opt", str(hlo_file)]) == 2
    assert "unknown flag --xla_dump_tooo" in capsys.readouterr().err


# -- run-hlo ---------------------------------------------------------------------------
def test_run_hlo_reports_each_outputs_errors(hlo_file, capsys):
    assert main(["run-hlo", str(hlo_file), "--random", "--backend", "interpreter",
                 "--compare", "interpreter"]) == 0
    out = capsys.readouterr().out
    assert "output 0: f32[4]: max abs error 0 at [0], max rel error 0 at [0]: ok" in out
    assert "vs interpreter: close enough" in out


def test_run_hlo_reads_inputs_by_name_or_order(hlo_file, tmp_path, capsys):
    x = np.arange(4, dtype=np.float32)
    y = np.ones(4, dtype=np.float32)
    by_name = tmp_path / "named.npz"
    np.savez(by_name, y=y, x=x)
    in_order = tmp_path / "ordered.npz"
    np.savez(in_order, x, y)
    module = parse(MODULE)
    for path in (by_name, in_order):
        args = load_inputs(module, str(path))
        np.testing.assert_array_equal(args[0], x)
        np.testing.assert_array_equal(args[1], y)
        assert main(["run-hlo", str(hlo_file), "--inputs", str(path), "--print-literals",
                     "--no-run-test-hlo-passes"]) == 0
        assert "result 0: array([ 0.,  2.,  6., 12.], dtype=float32)" in capsys.readouterr().out
    bad = tmp_path / "bad.npz"
    np.savez(bad, x)
    assert main(["run-hlo", str(hlo_file), "--inputs", str(bad)]) == 2
    assert "holds 1 arrays, m takes 2 parameters (x, y)" in capsys.readouterr().err


def test_inputs_and_random_are_exclusive(hlo_file, capsys):
    with pytest.raises(SystemExit):
        main(["run-hlo", str(hlo_file), "--inputs", "a.npz", "--random"])


def test_output_errors_measure_like_run_hlo_module():
    want = np.array([1.0, 2.0, 0.0, np.nan], dtype=np.float32)
    got = np.array([1.0, 2.5, 0.0, np.nan], dtype=np.float32)
    report = output_errors(got, want, atol=1e-3, rtol=1e-3)
    assert report.max_abs_error == 0.5 and report.max_abs_at == (1,)
    assert report.max_rel_error == 0.25 and report.mismatches == 1 and not report.close
    assert "1 of 4 elements differ" in str(report)
    assert output_errors(want, want, 0, 0).close  # NaN matches NaN
    near = output_errors(np.float32([1.0005]), np.float32([1.0]), atol=1e-3, rtol=0)
    assert near.close
    ints = output_errors(np.int32([1, 2]), np.int32([1, 3]), atol=10, rtol=10)
    assert not ints.close and ints.max_abs_error == 1
    inf = output_errors(np.float32([np.inf, 1]), np.float32([np.inf, np.inf]), 1, 1)
    assert inf.mismatches == 1 and inf.max_abs_error == np.inf
    zero = output_errors(np.float32([1e-6]), np.float32([0]), atol=1e-3, rtol=0)
    assert zero.close and zero.max_rel_error == np.inf
    shape = output_errors(np.zeros(3, np.float32), np.zeros(4, np.float32), 1, 1)
    assert not shape.close


def test_compare_keeps_its_old_contract():
    a = [np.float32([1, 2]), (np.int32(3), np.float32([np.nan]))]
    assert compare(a, a, 1e-3, 1e-3)
    assert not compare(a, a[:1], 1e-3, 1e-3)


def test_a_file_that_is_not_utf8_is_a_parse_error_with_its_position(tmp_path, capsys):
    bad = tmp_path / "bad.hlo"
    bad.write_bytes(b"HloModule m\nENTRY e {\n  ROOT x = f32[2] parameter(0) \xff\n}\n")
    for command in (["opt", str(bad)], ["run-hlo", str(bad)]):
        assert main(command) == 2
        assert "line 3, column 32: invalid UTF-8" in capsys.readouterr().err
