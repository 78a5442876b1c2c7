"""The pipeline on real XLA text (JAX lowerings in benchmarks/data): the seeds'
MNIST training step and a BERT-style encoder layer, forward and training step.
Results stay identical in the interpreter, kernels drop, and the encoder's
peak temporary bytes fall at least 2x against op-by-op execution with no reuse."""

import copy
from pathlib import Path

import numpy as np
import pytest

import xlapy
from xlapy.analysis import memory_analysis, no_reuse_bytes
from xlapy.hlo import parse
from xlapy.hlo.fake_data import fake_arguments
from xlapy.passes.default_pipeline import optimize

DATA = Path(__file__).parents[2] / "benchmarks" / "data"


@pytest.mark.parametrize("name", ["mnist_train_step", "encoder_layer_forward",
                                  "encoder_layer_train_step"])
def test_pipeline_on_real_modules(name):
    module = parse((DATA / f"{name}.hlo").read_text())
    optimized = copy.deepcopy(module)
    optimize(optimized, verify=True)
    args = fake_arguments(module, 0)
    before = xlapy.execute(module, args, backend="interpreter")
    after = xlapy.execute(optimized, args, backend="interpreter")
    for b, a in zip(before, after):
        np.testing.assert_array_equal(a, b)
    temps = memory_analysis(optimized).temp_size_in_bytes
    assert temps * (2 if name.startswith("encoder") else 1) <= no_reuse_bytes(module)
