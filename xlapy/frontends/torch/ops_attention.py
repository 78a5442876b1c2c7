"""Lowerings of PyTorch's fused CPU attention, `_scaled_dot_product_flash_attention_for_cpu`
and its backward, written out as attention's math.

Where Dynamo's graph shows `scaled_dot_product_attention` itself, the backend
swaps in PyTorch's math decomposition before AOTAutograd (backend.py), so these
run only for attention reached inside another call (`nn.MultiheadAttention`'s
`multi_head_attention_forward`, which AOTAutograd traces through):

    S = scale · Q Kᵀ (+ mask),  lse = logsumexp(S),  P = exp(S - lse),  O = P V
    dV = Pᵀ dO,  dP = dO Vᵀ,  dS = P ⊙ (dP - rowsum(dO ⊙ O)),  dQ = scale · dS K,
    dK = scale · dSᵀ Q
"""

from __future__ import annotations

import math

import torch

from xlapy.frontends.torch.convert import GraphLowering
from xlapy.frontends.torch.ops_reduce import expand_back
from xlapy.frontends.torch.registry import Unsupported, lowering
from xlapy.hlo.dtypes import PrimitiveType
from xlapy.hlo.ir import HloInstruction
from xlapy.hlo.opcode import Opcode

aten = torch.ops.aten
H = HloInstruction
F32 = PrimitiveType.F32


def _batched_dot(g: GraphLowering, a: H, b: H, contract_a: int, contract_b: int) -> H:
    """a · b over all leading dims as batch, contracting one of the last two of each."""
    batch = list(range(len(g.dims(a)) - 2))
    return g.b.dot(a, b, [contract_a], [contract_b], batch, batch)


def _scores(g: GraphLowering, q: H, k: H, scale, attn_mask, is_causal: bool) -> H:
    """scale · Q Kᵀ with the mask applied: f32[..., L, S]."""
    head_dim = g.dims(q)[-1]
    scale = 1 / math.sqrt(head_dim) if scale is None else scale
    rank = len(g.dims(q))
    scores = _batched_dot(g, q, k, rank - 1, rank - 1)
    dims = g.dims(scores)
    scores = g.b.multiply(scores, g.const(scale, F32, dims))
    if is_causal:
        s64 = PrimitiveType.S64
        above = g.b.compare(g.iota(s64, dims, rank - 1), g.iota(s64, dims, rank - 2), "GT")
        scores = g.b.select(above, g.const(-math.inf, F32, dims), scores)
    if attn_mask is not None:
        if g.ptype(attn_mask) is PrimitiveType.PRED:
            allowed = g.broadcast_to(attn_mask, dims)
            scores = g.b.select(allowed, scores, g.const(-math.inf, F32, dims))
        else:
            scores = g.b.add(scores, g.broadcast_to(g.convert(attn_mask, F32), dims))
    return scores


def _check(g: GraphLowering, q: H, k: H, dropout_p: float) -> None:
    if dropout_p:
        raise Unsupported(g.op, "fused attention with dropout (its mask is not returned)")
    if g.dims(q)[:-2] != g.dims(k)[:-2]:
        raise Unsupported(g.op, "attention with grouped or broadcast heads")


@lowering(aten._scaled_dot_product_flash_attention_for_cpu)
def flash_attention(g: GraphLowering, out, q, k, v, dropout_p: float = 0.0,
                    is_causal: bool = False, *, attn_mask=None, scale=None):
    _check(g, q, k, dropout_p)
    q, k, v = (g.convert(t, F32) for t in (q, k, v))
    scores = _scores(g, q, k, scale, attn_mask, is_causal)
    last = len(g.dims(scores)) - 1
    top = g.reduce(scores, [last], Opcode.MAXIMUM, -math.inf)
    finite = g.b.select(g.b.is_finite(top), top, g.const(0, F32, g.dims(top)))
    shifted = g.b.exp(g.b.subtract(scores, expand_back(g, finite, g.dims(scores), [last])))
    lse = g.b.add(g.b.log(g.sum(shifted, [last])), finite)
    probabilities = g.b.exp(g.b.subtract(scores, expand_back(g, lse, g.dims(scores), [last])))
    output = _batched_dot(g, probabilities, v, last, last - 1)
    return output, lse


@lowering(aten._scaled_dot_product_flash_attention_for_cpu_backward)
def flash_attention_backward(g: GraphLowering, out, grad, q, k, v, output, lse,
                             dropout_p: float, is_causal: bool, *, attn_mask=None, scale=None):
    _check(g, q, k, dropout_p)
    grad, q, k, v, output = (g.convert(t, F32) for t in (grad, q, k, v, output))
    head_dim = g.dims(q)[-1]
    scale = 1 / math.sqrt(head_dim) if scale is None else scale
    scores = _scores(g, q, k, scale, attn_mask, is_causal)
    dims = g.dims(scores)
    last = len(dims) - 1
    lse = g.convert(lse, F32)
    probabilities = g.b.exp(g.b.subtract(scores, expand_back(g, lse, dims, [last])))
    grad_v = _batched_dot(g, probabilities, grad, last - 1, last - 1)
    grad_p = _batched_dot(g, grad, v, last, last)
    row = g.sum(g.b.multiply(grad, output), [last])
    grad_s = g.b.multiply(probabilities,
                          g.b.subtract(grad_p, expand_back(g, row, dims, [last])))
    grad_s = g.b.multiply(grad_s, g.const(scale, F32, dims))
    grad_q = _batched_dot(g, grad_s, k, last, last - 1)
    grad_k = _batched_dot(g, grad_s, q, last - 1, last - 1)
    return grad_q, grad_k, grad_v
