"""PyTorch frontend: the TorchDynamo backend `"xlapy"`.

    model = torch.compile(model, backend="xlapy")   # no xlapy import needed

Dynamo's graphs pass through AOTAutograd (forward and backward ATen graphs),
are lowered op by op to HLO (the table in `registry.LOWERINGS`, filled by the
`ops_*` modules), and compiled and run by xlapy. A graph with an op that has
no lowering runs eagerly, with the reason logged on `xlapy.frontends.torch`.
"""

from xlapy.frontends.torch import (  # noqa: F401 - each registers its lowerings
    ops_attention,
    ops_elementwise,
    ops_index,
    ops_nn,
    ops_reduce,
    ops_shape,
)
from xlapy.frontends.torch.backend import attention_math, decompositions, xlapy_backend
from xlapy.frontends.torch.convert import GraphLowering, LoweredGraph, lower_graph
from xlapy.frontends.torch.executable import CompiledGraph
from xlapy.frontends.torch.registry import LOWERINGS, Unsupported

__all__ = ["LOWERINGS", "CompiledGraph", "GraphLowering", "LoweredGraph", "Unsupported",
           "attention_math", "decompositions", "lower_graph", "xlapy_backend"]
