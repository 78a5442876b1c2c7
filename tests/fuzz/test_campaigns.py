"""CI's slice of the campaigns (the full ones run as `xlapy fuzz`; see the README).

The JAX slice needs JAX (the `oracle` extra, which the test extra installs) and
skips without it."""

import importlib.util

import pytest

from xlapy.fuzz.campaign import run_hlo_campaign, run_jax_campaign

HAS_JAX = importlib.util.find_spec("jax") is not None


@pytest.mark.skipif(not HAS_JAX, reason="JAX is not installed (pip install 'xlapy[oracle]')")
def test_a_slice_of_random_jax_programs_agrees_with_xla(tmp_path):
    lines = []
    summary = run_jax_campaign(24, seed=10_000, workers=2, timeout=120, out_dir=tmp_path,
                               log=lines.append, guard_pages=True)
    assert summary.programs + summary.generation_skipped == 24
    assert summary.executions == 4 * summary.programs
    assert summary.failed == 0, summary.table() + "\n" + "\n".join(
        lines)
    assert (tmp_path / "jax-summary.json").exists()


def test_a_slice_of_random_hlo_programs_agrees_with_the_interpreter(tmp_path):
    lines = []
    summary = run_hlo_campaign(40, seed=20_000, workers=2, timeout=120, out_dir=tmp_path,
                               log=lines.append)
    assert summary.executions == 40
    assert summary.outcomes["ok"] == 40, summary.table() + "\n" + "\n".join(lines)


@pytest.mark.skipif(not HAS_JAX, reason="JAX is not installed (pip install 'xlapy[oracle]')")
def test_xla_crashing_on_its_own_program_is_counted_not_fatal(tmp_path):
    # program 8234: jaxlib 0.10.2's compiler dies of SIGFPE lowering it; drawing and
    # lowering run in a sandboxed worker, so the campaign goes on to program 8235
    summary = run_jax_campaign(2, seed=8234, workers=2, timeout=120, out_dir=tmp_path,
                               log=lambda line: None)
    assert summary.programs == 2 and summary.failed == 0, summary.table()
    assert summary.outcomes["xla_crash"] <= 1
    assert summary.outcomes["ok"] >= 4
