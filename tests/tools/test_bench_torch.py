"""The suite's PyTorch versions of the models (benchmarks/torch_peers.py) compute
what the xlapy models compute, eagerly and under torch.compile, at sizes where
a wrong axis, a missing scale or a different epsilon would show: a peer
computing something else would make the comparison meaningless."""

import numpy as np
import pytest

import xlapy
from benchmarks import torch_peers
from xlapy.models import NUMPY, encoder, lstm, mlp, softmax_regression

torch = pytest.importorskip("torch")


def _numpy(tree):
    if isinstance(tree, dict):
        return {k: _numpy(v) for k, v in tree.items()}
    if isinstance(tree, (tuple, list)):
        return [_numpy(v) for v in tree]
    return tree.detach().numpy() if isinstance(tree, torch.Tensor) else np.asarray(tree)


def _close(got, expected, rtol=1e-4, atol=1e-6):
    if isinstance(expected, dict):
        assert sorted(got) == sorted(expected)
        for k in expected:
            _close(got[k], expected[k], rtol, atol)
    elif isinstance(expected, (tuple, list)):
        assert len(got) == len(expected)
        for a, b in zip(got, expected):
            _close(a, b, rtol, atol)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


def _encoder_case():
    params = encoder.init(np.random.default_rng(1), d_model=32, heads=4, ff=64)
    rng = np.random.default_rng(2)
    x, target = (rng.standard_normal((2, 8, 32)).astype(np.float32) for _ in range(2))
    return params, x, target


@pytest.mark.parametrize("compile", [False, True], ids=["eager", "compiled"])
def test_encoder_forward_matches_numpy(compile):
    params, x, _ = _encoder_case()
    expected = encoder.apply(params, x, NUMPY)
    fn = torch_peers.compiled(torch_peers.encoder_apply, compile)
    _close(_numpy(fn(torch_peers.tensors(params), torch.from_numpy(x))), expected)


@pytest.mark.parametrize("compile", [False, True], ids=["eager", "compiled"])
def test_encoder_loss_and_gradients_match_xlapy(compile):
    params, x, target = _encoder_case()
    value, grads = xlapy.jit(xlapy.value_and_grad(encoder.loss))(params, (x, target))
    both = torch_peers.value_and_grad(torch_peers.encoder_loss, compile)
    got_value, got_grads = both(torch_peers.tensors(params), torch_peers.tensors((x, target)))
    _close(_numpy(got_value), np.asarray(value))
    _close(_numpy(got_grads), {k: np.asarray(v) for k, v in grads.items()}, rtol=1e-3, atol=1e-6)


@pytest.mark.parametrize("model, apply, sizes", [
    (softmax_regression, torch_peers.softmax_regression_apply, {}),
    (mlp, torch_peers.mlp_apply, {"hidden": 32}),
], ids=["softmax_regression", "mlp"])
@pytest.mark.parametrize("compile", [False, True], ids=["eager", "compiled"])
def test_training_steps_match_numpy_backprop(model, apply, sizes, compile):
    """Three SGD steps against the model's hand-derived NumPy step."""
    rng = np.random.default_rng(3)
    params = model.init(np.random.default_rng(0), **sizes)
    step = torch_peers.sgd_step(torch_peers.classifier_loss(apply), model.LR, compile)
    mine = torch_peers.tensors(params)
    for _ in range(3):
        x = rng.random((16, 784), dtype=np.float32)
        labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 16)]
        params, value = model.numpy_train_step(params, (x, labels), model.LR)
        mine, got = step(mine, torch_peers.tensors((x, labels)))
        _close(_numpy(got), value)
    _close(_numpy(mine), params, rtol=1e-4, atol=1e-5)


def test_lstm_cell_matches_numpy():
    params = lstm.init(np.random.default_rng(0), features=8, hidden=16)
    rng = np.random.default_rng(4)
    h, c = (rng.standard_normal((4, 16)).astype(np.float32) for _ in range(2))
    x = rng.standard_normal((4, 8)).astype(np.float32)
    expected = lstm.cell(params, (h, c), x, NUMPY)
    got = torch_peers.lstm_cell(torch_peers.tensors(params), torch_peers.tensors((h, c)),
                                torch.from_numpy(x))
    _close(_numpy(got), expected)
