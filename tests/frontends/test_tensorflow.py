"""xlapy.frontends.tensorflow: TF's bridge lowers a tf.function, xlapy compiles and
runs it; results and variable updates must match TensorFlow's own run."""

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from xlapy.errors import CompileError  # noqa: E402
from xlapy.frontends import tensorflow as xtf  # noqa: E402
from xlapy.models import data  # noqa: E402


def _mnist_softmax(learning_rate=0.5):
    """The seeds' mnist_softmax_xla in TF 2: y = x·W + b, softmax cross-entropy,
    plain gradient descent; the step is a tf.function written with GradientTape."""
    w = tf.Variable(tf.zeros([784, 10]), name="W")
    b = tf.Variable(tf.zeros([10]), name="b")

    @tf.function
    def train_step(x, y_):
        with tf.GradientTape() as tape:
            y = tf.matmul(x, w) + b
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=y))
        grad_w, grad_b = tape.gradient(loss, [w, b])
        w.assign_sub(learning_rate * grad_w)
        b.assign_sub(learning_rate * grad_b)
        return loss

    return train_step, (w, b)


def _batches(steps, size=64, seed=0):
    rng = np.random.default_rng(seed)
    x, labels = data.clusters(rng, steps * size)
    y = np.eye(10, dtype=np.float32)[labels]
    return [(x[k * size:(k + 1) * size] / 4, y[k * size:(k + 1) * size]) for k in range(steps)]


def test_mnist_softmax_regression_trains_to_tensorflows_losses_step_by_step():
    batches = _batches(20)
    tf_step, tf_vars = _mnist_softmax()
    tf_losses = [float(tf_step(x, y)) for x, y in batches]
    step, variables = _mnist_softmax()
    compiled = xtf.function(step)
    losses = [float(compiled(x, y)) for x, y in batches]
    np.testing.assert_allclose(losses, tf_losses, rtol=2e-4, atol=1e-5)
    assert losses[-1] < losses[0] / 4   # it learned
    for mine, theirs in zip(variables, tf_vars):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-3, atol=1e-5)
    assert compiled.compiles == 1   # one signature, compiled once


def test_mlp_with_relu_and_a_keras_free_update_matches_tensorflow():
    rng = np.random.default_rng(1)
    init = [rng.standard_normal((784, 32)).astype(np.float32) * 0.05, np.zeros(32, np.float32),
            rng.standard_normal((32, 10)).astype(np.float32) * 0.05, np.zeros(10, np.float32)]

    def make():
        params = [tf.Variable(v) for v in init]

        @tf.function
        def step(x, y, lr=0.1):
            with tf.GradientTape() as tape:
                h = tf.nn.relu(x @ params[0] + params[1])
                logits = h @ params[2] + params[3]
                loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, logits))
            for p, g in zip(params, tape.gradient(loss, params)):
                p.assign_sub(lr * g)
            return {"loss": loss, "accuracy": tf.reduce_mean(tf.cast(
                tf.argmax(logits, 1) == tf.argmax(y, 1), tf.float32))}

        return step, params

    batches = _batches(8, size=32, seed=3)
    tf_step, tf_params = make()
    expected = [{k: float(v) for k, v in tf_step(x, y).items()} for x, y in batches]
    step, params = make()
    compiled = xtf.function(step)
    got = [{k: float(v) for k, v in compiled(x, y).items()} for x, y in batches]
    for mine, theirs in zip(got, expected):
        assert mine["loss"] == pytest.approx(theirs["loss"], rel=1e-4, abs=1e-5)
        assert mine["accuracy"] == pytest.approx(theirs["accuracy"])
    for mine, theirs in zip(params, tf_params):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-3, atol=1e-5)


def test_structures_defaults_keywords_and_captured_constants():
    offset = tf.constant([1.0, 2.0, 3.0])

    @tf.function
    def f(x, scale=2.0, *, y):
        return {"sum": tf.matmul(x, tf.ones([4, 3])) * scale + offset + y, "none": None,
                "pair": (tf.reduce_max(x), tf.cast(tf.shape(x)[0], tf.int32))}

    g = xtf.function(f)
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    y = tf.ones([3])
    for scale in (2.0, 3.0):
        mine, theirs = g(x, scale, y=y), f(x, scale, y=y)
        assert mine["none"] is None
        np.testing.assert_allclose(mine["sum"].numpy(), theirs["sum"].numpy())
        assert float(mine["pair"][0]) == float(theirs["pair"][0])
        assert int(mine["pair"][1]) == 2 and mine["pair"][1].dtype == tf.int32
    assert g.compiles == 2   # a Python number is part of the signature, as in TF
    g(x + 1, 2.0, y=y)
    assert g.compiles == 2   # same shapes: found in the cache
    g(np.ones((5, 4), np.float32), 2.0, y=y)
    assert g.compiles == 3


def test_a_plain_function_and_the_decorator_form():
    @xtf.function
    def double(x):
        return x * 2

    assert isinstance(double(tf.constant([1, 2], tf.int32)), tf.Tensor)
    np.testing.assert_array_equal(double(tf.constant([1, 2], tf.int32)).numpy(), [2, 4])

    @xtf.function(backend="interpreter")
    def square(x):
        return tf.math.square(x)

    np.testing.assert_allclose(square(np.array([3.0], np.float32)).numpy(), [9.0])


def test_results_do_not_alias_variables_or_inputs():
    """xlapy must never write into TensorFlow's memory: an input keeps its value,
    and a result read later is not overwritten by the next call."""
    v = tf.Variable(tf.zeros([1000]))

    @tf.function
    def bump(x):
        v.assign_add(x)
        return v * 1.0

    g = xtf.function(bump)
    x = tf.ones([1000])
    first = g(x)
    second = g(x)
    np.testing.assert_array_equal(x.numpy(), np.ones(1000))
    np.testing.assert_array_equal(first.numpy(), np.ones(1000))
    np.testing.assert_array_equal(second.numpy(), np.full(1000, 2.0))
    np.testing.assert_array_equal(v.numpy(), np.full(1000, 2.0))


def test_what_tensorflow_cannot_lower_is_a_compile_error_naming_the_function():
    @tf.function
    def unique_values(x):
        return tf.unique(x).y   # a data-dependent shape: no XLA kernel

    with pytest.raises(CompileError, match="unique_values: .*data-dependent shape"):
        xtf.function(unique_values)(tf.constant([1, 1, 2]))


def test_a_bad_call_names_the_function():
    g = xtf.function(lambda x, y: x + y)
    with pytest.raises(TypeError, match="missing a required argument"):
        g(tf.ones([2]))
