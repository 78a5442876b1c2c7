"""The committed corpus (tests/stablehlo/corpus, made by generate_corpus.py): each
NAME.mlir, as JAX printed it, parses and runs to the same results as NAME.hlo,
its HLO twin, on the cpu backend and the interpreter. No JAX needed."""

from __future__ import annotations

from pathlib import Path

import pytest

import xlapy
from tests.stablehlo.util import assert_same_results
from xlapy import hlo, stablehlo
from xlapy.hlo.fake_data import fake_arguments

CORPUS = Path(__file__).parent / "corpus"
FILES = sorted(CORPUS.glob("*.mlir"))
IDS = [p.stem for p in FILES]


def _pair(path: Path):
    return stablehlo.parse(path.read_text()), hlo.parse(path.with_suffix(".hlo").read_text())


def test_every_fixture_has_its_twin_and_the_corpus_is_complete():
    assert all(p.with_suffix(".hlo").exists() for p in FILES)
    names = set(IDS)
    for model in ("softmax_regression", "mlp", "lenet", "lstm", "encoder"):
        assert {f"{model}_forward", f"{model}_train"} <= names
    hlo_corpus = Path(__file__).parents[1] / "hlo" / "corpus"
    for path in hlo_corpus.glob("jax_*.hlo"):
        stem = path.stem.removeprefix("jax_").removesuffix("_frames")
        assert f"corpus_{stem}" in names, f"no StableHLO re-creation of {path.name}"


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_signature_matches_the_twin(path):
    module, twin = _pair(path)
    params, result = module.entry_computation.program_shape()
    twin_params, twin_result = twin.entry_computation.program_shape()
    assert len(params) == len(twin_params)
    assert all(a.compatible(b) for a, b in zip(params, twin_params))
    assert result.compatible(twin_result)
    assert module.name == twin.name
    hlo.verify(module)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_runs_like_the_twin(path):
    module, twin = _pair(path)
    args = fake_arguments(twin, seed=0)
    want = xlapy.execute(twin, args, backend="cpu")
    assert_same_results(xlapy.execute(module, args, backend="cpu"), want, what="cpu")
    assert_same_results(xlapy.execute(module, args, backend="interpreter"), want,
                        rtol=1e-4, what="interpreter")


@pytest.mark.parametrize("path", FILES[:3], ids=IDS[:3])
def test_execute_takes_the_text(path):
    """xlapy.execute routes StableHLO text to xlapy.stablehlo and HLO text to xlapy.hlo."""
    text, twin = path.read_text(), path.with_suffix(".hlo").read_text()
    assert stablehlo.is_stablehlo(text) and not stablehlo.is_stablehlo(twin)
    args = fake_arguments(hlo.parse(twin), seed=1)
    assert_same_results(xlapy.execute(text, args, backend="interpreter"),
                        xlapy.execute(twin, args, backend="interpreter"))
    assert_same_results(xlapy.compile(text.encode(), "interpreter").execute(*args),
                        xlapy.execute(twin, args, backend="interpreter"))
