"""Regenerate tests/stablehlo/corpus with JAX: for each case of jax_cases.ALL, the
StableHLO JAX prints by default (NAME.mlir) and its HLO twin (NAME.hlo).

    python -m tests.stablehlo.generate_corpus [NAME ...]

The committed files keep the tests independent of the JAX version installed;
rerun this after adding a case. A few cases are also written with debug
information (`loc(...)` and `#loc` aliases) as NAME_debug_info.mlir.
"""

from __future__ import annotations

import sys
from pathlib import Path

import jax
import numpy as np

from tests.stablehlo.jax_cases import ALL

CORPUS = Path(__file__).parent / "corpus"
DEBUG_INFO = ("corpus_layernorm", "mlp_train")


def generate(names: list[str]) -> None:
    CORPUS.mkdir(exist_ok=True)
    for name in names or list(ALL):
        case = ALL[name]
        args = case.inputs(np.random.default_rng(0))
        jitted = case.fn if hasattr(case.fn, "lower") else jax.jit(case.fn)
        lowered = jitted.lower(*args)
        twin = lowered.as_text(dialect="hlo")
        (CORPUS / f"{name}.mlir").write_text(lowered.as_text())
        (CORPUS / f"{name}.hlo").write_text(twin)
        if name in DEBUG_INFO:
            (CORPUS / f"{name}_debug_info.mlir").write_text(lowered.as_text(debug_info=True))
            (CORPUS / f"{name}_debug_info.hlo").write_text(twin)
        print(f"wrote {name}")


if __name__ == "__main__":
    generate(sys.argv[1:])
