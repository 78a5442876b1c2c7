"""The seeds' examples under jit: `reduce_sum(x + y * z)` and a softmax, their
HLO readable by the parser, compiled once per signature."""

import numpy as np

import xlapy
import xlapy.numpy as xnp
from xlapy.hlo import parse
from xlapy.hlo.opcode import Opcode

RNG = np.random.default_rng(0)
X, Y, Z = (RNG.standard_normal((8, 128)).astype(np.float32) for _ in range(3))


def sum_of_fma(x, y, z):
    return xnp.sum(x + y * z)


def softmax(x):
    e = xnp.exp(x - xnp.max(x, axis=-1, keepdims=True))
    return e / xnp.sum(e, axis=-1, keepdims=True)


def test_reduce_sum_of_x_plus_y_times_z():
    f = xlapy.jit(sum_of_fma)
    out = f(X, Y, Z)
    np.testing.assert_allclose(np.asarray(out), np.sum(X + Y * Z, dtype=np.float64), rtol=1e-5)
    assert np.asarray(out).dtype == np.float32 and np.asarray(out).shape == ()
    np.testing.assert_allclose(np.asarray(sum_of_fma(X, Y, Z)), np.asarray(out), rtol=1e-6)


def test_softmax_under_jit_matches_numpy_and_eager():
    f = xlapy.jit(softmax)
    expected = np.exp(X - X.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    np.testing.assert_allclose(np.asarray(f(X)), expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(softmax(xnp.asarray(X))), np.asarray(f(X)), rtol=1e-6)


def test_lowered_text_reads_back():
    for fn, args in [(sum_of_fma, (X, Y, Z)), (softmax, (X,))]:
        text = xlapy.jit(fn).lower(*args).as_text()
        module = parse(text)
        xlapy.hlo.verify(module)
        assert module.to_text(short=True) == text
        assert any(i.opcode is Opcode.REDUCE for c in module.computations for i in c)


def test_one_compile_per_signature_then_one_more_for_a_new_shape():
    f = xlapy.jit(softmax)
    for _ in range(4):
        f(X)
    assert f.compile_count == 1
    f(X[:4])
    assert f.compile_count == 2
    assert f.cache_misses == ["argument x: f32[8,128] -> f32[4,128]"]
