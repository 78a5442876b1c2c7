"""The TorchDynamo backend `"xlapy"`: `torch.compile(model, backend="xlapy")`.

Dynamo hands `xlapy_backend` an FX graph of Torch calls; AOTAutograd
(`torch._dynamo.backends.common.aot_autograd`) turns it into ATen graphs, the
forward and, for training, the backward, decomposed by PyTorch's core-ATen
decompositions except for the ops the lowering table handles whole (a fused
`native_layer_norm_backward` is better HLO than its pieces). Each ATen graph is
lowered to HLO (convert.py) and compiled by xlapy (executable.py).

Nothing is ever computed wrongly to get it compiled: a graph xlapy cannot lower
is logged on the `xlapy.frontends.torch` logger, naming the op and the reason,
and returned as the graph module's own forward, which PyTorch runs eagerly.

`scaled_dot_product_attention` is replaced in Dynamo's graph by its math
decomposition before AOTAutograd runs, so both its forward and its backward
reach xlapy as matmuls and a softmax (PyTorch's fused CPU attention has a
backward op of its own with no decomposition).

Graphs with symbolic shapes (Dynamo marks a dimension dynamic after it
changes) are compiled per concrete input signature when called.
"""

from __future__ import annotations

import functools
import logging

import torch
import torch.nn.functional
from torch._decomp import core_aten_decompositions
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func

from xlapy.errors import XlapyError
from xlapy.frontends.torch.convert import lower_graph
from xlapy.frontends.torch.executable import CompiledGraph
from xlapy.frontends.torch.registry import Unsupported, lowering_for

logger = logging.getLogger("xlapy.frontends.torch")

_ATTENTION = (torch._C._nn.scaled_dot_product_attention,
              torch.nn.functional.scaled_dot_product_attention)


@functools.cache
def decompositions() -> dict:
    """PyTorch's core-ATen decompositions, less the ops lowered directly."""
    return {op: fn for op, fn in core_aten_decompositions().items()
            if lowering_for(op) is None}


def attention_math(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                   scale=None, enable_gqa=False):
    """scaled_dot_product_attention as PyTorch's own math decomposition."""
    return torch.ops.aten._scaled_dot_product_attention_math(
        query, key, value, attn_mask, dropout_p, is_causal, None, scale=scale,
        enable_gqa=enable_gqa)[0]


def _decompose_attention(gm: torch.fx.GraphModule) -> None:
    changed = False
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in _ATTENTION:
            node.target = attention_math
            changed = True
    if changed:
        gm.recompile()


def _compiler(kind: str, backend: str | None):
    """An AOTAutograd compiler for the `kind` graph: xlapy's executable, or the graph's
    own forward (run eagerly) when it cannot be lowered."""
    def compile_graph(gm: torch.fx.GraphModule, example_inputs):
        try:
            lowered = lower_graph(gm, f"torch_{kind}", example_inputs)
            return make_boxed_func(CompiledGraph(lowered, gm, backend))
        except Unsupported as e:
            logger.warning("xlapy cannot compile this %s graph: %s; running it eagerly",
                           kind, e)
        except (XlapyError, NotImplementedError) as e:
            logger.warning("xlapy failed to compile this %s graph (%s: %s); running it "
                           "eagerly", kind, type(e).__name__, e)
        return make_boxed_func(gm.forward)
    return compile_graph


def _aot(backend: str | None):
    return aot_autograd(fw_compiler=_compiler("forward", backend),
                        bw_compiler=_compiler("backward", backend),
                        inference_compiler=_compiler("inference", backend),
                        decompositions=decompositions())


def _symbolic(value) -> bool:
    if isinstance(value, torch.SymInt | torch.SymFloat | torch.SymBool):
        return True
    if isinstance(value, torch.Tensor):
        return any(isinstance(d, torch.SymInt) for d in value.shape)
    return False


class _PerSignature:
    """A graph with symbolic shapes, compiled for each concrete signature it meets."""

    def __init__(self, gm: torch.fx.GraphModule, backend: str | None):
        self.gm = gm
        self.backend = backend
        self.compiled: dict[tuple, object] = {}

    def __call__(self, *args):
        key = tuple((tuple(a.shape), a.dtype, a.requires_grad) if isinstance(a, torch.Tensor)
                    else (type(a), a) for a in args)
        fn = self.compiled.get(key)
        if fn is None:
            fn = self.compiled[key] = _compile(self.gm, list(args), self.backend)
        return fn(*args)


def _compile(gm: torch.fx.GraphModule, example_inputs, backend: str | None):
    try:
        return _aot(backend)(gm, example_inputs)
    except Exception as e:  # noqa: BLE001 - any failure to trace means: run it eagerly
        logger.warning("xlapy cannot compile this graph: AOTAutograd failed (%s: %s); "
                       "running it eagerly", type(e).__name__, e)
        return gm.forward


def xlapy_backend(gm: torch.fx.GraphModule, example_inputs, backend: str | None = None):
    """The Dynamo backend: `torch.compile(model, backend="xlapy")`, registered through
    the `torch_dynamo_backends` entry point. `backend` is xlapy's ("cpu" by default);
    pass it with `torch.compile(m, backend=functools.partial(xlapy_backend,
    backend="interpreter"))`."""
    _decompose_attention(gm)
    if any(_symbolic(x) for x in example_inputs):
        return _PerSignature(gm, backend)
    return _compile(gm, example_inputs, backend)
