"""Every lowering in the table against eager ATen: each case of op_cases.CASES is traced
to an FX graph (make_fx, no decompositions), lowered to HLO, compiled by xlapy's CPU
backend and run, and its outputs compared with PyTorch's own."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402

from tests.frontends.torch.op_cases import CASES  # noqa: E402
from xlapy.frontends.torch import LOWERINGS, CompiledGraph, lower_graph  # noqa: E402
from xlapy.frontends.torch.registry import lowering_for  # noqa: E402

aten = torch.ops.aten

NEVER_IN_AOT_GRAPHS = {
    # CompositeImplicitAutograd ops: make_fx (like AOTAutograd) decomposes them before a
    # backend sees them; their lowerings serve graphs traced by other means.
    aten.reshape, aten.flatten.using_ints, aten.unflatten, aten.expand_as, aten.view_as,
    aten.broadcast_to, aten.narrow, aten.chunk, aten.contiguous, aten.to.dtype,
    aten.to.dtype_layout, aten.to.device, aten.numpy_T, aten._assert_tensor_metadata,
    aten.isfinite, aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar,
    # random numbers: checked statistically in test_backend.py
    aten.rand, aten.rand_like, aten.bernoulli.p,
}


def _trace(fn, inputs):
    """(graph module, its tensor inputs): non-tensor arguments are baked into the graph."""
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]

    def wrapper(*args):
        it = iter(args)
        return fn(*[next(it) if isinstance(x, torch.Tensor) else x for x in inputs])

    return make_fx(wrapper, tracing_mode="fake")(*tensors), tensors


def _leaves(value):
    if isinstance(value, list | tuple):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


@pytest.mark.parametrize("name", sorted(CASES))
def test_lowering_matches_eager(name):
    fn, make_inputs, options = CASES[name]
    torch.manual_seed(0)
    gm, tensors = _trace(fn, make_inputs())
    for node in gm.graph.nodes:
        if node.op == "call_function" and hasattr(node.target, "overloadpacket"):
            assert lowering_for(node.target) is not None, node.target
    got = CompiledGraph(lower_graph(gm), gm)(*tensors)
    want = gm(*tensors)
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        if not isinstance(w, torch.Tensor):
            assert g == w, (k, g, w)
            continue
        assert isinstance(g, torch.Tensor), (k, type(g))
        assert g.shape == w.shape and g.dtype == w.dtype, (k, g.shape, g.dtype, w.shape, w.dtype)
        if not options.get("values", True) or (options.get("skip_empty") and w.numel() == 0):
            continue
        if w.dtype.is_floating_point:
            torch.testing.assert_close(g, w, rtol=1e-5, atol=options.get("atol", 1e-6),
                                       equal_nan=True, msg=lambda m, k=k: f"output {k}: {m}")
        else:
            assert torch.equal(g, w), (k, g, w)


def test_every_lowering_has_a_case():
    seen = set()
    for fn, make_inputs, _ in CASES.values():
        torch.manual_seed(0)
        gm, _ = _trace(fn, make_inputs())
        for node in gm.graph.nodes:
            if node.op == "call_function" and hasattr(node.target, "overloadpacket"):
                seen.update({node.target, node.target.overloadpacket})
    untested = [str(op) for op in LOWERINGS if op not in seen and op not in NEVER_IN_AOT_GRAPHS]
    assert not untested, f"lowerings no case exercises: {untested}"


def test_permuted_layouts_cross_without_copies():
    """A transposed input is read in its memory order and a transposed result comes
    back with PyTorch's strides (the module transposes; neither side copies)."""
    gm = make_fx(lambda x, y: (aten.permute.default(aten.mul.Tensor(x, 2), [1, 0]),
                               aten.add.Tensor(y, 1)), tracing_mode="fake")(
        torch.randn(3, 4), torch.randn(5, 2).t())
    lowered = lower_graph(gm)
    assert lowered.input_perms == [None, (1, 0)] and lowered.output_perms == [(1, 0), (1, 0)]
    x, y = torch.randn(3, 4), torch.randn(5, 2).t()
    got = CompiledGraph(lowered, gm)(x, y)
    want = gm(x, y)
    for g, w in zip(got, want):
        assert g.stride() == w.stride()
        torch.testing.assert_close(g, w)
