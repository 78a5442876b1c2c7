"""xlapy.nn against float64 NumPy references over shapes and dtypes, eagerly
and under jit (the two must agree), plus known answers from jax.nn 0.10.2 and
the stability cases JAX guarantees (huge logits, all -inf rows, masks)."""

import ml_dtypes
import numpy as np
import pytest
from scipy import special

import xlapy
import xlapy.nn as nn
from tests.frontend_util import x64_for
from xlapy.core import lazy

BF16 = np.dtype(ml_dtypes.bfloat16)
RTOL = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12,
        np.dtype(np.float16): 4e-3, BF16: 3e-2}


def both(fn, *args):
    """fn(*args) eagerly and under jit; the two must agree (to an ulp or two:
    nothing guarantees eager and compiled transcendentals round alike). 64-bit
    data runs with x64."""
    with x64_for(*args):
        eager = fn(*args)
        jitted = xlapy.jit(fn)(*args)
    if isinstance(eager, tuple):
        for e, j in zip(eager, jitted):
            _agree(e, j)
        return tuple(np.asarray(e) for e in eager)
    _agree(eager, jitted)
    return np.asarray(eager)


def _agree(eager, jitted):
    e, j = np.asarray(eager), np.asarray(jitted)
    assert e.dtype == j.dtype and e.shape == j.shape
    if e.dtype.kind == "f" or e.dtype == BF16:
        # under pytest --lazy, "eager" is a compiled cluster fused differently from the
        # jitted function: the two may round a half-precision step apart
        # (an ulp of 1.0 apart, as close() allows)
        half = lazy.active() and e.dtype.itemsize < 4
        np.testing.assert_allclose(j.astype(np.float64), e.astype(np.float64),
                                   rtol=RTOL[e.dtype] if half else 1e-6,
                                   atol=RTOL[e.dtype] if half else 1e-30)
    else:
        np.testing.assert_array_equal(j, e)


def close(got, want, dtype, scale=1.0):
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    rtol = RTOL[np.dtype(dtype)] * scale
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=rtol)


def data(shape, dtype, low=-6.0, high=6.0, seed=0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


def _sigmoid(x):
    return special.expit(x)


REFERENCES = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0)),
    "relu6": (nn.relu6, lambda x: np.clip(x, 0, 6)),
    "sigmoid": (nn.sigmoid, _sigmoid),
    "softplus": (nn.softplus, lambda x: np.logaddexp(x, 0)),
    "log_sigmoid": (nn.log_sigmoid, lambda x: -np.logaddexp(-x, 0)),
    "silu": (nn.silu, lambda x: x * _sigmoid(x)),
    "swish": (nn.swish, lambda x: x * _sigmoid(x)),
    "gelu": (nn.gelu, lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi)
                                                       * (x + 0.044715 * x ** 3)))),
    "gelu_exact": (lambda x: nn.gelu(x, approximate=False),
                   lambda x: 0.5 * x * special.erfc(-x / np.sqrt(2))),
    "leaky_relu": (nn.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x)),
    "elu": (nn.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))),
    "celu": (lambda x: nn.celu(x, 0.5),
             lambda x: np.maximum(x, 0) + 0.5 * np.expm1(np.minimum(x, 0) / 0.5)),
    "selu": (nn.selu, lambda x: 1.0507009873554805 * np.where(
        x > 0, x, 1.6732632423543772 * np.expm1(np.minimum(x, 0)))),
    "hard_tanh": (nn.hard_tanh, lambda x: np.clip(x, -1, 1)),
    "hard_sigmoid": (nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "hard_silu": (nn.hard_silu, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "soft_sign": (nn.soft_sign, lambda x: x / (np.abs(x) + 1)),
    "squareplus": (nn.squareplus, lambda x: (x + np.sqrt(x * x + 4)) / 2),
    "mish": (nn.mish, lambda x: x * np.tanh(np.logaddexp(x, 0))),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
@pytest.mark.parametrize("dtype, shape", [(np.float32, (3, 5)), (np.float64, (7,)),
                                          (np.float16, (2, 2, 3)), (BF16, (4,))])
def test_activations_against_numpy(name, dtype, shape):
    fn, reference = REFERENCES[name]
    x = data(shape, dtype)
    got = both(fn, x)
    # narrow floats compute in their own precision, op by op: compare loosely
    scale = 8 if name in ("gelu", "mish", "gelu_exact", "selu", "elu", "celu") else 2
    close(got, reference(x.astype(np.float64)), dtype, scale)


def test_activation_dtypes_follow_jax():
    ints = np.arange(-3, 4, dtype=np.int32)
    assert nn.relu(ints).dtype == np.int32                 # maximum(x, 0) stays integer
    assert nn.hard_tanh(ints).dtype == np.int32
    assert nn.relu6(ints).dtype == np.float32              # min(.., 6.0) promotes
    for fn in (nn.sigmoid, nn.gelu, nn.silu, nn.softplus, nn.elu):
        assert fn(ints).dtype == np.float32
    assert nn.sigmoid(2.0).dtype == np.float32
    half = np.ones(3, np.float16)
    assert nn.gelu(half).dtype == np.float16 and nn.softmax(half).dtype == np.float16


JAX_INPUT = np.array([[-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 20.0]], np.float32)
JAX_ANSWERS = {  # jax.nn 0.10.2 on JAX_INPUT (float32)
    "gelu": [-0.003637343645095825, -0.15880796313285828, -0.1542859971523285, 0.0,
             0.3457140028476715, 0.8411920070648193, 2.9963626861572266, 20.0],
    "selu": [-1.670568823814392, -1.1113307476043701, -0.6917582154273987, 0.0,
             0.5253505110740662, 1.0507010221481323, 3.1521029472351074, 21.014020919799805],
    "softmax": [1.0261879540562902e-10, 7.582560135332983e-10, 1.2501528701136522e-09,
                2.06115369216775e-09, 3.3982678893096363e-09, 5.602796449011294e-09,
                4.139937459513021e-08, 1.0],
    "log_softmax": [-23.0, -21.0, -20.5, -20.0, -19.5, -19.0, -17.0, 0.0],
    "standardize": [-0.808190107345581, -0.5143027901649475, -0.4408309757709503,
                    -0.3673591613769531, -0.29388731718063354, -0.22041548788547516,
                    0.07347182929515839, 2.571514129638672],
    "mish": [-0.14564745128154755, -0.3034014403820038, -0.22074377536773682, 0.0,
             0.37524524331092834, 0.8650984764099121, 2.9865355491638184, 20.0],
}


@pytest.mark.parametrize("name", sorted(JAX_ANSWERS))
def test_known_answers_from_jax(name):
    got = np.asarray(getattr(nn, name)(JAX_INPUT)).ravel()
    want = np.array(JAX_ANSWERS[name], np.float32)
    # gelu at -3 cancels (1 + tanh(...) ~ 0.002): tanh's last bit shows, relatively
    np.testing.assert_allclose(got, want, rtol=5e-5 if name == "gelu" else 2e-6, atol=1e-7)


# -- softmax family ------------------------------------------------------------------------
def _softmax_ref(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("shape, axis", [((5,), -1), ((3, 4), 0), ((2, 3, 4), (1, 2)),
                                         ((2, 3, 4), -1)])
def test_softmax_and_log_softmax(dtype, shape, axis):
    x = data(shape, dtype, -20, 20)
    ref = _softmax_ref(x.astype(np.float64), axis)
    close(both(lambda v: nn.softmax(v, axis=axis), x), ref, dtype, 4)
    close(both(lambda v: nn.log_softmax(v, axis=axis), x), np.log(ref), dtype, 4)


def test_softmax_is_stable_and_masks():
    huge = np.array([1000.0, 1001.0, 999.0], np.float32)
    np.testing.assert_allclose(np.asarray(nn.softmax(huge)), _softmax_ref(huge * 1.0, -1),
                               rtol=1e-6)
    assert np.isfinite(np.asarray(nn.log_softmax(huge))).all()
    x = data((2, 5), np.float32)
    mask = np.array([[True, False, True, True, False], [False, True, True, True, True]])
    got = both(lambda v, m: nn.softmax(v, where=m), x, mask)
    ref = _softmax_ref(np.where(mask, x, -np.inf).astype(np.float64), -1)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-7)
    assert (got[~mask] == 0).all()
    logs = both(lambda v, m: nn.log_softmax(v, where=m), x, mask)
    assert np.isneginf(logs[~mask]).all()
    np.testing.assert_allclose(logs[mask], np.log(ref[mask]), rtol=1e-5, atol=1e-6)


def test_logsumexp():
    x = data((3, 4), np.float32, -30, 30)
    for axis, keepdims in [(None, False), (0, False), (1, True), ((0, 1), True)]:
        got = both(lambda v, a=axis, k=keepdims: nn.logsumexp(v, axis=a, keepdims=k), x)
        close(got, special.logsumexp(x.astype(np.float64), axis=axis, keepdims=keepdims),
              np.float32)
    rows = np.array([[-np.inf, -np.inf], [0.0, -np.inf], [np.inf, 1.0]], np.float32)
    np.testing.assert_array_equal(both(lambda v: nn.logsumexp(v, axis=1), rows),
                                  np.array([-np.inf, 0.0, np.inf], np.float32))
    big = np.array([1e30, 1e30], np.float32)
    assert float(nn.logsumexp(big)) == pytest.approx(1e30 + np.log(2), rel=1e-6)


def test_logsumexp_weights_and_sign():
    a = data((2, 5), np.float64, -3, 3)
    b = np.array([1.0, -2.0, 0.5, 0.0, 3.0])
    out, sign = both(lambda u, w: nn.logsumexp(u, axis=1, b=w, return_sign=True), a, b)
    total = np.sum(b * np.exp(a), axis=1)
    np.testing.assert_allclose(out, np.log(np.abs(total)), rtol=1e-12)
    np.testing.assert_array_equal(sign, np.sign(total))
    negative = nn.logsumexp(np.array([0.0, 1.0]), b=np.array([1.0, -1.0]))
    assert np.isnan(float(negative))                       # no sign asked: NaN
    lse, s = nn.logsumexp(JAX_INPUT, axis=1, return_sign=True,
                          b=np.array([1, -1, 1, 1, 1, 1, 1, 0], np.float32))
    np.testing.assert_allclose(np.asarray(lse), [3.24808406829834], rtol=1e-6)  # jax.nn
    assert float(s[0]) == 1.0
    masked = nn.logsumexp(np.array([1.0, 50.0, 2.0]), where=np.array([True, False, True]))
    assert float(masked) == pytest.approx(np.logaddexp(1.0, 2.0))


# -- standardize, one_hot, glu ---------------------------------------------------------------
@pytest.mark.parametrize("algorithm", ["fast", "stable"])
def test_standardize(algorithm):
    x = data((3, 6), np.float32, -4, 10)
    got = both(lambda v: nn.standardize(v, axis=-1, algorithm=algorithm), x)
    x64 = x.astype(np.float64)
    ref = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)
    close(got, ref, np.float32, 10)
    given = nn.standardize(x, axis=0, mean=np.zeros((1, 6), np.float32),
                           variance=np.ones((1, 6), np.float32), epsilon=0.0)
    np.testing.assert_allclose(np.asarray(given), x, rtol=1e-6)
    with pytest.raises(ValueError, match="algorithm"):
        nn.standardize(x, algorithm="exact")


def test_one_hot():
    labels = np.array([[0, 2], [-1, 3]], np.int32)
    got = both(lambda v: nn.one_hot(v, 3), labels)
    assert got.dtype == np.float32 and got.shape == (2, 2, 3)
    np.testing.assert_array_equal(got, (labels[..., None] == np.arange(3)).astype(np.float32))
    first = both(lambda v: nn.one_hot(v, 4, axis=0, dtype=np.int8), labels)
    assert first.shape == (4, 2, 2) and first.dtype == np.int8
    np.testing.assert_array_equal(np.moveaxis(first, 0, -1),
                                  (labels[..., None] == np.arange(4)).astype(np.int8))


def test_glu():
    x = data((2, 6), np.float32)
    got = both(lambda v: nn.glu(v, axis=-1), x)
    close(got, x[:, :3] * _sigmoid(x[:, 3:].astype(np.float64)), np.float32)
    with pytest.raises(ValueError, match="even"):
        nn.glu(np.ones((2, 3), np.float32))
