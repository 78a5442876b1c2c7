"""Every pass preserves results: 500 random programs (random shapes,
elementwise chains, broadcasts, reductions, dots, slices, concatenations,
selects, pads, transposes, reshapes) give the same interpreter results
before and after the whole default pipeline, verified after every pass.

Floats compare to a tight tolerance: the simplifier may reassociate float
sums exactly where XLA's does (merged reductions, sum of a broadcast)."""

import numpy as np
import pytest

import xlapy
from xlapy.fuzz.f32_programs import random_program
from xlapy.hlo import parse
from xlapy.passes.default_pipeline import optimize

PROGRAMS = 500


def inputs(module, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(p.shape.dimensions).astype(p.shape.dtype)
            for p in module.entry_computation.parameters]


@pytest.mark.parametrize("block", range(10))
def test_random_programs_survive_the_whole_pipeline(block):
    for seed in range(block * PROGRAMS // 10, (block + 1) * PROGRAMS // 10):
        text = random_program(seed)
        module = parse(text)
        args = inputs(module, seed)
        before = xlapy.execute(module, args, backend="interpreter")
        optimize(module, verify=True)
        after = xlapy.execute(module, args, backend="interpreter")
        for b, a in zip(before, after):
            assert b.dtype == a.dtype and b.shape == a.shape, f"seed {seed}"
            np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6, equal_nan=True,
                                       err_msg=f"seed {seed}:\n{text}")
