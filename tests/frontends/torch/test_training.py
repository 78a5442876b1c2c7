"""Training under `torch.compile(model, backend="xlapy")` matches eager PyTorch: a CNN
(conv, batch norm, ReLU, max pool, linear, cross entropy), an MLP and
`nn.TransformerEncoderLayer`, 20 SGD steps each from the same initial weights, losses
compared step by step. The loss is inside the compiled module, so forward and backward
graphs hold every op, and no graph may fall back to eager."""

from __future__ import annotations

import copy
import logging

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

STEPS = 20


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.norm = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        x = self.pool(torch.relu(self.norm(self.conv(x))))
        return self.fc(torch.flatten(x, 1))


class Classifier(nn.Module):
    """A model and its cross-entropy loss, compiled as one."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x, labels):
        return F.cross_entropy(self.model(x), labels)


class Regressor(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x, target):
        return F.mse_loss(self.model(x), target)


def _problem(name):
    torch.manual_seed(0)
    if name == "mlp":
        model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 16), nn.GELU(),
                              nn.Linear(16, 4))
        return Classifier(model), torch.randn(16, 12), torch.randint(0, 4, (16,)), 0.2
    if name == "cnn":
        return Classifier(CNN()), torch.randn(8, 1, 8, 8), torch.randint(0, 5, (8,)), 0.1
    layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    x = torch.randn(4, 6, 16)
    return Regressor(layer), x, torch.tanh(x.flip(1)), 0.05


def _train(module, x, y, lr):
    optimizer = torch.optim.SGD(module.parameters(), lr=lr)
    losses = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = module(x, y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("name", ["mlp", "cnn", "transformer"])
def test_training_matches_eager(name, caplog):
    torch._dynamo.reset()
    module, x, y, lr = _problem(name)
    compiled_copy = copy.deepcopy(module)
    with caplog.at_level(logging.WARNING, logger="xlapy.frontends.torch"):
        got = _train(torch.compile(compiled_copy, backend="xlapy"), x, y, lr)
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    want = _train(module, x, y, lr)
    assert got[-1] < got[0]
    torch.testing.assert_close(torch.tensor(got), torch.tensor(want), rtol=1e-4, atol=1e-5)
    for (key, p), q in zip(compiled_copy.named_parameters(), module.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-3, atol=1e-4, msg=lambda m, k=key: f"{k}: {m}")
    if name == "cnn":  # the running statistics came back from the functional graph
        torch.testing.assert_close(compiled_copy.model.norm.running_var,
                                   module.model.norm.running_var)


def test_eval_mode_inference_matches_eager(caplog):
    torch._dynamo.reset()
    module, x, _, _ = _problem("cnn")
    model = module.model.eval()
    with caplog.at_level(logging.WARNING, logger="xlapy.frontends.torch"), torch.no_grad():
        got = torch.compile(model, backend="xlapy")(x)
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    with torch.no_grad():
        torch.testing.assert_close(got, model(x), rtol=1e-5, atol=1e-5)
