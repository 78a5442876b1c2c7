"""xlapy.random: known answers drawn by JAX 0.10.2 (default threefry, 32-bit
mode unless noted), eager/jit agreement, shapes and dtypes, statistical
sanity, determinism, and errors.

Integer-valued results and uniforms are bit-exact with JAX. Samplers that go
through log/log1p (normal, gumbel, exponential...) may differ from JAX's CPU
results in the last bit, since XLA's CPU log1p is its own approximation; they
are compared within a couple of ulps.
"""

import ml_dtypes
import numpy as np
import pytest

import xlapy
import xlapy.random as xr
from xlapy import config
from xlapy.core import lazy

KEY_42 = np.array([0, 42], np.uint32)

# -- known answers from jax.random -------------------------------------------------------
EXACT = {
    "split": (lambda k: xr.split(k), [[1832780943, 270669613], [64467757, 2916123636]]),
    "split3": (lambda k: xr.split(k, 3), [[1832780943, 270669613], [64467757, 2916123636],
                                          [2465931498, 255383827]]),
    "fold_in": (lambda k: xr.fold_in(k, 7), [2547012911, 1371500959]),
    "bits32": (lambda k: xr.bits(k, (2, 3)), [[2098992034, 2919706841, 2646866425],
                                               [2409546199, 1935504149, 2516274904]]),
    "bits8": (lambda k: xr.bits(k, (5,), np.uint8), [162, 217, 249, 215, 21]),
    "bits16": (lambda k: xr.bits(k, (5,), np.uint16), [5026, 12505, 63993, 49623, 29461]),
    "bits64": (lambda k: xr.bits(k, (3,), np.uint64),  # JAX with x64
               [7871734211187709741, 276886910877598708, 10591095138341673235]),
    "uniform": (lambda k: xr.uniform(k, (5,)),
                [0.48870956897735596, 0.6797971725463867, 0.6162714958190918,
                 0.5610160827636719, 0.4506446123123169]),
    "uniform_range": (lambda k: xr.uniform(k, (5,), minval=-2.0, maxval=3.0),
                      [0.4435478448867798, 1.3989858627319336, 1.081357479095459,
                       0.8050804138183594, 0.2532230615615845]),
    "uniform_f16": (lambda k: xr.uniform(k, (5,), np.float16),
                    [0.076171875, 0.1904296875, 0.9755859375, 0.7568359375, 0.44921875]),
    "uniform_bf16": (lambda k: xr.uniform(k, (5,), ml_dtypes.bfloat16),
                     [0.6328125, 0.84375, 0.96875, 0.8359375, 0.078125]),
    "uniform_f64": (lambda k: xr.uniform(k, (3,), np.float64, minval=-2.0, maxval=3.0),
                    [0.13363783324954537, -1.924949652423427, 0.8707220894976759]),
    "randint": (lambda k: xr.randint(k, (8,), -5, 17), [7, 7, 4, 14, 10, 12, 14, 2]),
    "randint_u8": (lambda k: xr.randint(k, (8,), 0, 256, np.uint8),
                   [196, 18, 183, 193, 141, 107, 129, 39]),
    "randint_i64": (lambda k: xr.randint(k, (4,), np.int64(-2 ** 40), np.int64(2 ** 40),
                                         np.int64),
                    [-64295291339, -359608887618, -961504916329, -77019434961]),
    "bernoulli": (lambda k: xr.bernoulli(k, 0.3, (8,)),
                  [False, False, False, False, False, False, True, False]),
    "permutation": (lambda k: xr.permutation(k, 10), [7, 4, 2, 5, 3, 6, 8, 9, 0, 1]),
    "permutation_2d": (lambda k: xr.permutation(k, np.arange(12, dtype=np.int32).reshape(4, 3)),
                       [[6, 7, 8], [9, 10, 11], [0, 1, 2], [3, 4, 5]]),
    "choice": (lambda k: xr.choice(k, 10, (4,)), [4, 4, 1, 9]),
    "choice_noreplace": (lambda k: xr.choice(k, 10, (4,), replace=False), [7, 4, 2, 5]),
    "choice_p": (lambda k: xr.choice(k, 4, (6,), p=np.array([0.1, 0.2, 0.3, 0.4], np.float32)),
                 [2, 2, 2, 2, 2, 2]),
    "rademacher": (lambda k: xr.rademacher(k, (6,)), [1, -1, -1, -1, 1, -1]),
    "categorical": (lambda k: xr.categorical(
        k, np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], np.float32)), shape=(3, 2)),
        [[2, 0], [2, 0], [1, 0]]),
}

APPROX = {  # float32, within a few ulps of JAX's values
    "normal": (lambda k: xr.normal(k, (5,)),
               [-0.02830461598932743, 0.4671318531036377, 0.2957029640674591,
                0.15354591608047485, -0.12403281778097153]),
    "gumbel": (lambda k: xr.gumbel(k, (4,)),
               [0.3340933918952942, 0.952019453048706, 0.7255305647850037, 0.5481715202331543]),
    "truncated_normal": (lambda k: xr.truncated_normal(k, -1.0, 2.0, (4,)),
                         [0.14770005643367767, 0.5684449076652527, 0.42102551460266113,
                          0.29997000098228455]),
    "exponential": (lambda k: xr.exponential(k, (4,)),
                    [0.670817494392395, 1.1388006210327148, 0.9578199982643127,
                     0.8232924938201904]),
    "cauchy": (lambda k: xr.cauchy(k, (4,)),
               [-0.03548463061451912, 0.6337261199951172, 0.38244056701660156,
                0.1940706968307495]),
    "laplace": (lambda k: xr.laplace(k, (4,)),
                [0.022839652374386787, -0.4456535577774048, -0.2646729052066803,
                 -0.1301453858613968]),
    "logistic": (lambda k: xr.logistic(k, (4,)),
                 [-0.0451694130897522, 0.7528398036956787, 0.47375231981277466,
                  0.245286762714386]),
    "multivariate_normal": (lambda k: xr.multivariate_normal(
        k, np.array([1.0, -1.0], np.float32), np.array([[2.0, 0.5], [0.5, 1.0]], np.float32),
        (3,)), [[0.9599712491035461, -0.5730453729629517],
                [1.418187141418457, -0.751824140548706],
                [0.8245911002159119, -0.8409391641616821]]),
}


def _eager_and_jit(fn, *args):
    """The draw eagerly, checked equal to it drawn again (eagerly, a signature
    seen before runs compiled), under jit, and in lazy mode (the call learned,
    then replayed)."""
    eager = np.asarray(fn(*args))
    again = [np.asarray(fn(*args)) for _ in range(2)]
    jitted = np.asarray(xlapy.jit(fn)(*args))
    with xlapy.jit_scope():
        lazily = [np.asarray(fn(*args)) for _ in range(2)]
    for got in (*again, jitted, *lazily):
        assert eager.dtype == got.dtype and eager.shape == got.shape
        np.testing.assert_array_equal(eager, got)
    return eager


def test_a_draw_in_lazy_mode_is_recorded_as_one_call():
    """A normal draw is some 400 operations of threefry and erf_inv: lazy mode
    replays each sampler's call as one node, so a step that draws noise records
    a handful of operations and compiles once."""
    def step(key, x):
        key, sub = xr.split(key)
        return key, (x + xr.normal(sub, x.shape) * 0.1).sum()

    x = np.ones((8, 16), np.float32)
    eager = step(xr.PRNGKey(1), x)[1]
    with xlapy.jit_scope():
        key = xr.PRNGKey(1)
        key, first = step(key, x)
        float(first)
        key, second = step(key, x)   # (its key is the first step's result: compiled too)
        float(second)
        start = lazy.Stats(**vars(lazy.STATS))
        for _ in range(3):
            key, value = step(key, x)
            float(value)
        assert lazy.STATS.operations - start.operations <= 3 * 12   # (not 3 * 400)
        assert lazy.STATS.compiles == start.compiles
    np.testing.assert_allclose(float(first), float(eager), rtol=1e-6)


X64_ANSWERS = {"bits64", "uniform_f64", "randint_i64"}   # JAX's answers with x64


@pytest.mark.parametrize("name", sorted(EXACT))
def test_known_answers_exact(name):
    fn, expected = EXACT[name]
    with config.enable_x64(name in X64_ANSWERS):
        got = _eager_and_jit(fn, KEY_42)
    expected = np.asarray(expected, dtype=got.dtype)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", sorted(APPROX))
def test_known_answers_within_ulps(name):
    fn, expected = APPROX[name]
    got = _eager_and_jit(fn, KEY_42)
    assert got.dtype == np.float32
    expected = np.asarray(expected, np.float32)
    ulps = np.abs(got - expected) / np.spacing(np.abs(expected))
    assert ulps.max() <= 4, ulps


@pytest.mark.parametrize("seed, expected", [
    (0, [0, 0]), (42, [0, 42]), (-1, [0, 4294967295]), (2 ** 31 - 1, [0, 2 ** 31 - 1]),
    (2 ** 32 - 1, [0, 2 ** 32 - 1]),
    (2 ** 40 + 3, [256, 3]),                     # JAX with x64
    (np.int64(-1), [4294967295, 4294967295]),    # JAX with x64 (the test runs with x64)
    (np.uint32(7), [0, 7]), (np.int8(-1), [0, 4294967295]),
])
def test_prng_key_layout(seed, expected):
    key = xr.PRNGKey(seed)
    assert key.dtype == np.uint32 and key.shape == (2,)
    np.testing.assert_array_equal(np.asarray(key), np.array(expected, np.uint32))


def test_a_64_bit_seed_without_x64_is_its_low_word():
    with config.enable_x64(False):   # as JAX: the int64 becomes an int32 on the way in
        np.testing.assert_array_equal(xr.PRNGKey(np.int64(2 ** 40 + 3)), [0, 3])
        np.testing.assert_array_equal(xr.PRNGKey(np.int64(-1)), [0, 4294967295])


def test_threefry_known_answer():
    """Random123's known-answer vector for Threefry-2x32 with 20 rounds."""
    u32 = np.uint32
    y1, y2 = xr.threefry_2x32(u32(0x13198A2E), u32(0x03707344), np.array([0x243F6A88], u32),
                              np.array([0x85A308D3], u32))
    assert (int(y1[0]), int(y2[0])) == (0xC4923A9C, 0x483DF7A0)
    y1, y2 = xr.threefry_2x32(u32(0), u32(0), np.zeros(1, u32), np.zeros(1, u32))
    assert (int(y1[0]), int(y2[0])) == (0x6B200159, 0x99BA4EFE)


def test_key_helpers():
    keys = xr.split(KEY_42, 3)
    assert xr.key_data(keys) is keys and xr.wrap_key_data(keys) is keys
    np.testing.assert_array_equal(np.asarray(xr.clone(KEY_42)), KEY_42)
    np.testing.assert_array_equal(np.asarray(xr.key(42)), KEY_42)
    with pytest.raises(TypeError, match="uint32"):
        xr.key_data(np.zeros(3, np.int32))
    lanes = np.tile(np.arange(10, dtype=np.int32), (3, 1))
    shuffled = np.asarray(xr.shuffle(KEY_42, lanes, axis=1))
    assert (np.sort(shuffled, axis=1) == lanes).all()


def test_traced_seed_matches_eager():
    make = xlapy.jit(xr.PRNGKey)
    for seed in (np.int32(-5), np.int32(123), np.int64(2 ** 40 + 3)):
        np.testing.assert_array_equal(np.asarray(make(seed)), np.asarray(xr.PRNGKey(seed)))


def test_fold_in_traced_data():
    fold = xlapy.jit(xr.fold_in)
    for data in (0, 7, 123456):
        np.testing.assert_array_equal(np.asarray(fold(KEY_42, np.int32(data))),
                                      np.asarray(xr.fold_in(KEY_42, data)))
    np.testing.assert_array_equal(np.asarray(xr.fold_in(KEY_42, 7)),
                                  np.asarray(EXACT["fold_in"][1], np.uint32))


def test_traced_parameters():
    lo, hi = np.array([0.0, 10.0, -5.0], np.float32), np.float32(20.0)
    draw = _eager_and_jit(lambda k, a, b: xr.uniform(k, (2, 3), minval=a, maxval=b), KEY_42,
                          lo, hi)
    assert (draw >= lo).all() and (draw < hi).all()
    p = np.array([0.0, 1.0, 0.5], np.float32)
    coins = _eager_and_jit(lambda k, q: xr.bernoulli(k, q), KEY_42, p)
    assert not coins[0] and coins[1]
    ints = _eager_and_jit(lambda k, a, b: xr.randint(k, (4, 2), a, b), KEY_42,
                          np.array([0, 100], np.int32), np.int32(103))
    assert (ints[:, 0] >= 0).all() and (ints[:, 1] >= 100).all() and (ints < 103).all()
    out = _eager_and_jit(lambda k, a, b: xr.truncated_normal(k, a, b), KEY_42,
                         np.array([-1.0, 0.0], np.float32), np.array([0.0, 3.0], np.float32))
    assert out.shape == (2,) and -1 < out[0] < 0 < out[1] < 3


# -- shapes and dtypes ---------------------------------------------------------------------
@pytest.mark.parametrize("sampler, kwargs, dtype", [
    (xr.uniform, {}, np.float32),
    (xr.uniform, {"dtype": np.float64}, np.float64),
    (xr.uniform, {"dtype": np.float16}, np.float16),
    (xr.normal, {}, np.float32),
    (xr.normal, {"dtype": ml_dtypes.bfloat16}, ml_dtypes.bfloat16),
    (xr.normal, {"dtype": np.complex64}, np.complex64),
    (xr.gumbel, {"mode": "high"}, np.float32),
    (xr.exponential, {}, np.float32),
    (xr.laplace, {}, np.float32),
    (xr.logistic, {}, np.float32),
    (xr.rademacher, {}, np.int32),
    (xr.bits, {"dtype": np.uint16}, np.uint16),
])
@pytest.mark.parametrize("shape", [(), (3,), (2, 0, 4), (2, 3, 4)])
def test_shapes_and_dtypes(sampler, kwargs, dtype, shape):
    x = sampler(KEY_42, shape, **kwargs)
    assert x.shape == shape and x.dtype == np.dtype(dtype)


def test_integer_samplers_shapes_and_dtypes():
    for dtype in (np.int8, np.uint8, np.int16, np.int32, np.uint32):
        x = xr.randint(KEY_42, (3, 2), 0, 5, dtype)
        assert x.shape == (3, 2) and x.dtype == dtype
    with config.enable_x64(True):
        x = xr.randint(KEY_42, (3, 2), 0, 5, np.int64)
        assert x.shape == (3, 2) and x.dtype == np.int64
    assert xr.bernoulli(KEY_42, np.full((2, 3), 0.5, np.float32)).shape == (2, 3)
    assert xr.split(KEY_42, (2, 3)).shape == (2, 3, 2)
    assert xr.choice(KEY_42, np.arange(12.0).reshape(3, 4), (2,), axis=1).shape == (3, 2)
    assert xr.categorical(KEY_42, np.zeros((4, 3), np.float32), axis=0).shape == (3,)


# -- statistics ----------------------------------------------------------------------------
N = 20000


def test_uniform_statistics():
    u = np.asarray(xr.uniform(xr.PRNGKey(1), (N,), minval=-1.0, maxval=3.0))
    assert u.min() >= -1.0 and u.max() < 3.0
    assert abs(u.mean() - 1.0) < 0.05 and abs(u.var() - 16 / 12) < 0.05


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_normal_statistics(dtype):
    z = np.asarray(xr.normal(xr.PRNGKey(2), (N,), dtype)).astype(np.float64)
    assert np.isfinite(z).all()
    assert abs(z.mean()) < 0.03 and abs(z.var() - 1) < 0.05
    assert abs(np.mean(np.abs(z) < 1) - 0.6827) < 0.015


def test_discrete_statistics():
    key = xr.PRNGKey(3)
    b = np.asarray(xr.bernoulli(key, 0.3, (N,)))
    assert abs(b.mean() - 0.3) < 0.015
    n = np.asarray(xr.randint(key, (N,), -3, 4))
    assert n.min() == -3 and n.max() == 3 and abs(n.mean()) < 0.05
    c = np.asarray(xr.categorical(key, np.log(np.array([0.2, 0.5, 0.3], np.float32)), shape=(N,)))
    np.testing.assert_allclose(np.bincount(c, minlength=3) / N, [0.2, 0.5, 0.3], atol=0.015)
    p = np.array([0.1, 0.0, 0.6, 0.3], np.float32)
    d = np.asarray(xr.choice(key, 4, (N,), p=p))
    np.testing.assert_allclose(np.bincount(d, minlength=4) / N, p, atol=0.015)


def test_continuous_statistics():
    key = xr.PRNGKey(4)
    e = np.asarray(xr.exponential(key, (N,)))
    assert e.min() >= 0 and abs(e.mean() - 1) < 0.03
    g = np.asarray(xr.gumbel(key, (N,)))
    assert abs(g.mean() - np.euler_gamma) < 0.03
    t = np.asarray(xr.truncated_normal(key, -0.5, 1.5, (N,)))
    assert t.min() > -0.5 and t.max() < 1.5
    r = np.asarray(xr.rademacher(key, (N,)))
    assert set(np.unique(r)) == {-1, 1} and abs(r.mean()) < 0.03


def test_permutations_are_permutations():
    key = xr.PRNGKey(5)
    perm = np.asarray(xr.permutation(key, 1000))
    assert sorted(perm.tolist()) == list(range(1000)) and (perm != np.arange(1000)).any()
    x = np.arange(20, dtype=np.int32).reshape(4, 5)
    rows = np.asarray(xr.permutation(key, x, axis=1))
    assert (np.sort(rows, axis=1) == x).all()
    assert len({tuple(np.argsort(r)) for r in rows}) == 1          # one permutation for all
    lanes = np.asarray(xr.permutation(key, np.tile(np.arange(50), (6, 1)), axis=1,
                                      independent=True))
    assert (np.sort(lanes, axis=1) == np.arange(50)).all()
    assert len({tuple(r) for r in lanes}) == 6                      # each lane its own
    picked = np.asarray(xr.choice(key, 30, (30,), replace=False))
    assert sorted(picked.tolist()) == list(range(30))
    weighted = np.asarray(xr.choice(key, 6, (4,), replace=False,
                                    p=np.array([0.1, 0.1, 0.2, 0.2, 0.2, 0.2], np.float32)))
    assert len(set(weighted.tolist())) == 4


# -- determinism and independence ----------------------------------------------------------
def test_determinism_and_key_independence():
    key = xr.PRNGKey(11)
    np.testing.assert_array_equal(np.asarray(xr.normal(key, (8,))),
                                  np.asarray(xr.normal(key, (8,))))
    keys = np.asarray(xr.split(key, 8))
    assert len({tuple(k) for k in keys}) == 8
    assert tuple(np.asarray(key)) not in {tuple(k) for k in keys}
    draws = [np.asarray(xr.uniform(k, (4,))) for k in keys[:3]]
    assert not np.array_equal(draws[0], draws[1]) and not np.array_equal(draws[1], draws[2])
    folded = {tuple(np.asarray(xr.fold_in(key, i))) for i in range(5)}
    assert len(folded) == 5


def test_split_under_jit_with_loop():
    def walk(key):
        def body(_, carry):
            key, total = carry
            key, sub = xr.split(key)
            return key, total + xr.uniform(sub)
        return xlapy.lax.fori_loop(0, 4, body, (key, np.float32(0)))

    eager_key, eager_total = walk(KEY_42)
    jit_key, jit_total = xlapy.jit(walk)(KEY_42)
    np.testing.assert_array_equal(np.asarray(eager_key), np.asarray(jit_key))
    assert float(eager_total) == float(jit_total)


# -- errors --------------------------------------------------------------------------------
def test_errors():
    with pytest.raises(TypeError, match="PRNG key"):
        xr.uniform(np.zeros(2, np.int32))
    with pytest.raises(TypeError, match="PRNG key"):
        xr.normal(xr.split(KEY_42))
    with pytest.raises(ValueError, match="floating-point"):
        xr.uniform(KEY_42, dtype=np.int32)
    with pytest.raises(TypeError, match="integer"):
        xr.randint(KEY_42, (2,), 0, 3, dtype=np.float32)
    with pytest.raises(ValueError, match="unsigned"):
        xr.bits(KEY_42, (2,), np.int32)
    with pytest.raises(ValueError, match="larger sample"):
        xr.choice(KEY_42, 3, (4,), replace=False)
    with pytest.raises(TypeError, match="floating-point"):
        xr.bernoulli(KEY_42, 1)
    with pytest.raises(TypeError, match="scalar"):
        xr.fold_in(KEY_42, np.arange(2))
    with pytest.raises(TypeError, match="concrete integer"):
        xlapy.jit(lambda n: xr.permutation(KEY_42, n))(np.int32(3))
