"""The Dynamo backend's contract: the entry point, eager fallback with a logged reason,
attention through its decomposition, dropout's random key, symbolic shapes, inputs
that are not contiguous, and xlapy's interpreter as the backend."""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from xlapy.backends.cpu import runtime_library  # noqa: E402
from xlapy.frontends.torch import xlapy_backend  # noqa: E402

LOGGER = "xlapy.frontends.torch"


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_entry_point_works_without_importing_xlapy():
    code = textwrap.dedent("""
        import sys
        import torch
        assert "xlapy" not in sys.modules
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh())
        x = torch.randn(2, 3)
        got = torch.compile(model, backend="xlapy")(x)
        torch.testing.assert_close(got, model(x))
        assert "xlapy" in torch._dynamo.list_backends()
        print("ok", type(got).__name__)
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "ok Tensor" in result.stdout


def test_unsupported_op_falls_back_and_logs_the_op(caplog):
    def f(x):
        values, _ = torch.sort(torch.sin(x), dim=-1)
        return values * 2

    x = torch.randn(3, 5)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        got = torch.compile(f, backend="xlapy")(x)
    torch.testing.assert_close(got, f(x))
    messages = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert messages and "aten.sort" in messages[0] and "eagerly" in messages[0], messages


def test_fallback_in_backward_graph_only(caplog):
    """The forward compiles; the backward meets an op with no lowering (sort's
    backward scatters through a sorted index): the backward alone runs eagerly."""
    x = torch.randn(4, 6, requires_grad=True)

    def f(x):
        return torch.sort(x, dim=1).values.cumsum(1).sum()

    with caplog.at_level(logging.WARNING, logger=LOGGER):
        loss = torch.compile(f, backend="xlapy")(x)
        loss.backward()
    grad = x.grad.clone()
    x.grad = None
    f(x).backward()
    torch.testing.assert_close(grad, x.grad)
    assert any("aten.sort" in r.getMessage() for r in caplog.records)


class _Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(8, 24)

    def forward(self, x):
        q, k, v = self.qkv(x).view(2, 5, 3, 2, 4).permute(2, 0, 3, 1, 4)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True).sum(dim=(1, 3))


def test_scaled_dot_product_attention_trains_through_its_decomposition(caplog):
    torch.manual_seed(0)
    model = _Attention()
    x = torch.randn(2, 5, 8)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        compiled = torch.compile(model, backend="xlapy")
        got = compiled(x)
        got.pow(2).sum().backward()
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    want = model(x)
    want.pow(2).sum().backward()
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    for g, p in zip(grads, model.parameters()):
        torch.testing.assert_close(g, p.grad, rtol=1e-4, atol=1e-5)


def test_dropout_draws_from_torch_generator(caplog):
    dropout = nn.Dropout(0.5).train()
    compiled = torch.compile(lambda x: dropout(x) * 1.0, backend="xlapy")
    x = torch.ones(64, 64, requires_grad=True)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        torch.manual_seed(3)
        first = compiled(x)
        torch.manual_seed(3)
        again = compiled(x)
        other = compiled(x)
        first.sum().backward()
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    torch.testing.assert_close(first, again)        # same seed, same mask
    assert not torch.equal(first, other)            # the generator moved on
    kept = first != 0
    assert 0.4 < kept.float().mean().item() < 0.6
    torch.testing.assert_close(first[kept], torch.full_like(first[kept], 2.0))
    torch.testing.assert_close(x.grad, kept.float() * 2.0)  # the backward uses the mask


def test_new_shapes_compile_per_signature(caplog):
    def f(x, w):
        return torch.relu(x @ w).mean(dim=0)

    compiled = torch.compile(f, backend="xlapy")
    w = torch.randn(3, 2)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        for rows in (4, 5, 7, 5):
            x = torch.randn(rows, 3)
            torch.testing.assert_close(compiled(x, w), f(x, w))
    assert not caplog.records, [r.getMessage() for r in caplog.records]


def test_inputs_that_are_not_contiguous():
    def f(x, y):
        return x * 2 + y

    x = torch.randn(4, 3).t()
    y = torch.randn(8)[::2]
    torch.testing.assert_close(torch.compile(f, backend="xlapy")(x, y), f(x, y))


def test_embedding_model_trains_like_eager():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(10, 6, padding_idx=0), nn.Flatten(), nn.Linear(18, 3))
    compiled_model = torch.compile(__import__("copy").deepcopy(model), backend="xlapy")
    tokens = torch.randint(0, 10, (5, 3))
    labels = torch.randint(0, 3, (5,))
    losses = []
    for m in (compiled_model, model):
        optimizer = torch.optim.SGD(m.parameters(), lr=0.5)
        run = []
        for _ in range(5):
            optimizer.zero_grad()
            loss = F.cross_entropy(m(tokens), labels)
            loss.backward()
            optimizer.step()
            run.append(loss.item())
        losses.append(run)
    torch.testing.assert_close(torch.tensor(losses[0]), torch.tensor(losses[1]), rtol=1e-5,
                               atol=1e-6)


def test_interpreter_as_xlapy_backend():
    backend = functools.partial(xlapy_backend, backend="interpreter")
    x = torch.randn(2, 3, 5, 5)
    model = nn.Sequential(nn.Conv2d(3, 2, 3), nn.AvgPool2d(2), nn.Sigmoid())
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(model, backend=backend)(x), model(x),
                                   rtol=1e-5, atol=1e-6)



def test_parallel_loops_run_on_torchs_openmp_threads():
    """Once PyTorch is loaded, compiled loops run on its OpenMP team (its threads
    would otherwise spin against xlapy's pool), and compute the same."""
    if "parallel backend: OpenMP" not in torch.__config__.parallel_info():
        pytest.skip("this PyTorch does not run on OpenMP")
    x = torch.randn(256, 512)
    w = torch.randn(512, 512)

    def f(x, w):
        return torch.tanh(x @ w).softmax(-1).sum(0)

    on_cpu = functools.partial(xlapy_backend, backend="cpu")
    torch.testing.assert_close(torch.compile(f, backend=on_cpu)(x, w), f(x, w),
                               rtol=1e-5, atol=1e-5)
    assert runtime_library.share_loaded_openmp()   # shared by that compile
    gomp = ctypes.CDLL(runtime_library.loaded_library("libgomp"), mode=os.RTLD_NOLOAD)
    assert runtime_library.openmp_entry() == ctypes.cast(gomp.GOMP_parallel,
                                                         ctypes.c_void_p).value
