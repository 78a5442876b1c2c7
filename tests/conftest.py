"""Test-wide settings: hypothesis runs a bounded, deterministic number of
examples so the suite stays within CI's budget on 2 cores, and pass
pipelines run the verifier after every pass."""

import os

# Every pass pipeline run by a test verifies the module after each pass.
os.environ.setdefault("XLAPY_FLAGS", "--xlapy_verify_hlo_passes")

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", max_examples=40, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=500, deadline=None)
settings.load_profile(os.environ.get("XLAPY_HYPOTHESIS_PROFILE", "default"))

# The frontend's tests check the frontend: they run on the interpreter, which
# compiles instantly. The CPU backend has its own tests (tests/backends/cpu,
# every op and 500 random programs against the interpreter), and the modules
# in CPU_MODULES run everything on `cpu`, the default users get.
os.environ.setdefault("XLAPY_DEFAULT_BACKEND", "interpreter")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from xlapy import config as xlapy_config  # noqa: E402

CPU_MODULES = ("test_jit.py", "test_models.py", "test_seeds_examples.py", "test_demo.py",
               "test_bench.py")


@pytest.fixture(autouse=True)
def _backend_for_module(request, monkeypatch):
    if request.path.name in CPU_MODULES:
        monkeypatch.setenv("XLAPY_DEFAULT_BACKEND", "cpu")
    yield


# float64, int64... exist in the NumPy frontend only with x64 (xlapy.config.enable_x64),
# as in JAX, so a test parametrized over a 64-bit dtype runs with x64 on.
_WIDE = {np.dtype(t) for t in (np.int64, np.uint64, np.float64, np.complex128)}


def _is_wide_dtype(param) -> bool:
    """A 64-bit dtype, scalar type or NumPy scalar."""
    if isinstance(param, np.dtype) or (isinstance(param, type) and issubclass(param, np.generic)):
        return np.dtype(param) in _WIDE
    return isinstance(param, np.generic) and param.dtype in _WIDE


@pytest.fixture(autouse=True)
def _x64_for_64_bit_dtypes(request):
    callspec = getattr(request.node, "callspec", None)
    if callspec is None or not any(_is_wide_dtype(p) for p in callspec.params.values()):
        yield
        return
    with xlapy_config.enable_x64(True):
        yield


# `pytest --lazy`: the same tests with every eager operation recorded and run as
# compiled clusters (--xla_auto_jit=2); tests of eager-only machinery opt out.
def pytest_addoption(parser):
    parser.addoption("--lazy", action="store_true",
                     help="run eager code in lazy mode (XLAPY_FLAGS=--xla_auto_jit=2)")


def pytest_configure(config):
    config.addinivalue_line("markers", "eager_only: tests of op-by-op machinery, skipped "
                                       "under --lazy")
    if config.getoption("--lazy"):
        os.environ["XLAPY_FLAGS"] = f"{os.environ.get('XLAPY_FLAGS', '')} --xla_auto_jit=2"


def pytest_collection_modifyitems(config, items):
    if config.getoption("--lazy"):
        skip = pytest.mark.skip(reason="op-by-op machinery: not used under --lazy")
        for item in items:
            if item.get_closest_marker("eager_only"):
                item.add_marker(skip)
