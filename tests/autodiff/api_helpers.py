"""Helpers the autodiff API tests share: the eager/jit wrappers, a float64
comparison and vjp as one jittable function."""

from __future__ import annotations

import numpy as np
import pytest

import xlapy

f64 = np.float64
WRAPS = [pytest.param(lambda f: f, id="eager"), pytest.param(xlapy.jit, id="jit")]


def close(actual, expected, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


def pullback_of(f):
    """(x..., u) -> the cotangents of f's arguments for cotangent u: vjp as one
    function, so it can be jitted."""
    return lambda *a: xlapy.vjp(f, *a[:-1])[1](a[-1])
