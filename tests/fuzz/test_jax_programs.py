"""The JAX program generator's rules for what a comparison can hold to."""

import importlib.util

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                                reason="JAX is not installed (pip install 'xlapy[oracle]')")


def test_a_rounded_value_is_not_widened_to_a_tighter_tolerance():
    # program 5056: convert(dot(f32), f64) held the f32 dot's summation order to f64's 1e-9
    import jax.numpy as jnp

    from xlapy.fuzz.jax_programs import _widens

    f16, f32, f64 = (np.zeros(3, t) for t in (np.float16, np.float32, np.float64))
    bf16, s32 = np.zeros(3, jnp.bfloat16), np.zeros(3, np.int32)
    assert _widens([f32], [f64])
    assert _widens([f16], [f32])
    assert _widens([bf16], [f16])
    assert not _widens([f64], [f32])
    assert not _widens([f32, s32], [f32])
    assert not _widens([s32], [f64])


def test_bitcast_to_float_leaves_no_nan_or_subnormal():
    # program 7624: XLA:CPU flushes subnormals (x > 0 is false for 1e-45), xlapy as
    # NumPy does not; NaN patterns compare by bits. The generator keeps both out.
    from xlapy.fuzz.jax_ops import OPS
    from xlapy.fuzz.jax_programs import jax_context

    bits = np.array([1, 5, -6, 0x7FC00000, 0x3F800000, -0x80000000 + 1], np.int32)
    with jax_context():
        (out,) = OPS["bitcast"].apply(None, [bits], {"to": "float32"})
    out = np.asarray(out)
    assert not np.isnan(out).any()
    assert not ((out != 0) & (np.abs(out) < np.finfo(np.float32).tiny)).any()
    assert out[4] == 1.0
