"""Shared checks for pass tests: run passes with the verifier on and compare
interpreter results before and after on the same fake inputs."""

from __future__ import annotations

import numpy as np

import xlapy
from xlapy.hlo import parse
from xlapy.hlo.fake_data import fake_arguments
from xlapy.passes.pipeline import Pipeline, RunOptions


def assert_same_results(before: list, after: list, exact: bool = True) -> None:
    """Equal dtypes and values; `exact` also demands equal bits (signs of zero,
    NaN payloads), for passes that must not touch arithmetic at all."""
    assert len(before) == len(after)
    for b, a in zip(before, after):
        assert b.dtype == a.dtype and b.shape == a.shape
        if exact:
            assert b.tobytes() == a.tobytes()
        else:
            assert np.array_equal(b, a, equal_nan=b.dtype.kind in "fc")


def run_passes(passes, text: str, *, seed: int = 1, interpret: bool = True,
               exact: bool = True):
    """Parse `text`, run `passes` (verifier after each) and check results held.
    Returns (module, changed)."""
    module = parse(text)
    args = fake_arguments(module, seed=seed)
    before = xlapy.execute(module, args, backend="interpreter") if interpret else None
    changed = Pipeline("test", list(passes), RunOptions(verify=True)).run(module)
    if interpret:
        assert_same_results(before, xlapy.execute(module, args, backend="interpreter"), exact)
    return module, changed
