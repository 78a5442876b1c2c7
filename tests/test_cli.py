"""The `xlapy` command: run-hlo end to end, errors as messages (demo and bench:
tests/tools)."""

from xlapy.cli import main

MODULE = """
HloModule m
ENTRY main {
  x = f32[4] parameter(0)
  ROOT y = f32[4] exponential(x)
}
"""


def test_run_hlo_compares_with_the_interpreter(tmp_path, capsys):
    path = tmp_path / "m.hlo"
    path.write_text(MODULE)
    assert main(["run-hlo", str(path), "--print-literals"]) == 0
    assert "close enough" in capsys.readouterr().out


def test_run_hlo_reports_bad_text(tmp_path, capsys):
    path = tmp_path / "bad.hlo"
    path.write_text("HloModule m\nENTRY main {\n  x = f32[4] parameter(0\n}\n")
    assert main(["run-hlo", str(path)]) == 2
    assert "error" in capsys.readouterr().err


def test_run_hlo_reports_missing_file(tmp_path, capsys):
    assert main(["run-hlo", str(tmp_path / "nope.hlo")]) == 2
    assert "No such file" in capsys.readouterr().err
