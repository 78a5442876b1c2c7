"""The autodiff tests check derivatives in float64 (finite differences, the
dot-product test, tolerances of 1e-10), so they run with x64 on, as JAX's own
gradient tests do: float64 data stays float64 and Python scalars are float64.
float32 derivatives are checked in tests/core/test_x64.py and by the models."""

import pytest

from xlapy import config


@pytest.fixture(autouse=True)
def _x64():
    with config.enable_x64(True):
        yield
